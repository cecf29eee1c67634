//! Many clusters from one `serve`: `cargo bench --bench clusters` (counts with
//! `BENCH_CLUSTERS=100,1000`, the time watched per count with `BENCH_WATCH_SECONDS`, 130 by
//! default: two intervals and a little; `BENCH_CLOSE=1` makes the simulator close every
//! connection after its answer, to show what idle kept-alive connections cost; `BENCH_MODES`,
//! `list,watch` by default: each count in list mode, then in watch mode, `watch = true`; empty:
//! neither, for the PostgreSQL table alone). Prints
//! a table.
//!
//! For each count, one simulated API server serves that many clusters under path prefixes
//! (`/c/i`), each about 100 pods in the envelope's proportions, and a real `serve` (release build)
//! watches them all at a 60 s interval. Measured while the cycles run: how many clusters were read
//! within the first interval; how late cycles start after their schedule (p50, p99, from serve's
//! /api/v1/monitor); SQLite commit time per cycle; resident memory (peak, and per cluster); the
//! overview page's and /metrics' p95 latency, fetched one after another every second; serve's CPU
//! seconds per minute over the whole watch (the first interval's reads and lists included) and
//! over its last 60 s (steady state); the most threads serve had, sampled every second. The simulator offers HTTP/2, as kube-apiserver does: all
//! the watches of a cluster share one connection (`BENCH_HTTP2=0`: HTTP/1.1 only).
//! `BENCH_WRAP` runs `serve` under another command, a heap profiler (`BENCH_WRAP="heaptrack -o
//! /tmp/serve"`): the memory and CPU columns are then the wrapper's, not serve's, and serve is
//! killed with the wrapper's process group at the end of each row.
//!
//! `BENCH_POSTGRES=1` adds, for each count, two `serve` replicas sharing one PostgreSQL (Debian's,
//! started as an unprivileged cluster in a temporary directory, as the tests do) over the same
//! simulated clusters, in list mode: their commit time per cycle (p50, p99, the worse replica's),
//! the database's size at the end of the watch, PostgreSQL's CPU seconds per minute (the
//! postmaster, every backend alive, and the backends it reaped), and each replica's CPU and RSS,
//! in a second table beside the SQLite rows of the same count. `BENCH_POSTGRES_SECONDS` sets how
//! long the replicas are watched (`BENCH_WATCH_SECONDS` by default; 3600 gives the database's size
//! after an hour); the size is also read after the first ten minutes when the watch is longer.
//!
//! Every figure is checked before its row is printed: an answer that does not parse (the JSON
//! read as a client reads it, decompressed when it comes gzip), a figure missing from
//! /api/v1/monitor, no cluster read, or a `serve` that ended stops the benchmark with an error
//! naming it (exit status 1).

mod common;
#[path = "../tests/common/postgres.rs"]
#[allow(dead_code)]
mod pg;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Killed, Measured, above_zero, get, number};
use dumbmonit_sim::{Sim, SimOptions, scenario};

struct Row {
    clusters: usize,
    watch: bool,
    /// CPU seconds a minute: over the whole watch, and over its last minute.
    cpu: (f64, f64),
    read_in_first_interval: usize,
    lag: (f64, f64),
    commit: (f64, f64),
    peak_mb: f64,
    overview_p95: Duration,
    metrics_p95: Duration,
    /// The /metrics body as sent with gzip, and its plain size.
    metrics_size: (usize, usize),
    /// The SQLite database's files at the end of the watch (with its write-ahead log).
    state_size: f64,
    /// The most threads the process had, sampled every second.
    threads: usize,
}

/// `program`, or the command `BENCH_WRAP` names (split at spaces) with `program` after it, in a
/// process group of its own ([`Group`] ends it whole: a wrapper may run `program` as its child);
/// and whether it is wrapped.
fn wrapped(program: &str) -> (Command, bool) {
    use std::os::unix::process::CommandExt;
    match std::env::var("BENCH_WRAP") {
        Ok(wrap) if !wrap.trim().is_empty() => {
            let mut words = wrap.split_whitespace();
            let mut command = Command::new(words.next().unwrap());
            command.args(words).arg(program).process_group(0);
            (command, true)
        }
        _ => (Command::new(program), false),
    }
}

/// A wrapped `serve`'s process group, killed when dropped (before the wrapper itself is).
struct Group(Option<u32>);

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            let _ = Command::new("kill").args(["-KILL", "--", &format!("-{pid}")]).status();
        }
    }
}

