//! List mode against watch mode, against the real API server: `cargo bench --bench watch` (each
//! window's length with `BENCH_MINUTES`, 10 by default; the cluster's interval with
//! `BENCH_INTERVAL`, 60 s by default as in the guide; `BENCH_PODS` and `BENCH_NODES`, 10,000 and
//! 100, for a quick look). Prints tables; a figure it cannot measure stops it with an error naming
//! it (exit status 1).
//!
//! The control plane of the tests (scripts/control-plane.sh: etcd embedded in the harness's
//! supervisor process, kube-apiserver its child) runs without kubelets, scheduler or controllers,
//! so that nothing but the API server's own informers watches. The benchmark creates through the
//! API (`control-plane.sh load`: each object, then its status through the status subresource) the
//! nodes and the pods, Running, with the status a kubelet writes (two containers, five
//! conditions); nothing else that DumbMonit reads. DumbMonit reads with a ServiceAccount's token
//! (the role of `dumbmonit rbac --optional --watch`, the token from the TokenRequest API),
//! through a TCP relay of the benchmark's that counts the bytes the API server sends it.
//!
//! Three windows one after the other, each with the same 100 pod changes a minute, evenly spread,
//! written by the benchmark as the admin with PATCH on the status subresource: a pod's container
//! goes not ready, and the pod made not ready longest ago becomes ready again (each stays not
//! ready more than two intervals, so that list mode sees it). First without DumbMonit (what the
//! changes, the API server's own watchers and the benchmark's scrapes cost alone), then a real
//! `serve` (release build) with one `[[cluster]]`, `watch = false` (list mode), then `watch = true`
//! (watch mode). Each window starts half an interval after serve's first cycle showed the cluster,
//! so that list mode's cycles fall inside it.
//!
//! Measured over each window, per minute: the bytes the API server sent, from its /metrics
//! (`apiserver_response_sizes_sum` of LIST and GET, the bodies as sent, gzip when asked;
//! `apiserver_watch_events_sizes_sum`, the events as encoded before any compression, to every
//! watcher: the API server's own informers included, which the window without DumbMonit shows
//! alone), for the resources DumbMonit reads; the bytes the relay passed to DumbMonit (TLS
//! records, HTTP and all: what it was sent, whichever verb); the CPU seconds of kube-apiserver,
//! of the supervisor process (etcd), of serve, of this benchmark and of the whole machine, from
//! /proc; serve's resident memory (VmHWM, VmRSS at the end); DumbMonit's requests by verb, from
//! the API server's audit log (its GETs of /version: one a cycle). The delay from a change written
//! (the PATCH answered) to serve's `GET /api/v1/clusters/{name}` listing the pod in
//! `pods_needing_attention`, polled every 50 ms, for one not-ready change in five (10 a minute).
//! The LIST and GET requests the API server counted for those resources must be DumbMonit's
//! (the audit log's; but reads of a group it does not serve, answered 404 and counted nowhere in
//! /metrics), or the benchmark stops: its LIST+GET bytes are then DumbMonit's alone. Also
//! printed: how long serve took to show its first cycle, and what its log says failed.

mod common;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::plane::{Api, Fleet, Plane, Relay, audit_events, load, relay, rfc3339, service_account};
use common::{Killed, Measured, above_zero, figure, get, ms, quantile, size};
use dumbmonit::collection::Collection;
use jiff::Timestamp;
use serde_json::json;

const CLUSTER: &str = "bench";
const ACCOUNT: &str = "system:serviceaccount:kube-system:dumbmonit";
const CHANGES_PER_MINUTE: u32 = 100;
/// One not-ready change in this many is timed: 10 a minute.
const SAMPLE_EVERY: u64 = 5;
const POLL: Duration = Duration::from_millis(50);
/// The namespaces the pods are spread over.
const NAMESPACES: usize = 20;

struct Settings {
    window: Duration,
    interval: Duration,
    pods: usize,
    nodes: usize,
    /// How many pods are not ready at once: each stays so for `hold` changes of each kind.
    hold: usize,
}

fn env_number(name: &str, default: f64) -> Measured<f64> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(v) => v
            .trim()
            .trim_end_matches('s')
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite() && *n > 0.0)
            .ok_or_else(|| format!("{name}: {v:?} is not a positive number")),
    }
}

