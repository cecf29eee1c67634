//! Reading at size from a real API server: 2,000 pods over 20 nodes in pages of 500 with the
//! real continue tokens, the field selectors honoured by the real server, and a continue token
//! expired by an etcd compaction between two pages (410: the list restarts from the beginning).

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::dumbmonit;
use common::plane::{Interposer, Plane, assert_only_reads};
use dumbmonit_sim::fixtures::{Container, Event, Node, Pod};
use serde_json::{Value, json};

const USER: &str = "system:serviceaccount:kube-system:dumbmonit";

/// 20 nodes; 2,000 pods in ten namespaces and 100 more in `ci`; Warning and Normal events.
fn cluster(now: jiff::Timestamp) -> Value {
    let mut items = Vec::new();
    let mut push = |kind: &str, api: &str, mut v: Value| {
        v["kind"] = json!(kind);
        v["apiVersion"] = json!(api);
        items.push(v);
    };
    for n in 0..20 {
        push("Node", "v1", Node::new(&format!("node-{n:02}")).build(now));
    }
    for i in 0..2100 {
        let ns = if i < 100 { "ci".to_string() } else { format!("team-{}", i % 10) };
        let mut pod = Pod::of_deployment(&ns, &format!("app-{}", i % 40), "7c9696d669", &format!("{i:05}"))
            .on_node(&format!("node-{:02}", i % 20));
        if i % 250 == 7 {
            pod = pod.container(Container::crashlooping("app", "Error", 1, 12));
        }
        push("Pod", "v1", pod.build(now));
    }
    for i in 0..30 {
        let ns = if i < 10 { "ci" } else { "team-1" };
        let mut e = Event::warning(
            "Pod",
            ns,
            &format!("app-1-7c9696d669-{i:05}"),
            "BackOff",
            "Back-off restarting failed container app",
        );
        if i % 2 == 0 {
            e = e.normal();
        }
        push("Event", "v1", e.seq(i).build(now));
    }
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}

async fn setup() -> (Plane, common::plane::Credentials) {
    let p = Plane::up(&["--no-kubelets", "--controllers", "serviceaccount-token"]);
    let dir = tempfile::tempdir().unwrap();
    p.apply(&dumbmonit(&["rbac".into()], &[], dir.path()).await.stdout);
    let creds = p.read_credentials("kube-system", "dumbmonit-token");
    p.load(&cluster(jiff::Timestamp::now()));
    (p, creds)
}

/// The pods' list requests of one cycle, as the server saw them: (continue token given, code).
fn pod_pages(p: &Plane, since: usize) -> Vec<(bool, i64)> {
    p.answers_to(USER)[since..]
        .iter()
        .filter(|(_, uri, _)| uri.starts_with("/api/v1/pods?"))
        .map(|(_, uri, code)| (uri.contains("continue="), *code))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_thousand_pods_in_pages_with_the_servers_selectors_and_a_compaction_between_pages() {
    let (p, creds) = setup().await;

    let run = p.check(&p.address, &creds, &["--ignore-namespace", "ci", "--output", "json"]).await;
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["counts"]["nodes"], 20, "{}", run.stdout);
    assert_eq!(doc["counts"]["pods"], 2000, "the ignored namespace left out by the server");
    assert_eq!(doc["counts"]["pods_crashlooping"], 8);
    // Warning events of team-1 only: the type and namespace selectors are the server's.
    assert_eq!(doc["counts"]["warning_events"], 10, "{:#}", doc["warning_events_by_reason"]);

    let seen = p.requests_of(USER);
    let pods: Vec<&String> = seen.iter().map(|(_, uri)| uri).filter(|u| u.starts_with("/api/v1/pods?")).collect();
    assert_eq!(pods.len(), 4, "2,000 pods in pages of 500: {pods:#?}");
    assert!(!pods[0].contains("continue="));
    for page in &pods {
        assert!(page.contains("limit=500"), "{page}");
        assert!(
            page.contains("fieldSelector=metadata.namespace%21%3Dci"),
            "the ignored namespace by the server: {page}"
        );
    }
    assert!(pods[1..].iter().all(|p| p.contains("continue=")), "the real continue tokens followed: {pods:#?}");
    let events: Vec<&String> = seen.iter().map(|(_, uri)| uri).filter(|u| u.starts_with("/api/v1/events?")).collect();
    assert!(events.iter().all(|e| e.contains("fieldSelector=") && e.contains("type%3DWarning")), "{events:#?}");

    // Between the first and the second page, etcd is compacted: the continue token is too old.
    let dir = p.dir.path().to_path_buf();
    let admin = std::fs::read_to_string(p.file("admin.token")).unwrap();
    let ca = std::fs::read_to_string(&p.ca_file).unwrap();
    let upstream: std::net::SocketAddr = format!("127.0.0.1:{}", p.port).parse().unwrap();
    let compacted = Arc::new(AtomicBool::new(false));
    let once = compacted.clone();
    let proxy = Interposer::start(
        &p,
        Arc::new(move |target: &str| {
            if !target.starts_with("/api/v1/pods?")
                || !target.contains("continue=")
                || once.swap(true, Ordering::SeqCst)
            {
                return;
            }
            common::plane::compact(&dir);
            // Until the watch cache has seen the compaction (it looks every 15 s), it may still
            // serve the page from its snapshot.
            let auth = format!("Bearer {}", admin.trim());
            for _ in 0..120 {
                let r = common::web::request_tls(upstream, "GET", target, &[("Authorization", &auth)], b"", &ca);
                if r.status == 410 {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(500));
            }
            panic!("the continue token never expired");
        }),
    )
    .await;
    let before = p.answers_to(USER).len();
    let through = format!("https://localhost:{}", proxy.port);
    let run = p.check(&through, &creds, &["--ignore-namespace", "ci", "--output", "json", "--timeout", "90"]).await;
    assert!(compacted.load(Ordering::SeqCst));
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["error"], Value::Null, "{}", run.stdout);
    assert_eq!(doc["counts"]["pods"], 2000, "every pod once, after the restart");
    let pages = pod_pages(&p, before);
    assert_eq!(
        pages,
        [(false, 200), (true, 410), (false, 200), (true, 200), (true, 200), (true, 200)],
        "the list restarted from the beginning after the 410"
    );
    assert_only_reads(&p, USER);
}
