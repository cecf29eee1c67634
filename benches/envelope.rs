//! The benchmark at Kubernetes' envelope: `cargo bench --bench envelope` (sizes with
//! `BENCH_SIZES=1000,10000`, peers skipped with `BENCH_PEERS=0`, the serve part with
//! `BENCH_SERVE=0`, the steady state of list mode against watch mode with `BENCH_STEADY=0`, its
//! length with `BENCH_STEADY_MINUTES`). Prints tables; a figure it cannot measure (a tool that fails or does not
//! finish, wrk that fails or sees errors, a `serve` that ended) stops it with an error naming it
//! (exit status 1).
//!
//! For each size, the simulated API server serves pre-rendered pages (rendered and compressed
//! once, before anything is measured), and each tool runs as a child process: wall time, CPU
//! time and peak RSS come from wait4, bytes read from the server's count of body bytes sent.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Killed, Measured, Seen, above_zero, delays};
use dumbmonit::collect::workloads::{DaemonSetRecord, DeploymentRecord};
use dumbmonit::collect::{Event, Node, Pod, Pvc};
use dumbmonit_sim::api::Resource;
use dumbmonit_sim::{Sim, SimOptions, scenario};
use serde::Deserialize;
use serde::de::{DeserializeOwned, IgnoredAny};

struct Measure {
    wall: Duration,
    cpu: Duration,
    /// None for the in-process rows, which have no process of their own to measure.
    max_rss_kb: Option<i64>,
    bytes: u64,
}

/// Starts tools and reports their rusage. It is a small process started before the benchmark
/// grows: a child's peak RSS (ru_maxrss) keeps the high-water mark of the process it was forked
/// from, so the tools must not be forked from the benchmark itself.
struct Spawner {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl Drop for Spawner {
    fn drop(&mut self) {
        // Its input closed, the helper ends.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

const SPAWNER: &str = r#"
import json, os, signal, sys, time
for line in sys.stdin:
    req = json.loads(line)
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_RDWR)
        os.dup2(fd, 1); os.dup2(fd, 2)
        try:
            os.execvp(req["args"][0], req["args"])
        finally:
            os._exit(127)
    timed_out = False
    while True:
        p, status, ru = os.wait4(pid, os.WNOHANG)
        if p:
            break
        if not timed_out and time.monotonic() - start > req["timeout"]:
            os.kill(pid, signal.SIGKILL); timed_out = True
        time.sleep(0.002)
    code = os.waitstatus_to_exitcode(status)
    print(json.dumps({"wall": time.monotonic() - start, "cpu": ru.ru_utime + ru.ru_stime,
                      "maxrss_kb": ru.ru_maxrss, "code": code, "timed_out": timed_out}), flush=True)
"#;

impl Spawner {
    fn start() -> Measured<Spawner> {
        let mut child = Command::new("python3")
            .args(["-c", SPAWNER])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("python3 is needed to start the tools: {e}"))?;
        let stdin = child.stdin.take();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        Ok(Spawner { child, stdin, stdout })
    }

