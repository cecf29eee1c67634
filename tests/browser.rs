//! A real browser (Debian's Chromium, headless) opens the overview and a cluster page: each kind
//! of problem is there as text, and a screenshot is saved to `artifacts/`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::web::Served;
use common::{Harness, path};
use dumbmonit_sim::scenario;

fn chromium(args: &[String], profile: &Path) -> std::process::Output {
    let binary = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|b| Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success()))
        .expect("Chromium is needed: install the Debian package `chromium` (scripts/test.sh does)");
    let mut all: Vec<String> = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ]
    .map(String::from)
    .into();
    all.push(format!("--user-data-dir={}", path(profile)));
    all.extend(args.iter().cloned());
    Command::new(binary).args(all).output().expect("Chromium runs")
}

fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_shows_every_kind_of_problem() {
    let now = jiff::Timestamp::now();
    let healthy = Harness::start(scenario::healthy(now)).await;
    let trouble = Harness::start(scenario::trouble(now)).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg =
        common::web::write_config(dir.path(), "", &[("k3s-lab", &healthy, "100ms"), ("prod-eu", &trouble, "100ms")]);
    // Rule time runs a minute per cycle from two hours ago: alerts fire and history fills.
    let clock = format!("{}/60", now - jiff::SignedDuration::from_mins(120));
    let s = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &clock)]);
    s.wait_for("/api/v1/alerts", "the pod alerts", |r| {
        r.body.contains("KubernetesPodPending") && r.body.contains("\"firing\"")
    });

    let profile = tempfile::tempdir().unwrap();
    let base = format!("http://{}", s.addr);
    let dom = chromium(&["--dump-dom".into(), format!("{base}/")], profile.path());
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.contains("Healthy: 3 nodes ready, 10 pods"), "{dom}");
    assert!(dom.contains("1 node not ready, 1 pod crash-looping"), "{dom}");

    let dom = chromium(&["--dump-dom".into(), format!("{base}/clusters/prod-eu")], profile.path());
    let dom = String::from_utf8_lossy(&dom.stdout);
    for (problem, text) in [
        ("a node not ready", "NodeStatusUnknown: Kubelet stopped posting node status."),
        ("a node under pressure", "MemoryPressure is True"),
        ("a crash loop and why", "app: last exit code 137 (OOMKilled)"),
        ("a pending pod and why", "FailedScheduling: 0/3 nodes are available"),
        ("a blocked pod", "blocked (ImagePullBackOff)"),
        ("a workload missing replicas", "Workloads missing replicas (4)"),
        ("a stuck claim", "Stuck claims (1)"),
        ("warning events by reason", "Warning events in the last hour, by reason"),
        ("the alerts", "KubernetesPodCrashLooping"),
        ("the history", "Crash-looping pods"),
    ] {
        assert!(dom.contains(text), "{problem} is not shown ({text:?})");
    }

    let shot = artifacts().join("cluster-page.png");
    let _ = std::fs::remove_file(&shot);
    let out = chromium(
        &[
            format!("--screenshot={}", path(&shot)),
            "--window-size=1280,3000".into(),
            format!("{base}/clusters/prod-eu"),
        ],
        profile.path(),
    );
    let png =
        std::fs::read(&shot).unwrap_or_else(|_| panic!("no screenshot: {}", String::from_utf8_lossy(&out.stderr)));
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    assert!(png.len() > 20_000, "a page, not a blank: {} bytes", png.len());
    let out = chromium(
        &[
            format!("--screenshot={}", path(&artifacts().join("overview.png"))),
            "--window-size=1280,500".into(),
            format!("{base}/"),
        ],
        profile.path(),
    );
    assert!(out.status.success());
}
