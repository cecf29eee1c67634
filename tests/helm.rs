//! The Helm chart `deploy/helm/dumbmonit`, with the real Helm (v4, built from its Go module by
//! scripts/helm.sh): `helm lint --strict` with every values file of `ci/`, the schema and the
//! chart's own refusals (each naming the value, nothing rendered), every pod template held to
//! the restricted Pod Security Standard, no secret outside a Secret, the RBAC and the
//! PrometheusRule equal to what the binary prints, the configuration it renders loaded by the
//! binary, and the kustomize bases compared with it object by object. Installed for real on the
//! control plane by tests/control_plane_helm.rs.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;
use common::helm::{bin as helm, chart, template};
use common::manifests::{by_kind, decode, documents, keyed, restricted_violations};
use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn rendered(args: &[&str]) -> Vec<Value> {
    documents(&template(args).unwrap_or_else(|e| panic!("helm template {args:?}: {e}")))
}

fn ci_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(chart().join("ci")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

/// The agent's values that every agent rendering needs.
const AGENT: [&str; 4] =
    ["--set", "mode=agent", "--set", "agent.servers[0]=https://dumbmonit.example.com,agent.token=t"];

#[test]
fn the_charts_app_version_is_the_crates() {
    let chart: Value = serde_saphyr::from_str(&std::fs::read_to_string(chart().join("Chart.yaml")).unwrap()).unwrap();
    assert_eq!(chart["apiVersion"], "v2");
    assert_eq!(chart["appVersion"], env!("CARGO_PKG_VERSION"), "Chart.yaml's appVersion is the crate's version");
}

#[test]
fn lint_strict_passes_with_the_defaults_and_with_every_ci_values_file() {
    let names: Vec<String> = ci_files().iter().map(|f| f.file_name().unwrap().to_string_lossy().into_owned()).collect();
    for wanted in ["serve-ingress", "serve-namespaces", "agent", "replicas-alertmanager", "replicas-postgres"] {
        assert!(names.contains(&format!("{wanted}-values.yaml")), "ci/{wanted}-values.yaml: {names:?}");
    }
    let mut runs = vec![vec![]];
    runs.extend(ci_files().iter().map(|f| vec!["-f".to_string(), f.display().to_string()]));
    for args in runs {
        let out = Command::new(helm()).args(["lint", "--strict"]).arg(chart()).args(&args).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "helm lint --strict {args:?}:\n{stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains("1 chart(s) linted, 0 chart(s) failed"), "{stdout}");
        // Every values file renders, and every object decodes into its Kubernetes type.
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(decode(&rendered(&args)).len(), 1, "{args:?}: one workload");
    }
}

#[test]
fn bad_values_are_refused_with_their_path_and_nothing_is_rendered() {
    let secret_without_key = "secrets.existing[0].file=lab.token,secrets.existing[0].secretName=lab-access";
    let replicas = chart().join("ci/replicas-alertmanager-values.yaml").display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--set", "replicaCount=two"], "at '/replicaCount': got string, want integer"),
        (vec!["--set", "replicas=2"], "additional properties 'replicas' not allowed"),
        (vec!["--set", "persistence.sise=2Gi"], "at '/persistence': additional properties 'sise' not allowed"),
        (vec!["--set", "mode=relay"], "at '/mode': value must be one of 'serve', 'agent'"),
        (vec!["--set", "logFormat=xml"], "at '/logFormat': value must be one of 'json', 'text'"),
        (vec!["--set", secret_without_key], "at '/secrets/existing/0': missing property 'key'"),
        (
            vec!["--set", "admin.existingSecret.name=pages-admin"],
            "admin.existingSecret.key: name the key of Secret \"pages-admin\" that holds the value",
        ),
        (
            vec!["--set", "replicaCount=2"],
            "replicaCount: 2 replicas would each send every notification: give config.notifier an Alertmanager",
        ),
        (
            vec!["--set", "replicaCount=2,config.notifier[0].type=alertmanager,config.notifier[0].url=http://am:9093"],
            "replicaCount: 2 replicas each have their own sessions and clusters added on the pages: set admin.enabled \
             to false",
        ),
        (
            vec![
                "--set",
                "replicaCount=2,admin.enabled=false,config.notifier[0].type=alertmanager,config.notifier[0].url=http://am:9093",
            ],
            "replicaCount: 2 replicas need a state each, and the chart's claim is one: set persistence.enabled to false",
        ),
        (
            vec![
                "-f",
                &replicas,
                "--set",
                "config.notifier[1].type=webhook,config.notifier[1].name=chat,config.notifier[1].url=https://h.example",
            ],
            "replicaCount: 2 replicas would each post to the webhook notifier \"chat\": with replicas, notify through \
             Alertmanager only",
        ),
        (vec!["--set", "state.url=http://db/x"], "at '/state/url': 'http://db/x' does not match pattern"),
        (
            vec!["--set", "state.url=postgres://dumbmonit@db/x,config.secret_key_file=/k"],
            "config.secret_key_file: with state.url the chart sets it",
        ),
        (vec!["--set", "state.url=postgres://dumbmonit@db/x,state.sslmode=allow"], "at '/state/sslmode'"),
        (
            vec!["--set", "state.url=postgres://dumbmonit@db/x,existingConfigSecret=mine"],
            "state.url: the chart writes [state] into its configuration",
        ),
        (
            vec!["--set", "podDisruptionBudget.enabled=true,podDisruptionBudget.minAvailable=1"],
            "podDisruptionBudget.minAvailable: 1 of 1 replicas would block every node drain",
        ),
        (
            vec![
                "--set",
                "podDisruptionBudget.enabled=true,podDisruptionBudget.minAvailable=1,podDisruptionBudget.maxUnavailable=1",
            ],
            "podDisruptionBudget.minAvailable: give minAvailable or maxUnavailable, not both",
        ),
        (vec!["--set", "ingress.enabled=true"], "ingress.hosts: ingress.enabled needs at least one host"),
        (vec!["--set", "config.notifiers[0].url=x"], "at '/config': additional properties 'notifiers' not allowed"),
        (
            vec!["--set", "securityContext.runAsNonroot=true"],
            "at '/securityContext': additional properties 'runAsNonroot'",
        ),
        (vec!["--set", "resources.request.cpu=1"], "at '/resources': additional properties 'request' not allowed"),
        (vec!["--set", "agent.buffer.maxSize=300Mi"], "at '/agent/buffer/maxSize': '300Mi' does not match pattern"),
        (vec!["--set", "config.listen=0.0.0.0:9000"], "config.listen: the chart sets it"),
        (vec!["--set", "config.auth.admin.username=root"], "config.auth.admin: the chart writes it from admin.*"),
        (
            vec!["--set", "rbac.watch=true,rbac.namespaces[0]=team-a"],
            "rbac.watch: namespaced access (rbac.namespaces) is read by lists, never watched",
        ),
        (vec!["--set", "mode=agent,agent.token=t"], "agent.servers: mode agent needs the URL of at least one"),
        (
            vec!["--set", "mode=agent,agent.servers[0]=https://d.example"],
            "agent.token: mode agent needs its agent token",
        ),
        (
            vec!["--set", "agent.servers[0]=ftp://d.example"],
            "at '/agent/servers/0': 'ftp://d.example' does not match pattern",
        ),
        (
            [&AGENT[..], &["--set", "agent.watch=true"]].concat(),
            "agent.watch: watch mode needs the watch verb: set rbac.watch to true as well",
        ),
        (
            [&AGENT[..], &["--set", "replicaCount=2"]].concat(),
            "replicaCount: 2 agents would push the same cluster 2 times",
        ),
    ];
    for (args, wanted) in cases {
        let out = Command::new(helm()).args(["template", "dumbmonit"]).arg(chart()).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} is refused");
        assert!(stderr.contains(wanted), "{args:?}: wanted {wanted:?} in:\n{stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing is rendered");
    }
}

