//! The kustomize bases `deploy/agent` and `deploy/serve` and `dumbmonit manifests agent`:
//! rendered by the real kubectl, every object decoded into its Kubernetes type, every pod
//! template held to each rule of the restricted Pod Security Standard, the RBAC compared with
//! `dumbmonit rbac` (and the component `deploy/rbac/watch` with `rbac --watch`), and checkov run
//! on the rendered YAML (the Helm chart's too: tests/helm.rs tests the rest of it).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::manifests::{by_kind, decode, documents, keyed, restricted_violations};
use k8s_openapi::api::core::v1::PodSpec;
use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn kustomize(dir: &Path) -> String {
    let out = Command::new("kubectl")
        .args(["kustomize", dir.to_str().unwrap()])
        .output()
        .expect("kubectl is needed (scripts/test.sh installs it from PyPI)");
    assert!(out.status.success(), "kubectl kustomize {}: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn rendered(base: &str) -> (String, Vec<Value>) {
    let yaml = kustomize(&Path::new(ROOT).join("deploy").join(base));
    let docs = documents(&yaml);
    (yaml, docs)
}

#[test]
fn both_bases_render_decode_and_meet_the_restricted_standard() {
    for base in ["agent", "serve"] {
        let (_, docs) = rendered(base);
        let pods = decode(&docs);
        assert_eq!(pods.len(), 1, "{base}: one Deployment");
        for (name, spec) in &pods {
            assert_eq!(restricted_violations(spec), Vec::<String>::new(), "{base}: {name}");
            assert!(spec.host_network.is_none() && spec.host_pid.is_none());
            let c = &spec.containers[0];
            assert!(c.resources.as_ref().is_some_and(|r| r.requests.is_some() && r.limits.is_some()), "{base}: sized");
            assert!(c.liveness_probe.is_some() && c.readiness_probe.is_some(), "{base}: probes");
            assert_eq!(c.security_context.as_ref().unwrap().read_only_root_filesystem, Some(true));
        }
        let ns = by_kind(&docs, "Namespace");
        assert_eq!(ns[0]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"], "restricted");
        for d in &docs {
            if !matches!(d["kind"].as_str(), Some("Namespace" | "ClusterRole" | "ClusterRoleBinding")) {
                assert_eq!(d["metadata"]["namespace"], "dumbmonit", "{base}: {}", d["metadata"]["name"]);
            }
        }
        let sa = by_kind(&docs, "ServiceAccount");
        assert_eq!(sa[0]["automountServiceAccountToken"], false, "the token is mounted only where needed");
        assert_eq!(by_kind(&docs, "NetworkPolicy").len(), 1, "{base}");
    }
}

#[test]
fn the_checker_catches_each_kind_of_violation() {
    let (_, docs) = rendered("agent");
    let good = decode(&docs).remove("dumbmonit-agent").unwrap();
    let mutate = |f: &dyn Fn(&mut PodSpec)| {
        let mut s = good.clone();
        f(&mut s);
        restricted_violations(&s)
    };
    assert!(mutate(&|s| s.host_network = Some(true))[0].starts_with("Host Namespaces"));
    assert!(
        mutate(&|s| s.containers[0].security_context.as_mut().unwrap().privileged = Some(true))[0]
            .starts_with("Privileged")
    );
    assert!(
        mutate(&|s| s.containers[0].security_context.as_mut().unwrap().allow_privilege_escalation = None)[0]
            .starts_with("Privilege Escalation")
    );
    assert!(
        mutate(&|s| {
            s.containers[0].security_context.as_mut().unwrap().run_as_non_root = None;
            s.security_context.as_mut().unwrap().run_as_non_root = None;
        })[0]
            .starts_with("Running as Non-root")
    );
    assert!(
        mutate(&|s| {
            s.containers[0].security_context.as_mut().unwrap().seccomp_profile = None;
            s.security_context.as_mut().unwrap().seccomp_profile = None;
        })[0]
            .starts_with("Seccomp")
    );
    assert!(
        mutate(&|s| s.containers[0].security_context.as_mut().unwrap().capabilities.as_mut().unwrap().drop = None)[0]
            .starts_with("Capabilities")
    );
    let host_path = mutate(&|s| {
        s.volumes
            .as_mut()
            .unwrap()
            .push(serde_json::from_value(serde_json::json!({"name": "h", "hostPath": {"path": "/"}})).unwrap())
    });
    assert!(
        host_path.iter().any(|v| v.starts_with("HostPath")) && host_path.iter().any(|v| v.starts_with("Volume Types"))
    );
    assert!(
        mutate(&|s| s.containers[0].ports.as_mut().unwrap()[0].host_port = Some(8081))[0].starts_with("Host Ports")
    );
}

#[test]
fn the_cluster_role_and_binding_are_those_of_dumbmonit_rbac() {
    let out = Command::new(env!("CARGO_BIN_EXE_dumbmonit"))
        .args(["rbac", "--service-account-namespace", "dumbmonit", "--optional"])
        .output()
        .unwrap();
    let ours = documents(&String::from_utf8(out.stdout).unwrap());
    for base in ["agent", "serve"] {
        let (_, docs) = rendered(base);
        for kind in ["ClusterRole", "ClusterRoleBinding"] {
            assert_eq!(by_kind(&docs, kind), by_kind(&ours, kind), "{base}: {kind}");
        }
        let sa = by_kind(&docs, "ServiceAccount")[0];
        let theirs = by_kind(&ours, "ServiceAccount")[0];
        assert_eq!(sa["metadata"], theirs["metadata"]);
    }
}

/// `deploy/BASE` with the component `deploy/rbac/watch`, as an overlay adds it.
fn rendered_with_watch(base: &str) -> (String, Vec<Value>) {
    let dir = common::watch_overlay(base);
    let yaml = kustomize(dir.path());
    let docs = documents(&yaml);
    (yaml, docs)
}

/// What `dumbmonit rbac ARGS` prints, as YAML documents.
fn dumbmonit_rbac(args: &[&str]) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_dumbmonit")).arg("rbac").args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    documents(&String::from_utf8(out.stdout).unwrap())
}

#[test]
fn the_watch_component_grants_watch_as_dumbmonit_rbac_watch_does() {
    let watched = dumbmonit_rbac(&["--service-account-namespace", "dumbmonit", "--optional", "--watch"]);
    let role = |docs: &[Value]| by_kind(docs, "ClusterRole")[0].clone();
    // deploy/rbac alone grants no watch: it is `rbac --optional`, as before.
    let (plain_yaml, plain) = rendered("rbac");
    assert!(!plain_yaml.contains("watch"), "{plain_yaml}");
    assert_eq!(role(&plain), role(&dumbmonit_rbac(&["--service-account-namespace", "dumbmonit", "--optional"])));
    for base in ["rbac", "agent", "serve"] {
        let (_, docs) = rendered_with_watch(base);
        decode(&docs);
        assert_eq!(role(&docs), role(&watched), "{base}: the ClusterRole of rbac --optional --watch");
        for rule in role(&docs)["rules"].as_array().unwrap() {
            // The Metrics API and the webhooks' backends are never watched.
            let group = rule["apiGroups"][0].as_str().unwrap();
            let resource = rule["resources"][0].as_str().unwrap();
            assert_eq!(
                dumbmonit::rbac::watched(group, resource),
                !["metrics.k8s.io", "discovery.k8s.io"].contains(&group) && resource != "services"
            );
            let verbs = if !dumbmonit::rbac::watched(group, resource) {
                serde_json::json!(["get", "list"])
            } else {
                serde_json::json!(["get", "list", "watch"])
            };
            assert_eq!(rule["verbs"], verbs, "{base}: {rule}");
        }
        // Nothing else changes.
        let (_, without) = rendered(base);
        let (mut with, mut without) = (keyed(&docs), keyed(&without));
        let key = ("ClusterRole".to_string(), "dumbmonit-read".to_string());
        assert_ne!(with.remove(&key), without.remove(&key));
        assert_eq!(with, without, "{base}: only the ClusterRole changes");
    }
}

#[test]
fn manifests_agent_prints_what_kustomize_renders_with_the_same_values() {
    // Inside the repository: kustomize takes bases by relative path only.
    let dir = tempfile::Builder::new().prefix("deploy-overlay-").tempdir_in(Path::new(ROOT).join("target")).unwrap();
    let token = "edge-agent-token-5f0e1d2c3b4a5968";
    common::register_secret(token);
    let token_file = dir.path().join("edge.token");
    std::fs::write(&token_file, format!("{token}\n")).unwrap();
    // A GitOps overlay with the values `manifests agent` is given.
    std::fs::write(
        dir.path().join("kustomization.yaml"),
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: monitoring\nresources:\n  - ../../deploy/agent\n\
             configMapGenerator:\n  - name: dumbmonit-agent\n    behavior: merge\n    literals:\n      - server=https://dumbmonit.example.org\n      - cluster=branch-17\n\
             secretGenerator:\n  - name: dumbmonit-agent\n    behavior: replace\n    files:\n      - agent.token=edge.token\n\
             images:\n  - name: dumbmonit\n    newName: registry.example.org/dumbmonit\n    newTag: \"1.2\"\n",
    )
    .unwrap();
    let overlay = documents(&kustomize(dir.path()));
    let out = Command::new(env!("CARGO_BIN_EXE_dumbmonit"))
        .args(["manifests", "agent", "--server", "https://dumbmonit.example.org", "--cluster", "branch-17"])
        .args(["--agent-token-file", token_file.to_str().unwrap()])
        .args(["--image", "registry.example.org/dumbmonit:1.2", "--service-account-namespace", "monitoring"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let printed = String::from_utf8(out.stdout).unwrap();
    assert!(!printed.contains(token), "the token is in the Secret, base64-encoded only");
    let mut ours = keyed(&documents(&printed));
    let mut theirs = keyed(&overlay);
    // The Secret's token: the file's content, newline and all, against the trimmed token.
    let secret = ("Secret".to_string(), "dumbmonit-agent".to_string());
    let decoded = |v: &Value| {
        use base64::Engine;
        let b = base64::engine::general_purpose::STANDARD.decode(v["data"]["agent.token"].as_str().unwrap()).unwrap();
        String::from_utf8(b).unwrap().trim().to_string()
    };
    assert_eq!(decoded(&ours[&secret]), token);
    assert_eq!(decoded(&theirs[&secret]), token);
    ours.get_mut(&secret).unwrap()["data"] = Value::Null;
    theirs.get_mut(&secret).unwrap()["data"] = Value::Null;
    assert_eq!(ours.keys().collect::<Vec<_>>(), theirs.keys().collect::<Vec<_>>());
    for (k, v) in &theirs {
        assert_eq!(&ours[k], v, "{k:?}");
    }

    // Without a token file, a new token is made, written aside (0600) and never printed.
    let out = Command::new(env!("CARGO_BIN_EXE_dumbmonit"))
        .current_dir(dir.path())
        .args(["manifests", "agent", "--server", "https://dumbmonit.example.org:8443", "--cluster", "fresh"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let made = std::fs::read_to_string(dir.path().join("fresh.agent-token")).unwrap();
    common::register_secret(made.trim());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(dir.path().join("fresh.agent-token")).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(String::from_utf8_lossy(&out.stderr).contains("A new agent token is in fresh.agent-token"));
    let printed = String::from_utf8(out.stdout).unwrap();
    assert!(!printed.contains(made.trim()) && !String::from_utf8_lossy(&out.stderr).contains(made.trim()));
    let policy = keyed(&documents(&printed))[&("NetworkPolicy".to_string(), "dumbmonit-agent".to_string())].clone();
    let ports: Vec<i64> =
        policy["spec"]["egress"][1]["ports"].as_array().unwrap().iter().map(|p| p["port"].as_i64().unwrap()).collect();
    assert_eq!(ports, [443, 6443, 8443], "the server's own port is let out");
}

/// The checks that may fail, with their reasons: the table in docs/deploy.md.
fn accepted_checkov_failures() -> BTreeMap<String, String> {
    let doc = std::fs::read_to_string(Path::new(ROOT).join("docs/deploy.md")).unwrap();
    let table =
        doc.split("<!-- checkov-accepted -->").nth(1).expect("docs/deploy.md lists the accepted checkov checks");
    table
        .lines()
        .skip_while(|l| !l.starts_with("| CKV"))
        .take_while(|l| l.starts_with("| CKV"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            (cells[0].to_string(), cells[cells.len() - 1].to_string())
        })
        .collect()
}

/// The Helm chart rendered with its defaults and in agent mode, by the test suite's Helm.
fn helm_renderings() -> Vec<(String, String)> {
    let agent = ["--set", "mode=agent,agent.servers[0]=https://dumbmonit.example.com,agent.token=t"];
    [("chart", &[][..]), ("chart agent", &agent[..])]
        .into_iter()
        .map(|(name, args)| (name.to_string(), common::helm::template(args).unwrap_or_else(|e| panic!("{e}"))))
        .collect()
}

/// checkov: where scripts/test.sh installed it (`DUMBMONIT_CHECKOV`), else on the PATH.
fn checkov() -> String {
    std::env::var("DUMBMONIT_CHECKOV").ok().filter(|p| Path::new(p).exists()).unwrap_or_else(|| "checkov".into())
}

#[test]
fn checkov_finds_nothing_but_the_documented_exceptions() {
    let accepted = accepted_checkov_failures();
    assert!(accepted.values().all(|why| why.len() > 20), "each accepted check has its reason: {accepted:?}");
    let dir = tempfile::tempdir().unwrap();
    let renderings = ["agent", "serve"]
        .into_iter()
        .map(|base| (base.to_string(), rendered(base).0))
        .chain(["agent", "serve"].into_iter().map(|base| (format!("{base}+watch"), rendered_with_watch(base).0)))
        .chain(helm_renderings());
    for (base, yaml) in renderings {
        let file = dir.path().join(format!("{base}.yaml"));
        std::fs::write(&file, yaml).unwrap();
        let out = Command::new(checkov())
            // --skip-download: nothing is fetched (tests reach loopback only).
            .args(["--quiet", "--compact", "--skip-download", "--framework", "kubernetes", "--output", "json", "-f"])
            .arg(&file)
            .output()
            .expect("checkov is needed (scripts/test.sh installs it from PyPI)");
        let text = String::from_utf8_lossy(&out.stdout);
        let report: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("checkov's JSON ({e}): {text}"));
        let reports = if report.is_array() { report.as_array().unwrap().clone() } else { vec![report] };
        let mut failed: Vec<String> = Vec::new();
        let mut passed = 0;
        for r in &reports {
            passed += r["summary"]["passed"].as_u64().unwrap_or(0);
            for f in r["results"]["failed_checks"].as_array().into_iter().flatten() {
                failed.push(format!(
                    "{} {} ({})",
                    f["check_id"].as_str().unwrap(),
                    f["resource"].as_str().unwrap_or(""),
                    f["check_name"].as_str().unwrap_or("")
                ));
            }
        }
        assert!(passed > 50, "{base}: checkov ran its checks ({passed} passed)");
        let unexpected: Vec<&String> =
            failed.iter().filter(|f| !accepted.contains_key(f.split(' ').next().unwrap())).collect();
        assert!(unexpected.is_empty(), "{base}: checks failed that docs/deploy.md does not accept: {unexpected:#?}");
    }
}
