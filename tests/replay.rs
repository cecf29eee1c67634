//! Recorded cycles through the built-in rules: `check --record` writes them, `replay` reads a
//! directory of them and prints each transition at the cycle it happens.

mod common;

use std::path::Path;

use common::{Harness, dumbmonit, path};
use dumbmonit_sim::Cluster;
use dumbmonit_sim::fixtures::{Container, Node, Pod, deployment, pvc};
use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

fn minute(m: i64) -> Timestamp {
    "2026-11-30T00:00:00Z".parse::<Timestamp>().unwrap() + SignedDuration::from_mins(m)
}

/// A recorded cycle in the documented format, from a simulated cluster's objects.
fn recorded(t: Timestamp, c: &Cluster) -> String {
    common::recorded_cycle(t, c, json!({}))
}

fn write(dir: &Path, m: i64, text: &str) {
    // Names out of time order, some compressed: replay sorts by the recorded time.
    if m % 3 == 0 {
        use std::io::Write;
        let f = std::fs::File::create(dir.join(format!("z-{m:03}.json.gz"))).unwrap();
        let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
        gz.write_all(text.as_bytes()).unwrap();
        gz.finish().unwrap();
    } else {
        std::fs::write(dir.join(format!("a-{m:03}.json")), text).unwrap();
    }
}

