//! Faults on the wire and in the answers: each one fails the cycle with one clear line naming
//! the address and the collection (exit 3), never a panic, never the token, within the deadline;
//! and the next good cycle reads everything again.

mod common;

use std::time::{Duration, Instant};

use bytes::Bytes;
use common::fixture::{self, BULK_PODS};
use common::{Harness, Run, dumbmonit, path, samples};
use dumbmonit_sim::api::Resource;
use dumbmonit_sim::{BodyFault, Faults, scenario};
use serde_json::json;

/// Exit 3, one line on stderr naming the address, nothing on stdout.
fn one_error(h: &Harness, run: &Run) -> String {
    assert_eq!(run.code, 3, "stdout: {} stderr: {}", run.stdout, run.stderr);
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr.lines().count(), 1, "one line: {}", run.stderr);
    let line = run.stderr.trim_end().to_string();
    assert!(line.contains(&h.sim.url()), "the address is named: {line}");
    line
}

/// The cluster reads completely again once the fault is gone.
async fn recovers(h: &Harness) {
    h.sim.set_faults(Faults::default());
    let run = h.check(&["--output", "prometheus"]).await;
    assert_eq!(run.stderr, "", "a good cycle after the fault");
    let m = samples(&run.stdout);
    assert_eq!(m["dumbmonit_k8s_up"], 1.0);
    assert_eq!(m["dumbmonit_k8s_pods"], 14.0 + BULK_PODS as f64, "every pod, each once");
}

fn body_fault(resource: Resource, fault: BodyFault) -> Faults {
    Faults { body: Some((resource, fault)), ..Default::default() }
}