    /// Runs `args` to its end (killed after `timeout`); an error unless it ends within it, with
    /// an exit status in `success`.
    fn run(
        &mut self,
        args: &[String],
        success: std::ops::RangeInclusive<i64>,
        sim: &Sim,
        timeout: Duration,
    ) -> Measured<Measure> {
        use std::io::{BufRead, Write};
        let before = sim.bytes_sent();
        let req = serde_json::json!({"args": args, "timeout": timeout.as_secs_f64()});
        let stdin = self.stdin.as_mut().expect("open until dropped");
        writeln!(stdin, "{req}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let v: serde_json::Value = serde_json::from_str(&line).map_err(|_| "the spawner ended".to_string())?;
        let code = v["code"].as_i64().unwrap_or(-1);
        if v["timed_out"].as_bool().unwrap_or(true) {
            return Err(format!("{} did not finish within {} s", args[0], timeout.as_secs()));
        }
        if !success.contains(&code) {
            // 127: the spawner's exit when the tool could not be started.
            let why = if code == 127 { " (not installed?)" } else { "" };
            return Err(format!("{} ended with exit status {code}{why}", args[0]));
        }
        let what = |figure: &str| format!("{}'s {figure}", args[0]);
        let number = |key: &str, missing: f64| v[key].as_f64().unwrap_or(missing);
        Ok(Measure {
            wall: Duration::from_secs_f64(common::figure(&what("wall time"), number("wall", f64::NAN))?),
            cpu: Duration::from_secs_f64(common::figure(&what("CPU time"), number("cpu", f64::NAN))?),
            max_rss_kb: Some(above_zero(&what("peak RSS"), number("maxrss_kb", 0.0))? as i64),
            bytes: above_zero(&what("bytes read"), (sim.bytes_sent() - before) as f64)? as u64,
        })
    }
}

fn median(mut runs: Vec<Measure>) -> Measure {
    runs.sort_by_key(|m| m.wall);
    let mid = runs.len() / 2;
    runs.swap_remove(mid)
}

#[derive(Deserialize)]
#[serde(bound = "T: DeserializeOwned")]
struct Page<T> {
    items: Vec<T>,
}

fn parse_all(pages: &[(Resource, Vec<String>)]) -> (Duration, Duration) {
    fn views<T: dumbmonit::collect::FromApi>(bodies: &[String]) -> usize {
        bodies
            .iter()
            .map(|b| serde_json::from_str::<Page<dumbmonit::collect::Api<T>>>(b).expect("valid").items.len())
            .sum()
    }
    let mut best = (Duration::MAX, Duration::MAX);
    for _ in 0..3 {
        let t = Instant::now();
        for (_, bodies) in pages {
            for b in bodies {
                serde_json::from_str::<IgnoredAny>(b).expect("valid JSON");
            }
        }
        let scan = t.elapsed();
        let t = Instant::now();
        let mut n = 0;
        for (resource, bodies) in pages {
            n += match resource {
                Resource::Nodes => views::<Node>(bodies),
                Resource::Pods => views::<Pod>(bodies),
                Resource::Deployments | Resource::StatefulSets => views::<DeploymentRecord>(bodies),
                Resource::DaemonSets => views::<DaemonSetRecord>(bodies),
                Resource::PersistentVolumeClaims => views::<Pvc>(bodies),
                Resource::Events => views::<Event>(bodies),
                Resource::ApiServices => views::<dumbmonit::collect::optional::ApiService>(bodies),
                Resource::NodeMetrics | Resource::PodMetrics => views::<dumbmonit::collect::optional::Usage>(bodies),
                Resource::HorizontalPodAutoscalers => views::<dumbmonit::collect::kinds::hpa::Hpa>(bodies),
                Resource::Jobs => views::<dumbmonit::collect::kinds::job::Job>(bodies),
                Resource::CronJobs => views::<dumbmonit::collect::kinds::cronjob::CronJob>(bodies),
                Resource::PodDisruptionBudgets => views::<dumbmonit::collect::kinds::pdb::Pdb>(bodies),
                Resource::ResourceQuotas => views::<dumbmonit::collect::kinds::quota::Quota>(bodies),
                Resource::PersistentVolumes => views::<dumbmonit::collect::kinds::pv::Pv>(bodies),
                Resource::Leases => views::<dumbmonit::collect::kinds::lease::Lease>(bodies),
                Resource::ValidatingWebhookConfigurations => {
                    views::<dumbmonit::collect::kinds::webhook::Validating>(bodies)
                }
                Resource::MutatingWebhookConfigurations => {
                    views::<dumbmonit::collect::kinds::webhook::Mutating>(bodies)
                }
                Resource::Services => views::<dumbmonit::collect::backends::Service>(bodies),
                Resource::EndpointSlices => views::<dumbmonit::collect::backends::EndpointSlice>(bodies),
                Resource::Namespaces => views::<dumbmonit::collect::kinds::namespace::Namespace>(bodies),
            };
        }
        std::hint::black_box(n);
        best = (best.0.min(scan), best.1.min(t.elapsed()));
    }
    best
}

fn tool_version(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("").trim().to_string())
        .unwrap_or_else(|| "not found".into())
}

/// Fails unless `cmd args` runs and succeeds.
fn needs(cmd: &str, args: &[&str], what: &str) -> Measured<()> {
    match Command::new(cmd).args(args).stdout(Stdio::null()).stderr(Stdio::null()).status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("{what} is needed: `{cmd} {}` ended with {status}", args.join(" "))),
        Err(e) => Err(format!("{what} is needed: {cmd}: {e}")),
    }
}

