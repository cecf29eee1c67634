//! Watch mode against the simulated API server, where faults can be injected: list mode and
//! watch mode agree through a scripted sequence (a 410 forcing a relist, an ERROR event, a
//! broken stream among the changes), and `serve` in watch mode gets through each failure: a
//! watch answered 410, an ERROR event, streams gone silent, streams cut, a server without
//! streaming lists, a store out of sync (the cycle fails with the list's own words), and the
//! agent follows by watch too.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::Harness;
use common::watch::agreed;
use common::web::{Served, write_config};
use dumbmonit::collect::follow::Follower;
use dumbmonit::collect::reader::connect;
use dumbmonit::collect::{Collection, CycleOptions};
use dumbmonit::kube::ConnectOptions;
use dumbmonit_sim::api::Resource;
use dumbmonit_sim::{Faults, SimOptions, scenario};

fn options(h: &Harness) -> ConnectOptions {
    ConnectOptions {
        address: Some(h.sim.url()),
        token_file: Some(h.token_file.clone()),
        ca_file: Some(h.ca_file.clone()),
        ..ConnectOptions::default()
    }
}

/// How many streaming lists of `path` the simulator was sent.
fn streaming_lists(h: &Harness, path: &str) -> usize {
    h.sim.requests().iter().filter(|r| r.path == path && r.query.contains("sendInitialEvents=true")).count()
}

