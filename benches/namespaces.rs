//! Namespaced access against a cluster-wide read, on the real API server: `cargo bench --bench
//! namespaces` (`BENCH_PODS`, 10,000; `BENCH_NAMESPACES`, 40; `BENCH_CYCLES`, cycles of each way,
//! 5). Prints a table; a figure it cannot measure stops it with an error naming it (exit 1).
//!
//! The control plane of the tests without kubelets, scheduler or controllers; the benchmark
//! creates the namespaces `team-00`…, 100 nodes and the pods (Running, the status a kubelet
//! writes), spread evenly: 250 pods a namespace at the defaults. DumbMonit (`check`, release
//! build) reads with one ServiceAccount's token (the role of `dumbmonit rbac --optional`, with
//! watch, bound cluster-wide: the same token reads both ways), through the benchmark's relay
//! that counts the bytes the API server sends. One cycle cluster-wide, then one with
//! `--namespace` for each namespace, alternating, `BENCH_CYCLES` times each.
//!
//! Per cycle: the wall time of `check` (the process, start to exit), the requests the API
//! server's audit log has from the ServiceAccount (by verb and answer), the bytes the relay
//! passed (TLS records and all), and kube-apiserver's CPU seconds from /proc. Each cycle must
//! count every pod (its JSON's `counts.pods`), or the benchmark stops.

mod common;

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::plane::{Api, Fleet, Plane, audit_events, load, relay, rfc3339, service_account};
use common::{Measured, above_zero, cpu_seconds, ms, quantile, size};
use jiff::Timestamp;
use serde_json::{Value, json};

const ACCOUNT: &str = "system:serviceaccount:kube-system:dumbmonit";
const NODES: usize = 100;

fn env_count(name: &str, default: usize) -> Measured<usize> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(v) => v.trim().parse::<usize>().ok().filter(|n| *n > 0).ok_or(format!("{name}: {v:?} is not a count")),
    }
}

/// One way of reading.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Way {
    ClusterWide,
    Namespaced,
}

impl Way {
    fn name(self, namespaces: usize) -> String {
        match self {
            Way::ClusterWide => "cluster-wide (one List per collection)".into(),
            Way::Namespaced => format!("{namespaces} namespaces (`--namespace` × {namespaces})"),
        }
    }
}

/// Requests by (verb, status of the answer).
type Answers = BTreeMap<(String, i64), u64>;

/// What one cycle cost.
struct Cost {
    wall: Duration,
    requests: u64,
    by_answer: Answers,
    bytes: u64,
    apiserver_cpu: f64,
}