fn row(size: usize, tool: &str, gzip: &str, m: &Measure) {
    println!(
        "| {size:>7} | {tool:<34} | {gzip:<4} | {:>8.2} | {:>8.2} | {:>9} | {:>8.1} |",
        m.wall.as_secs_f64(),
        m.cpu.as_secs_f64(),
        m.max_rss_kb.map(|kb| format!("{:.0}", kb as f64 / 1024.0)).unwrap_or_else(|| "–".into()),
        m.bytes as f64 / 1e6,
    );
}

const PYTHON: &str = r#"
import sys
from kubernetes import client
c = client.Configuration(); c.host = sys.argv[1]; c.ssl_ca_cert = sys.argv[2]
c.api_key = {"authorization": "Bearer " + open(sys.argv[3]).read().strip()}
api = client.CoreV1Api(client.ApiClient(c))
token, n = None, 0
while True:
    page = api.list_pod_for_all_namespaces(limit=500, _continue=token)
    n += len(page.items); token = page.metadata._continue
    if not token: break
print(n)
"#;

fn main() {
    common::run("envelope", envelope);
}

fn envelope() -> Measured<()> {
    let sizes = std::env::var("BENCH_SIZES")
        .unwrap_or_else(|_| "1000,10000,50000,150000".into())
        .split(',')
        .map(|s| s.trim().parse().map_err(|_| format!("BENCH_SIZES: {s:?} is not a number of pods")))
        .collect::<Measured<Vec<usize>>>()?;
    let peers = std::env::var("BENCH_PEERS").map(|v| v != "0").unwrap_or(true);
    let serve = std::env::var("BENCH_SERVE").map(|v| v != "0").unwrap_or(true);
    let steady = std::env::var("BENCH_STEADY").map(|v| v != "0").unwrap_or(true);
    // What the parts asked for need, before any table is begun.
    if peers {
        needs("kubectl", &["version", "--client"], "kubectl (or BENCH_PEERS=0)")?;
        needs("python3", &["-c", "import kubernetes"], "the Kubernetes Python client (or BENCH_PEERS=0)")?;
    }
    if serve {
        needs("sh", &["-c", "command -v wrk"], "wrk (apt-get install wrk, or BENCH_SERVE=0)")?;
    }
    let exe = env!("CARGO_BIN_EXE_dumbmonit");
    let mut spawner = Spawner::start()?;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("model name"))
        .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        .unwrap_or_default();
    println!("# DumbMonit at the envelope");
    println!();
    println!(
        "Machine: {} cores ({cpu}), {} GiB; simulator and tools on the same machine.",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        sys_mem_gib()
    );
    println!(
        "Date: {}. dumbmonit {}; {}; Python client {}.",
        jiff::Timestamp::now().strftime("%Y-%m-%d"),
        env!("CARGO_PKG_VERSION"),
        tool_version("kubectl", &["version", "--client"]),
        tool_version("python3", &["-c", "import kubernetes; print(kubernetes.__version__)"])
    );
    println!();
    println!("| pods    | tool (reads)                       | gzip | wall s   | CPU s    | peak RSS MB | MB read |");
    println!("|---------|------------------------------------|------|----------|----------|-----------|----------|");
    let dir = tempfile::tempdir().unwrap();
    for &size in &sizes {
        let now = jiff::Timestamp::now();
        let sim = rt.block_on(Sim::start(SimOptions::default(), dumbmonit_sim::Cluster::default())).unwrap();
        let mut some_pods: Vec<serde_json::Value> = Vec::new();
        scenario::envelope_into(size, now, &mut |resource, items| {
            if resource == Resource::Pods && some_pods.len() < 100 {
                some_pods.extend(items.iter().take(100 - some_pods.len()).cloned());
            }
            sim.extend(resource, items)
        });
        let pages = sim.pages();
        let total: usize = pages.iter().flat_map(|(_, b)| b.iter().map(String::len)).sum();
        let pod_bytes: usize =
            pages.iter().filter(|(r, _)| *r == Resource::Pods).flat_map(|(_, b)| b.iter().map(String::len)).sum();
        let (scan, views) = parse_all(&pages);
        drop(pages);
        let (token, ca) = (dir.path().join("token"), dir.path().join("ca.crt"));
        std::fs::write(&token, sim.token()).unwrap();
        std::fs::write(&ca, sim.ca_pem()).unwrap();
        let check: Vec<String> = [
            exe,
            "check",
            &sim.url(),
            "--token-file",
            token.to_str().unwrap(),
            "--ca-file",
            ca.to_str().unwrap(),
            "--output",
            "prometheus",
            "--timeout",
            "60",
        ]
        .map(String::from)
        .into();
        let long = Duration::from_secs(600);
        // Warm-up: every page rendered and compressed before anything is measured.
        // check exits 0, 1 or 2 on a cluster it could read.
        spawner.run(&check, 0..=2, &sim, long)?;
        sim.set_compression(false);
        spawner.run(&check, 0..=2, &sim, long)?;
        for gzip in [true, false] {
            sim.set_compression(gzip);
            let m = median((0..3).map(|_| spawner.run(&check, 0..=2, &sim, long)).collect::<Measured<_>>()?);
            row(size, "dumbmonit check (8 collections)", if gzip { "yes" } else { "no" }, &m);
        }
        sim.set_compression(true);
        let limit = Measure { wall: scan, cpu: scan, max_rss_kb: None, bytes: total as u64 };
        row(size, "serde_json scan, in-process", "–", &limit);
        let limit = Measure { wall: views, cpu: views, max_rss_kb: None, bytes: total as u64 };
        row(size, "serde_json into compact views", "–", &limit);
        if peers {
            let kubeconfig = dir.path().join("kubeconfig");
            std::fs::write(&kubeconfig, format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: sim\n  cluster:\n    server: {}\n    certificate-authority: {}\ncontexts:\n- name: sim\n  context: {{cluster: sim, user: sim}}\ncurrent-context: sim\nusers:\n- name: sim\n  user: {{token: {}}}\n",
                sim.url(), ca.display(), sim.token())).unwrap();
            let kubectl: Vec<String> = [
                "kubectl",
                "--kubeconfig",
                kubeconfig.to_str().unwrap(),
                "get",
                "pods",
                "-A",
                "-o",
                "json",
                "--chunk-size=500",
            ]
            .map(String::from)
            .into();
            // The pods' pages are already rendered: kubectl asks `?limit=500` as DumbMonit does.
            row(size, "kubectl get pods -A -o json (pods)", "yes", &spawner.run(&kubectl, 0..=0, &sim, long)?);
            let python: Vec<String> =
                ["python3", "-c", PYTHON, &sim.url(), ca.to_str().unwrap(), token.to_str().unwrap()]
                    .map(String::from)
                    .into();
            let m = spawner.run(&python, 0..=0, &sim, Duration::from_secs(900))?;
            row(size, "Python client, pods paged by 500", "no", &m);
        }
        println!(
            "|         | ({:.0} MB of JSON in all, {:.0} MB of it pods: {:.1} KB per pod) | | | | | |",
            total as f64 / 1e6,
            pod_bytes as f64 / 1e6,
            pod_bytes as f64 / size as f64 / 1e3
        );
        if serve && Some(&size) == sizes.last() {
            serve_section(size, &sim, dir.path(), exe)?;
        }
        if steady && Some(&size) == sizes.last() {
            steady_section(size, &sim, dir.path(), exe, &some_pods)?;
        }
        drop(sim);
    }
    Ok(())
}

