//! Watch mode against the real API server: the same cluster read by LIST every cycle and
//! followed by list-then-watch (streaming list, watches with bookmarks, resumed, relisted) gives
//! the same snapshot, sentence and metrics after every change; the API server restarted is
//! followed through; only get, list and watch reach it.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::plane::{Plane, assert_only_reads};
use common::watch::agreed;
use dumbmonit::collect::CycleOptions;
use dumbmonit::collect::follow::Follower;
use dumbmonit::collect::reader::connect;
use dumbmonit::collection::Collection;
use dumbmonit::error::ReadErrorKind;
use dumbmonit::kube::ConnectOptions;
use dumbmonit::kube::request::{WatchFrom, watch_uri};

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
async fn watching_account(p: &Plane) -> common::plane::Credentials {
    p.guide_service_account();
    watching_account_on(p).await
}

/// The watch verb added to the guide's service account: `dumbmonit rbac --watch | kubectl apply`.
async fn watching_account_on(p: &Plane) -> common::plane::Credentials {
    let rbac = common::dumbmonit(&["rbac".into(), "--watch".into()], &[], p.dir.path()).await;
    assert!(rbac.stdout.contains("verbs: [\"get\", \"list\", \"watch\"]"), "{}", rbac.stdout);
    p.apply(&rbac.stdout);
    p.read_credentials("kube-system", "dumbmonit-token")
}

/// A connection to the plane with the account's token.
async fn connect_as(p: &Plane, creds: &common::plane::Credentials) -> dumbmonit::collect::reader::Connected {
    let options = ConnectOptions {
        address: Some(p.address.clone()),
        token_file: Some(creds.token_file.clone()),
        ca_file: Some(creds.ca_file.clone()),
        ..ConnectOptions::default()
    };
    connect(&options).await.expect("the cluster is reachable")
}

/// Every request of DumbMonit's account the audit log saw begin, watches still open included
/// (those only complete when they end): (verb, requestURI).
fn requests_started(p: &Plane) -> Vec<(String, String)> {
    let mut seen = std::collections::HashSet::new();
    p.audit()
        .iter()
        .filter(|e| e["user"]["username"] == SA && seen.insert(e["auditID"].as_str().unwrap_or("").to_string()))
        .map(|e| (e["verb"].as_str().unwrap_or("").into(), e["requestURI"].as_str().unwrap_or("").into()))
        .collect()
}

