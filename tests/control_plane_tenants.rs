//! Namespaced access on the real control plane, whose RBAC decides: a ServiceAccount with Roles
//! in team-a and team-b only, made by `dumbmonit rbac --namespace …` and `kubectl apply`, read by
//! `check` and `serve` beside a cluster-wide read of the same cluster; then the simulator's
//! answers to the same namespaced requests held to the real server's. And the owners of
//! namespaces: alerts routed to a team by its namespace's label, once `rbac --optional` lets
//! the namespaces be read.

mod common;

use std::time::{Duration, Instant};

use common::plane::{Credentials, Plane, assert_only_reads};
use common::{Harness, dumbmonit};
use dumbmonit_sim::{Cluster, Faults};
use serde_json::Value;

/// Trouble in team-a (a crash loop, so a Deployment short of replicas), a healthy team-b, and a
/// crash loop in `other`, which the tenant's token may not read.
const TENANTS: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b}
---
apiVersion: v1
kind: Namespace
metadata: {name: other}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: team-a}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata:
      labels: {app: api}
      annotations:
        testenv.dumbmonit.io/behaviour: crashloop
        testenv.dumbmonit.io/exit-code: "1"
    spec:
      containers: [{name: app, image: registry.example/team-a/api:1.0}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team-b}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: registry.example/team-b/web:1.0}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: noise, namespace: other}
spec:
  replicas: 1
  selector: {matchLabels: {app: noise}}
  template:
    metadata:
      labels: {app: noise}
      annotations:
        testenv.dumbmonit.io/behaviour: crashloop
        testenv.dumbmonit.io/exit-code: "1"
    spec:
      containers: [{name: app, image: registry.example/other/noise:1.0}]
"#;

const TENANT: &str = "system:serviceaccount:team-a:dumbmonit";

fn crashlooping(list: &Value, n: usize) -> bool {
    let items = list["items"].as_array().unwrap();
    items.len() == n
        && items.iter().all(|p| p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "CrashLoopBackOff")
}

