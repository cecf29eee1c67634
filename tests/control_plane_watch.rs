//! Watch mode against the real API server: the same cluster read by LIST every cycle and
//! followed by list-then-watch (streaming list, watches with bookmarks, resumed, relisted) gives
//! the same snapshot, sentence and metrics after every change; the API server restarted is
//! followed through; only get, list and watch reach it.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::plane::{Plane, assert_only_reads};
use dumbmonit::collect::follow::Follower;
use dumbmonit::collect::reader::{Connected, connect};
use dumbmonit::collect::{CycleOptions, Snapshot};
use dumbmonit::kube::ConnectOptions;

const SA: &str = "system:serviceaccount:kube-system:dumbmonit";

const WEB: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: registry.k8s.io/pause:3.10}]
"#;

const CRASHING: &str = r#"
apiVersion: v1
kind: Pod
metadata:
  name: crashing
  namespace: shop
  annotations: {testenv.dumbmonit.io/behaviour: crashloop, testenv.dumbmonit.io/exit-code: "137"}
spec:
  containers: [{name: app, image: registry.k8s.io/pause:3.10}]
"#;

/// The service account with get, list and watch on what DumbMonit reads.
fn watching_account(p: &Plane) -> common::plane::Credentials {
    let creds = p.guide_service_account();
    p.kubectl(&[
        "create",
        "clusterrole",
        "dumbmonit-watch",
        "--verb=watch",
        "--resource=nodes,pods,persistentvolumeclaims,events,deployments.apps,statefulsets.apps,daemonsets.apps",
    ]);
    p.kubectl(&[
        "create",
        "clusterrolebinding",
        "dumbmonit-watch",
        "--clusterrole=dumbmonit-watch",
        "--serviceaccount=kube-system:dumbmonit",
    ]);
    creds
}

/// What must agree: the snapshot but for its time-bound parts.
fn comparable(mut s: Snapshot) -> Snapshot {
    s.certificates = Default::default();
    s
}

/// Reads the cluster both ways at the same rule time until they agree (the watch may be a
/// moment behind a write), then says the sentence; fails if they never agree.
async fn agreed(step: &str, connected: &Connected, follower: &Follower, options: &CycleOptions) -> String {
    let started = Instant::now();
    let now = jiff::Timestamp::now();
    loop {
        let listed = connected.read(options, now).await.result.expect("the list cycle reads");
        let watched = follower.cycle(options, now).await.result.expect("the watch cycle reads");
        let (listed, watched) = (comparable(listed), comparable(watched));
        if listed == watched {
            let health = dumbmonit::health::assess(listed.clone());
            let watched_health = dumbmonit::health::assess(watched);
            assert_eq!(health.summary(), watched_health.summary(), "{step}");
            let a = dumbmonit::metrics::cycle_series("real", Some(&health), Duration::ZERO, &[]);
            let b = dumbmonit::metrics::cycle_series("real", Some(&watched_health), Duration::ZERO, &[]);
            assert_eq!(format!("{:?}", a.objects), format!("{:?}", b.objects), "{step}: the metrics");
            return health.summary();
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{step}: watch mode never caught up with the list:\nlisted {listed:#?}\nwatched {watched:#?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_and_watch_agree_after_every_change_and_a_restart() {
    let p = Plane::up(&["--nodes", "3"]);
    let creds = watching_account(&p);
    let options = ConnectOptions {
        address: Some(p.address.clone()),
        token_file: Some(creds.token_file.clone()),
        ca_file: Some(creds.ca_file.clone()),
        ..ConnectOptions::default()
    };
    let connected = connect(&options).await.expect("the cluster is reachable");
    let cycle = CycleOptions { ignored_namespaces: vec!["ci".into()], record: false };
    let follower =
        Follower::start(connected.fetcher.clone(), &cycle, Duration::from_secs(60), Arc::new(Default::default()));

    let mut said = vec![agreed("at start", &connected, &follower, &cycle).await];
    p.apply(WEB);
    p.wait_for("two web pods running", &["-n", "shop", "pods", "-l", "app=web"], |l| {
        l["items"].as_array().unwrap().iter().filter(|p| p["status"]["phase"] == "Running").count() == 2
    });
    said.push(agreed("a Deployment's pods", &connected, &follower, &cycle).await);
    p.kubectl(&["-n", "shop", "scale", "deployment", "web", "--replicas=3"]);
    p.apply(CRASHING);
    p.wait_for("the crash loop", &["-n", "shop", "pod", "crashing"], |p| {
        p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    });
    said.push(agreed("scaled, and a crash loop", &connected, &follower, &cycle).await);
    p.kubectl(&["annotate", "node", "node-2", "testenv.dumbmonit.io/ready=false"]);
    p.wait_for("node-2 not ready", &["node", "node-2"], |n| {
        n["status"]["conditions"].as_array().unwrap().iter().any(|c| c["type"] == "Ready" && c["status"] == "False")
    });
    said.push(agreed("a node not ready", &connected, &follower, &cycle).await);
    p.kubectl(&["annotate", "node", "node-2", "testenv.dumbmonit.io/ready-"]);
    p.kubectl(&["-n", "shop", "delete", "pod", "crashing", "--wait=true"]);
    p.wait_for("node-2 ready", &["node", "node-2"], |n| {
        n["status"]["conditions"].as_array().unwrap().iter().any(|c| c["type"] == "Ready" && c["status"] == "True")
    });
    said.push(agreed("the node back, the pod deleted", &connected, &follower, &cycle).await);

    // The API server restarted: every watch drops, and is resumed or listed afresh.
    p.apiserver("stop");
    p.apiserver("start");
    p.kubectl(&["-n", "shop", "scale", "deployment", "web", "--replicas=1"]);
    p.wait_for("one web pod", &["-n", "shop", "pods", "-l", "app=web"], |l| l["items"].as_array().unwrap().len() == 1);
    said.push(agreed("after the API server's restart", &connected, &follower, &cycle).await);

    // The test saw the changes it made (it is not comparing two empty clusters).
    assert!(said[1].contains("pods") && !said[1].contains("crash"), "{said:?}");
    assert!(said[2].contains("crash-looping"), "{said:?}");
    assert!(said[3].contains("1 node not ready"), "{said:?}");
    assert!(!said[4].contains("not ready") && !said[4].contains("crash"), "{said:?}");

    // Watch mode sent watches (streaming lists among them) and nothing but reads.
    let seen = p.requests_of(SA);
    let watches: Vec<&(String, String)> = seen.iter().filter(|(verb, _)| verb == "watch").collect();
    assert!(
        watches.iter().any(|(_, uri)| uri.starts_with("/api/v1/pods?") && uri.contains("sendInitialEvents=true")),
        "{watches:?}"
    );
    assert!(watches.iter().any(|(_, uri)| uri.contains("resourceVersion=")), "a watch resumed: {watches:?}");
    let pod_lists =
        watches.iter().filter(|(_, uri)| uri.starts_with("/api/v1/pods?") && uri.contains("sendInitialEvents")).count();
    eprintln!(
        "pods: {pod_lists} streaming lists, {} watches",
        watches.iter().filter(|(_, u)| u.starts_with("/api/v1/pods?")).count()
    );
    assert!(pod_lists >= 2, "the restart made the pods listed afresh: {watches:?}");
    assert_only_reads(&p, SA);
}