fn replace(status: u16, content_type: &'static str, body: &[u8]) -> BodyFault {
    BodyFault::Replace { status, content_type, body: Bytes::copy_from_slice(body) }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_bodies_fail_the_cycle_with_the_collection_named() {
    let h = Harness::start(fixture::cluster(jiff::Timestamp::now())).await;
    let url = h.sim.url();
    let cases: Vec<(&str, Faults, String)> = vec![
        (
            "a reset in the middle of a body",
            body_fault(Resource::Pods, BodyFault::ResetMidway),
            format!(
                "The connection to {url} while reading pods failed: the server closed the connection in the middle \
                 of an answer"
            ),
        ),
        (
            "a truncated body",
            body_fault(Resource::Pods, BodyFault::Truncated),
            format!("Unreadable answer from {url} while reading pods: invalid JSON: EOF while parsing"),
        ),
        (
            "invalid JSON",
            body_fault(Resource::Nodes, replace(200, "application/json", br#"{"kind":"NodeList","items":[}"#)),
            format!("Unreadable answer from {url} while reading nodes: invalid JSON: "),
        ),
        (
            "an HTML error page with 200",
            body_fault(
                Resource::Deployments,
                replace(200, "text/html", b"<html><body><h1>502 Bad Gateway</h1>nginx</body></html>"),
            ),
            format!(
                "Unreadable answer from {url} while reading deployments: an HTML page came back instead of JSON \
                 (a proxy or load balancer in the way?)"
            ),
        ),
        (
            "invalid UTF-8",
            body_fault(
                Resource::PersistentVolumeClaims,
                replace(
                    200,
                    "application/json",
                    b"{\"kind\":\"PersistentVolumeClaimList\",\"items\":[{\"metadata\":{\"name\":\"\xff\xfe\"}}]}",
                ),
            ),
            format!("Unreadable answer from {url} while reading persistentvolumeclaims: invalid JSON: invalid unicode"),
        ),
        (
            "a 429 with Retry-After",
            Faults { fail_status: Some(429), ..Default::default() },
            format!(
                "The API server answered 429 Too Many Requests at {url} while reading version: the server has \
                 received too many requests and has asked us to try again later (it asks to retry after 1 s)"
            ),
        ),
        (
            "a 503 from the aggregator",
            Faults { fail_status: Some(503), ..Default::default() },
            format!("The API server answered 503 Service Unavailable at {url} while reading version: "),
        ),
        (
            "a continue token that expires twice",
            Faults { expire_continue: 2, ..Default::default() },
            format!(
                "The API server answered 410 Gone at {url} while reading pods: the continue token expired again \
                 after the list was restarted"
            ),
        ),
        (
            "the same continue token returned again",
            Faults { repeat_continue: true, ..Default::default() },
            format!(
                "The API server returned the same continue token twice at {url} while reading pods: the list never ends"
            ),
        ),
    ];
    for (what, faults, expected) in cases {
        h.sim.set_faults(faults);
        let started = Instant::now();
        let line = one_error(&h, &h.check(&["--timeout", "5"]).await);
        assert!(line.starts_with(&expected), "{what}:\n  got      {line}\n  expected {expected}…");
        assert!(started.elapsed() < Duration::from_secs(10), "{what}: took {:?}", started.elapsed());
        recovers(&h).await;
    }
    h.assert_only_reads();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_that_never_end_are_cut_off() {
    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    h.sim.set_faults(Faults { endless_pages: true, ..Default::default() });
    let line = one_error(&h, &h.check(&["--timeout", "5"]).await);
    assert_eq!(
        line,
        format!("The list at {} while reading nodes went on past 4000 pages of 500: the list never ends", h.sim.url())
    );
    let node_pages = h.sim.requests().iter().filter(|r| r.path == "/api/v1/nodes").count();
    assert_eq!(node_pages, 4000, "the list stops at its limit, then the cycle's other reads go on");
    h.sim.set_faults(Faults::default());
    assert_eq!(h.check(&[]).await.code, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_item_repeated_across_pages_counts_once() {
    let now = jiff::Timestamp::now();
    let mut cluster = fixture::cluster(now);
    let before = {
        let h = Harness::start(cluster.clone()).await;
        samples(&h.check(&["--output", "prometheus"]).await.stdout)
    };
    // The bulk pods sort first; doubling the 500th and 501st puts copies on both sides of the
    // page boundary.
    let mut sorted: Vec<serde_json::Value> = cluster.pods.clone();
    sorted.sort_by_key(|p| (p["metadata"]["namespace"].to_string(), p["metadata"]["name"].to_string()));
    cluster.pods.push(sorted[499].clone());
    cluster.pods.push(sorted[500].clone());
    cluster.nodes.push(cluster.nodes[0].clone());
    let h = Harness::start(cluster).await;
    let run = h.check(&["--output", "prometheus"]).await;
    let after = samples(&run.stdout);
    assert_eq!(h.sim.requests().iter().filter(|r| r.path == "/api/v1/pods").count(), 2, "two pages");
    for name in ["dumbmonit_k8s_pods", "dumbmonit_k8s_pods_running", "dumbmonit_k8s_nodes", "dumbmonit_k8s_nodes_ready"]
    {
        assert_eq!(after[name], before[name], "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_without_their_optional_fields_are_read() {
    let now = jiff::Timestamp::now();
    let mut cluster = scenario::healthy(now);
    cluster.nodes.push(json!({"metadata": {"name": "bare-node", "creationTimestamp": null}}));
    cluster.nodes.push(json!({"metadata": {"name": "no-conditions"}, "status": {"conditions": null}}));
    cluster.pods.push(json!({"metadata": {"name": "bare-pod", "namespace": "shop", "creationTimestamp": null}}));
    cluster.pods.push(json!({
        "metadata": {"name": "no-statuses", "namespace": "shop"},
        "status": {"phase": "Running", "conditions": null, "containerStatuses": null}
    }));
    cluster.deployments.push(json!({"metadata": {"name": "bare-deploy", "namespace": "shop"}}));
    cluster.statefulsets.push(json!({"metadata": {"name": "bare-sts", "namespace": "shop"}, "spec": {}}));
    cluster.daemonsets.push(json!({"metadata": {"name": "bare-ds", "namespace": "shop"}, "status": null}));
    cluster.pvcs.push(json!({"metadata": {"name": "bare-claim", "namespace": "shop"}}));
    cluster.events.push(json!({
        "metadata": {"name": "bare-event", "namespace": "shop"},
        "type": "Warning",
        "involvedObject": {},
        "eventTime": null, "lastTimestamp": null, "firstTimestamp": null
    }));
    let h = Harness::start(cluster).await;
    let run = h.check(&["--output", "prometheus"]).await;
    assert_eq!(run.stderr, "");
    assert_eq!(run.code, 2, "the bare nodes are not ready, which is critical: {}", run.stdout);
    let m = samples(&run.stdout);
    assert_eq!(m["dumbmonit_k8s_up"], 1.0);
    assert_eq!(m["dumbmonit_k8s_nodes"], 5.0);
    assert_eq!(m["dumbmonit_k8s_nodes_ready"], 3.0, "a node without a Ready condition is not ready");
    assert_eq!(m["dumbmonit_k8s_pods"], 12.0);
    assert_eq!(m["dumbmonit_k8s_pods_not_ready"], 1.0, "Running without a Ready condition is not ready");
    let text = h.check(&[]).await;
    assert!(text.stdout.contains("bare-node"), "{}", text.stdout);
}

/// Set in the copy of this test binary that starts the child of `peak_rss_kb`: what to run.
const PEAK_OF: &str = "DUMBMONIT_TEST_PEAK_OF";

/// Runs the binary with `args` (its stdout into the file `stdout`): its exit status and its
/// peak RSS in kB, from wait4.
///
/// wait4's `ru_maxrss` is the larger of the child's own peak and the high-water mark of the
/// memory it held before its exec: with posix_spawn its parent's own, with fork a copy of it.
/// Started from this test process, whose peak is that of whatever tests run beside it (their
/// simulators and pages), a read of 50 MB was reported at 128 and 132 MB with this binary's
/// tests all run at once. So the child is started by a small process (a few MB, below any figure
/// the bound is about): a copy of this test binary that runs nothing but
/// `a_huge_object_is_read_in_bounded_memory`, which in that copy starts the child and says its
/// figures (`start_and_report`).
fn peak_rss_kb(args: &[String], stdout: &std::path::Path, home: &std::path::Path) -> (i32, i64) {
    let job = json!({"args": args, "stdout": path(stdout), "home": path(home)}).to_string();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "a_huge_object_is_read_in_bounded_memory", "--nocapture", "--test-threads=1"])
        .env(PEAK_OF, job)
        .stderr(std::process::Stdio::inherit())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // After libtest's "test NAME ... " on the same line.
    let line = text.lines().find_map(|l| l.split_once("peak of the child: ")).unwrap_or_else(|| panic!("{text}")).1;
    let (code, kb) = line.split_once(" exit, kB ").unwrap();
    (code.parse().unwrap(), kb.parse().unwrap())
}

/// In the copy started by `peak_rss_kb`: starts the child, waits for it with wait4, and prints
/// its exit status and peak.
fn start_and_report(job: &str) {
    let job: serde_json::Value = serde_json::from_str(job).unwrap();
    let args: Vec<&str> = job["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    #[allow(clippy::zombie_processes)]
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_dumbmonit"))
        .args(args)
        .env_remove(PEAK_OF)
        .env_remove("DUMBMONIT_TOKEN")
        .env_remove("KUBECONFIG")
        .env("HOME", job["home"].as_str().unwrap())
        .stdout(std::fs::File::create(job["stdout"].as_str().unwrap()).unwrap())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own child; the pointers are to live locals.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid);
    assert!(libc::WIFEXITED(status), "the child ended by signal: {status}");
    println!("peak of the child: {} exit, kB {}", libc::WEXITSTATUS(status), usage.ru_maxrss);
}

/// The peak of this process, in kB.
fn own_peak_kb() -> i64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_object_is_read_in_bounded_memory() {
    if let Ok(job) = std::env::var(PEAK_OF) {
        // The small process of peak_rss_kb.
        return start_and_report(&job);
    }
    let now = jiff::Timestamp::now();
    let mut cluster = scenario::healthy(now);
    let mut pod = cluster.pods[0].clone();
    pod["metadata"]["name"] = json!("api-with-a-10mb-annotation");
    pod["metadata"]["annotations"] = json!({"example.com/blob": "x".repeat(10 * 1024 * 1024)});
    cluster.pods.push(pod);
    let h = Harness::start(cluster).await;
    let args: Vec<String> = [
        "check",
        &h.sim.url(),
        "--token-file",
        &path(&h.token_file),
        "--ca-file",
        &path(&h.ca_file),
        "--output",
        "prometheus",
    ]
    .map(String::from)
    .into();
    let stdout = h.dir.path().join("stdout");
    let home = h.dir.path().to_path_buf();
    let (code, max_rss_kb) = tokio::task::spawn_blocking(move || peak_rss_kb(&args, &stdout, &home)).await.unwrap();
    let out = std::fs::read_to_string(h.dir.path().join("stdout")).unwrap();
    assert_eq!(code, 0, "{out}");
    let m = samples(&out);
    assert_eq!(m["dumbmonit_k8s_pods"], 11.0);
    // The test process's own peak: what the child's figure would have been at least, had this
    // process started it.
    eprintln!("a 10 MB object read: peak RSS {max_rss_kb} kB (this test process: {} kB)", own_peak_kb());
    assert!(max_rss_kb < 120 * 1024, "peak RSS {max_rss_kb} kB for a 10 MB object");
}

/// A TCP server that accepts and then says nothing, or says plain HTTP.
async fn not_tls(speaks: Option<&'static [u8]>) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut tcp, _)) = listener.accept().await {
            if let Some(bytes) = speaks {
                use tokio::io::AsyncWriteExt;
                let _ = tcp.write_all(bytes).await;
            }
            held.push(tcp);
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_does_not_speak_tls() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("t");
    std::fs::write(&token, "a-token-that-is-long-enough").unwrap();
    let run = |addr: std::net::SocketAddr| {
        let args: Vec<String> =
            ["check", &addr.to_string(), "--token-file", &path(&token), "--timeout", "1"].map(String::from).into();
        let home = dir.path().to_path_buf();
        async move { dumbmonit(&args, &[], &home).await }
    };
    let silent = not_tls(None).await;
    let started = Instant::now();
    let r = run(silent).await;
    assert_eq!(r.code, 3);
    assert_eq!(r.stderr.trim_end(), format!("No answer from https://{silent} while reading version within 1 s"));
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());

    let plain = not_tls(Some(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")).await;
    let r = run(plain).await;
    assert_eq!(r.code, 3);
    assert!(
        r.stderr.starts_with("TLS with the API server failed: ")
            && r.stderr.contains(&format!("https://{plain} while reading version")),
        "{}",
        r.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_that_expires_while_the_monitor_runs() {
    let options =
        dumbmonit_sim::SimOptions { certificate_lifetime: Some(Duration::from_secs(3)), ..Default::default() };
    let h = Harness::start_with(options, scenario::healthy(jiff::Timestamp::now())).await;
    let started = Instant::now();
    let run = h.check(&[]).await;
    assert_eq!(run.code, 1, "valid for a few seconds more, which is a notice: {}", run.stdout);
    assert!(run.stdout.starts_with("API server certificate expires within a day"), "{}", run.stdout);
    tokio::time::sleep(Duration::from_secs(4).saturating_sub(started.elapsed())).await;
    let line = one_error(&h, &h.check(&[]).await);
    assert!(line.starts_with("The certificate of the API server could not be verified: it has expired"), "{line}");
}