/// The ServiceAccount's requests answered between `from` and `to`, from the audit log.
fn audited(plane: &Plane, from: Timestamp, to: Timestamp) -> Measured<(u64, Answers)> {
    let events = audit_events(plane, ACCOUNT, from, to)?;
    let mut by = BTreeMap::new();
    for e in &events {
        let verb = e["verb"].as_str().unwrap_or("").to_string();
        *by.entry((verb, e["responseStatus"]["code"].as_i64().unwrap_or(0))).or_insert(0) += 1;
    }
    Ok((events.len() as u64, by))
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    common::run("namespaces", || {
        let pods = env_count("BENCH_PODS", 10_000)?;
        let namespaces = env_count("BENCH_NAMESPACES", 40)?;
        let cycles = env_count("BENCH_CYCLES", 5)?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        eprintln!("starting the control plane");
        let plane = Plane::up("namespaces")?;
        let api = Api::new(&plane)?;
        let token_file = rt.block_on(service_account(&api, plane.dir.path()))?;
        let names: Vec<String> = (0..namespaces).map(|i| format!("team-{i:02}")).collect();
        rt.block_on(async {
            for ns in &names {
                let object = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
                api.create("/api/v1/namespaces", object).await?;
            }
            Ok::<(), String>(())
        })?;
        let fleet = Fleet {
            pods,
            namespaces,
            nodes: NODES,
            started: rfc3339(Timestamp::now() - jiff::SignedDuration::from_hours(24)),
        };
        eprintln!("loading {NODES} nodes and {pods} pods in {namespaces} namespaces");
        let loaded = load(&plane, &fleet, 0)?;
        eprintln!("loaded in {:.0} s", loaded.as_secs_f64());
        let relay = rt.block_on(relay(plane.port))?;
        let host = plane.address.rsplit_once(':').map_or("https://k8s.test", |(h, _)| h).to_string();
        let address = format!("{host}:{}", relay.port);
        let ca = plane.file("ca.crt");
        let mut costs: BTreeMap<Way, Vec<Cost>> = BTreeMap::new();
        // One cycle of each way first, unmeasured: connections, caches and the binary warm.
        for round in 0..=cycles {
            for way in [Way::ClusterWide, Way::Namespaced] {
                let mut command = Command::new(env!("CARGO_BIN_EXE_dumbmonit"));
                command.args(["check", &address, "--output", "json", "--token-file"]).arg(&token_file).arg("--ca-file");
                command.arg(&ca);
                if way == Way::Namespaced {
                    for ns in &names {
                        command.args(["--namespace", ns]);
                    }
                }
                let (bytes_before, cpu_before) = (relay.sent.load(Ordering::Relaxed), cpu_seconds(plane.apiserver)?);
                let from = Timestamp::now();
                let started = Instant::now();
                let out = command.output().map_err(|e| format!("dumbmonit check: {e}"))?;
                let wall = started.elapsed();
                let to = Timestamp::now();
                let bytes = relay.sent.load(Ordering::Relaxed) - bytes_before;
                let apiserver_cpu = cpu_seconds(plane.apiserver)? - cpu_before;
                let doc: Value = serde_json::from_slice(&out.stdout)
                    .map_err(|e| format!("check's JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)))?;
                if doc["counts"]["pods"] != pods {
                    return Err(format!(
                        "a {} cycle counted {} pods, not {pods}",
                        way.name(namespaces),
                        doc["counts"]["pods"]
                    ));
                }
                if round == 0 {
                    continue;
                }
                // The audit log is written as requests end: give it a moment past the last.
                std::thread::sleep(Duration::from_millis(500));
                let (requests, by_answer) = audited(&plane, from, to)?;
                above_zero("the requests of a cycle", requests as f64)?;
                above_zero("the bytes of a cycle", bytes as f64)?;
                costs.entry(way).or_default().push(Cost { wall, requests, by_answer, bytes, apiserver_cpu });
            }
        }
        println!(
            "\n{pods} pods in {namespaces} namespaces ({} each) on {NODES} nodes (loaded in {:.0} s); {cycles} cycles of each way, alternating; medians\n",
            pods / namespaces,
            loaded.as_secs_f64()
        );
        println!(
            "| read | cycle (check, wall) p50 / max | requests | bytes to DumbMonit (wire) | API server CPU s | answers |"
        );
        println!("|---|---:|---:|---:|---:|---|");
        let median = |v: &mut Vec<f64>| -> f64 {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let mut medians = BTreeMap::new();
        for (way, c) in &costs {
            let wall = quantile("the cycle's time", c.iter().map(|c| c.wall).collect(), 0.5)?;
            let max = quantile("the cycle's time", c.iter().map(|c| c.wall).collect(), 1.0)?;
            let requests = median(&mut c.iter().map(|c| c.requests as f64).collect());
            let bytes = median(&mut c.iter().map(|c| c.bytes as f64).collect());
            let cpu = median(&mut c.iter().map(|c| c.apiserver_cpu).collect());
            let answers: Vec<String> = c
                .last()
                .map(|c| c.by_answer.iter().map(|((verb, code), n)| format!("{n} {verb} {code}")).collect())
                .unwrap_or_default();
            println!(
                "| {} | {} / {} | {requests:.0} | {} | {cpu:.2} | {} |",
                way.name(namespaces),
                ms(wall),
                ms(max),
                size(bytes),
                answers.join(", ")
            );
            medians.insert(*way, (wall, requests, bytes, cpu));
        }
        let (w, n) = (medians[&Way::ClusterWide], medians[&Way::Namespaced]);
        println!(
            "\nNamespaced against cluster-wide: {:.1}× the time, {:.1}× the requests, {:.2}× the bytes, {:.1}× the API server's CPU.",
            n.0.as_secs_f64() / w.0.as_secs_f64(),
            n.1 / w.1,
            n.2 / w.2,
            n.3 / w.3.max(f64::MIN_POSITIVE),
        );
        drop(relay);
        drop(plane);
        Ok(())
    });
}