impl Settings {
    fn from_env() -> Measured<Settings> {
        let minutes = env_number("BENCH_MINUTES", 10.0)?;
        let interval = env_number("BENCH_INTERVAL", 60.0)?;
        let pods = env_number("BENCH_PODS", 10_000.0)? as usize;
        let nodes = env_number("BENCH_NODES", 100.0)? as usize;
        if interval < 1.0 {
            return Err(format!("BENCH_INTERVAL={interval}: serve takes an interval of a second or more"));
        }
        // A pod made not ready comes back after `hold` pairs of changes: more than two intervals
        // and half a minute, so that a list cycle sees it first.
        let pair = 2.0 * 60.0 / CHANGES_PER_MINUTE as f64;
        let hold = ((2.0 * interval + 30.0) / pair).ceil() as usize;
        if pods < 2 * hold + 2 {
            return Err(format!(
                "BENCH_PODS={pods}: at an interval of {interval} s, {hold} pods are not ready at once; at least {} pods",
                2 * hold + 2
            ));
        }
        if nodes == 0 {
            return Err("BENCH_NODES: at least one node".into());
        }
        Ok(Settings {
            window: Duration::from_secs_f64(minutes * 60.0),
            interval: Duration::from_secs_f64(interval),
            pods,
            nodes,
            hold,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// The objects that change

/// Which pods change next: pods `good..bad` (around the fleet) are not ready; changes alternate
/// between making `bad` not ready and making `good` ready again.
struct Rotation {
    pods: usize,
    good: usize,
    bad: usize,
    next_is_bad: bool,
}

impl Rotation {
    /// The next change: the pod, and whether it becomes ready.
    fn next(&mut self) -> (usize, bool) {
        let change = if self.next_is_bad {
            let p = self.bad;
            self.bad = (self.bad + 1) % self.pods;
            (p, false)
        } else {
            let p = self.good;
            self.good = (self.good + 1) % self.pods;
            (p, true)
        };
        self.next_is_bad = !self.next_is_bad;
        change
    }
}

// ---------------------------------------------------------------------------------------------
// The changes and the probe

/// A timed change: the pod made not ready, when the write was answered, and how long until
/// serve listed it.
struct Sample {
    pod: (String, String),
    written: Instant,
    seen: Option<Duration>,
}

/// What the changes and the probe share.
#[derive(Default)]
struct Probe {
    samples: Mutex<Vec<Sample>>,
    /// Time the changes made meanwhile.
    sampling: AtomicBool,
    changes: AtomicU64,
    polls: AtomicU64,
    /// Stops the probe.
    stop: AtomicBool,
    stop_changes: AtomicBool,
    failed: Mutex<Option<String>>,
}

impl Probe {
    fn fail(&self, e: String) {
        self.failed.lock().unwrap().get_or_insert(e);
    }

    fn check(&self) -> Measured<()> {
        match self.failed.lock().unwrap().clone() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn outstanding(&self) -> usize {
        self.samples.lock().unwrap().iter().filter(|s| s.seen.is_none()).count()
    }
}

/// Writes the changes, evenly spread, until told to stop.
async fn change(api: Arc<Api>, fleet: Arc<Fleet>, rotation: Arc<Mutex<Rotation>>, probe: Arc<Probe>) {
    let mut ticks = tokio::time::interval(Duration::from_secs_f64(60.0 / CHANGES_PER_MINUTE as f64));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut not_ready_timed = 0u64;
    while !probe.stop_changes.load(Ordering::Relaxed) {
        ticks.tick().await;
        let (i, ready) = rotation.lock().unwrap().next();
        let (namespace, name) = (fleet.namespace(i), fleet.name(i));
        let mut status = fleet.status(i, ready, &rfc3339(Timestamp::now()));
        // A merge patch replaces lists whole: the conditions and the container statuses are sent whole.
        let patch = json!({"status": {"conditions": status["conditions"].take(), "containerStatuses": status["containerStatuses"].take()}});
        let path = format!("/api/v1/namespaces/{namespace}/pods/{name}/status");
        if let Err(e) =
            api.call(http::Method::PATCH, &path, "application/merge-patch+json", patch.to_string().into_bytes()).await
        {
            probe.fail(format!("a pod change: {e}"));
            return;
        }
        let written = Instant::now();
        probe.changes.fetch_add(1, Ordering::Relaxed);
        if !ready && probe.sampling.load(Ordering::Relaxed) {
            if not_ready_timed.is_multiple_of(SAMPLE_EVERY) {
                probe.samples.lock().unwrap().push(Sample { pod: (namespace, name), written, seen: None });
            }
            not_ready_timed += 1;
        }
    }
}

/// Polls serve's cluster every 50 ms while a timed change is not yet shown.
fn poll(addr: String, probe: Arc<Probe>) {
    let path = format!("/api/v1/clusters/{CLUSTER}");
    while !probe.stop.load(Ordering::Relaxed) {
        let tick = Instant::now();
        // Only changes written before the request was sent can be seen in its answer.
        let waiting: Vec<usize> = {
            let samples = probe.samples.lock().unwrap();
            samples.iter().enumerate().filter(|(_, s)| s.seen.is_none()).map(|(i, _)| i).collect()
        };
        if !waiting.is_empty() {
            let doc = match get(&addr, &path, false).and_then(|(a, _)| a.json()) {
                Ok(doc) => doc,
                Err(e) => return probe.fail(format!("polling serve: {e}")),
            };
            let answered = Instant::now();
            probe.polls.fetch_add(1, Ordering::Relaxed);
            let Some(listed) = doc["pods_needing_attention"].as_array() else {
                return probe.fail(format!("{path}: no pods_needing_attention list"));
            };
            let listed: HashSet<(&str, &str)> =
                listed.iter().filter_map(|p| Some((p["namespace"].as_str()?, p["name"].as_str()?))).collect();
            let mut samples = probe.samples.lock().unwrap();
            for i in waiting {
                let s = &mut samples[i];
                if listed.contains(&(s.pod.0.as_str(), s.pod.1.as_str())) {
                    s.seen = Some(answered - s.written);
                }
            }
        }
        std::thread::sleep(POLL.saturating_sub(tick.elapsed()));
    }
}

// ---------------------------------------------------------------------------------------------
// Snapshots

/// Bytes and requests of one resource, from the API server's /metrics.
#[derive(Clone, Copy, Default)]
struct Traffic {
    /// Bodies of LIST and GET answers (as sent).
    read_bytes: f64,
    reads: f64,
    /// Watch events, as encoded, to every watcher.
    watch_bytes: f64,
    watch_events: f64,
}

#[derive(Clone)]
struct Snap {
    at: Instant,
    wall: Timestamp,
    apiserver: f64,
    etcd: f64,
    serve: Option<f64>,
    bench: f64,
    machine: f64,
    wire: u64,
    changes: u64,
    traffic: BTreeMap<String, Traffic>,
    /// Watches open, by resource (every resource).
    watches: BTreeMap<String, f64>,
}

/// `resource.group` as RBAC and DumbMonit name it.
fn resource_key(s: &common::Sample) -> String {
    match s.label("group") {
        "" => s.label("resource").to_string(),
        g => format!("{}.{g}", s.label("resource")),
    }
}

/// The resources DumbMonit reads.
fn read_resources() -> Vec<&'static str> {
    dumbmonit::collect::kinds::every().into_iter().filter(|c| *c != Collection::VERSION).map(|c| c.resource()).collect()
}

fn traffic(text: &str) -> Measured<(BTreeMap<String, Traffic>, BTreeMap<String, f64>)> {
    let read = read_resources();
    let mut by: BTreeMap<String, Traffic> = read.iter().map(|r| (r.to_string(), Traffic::default())).collect();
    let counted = |s: &common::Sample| s.label("subresource").is_empty() && matches!(s.label("verb"), "LIST" | "GET");
    let mut seen = [false; 4];
    for s in common::samples(text, "apiserver_response_sizes_sum")? {
        seen[0] = true;
        if let Some(t) = by.get_mut(&resource_key(&s)).filter(|_| counted(&s)) {
            t.read_bytes += s.value;
        }
    }
    for s in common::samples(text, "apiserver_request_total")? {
        seen[1] = true;
        if let Some(t) = by.get_mut(&resource_key(&s)).filter(|_| counted(&s)) {
            t.reads += s.value;
        }
    }
    for s in common::samples(text, "apiserver_watch_events_sizes_sum")? {
        seen[2] = true;
        if let Some(t) = by.get_mut(&resource_key(&s)) {
            t.watch_bytes += s.value;
        }
    }
    for s in common::samples(text, "apiserver_watch_events_total")? {
        if let Some(t) = by.get_mut(&resource_key(&s)) {
            t.watch_events += s.value;
        }
    }
    let mut watches = BTreeMap::new();
    for s in common::samples(text, "apiserver_longrunning_requests")? {
        seen[3] = true;
        if s.label("verb") == "WATCH" && s.value > 0.0 {
            *watches.entry(resource_key(&s)).or_insert(0.0) += s.value;
        }
    }
    let names = [
        "apiserver_response_sizes_sum",
        "apiserver_request_total",
        "apiserver_watch_events_sizes_sum",
        "apiserver_longrunning_requests",
    ];
    if let Some(i) = seen.iter().position(|s| !s) {
        return Err(format!("the API server's /metrics has no {}", names[i]));
    }
    Ok((by, watches))
}

struct Meters<'a> {
    api: &'a Api,
    plane: &'a Plane,
    relay: &'a Relay,
    probe: Arc<Probe>,
    rt: &'a tokio::runtime::Runtime,
}

impl Meters<'_> {
    fn snap(&self, serve: Option<u32>) -> Measured<Snap> {
        let text = self.rt.block_on(self.api.metrics())?;
        let (traffic, watches) = traffic(&text)?;
        Ok(Snap {
            at: Instant::now(),
            wall: Timestamp::now(),
            apiserver: common::cpu_seconds(self.plane.apiserver).map_err(|e| format!("kube-apiserver: {e}"))?,
            etcd: common::cpu_seconds(self.plane.supervisor).map_err(|e| format!("etcd (the supervisor): {e}"))?,
            serve: serve.map(|pid| common::cpu_seconds(pid).map_err(|e| format!("serve: {e}"))).transpose()?,
            bench: common::cpu_seconds(std::process::id())?,
            machine: common::machine_busy_seconds()?,
            wire: self.relay.sent.load(Ordering::Relaxed),
            changes: self.probe.changes.load(Ordering::Relaxed),
            traffic,
            watches,
        })
    }
}

/// Per minute between two snapshots.
#[derive(Clone)]
struct Rates {
    minutes: f64,
    read_bytes: f64,
    watch_bytes: f64,
    wire: f64,
    apiserver: f64,
    etcd: f64,
    serve: Option<f64>,
    bench: f64,
    machine: f64,
    changes: f64,
    by_resource: BTreeMap<String, Traffic>,
}

fn rates(what: &str, a: &Snap, b: &Snap) -> Measured<Rates> {
    let minutes = above_zero(&format!("{what}: the window's length"), (b.at - a.at).as_secs_f64() / 60.0)?;
    let per = |name: &str, x: f64, y: f64| figure(&format!("{what}: {name}"), (y - x) / minutes);
    let mut by_resource = BTreeMap::new();
    for (r, t) in &b.traffic {
        let s = a.traffic.get(r).copied().unwrap_or_default();
        by_resource.insert(
            r.clone(),
            Traffic {
                read_bytes: per(&format!("LIST+GET bytes of {r}"), s.read_bytes, t.read_bytes)?,
                reads: figure(&format!("{what}: LIST+GET requests of {r}"), t.reads - s.reads)?,
                watch_bytes: per(&format!("WATCH bytes of {r}"), s.watch_bytes, t.watch_bytes)?,
                watch_events: per(&format!("WATCH events of {r}"), s.watch_events, t.watch_events)?,
            },
        );
    }
    let sum = |f: fn(&Traffic) -> f64| by_resource.values().map(f).sum::<f64>();
    Ok(Rates {
        minutes,
        read_bytes: sum(|t| t.read_bytes),
        watch_bytes: sum(|t| t.watch_bytes),
        wire: per("bytes to DumbMonit on the wire", a.wire as f64, b.wire as f64)?,
        apiserver: per("kube-apiserver's CPU", a.apiserver, b.apiserver)?,
        etcd: per("etcd's CPU", a.etcd, b.etcd)?,
        serve: match (a.serve, b.serve) {
            (Some(x), Some(y)) => Some(per("serve's CPU", x, y)?),
            _ => None,
        },
        bench: per("the benchmark's CPU", a.bench, b.bench)?,
        machine: per("the machine's CPU", a.machine, b.machine)?,
        changes: per("pod changes", a.changes as f64, b.changes as f64)?,
        by_resource,
    })
}

// ---------------------------------------------------------------------------------------------
// The audit log

/// DumbMonit's requests, as the API server's audit log has them.
#[derive(Default)]
struct Requests {
    /// LIST and GET of the resources DumbMonit reads.
    reads: u64,
    /// By resource: how many, and how many the API server answered 404 (a group it does not serve).
    reads_by_resource: BTreeMap<String, (u64, u64)>,
    lists: u64,
    /// GETs of /version: one a cycle.
    versions: u64,
    /// Watches opened (streaming lists among them).
    watches: u64,
    streaming_lists: u64,
    other: Vec<String>,
}

fn audited(plane: &Plane, from: Timestamp, to: Timestamp) -> Measured<Requests> {
    let read = read_resources();
    let mut r = Requests::default();
    for e in audit_events(plane, ACCOUNT, from, to)? {
        let verb = e["verb"].as_str().unwrap_or("");
        let uri = e["requestURI"].as_str().unwrap_or("");
        let o = &e["objectRef"];
        let resource = match (o["resource"].as_str(), o["apiGroup"].as_str()) {
            (Some(res), Some(g)) if !g.is_empty() => format!("{res}.{g}"),
            (Some(res), _) => res.to_string(),
            (None, _) => String::new(),
        };
        let subresource = o["subresource"].as_str().unwrap_or("");
        match verb {
            "watch" => {
                r.watches += 1;
                r.streaming_lists += u64::from(uri.contains("sendInitialEvents=true"));
            }
            "list" | "get" if subresource.is_empty() && read.contains(&resource.as_str()) => {
                r.reads += 1;
                let entry = r.reads_by_resource.entry(resource).or_insert((0, 0));
                entry.0 += 1;
                entry.1 += u64::from(e["responseStatus"]["code"] == 404);
                r.lists += u64::from(verb == "list");
            }
            "get" if uri == "/version" || uri.starts_with("/version?") => r.versions += 1,
            _ => r.other.push(format!("{verb} {uri}")),
        }
    }
    Ok(r)
}

// ---------------------------------------------------------------------------------------------
// One window

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Alone,
    List,
    Watch,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Alone => "without DumbMonit",
            Mode::List => "list mode",
            Mode::Watch => "watch mode",
        }
    }
}

