//! High availability the Prometheus way: two `serve` replicas with the same configuration watch
//! the same cluster and send to two real Alertmanagers (Debian's) gossiping on loopback, which
//! notify one webhook receiver. Each alert reaches the receiver once while both replicas run;
//! nothing resolves when one replica is killed, whose survivor keeps the alert's `endsAt` moving
//! on; the resolution arrives once when the cluster heals.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::receiver::Receiver;
use common::web::Served;
use common::{Harness, Killed, free_port, path};
use dumbmonit_sim::scenario;

/// An Alertmanager in a gossip cluster: (process, web port).
fn alertmanager(dir: &Path, name: &str, cluster: u16, peer: u16, webhook: &str) -> (Killed, u16) {
    let binary = ["prometheus-alertmanager", "alertmanager"]
        .into_iter()
        .find(|b| Command::new(b).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok())
        .expect("Alertmanager is needed: install the Debian package `prometheus-alertmanager` (scripts/test.sh does)");
    let config = dir.join(format!("{name}.yml"));
    // Every alert its own group; resolved alerts told too. The peer timeout (how long the second
    // Alertmanager waits for the first's notification to be gossiped) stays below the group
    // interval, as in any real setup (15 s against 5 min by default): otherwise the second would
    // compare what it gathered a flush earlier with the first's newer notification, and tell a
    // resolved alert firing again.
    std::fs::write(
        &config,
        format!(
            "route:\n  receiver: hook\n  group_by: ['...']\n  group_wait: 1s\n  group_interval: 3s\n  repeat_interval: 1h\n\
             receivers:\n  - name: hook\n    webhook_configs:\n      - url: {webhook}\n        send_resolved: true\n"
        ),
    )
    .unwrap();
    let port = free_port();
    let child = Command::new(binary)
        .args([
            format!("--config.file={}", path(&config)),
            format!("--storage.path={}", path(&dir.join(format!("{name}-data")))),
            format!("--web.listen-address=127.0.0.1:{port}"),
            format!("--cluster.listen-address=127.0.0.1:{cluster}"),
            format!("--cluster.peer=127.0.0.1:{peer}"),
            "--cluster.peer-timeout=1s".to_string(),
            "--cluster.gossip-interval=100ms".to_string(),
            "--cluster.pushpull-interval=1s".to_string(),
        ])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join(format!("{name}.log"))).unwrap())
        .spawn()
        .expect("Alertmanager starts");
    let child = Killed(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    let ready = || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
            && common::web::get(([127, 0, 0, 1], port).into(), "GET", "/-/ready", None).status == 200
    };
    while !ready() {
        assert!(Instant::now() < deadline, "Alertmanager {name} never became ready");
        std::thread::sleep(Duration::from_millis(100));
    }
    (child, port)
}

/// When the Alertmanager on `port` holds the firing alert `alertname` until (its `endsAt`).
fn ends_at(port: u16, alertname: &str) -> Option<jiff::Timestamp> {
    let alerts = common::web::get(([127, 0, 0, 1], port).into(), "GET", "/api/v2/alerts", None).json();
    let alert = alerts.as_array()?.iter().find(|a| a["labels"]["alertname"] == alertname)?.clone();
    alert["endsAt"].as_str()?.parse().ok()
}

/// The webhook notifications about `alertname` as (status, startsAt), in arrival order.
fn told(receiver: &Receiver, alertname: &str) -> Vec<(String, String)> {
    receiver
        .bodies()
        .iter()
        .flat_map(|b| b["alerts"].as_array().cloned().unwrap_or_default())
        .filter(|a| a["labels"]["alertname"] == alertname)
        .map(|a| (a["status"].as_str().unwrap_or("").to_string(), a["startsAt"].as_str().unwrap_or("").to_string()))
        .collect()
}