/// Minute by minute, the cluster's story.
fn cluster_at(m: i64) -> Cluster {
    let now = minute(m);
    let mut c = Cluster::default();
    let node3_ready = if (2..=20).contains(&m) { "Unknown" } else { "True" };
    c.nodes = vec![Node::new("node-1").build(now), Node::new("node-3").ready(Some(node3_ready)).build(now)];
    // Crash loop flapping on even minutes until minute 20.
    let crash = if m <= 20 && m % 2 == 0 {
        Container::crashlooping("app", "OOMKilled", 137, 4)
    } else {
        Container::running("app").restarts(4)
    };
    c.pods.push(Pod::of_deployment("shop", "api", "7c9696d669", "8tpp6").container(crash).build(now));
    // Restarts 0, 3, then a reset to 1, then 3: six in all, at minutes 44 to 47.
    let flaky = match m {
        ..44 => 0,
        44..=45 => 3,
        46 => 1,
        _ => 3,
    };
    c.pods.push(Pod::new("shop", "flaky").container(Container::running("app").restarts(flaky)).build(now));
    if (50..=70).contains(&m) {
        c.pods.push(
            Pod::new("batch", "waiting").unschedulable("0/2 nodes are available: 2 Insufficient cpu.").build(now),
        );
    }
    // api misses a replica until minute 75; web rolls for nine minutes from minute 30.
    c.deployments.push(deployment("shop", "api", Some(3), if m < 75 { 2 } else { 3 }, if m < 75 { 2 } else { 3 }, now));
    let web = if (30..39).contains(&m) { 1 } else { 2 };
    c.deployments.push(deployment("shop", "web", Some(2), web, web, now));
    // A claim a pod waits for, all along.
    c.pvcs.push(pvc("shop", "data", "Pending", "fast-ssd", false, now));
    c.pods.push(
        Pod::new("shop", "db-0")
            .claim("data")
            .unschedulable("pod has unbound immediate PersistentVolumeClaims")
            .build(now),
    );
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replayed_cycles_fire_and_resolve_at_the_right_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let cycles = dir.path().join("k3s-lab");
    std::fs::create_dir(&cycles).unwrap();
    for m in 0..80 {
        if m == 40 || m == 41 {
            let error = json!({"time": minute(m).to_string(), "error": "No answer from https://k3s.lan:6443 while reading version within 10 s"});
            write(&cycles, m, &error.to_string());
        } else {
            write(&cycles, m, &recorded(minute(m), &cluster_at(m)));
        }
    }
    let run = dumbmonit(&["replay".into(), path(&cycles)], &[], dir.path()).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<Value> = run.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let got: Vec<(String, String, String)> = lines
        .iter()
        .map(|l| {
            (
                l["time"].as_str().unwrap().to_string(),
                l["alertname"].as_str().unwrap().to_string(),
                l["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let at = |m: i64, name: &str, state: &str| (minute(m).to_string(), name.to_string(), state.to_string());
    assert_eq!(
        got,
        [
            at(7, "KubernetesNodeNotReady", "firing"),
            at(10, "KubernetesPodCrashLooping", "firing"),
            at(10, "KubernetesWorkloadReplicasMissing", "firing"),
            at(15, "KubernetesPVCPending", "firing"),
            at(15, "KubernetesPodPending", "firing"),
            at(21, "KubernetesNodeNotReady", "resolved"),
            at(30, "KubernetesPodCrashLooping", "resolved"),
            // Two failed cycles: unreachable, and nothing else moves.
            at(41, "KubernetesMonitorUnreachable", "firing"),
            at(42, "KubernetesMonitorUnreachable", "resolved"),
            // 0 → 3 → 1 (a reset) → 3 is six restarts.
            at(47, "KubernetesPodRestarting", "firing"),
            at(65, "KubernetesPodPending", "firing"),
            at(70, "KubernetesWorkloadReplicasMissing", "escalated"),
            at(71, "KubernetesPodPending", "resolved"),
            at(75, "KubernetesWorkloadReplicasMissing", "resolved"),
        ],
        "{}",
        run.stdout
    );
    let first = &lines[0];
    assert_eq!(first["severity"], "warning");
    assert_eq!(
        first["labels"],
        json!({"alertname": "KubernetesNodeNotReady", "cluster": "k3s-lab", "node": "node-3", "severity": "warning"})
    );
    assert_eq!(first["summary"], "Node node-3 is not ready");
    let escalated = lines.iter().find(|l| l["state"] == "escalated").unwrap();
    assert_eq!(escalated["severity"], "warning");
    assert_eq!(escalated["labels"]["severity"], "warning");
    let restarting = lines.iter().find(|l| l["alertname"] == "KubernetesPodRestarting").unwrap();
    assert_eq!(
        restarting["labels"],
        json!({"alertname": "KubernetesPodRestarting", "cluster": "k3s-lab", "namespace": "shop", "pod": "flaky", "severity": "notice"}),
        "a bare pod's alert has no workload label, as in Prometheus"
    );
    assert_eq!(restarting["summary"], "Pod shop/flaky restarted 6 times in the last hour");
    let crash = lines.iter().find(|l| l["alertname"] == "KubernetesPodCrashLooping").unwrap();
    assert_eq!(crash["summary"], "Pod shop/api-7c9696d669-8tpp6 is crash-looping");
    assert_eq!(crash["labels"]["workload"], "api");

    // Ignoring the namespace and naming the cluster, as live.
    let run = dumbmonit(
        &[
            "replay".into(),
            path(&cycles),
            "--ignore-namespace".into(),
            "batch".into(),
            "--cluster".into(),
            "lab".into(),
        ],
        &[],
        dir.path(),
    )
    .await;
    assert!(!run.stdout.contains("batch"), "{}", run.stdout);
    assert!(run.stdout.contains("\"cluster\":\"lab\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_records_what_it_read_and_replay_reads_it() {
    let h = Harness::start(dumbmonit_sim::scenario::trouble(jiff::Timestamp::now())).await;
    let dir = h.dir.path().join("cycles");
    std::fs::create_dir(&dir).unwrap();
    let ok = dir.join("1.json.gz");
    let run = h.check(&["--record", &path(&ok)]).await;
    assert_eq!(run.code, 2);
    let text = {
        use std::io::Read;
        let mut s = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(&ok).unwrap()).read_to_string(&mut s).unwrap();
        s
    };
    assert!(!text.contains(h.sim.token()), "the token is never recorded");
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["version"]["gitVersion"], "v1.33.4+k3s1");
    assert_eq!(doc["pods"]["kind"], "PodList");
    assert_eq!(
        doc["pods"]["items"].as_array().unwrap().len(),
        15,
        "as the API server returned them, Succeeded pod included"
    );
    assert!(doc["pods"]["items"][0]["metadata"]["managedFields"].is_array(), "items are kept whole");
    assert_eq!(doc["events"]["kind"], "EventList");
    assert_eq!(doc["deployments"]["apiVersion"], "apps/v1");

    h.sim.set_faults(dumbmonit_sim::Faults { fail_status: Some(503), ..Default::default() });
    let failed = dir.join("2.json");
    let run = h.check(&["--record", &path(&failed)]).await;
    assert_eq!(run.code, 3);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&failed).unwrap()).unwrap();
    assert_eq!(doc["error"].as_str().unwrap(), run.stderr.trim());
    assert!(doc.get("pods").is_none());

    let run = dumbmonit(&["replay".into(), path(&dir)], &[], h.dir.path()).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "", "one good and one failed cycle a few seconds apart fire nothing");

    std::fs::write(dir.join("3.json"), "{}").unwrap();
    let run = dumbmonit(&["replay".into(), path(&dir)], &[], h.dir.path()).await;
    assert_eq!(run.code, 3);
    assert!(run.stderr.contains("3.json: not a recorded cycle"), "{}", run.stderr);
}