fn wait_until(what: &str, ok: impl Fn() -> bool) {
    eprintln!("waiting for {what}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ok() {
        assert!(Instant::now() < deadline, "waited in vain for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_and_watch_agree_through_changes_relists_and_broken_streams() {
    let now = jiff::Timestamp::now();
    let h = Harness::start(scenario::healthy(now)).await;
    let connected = connect(&options(&h)).await.unwrap();
    let cycle = CycleOptions { ignored_namespaces: vec!["kube-system".into()], ..CycleOptions::default() };
    let follower = Follower::start(connected.fetcher.clone(), &cycle, Duration::from_secs(60), Arc::default());

    let mut rules = common::watch::Rules::default();
    let mut said = vec![agreed("healthy", &connected, &follower, &cycle, &mut rules).await];
    // The pods' watches ask for protobuf first; the simulator, like a server without it for a
    // kind, answers JSON, and the watches read that.
    assert!(follower.in_protobuf().is_empty(), "{:?}", follower.in_protobuf());
    for step in 1..=4 {
        h.sim.set_cluster(scenario::tour(step, now));
        said.push(agreed(&format!("tour step {step}"), &connected, &follower, &cycle, &mut rules).await);
    }
    // A 410: every stream cut, changes made, and the history forgotten before the watches are
    // opened again (they wait half a second after a cut), so that each resumes from a
    // resourceVersion the server no longer has.
    let before = streaming_lists(&h, "/api/v1/pods");
    h.sim.break_watches();
    h.sim.set_cluster(scenario::tour(5, now));
    h.sim.compact();
    said.push(agreed("after a 410", &connected, &follower, &cycle, &mut rules).await);
    assert!(streaming_lists(&h, "/api/v1/pods") > before, "the pods were listed afresh");
    // An ERROR event with a 410 on every open stream.
    let before = streaming_lists(&h, "/api/v1/nodes");
    h.sim.send_watch_error_410();
    h.sim.set_cluster(scenario::tour(6, now));
    said.push(agreed("after an ERROR event", &connected, &follower, &cycle, &mut rules).await);
    assert!(streaming_lists(&h, "/api/v1/nodes") > before, "the nodes were listed afresh");
    // Streams cut: resumed from the last resourceVersion, nothing listed again.
    let before = streaming_lists(&h, "/api/v1/pods");
    h.sim.break_watches();
    h.sim.set_cluster(scenario::healthy(now));
    said.push(agreed("after broken streams", &connected, &follower, &cycle, &mut rules).await);
    assert_eq!(streaming_lists(&h, "/api/v1/pods"), before, "a cut stream resumes, without a new list");

    assert!(said[0].starts_with("Healthy"), "{said:?}");
    assert!(said[2].contains("crash-looping"), "{said:?}");
    assert!(said[3].contains("node not ready"), "{said:?}");
    assert!(said.last().unwrap().starts_with("Healthy"), "{said:?}");
    assert!(h.sim.requests().iter().all(|r| r.method == "GET"));

    // A cycle between intervals takes `/version` (and the Metrics API) as the last interval
    // cycle read it; the next interval cycle reads it again.
    let versions = || h.sim.requests().iter().filter(|r| r.path == "/version").count();
    let usage = || h.sim.requests().iter().filter(|r| r.path.starts_with("/apis/metrics.k8s.io/")).count();
    follower.cycle(&cycle, now).await.result.unwrap();
    let (before, usage_before) = (versions(), usage());
    let between = CycleOptions { between: true, ..cycle.clone() };
    assert!(follower.cycle(&between, now).await.result.unwrap().version.starts_with('v'));
    assert_eq!(versions(), before, "no /version read between intervals");
    assert_eq!(usage(), usage_before, "no Metrics API read between intervals");
    follower.cycle(&cycle, now).await.result.unwrap();
    assert_eq!(versions(), before + 1, "read at the interval");
    assert_eq!(usage(), usage_before + 2, "nodes' and pods' usage read at the interval");

    // Nor what the Pending claims wait for, nor the Services and EndpointSlices behind the
    // webhooks: read at each interval, taken again between.
    let mut c = scenario::coverage(now);
    scenario::claim_waits(&mut c, now);
    h.sim.set_cluster(c);
    agreed("claims and webhooks", &connected, &follower, &cycle, &mut rules).await;
    let claim_events = || {
        let events = h.sim.requests().into_iter().filter(|r| r.path == "/api/v1/events");
        events.filter(|r| r.query.contains("PersistentVolumeClaim")).count()
    };
    let backends = || {
        let paths = h.sim.requests().into_iter().map(|r| r.path);
        paths.filter(|p| p.ends_with("/services") || p.ends_with("/endpointslices")).count()
    };
    let interval = follower.cycle(&cycle, now).await.result.unwrap();
    let (claims_before, backends_before) = (claim_events(), backends());
    assert!(!interval.extras.claim_events.is_empty(), "what the claims wait for, read");
    assert!(interval.extras.services.read().is_some_and(|s| !s.is_empty()), "{:?}", interval.extras.services);
    let between = follower.cycle(&CycleOptions { between: true, ..cycle.clone() }, now).await.result.unwrap();
    assert_eq!((claim_events(), backends()), (claims_before, backends_before), "nothing read between intervals");
    assert_eq!(between.extras.claim_events, interval.extras.claim_events, "taken as the interval read them");
    assert_eq!(between.extras.services, interval.extras.services);
    assert_eq!(between.extras.endpointslices, interval.extras.endpointslices);
    follower.cycle(&cycle, now).await.result.unwrap();
    assert_eq!(claim_events(), claims_before + 1, "read again at the interval");
    assert!(backends() > backends_before, "read again at the interval");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_streaming_lists_is_listed_by_pages_then_watched() {
    let now = jiff::Timestamp::now();
    let h = Harness::start(scenario::healthy(now)).await;
    h.sim.set_faults(Faults { no_watch_list: true, ..Faults::default() });
    let connected = connect(&options(&h)).await.unwrap();
    let cycle = CycleOptions::default();
    let follower = Follower::start(connected.fetcher.clone(), &cycle, Duration::from_secs(60), Arc::default());
    let mut rules = common::watch::Rules::default();
    agreed("healthy", &connected, &follower, &cycle, &mut rules).await;
    h.sim.set_cluster(scenario::trouble(now));
    let said = agreed("trouble", &connected, &follower, &cycle, &mut rules).await;
    assert!(said.contains("node not ready"), "{said}");
    let pods: Vec<String> =
        h.sim.requests().into_iter().filter(|r| r.path == "/api/v1/pods").map(|r| r.query).collect();
    assert!(pods.iter().any(|q| q.starts_with("limit=500")), "listed by pages: {pods:?}");
    assert!(pods.iter().any(|q| q.contains("watch=1") && q.contains("resourceVersion=")), "then watched: {pods:?}");
    // Found out by the first collection to ask; the others listed by pages at once.
    let streaming = h.sim.requests().iter().filter(|r| r.query.contains("sendInitialEvents")).count();
    assert_eq!(streaming, 1, "one streaming list tried for 11 collections");
}

/// serve in watch mode over one simulated cluster, a cycle every `interval`, the simulator's
/// bookmarks every 0.2 s (and serve told so).
fn serve(h: &Harness, dir: &std::path::Path, interval: &str) -> Served {
    let cfg = write_config(dir, "", &[("sim", h, interval)]);
    let text = std::fs::read_to_string(&cfg).unwrap() + "watch = true\n";
    std::fs::write(&cfg, text).unwrap();
    let clock = format!("{}/60", jiff::Timestamp::now() - jiff::SignedDuration::from_hours(1));
    // At serve's debug level each cycle on a change is also derived in full and compared; the
    // simulated cluster keeps its judgements though it is far under the 1,000 pods that do.
    let log = "dumbmonit=info,dumbmonit::serve=debug";
    Served::start(
        &cfg,
        &[
            ("DUMBMONIT_TEST_CLOCK", &clock),
            ("DUMBMONIT_TEST_BOOKMARK_INTERVAL", "0.2"),
            ("DUMBMONIT_TEST_KEEPS_JUDGEMENTS_FROM", "0"),
            ("RUST_LOG", log),
        ],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_in_watch_mode_gets_through_each_failure_of_a_watch() {
    let now = jiff::Timestamp::now();
    let options = SimOptions { bookmark_interval: Duration::from_millis(200), ..SimOptions::default() };
    let h = Harness::start_with(options, scenario::healthy(now)).await;
    let dir = tempfile::tempdir().unwrap();
    let s = serve(&h, dir.path(), "1s");
    let ready = |n: i64| move |r: &common::web::Response| r.status == 200 && r.json()["nodes_ready"] == n;
    s.wait_for("/api/v1/clusters/sim", "the first cycle", ready(3));
    // Every followed collection: the core seven, APIServices and the ten kinds of the registry.
    wait_until("every watch open", || h.sim.open_watches() == 18);

    // Streams cut: opened again, and the next change is seen.
    h.sim.break_watches();
    h.sim.set_cluster(scenario::trouble(now));
    s.wait_for("/api/v1/clusters/sim", "the node lost, seen after the cut", ready(2));

    // 410 as an ERROR event: listed afresh.
    let before = streaming_lists(&h, "/api/v1/nodes");
    h.sim.send_watch_error_410();
    h.sim.set_cluster(scenario::healthy(now));
    s.wait_for("/api/v1/clusters/sim", "the node back, after the ERROR event", ready(3));
    wait_until("the nodes listed afresh", || streaming_lists(&h, "/api/v1/nodes") > before);

    // 410 on opening: streams cut, changes made, the history compacted away before the
    // watches are opened again (half a second after a cut).
    let before = streaming_lists(&h, "/api/v1/nodes");
    h.sim.break_watches();
    h.sim.set_cluster(scenario::trouble(now));
    h.sim.compact();
    s.wait_for("/api/v1/clusters/sim", "the node lost, after the 410", ready(2));
    wait_until("the nodes listed afresh", || streaming_lists(&h, "/api/v1/nodes") > before);

    // Silent streams (not even bookmarks): opened again after twice the bookmark interval,
    // from the last resourceVersion; the cycle stays whole (an idle collection gets no bookmark
    // from kube-apiserver either).
    let watches = |h: &Harness| h.sim.requests().iter().filter(|r| r.query.contains("watch=1")).count();
    let before = watches(&h);
    h.sim.set_faults(Faults { silent_watches: true, ..Faults::default() });
    wait_until("silent watches opened again", || watches(&h) >= before + 2 * 11);
    assert!(s.get("/api/v1/clusters/sim").json()["error"].is_null(), "silence alone fails nothing");
    h.sim.set_faults(Faults::default());
    h.sim.set_cluster(scenario::healthy(now));
    s.wait_for("/api/v1/clusters/sim", "the node back, after the silence", ready(3));

    // A list refused after a 410 (the role lost pods): the store is out of sync, and the cycle
    // fails with the words a List cycle fails with.
    h.sim.set_faults(Faults { forbidden: vec![Resource::Pods], ..Faults::default() });
    h.sim.send_watch_error_410();
    let failed = s.wait_for("/api/v1/clusters/sim", "the cycle failed on the refused list", |r| {
        r.json()["error"].as_str().is_some_and(|e| e.contains("forbidden"))
    });
    let error = failed.json()["error"].as_str().unwrap().to_string();
    let listed = h.check(&[]).await;
    assert!(listed.stdout.contains(&error) || listed.stderr.contains(&error), "{error}\n{listed:?}");
    h.sim.set_faults(Faults::default());
    s.wait_for("/api/v1/clusters/sim", "recovered", |r| r.json()["error"].is_null());
    let log = s.log();
    assert!(log.contains("a cycle on a change (watch mode)"), "{log}");
    assert!(!log.contains("differs from its full derivation"), "{log}");
    drop(s);
    h.assert_only_reads();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_follows_by_watch_and_reports_a_change_within_the_interval() {
    let now = jiff::Timestamp::now();
    let h = Harness::start(scenario::healthy(now)).await;
    let site = common::agent::Site::new("interval = \"60s\"", "");
    let s = site.serve(&[]);
    let url = format!("https://localhost:{}", s.addr.port());
    let _agent = common::agent::Agent::start(&site, &h, &url, &["--watch"], &[]);
    let ready = |n: i64| move |r: &common::web::Response| r.status == 200 && r.json()["nodes_ready"] == n;
    s.wait_for("/api/v1/clusters/edge", "the agent's first cycle", ready(3));
    // Every followed collection: the core seven, APIServices and the ten kinds of the registry.
    wait_until("every watch open", || h.sim.open_watches() == 18);
    h.sim.set_cluster(scenario::trouble(now));
    let shown = Instant::now();
    s.wait_for("/api/v1/clusters/edge", "the node lost, reported on the change", ready(2));
    assert!(shown.elapsed() < Duration::from_secs(30), "before the next interval (60 s)");
}

/// Watch mode's first lists and a list cycle sent at once on a fresh connection to a server
/// that speaks HTTP/2 share one connection: the first request opens it, the others wait for its
/// answer and go on it (sent together, each found no connection yet and opened its own).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_and_a_cycle_sent_at_once_share_one_connection() {
    let now = jiff::Timestamp::now();
    let h = Harness::start_with(SimOptions { http2: true, ..SimOptions::default() }, scenario::healthy(now)).await;
    let connected = connect(&options(&h)).await.unwrap();
    assert_eq!(h.sim.connections(), 0, "connecting opens no connection yet");
    let cycle = CycleOptions::default();
    let follower = Follower::start(connected.fetcher.clone(), &cycle, Duration::from_secs(60), Arc::default());
    let version = || connected.fetcher.get::<serde::de::IgnoredAny>(Collection::VERSION, "/version");
    let (listed, a, b, c) = tokio::join!(connected.read(&cycle, now), version(), version(), version());
    assert!(listed.result.is_ok(), "{:?}", listed.result.err());
    assert!(a.is_ok() && b.is_ok() && c.is_ok());
    let mut rules = common::watch::Rules::default();
    agreed("at once", &connected, &follower, &cycle, &mut rules).await;
    assert_eq!(h.sim.connections(), 1, "one connection for the watches and the cycles");
}