/// The cluster, the tenant's credentials (from `rbac --namespace`), and the cluster-wide ones
/// (from `rbac`), with the YAML `rbac --namespace` printed.
async fn tenants() -> (Plane, Credentials, Credentials, String) {
    let p = Plane::up(&[]);
    p.apply(TENANTS);
    let dir = tempfile::tempdir().unwrap();
    let yaml =
        dumbmonit(&["rbac", "--namespace", "team-a", "--namespace", "team-b"].map(String::from), &[], dir.path()).await;
    assert_eq!(yaml.code, 0, "{}", yaml.stderr);
    p.apply(&yaml.stdout);
    let tenant = p.read_credentials("team-a", "dumbmonit-token");
    p.apply(&dumbmonit(&["rbac".into()], &[], dir.path()).await.stdout);
    let wide = p.read_credentials("kube-system", "dumbmonit-token");
    p.wait_for("team-a's crash loops", &["-n", "team-a", "pods", "-l", "app=api"], |l| crashlooping(l, 2));
    p.wait_for("other's crash loop", &["-n", "other", "pods", "-l", "app=noise"], |l| crashlooping(l, 1));
    p.wait_for("team-b's web ready", &["-n", "team-b", "deployment", "web"], |d| d["status"]["readyReplicas"] == 1);
    (p, tenant, wide, yaml.stdout)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_token_reads_its_namespaces_and_nothing_else() {
    let (p, tenant, wide, yaml) = tenants().await;

    // The checks the header prints answer as it says.
    let checks = dumbmonit::rbac::can_i_checks(&yaml);
    assert_eq!(checks.len(), 3, "{yaml}");
    for (args, yes) in &checks {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = p.kubectl_in(&args, "");
        let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert_eq!(said, if *yes { "yes" } else { "no" }, "kubectl {args:?}");
    }

    // Cluster-wide, the tenant's token reads nothing: the first List's 403, as before.
    let refused = p.check(&p.address, &tenant, &[]).await;
    assert_eq!(refused.code, 3, "{}{}", refused.stdout, refused.stderr);

    let run = p.check(&p.address, &tenant, &["--namespace", "team-a", "--namespace", "team-b"]).await;
    assert_eq!(run.code, 2, "the crash loops of team-a are critical: {}{}", run.stdout, run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(lines[0].starts_with("2 pods crash-looping"), "{}", run.stdout);
    assert!(lines[0].ends_with("(watched in 2 namespaces)"), "{}", run.stdout);
    for said in [
        "Watched in 2 namespaces (namespaced access): team-a, team-b",
        "Nodes are not visible with this token (namespaced access): node health is not watched",
        "Not visible with this token (namespaced access): apiservices.apiregistration.k8s.io, persistentvolumes, \
         leases.coordination.k8s.io, validatingwebhookconfigurations.admissionregistration.k8s.io, \
         mutatingwebhookconfigurations.admissionregistration.k8s.io, namespaces, nodes.metrics.k8s.io",
    ] {
        assert_eq!(lines.iter().filter(|l| **l == said).count(), 1, "said once: {said}\n{}", run.stdout);
    }
    assert!(!run.stdout.contains("other/") && !run.stdout.contains("noise"), "{}", run.stdout);
    assert!(!run.stdout.lines().any(|l| l.starts_with("team-")), "no namespace's line: {}", run.stdout);
    assert!(!run.stdout.contains("node-1"), "{}", run.stdout);

    // Exit status by the namespaces read: team-b alone is healthy.
    let healthy = p.check(&p.address, &tenant, &["--namespace", "team-b"]).await;
    assert_eq!(healthy.code, 0, "{}", healthy.stdout);
    assert!(healthy.stdout.starts_with("Healthy: 1 pod (watched in 1 namespace)\n"), "{}", healthy.stdout);

    // A namespace not granted: its line, the other read.
    let partly = p.check(&p.address, &tenant, &["--namespace", "team-b", "--namespace", "other"]).await;
    assert_eq!(partly.code, 0, "{}", partly.stdout);
    assert!(
        partly.stdout.lines().any(|l| l == "other: the service account may not list pods (403)"),
        "{}",
        partly.stdout
    );
    assert!(partly.stdout.starts_with("Healthy: 1 pod (watched in 1 namespace)"), "{}", partly.stdout);

    // The cluster's admin may get namespaces: one that does not exist is said so.
    let admin = dumbmonit(
        &["check", "--kubeconfig", p.kubeconfig.to_str().unwrap(), "--namespace", "team-b", "--namespace", "nope"]
            .map(String::from),
        &[],
        p.dir.path(),
    )
    .await;
    assert!(admin.stdout.lines().any(|l| l == "nope: not found"), "{}{}", admin.stdout, admin.stderr);
    assert!(admin.stdout.starts_with("Healthy: 2 nodes ready, 1 pod (watched in 1 namespace)"), "{}", admin.stdout);

    // The same cluster read cluster-wide says the same of team-a and team-b, and more.
    let all = p.check(&p.address, &wide, &["--output", "json"]).await;
    let all: Value = serde_json::from_str(&all.stdout).unwrap();
    let mine =
        p.check(&p.address, &tenant, &["--namespace", "team-a", "--namespace", "team-b", "--output", "json"]).await;
    let mine: Value = serde_json::from_str(&mine.stdout).unwrap();
    let pods_in = |doc: &Value, teams: bool| -> Vec<String> {
        let mut v: Vec<String> = doc["pods"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| !teams || p["namespace"].as_str().is_some_and(|n| n.starts_with("team-")))
            .map(|p| format!("{}/{} {}", p["namespace"], p["name"], p["problems"]))
            .collect();
        v.sort();
        v
    };
    assert_eq!(pods_in(&mine, false), pods_in(&all, true));
    assert_eq!(pods_in(&mine, false).len(), 2);
    assert!(pods_in(&all, false).len() > 2, "the cluster-wide read sees other's crash loop too");
    assert!(mine["nodes"].as_array().unwrap().is_empty() && !all["nodes"].as_array().unwrap().is_empty());
    assert_only_reads(&p, TENANT);
    let namespaced_lists =
        p.requests_of(TENANT).iter().filter(|(_, uri)| uri.starts_with("/api/v1/namespaces/team-b/pods?")).count();
    assert!(namespaced_lists >= 3, "team-b's pods listed in their namespace");

    // serve: both reads of one cluster side by side; the same series for team-a and team-b.
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("dumbmonit.toml");
    let cluster = |name: &str, creds: &Credentials, extra: &str| {
        format!(
            "[[cluster]]\nname = {name:?}\naddress = {:?}\ntoken_file = {:?}\nca_file = {:?}\ninterval = \"1s\"\n{extra}\n",
            p.address,
            creds.token_file.to_str().unwrap(),
            creds.ca_file.to_str().unwrap()
        )
    };
    std::fs::write(
        &cfg,
        format!(
            "listen = \"127.0.0.1:0\"\nstate_dir = {:?}\n\n{}{}",
            dir.path().join("state").to_str().unwrap(),
            cluster("wide", &wide, ""),
            cluster("tenant", &tenant, "namespaces = [\"team-a\", \"team-b\"]"),
        ),
    )
    .unwrap();
    let s = common::web::Served::start(&cfg, &[]);
    // Restart counts move between the two reads' cycles: wait until one moment has both agree.
    let teams = ["team-a", "team-b"];
    let deadline = Instant::now() + Duration::from_secs(60);
    let exposition = loop {
        let body = s.get("/metrics").body;
        let (a, b) = (common::series_of(&body, "wide", &teams), common::series_of(&body, "tenant", &teams));
        if body.contains("dumbmonit_k8s_up{cluster=\"tenant\"} 1") && a.len() > 10 && a == b {
            break body;
        }
        assert!(Instant::now() < deadline, "the two reads never agreed on team-a and team-b:\n{a:#?}\n{b:#?}");
        std::thread::sleep(Duration::from_millis(300));
    };
    assert!(!common::series_of(&exposition, "wide", &["other"]).is_empty());
    assert!(common::series_of(&exposition, "tenant", &["other"]).is_empty(), "nothing of other");
    let samples = common::samples(&exposition);
    for family in ["dumbmonit_k8s_nodes", "dumbmonit_k8s_node_ready"] {
        let of =
            |c: &str| common::family(&samples, family).iter().any(|(k, _)| k.contains(&format!("cluster=\"{c}\"")));
        assert!(of("wide") && !of("tenant"), "{family}: absent, not zero, for the tenant");
    }
    let api = s.get("/api/v1/clusters/tenant").json();
    assert_eq!(api["namespaces"], serde_json::json!(["team-a", "team-b"]));
    // Without --optional, the optional reads are refused in every namespace: the one "Not
    // granted" line, no namespace's.
    assert_eq!(api["namespace_problems"], serde_json::json!([]), "{api:#}");
    assert!(api["nodes"].is_null(), "{api:#}");
    assert!(s.get("/clusters/tenant").body.contains("Nodes are not visible with this token (namespaced access)"));
    drop(s);

    // `manifests agent --namespace …`: the real server takes the agent's objects as they are.
    let token = dir.path().join("edge.agent-token");
    std::fs::write(&token, "an-agent-token-of-thirty-two-bytes-long").unwrap();
    common::register_secret("an-agent-token-of-thirty-two-bytes-long");
    let agent = dumbmonit(
        &[
            "manifests",
            "agent",
            "--server",
            "https://dumbmonit.example.com",
            "--cluster",
            "edge",
            "--agent-token-file",
            token.to_str().unwrap(),
            "--namespace",
            "team-a",
            "--namespace",
            "team-b",
        ]
        .map(String::from),
        &[],
        dir.path(),
    )
    .await;
    assert_eq!(agent.code, 0, "{}", agent.stderr);
    let applied = p.kubectl_ok(&["apply", "--dry-run=server", "-f", "-"], &agent.stdout);
    // The same Role as `rbac --namespace` made, now with the optional reads.
    let roles = applied.matches("role.rbac.authorization.k8s.io/dumbmonit-read configured (server dry run)").count();
    assert_eq!(roles, 2, "{applied}");
    assert!(applied.contains("deployment.apps/dumbmonit-agent created (server dry run)"), "{applied}");
    assert!(!applied.contains("clusterrole"), "{applied}");

    // The simulator, granted the same namespaces, answers the same requests as the real server.
    let sim = Harness::start(Cluster::default()).await;
    sim.sim
        .set_faults(Faults { granted_namespaces: Some(vec!["team-a".into(), "team-b".into()]), ..Faults::default() });
    let real_ca = std::fs::read_to_string(&p.ca_file).unwrap();
    let real_addr: std::net::SocketAddr = format!("127.0.0.1:{}", p.port).parse().unwrap();
    let get = |addr, ca: &str, token: &str, path: &str| {
        let r = common::plane::raw(addr, ca, token, path);
        (r.status, r.body)
    };
    let user_free = |v: &Value| -> Value {
        let text = v.to_string().replace(TENANT, "USER").replace("system:serviceaccount:kube-system:dumbmonit", "USER");
        serde_json::from_str(&text).unwrap()
    };
    for path in [
        "/api/v1/namespaces/other/pods?limit=500",
        "/apis/apps/v1/namespaces/other/deployments?limit=500",
        "/api/v1/pods?limit=500",
        "/api/v1/nodes?limit=500",
        "/apis/apiregistration.k8s.io/v1/apiservices?limit=500",
        "/api/v1/namespaces/team-a",
        "/api/v1/namespaces/nope",
    ] {
        let (status, body) = get(real_addr, &real_ca, &tenant.token, path);
        let (sim_status, sim_body) = get(sim.sim.addr(), sim.sim.ca_pem(), sim.sim.token(), path);
        assert_eq!((status, sim_status), (403, 403), "{path}: {body}");
        assert_eq!(user_free(&body), user_free(&sim_body), "{path}");
    }
    let (status, body) = get(real_addr, &real_ca, &tenant.token, "/api/v1/namespaces/team-a/pods?limit=500");
    let (sim_status, sim_body) =
        get(sim.sim.addr(), sim.sim.ca_pem(), sim.sim.token(), "/api/v1/namespaces/team-a/pods?limit=500");
    assert_eq!((status, sim_status), (200, 200));
    assert_eq!(body["kind"], sim_body["kind"]);
    // A token that may get namespaces: 404 for one that does not exist, in the same words.
    let admin_token = std::fs::read_to_string(p.file("admin.token")).unwrap();
    let (status, body) = get(real_addr, &real_ca, admin_token.trim(), "/api/v1/namespaces/nope");
    sim.sim.set_faults(Faults { get_namespaces: true, ..Faults::default() });
    let (sim_status, sim_body) = get(sim.sim.addr(), sim.sim.ca_pem(), sim.sim.token(), "/api/v1/namespaces/nope");
    assert_eq!((status, sim_status), (404, 404));
    assert_eq!(body, sim_body);
}

/// Namespaces that carry their owner, and one that does not.
const OWNED: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: payments, labels: {team: payments}}
---
apiVersion: v1
kind: Namespace
metadata: {name: search, labels: {team: search, owner: ana}}
---
apiVersion: v1
kind: Namespace
metadata: {name: misc}
"#;

/// The crash-looping pods of webhook bodies: (namespace, its `team` label or "").
fn crash_loops(r: &common::receiver::Receiver) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = r
        .bodies()
        .iter()
        .flat_map(|b| b["alerts"].as_array().cloned().unwrap_or_default())
        .filter(|a| a["labels"]["alertname"] == "KubernetesPodCrashLooping" && a["status"] == "firing")
        .map(|a| {
            let l = |k: &str| a["labels"][k].as_str().unwrap_or_default().to_string();
            (l("namespace"), l("team"))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alerts_reach_the_team_their_namespace_is_labelled_with_once_namespaces_may_be_read() {
    use dumbmonit_sim::fixtures::{Container, Pod};
    let p = Plane::up(&["--no-kubelets", "--controllers", "serviceaccount-token"]);
    let creds = p.guide_service_account();
    p.apply(OWNED);
    let now = jiff::Timestamp::now();
    let mut cluster = Cluster::default();
    for ns in ["payments", "search", "misc"] {
        cluster.pods.push(Pod::new(ns, "worker").container(Container::crashlooping("app", "Error", 1, 9)).build(now));
    }
    p.load(&common::api_list(&cluster));

    let serve = |dir: &std::path::Path, payments: &str, search: &str, everyone: &str| {
        let extra = format!(
            "namespace_labels = [\"team\"]\n\n\
             [[notifier]]\ntype = \"webhook\"\nname = \"payments\"\nurl = \"{payments}/hook\"\nmatchers = ['team=\"payments\"']\n\n\
             [[notifier]]\ntype = \"webhook\"\nname = \"search\"\nurl = \"{search}/hook\"\nmatchers = ['team=\"search\"']\n\n\
             [[notifier]]\ntype = \"webhook\"\nname = \"everyone\"\nurl = \"{everyone}/hook\"\n"
        );
        p.serve(dir, &creds, &extra)
    };
    let wait = |what: &str, s: &common::web::Served, ok: &dyn Fn() -> bool| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !ok() {
            assert!(Instant::now() < deadline, "waited in vain for {what}:\n{}", s.log());
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let receivers = || async {
        use common::receiver::Receiver;
        (Receiver::start().await, Receiver::start().await, Receiver::start().await)
    };

    // The guide's role: the namespaces cannot be read, the page says so, and the alerts carry
    // no owner: all go to the notifier without matchers.
    let (payments, search, everyone) = receivers().await;
    let dir = tempfile::tempdir().unwrap();
    let s = serve(dir.path(), &payments.url(), &search.url(), &everyone.url());
    wait("the three crash loops, to everyone", &s, &|| crash_loops(&everyone).len() == 3);
    let page = s.get("/clusters/real").body;
    let line = page.lines().find(|l| l.contains("Not granted to this service account")).unwrap_or_default();
    assert!(line.contains("namespaces"), "{page}");
    assert!(crash_loops(&everyone).iter().all(|(_, team)| team.is_empty()), "{:?}", crash_loops(&everyone));
    assert!(crash_loops(&payments).is_empty() && crash_loops(&search).is_empty());
    drop(s);

    // `rbac --optional` lets the namespaces be read (get and list): each team is told its own,
    // the rest goes to everyone.
    let rbac = tempfile::tempdir().unwrap();
    p.apply(&dumbmonit(&["rbac".into(), "--optional".into()], &[], rbac.path()).await.stdout);
    let sa = "system:serviceaccount:kube-system:dumbmonit";
    for (verb, yes) in [("list", "yes"), ("get", "yes"), ("watch", "no"), ("delete", "no")] {
        let out = p.kubectl_in(&["auth", "can-i", verb, "namespaces", "--as", sa], "");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), yes, "{verb} namespaces");
    }
    let (payments, search, everyone) = receivers().await;
    let dir = tempfile::tempdir().unwrap();
    let s = serve(dir.path(), &payments.url(), &search.url(), &everyone.url());
    wait("each crash loop to its team", &s, &|| {
        !crash_loops(&payments).is_empty() && !crash_loops(&search).is_empty() && !crash_loops(&everyone).is_empty()
    });
    assert_eq!(crash_loops(&payments), [("payments".to_string(), "payments".to_string())]);
    assert_eq!(crash_loops(&search), [("search".to_string(), "search".to_string())]);
    assert_eq!(crash_loops(&everyone), [("misc".to_string(), String::new())]);
    let alerts = s.get("/api/v1/alerts").json();
    let search_alert = alerts.as_array().unwrap().iter().find(|a| a["labels"]["namespace"] == "search").unwrap();
    assert!(search_alert["labels"]["owner"].is_null(), "only the labels asked for: {search_alert}");
    let page = s.get("/clusters/real").body;
    assert!(
        !page.lines().any(|l| l.contains("Not granted to this service account") && l.contains("namespaces")),
        "{page}"
    );
    assert_only_reads(&p, sa);
}