struct Row {
    mode: Mode,
    window: Rates,
    minutes: Vec<Rates>,
    delays: Vec<Duration>,
    /// serve's VmHWM over its life, and VmRSS at the window's end, in MB.
    rss: Option<(f64, f64)>,
    requests: Requests,
    /// Over serve's whole life (its first lists included).
    life: Requests,
    polls: u64,
    watches: BTreeMap<String, f64>,
    /// From serve's start to its first cycle shown.
    first_cycle: Option<Duration>,
    /// What serve's log said failed over its life, each message once, with how often.
    failures: Vec<(usize, String)>,
}

/// What serve's log said failed, for an error.
fn said(log: &Path) -> String {
    let f = failures(log);
    if f.is_empty() {
        return String::new();
    }
    let lines: Vec<String> = f.iter().take(3).map(|(n, m)| format!("{n}× {m}")).collect();
    format!("; serve's log says: {}", lines.join("; "))
}

/// The lines of serve's log that say something failed, without their time, most frequent first.
fn failures(log: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for line in text.lines() {
        let lower = line.to_ascii_lowercase();
        if lower.contains("fail") || lower.contains("error") {
            let message = line.split_once(' ').map_or(line, |(_, m)| m);
            *seen.entry(message.to_string()).or_insert(0) += 1;
        }
    }
    let mut out: Vec<(usize, String)> = seen.into_iter().map(|(m, n)| (n, m)).collect();
    out.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    out
}