#[test]
fn without_persistence_the_notes_say_what_is_lost() {
    let notes = |args: &[&str]| {
        let out = Command::new(helm())
            .args(["install", "dumbmonit"])
            .arg(chart())
            .args(["--dry-run=client", "--namespace", "monitoring"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text[text.find("NOTES:").expect("NOTES")..].to_string()
    };
    let kept = notes(&[]);
    assert!(kept.contains("kubectl -n monitoring get secret dumbmonit-admin -o jsonpath='{.data.password}'"), "{kept}");
    assert!(kept.contains("`helm uninstall` keeps it"), "{kept}");
    for line in [
        "kubectl auth can-i get secrets --all-namespaces --as=system:serviceaccount:monitoring:dumbmonit     # no",
        "kubectl auth can-i list pods --all-namespaces --as=system:serviceaccount:monitoring:dumbmonit     # yes",
    ] {
        assert!(kept.contains(line), "{kept}");
    }
    assert!(!kept.contains("WARNING"), "{kept}");
    let lost = notes(&["--set", "persistence.enabled=false"]);
    assert!(
        lost.contains("WARNING: persistence.enabled is false: the state is in the pod and lost when it is replaced")
            && lost.contains("the clusters the administrator adds on the pages"),
        "{lost}"
    );
    let namespaced = notes(&["--set", "rbac.namespaces={team-a,team-b}"]);
    for ns in ["team-a", "team-b"] {
        assert!(
            namespaced
                .contains(&format!("list pods -n {ns} --as=system:serviceaccount:monitoring:dumbmonit     # yes")),
            "{namespaced}"
        );
    }
    assert!(namespaced.contains("list nodes --as=system:serviceaccount:monitoring:dumbmonit     # no"), "{namespaced}");
    assert!(!namespaced.contains("--all-namespaces"), "{namespaced}");
    // Exposed without viewers' credentials: said.
    let exposed = notes(&["--set", "ingress.enabled=true,ingress.hosts[0].host=dumbmonit.example.com"]);
    assert!(exposed.contains("WARNING: the pages, the API and /metrics are reachable through the Ingress without"));
    let guarded = notes(&[
        "--set",
        "ingress.enabled=true,ingress.hosts[0].host=dumbmonit.example.com,config.auth.bearer_token_file=/etc/dumbmonit/secrets/web.token",
    ]);
    assert!(!guarded.contains("WARNING"), "{guarded}");
    // With a configuration of one's own, the chart makes no administrator and says none.
    let own = notes(&["--set", "existingConfigSecret=my-dumbmonit"]);
    assert!(!own.contains("administrator"), "{own}");
}

#[test]
fn every_pod_template_meets_the_restricted_standard_and_the_check_is_real() {
    let mut runs: Vec<Vec<String>> = vec![vec![], AGENT.iter().map(|s| s.to_string()).collect()];
    runs.extend(ci_files().iter().map(|f| vec!["-f".to_string(), f.display().to_string()]));
    for args in &runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        for (name, spec) in decode(&rendered(&args)) {
            assert_eq!(restricted_violations(&spec), Vec::<String>::new(), "{args:?}: {name}");
            let c = &spec.containers[0];
            assert!(c.liveness_probe.is_some() && c.readiness_probe.is_some(), "{args:?}: probes");
            assert!(c.resources.as_ref().is_some_and(|r| r.requests.is_some() && r.limits.is_some()));
        }
    }
    let broken = decode(&rendered(&["--set", "securityContext.allowPrivilegeEscalation=true"]));
    let violations: Vec<String> = broken.values().flat_map(restricted_violations).collect();
    assert!(violations.iter().any(|v| v.starts_with("Privilege Escalation")), "{violations:?}");
}

/// Every string of a Secret's data, decoded.
fn secret_data(docs: &[Value]) -> String {
    let mut all = String::new();
    for s in by_kind(docs, "Secret") {
        for v in s["data"].as_object().into_iter().flat_map(|d| d.values()) {
            let bytes = base64::engine::general_purpose::STANDARD.decode(v.as_str().unwrap()).unwrap();
            all.push_str(&String::from_utf8(bytes).unwrap());
            all.push('\n');
        }
    }
    all
}

#[test]
fn every_secret_value_is_in_a_secret_and_nowhere_else() {
    let token = "cluster-token-5d1f0a9e";
    let webhook = "https://hooks.example.com/services/T000/B000/secret-path-77aa";
    let agent_token = "agent-token-0c9b8a7f";
    let serve = template(&[
        "--set",
        &format!("secrets.values.lab\\.token={token}"),
        "--set",
        &format!("config.notifier[0].type=webhook,config.notifier[0].url={webhook}"),
    ])
    .unwrap();
    let agent = template(&[
        "--set",
        "mode=agent",
        "--set",
        "agent.servers[0]=https://d.example",
        "--set",
        &format!("agent.token={agent_token}"),
    ])
    .unwrap();
    for (yaml, secrets) in [(&serve, vec![token, webhook]), (&agent, vec![agent_token])] {
        let docs = documents(yaml);
        assert!(by_kind(&docs, "ConfigMap").is_empty(), "the chart makes no ConfigMap");
        let in_secrets = secret_data(&docs);
        for s in secrets {
            assert!(!yaml.contains(s), "{s} appears in clear in the rendered manifests");
            assert!(in_secrets.contains(s), "{s} is in a Secret");
        }
    }
    // What `helm install` prints (the objects and the NOTES) says none of them either.
    for (args, secret) in [
        (vec!["--set".to_string(), format!("secrets.values.lab\\.token={token}")], token),
        (
            vec!["--set".to_string(), format!("config.notifier[0].type=webhook,config.notifier[0].url={webhook}")],
            webhook,
        ),
        (
            vec![
                "--set".to_string(),
                format!("mode=agent,agent.servers[0]=https://d.example,agent.token={agent_token}"),
            ],
            agent_token,
        ),
    ] {
        let out = Command::new(helm())
            .args(["install", "dumbmonit"])
            .arg(chart())
            .args(["--dry-run=client", "--namespace", "monitoring"])
            .args(&args)
            .output()
            .unwrap();
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success() && said.contains("NOTES:"), "{said}");
        assert!(!said.contains(secret), "{secret} appears in what helm install prints");
    }
    // Secrets of one's own are named, never read: only their names and keys are in the objects.
    let own = documents(
        &template(&[
            "--set",
            "secrets.existing[0].file=lab.token,secrets.existing[0].secretName=lab-access,secrets.existing[0].key=token",
            "--set",
            "admin.existingSecret.name=pages-admin,admin.existingSecret.key=pw",
        ])
        .unwrap(),
    );
    let names: Vec<&str> = by_kind(&own, "Secret").iter().map(|s| s["metadata"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["dumbmonit-config"], "no Secret of the chart's but its configuration");
    let volumes =
        serde_json::to_string(&by_kind(&own, "Deployment")[0]["spec"]["template"]["spec"]["volumes"]).unwrap();
    assert!(volumes.contains(r#"{"key":"token","path":"lab.token"}"#) && volumes.contains(r#""name":"lab-access""#));
    assert!(volumes.contains(r#""secretName":"pages-admin""#) && volumes.contains(r#"{"key":"pw","path":"password"}"#));

    // The generated admin password is in its Secret, and only its path in the configuration.
    let docs = documents(&serve);
    let config = config_of(&docs);
    assert!(config.contains("password_file = \"/etc/dumbmonit/admin/password\""), "{config}");
    let admin = by_kind(&docs, "Secret").into_iter().find(|s| s["metadata"]["name"] == "dumbmonit-admin").unwrap();
    let password =
        base64::engine::general_purpose::STANDARD.decode(admin["data"]["password"].as_str().unwrap()).unwrap();
    assert_eq!(password.len(), 24);
}

/// serve's configuration file as the chart renders it.
fn config_of(docs: &[Value]) -> String {
    let secret = by_kind(docs, "Secret").into_iter().find(|s| s["metadata"]["name"] == "dumbmonit-config").unwrap();
    let toml = secret["data"]["dumbmonit.toml"].as_str().unwrap();
    String::from_utf8(base64::engine::general_purpose::STANDARD.decode(toml).unwrap()).unwrap()
}

#[test]
fn the_rendered_configuration_is_one_serve_loads() {
    let dir = tempfile::tempdir().unwrap();
    // Numbers as a values file gives them (Helm reads them as floats; --set would not).
    let numbers = dir.path().join("numbers.yaml");
    std::fs::write(
        &numbers,
        "config:\n  cluster:\n    - name: lab\n      address: https://k3s.lan\n      port: 6443\n      interval: 30\n      \
         token_file: /etc/dumbmonit/secrets/lab.token\n",
    )
    .unwrap();
    let written = config_of(&rendered(&["-f", &numbers.display().to_string()]));
    assert!(written.contains("port = 6443\n") && written.contains("interval = 30\n"), "{written}");
    for args in [
        vec!["-f".to_string(), chart().join("ci/serve-ingress-values.yaml").display().to_string()],
        vec!["-f".to_string(), chart().join("ci/serve-namespaces-values.yaml").display().to_string()],
        vec!["-f".to_string(), numbers.display().to_string()],
        vec!["-f".to_string(), chart().join("ci/replicas-postgres-values.yaml").display().to_string()],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let config = config_of(&rendered(&args));
        assert!(config.contains("listen = \"0.0.0.0:8080\"") && config.contains("in_cluster = true"), "{config}");
        assert!(!config.contains(".0\n"), "a whole number is written as an integer: {config}");
        // The pod's paths, here.
        let local = config
            .replace("/etc/dumbmonit/", &format!("{}/", dir.path().display()))
            .replace("/var/lib/dumbmonit", &dir.path().join("state").display().to_string());
        std::fs::create_dir_all(dir.path().join("admin")).unwrap();
        std::fs::create_dir_all(dir.path().join("secrets")).unwrap();
        std::fs::write(dir.path().join("admin/password"), "a-password\n").unwrap();
        std::fs::write(dir.path().join("secrets/lab.token"), "t\n").unwrap();
        std::fs::create_dir_all(dir.path().join("state")).unwrap();
        std::fs::write(dir.path().join("state/password"), "p\n").unwrap();
        std::fs::write(dir.path().join("state/ca.crt"), "not read by `rules`\n").unwrap();
        std::fs::write(dir.path().join("secrets/payments-slack.url"), "https://hooks.slack.com/services/T0/B0/x\n")
            .unwrap();
        let file = dir.path().join("dumbmonit.toml");
        std::fs::write(&file, &local).unwrap();
        let out =
            Command::new(env!("CARGO_BIN_EXE_dumbmonit")).args(["rules", "--config"]).arg(&file).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: serve refuses what the chart wrote:\n{local}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let ingress = config_of(&rendered(&["-f", &chart().join("ci/serve-ingress-values.yaml").display().to_string()]));
    assert!(
        ingress.contains(
            "allowed_hosts = [\"dumbmonit\", \"dumbmonit.dumbmonit\", \"dumbmonit.dumbmonit.svc\", \
             \"dumbmonit.dumbmonit.svc.cluster.local\", \"dumbmonit.example.com\"]"
        ),
        "{ingress}"
    );
    assert!(ingress.contains("namespace_labels = [\"team\"]"), "{ingress}");
    // Replicas sharing PostgreSQL: [state] from state.*, and one key for all of them.
    let shared = config_of(&rendered(&["-f", &chart().join("ci/replicas-postgres-values.yaml").display().to_string()]));
    for line in [
        "[state]",
        "url = \"postgres://dumbmonit@postgres.databases.svc:5432/dumbmonit\"",
        "password_file = \"/etc/dumbmonit/state/password\"",
        "ca_file = \"/etc/dumbmonit/state/ca.crt\"",
        "sslmode = \"verify-full\"",
        "lease = \"30s\"",
        "secret_key_file = \"/etc/dumbmonit/secret-key/secret.key\"",
    ] {
        assert!(shared.contains(line), "{line}: {shared}");
    }
    let docs = rendered(&["-f", &chart().join("ci/replicas-postgres-values.yaml").display().to_string()]);
    assert!(by_kind(&docs, "PersistentVolumeClaim").is_empty(), "no volume with a shared state");
    let key = by_kind(&docs, "Secret").into_iter().find(|s| s["metadata"]["name"] == "dumbmonit-secret-key").unwrap();
    let key = base64::engine::general_purpose::STANDARD.decode(key["data"]["secret.key"].as_str().unwrap()).unwrap();
    assert_eq!(String::from_utf8(key).unwrap().trim().len(), 64, "a key serve reads: 64 hexadecimal digits");
    let namespaced = config_of(&rendered(&["--set", "rbac.namespaces[0]=team-a"]));
    assert!(namespaced.contains("namespaces = [\"team-a\"]"), "{namespaced}");
}

/// What `dumbmonit ARGS` prints.
fn dumbmonit(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_dumbmonit")).args(args).output().unwrap();
    assert!(out.status.success(), "dumbmonit {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_files_from_the_binary_are_what_it_prints_today() {
    let files = chart().join("files");
    let again = "run scripts/chart-files.sh after a change to the rules or the RBAC";
    let rules = std::fs::read_to_string(files.join("prometheus-rules.yaml")).unwrap();
    assert_eq!(rules, dumbmonit(&["rules"]), "files/prometheus-rules.yaml: {again}");
    for (file, flags) in [
        ("cluster", vec![]),
        ("cluster-optional", vec!["--optional"]),
        ("cluster-watch", vec!["--watch"]),
        ("cluster-optional-watch", vec!["--optional", "--watch"]),
        ("namespace", vec!["--namespace", "x"]),
        ("namespace-optional", vec!["--namespace", "x", "--optional"]),
    ] {
        let ours: Value =
            serde_saphyr::from_str(&std::fs::read_to_string(files.join(format!("rbac/{file}.yaml"))).unwrap()).unwrap();
        let printed = documents(&dumbmonit(&[&["rbac"][..], &flags].concat()));
        let role = printed.iter().find(|d| d["kind"] == "ClusterRole" || d["kind"] == "Role").unwrap();
        assert_eq!(ours, role["rules"], "files/rbac/{file}.yaml: {again}");
    }
}

#[test]
fn the_rbac_is_what_dumbmonit_rbac_prints_for_the_same_choices() {
    for (optional, watch) in [(false, false), (true, false), (false, true), (true, true)] {
        let sets = format!("rbac.optional={optional},rbac.watch={watch}");
        let docs = rendered(&["--set", &sets]);
        let mut flags = vec!["rbac", "--service-account-namespace", "dumbmonit"];
        flags.extend(optional.then_some("--optional"));
        flags.extend(watch.then_some("--watch"));
        let printed = documents(&dumbmonit(&flags));
        for kind in ["ClusterRole", "ClusterRoleBinding"] {
            let (ours, theirs) = (by_kind(&docs, kind)[0], by_kind(&printed, kind)[0]);
            for field in ["rules", "roleRef", "subjects"] {
                assert_eq!(ours[field], theirs[field], "{sets}: {kind} {field}");
            }
            assert_eq!(ours["metadata"]["name"], theirs["metadata"]["name"]);
        }
    }
    let docs = rendered(&["--set", "rbac.namespaces={team-a,team-b}"]);
    assert!(by_kind(&docs, "ClusterRole").is_empty() && by_kind(&docs, "ClusterRoleBinding").is_empty());
    let printed = documents(&dumbmonit(&[
        "rbac",
        "--namespace",
        "team-a",
        "--namespace",
        "team-b",
        "--service-account-namespace",
        "dumbmonit",
        "--optional",
    ]));
    for kind in ["Role", "RoleBinding"] {
        let (ours, theirs) = (by_kind(&docs, kind), by_kind(&printed, kind));
        assert_eq!(ours.len(), 2, "{kind}: one in each namespace");
        for (o, t) in ours.iter().zip(&theirs) {
            assert_eq!(o["metadata"]["namespace"], t["metadata"]["namespace"]);
            for field in ["rules", "roleRef", "subjects"] {
                assert_eq!(o[field], t[field], "{kind} {field}");
            }
        }
    }
}

#[test]
fn the_prometheus_rule_holds_the_exported_rules() {
    let docs = rendered(&["--set", "prometheusRule.enabled=true,serviceMonitor.enabled=true"]);
    let rule = by_kind(&docs, "PrometheusRule")[0];
    let exported: Value = serde_saphyr::from_str(&dumbmonit(&["rules"])).unwrap();
    assert_eq!(rule["spec"]["groups"], exported["groups"]);
    let text = serde_json::to_string(&rule["spec"]).unwrap();
    assert!(text.contains("{{ $labels.node }}"), "Prometheus' templates are left to Prometheus");
    let monitor = by_kind(&docs, "ServiceMonitor")[0];
    assert_eq!(monitor["spec"]["endpoints"][0]["port"], "http");
    assert_eq!(monitor["spec"]["endpoints"][0]["path"], "/metrics");
    let service = by_kind(&docs, "Service")[0];
    assert_eq!(service["spec"]["ports"][0]["name"], "http");
}

fn kustomize(base: &str) -> Vec<Value> {
    let out =
        Command::new("kubectl").args(["kustomize"]).arg(Path::new(ROOT).join("deploy").join(base)).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    documents(&String::from_utf8(out.stdout).unwrap())
}

/// What a comparison looks at in an object: the fields the chart and the base must agree on.
fn compared(d: &Value) -> BTreeMap<String, Value> {
    let mut fields = BTreeMap::new();
    let mut put = |k: &str, v: &Value| {
        if !v.is_null() {
            fields.insert(k.to_string(), v.clone());
        }
    };
    match d["kind"].as_str().unwrap() {
        "ClusterRole" | "Role" => put("rules", &d["rules"]),
        "ClusterRoleBinding" | "RoleBinding" => {
            put("roleRef", &d["roleRef"]);
            put("subjects", &d["subjects"]);
        }
        "ServiceAccount" => put("automountServiceAccountToken", &d["automountServiceAccountToken"]),
        "Service" => put("ports", &d["spec"]["ports"]),
        "PersistentVolumeClaim" => put("spec", &d["spec"]),
        "NetworkPolicy" => {
            put("ingress", &d["spec"]["ingress"]);
            put("egress", &d["spec"]["egress"]);
        }
        "Deployment" => {
            let pod = &d["spec"]["template"]["spec"];
            let c = &pod["containers"][0];
            put("replicas", &d["spec"]["replicas"]);
            put("selector", &d["spec"]["selector"]);
            put("strategy", &d["spec"]["strategy"]);
            put("pod securityContext", &pod["securityContext"]);
            put("serviceAccountName", &pod["serviceAccountName"]);
            put("automountServiceAccountToken", &pod["automountServiceAccountToken"]);
            for f in ["name", "args", "ports", "securityContext", "livenessProbe", "readinessProbe", "resources"] {
                put(&format!("container {f}"), &c[f]);
            }
            let mounts: Vec<Value> =
                c["volumeMounts"].as_array().unwrap().iter().map(|m| m["mountPath"].clone()).collect();
            put("container mount paths", &Value::from(mounts));
        }
        _ => {}
    }
    fields
}

/// Every difference between the base and the chart: objects only one has, and compared fields
/// that differ.
fn differences(base: &[Value], chart: &[Value]) -> BTreeSet<String> {
    let strip = |docs: &[Value]| -> BTreeMap<(String, String), Value> {
        keyed(docs)
            .into_iter()
            .map(|((kind, name), v)| {
                // kustomize's ConfigMap name carries its content hash.
                let name = match name.rsplit_once('-') {
                    Some((n, hash)) if kind == "ConfigMap" && hash.len() == 10 => n.to_string(),
                    _ => name,
                };
                ((kind, name), v)
            })
            .collect()
    };
    let (base, chart) = (strip(base), strip(chart));
    let mut out = BTreeSet::new();
    for key in base.keys().chain(chart.keys()).collect::<BTreeSet<_>>() {
        let (kind, name) = key;
        match (base.get(key), chart.get(key)) {
            (Some(_), None) => drop(out.insert(format!("{kind} {name}: only in the base"))),
            (None, Some(_)) => drop(out.insert(format!("{kind} {name}: only in the chart"))),
            (Some(b), Some(c)) => {
                let (b, c) = (compared(b), compared(c));
                for field in b.keys().chain(c.keys()).collect::<BTreeSet<_>>() {
                    let (bv, cv) = (b.get(field), c.get(field));
                    if bv == cv {
                        continue;
                    }
                    if field == "container args" {
                        // Each argument the one has and the other lacks, so that an intended
                        // difference hides no other.
                        let words = |v: Option<&Value>| -> Vec<String> {
                            v.and_then(Value::as_array)
                                .into_iter()
                                .flatten()
                                .map(|a| a.as_str().unwrap().to_string())
                                .collect()
                        };
                        let (bw, cw) = (words(bv), words(cv));
                        let added: Vec<&String> = cw.iter().filter(|w| !bw.contains(w)).collect();
                        let missing: Vec<&String> = bw.iter().filter(|w| !cw.contains(w)).collect();
                        out.insert(format!("{kind} {name}: {field}: the chart adds {added:?}, lacks {missing:?}"));
                    } else {
                        out.insert(format!("{kind} {name}: {field}"));
                    }
                }
            }
            (None, None) => unreachable!(),
        }
    }
    out
}

#[test]
fn the_kustomize_bases_and_the_chart_agree_but_for_the_differences_listed() {
    // serve: the chart with its defaults, but for the pages' administrator it adds.
    let serve = differences(&kustomize("serve"), &rendered(&["--set", "admin.enabled=false"]));
    let expected: BTreeSet<String> = [
        // The base reads its configuration from a ConfigMap (no secret in it until an overlay
        // adds one); the chart puts it in a Secret, whatever `config` holds.
        "ConfigMap dumbmonit: only in the base",
        "Secret dumbmonit-config: only in the chart",
        // The base brings its namespace, labelled for the restricted standard; Helm installs
        // into the release's namespace (`--create-namespace`), labelled by its owner.
        "Namespace dumbmonit: only in the base",
        // The chart mounts the configuration file alone (subPath), beside its secret files.
        "Deployment dumbmonit: container mount paths",
        // logFormat.
        "Deployment dumbmonit: container args: the chart adds [\"--log-format\", \"json\"], lacks []",
        // The chart's selector has the release's instance and the mode as well as the name.
        "Deployment dumbmonit: selector",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(serve, expected, "serve: the differences between deploy/serve and the chart");
    let agent = differences(
        &kustomize("agent"),
        &rendered(&[
            "--set",
            "mode=agent,agent.servers[0]=https://dumbmonit.example.com,agent.cluster=edge,agent.token=t",
        ]),
    );
    let expected: BTreeSet<String> = [
        // The base takes the server and the cluster from a ConfigMap through the environment;
        // the chart writes them as arguments, with the buffer's age and the log format.
        "ConfigMap dumbmonit-agent: only in the base",
        "Deployment dumbmonit-agent: container args: the chart adds [\"https://dumbmonit.example.com\", \"edge\", \
         \"--buffer-max-age\", \"24h\", \"--log-format\", \"json\"], lacks [\"$(DUMBMONIT_SERVER)\", \
         \"$(DUMBMONIT_CLUSTER)\"]",
        // One resources value for both modes: serve's limits (2 CPUs, 1 GiB), above the agent
        // base's 1 CPU and 512 MiB.
        "Deployment dumbmonit-agent: container resources",
        "Deployment dumbmonit-agent: selector",
        "Namespace dumbmonit: only in the base",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(agent, expected, "agent: the differences between deploy/agent and the chart");
}

#[test]
fn common_labels_reach_every_object_and_extra_args_come_after_the_charts() {
    let docs = rendered(&["--set", "commonLabels.team=sre", "--set", "extraArgs[0]=--shard=0/2"]);
    for d in &docs {
        assert_eq!(d["metadata"]["labels"]["team"], "sre", "{} {}", d["kind"], d["metadata"]["name"]);
    }
    let deployment = by_kind(&docs, "Deployment")[0];
    let args = deployment["spec"]["template"]["spec"]["containers"][0]["args"].as_array().unwrap();
    assert_eq!(args.last().unwrap(), "--shard=0/2");
    assert_eq!(args[0], "serve");
    // The selector stays as it was: a label added later does not orphan the pods.
    assert!(deployment["spec"]["selector"]["matchLabels"]["team"].is_null());
}

#[test]
fn the_network_policy_lets_out_the_ports_of_the_urls_it_sends_to() {
    let egress = |args: &[&str]| -> Vec<i64> {
        let docs = rendered(args);
        let policy = by_kind(&docs, "NetworkPolicy")[0];
        policy["spec"]["egress"][1]["ports"].as_array().unwrap().iter().map(|p| p["port"].as_i64().unwrap()).collect()
    };
    assert_eq!(egress(&[]), [443, 6443]);
    assert_eq!(
        egress(&["--set", "config.notifier[0].type=alertmanager,config.notifier[0].url=http://am.monitoring:9093"]),
        [443, 6443, 9093]
    );
    assert_eq!(
        egress(&[
            "--set",
            "config.notifier[0].type=email,config.notifier[0].host=smtp.lan,config.notifier[1].type=email,\
             config.notifier[1].host=smtp.lan,config.notifier[1].starttls=false,config.notifier[2].type=email,\
             config.notifier[2].host=smtp.lan,config.notifier[2].port=2525",
        ]),
        [443, 6443, 587, 465, 2525],
        "the SMTP ports of the email notifiers"
    );
    assert_eq!(
        egress(&[
            "--set",
            "mode=agent,agent.token=t,agent.servers[0]=http://dumbmonit.monitoring:8080,agent.servers[1]=https://d.example",
            "--set",
            "networkPolicy.egressPorts={8443}",
        ]),
        [443, 6443, 8080, 8443]
    );
    assert_eq!(
        egress(&["--set", "state.url=postgres://dumbmonit@db.lan/dumbmonit"]),
        [443, 6443, 5432],
        "PostgreSQL's"
    );
    assert_eq!(egress(&["--set", "state.url=postgres://dumbmonit@db.lan:6432/dumbmonit"]), [443, 6443, 6432]);
}