fn wait_until(what: &str, check: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !check() {
        assert!(Instant::now() < deadline, "waited in vain for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_and_two_alertmanagers_notify_once() {
    let now = jiff::Timestamp::now();
    let mut cluster = scenario::healthy(now);
    scenario::node_lost(&mut cluster, now);
    let h = Harness::start(cluster).await;
    let receiver = Receiver::start().await;
    let webhook = format!("{}/alerts", receiver.url());
    let (c1, c2) = (free_port(), free_port());
    let (am1, p1) = alertmanager(h.dir.path(), "am1", c1, c2, &webhook);
    let (am2, p2) = alertmanager(h.dir.path(), "am2", c2, c1, &webhook);

    // Two replicas: the same configuration, but for where each keeps its state. On the wall
    // clock, as Alertmanager's (a resolution told from another time would be taken at that time),
    // with the node's rule holding 3 s instead of five minutes.
    let replica = |n: u32| {
        let dir = h.dir.path().join(format!("replica-{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("dumbmonit.toml");
        std::fs::write(
            &config,
            format!(
                "listen = \"127.0.0.1:0\"\nstate_dir = {:?}\n\n[[cluster]]\nname = \"lab\"\naddress = {:?}\ntoken_file = {:?}\n\
                 ca_file = {:?}\ninterval = \"1s\"\n\n[[notifier]]\ntype = \"alertmanager\"\nurl = \"http://127.0.0.1:{p1}\"\n\n\
                 [[notifier]]\ntype = \"alertmanager\"\nurl = \"http://127.0.0.1:{p2}\"\n\n\
                 [[rule]]\nname = \"KubernetesNodeNotReady\"\nfor = \"3s\"\n",
                path(&dir.join("state")),
                h.sim.url(),
                path(&h.token_file),
                path(&h.ca_file)
            ),
        )
        .unwrap();
        Served::start(&config, &[])
    };
    let one = replica(1);
    let two = replica(2);
    let node = "KubernetesNodeNotReady";
    let count = |status: &str| told(&receiver, node).iter().filter(|(s, _)| s == status).count();

    wait_until("the node's alert told", || count("firing") > 0);
    // Past both Alertmanagers' waits for each other and two group intervals: still once.
    std::thread::sleep(Duration::from_secs(8));
    let firing: Vec<_> = told(&receiver, node).into_iter().filter(|(s, _)| s == "firing").collect();
    assert_eq!(firing.len(), 1, "each alert once while both replicas run: {firing:?}");
    // Held by each Alertmanager until four re-send periods (at least a minute each) ahead.
    let mut held = Vec::new();
    for p in [p1, p2] {
        let ends = ends_at(p, node).expect("each Alertmanager holds the node's alert");
        let ahead = ends.duration_since(jiff::Timestamp::now());
        assert!(
            ahead > jiff::SignedDuration::from_secs(200) && ahead <= jiff::SignedDuration::from_mins(4),
            "{ahead:?}"
        );
        held.push(ends);
    }

    // One replica dies: the other keeps the alert alive, its end moving on with every cycle.
    drop(one);
    for (p, before) in [p1, p2].into_iter().zip(held) {
        wait_until("the survivor's re-sends", || {
            ends_at(p, node).is_some_and(|e| e > before + jiff::SignedDuration::from_secs(3))
        });
    }
    assert_eq!(count("resolved"), 0, "nothing resolves while a replica runs: {:?}", told(&receiver, node));
    assert_eq!(count("firing"), 1);

    // The cluster heals: resolved, once.
    h.sim.set_cluster(scenario::healthy(now));
    wait_until("the resolution told", || count("resolved") > 0);
    std::thread::sleep(Duration::from_secs(8));
    assert_eq!(count("resolved"), 1, "{:?}", told(&receiver, node));
    assert_eq!(count("firing"), 1);
    let _ = two.log();
    drop((am1, am2));
}

/// Sharding: three `serve --shard` over twenty clusters and one state directory cover each
/// cluster exactly once; a reload to two shards moves clusters with their alert state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shards_cover_each_cluster_once_and_moved_clusters_keep_their_state() {
    let now = jiff::Timestamp::now();
    let mut cluster = scenario::healthy(now);
    scenario::node_lost(&mut cluster, now);
    let h = Harness::start(cluster).await;
    let names: Vec<String> = (0..20).map(|i| format!("site-{i:02}")).collect();
    let clusters: String = names
        .iter()
        .map(|n| {
            format!(
                "[[cluster]]\nname = {n:?}\naddress = {:?}\ntoken_file = {:?}\nca_file = {:?}\ninterval = \"0.5s\"\n\n",
                h.sim.url(),
                path(&h.token_file),
                path(&h.ca_file)
            )
        })
        .collect();
    // One state directory for every shard: a cluster's state is where any shard finds it.
    let state = h.dir.path().join("state");
    let config = |i: u32, count: u32| {
        let file = h.dir.path().join(format!("shard-{i}.toml"));
        std::fs::write(
            &file,
            format!("listen = \"127.0.0.1:0\"\nstate_dir = {:?}\nshard = \"{i}/{count}\"\n\n{clusters}", path(&state)),
        )
        .unwrap();
        file
    };
    let shards: Vec<Served> = (0..3).map(|i| Served::start(&config(i, 3), &[])).collect();
    let listed = |s: &Served| -> Vec<String> {
        s.get("/api/v1/clusters")
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    // Each alert of the node, by cluster: when it became active.
    let active_at = |s: &[&Served]| -> std::collections::BTreeMap<String, String> {
        s.iter()
            .flat_map(|s| s.get("/api/v1/alerts").json().as_array().unwrap().clone())
            .filter(|a| a["alertname"] == "KubernetesNodeNotReady")
            .map(|a| (a["cluster"].as_str().unwrap().to_string(), a["active_at"].as_str().unwrap().to_string()))
            .collect()
    };
    let all: Vec<&Served> = shards.iter().collect();
    wait_until("every cluster's node alert pending", || active_at(&all).len() == 20);
    let mut seen: Vec<String> = shards.iter().flat_map(listed).collect();
    let sizes: Vec<usize> = shards.iter().map(|s| listed(s).len()).collect();
    seen.sort();
    assert_eq!(seen, names, "each cluster on exactly one shard: {sizes:?}");
    assert!(sizes.iter().all(|&n| n > 0), "{sizes:?}");
    let before = active_at(&all);
    assert!(shards[0].log().contains(&format!("watching {} cluster(s) (shard 0/3 of 20 configured)", sizes[0])));

    // Down to two shards: the third stops, the others reload with COUNT 2.
    let mut shards = shards;
    drop(shards.pop());
    for (i, s) in shards.iter().enumerate() {
        config(i as u32, 2);
        // SAFETY: a signal to our own child process.
        unsafe { libc::kill(s.child.id() as i32, libc::SIGHUP) };
    }
    let two: Vec<&Served> = shards.iter().collect();
    wait_until("two shards cover all", || {
        let mut seen: Vec<String> = two.iter().flat_map(|s| listed(s)).collect();
        seen.sort();
        seen == names && active_at(&two).len() == 20
    });
    assert_eq!(active_at(&two), before, "every alert kept the time it became active, wherever its cluster went");
}