fn measure(count: usize, dir: &Path, watch: Duration, watch_mode: bool) -> Measured<Row> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let now = jiff::Timestamp::now();
    let http2 = std::env::var("BENCH_HTTP2").map(|v| v != "0").unwrap_or(true);
    let options = SimOptions { http2, ..SimOptions::default() };
    let sim = rt
        .block_on(Sim::start_fleet(options, scenario::envelope(100, now), count))
        .map_err(|e| format!("the simulator did not start: {e}"))?;
    if std::env::var("BENCH_CLOSE").is_ok() {
        sim.set_faults(dumbmonit_sim::Faults { close_connections: true, ..Default::default() });
    }
    std::fs::write(dir.join("token"), sim.token()).unwrap();
    std::fs::write(dir.join("ca.crt"), sim.ca_pem()).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let mut config = format!("listen = \"{addr}\"\nstate_dir = {:?}\n\n", p("state"));
    for i in 0..count {
        config.push_str(&format!(
            "[[cluster]]\nname = \"c{i:05}\"\naddress = \"{}\"\ntoken_file = {:?}\nca_file = {:?}\ninterval = \"60s\"\nwatch = {watch_mode}\n\n",
            sim.member_url(i),
            p("token"),
            p("ca.crt")
        ));
    }
    std::fs::write(dir.join("dumbmonit.toml"), config).unwrap();
    let log = dir.join("serve.log");
    let (mut command, is_wrapped) = wrapped(env!("CARGO_BIN_EXE_dumbmonit"));
    let mut serve = Killed(
        command
            .args(["serve", "--config", &p("dumbmonit.toml")])
            .stderr(std::fs::File::create(&log).unwrap())
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("serve did not start: {e}"))?,
    );
    let pid = serve.0.id();
    let group = Group(is_wrapped.then_some(pid));
    let started = Instant::now();
    while get(&addr, "/healthz", false).is_err() {
        common::alive(&mut serve.0, "serve", Some(&log))?;
        if started.elapsed() > Duration::from_secs(120) {
            return Err(format!("serve did not answer /healthz within 120 s at {count} clusters"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let started = Instant::now();
    let cpu_at_start = common::cpu_seconds(pid)?;
    let mut cpu_minute_ago: Option<(Instant, f64)> = None;
    let (mut overview, mut metrics) = (Vec::new(), Vec::new());
    let mut read_in_first_interval = None;
    let mut peak: f64 = 0.0;
    let mut threads = 0;
    let mut gzipped = 0;
    while started.elapsed() < watch {
        let tick = Instant::now();
        common::alive(&mut serve.0, "serve", Some(&log))?;
        overview.push(get(&addr, "/", true)?.1);
        // As Prometheus asks: only its size and time are taken, the body is not decompressed.
        let (answer, took) = get(&addr, "/metrics", true)?;
        if !answer.gzipped() {
            return Err("/metrics did not answer gzip to Accept-Encoding: gzip".into());
        }
        gzipped = answer.wire.len();
        metrics.push(took);
        peak = peak.max(common::memory_mb(pid)?.1);
        threads = threads.max(common::threads(pid)?);
        if cpu_minute_ago.is_none() && started.elapsed() + Duration::from_secs(61) >= watch {
            cpu_minute_ago = Some((Instant::now(), common::cpu_seconds(pid)?));
        }
        if read_in_first_interval.is_none() && started.elapsed() >= Duration::from_secs(62) {
            let clusters =
                get(&addr, "/api/v1/clusters", true)?.0.json().map_err(|e| format!("/api/v1/clusters: {e}"))?;
            let list = clusters.as_array().ok_or("/api/v1/clusters is not a list")?;
            if list.len() != count {
                return Err(format!("/api/v1/clusters lists {} clusters, the configuration {count}", list.len()));
            }
            read_in_first_interval = Some(list.iter().filter(|c| c["last_good_cycle"].is_string()).count());
        }
        std::thread::sleep(Duration::from_secs(1).saturating_sub(tick.elapsed()));
    }
    let read_in_first_interval =
        read_in_first_interval.ok_or("the watch ended before the first interval did (BENCH_WATCH_SECONDS)")?;
    above_zero("clusters read in the first interval", read_in_first_interval as f64)?;
    let (plain, _) = get(&addr, "/metrics", false)?;
    if plain.header("content-encoding").is_some() {
        return Err("/metrics was compressed when not asked to be".into());
    }
    let monitor = get(&addr, "/api/v1/monitor", true)?.0.json().map_err(|e| format!("/api/v1/monitor: {e}"))?;
    let q = |k: &str| -> Measured<(f64, f64)> {
        let at = |p: &str| number("/api/v1/monitor", &monitor, &format!("/{k}/{p}"));
        Ok((at("p50")?, at("p99")?))
    };
    common::alive(&mut serve.0, "serve", Some(&log))?;
    let cpu_now = common::cpu_seconds(pid)?;
    let (last_minute_at, cpu_then) = cpu_minute_ago.ok_or("the watch was too short for a last minute")?;
    let minutes = |d: Duration| d.as_secs_f64() / 60.0;
    let row = Row {
        clusters: count,
        watch: watch_mode,
        cpu: (
            (cpu_now - cpu_at_start) / minutes(started.elapsed()),
            (cpu_now - cpu_then) / minutes(last_minute_at.elapsed()),
        ),
        read_in_first_interval,
        lag: q("cycle_start_lag_seconds")?,
        commit: q("commit_seconds")?,
        peak_mb: above_zero("RSS peak", peak.max(common::memory_mb(pid)?.0))?,
        overview_p95: common::p95("the overview's latency", overview)?,
        metrics_p95: common::p95("/metrics' latency", metrics)?,
        metrics_size: (
            above_zero("/metrics gzip size", gzipped as f64)? as usize,
            above_zero("/metrics plain size", plain.wire.len() as f64)? as usize,
        ),
        state_size: above_zero("the state's size", sqlite_size(&dir.join("state")))?,
        threads,
    };
    drop(group);
    drop(serve);
    drop(sim);
    Ok(row)
}

/// The SQLite state's files, in bytes.
fn sqlite_size(state: &Path) -> f64 {
    ["", "-wal", "-shm"]
        .iter()
        .filter_map(|suffix| std::fs::metadata(state.join(format!("dumbmonit.db{suffix}"))).ok())
        .map(|m| m.len() as f64)
        .sum()
}

/// A free port on loopback (the PostgreSQL starter's).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn path(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// Two replicas sharing PostgreSQL, as the second table gives them.
struct Shared {
    clusters: usize,
    read_in_first_interval: usize,
    commit: (f64, f64),
    db_size: f64,
    /// The database's size after ten minutes, when the watch lasted longer.
    db_size_ten_minutes: Option<f64>,
    pg_cpu: f64,
    replica_cpu: (f64, f64),
    replica_peak_mb: (f64, f64),
    watched: Duration,
}

/// PostgreSQL's CPU seconds so far: the postmaster's, the children it reaped, and every child
/// alive (its backends, the pool's connections among them).
fn postgres_cpu(postmaster: u32) -> Measured<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{postmaster}/stat")).map_err(|e| format!("postmaster: {e}"))?;
    let rest = stat.rsplit_once(')').map(|(_, r)| r).ok_or("postmaster: unreadable stat")?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // SAFETY: sysconf only reads a system constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    // utime, stime, cutime, cstime: fields 14 to 17 of stat, 11 to 14 after the command.
    let reaped: f64 = (11..15).map(|i| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0)).sum::<f64>() / hz;
    let mut alive = 0.0;
    for entry in std::fs::read_dir("/proc").map_err(|e| format!("/proc: {e}"))?.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let parent = stat.rsplit_once(')').and_then(|(_, r)| r.split_whitespace().nth(1)?.parse::<u32>().ok());
        if parent == Some(postmaster) {
            alive += common::cpu_seconds(pid).unwrap_or(0.0);
        }
    }
    Ok(reaped + alive)
}