struct Shared<'a> {
    settings: &'a Settings,
    meters: Meters<'a>,
    api: Arc<Api>,
    fleet: Arc<Fleet>,
    rotation: Arc<Mutex<Rotation>>,
    token_file: PathBuf,
}

fn serve_config(s: &Shared, dir: &Path, listen: &str, watch: bool) -> Measured<PathBuf> {
    let host = s.meters.plane.address.rsplit_once(':').map_or("https://k8s.test", |(h, _)| h).to_string();
    let p = |name: &str| dir.join(name).to_str().unwrap_or("").to_string();
    let text = format!(
        "listen = \"{listen}\"\nstate_dir = {:?}\n\n[[cluster]]\nname = \"{CLUSTER}\"\naddress = \"{host}:{}\"\n\
         token_file = {:?}\nca_file = {:?}\ninterval = \"{}ms\"\nwatch = {watch}\n",
        p("state"),
        s.meters.relay.port,
        s.token_file.to_str().unwrap_or(""),
        s.meters.plane.file("ca.crt").to_str().unwrap_or(""),
        s.settings.interval.as_millis(),
    );
    let file = dir.join("dumbmonit.toml");
    std::fs::write(&file, text).map_err(|e| e.to_string())?;
    Ok(file)
}

/// Starts serve and waits for its first cycle to show every pod.
fn start_serve(s: &Shared, mode: Mode, dir: &Path) -> Measured<(Killed, String, PathBuf, Duration)> {
    let port =
        std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map_err(|e| e.to_string())?.port();
    let addr = format!("127.0.0.1:{port}");
    let config = serve_config(s, dir, &addr, mode == Mode::Watch)?;
    let log = dir.join("serve.log");
    let mut command = Command::new(env!("CARGO_BIN_EXE_dumbmonit"));
    command
        .args(["serve", "--config", config.to_str().unwrap_or("")])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).map_err(|e| e.to_string())?);
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: prctl only asks the kernel to kill serve should this process die first.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
    }
    let mut serve = Killed(command.spawn().map_err(|e| format!("serve did not start: {e}"))?);
    let started = Instant::now();
    let path = format!("/api/v1/clusters/{CLUSTER}");
    loop {
        common::alive(&mut serve.0, "serve", Some(&log))?;
        let last = match get(&addr, &path, false).and_then(|(a, _)| a.json()) {
            Ok(doc) if doc["last_good_cycle"].is_string() && doc["pods"].as_u64() == Some(s.settings.pods as u64) => {
                break;
            }
            Ok(doc) => {
                format!("last_good_cycle {}, pods {}, error {}", doc["last_good_cycle"], doc["pods"], doc["error"])
            }
            // Not answering yet is waited for; an answer other than 200 or 503 is not.
            Err(e) if e.contains(" answered ") && !e.contains(" answered 503") => {
                return Err(format!("{}: {e}", mode.name()));
            }
            Err(e) => e,
        };
        if started.elapsed() > Duration::from_secs(600) {
            return Err(format!(
                "{}: serve did not show the cluster's {} pods within 10 minutes ({last}){}",
                mode.name(),
                s.settings.pods,
                said(&log)
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!("{}: serve's first cycle shown {:.1} s after its start", mode.name(), started.elapsed().as_secs_f64());
    Ok((serve, addr, log, started.elapsed()))
}

fn window(s: &Shared, mode: Mode) -> Measured<Row> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let life_from = Timestamp::now();
    let mut serve = if mode == Mode::Alone { None } else { Some(start_serve(s, mode, dir.path())?) };
    let pid = serve.as_ref().map(|(k, ..)| k.0.id());
    let first_cycle = serve.as_ref().map(|(.., took)| *took);
    let probe = s.meters.probe.clone();
    probe.stop.store(false, Ordering::Relaxed);
    probe.stop_changes.store(false, Ordering::Relaxed);
    probe.samples.lock().unwrap().clear();
    probe.polls.store(0, Ordering::Relaxed);
    let changes = s.meters.rt.spawn(change(s.api.clone(), s.fleet.clone(), s.rotation.clone(), probe.clone()));
    let poller = serve.as_ref().map(|(_, addr, ..)| {
        let (addr, probe) = (addr.clone(), probe.clone());
        std::thread::spawn(move || poll(addr, probe))
    });
    let result = (|| -> Measured<Row> {
        let mut alive = || -> Measured<()> {
            probe.check()?;
            if let Some((k, _, log, _)) = serve.as_mut() {
                common::alive(&mut k.0, "serve", Some(log))?;
            }
            Ok(())
        };
        // Half an interval into serve's cycles, so that list mode's fall inside the window.
        let settle = Instant::now() + s.settings.interval / 2;
        while Instant::now() < settle {
            alive()?;
            std::thread::sleep(Duration::from_millis(200));
        }
        let first = s.meters.snap(pid)?;
        probe.sampling.store(pid.is_some(), Ordering::Relaxed);
        let end = first.at + s.settings.window;
        let mut snaps = vec![first];
        let mut next_minute = snaps[0].at + Duration::from_secs(60);
        loop {
            alive()?;
            let now = Instant::now();
            if now >= end {
                break;
            }
            if now >= next_minute {
                snaps.push(s.meters.snap(pid)?);
                next_minute += Duration::from_secs(60);
            }
            std::thread::sleep(
                Duration::from_millis(250).min(end - now).min(next_minute.saturating_duration_since(now)),
            );
        }
        probe.sampling.store(false, Ordering::Relaxed);
        let last = s.meters.snap(pid)?;
        let rss = pid.map(common::memory_mb).transpose()?;
        // The changes stop: a timed pod stays not ready until serve shows it.
        probe.stop_changes.store(true, Ordering::Relaxed);
        s.meters.rt.block_on(changes).map_err(|e| format!("the changes: {e}"))?;
        probe.check()?;
        if pid.is_some() {
            let deadline = Instant::now() + 2 * s.settings.interval + Duration::from_secs(60);
            while probe.outstanding() > 0 {
                alive()?;
                if Instant::now() > deadline {
                    let log = serve.as_ref().map(|(_, _, log, _)| said(log)).unwrap_or_default();
                    return Err(format!(
                        "{}: {} timed changes were not shown by serve within two intervals and a minute of the window's end{log}",
                        mode.name(),
                        probe.outstanding()
                    ));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        snaps.push(last);
        let window = rates(mode.name(), &snaps[0], &snaps[snaps.len() - 1])?;
        let minutes = snaps.windows(2).map(|w| rates(mode.name(), &w[0], &w[1])).collect::<Measured<Vec<_>>>()?;
        let (from, to) = (snaps[0].wall, snaps[snaps.len() - 1].wall);
        let requests = audited(s.meters.plane, from, to)?;
        let life = audited(s.meters.plane, life_from, Timestamp::now())?;
        let delays: Vec<Duration> = probe.samples.lock().unwrap().iter().filter_map(|s| s.seen).collect();
        Ok(Row {
            mode,
            window,
            minutes,
            delays,
            rss,
            requests,
            life,
            polls: probe.polls.load(Ordering::Relaxed),
            watches: snaps[0].watches.clone(),
            first_cycle,
            failures: serve.as_ref().map(|(_, _, log, _)| failures(log)).unwrap_or_default(),
        })
    })();
    probe.stop.store(true, Ordering::Relaxed);
    probe.stop_changes.store(true, Ordering::Relaxed);
    if let Some(p) = poller {
        let _ = p.join();
    }
    drop(serve.take());
    let row = result?;
    check(&row)?;
    Ok(row)
}

/// What must hold of a window for its figures to be the mode's.
fn check(row: &Row) -> Measured<()> {
    let name = row.mode.name();
    // The LIST+GET bytes are DumbMonit's alone only if every such request was its own. A group
    // the API server does not serve (404) is in neither its counts nor its sizes.
    for r in read_resources() {
        let counted = row.window.by_resource.get(r).map_or(0.0, |t| t.reads);
        let (sent, not_found) = row.requests.reads_by_resource.get(r).copied().unwrap_or_default();
        // kube-apiserver lists the services itself now and then (its Service IP repair, through
        // its loopback client; a few objects): more than DumbMonit's, never fewer.
        let apiserver_own = r == "services" && counted > sent as f64;
        if counted != sent as f64 && !(counted == 0.0 && sent == not_found) && !apiserver_own {
            return Err(format!(
                "{name}: the API server counted {counted} LIST and GET requests of {r}, DumbMonit sent {sent}: the LIST+GET bytes would not be DumbMonit's alone"
            ));
        }
    }
    match row.mode {
        Mode::Alone if row.life.watches + row.life.reads + row.life.versions > 0 => {
            Err(format!("{name}: the audit log has requests of DumbMonit's account"))
        }
        Mode::List if row.life.watches > 0 => Err(format!("{name}: serve opened {} watches", row.life.watches)),
        Mode::List if row.requests.lists == 0 => Err(format!("{name}: no list in the window")),
        Mode::Watch if row.life.streaming_lists == 0 && row.life.lists == 0 => {
            Err(format!("{name}: serve neither streamed nor listed the collections"))
        }
        Mode::Watch if row.life.watches == 0 => Err(format!("{name}: serve opened no watch")),
        _ => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// The tables

fn met(ok: bool) -> &'static str {
    if ok { "met" } else { "**not met**" }
}

/// What one scrape of the API server's /metrics costs it, in CPU seconds: five back to back
/// (what it does meanwhile included).
fn scrape_cost(meters: &Meters) -> Measured<f64> {
    let before = common::cpu_seconds(meters.plane.apiserver)?;
    for _ in 0..5 {
        meters.rt.block_on(meters.api.metrics())?;
    }
    figure("a scrape's CPU", (common::cpu_seconds(meters.plane.apiserver)? - before) / 5.0)
}

fn print(settings: &Settings, rows: &[Row], loaded: Duration, scrape: f64) -> Measured<()> {
    let [alone, list, watch] = rows else { return Err("three windows".into()) };
    println!(
        "\n{} pods on {} nodes (loaded in {:.0} s), {} pod changes a minute, interval {} s, windows of {:.1} minutes\n",
        settings.pods,
        settings.nodes,
        loaded.as_secs_f64(),
        CHANGES_PER_MINUTE,
        settings.interval.as_secs_f64(),
        settings.window.as_secs_f64() / 60.0
    );
    println!(
        "| mode | LIST+GET bytes/min | WATCH bytes/min (all watchers) | total bytes/min (/metrics) | bytes/min to DumbMonit (wire) | API server CPU s/min | etcd CPU s/min | DumbMonit CPU s/min | DumbMonit RSS MB peak / end | delay p50 / p99 (samples) | cycles/min |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut delays = BTreeMap::new();
    for r in rows {
        let w = &r.window;
        let (serve_cpu, rss, delay, wire, cycles) = match r.mode {
            Mode::Alone => ("–".into(), "–".into(), "–".into(), "–".into(), "–".into()),
            _ => {
                let p50 = quantile(&format!("{}: the delay", r.mode.name()), r.delays.clone(), 0.5)?;
                let p99 = quantile(&format!("{}: the delay", r.mode.name()), r.delays.clone(), 0.99)?;
                delays.insert(r.mode.name(), (p50, p99));
                let (peak, end) = r.rss.ok_or("serve's RSS was not read")?;
                (
                    format!("{:.2}", w.serve.ok_or("serve's CPU was not read")?),
                    format!("{peak:.0} / {end:.0}"),
                    format!("{} / {} ({})", ms(p50), ms(p99), r.delays.len()),
                    size(w.wire),
                    format!("{:.1}", r.requests.versions as f64 / w.minutes),
                )
            }
        };
        println!(
            "| {} | {} | {} | {} | {} | {:.2} | {:.2} | {} | {} | {} | {} |",
            r.mode.name(),
            size(w.read_bytes),
            size(w.watch_bytes),
            size(w.read_bytes + w.watch_bytes),
            wire,
            w.apiserver,
            w.etcd,
            serve_cpu,
            rss,
            delay,
            cycles
        );
    }

    // What DumbMonit's own watches cost: watch mode's WATCH bytes less those of the same changes
    // sent to the other watchers (the window without DumbMonit).
    let own_watch = |r: &Row| r.window.watch_bytes - alone.window.watch_bytes;
    let net_cpu = |r: &Row| r.window.apiserver - alone.window.apiserver;
    println!();
    println!(
        "WATCH bytes less the other watchers' (the window without DumbMonit): list mode {}, watch mode {} a minute.",
        size(own_watch(list)),
        size(own_watch(watch))
    );
    let bytes_ratio = above_zero("list mode's bytes to DumbMonit", list.window.wire)?
        / above_zero("watch mode's bytes to DumbMonit", watch.window.wire)?;
    let metrics_list = list.window.read_bytes + own_watch(list).max(0.0);
    let metrics_watch = watch.window.read_bytes + own_watch(watch);
    let cpu_ratio = above_zero("list mode's API server CPU", list.window.apiserver)?
        / above_zero("watch mode's API server CPU", watch.window.apiserver)?;
    let (_, p99) = delays["watch mode"];
    let (list_rss, watch_rss) = (list.rss.ok_or("list mode's RSS")?, watch.rss.ok_or("watch mode's RSS")?);
    println!("\n| target (steady state, watch mode against list mode) | measured | |");
    println!("|---|---|---|");
    println!(
        "| ≥ 50× fewer bytes/min | {bytes_ratio:.1}× on the wire ({} against {}); from /metrics, LIST+GET and WATCH less the other watchers': {} | {} |",
        size(list.window.wire),
        size(watch.window.wire),
        if metrics_watch > 0.0 {
            format!("{:.1}×", metrics_list / metrics_watch)
        } else {
            "not told apart from the other watchers'".into()
        },
        met(bytes_ratio >= 50.0)
    );
    println!(
        "| ≥ 10× less API server CPU | {cpu_ratio:.1}× ({:.2} against {:.2} s/min); less the window without DumbMonit ({:.2} s/min): {} | {} |",
        list.window.apiserver,
        watch.window.apiserver,
        alone.window.apiserver,
        if net_cpu(watch) > 0.0 && net_cpu(list) > 0.0 {
            format!("{:.2} against {:.2} s/min, {:.1}×", net_cpu(list), net_cpu(watch), net_cpu(list) / net_cpu(watch))
        } else {
            format!(
                "{:.2} against {:.2} s/min, no ratio (not above the window without DumbMonit)",
                net_cpu(list),
                net_cpu(watch)
            )
        },
        met(cpu_ratio >= 10.0)
    );
    println!(
        "| p99 delay ≤ 2 s | {} over {} changes | {} |",
        ms(p99),
        watch.delays.len(),
        met(p99 <= Duration::from_secs(2))
    );
    println!(
        "| RSS ≤ list mode's | peak {:.0} against {:.0} MB, at the end {:.0} against {:.0} MB | {} |",
        watch_rss.0,
        list_rss.0,
        watch_rss.1,
        list_rss.1,
        met(watch_rss.0 <= list_rss.0 && watch_rss.1 <= list_rss.1)
    );

    println!(
        "\nBy resource, a minute (LIST+GET answers' bodies as sent; WATCH events as encoded, to every watcher):\n"
    );
    println!("| resource | without: WATCH | list: LIST+GET | list: WATCH | watch: LIST+GET | watch: WATCH |");
    println!("|---|---:|---:|---:|---:|---:|");
    for r in read_resources() {
        let t = |row: &Row| row.window.by_resource.get(r).copied().unwrap_or_default();
        let (a, l, w) = (t(alone), t(list), t(watch));
        if a.watch_bytes + l.read_bytes + l.watch_bytes + w.read_bytes + w.watch_bytes + a.read_bytes == 0.0 {
            continue;
        }
        println!(
            "| {r} | {} | {} | {} | {} | {} ({:.0} events) |",
            size(a.watch_bytes),
            size(l.read_bytes),
            size(l.watch_bytes),
            size(w.read_bytes),
            size(w.watch_bytes),
            w.watch_events
        );
    }

    println!("\nEach minute of each window:\n");
    println!(
        "| mode | minute | pod changes | LIST+GET | WATCH | to DumbMonit (wire) | API server CPU s | etcd CPU s | DumbMonit CPU s |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        let mut at = 0.0;
        for m in &r.minutes {
            let span = format!("{:.1}–{:.1}", at, at + m.minutes);
            at += m.minutes;
            let opt = |v: Option<f64>| v.map_or("–".into(), |v| format!("{v:.2}"));
            println!(
                "| {} | {span} | {:.0} | {} | {} | {} | {:.2} | {:.2} | {} |",
                r.mode.name(),
                m.changes,
                size(m.read_bytes),
                size(m.watch_bytes),
                if r.mode == Mode::Alone { "–".into() } else { size(m.wire) },
                m.apiserver,
                m.etcd,
                opt(m.serve)
            );
        }
    }

    println!("\nDumbMonit's requests in each window (the audit log), and what else ran:\n");
    println!(
        "| mode | lists / gets | /version (cycles) | first cycle after serve's start | watches opened (over serve's life; streaming lists) | other requests | polls of serve | pod changes/min | this benchmark CPU s/min | the machine's busy CPU s/min | not measured above, s/min |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        let w = &r.window;
        let accounted = w.apiserver + w.etcd + w.serve.unwrap_or(0.0) + w.bench;
        println!(
            "| {} | {} / {} | {} | {} | {} ({}; {}) | {} | {} | {:.1} | {:.2} | {:.2} | {:.2} |",
            r.mode.name(),
            r.requests.lists,
            r.requests.reads - r.requests.lists,
            r.requests.versions,
            r.first_cycle.map_or("–".into(), |d| format!("{:.1} s", d.as_secs_f64())),
            r.requests.watches,
            r.life.watches,
            r.life.streaming_lists,
            r.requests.other.len(),
            r.polls,
            w.changes,
            w.bench,
            w.machine,
            (w.machine - accounted).max(0.0)
        );
    }
    let others: std::collections::BTreeSet<&str> =
        rows.iter().flat_map(|r| r.requests.other.iter().map(String::as_str)).collect();
    if !others.is_empty() {
        println!(
            "\nOther requests of DumbMonit's (in the wire bytes, not in the /metrics columns): {}",
            others.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    let unserved: Vec<String> =
        [list, watch]
            .iter()
            .flat_map(|r| {
                r.requests.reads_by_resource.iter().filter(|(_, (n, f))| n == f).map(move |(res, (n, _))| {
                    format!("{res} {:.1}/min in {}", *n as f64 / r.window.minutes, r.mode.name())
                })
            })
            .collect();
    if !unserved.is_empty() {
        println!(
            "\nRead by DumbMonit and answered 404 (a group this control plane does not serve: no metrics-server), in the wire bytes, not in /metrics: {}.",
            unserved.join(", ")
        );
    }
    for r in rows.iter().filter(|r| !r.failures.is_empty()) {
        println!("\nserve's log in {}, what failed (over its life, each message once):", r.mode.name());
        for (n, message) in r.failures.iter().take(5) {
            println!("- {n}× {message}");
        }
    }
    let list_watches = |m: &BTreeMap<String, f64>| {
        if m.is_empty() {
            "none".to_string()
        } else {
            m.iter().map(|(r, n)| format!("{r} {n}")).collect::<Vec<_>>().join(", ")
        }
    };
    println!(
        "\nWatches open without DumbMonit (the API server's own informers; no controller, scheduler or kubelet runs): {}.",
        list_watches(&alone.watches)
    );
    let own: BTreeMap<String, f64> = watch
        .watches
        .iter()
        .map(|(r, n)| (r.clone(), n - alone.watches.get(r).copied().unwrap_or(0.0)))
        .filter(|(_, n)| *n > 0.0)
        .collect();
    println!("Watches open in watch mode beside them: {}.", list_watches(&own));
    println!(
        "DumbMonit's CPU includes answering the delay probe (GET /api/v1/clusters/{CLUSTER} every 50 ms while a timed change is not yet shown); the API server's includes the changes (PATCH as the admin) and the benchmark's scrapes of its /metrics (at each window's start, each minute and its end: {scrape:.3} CPU s each, five measured back to back)."
    );
    Ok(())
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    common::run("watch", || {
        let settings = Settings::from_env()?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        eprintln!("starting the control plane");
        let plane = Plane::up("watch")?;
        let api = Arc::new(Api::new(&plane)?);
        let token_file = rt.block_on(service_account(&api, plane.dir.path()))?;
        let fleet = Arc::new(Fleet {
            pods: settings.pods,
            namespaces: NAMESPACES,
            nodes: settings.nodes,
            started: rfc3339(Timestamp::now() - jiff::SignedDuration::from_hours(24)),
        });
        eprintln!("loading {} nodes and {} pods", settings.nodes, settings.pods);
        let loaded = load(&plane, &fleet, settings.hold)?;
        eprintln!("loaded in {:.0} s", loaded.as_secs_f64());
        let relay = rt.block_on(relay(plane.port))?;
        let probe = Arc::new(Probe::default());
        let rotation =
            Arc::new(Mutex::new(Rotation { pods: settings.pods, good: 0, bad: settings.hold, next_is_bad: true }));
        let shared = Shared {
            settings: &settings,
            meters: Meters { api: &api, plane: &plane, relay: &relay, probe: probe.clone(), rt: &rt },
            api: api.clone(),
            fleet,
            rotation,
            token_file,
        };
        let scrape = scrape_cost(&shared.meters)?;
        let mut rows = Vec::new();
        for mode in [Mode::Alone, Mode::List, Mode::Watch] {
            eprintln!("{}: a window of {:.1} minutes", mode.name(), settings.window.as_secs_f64() / 60.0);
            rows.push(window(&shared, mode)?);
        }
        print(&settings, &rows, loaded, scrape)?;
        drop(shared);
        drop(relay);
        drop(plane);
        Ok(())
    });
}
