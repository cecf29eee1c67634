//! Namespaced access against the simulator, whose RBAC answers are held to the real API
//! server's in control_plane_tenants.rs: a token granted `team-a` and `team-b` only, read by
//! `check` and `serve` namespace by namespace; nodes said not visible; a namespace not granted
//! one line while the others are read; the same series as a cluster-wide read gives for the
//! objects of those namespaces.

mod common;

use common::Harness;
use dumbmonit_sim::fixtures::{Container, Event, Node, Pod, deployment};
use dumbmonit_sim::{Cluster, Faults};

/// Trouble in team-a, a healthy team-b, trouble elsewhere (in `shop`, and a node not ready).
fn tenants(now: jiff::Timestamp) -> Cluster {
    let mut c = Cluster {
        nodes: vec![Node::new("node-1").build(now), Node::new("node-2").ready(Some("False")).build(now)],
        ..Cluster::default()
    };
    c.deployments.push(deployment("team-a", "api", Some(2), 1, 1, now));
    c.pods.push(Pod::of_deployment("team-a", "api", "7c9696d669", "x2k9p").build(now));
    c.pods.push(
        Pod::of_deployment("team-a", "api", "7c9696d669", "q8w7e")
            .container(Container::crashlooping("app", "Error", 1, 9))
            .build(now),
    );
    c.deployments.push(deployment("team-b", "web", Some(1), 1, 1, now));
    c.pods.push(Pod::of_deployment("team-b", "web", "5d4f8b7c9b", "r4t5y").build(now));
    c.deployments.push(deployment("shop", "checkout", Some(1), 0, 0, now));
    c.pods.push(
        Pod::of_deployment("shop", "checkout", "6b8d9f7c5d", "z1x2c")
            .container(Container::crashlooping("app", "Error", 1, 4))
            .build(now),
    );
    let warning =
        |ns: &str, pod: &str| Event::warning("Pod", ns, pod, "BackOff", "Back-off restarting failed container");
    c.events.push(warning("team-a", "api-7c9696d669-q8w7e").build(now));
    c.events.push(warning("shop", "checkout-6b8d9f7c5d-z1x2c").build(now));
    c.events.push(
        Event::warning("Node", "", "node-2", "NodeNotReady", "Node node-2 status is now: NodeNotReady").build(now),
    );
    c
}

