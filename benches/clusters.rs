//! Many clusters from one `serve`: `cargo bench --bench clusters` (counts with
//! `BENCH_CLUSTERS=100,1000`, the time watched per count with `BENCH_WATCH_SECONDS`, 130 by
//! default: two intervals and a little; `BENCH_CLOSE=1` makes the simulator close every
//! connection after its answer, to show what idle kept-alive connections cost). Prints a
//! table; asserts nothing.
//!
//! For each count, one simulated API server serves that many clusters under path prefixes
//! (`/c/i`), each about 100 pods in the envelope's proportions, and a real `serve` (release build)
//! watches them all at a 60 s interval. Measured while the cycles run: how many clusters were read
//! within the first interval; how late cycles start after their schedule (p50, p99, from serve's
//! /api/v1/monitor); SQLite commit time per cycle; resident memory (peak, and per cluster); the
//! overview page's and /metrics' p95 latency, fetched one after another every second.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use dumbmonit_sim::{Sim, SimOptions, scenario};
use serde_json::Value;

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A GET on loopback: (status, body, how long it took).
fn get(port: u16, path: &str) -> (u16, Vec<u8>, Duration) {
    let started = Instant::now();
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return (0, Vec::new(), started.elapsed());
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(60)));
    let _ = write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n");
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let took = started.elapsed();
    let status = String::from_utf8_lossy(&raw[..raw.len().min(16)])
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let at = raw.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4).unwrap_or(raw.len());
    (status, raw.split_off(at), took)
}

/// The body of a GET without compression.
fn get_plain(port: u16, path: &str) -> Vec<u8> {
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else { return Vec::new() };
    let _ = write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n");
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let at = raw.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4).unwrap_or(raw.len());
    raw.split_off(at)
}

fn rss_mb(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
            / 1024.0
    };
    (field("VmHWM:"), field("VmRSS:"))
}

fn p95(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(((v.len().max(1) - 1) as f64 * 0.95).round() as usize).copied().unwrap_or_default()
}

struct Row {
    clusters: usize,
    read_in_first_interval: usize,
    lag: (f64, f64),
    commit: (f64, f64),
    peak_mb: f64,
    overview_p95: Duration,
    metrics_p95: Duration,
    /// The /metrics body as sent with gzip, and its plain size.
    metrics_size: (usize, usize),
}

fn measure(count: usize, dir: &Path, watch: Duration) -> Row {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let now = jiff::Timestamp::now();
    let sim = rt.block_on(Sim::start_fleet(SimOptions::default(), scenario::envelope(100, now), count)).unwrap();
    if std::env::var("BENCH_CLOSE").is_ok() {
        sim.set_faults(dumbmonit_sim::Faults { close_connections: true, ..Default::default() });
    }
    std::fs::write(dir.join("token"), sim.token()).unwrap();
    std::fs::write(dir.join("ca.crt"), sim.ca_pem()).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let mut config = format!("listen = \"127.0.0.1:{port}\"\nstate_dir = {:?}\n\n", p("state"));
    for i in 0..count {
        config.push_str(&format!(
            "[[cluster]]\nname = \"c{i:05}\"\naddress = \"{}\"\ntoken_file = {:?}\nca_file = {:?}\ninterval = \"60s\"\n\n",
            sim.member_url(i),
            p("token"),
            p("ca.crt")
        ));
    }
    std::fs::write(dir.join("dumbmonit.toml"), config).unwrap();
    let serve = Killed(
        Command::new(env!("CARGO_BIN_EXE_dumbmonit"))
            .args(["serve", "--config", &p("dumbmonit.toml")])
            .stderr(std::fs::File::create(dir.join("serve.log")).unwrap())
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let started = Instant::now();
    while get(port, "/healthz").0 != 200 {
        assert!(started.elapsed() < Duration::from_secs(120), "serve did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    let started = Instant::now();
    let (mut overview, mut metrics) = (Vec::new(), Vec::new());
    let mut read_in_first_interval = 0;
    let mut peak: f64 = 0.0;
    let mut gzipped = 0;
    while started.elapsed() < watch {
        let tick = Instant::now();
        overview.push(get(port, "/").2);
        let (_, body, took) = get(port, "/metrics");
        gzipped = body.len();
        metrics.push(took);
        peak = peak.max(rss_mb(serve.0.id()).1);
        if read_in_first_interval == 0 && started.elapsed() >= Duration::from_secs(62) {
            let (_, body, _) = get(port, "/api/v1/clusters");
            let clusters: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            read_in_first_interval =
                clusters.as_array().map(|a| a.iter().filter(|c| c["last_good_cycle"].is_string()).count()).unwrap_or(0);
        }
        std::thread::sleep(Duration::from_secs(1).saturating_sub(tick.elapsed()));
    }
    let plain = get_plain(port, "/metrics").len();
    let (_, body, _) = get(port, "/api/v1/monitor");
    let monitor: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let q = |k: &str| (monitor[k]["p50"].as_f64().unwrap_or(f64::NAN), monitor[k]["p99"].as_f64().unwrap_or(f64::NAN));
    let row = Row {
        clusters: count,
        read_in_first_interval,
        lag: q("cycle_start_lag_seconds"),
        commit: q("commit_seconds"),
        peak_mb: peak.max(rss_mb(serve.0.id()).0),
        overview_p95: p95(overview),
        metrics_p95: p95(metrics),
        metrics_size: (gzipped, plain),
    };
    drop(serve);
    drop(sim);
    row
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let counts: Vec<usize> = std::env::var("BENCH_CLUSTERS")
        .unwrap_or_else(|_| "100,1000,3000,5000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("BENCH_CLUSTERS: numbers of clusters"))
        .collect();
    let watch =
        Duration::from_secs(std::env::var("BENCH_WATCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(130));
    println!(
        "| clusters | read in the first interval | start lag p50 / p99 | commit p50 / p99 | RSS peak (per cluster) | overview p95 | /metrics p95 | /metrics gzip / plain |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for count in counts {
        let dir = tempfile::tempdir().unwrap();
        let r = measure(count, dir.path(), watch);
        println!(
            "| {} | {} | {:.3} / {:.3} s | {:.1} / {:.1} ms | {:.0} MB ({:.0} KB) | {:.0} ms | {:.0} ms | {:.1} / {:.1} MB |",
            r.clusters,
            r.read_in_first_interval,
            r.lag.0,
            r.lag.1,
            r.commit.0 * 1000.0,
            r.commit.1 * 1000.0,
            r.peak_mb,
            r.peak_mb * 1024.0 / r.clusters as f64,
            r.overview_p95.as_secs_f64() * 1000.0,
            r.metrics_p95.as_secs_f64() * 1000.0,
            r.metrics_size.0 as f64 / 1e6,
            r.metrics_size.1 as f64 / 1e6
        );
    }
}