fn measure_shared(count: usize, dir: &Path, watch: Duration) -> Measured<Shared> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let now = jiff::Timestamp::now();
    let sim = rt
        .block_on(Sim::start_fleet(
            SimOptions { http2: true, ..SimOptions::default() },
            scenario::envelope(100, now),
            count,
        ))
        .map_err(|e| format!("the simulator did not start: {e}"))?;
    let db = pg::Postgres::start();
    db.database("bench");
    std::fs::write(dir.join("token"), sim.token()).unwrap();
    std::fs::write(dir.join("ca.crt"), sim.ca_pem()).unwrap();
    let mut replicas = Vec::new();
    for name in ["a", "b"] {
        let own = dir.join(name);
        std::fs::create_dir_all(&own).unwrap();
        let port = free_port();
        let mut config = format!(
            "listen = \"127.0.0.1:{port}\"\nstate_dir = {:?}\n\n{}\n",
            path(&own.join("state")),
            db.section(&own, "bench", &format!("replica = {name:?}\npool = 8"))
        );
        for i in 0..count {
            config.push_str(&format!(
                "[[cluster]]\nname = \"c{i:05}\"\naddress = \"{}\"\ntoken_file = {:?}\nca_file = {:?}\ninterval = \"60s\"\n\n",
                sim.member_url(i),
                path(&dir.join("token")),
                path(&dir.join("ca.crt"))
            ));
        }
        std::fs::write(own.join("dumbmonit.toml"), config).unwrap();
        let log = own.join("serve.log");
        let child = Killed(
            Command::new(env!("CARGO_BIN_EXE_dumbmonit"))
                .args(["serve", "--config", &path(&own.join("dumbmonit.toml"))])
                .stderr(std::fs::File::create(&log).unwrap())
                .stdout(Stdio::null())
                .spawn()
                .map_err(|e| format!("serve did not start: {e}"))?,
        );
        replicas.push((format!("127.0.0.1:{port}"), child, log));
    }
    let started = Instant::now();
    for (addr, child, log) in &mut replicas {
        while get(addr, "/healthz", false).is_err() {
            common::alive(&mut child.0, "serve", Some(log))?;
            if started.elapsed() > Duration::from_secs(120) {
                return Err(format!("a replica did not answer /healthz within 120 s at {count} clusters"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let postmaster = db.pid().ok_or("PostgreSQL is not running")?;
    let started = Instant::now();
    let pg_at_start = postgres_cpu(postmaster)?;
    let cpu_at_start: Vec<f64> =
        replicas.iter().map(|(_, c, _)| common::cpu_seconds(c.0.id())).collect::<Measured<_>>()?;
    let mut peaks = [0.0f64; 2];
    let mut read_in_first_interval = None;
    let db_size = || -> Measured<f64> {
        db.psql("bench", "SELECT pg_database_size('bench')")
            .trim()
            .parse()
            .map_err(|e| format!("pg_database_size: {e}"))
    };
    let mut db_size_ten_minutes = None;
    while started.elapsed() < watch {
        let tick = Instant::now();
        if db_size_ten_minutes.is_none() && started.elapsed() >= Duration::from_secs(600) {
            db_size_ten_minutes = Some(above_zero("the database's size at ten minutes", db_size()?)?);
        }
        for (i, (_, child, log)) in replicas.iter_mut().enumerate() {
            common::alive(&mut child.0, "serve", Some(log))?;
            peaks[i] = peaks[i].max(common::memory_mb(child.0.id())?.1);
        }
        if read_in_first_interval.is_none() && started.elapsed() >= Duration::from_secs(62) {
            let mut read = std::collections::BTreeSet::new();
            for (addr, _, _) in &replicas {
                let clusters =
                    get(addr, "/api/v1/clusters", true)?.0.json().map_err(|e| format!("/api/v1/clusters: {e}"))?;
                for c in clusters.as_array().ok_or("/api/v1/clusters is not a list")? {
                    if c["last_good_cycle"].is_string() {
                        read.insert(c["name"].as_str().unwrap_or_default().to_string());
                    }
                }
            }
            read_in_first_interval = Some(read.len());
        }
        std::thread::sleep(Duration::from_secs(1).saturating_sub(tick.elapsed()));
    }
    let minutes = started.elapsed().as_secs_f64() / 60.0;
    let mut commit = (0.0f64, 0.0f64);
    let mut cpu = Vec::new();
    for ((addr, child, _), at_start) in replicas.iter().zip(&cpu_at_start) {
        let monitor = get(addr, "/api/v1/monitor", true)?.0.json().map_err(|e| format!("/api/v1/monitor: {e}"))?;
        let at = |p: &str| number("/api/v1/monitor", &monitor, &format!("/commit_seconds/{p}"));
        commit = (commit.0.max(at("p50")?), commit.1.max(at("p99")?));
        cpu.push((common::cpu_seconds(child.0.id())? - at_start) / minutes);
    }
    let pg_cpu = (postgres_cpu(postmaster)? - pg_at_start) / minutes;
    let size = db_size()?;
    let row = Shared {
        clusters: count,
        read_in_first_interval: read_in_first_interval
            .ok_or("the watch ended before the first interval did (BENCH_WATCH_SECONDS)")?,
        commit,
        db_size: above_zero("the database's size", size)?,
        db_size_ten_minutes,
        pg_cpu: above_zero("PostgreSQL's CPU", pg_cpu)?,
        replica_cpu: (cpu[0], cpu[1]),
        replica_peak_mb: (above_zero("replica a's RSS", peaks[0])?, above_zero("replica b's RSS", peaks[1])?),
        watched: started.elapsed(),
    };
    drop(replicas);
    drop(db);
    drop(sim);
    Ok(row)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    common::run("clusters", || {
        let counts = std::env::var("BENCH_CLUSTERS")
            .unwrap_or_else(|_| "100,1000,3000,5000".into())
            .split(',')
            .map(|s| s.trim().parse().map_err(|_| format!("BENCH_CLUSTERS: {s:?} is not a number of clusters")))
            .collect::<Measured<Vec<usize>>>()?;
        let watch = match std::env::var("BENCH_WATCH_SECONDS") {
            Ok(s) => s.parse().map_err(|_| format!("BENCH_WATCH_SECONDS: {s:?} is not a number of seconds"))?,
            Err(_) => 130,
        };
        let postgres_watch = match std::env::var("BENCH_POSTGRES_SECONDS") {
            Ok(s) => s.parse().map_err(|_| format!("BENCH_POSTGRES_SECONDS: {s:?} is not a number of seconds"))?,
            Err(_) => watch,
        };
        if postgres_watch < 63 {
            return Err(format!(
                "BENCH_POSTGRES_SECONDS={postgres_watch}: the watch must outlast the first interval (63 s or more)"
            ));
        }
        if watch < 63 {
            return Err(format!(
                "BENCH_WATCH_SECONDS={watch}: the watch must outlast the first interval (63 s or more)"
            ));
        }
        if counts.contains(&0) {
            return Err("BENCH_CLUSTERS: at least one cluster".into());
        }
        let modes = std::env::var("BENCH_MODES")
            .unwrap_or_else(|_| "list,watch".into())
            .split(',')
            .filter(|m| !m.trim().is_empty())
            .map(|m| match m.trim() {
                "list" => Ok(false),
                "watch" => Ok(true),
                other => Err(format!("BENCH_MODES: {other:?} is neither list nor watch")),
            })
            .collect::<Measured<Vec<bool>>>()?;
        println!(
            "| clusters | mode | read in the first interval | start lag p50 / p99 | commit p50 / p99 | RSS peak (per cluster) | CPU s/min (whole / last minute) | overview p95 | /metrics p95 | /metrics gzip / plain | SQLite size | threads (most) |"
        );
        println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        let counts_again = counts.clone();
        for count in counts {
            for &watch_mode in &modes {
                let dir = tempfile::tempdir().unwrap();
                let r = measure(count, dir.path(), Duration::from_secs(watch), watch_mode)?;
                println!(
                    "| {} | {} | {} | {:.3} / {:.3} s | {:.1} / {:.1} ms | {:.0} MB ({:.0} KB) | {:.1} / {:.1} | {:.0} ms | {:.0} ms | {:.1} / {:.1} MB | {:.1} MB | {} |",
                    r.clusters,
                    if r.watch { "watch" } else { "list" },
                    r.read_in_first_interval,
                    r.lag.0,
                    r.lag.1,
                    r.commit.0 * 1000.0,
                    r.commit.1 * 1000.0,
                    r.peak_mb,
                    r.peak_mb * 1024.0 / r.clusters as f64,
                    r.cpu.0,
                    r.cpu.1,
                    r.overview_p95.as_secs_f64() * 1000.0,
                    r.metrics_p95.as_secs_f64() * 1000.0,
                    r.metrics_size.0 as f64 / 1e6,
                    r.metrics_size.1 as f64 / 1e6,
                    r.state_size / 1e6,
                    r.threads
                );
            }
        }
        if std::env::var("BENCH_POSTGRES").is_ok_and(|v| v == "1") {
            println!();
            println!(
                "| clusters | shape | read in the first interval | commit p50 / p99 | database size (10 min / end) | PostgreSQL CPU s/min | replicas' CPU s/min | replicas' RSS peak | watched |"
            );
            println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|");
            for &count in &counts_again {
                let dir = tempfile::tempdir().unwrap();
                let r = measure_shared(count, dir.path(), Duration::from_secs(postgres_watch))?;
                let ten = r.db_size_ten_minutes.map_or("—".to_string(), |s| format!("{:.1} MB", s / 1e6));
                println!(
                    "| {} | 2 replicas, PostgreSQL, list | {} | {:.1} / {:.1} ms | {ten} / {:.1} MB | {:.1} | {:.1} + {:.1} | {:.0} + {:.0} MB | {:.0} s |",
                    r.clusters,
                    r.read_in_first_interval,
                    r.commit.0 * 1000.0,
                    r.commit.1 * 1000.0,
                    r.db_size / 1e6,
                    r.pg_cpu,
                    r.replica_cpu.0,
                    r.replica_cpu.1,
                    r.replica_peak_mb.0,
                    r.replica_peak_mb.1,
                    r.watched.as_secs_f64()
                );
            }
        }
        Ok(())
    });
}
