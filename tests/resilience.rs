//! `serve` while things go wrong: one cluster misbehaving in every way while another is read
//! undisturbed; a state directory that cannot be written; a soak of hundreds of cycles.

mod common;

use std::time::{Duration, Instant};

use bytes::Bytes;
use common::Harness;
use common::web::{Served, write_config};
use dumbmonit_sim::api::Resource;
use dumbmonit_sim::{BodyFault, Faults, scenario};
use serde_json::Value;

fn cluster_doc(s: &Served, name: &str) -> Value {
    s.get(&format!("/api/v1/clusters/{name}")).json()
}

fn unreachable_firing(s: &Served, name: &str) -> bool {
    s.get("/api/v1/alerts")
        .json()
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["cluster"] == name && a["alertname"] == "KubernetesMonitorUnreachable" && a["state"] == "firing")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misbehaving_cluster_fails_alone_and_recovers_fully() {
    let now = jiff::Timestamp::now();
    // More than 500 pods, so that the paging faults have a second page to break.
    let flaky = Harness::start(scenario::envelope(700, now)).await;
    let steady = Harness::start(scenario::healthy(now)).await;
    let cfg = write_config(flaky.dir.path(), "", &[("flaky", &flaky, "0.2s"), ("steady", &steady, "0.2s")]);
    // A third cluster whose name never resolves.
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str(&format!(
        "[[cluster]]\nname = \"nowhere\"\naddress = \"api.nowhere.invalid\"\ntoken_file = {:?}\ninterval = \"0.2s\"\ntimeout = \"2s\"\n",
        flaky.token_file.to_str().unwrap()
    ));
    std::fs::write(&cfg, text.replace("interval = \"0.2s\"\n\n", "interval = \"0.2s\"\ntimeout = \"1s\"\n\n")).unwrap();
    let s = Served::start(&cfg, &[]);
    let first = s.wait_for("/api/v1/clusters/flaky", "a first good cycle", |r| r.json()["last_good_cycle"].is_string());
    let pods = first.json()["pods"].as_u64().unwrap();
    assert!(pods > 500, "{pods}");

    let html =
        BodyFault::Replace { status: 200, content_type: "text/html", body: Bytes::from_static(b"<html>oops</html>") };
    let faults: Vec<(&str, Faults, &str)> = vec![
        (
            "reset",
            Faults { body: Some((Resource::Pods, BodyFault::ResetMidway)), ..Default::default() },
            "while reading pods failed",
        ),
        (
            "HTML",
            Faults { body: Some((Resource::Events, html)), ..Default::default() },
            "while reading events: an HTML page came back",
        ),
        ("429", Faults { fail_status: Some(429), ..Default::default() }, "429 Too Many Requests"),
        ("hang", Faults { latency: Duration::from_secs(3), ..Default::default() }, "within 1 s"),
        ("expired twice", Faults { expire_continue: u32::MAX, ..Default::default() }, "expired again"),
        ("same token", Faults { repeat_continue: true, ..Default::default() }, "the same continue token twice"),
    ];
    for (what, fault, fragment) in faults {
        let steady_before = cluster_doc(&s, "steady")["last_cycle"].clone();
        flaky.sim.set_faults(fault);
        let doc = s.wait_for("/api/v1/clusters/flaky", what, |r| {
            r.json()["error"].as_str().is_some_and(|e| e.contains(fragment) && e.contains(&flaky.sim.url()))
        });
        let error = doc.json()["error"].as_str().unwrap().to_string();
        assert!(!error.is_empty() && error.lines().count() == 1, "{what}: {error}");
        s.wait_for("/api/v1/alerts", &format!("the unreachable alert ({what})"), |_| unreachable_firing(&s, "flaky"));
        // Meanwhile the steady cluster is read, cycle after cycle.
        // (Waited for, not read once: on a loaded machine a fast fault can fire the alert before
        // the steady cluster's next 200 ms tick.)
        let steady_now = s
            .wait_for("/api/v1/clusters/steady", &format!("the steady cluster's next cycle ({what})"), |r| {
                r.json()["last_cycle"] != steady_before
            })
            .json();
        assert_eq!(steady_now["status"], "ok", "{what}: {steady_now}");
        assert_ne!(steady_now["last_cycle"], steady_before, "{what}: the steady cluster kept cycling");
        assert!(!unreachable_firing(&s, "steady"));

        flaky.sim.set_faults(Faults::default());
        s.wait_for("/api/v1/clusters/flaky", &format!("recovery after {what}"), |r| {
            let d = r.json();
            d["error"].is_null() && d["pods"] == pods
        });
        s.wait_for("/api/v1/alerts", &format!("the unreachable alert resolved ({what})"), |_| {
            !unreachable_firing(&s, "flaky")
        });
    }
    // A resolver that gives up slowly makes it a timeout now and then: either names the host.
    let nowhere = cluster_doc(&s, "nowhere");
    let error = nowhere["error"].as_str().unwrap();
    assert!(
        error
            == "The host name api.nowhere.invalid could not be resolved (https://api.nowhere.invalid:6443 while reading version)"
            || error == "No answer from https://api.nowhere.invalid:6443 while reading version within 2 s",
        "{error}"
    );
    assert!(unreachable_firing(&s, "nowhere"));
    let log = s.log();
    assert!(!log.contains("panicked"), "{log}");
    flaky.assert_only_reads();
    steady.assert_only_reads();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_directory_that_cannot_be_used_does_not_stop_the_monitoring() {
    let h = Harness::start(scenario::trouble(jiff::Timestamp::now())).await;
    let cfg = write_config(h.dir.path(), "", &[("lab", &h, "0.2s")]);
    // /proc refuses new directories, even to root.
    let text = std::fs::read_to_string(&cfg).unwrap();
    let start = text.find("state_dir = ").unwrap();
    let end = start + text[start..].find('\n').unwrap();
    std::fs::write(&cfg, format!("{}state_dir = \"/proc/dumbmonit-state\"{}", &text[..start], &text[end..])).unwrap();
    let s = Served::start(&cfg, &[]);
    let page = s.wait_for("/clusters/lab", "the cluster's data", |r| r.body.contains("node-3"));
    assert!(
        page.body.contains("<p class=\"persistence\">The state directory /proc/dumbmonit-state cannot be used:"),
        "{}",
        page.body
    );
    assert!(page.body.contains("The state is kept in memory only"));
    assert!(s.get("/").body.contains("class=\"persistence\""), "said on every page");
    let monitor = s.get("/api/v1/monitor").json();
    assert_eq!(monitor["state_saved"], false);
    // The rules still run: the pending alerts are there, held in memory.
    let alerts = s.get("/api/v1/alerts").json();
    assert!(alerts.as_array().unwrap().iter().any(|a| a["alertname"] == "KubernetesNodeNotReady"), "{alerts}");
    // History and restart lines read from the same memory.
    s.wait_for("/clusters/lab", "a history point", |r| r.body.contains("History, last 24 hours"));
    assert!(s.log().contains("monitoring goes on with the state in memory only"));
}

/// A small tmpfs, mounted for the test and unmounted when dropped.
struct SmallDisk {
    dir: std::path::PathBuf,
}

impl SmallDisk {
    fn mount(dir: &std::path::Path, size: &str) -> Result<SmallDisk, String> {
        std::fs::create_dir_all(dir).unwrap();
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs", dir.to_str().unwrap()])
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        Ok(SmallDisk { dir: dir.to_path_buf() })
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_is_said_and_survived() {
    let h = Harness::start(scenario::trouble(jiff::Timestamp::now())).await;
    let disk = h.dir.path().join("disk");
    // Mounting needs root (as in CI); elsewhere the test says why it cannot run.
    let _mounted = match SmallDisk::mount(&disk, "2m") {
        Ok(m) => m,
        Err(e) if unsafe { libc::geteuid() } != 0 => {
            eprintln!("a_full_disk_is_said_and_survived needs root to mount a tmpfs: {e}");
            return;
        }
        Err(e) => panic!("mounting a tmpfs as root failed: {e}"),
    };
    let cfg = write_config(h.dir.path(), "", &[("lab", &h, "0.1s")]);
    let text = std::fs::read_to_string(&cfg).unwrap();
    let start = text.find("state_dir = ").unwrap();
    let end = start + text[start..].find('\n').unwrap();
    std::fs::write(&cfg, format!("{}state_dir = {:?}{}", &text[..start], disk.join("state"), &text[end..])).unwrap();
    let s = Served::start(&cfg, &[]);
    s.wait_for("/api/v1/monitor", "a saved cycle", |r| r.json()["state_saved"] == true);
    s.wait_for("/clusters/lab", "the cluster's data", |r| r.body.contains("node-3"));

    // Fill the disk.
    let filler = disk.join("filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    let block = vec![0u8; 64 * 1024];
    while std::io::Write::write_all(&mut f, &block).is_ok() {}
    drop(f);
    let page = s.wait_for("/clusters/lab", "the full disk said", |r| r.body.contains("class=\"persistence\""));
    assert!(page.body.contains("The last cycle could not be saved:"), "{}", page.body);
    assert!(page.body.contains("node-3"), "the monitoring goes on");
    let before = s.get("/api/v1/clusters/lab").json()["last_cycle"].clone();
    s.wait_for("/api/v1/clusters/lab", "cycles while the disk is full", |r| r.json()["last_cycle"] != before);
    assert!(s.log().contains("cannot persist the cycle, monitoring goes on"));

    // Space again: saving resumes and the notice goes.
    std::fs::remove_file(&filler).unwrap();
    s.wait_for("/api/v1/monitor", "saving again", |r| r.json()["state_saved"] == true);
    assert!(!s.get("/clusters/lab").body.contains("class=\"persistence\""));
}

/// Reads the monitor's own figures.
fn figures(s: &Served) -> (u64, u64, u64, u64) {
    let m = s.get("/api/v1/monitor").json();
    let n = |k: &str| m[k].as_u64().unwrap_or_else(|| panic!("{k} in {m}"));
    (n("resident_memory_bytes"), n("open_fds"), n("tasks"), n("threads"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_three_clusters_over_500_cycles() {
    let now = jiff::Timestamp::now();
    let a = Harness::start(scenario::trouble(now)).await;
    let b = Harness::start(scenario::healthy(now)).await;
    let flapping = Harness::start(scenario::healthy(now)).await;
    let cfg =
        write_config(a.dir.path(), "", &[("a", &a, "0.02s"), ("b", &b, "0.02s"), ("flapping", &flapping, "0.02s")]);
    let s = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", "2026-01-01T00:00:00Z/60")]);
    let cycles = |h: &Harness| h.sim.requests().iter().filter(|r| r.path == "/version").count();
    let wait_cycles = |n: usize| {
        let deadline = Instant::now() + Duration::from_secs(600);
        // Every cluster has done `n` cycles.
        while [&a, &b, &flapping].iter().any(|h| cycles(h) < n) {
            assert!(Instant::now() < deadline, "cycles too slow: {} {} {}", cycles(&a), cycles(&b), cycles(&flapping));
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let mut flip = false;
    let mut samples = Vec::new();
    let started = Instant::now();
    for block in 0..10 {
        // The flapping cluster fails for 25 cycles, then is healthy for 25.
        flapping.sim.set_faults(if flip {
            Faults { fail_status: Some(503), ..Default::default() }
        } else {
            Faults::default()
        });
        flip = !flip;
        wait_cycles((block + 1) * 50);
        samples.push((cycles(&flapping), figures(&s)));
    }
    let elapsed = started.elapsed();
    println!("soak: 3 clusters, {} cycles of the flapping one in {elapsed:?}", cycles(&flapping));
    println!("| cycles | RSS MB | open fds | tasks | threads |");
    for (c, (rss, fds, tasks, threads)) in &samples {
        println!("| {c} | {:.1} | {fds} | {tasks} | {threads} |", *rss as f64 / 1e6);
    }
    // Flat: after the first 100 cycles have warmed everything up, nothing keeps growing.
    let warm = &samples[2];
    let last = samples.last().unwrap();
    let (rss0, fds0, tasks0, _) = warm.1;
    let (rss1, fds1, tasks1, _) = last.1;
    assert!(rss1 < rss0 + 8_000_000, "resident memory grew from {rss0} to {rss1}");
    assert!(fds1 <= fds0 + 2, "open descriptors grew from {fds0} to {fds1}");
    assert!(tasks1 <= tasks0 + 2, "tasks grew from {tasks0} to {tasks1}");
    assert!(!s.log().contains("panicked"));
}
