//! How the cluster is read: pages, continue tokens, server-side filters, gzip, only GETs.

mod common;

use common::fixture::{self, BULK_PODS};
use common::{Harness, samples};
use dumbmonit_sim::Faults;

fn pod_requests(h: &Harness) -> Vec<String> {
    h.sim.requests().into_iter().filter(|r| r.path == "/api/v1/pods").map(|r| r.query).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_are_read_in_pages_with_server_side_filters() {
    let h = Harness::start(fixture::cluster(jiff::Timestamp::now())).await;
    let run = h.check(&["--output", "prometheus", "--ignore-namespace", "ci", "--ignore-namespace", "dev"]).await;
    assert_eq!(samples(&run.stdout)["dumbmonit_k8s_pods"], 13.0 + BULK_PODS as f64);

    let pods = pod_requests(&h);
    assert_eq!(pods.len(), 2, "614 pods are two pages of 500: {pods:?}");
    let skip = "fieldSelector=metadata.namespace%21%3Dci%2Cmetadata.namespace%21%3Ddev";
    assert_eq!(pods[0], format!("{skip}&limit=500"));
    assert!(pods[1].starts_with(&format!("{skip}&limit=500&continue=")), "{}", pods[1]);

    let requests = h.sim.requests();
    let query_of = |path: &str| requests.iter().find(|r| r.path == path).map(|r| r.query.clone()).unwrap();
    assert_eq!(
        query_of("/api/v1/events"),
        "fieldSelector=type%3DWarning&limit=500",
        "events are not filtered by namespace"
    );
    assert_eq!(query_of("/api/v1/nodes"), "limit=500", "nodes have no namespace");
    for path in [
        "/apis/apps/v1/deployments",
        "/apis/apps/v1/statefulsets",
        "/apis/apps/v1/daemonsets",
        "/api/v1/persistentvolumeclaims",
    ] {
        assert_eq!(query_of(path), format!("{skip}&limit=500"), "{path}");
    }
    assert_eq!(query_of("/version"), "");
    assert!(requests.iter().all(|r| r.accept_gzip), "every request asks for gzip");
    assert!(requests.iter().all(|r| r.authorized), "every request carries the token");
    // What the Pending claim waits for: one more List of events, filtered by the server.
    let claims: Vec<_> = requests.iter().filter(|r| r.query.contains("involvedObject.kind")).collect();
    assert_eq!(claims.len(), 1, "{requests:?}");
    assert_eq!(claims[0].query, "fieldSelector=involvedObject.kind%3DPersistentVolumeClaim%2Ctype%3DNormal&limit=500");
    assert_eq!(
        requests.len(),
        9 + 13 + 1,
        "eight collections, one of them two pages, the thirteen optional reads (no webhook: no backend) and the claim events"
    );
    h.assert_only_reads();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_continue_token_restarts_the_list_once() {
    let h = Harness::start(fixture::cluster(jiff::Timestamp::now())).await;
    h.sim.set_faults(Faults { expire_continue: 1, ..Default::default() });
    let run = h.check(&["--output", "prometheus"]).await;
    assert_eq!(run.stderr, "");
    let m = samples(&run.stdout);
    assert_eq!(m["dumbmonit_k8s_up"], 1.0);
    assert_eq!(m["dumbmonit_k8s_pods"], 14.0 + BULK_PODS as f64, "no pod counted twice after the restart");
    let pods = pod_requests(&h);
    assert_eq!(pods.len(), 4, "page 1, expired page 2, page 1 again, page 2: {pods:?}");
    assert_eq!(pods[0], "limit=500");
    assert!(pods[1].starts_with("limit=500&continue="));
    assert_eq!(pods[2], "limit=500", "the list starts over from the beginning");
    assert!(pods[3].starts_with("limit=500&continue="));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_that_expires_twice_fails_the_cycle() {
    let h = Harness::start(fixture::cluster(jiff::Timestamp::now())).await;
    h.sim.set_faults(Faults { expire_continue: 2, ..Default::default() });
    let run = h.check(&["--output", "prometheus"]).await;
    assert_eq!(run.code, 3);
    assert_eq!(
        run.stderr.trim(),
        format!(
            "The API server answered 410 Gone at {} while reading pods: the continue token expired again after the list was restarted",
            h.sim.url()
        )
    );
    let m = samples(&run.stdout);
    assert_eq!(m["dumbmonit_k8s_up"], 0.0);
    assert_eq!(m["dumbmonit_k8s_collection_success{collection=\"pods\"}"], 0.0);
    assert_eq!(m["dumbmonit_k8s_collection_success{collection=\"nodes\"}"], 1.0);
    assert!(!m.contains_key("dumbmonit_k8s_pods"), "a failed cycle derives no object metrics from partial data");
    assert!(!m.keys().any(|k| k.starts_with("dumbmonit_k8s_node_")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_pages_arrive_compressed_and_decode() {
    let h = Harness::start(fixture::cluster(jiff::Timestamp::now())).await;
    let run = h.check(&["--output", "json"]).await;
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["counts"]["pods"], 14 + BULK_PODS as u64);
    // A page of 500 realistic pods is far above the API server's 128 KiB compression threshold.
    assert!(h.sim.gzip_responses() >= 2, "the two pod pages came compressed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_cluster_is_seen_by_the_next_check() {
    let now = jiff::Timestamp::now();
    let h = Harness::start(dumbmonit_sim::scenario::trouble(now)).await;
    assert_eq!(h.check(&[]).await.code, 2);
    h.sim.set_cluster(dumbmonit_sim::scenario::healthy(now));
    let run = h.check(&[]).await;
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(run.stdout.starts_with("Healthy: 3 nodes ready, 10 pods\n"), "{}", run.stdout);
}

/// The simulator serves a fleet of clusters under path prefixes, each with its own faults and
/// request log; DumbMonit reads an address with a path like any other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_serves_each_cluster_under_its_path_prefix() {
    use dumbmonit_sim::{Sim, SimOptions, scenario};
    let now = jiff::Timestamp::now();
    let sim = Sim::start_fleet(SimOptions::default(), scenario::healthy(now), 3).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (token, ca) = (dir.path().join("token"), dir.path().join("ca.crt"));
    std::fs::write(&token, sim.token()).unwrap();
    std::fs::write(&ca, sim.ca_pem()).unwrap();
    let check = |i: usize| {
        let args: Vec<String> = vec![
            "check".into(),
            sim.member_url(i),
            "--token-file".into(),
            common::path(&token),
            "--ca-file".into(),
            common::path(&ca),
        ];
        let home = dir.path().to_path_buf();
        async move { common::dumbmonit(&args, &[], &home).await }
    };
    sim.set_member_faults(1, Faults { fail_status: Some(503), ..Default::default() });
    let (zero, one, two) = (check(0).await, check(1).await, check(2).await);
    assert_eq!((zero.code, one.code, two.code), (0, 3, 0), "{}", one.stderr);
    assert!(one.stderr.contains(&sim.member_url(1)), "{}", one.stderr);
    assert!(zero.stdout.starts_with("Healthy: 3 nodes ready"), "{}", zero.stdout);
    let paths: Vec<String> = sim.member_requests(2).into_iter().map(|r| r.path).collect();
    assert!(paths.contains(&"/api/v1/pods".to_string()), "each member sees its own paths: {paths:?}");
    assert!(sim.member_requests(0).iter().all(|r| r.method == "GET"));
    let unknown = check(7).await;
    assert_eq!(unknown.code, 3, "{}", unknown.stderr);
}