/// The TCP connections this process holds to `port` (from /proc: the sockets among its file
/// descriptors, looked up in the kernel's tables).
fn connections_to(port: u16) -> usize {
    let inodes: std::collections::HashSet<String> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|l| l.to_str()?.strip_prefix("socket:[")?.strip_suffix(']').map(String::from))
        .collect();
    let mut n = 0;
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        for line in std::fs::read_to_string(table).unwrap_or_default().lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let remote_port = f[2].rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok());
            // 01: ESTABLISHED
            if remote_port == Some(port) && f[3] == "01" && inodes.contains(f[9]) {
                n += 1;
            }
        }
    }
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_and_watch_agree_after_every_change_and_a_restart() {
    let p = Plane::up(&["--nodes", "3"]);
    let creds = watching_account(&p).await;
    let connected = connect_as(&p, &creds).await;
    let cycle = CycleOptions { ignored_namespaces: vec!["ci".into()], ..CycleOptions::default() };
    let follower =
        Follower::start(connected.fetcher.clone(), &cycle, Duration::from_secs(60), Arc::new(Default::default()));

    let mut rules = common::watch::Rules::default();
    let mut said = vec![agreed("at start", &connected, &follower, &cycle, &mut rules).await];
    p.apply(WEB);
    p.wait_for("two web pods running", &["-n", "shop", "pods", "-l", "app=web"], |l| {
        l["items"].as_array().unwrap().iter().filter(|p| p["status"]["phase"] == "Running").count() == 2
    });
    said.push(agreed("a Deployment's pods", &connected, &follower, &cycle, &mut rules).await);
    p.kubectl(&["-n", "shop", "scale", "deployment", "web", "--replicas=3"]);
    p.apply(CRASHING);
    p.wait_for("the crash loop", &["-n", "shop", "pod", "crashing"], |p| {
        p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    });
    said.push(agreed("scaled, and a crash loop", &connected, &follower, &cycle, &mut rules).await);
    p.kubectl(&["annotate", "node", "node-2", "testenv.dumbmonit.io/ready=false"]);
    p.wait_for("node-2 not ready", &["node", "node-2"], |n| {
        n["status"]["conditions"].as_array().unwrap().iter().any(|c| c["type"] == "Ready" && c["status"] == "False")
    });
    said.push(agreed("a node not ready", &connected, &follower, &cycle, &mut rules).await);
    p.kubectl(&["annotate", "node", "node-2", "testenv.dumbmonit.io/ready-"]);
    p.kubectl(&["-n", "shop", "delete", "pod", "crashing", "--wait=true"]);
    p.wait_for("node-2 ready", &["node", "node-2"], |n| {
        n["status"]["conditions"].as_array().unwrap().iter().any(|c| c["type"] == "Ready" && c["status"] == "True")
    });
    said.push(agreed("the node back, the pod deleted", &connected, &follower, &cycle, &mut rules).await);

    // Every watch, and the list cycles, on one HTTP/2 connection (kube-apiserver offers it).
    assert_eq!(connections_to(p.port), 1, "connections of this process to the API server");

    // The API server restarted: every watch drops, and is resumed or listed afresh.
    p.apiserver("stop");
    p.apiserver("start");
    p.kubectl(&["-n", "shop", "scale", "deployment", "web", "--replicas=1"]);
    p.wait_for("one web pod", &["-n", "shop", "pods", "-l", "app=web"], |l| l["items"].as_array().unwrap().len() == 1);
    said.push(agreed("after the API server's restart", &connected, &follower, &cycle, &mut rules).await);

    // The nodes' and pods' watches came in protobuf (kube-apiserver sends it when asked; the
    // other kinds stay JSON): the agreement above is the protobuf decoding's against the JSON
    // list's.
    assert_eq!(follower.in_protobuf(), [Collection::NODES, Collection::PODS], "collections watched in protobuf");

    // After the restart, the watches come back on one connection too, or two: when they all
    // reconnect at once, the client's pool may open a second connection before the first has
    // said it speaks HTTP/2 (seen once in a full run on a loaded machine); never one a watch.
    let after = connections_to(p.port);
    assert!((1..=2).contains(&after), "connections of this process to the API server after its restart: {after}");

    // The test saw the changes it made (it is not comparing two empty clusters).
    assert!(said[1].contains("pods") && !said[1].contains("crash"), "{said:?}");
    assert!(said[2].contains("crash-looping"), "{said:?}");
    assert!(said[3].contains("1 node not ready"), "{said:?}");
    assert!(!said[4].contains("not ready") && !said[4].contains("crash"), "{said:?}");

    // Watch mode sent watches (streaming lists among them) and nothing but reads.
    let seen = requests_started(&p);
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

/// `serve` following the real cluster as `real`, a cycle every `interval`, a minute of rule time
/// per interval cycle (the stepped clock: cycles taken on a change do not move it).
fn serve(p: &Plane, dir: &std::path::Path, creds: &common::plane::Credentials, interval: &str) -> common::web::Served {
    let cfg = dir.join("dumbmonit.toml");
    let text = format!(
        "listen = \"127.0.0.1:0\"\nstate_dir = {:?}\n\n[[cluster]]\nname = \"real\"\naddress = {:?}\n\
         token_file = {:?}\nca_file = {:?}\ninterval = {interval:?}\nwatch = true\n",
        dir.join("state"),
        p.address,
        creds.token_file,
        creds.ca_file,
    );
    std::fs::write(&cfg, text).unwrap();
    let clock = format!("{}/60", jiff::Timestamp::now());
    // The stores' events and the cycles, at debug level: the log says which take a cycle, and
    // each cycle on a change is compared with the full derivation (the cluster keeps its
    // judgements though it is far under the 1,000 pods that do).
    let log = "dumbmonit=info,dumbmonit::collect=debug,dumbmonit::serve=debug";
    common::web::Served::start(
        &cfg,
        &[("DUMBMONIT_TEST_CLOCK", &clock), ("DUMBMONIT_TEST_KEEPS_JUDGEMENTS_FROM", "0"), ("RUST_LOG", log)],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_shows_a_change_before_the_next_interval_and_falls_back_when_watch_is_refused() {
    let p = Plane::up(&["--nodes", "3"]);
    let dir = tempfile::tempdir().unwrap();

    // The guide's role: get and list only. Every watch is refused: each collection is read every
    // interval, the cycle is whole, and the page says so once.
    let creds = p.guide_service_account();
    // A watch asked in protobuf is refused in protobuf: read as the very words of JSON's.
    let connected = connect_as(&p, &creds).await;
    let uri = watch_uri("/api/v1/pods", None, WatchFrom::InitialEvents, 30);
    let mut refusals = Vec::new();
    for protobuf in [false, true] {
        let refused = connected.fetcher.watch(Collection::PODS, &uri, protobuf).await.err().expect("watch refused");
        refusals.push(refused.kind);
    }
    assert!(
        matches!(&refusals[0], ReadErrorKind::Forbidden { message } if message.contains("cannot watch resource \"pods\"")),
        "{refusals:?}"
    );
    assert_eq!(refusals[0], refusals[1], "JSON's refusal, then protobuf's");
    let s = serve(&p, dir.path(), &creds, "300ms");
    let page = s.wait_for("/clusters/real", "the fallback said", |r| r.body.contains("watch is not granted"));
    assert_eq!(page.body.matches("watch is not granted: read every interval").count(), 1, "{}", page.body);
    for resource in ["nodes", "pods", "events", "deployments.apps"] {
        assert!(page.body.contains(resource), "{resource} named in the fallback line");
    }
    let detail = s.get("/api/v1/clusters/real").json();
    assert_eq!(detail["nodes_ready"], 3, "{detail}");
    let metrics = s.get("/metrics").body;
    assert!(metrics.contains("dumbmonit_k8s_collection_success{cluster=\"real\",collection=\"pods\"} 1"), "{metrics}");
    drop(s);
    let refused = p.answers_to(SA).into_iter().filter(|(verb, _, code)| verb == "watch" && *code == 403).count();
    assert!(refused >= 7, "each core collection tried its watch once: {refused} refusals");

    // With the watch verb, the interval is a minute and a node that stops being ready is on the
    // page long before: a cycle is taken on the change.
    let dir = tempfile::tempdir().unwrap();
    let creds = watching_account_on(&p).await;
    let s = serve(&p, dir.path(), &creds, "60s");
    s.wait_for("/api/v1/clusters/real", "the first cycle", |r| r.status == 200 && r.json()["nodes_ready"] == 3);
    let page = s.get("/clusters/real").body;
    assert!(!page.contains("watch is not granted"), "{page}");
    // An annotation is a MODIFIED event (in protobuf, as nodes are watched) that leaves the
    // node's record as it was: applied, and no cycle for it.
    p.kubectl(&["annotate", "node", "node-2", "example.com/touched=yes"]);
    let version = p.get(&["node", "node-2"])["metadata"]["resourceVersion"].as_str().unwrap().to_string();
    let event = format!("nodes node-2 MODIFIED at resourceVersion {version} from ");
    let log = s.wait_for_log("the annotation's event", |log| log.contains(&event));
    let line = log.lines().find(|l| l.contains(&event)).unwrap();
    assert!(line.ends_with(": its record is as it was, no cycle"), "{line}");
    p.kubectl(&["annotate", "node", "node-1", "testenv.dumbmonit.io/ready=false"]);
    p.wait_for("node-1 not ready", &["node", "node-1"], |n| {
        n["status"]["conditions"].as_array().unwrap().iter().any(|c| c["type"] == "Ready" && c["status"] == "False")
    });
    let written = Instant::now();
    s.wait_for("/api/v1/clusters/real", "the node not ready", |r| r.json()["nodes_ready"] == 2);
    let shown = written.elapsed();
    eprintln!("node not ready on the page {} ms after the API server had it", shown.as_millis());
    // Within a second of the test seeing it on the API server (the interval is a minute).
    assert!(shown < Duration::from_secs(1), "shown {shown:?} after the API server had it, not within a second");
    // The log has the event that changed the record, and a cycle on a change after it.
    let log = s.log();
    let lines: Vec<&str> = log.lines().collect();
    let changed = lines
        .iter()
        .position(|l| l.contains("nodes node-1 MODIFIED at") && l.ends_with(": its record changed, a cycle follows"))
        .unwrap_or_else(|| panic!("node-1's change applied:\n{log}"));
    assert!(lines[changed..].iter().any(|l| l.contains("cluster real: a cycle on a change (watch mode)")), "{log}");
    // At serve's debug level each cycle on a change is also derived in full: the same.
    assert!(!log.contains("differs from its full derivation"), "{log}");
    // A cycle on a change does not move rule time: the node alert waits for its duration.
    let alerts = s.get("/api/v1/alerts").body;
    assert!(!alerts.contains("\"firing\""), "{alerts}");
    drop(s);
    assert_only_reads(&p, SA);
}