const WRK_SCRIPT: &str = r#"
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("WRK %.2f %.2f %.2f %.1f %d %d\n", latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    latency:percentile(99) / 1000, summary.requests / (summary.duration / 1000000), summary.requests,
    e.connect + e.read + e.write + e.timeout + e.status))
end
"#;

/// `serve` on the cluster of `sim`: page and /metrics latency under 20 clients, memory over 60 cycles.
fn serve_section(size: usize, sim: &Sim, dir: &std::path::Path, exe: &str) -> Measured<()> {
    let cfg = dir.join("serve.toml");
    std::fs::write(
        &cfg,
        format!(
            "listen = \"127.0.0.1:0\"\nstate_dir = {:?}\n\n[[cluster]]\nname = \"envelope\"\naddress = {:?}\ntoken_file = {:?}\nca_file = {:?}\ninterval = \"1s\"\ntimeout = \"60s\"\n",
            dir.join("state").display().to_string(),
            sim.url(),
            dir.join("token").display().to_string(),
            dir.join("ca.crt").display().to_string()
        ),
    )
    .unwrap();
    let log = dir.join("serve.log");
    let mut serve = start_serve(exe, &cfg, &log)?;
    let pid = serve.0.id();
    let cycles = || sim.requests().iter().filter(|r| r.path == "/version").count();
    // Resident memory until `n` cycles have started, sampled every 50 ms: the lowest (between
    // cycles) and the highest (a cycle's lists in flight).
    let mut sample_until = |n: usize| -> Measured<(f64, f64)> {
        let (mut low, mut high) = (f64::MAX, 0.0f64);
        let deadline = Instant::now() + Duration::from_secs(3600);
        while cycles() < n {
            common::alive(&mut serve.0, "serve", Some(&log))?;
            if Instant::now() > deadline {
                return Err(format!("serve did not start its cycle {n} within an hour"));
            }
            let rss = common::memory_mb(pid)?.1;
            (low, high) = (low.min(rss), high.max(rss));
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok((above_zero("serve's lowest RSS", low)?, high))
    };
    let start_cycles = cycles();
    // The first cycle is complete once the next one has started.
    sample_until(start_cycles + 2)?;
    let first = sample_until(start_cycles + 7)?;
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let addr = text
        .split("pages on http://")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .ok_or("serve's log does not say the address of its pages")?
        .to_string();
    let script = dir.join("p95.lua");
    std::fs::write(&script, WRK_SCRIPT).unwrap();
    println!();
    println!("`serve` at {size} pods, 20 concurrent clients for 10 s each (wrk), cycles back to back:");
    println!();
    println!("| route | p50 ms | p95 ms | p99 ms | requests/s |");
    println!("|---|---|---|---|---|");
    let gzip = "Accept-Encoding: gzip";
    for (route, header) in [("/metrics", gzip), ("/metrics", ""), ("/clusters/envelope", ""), ("/", "")] {
        let mut args = vec!["-t2", "-c20", "-d10s", "-s", script.to_str().unwrap()];
        if !header.is_empty() {
            args.extend(["-H", header]);
        }
        let out = Command::new("wrk")
            .args(&args)
            .arg(format!("http://{addr}{route}"))
            .output()
            .map_err(|e| format!("wrk is needed (apt-get install wrk): {e}"))?;
        let shown = if header.is_empty() { format!("`{route}`") } else { format!("`{route}` ({header})") };
        let text = String::from_utf8_lossy(&out.stdout);
        let v: Vec<f64> = text
            .lines()
            .find(|l| l.starts_with("WRK "))
            .map(|l| l.split_whitespace().skip(1).filter_map(|n| n.parse().ok()).collect())
            .unwrap_or_default();
        let [p50, p95, p99, rate, requests, errors] = v[..] else {
            return Err(format!("wrk on {shown} failed: {} {}", text.trim(), String::from_utf8_lossy(&out.stderr)));
        };
        if errors > 0.0 {
            return Err(format!(
                "wrk on {shown}: {errors} of {requests} requests failed (socket errors or not 2xx/3xx)"
            ));
        }
        above_zero(&format!("wrk on {shown}: requests"), requests)?;
        for (what, v) in [("p50", p50), ("p95", p95), ("p99", p99)] {
            common::figure(&format!("wrk on {shown}: {what}"), v)?;
        }
        println!("| {shown} | {p50:.2} | {p95:.2} | {p99:.2} | {rate:.1} |");
    }
    sample_until(start_cycles + 56)?;
    let last = sample_until(start_cycles + 61)?;
    let peak = above_zero("serve's RSS peak", common::memory_mb(pid)?.0)?;
    println!();
    println!(
        "Resident memory of `serve` (lowest–highest, sampled every 50 ms): cycles 2–6 {:.0}–{:.0} MB; cycles 56–60 {:.0}–{:.0} MB; peak {peak:.0} MB.",
        first.0, first.1, last.0, last.1
    );
    Ok(())
}

/// `serve` in list mode, then in watch mode, at the guide's 60 s interval, while 100 pods a
/// minute change, evenly spread (nine in ten turn ready or stop being ready; one in ten is a pod
/// made, or the one made deleted): CPU seconds a minute and resident memory over
/// `BENCH_STEADY_MINUTES` (2 by default) once the first cycle is on the page, and in watch mode
/// each timed change's delay to the page (the first read of the cluster list, polled every 50 ms
/// while the change is not shown, that counts the pod it made or deleted).
fn steady_section(
    size: usize,
    sim: &Sim,
    dir: &std::path::Path,
    exe: &str,
    pods: &[serde_json::Value],
) -> Measured<()> {
    let minutes: f64 = match std::env::var("BENCH_STEADY_MINUTES") {
        Ok(v) => v.parse().map_err(|_| format!("BENCH_STEADY_MINUTES: {v:?} is not a number"))?,
        Err(_) => 2.0,
    };
    if pods.is_empty() {
        return Err("no pod to change".into());
    }
    if minutes < 1.0 {
        return Err(format!("BENCH_STEADY_MINUTES={minutes}: at least one interval (1 minute) is needed"));
    }
    println!();
    println!(
        "`serve` at {size} pods, a 60 s interval, 100 pod changes a minute, steady state over {minutes} min after the first cycle:"
    );
    println!();
    println!(
        "| mode | first cycle on the page s | CPU s/min | cycles shown /min | a change on the page p50 / p99 / max (timed) | RSS at end MB | RSS peak MB | MB read from the API server /min |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut rows = Vec::new();
    // The pods as last written, and how many changes were written: kept from one mode to the
    // next, so that every write changes what DumbMonit keeps of the pod (a write that leaves
    // it as it was takes no cycle in watch mode).
    let mut current = pods.to_vec();
    let mut written = 0u64;
    for watch in [false, true] {
        let mode = if watch { "watch" } else { "list" };
        let cfg = dir.join(format!("steady-{watch}.toml"));
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let addr = format!("127.0.0.1:{port}");
        std::fs::write(
            &cfg,
            format!(
                "listen = {addr:?}\nstate_dir = {:?}\n\n[[cluster]]\nname = \"envelope\"\naddress = {:?}\ntoken_file = {:?}\nca_file = {:?}\ninterval = \"60s\"\ntimeout = \"60s\"\nwatch = {watch}\n",
                dir.join(format!("state-{watch}")).display().to_string(),
                sim.url(),
                dir.join("token").display().to_string(),
                dir.join("ca.crt").display().to_string()
            ),
        )
        .unwrap();
        let log = dir.join(format!("steady-{watch}.log"));
        let started = Instant::now();
        let mut serve = start_serve(exe, &cfg, &log)?;
        let pid = serve.0.id();
        loop {
            common::alive(&mut serve.0, "serve", Some(&log))?;
            let shown = common::get(&addr, "/api/v1/clusters/envelope", false)
                .is_ok_and(|(answer, _)| answer.json().is_ok_and(|v| v["last_good_cycle"].is_string()));
            if shown {
                break;
            }
            if started.elapsed() > Duration::from_secs(900) {
                return Err("serve did not show its first cycle within 15 minutes".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let first = started.elapsed();
        let (cpu0, bytes0, t0) = (common::cpu_seconds(pid)?, sim.bytes_sent(), Instant::now());
        let window = Duration::from_secs_f64(minutes * 60.0);
        let poller = Poller::start(addr.clone());
        // The cluster list read once between two changes (the cycles shown), and in watch mode
        // every 50 ms while a timed change is not shown (its delay).
        let mut seen = Vec::new();
        let base = look(&addr).and_then(|s| s.pods).ok_or("serve's cluster list counts no pods")?;
        let mut n = 0u64;
        // One change in ten is a pod made, or the pod so made deleted: timed by the pods
        // counted on the cluster list (the others change no count).
        let mut timed = Vec::new();
        let mut made: Option<String> = None;
        let namespace = current[0]["metadata"]["namespace"].as_str().unwrap_or_default().to_string();
        while t0.elapsed() < window {
            common::alive(&mut serve.0, "serve", Some(&log))?;
            seen.extend(look(&addr));
            if n % 10 == 5 {
                let at = Instant::now();
                if watch {
                    poller.wait_for(if made.is_none() { base + 1 } else { base });
                }
                match made.take() {
                    None => {
                        let mut pod = current[0].clone();
                        let name = format!("bench-timed-{written}");
                        pod["metadata"]["name"] = serde_json::Value::String(name.clone());
                        pod["metadata"]["uid"] = serde_json::Value::String(format!("bench-timed-uid-{written}"));
                        sim.upsert(Resource::Pods, pod);
                        made = Some(name);
                        timed.push((at, 1i64));
                    }
                    Some(name) => {
                        sim.delete(Resource::Pods, &namespace, &name);
                        timed.push((at, -1));
                    }
                }
            } else {
                // A pod that turns ready, or stops being ready: what it was last written with,
                // flipped (as the real API server's benchmark patches pods' status).
                let pod = &mut current[written as usize % pods.len()];
                flip_ready(pod);
                pod["metadata"]["labels"]["bench-change"] = serde_json::Value::String(written.to_string());
                sim.upsert(Resource::Pods, pod.clone());
                written += 1;
            }
            n += 1;
            // 100 a minute.
            let next = t0 + Duration::from_millis(600 * n);
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
        let elapsed_min = t0.elapsed().as_secs_f64() / 60.0;
        let cpu = (common::cpu_seconds(pid)? - cpu0) / elapsed_min;
        let (peak, end) = common::memory_mb(pid)?;
        let mb = (sim.bytes_sent() - bytes0) as f64 / 1e6 / elapsed_min;
        // The last timed change is given the time a change is timed apart from the next.
        std::thread::sleep(Duration::from_secs(6));
        let waiting = poller.stop()?;
        let polled = waiting.len();
        seen.extend(waiting);
        seen.sort_by_key(|s| s.at);
        if let Some(name) = made {
            sim.delete(Resource::Pods, &namespace, &name);
        }
        let cycles: std::collections::HashSet<&str> =
            seen.iter().filter(|s| s.at >= t0).filter_map(|s| s.cycle.as_deref()).collect();
        let delays = if watch { Some(delays(&seen, &timed)?) } else { None };
        println!(
            "| {mode} | {:.1} | {cpu:.2} | {:.1} | {} | {:.0} | {:.0} | {mb:.2} |",
            first.as_secs_f64(),
            cycles.len().saturating_sub(1) as f64 / elapsed_min,
            delays.as_ref().map_or("–".to_string(), |d| d.row(polled)),
            above_zero("RSS at end", end)?,
            above_zero("RSS peak", peak)?
        );
        rows.push((cpu, end, mb, cycles.len().saturating_sub(1) as f64 / elapsed_min));
        drop(serve);
    }
    let (list, watch) = (rows[0], rows[1]);
    // 100 changes a minute, each seen by a watch, take cycles between intervals (one every
    // twenty times a cycle's cost at most): a follower that shows one a minute showed none of
    // them, and its CPU is not that of following changes.
    if watch.3 < 1.5 {
        return Err(format!(
            "watch mode showed {:.1} cycles a minute (it read {:.2} MB a minute) while 100 pods a minute changed: the changes were not shown between intervals, so its CPU is not the cost of following them",
            watch.3, watch.2
        ));
    }
    println!();
    // Watch mode can cost more CPU than list mode (a small cluster whose pods change all the
    // time): said as "more", not as a fraction of "less".
    let cpu = match list.0 / watch.0.max(1e-9) {
        r if r >= 1.0 => format!("{r:.1}× less"),
        r => format!("{:.1}× more", 1.0 / r.max(1e-9)),
    };
    println!(
        "Watch mode against list mode: CPU {cpu} (target 20× less), {:.0}× fewer bytes, RSS {:.0} MB against {:.0} MB (target: no more than list mode).",
        list.2 / watch.2.max(1e-9),
        watch.1,
        list.1
    );
    Ok(())
}

/// One read of serve's `/api/v1/clusters` (the list, not the cluster's answer: at 150,000 pods
/// that one carries thousands of alerts).
fn look(addr: &str) -> Option<Seen> {
    let at = Instant::now();
    let (answer, _) = common::get(addr, "/api/v1/clusters", false).ok()?;
    let v = answer.json().ok()?;
    Some(Seen { at, pods: v[0]["pods"].as_u64(), cycle: v[0]["last_good_cycle"].as_str().map(str::to_string) })
}

/// Polls serve's cluster list every 50 ms on a thread of its own while a timed change is not
/// shown yet: until the list counts the pods it is told to wait for.
struct Poller {
    /// The pods the list should count once the last timed change is shown; None: nothing to
    /// wait for.
    target: std::sync::Arc<std::sync::Mutex<Option<u64>>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Vec<Seen>>,
}

impl Poller {
    fn start(addr: String) -> Poller {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let target = std::sync::Arc::new(std::sync::Mutex::new(None));
        let (stopped, waited) = (stop.clone(), target.clone());
        let thread = std::thread::spawn(move || {
            let mut seen = Vec::new();
            while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
                let at = Instant::now();
                let wanted = *waited.lock().unwrap();
                if let Some(wanted) = wanted
                    && let Some(s) = look(&addr)
                {
                    if s.pods == Some(wanted) {
                        let mut w = waited.lock().unwrap();
                        if *w == Some(wanted) {
                            *w = None;
                        }
                    }
                    seen.push(s);
                }
                let every = if wanted.is_some() { 50 } else { 5 };
                std::thread::sleep((at + Duration::from_millis(every)).saturating_duration_since(Instant::now()));
            }
            seen
        });
        Poller { target, stop, thread }
    }

    /// From now on, waits for the list to count `pods`.
    fn wait_for(&self, pods: u64) {
        *self.target.lock().unwrap() = Some(pods);
    }

    fn stop(self) -> Measured<Vec<Seen>> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().map_err(|_| "the poller of serve panicked".to_string())
    }
}

/// Sets the pod's Ready condition to the other status (`True` when it has none).
fn flip_ready(pod: &mut serde_json::Value) {
    let conditions = &mut pod["status"]["conditions"];
    if !conditions.is_array() {
        *conditions = serde_json::Value::Array(Vec::new());
    }
    let list = conditions.as_array_mut().expect("made an array above");
    match list.iter_mut().find(|c| c["type"] == "Ready") {
        Some(c) => {
            let ready = c["status"] == "True";
            c["status"] = serde_json::Value::from(if ready { "False" } else { "True" });
        }
        None => list.push(serde_json::json!({"type": "Ready", "status": "True"})),
    }
}

/// `serve --config CFG`, its log in `log`.
fn start_serve(exe: &str, cfg: &std::path::Path, log: &std::path::Path) -> Measured<Killed> {
    let child = Command::new(exe)
        .args(["serve", "--config", cfg.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .map_err(|e| format!("serve did not start: {e}"))?;
    Ok(Killed(child))
}

fn sys_mem_gib() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| m.lines().next().and_then(|l| l.split_whitespace().nth(1)).and_then(|kb| kb.parse::<u64>().ok()))
        .map(|kb| kb / 1024 / 1024)
        .unwrap_or(0)
}