fn granted(namespaces: &[&str]) -> Faults {
    Faults { granted_namespaces: Some(namespaces.iter().map(|n| n.to_string()).collect()), ..Faults::default() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespaced_token_is_read_namespace_by_namespace() {
    let now = jiff::Timestamp::now();
    let h = Harness::start(tenants(now)).await;
    h.sim.set_faults(granted(&["team-a", "team-b"]));

    // Cluster-wide, the token reads nothing: the cycle fails on the first List, as before.
    let wide = h.check(&[]).await;
    assert_eq!(wide.code, 3, "{}{}", wide.stdout, wide.stderr);
    let said = format!("{}{}", wide.stdout, wide.stderr);
    assert!(said.contains("The service account may not read nodes (403)"), "{said}");

    let run = h.check(&["--namespace", "team-a", "--namespace", "team-b", "--namespace", "team-c"]).await;
    assert_eq!(run.code, 2, "a crash loop in team-a is critical: {}{}", run.stdout, run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[0], "1 pod crash-looping, 1 workload missing replicas (watched in 2 namespaces)",
        "{}",
        run.stdout
    );
    assert!(lines[1].contains("): 3 pods (") && !lines[1].contains("node"), "no node counts: {}", lines[1]);
    assert!(lines[1].ends_with(", 2 workloads, 0 claims, 1 warning event in the last hour"), "{}", lines[1]);
    for said in [
        "Watched in 2 namespaces (namespaced access): team-a, team-b",
        "team-c: the service account may not list pods (403)",
        "Nodes are not visible with this token (namespaced access): node health is not watched",
        "Events about nodes are not visible with this token (namespaced access): they are recorded in namespace default",
    ] {
        assert_eq!(lines.iter().filter(|l| **l == said).count(), 1, "said once: {said}\n{}", run.stdout);
    }
    assert!(run.stdout.contains("team-a/api-7c9696d669-q8w7e"), "{}", run.stdout);
    assert!(!run.stdout.contains("shop") && !run.stdout.contains("node-2"), "nothing outside: {}", run.stdout);

    // Each namespaced collection listed in each namespace; nothing listed cluster-wide but what
    // is cluster-scoped; only GETs.
    let requests = h.sim.requests();
    assert!(requests.iter().all(|r| r.method == "GET"));
    for ns in ["team-a", "team-b", "team-c"] {
        for path in ["pods", "persistentvolumeclaims", "events"] {
            let p = format!("/api/v1/namespaces/{ns}/{path}");
            assert!(requests.iter().any(|r| r.path == p), "{p} was read");
        }
        let p = format!("/apis/apps/v1/namespaces/{ns}/deployments");
        assert!(requests.iter().any(|r| r.path == p && r.query.contains("limit=500")), "{p} was read in pages of 500");
    }
    // A namespace is looked up only when nothing was found in it and nothing refused.
    for ns in ["team-a", "team-b", "team-c"] {
        let p = format!("/api/v1/namespaces/{ns}");
        assert!(!requests.iter().any(|r| r.path == p), "{p}: it has objects, or refused");
    }
    for cluster_wide in ["/api/v1/pods", "/apis/apps/v1/deployments", "/api/v1/events"] {
        let n = requests.iter().filter(|r| r.path == cluster_wide).count();
        assert_eq!(n, 1, "{cluster_wide}: only the cluster-wide check above read it");
    }

    let json = h.check(&["--namespace", "team-b", "--output", "json"]).await;
    assert_eq!(json.code, 0, "team-b alone is healthy, whatever team-a and the nodes do: {}", json.stdout);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["summary"], "Healthy: 1 pod (watched in 1 namespace)");
    assert_eq!(doc["optional"]["namespaced"]["read"], serde_json::json!(["team-b"]));
    assert_eq!(doc["optional"]["namespaced"]["nodes_hidden"], true);
    assert_eq!(doc["counts"]["pods"], 1);

    // A token that may get namespaces tells a namespace that does not exist.
    h.sim.set_faults(Faults { get_namespaces: true, ..Faults::default() });
    let run = h.check(&["--namespace", "team-a", "--namespace", "nope"]).await;
    assert!(run.stdout.lines().any(|l| l == "nope: not found"), "{}", run.stdout);
    let first = "1 node not ready, 1 pod crash-looping, 1 workload missing replicas (watched in 1 namespace)";
    assert!(run.stdout.starts_with(first), "a token that may list nodes sees them: {}", run.stdout);
    assert!(!run.stdout.contains("Nodes are not visible"), "{}", run.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_gives_the_namespaces_the_series_a_cluster_wide_read_gives_them() {
    let now = jiff::Timestamp::now();
    let wide = Harness::start(tenants(now)).await;
    let tenant = Harness::start(tenants(now)).await;
    tenant.sim.set_faults(granted(&["team-a", "team-b"]));
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::web::write_config(dir.path(), "", &[("wide", &wide, "200ms"), ("tenant", &tenant, "200ms")]);
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        "[[cluster]]\nname = \"tenant\"\n",
        "[[cluster]]\nname = \"tenant\"\nnamespaces = [\"team-a\", \"team-b\", \"team-c\"]\n",
    );
    std::fs::write(&cfg, text).unwrap();
    let s = common::web::Served::start(&cfg, &[]);
    let exposition = s
        .wait_for("/metrics", "both clusters read", |r| {
            r.body.contains("dumbmonit_k8s_up{cluster=\"tenant\"} 1")
                && r.body.contains("dumbmonit_k8s_up{cluster=\"wide\"} 1")
        })
        .body;
    let teams = ["team-a", "team-b"];
    let (from_wide, from_tenant) =
        (common::series_of(&exposition, "wide", &teams), common::series_of(&exposition, "tenant", &teams));
    assert!(from_wide.len() > 10, "the namespaces' objects have series: {from_wide:#?}");
    assert_eq!(from_wide, from_tenant, "the same series for the objects of team-a and team-b");
    assert!(!common::series_of(&exposition, "wide", &["shop"]).is_empty());
    assert!(common::series_of(&exposition, "tenant", &["shop"]).is_empty(), "nothing of the other namespaces");
    let samples = common::samples(&exposition);
    for family in ["dumbmonit_k8s_nodes", "dumbmonit_k8s_nodes_ready", "dumbmonit_k8s_node_ready"] {
        assert!(
            !common::family(&samples, family).iter().any(|(k, _)| k.contains("\"tenant\"")),
            "{family}: absent, not zero"
        );
        assert!(
            common::family(&samples, family).iter().any(|(k, _)| k.contains("\"wide\"")),
            "{family} of the wide read"
        );
    }
    assert!(
        !samples.keys().any(|k| k.contains("collection=\"nodes\"") && k.contains("\"tenant\"")),
        "no stat for nodes"
    );

    // The API and the pages say it.
    let api = s.get("/api/v1/clusters/tenant").json();
    assert_eq!(api["summary"], "1 pod crash-looping, 1 workload missing replicas (watched in 2 namespaces)");
    assert_eq!(api["namespaces"], serde_json::json!(["team-a", "team-b"]));
    assert_eq!(api["namespace_problems"], serde_json::json!(["team-c: the service account may not list pods (403)"]));
    assert!(api["nodes"].is_null() && api["nodes_ready"].is_null(), "{api:#}");
    assert_eq!(s.get("/api/v1/clusters/wide").json()["nodes"], 2);
    let page = s.get("/clusters/tenant").body;
    assert!(page.contains("Nodes are not visible with this token (namespaced access): node health is not watched"));
    assert!(page.contains("team-c: the service account may not list pods (403)"));
    let overview = s.get("/").body;
    assert!(overview.contains("(watched in 2 namespaces)"), "{overview}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_reads_the_namespaces_its_server_gives_it() {
    use common::agent::{Agent, Site, server_url, wait_until};
    let h = Harness::start(tenants(jiff::Timestamp::now())).await;
    h.sim.set_faults(granted(&["team-a", "team-b"]));
    // The agent is started without --namespace: the server's settings name them.
    let site = Site::new("interval = \"0.3s\"\nnamespaces = [\"team-b\", \"team-a\"]", "");
    let s = site.serve(&[]);
    let agent = Agent::start(&site, &h, &server_url(&s), &[], &[]);
    wait_until(
        "a namespaced cycle",
        || s.get("/api/v1/clusters/edge").json()["namespaces"] == serde_json::json!(["team-b", "team-a"]),
        || format!("{}\n{}", agent.log(), s.get("/api/v1/clusters/edge").body),
    );
    let api = s.get("/api/v1/clusters/edge").json();
    assert_eq!(api["summary"], "1 pod crash-looping, 1 workload missing replicas (watched in 2 namespaces)", "{api:#}");
    assert!(api["nodes"].is_null());
    assert!(agent.log().contains("namespaces [team-b, team-a]"), "the agent says what it took: {}", agent.log());
    assert!(h.sim.requests().iter().any(|r| r.path == "/api/v1/namespaces/team-b/pods"));
}
