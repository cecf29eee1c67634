//! `dumbmonit agent`: reads a cluster near it, exactly as `serve` would, and pushes each cycle
//! to one or more DumbMonit servers over HTTPS, outbound only. Cycles are kept (`buffer`) until
//! each server has them and delivered in order; each push sends only what changed since the
//! last snapshot that server acknowledged (`wire`). The cluster's settings (interval,
//! timeout, ignored namespaces) come from the server in every answer.

pub mod buffer;
pub mod events;
pub mod push;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::Method;
use jiff::{SignedDuration, Timestamp};
use tokio::sync::{Notify, watch};
use tracing::Instrument;

use crate::clock::{Clock, ClockError};
use crate::collect::CycleOptions;
use crate::collect::reader::{self, Reader};
use crate::error::{ConfigError, FlagError};
use crate::kube::ConnectOptions;
use crate::logs::Emit;
use crate::wire::{self, Acknowledged, Report, Reported, Settings, Stat};
use buffer::Buffer;
use events::{
    ClusterUnreadable, CycleRefused, KeptCycleUnreadable, ProbesOn, Reporting, ServerBack, ServerRefused,
    ServerUnreachable, SettingsTaken, Stopping, TokenUnreadable,
};
use push::Server;

/// How `dumbmonit agent` runs.
pub struct AgentOptions {
    pub servers: Vec<String>,
    pub token_file: PathBuf,
    pub server_ca_file: Option<PathBuf>,
    /// The cluster's name on the servers, when given (the token says it as well).
    pub cluster: Option<String>,
    /// How the cluster is read; its ignored namespaces are used until a server says otherwise.
    pub connect: ConnectOptions,
    pub buffer_dir: Option<PathBuf>,
    pub max_age: SignedDuration,
    pub max_bytes: u64,
    pub listen: Option<SocketAddr>,
    /// Follow the cluster by list-then-watch.
    pub watch: bool,
}

/// Why `dumbmonit agent` cannot run.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Clock(#[from] ClockError),
    /// A server's URL or CA, or the agent token's file.
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("--listen {address}: {source}")]
    Listen { address: SocketAddr, source: std::io::Error },
    /// The probes' address or the signals cannot be had from the system.
    #[error("{0}")]
    System(std::io::Error),
}

/// The default bound of the kept cycles' size.
pub const DEFAULT_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// What the agent's tasks share.
struct Shared {
    buffer: Mutex<Buffer>,
    settings: Mutex<Settings>,
    settings_file: Option<PathBuf>,
    token_file: PathBuf,
    cluster: Option<String>,
    /// Woken when a cycle is kept, one per server.
    wake: Vec<Notify>,
    /// Bytes of the last push to each server, and whether it went as a difference.
    last_push: Mutex<Vec<Option<(usize, bool)>>>,
    /// A cycle was made (the readiness probe waits for one).
    made_one: std::sync::atomic::AtomicBool,
}

impl Shared {
    /// The agent's token, read anew (it may have been rotated), and known as a secret.
    fn token(&self) -> Result<String, ConfigError> {
        let token = std::fs::read_to_string(&self.token_file).map(|t| t.trim().to_string()).map_err(|source| {
            FlagError::FlagFile { flag: "--agent-token-file", path: self.token_file.clone(), source }
        })?;
        crate::redact::know_secret(&token);
        Ok(token)
    }

    /// Takes the settings a server sent, and keeps them for the next start.
    fn take_settings(&self, s: Settings) {
        let mut current = self.settings.lock().expect("settings lock");
        if *current == s {
            return;
        }
        SettingsTaken {
            cluster: &s.cluster,
            interval_seconds: s.interval_seconds,
            timeout_seconds: s.timeout_seconds,
            ignored_namespaces: &s.ignored_namespaces,
            namespaces: &s.namespaces,
        }
        .emit();
        tracing::Span::current().record("cluster", s.cluster.as_str());
        if let Some(f) = &self.settings_file {
            let _ = crate::record::write_bytes(f, &serde_json::to_vec(&s).expect("settings serialize"));
        }
        *current = s;
    }

    /// The longest wait between two tries to reach a server: its cluster's interval, within
    /// 0.2 to 30 seconds, so that a server that is back gets the kept cycles within an interval.
    fn retry_cap(&self) -> Duration {
        let interval = self.settings.lock().expect("settings lock").interval_seconds;
        Duration::from_secs_f64(interval.clamp(0.2, 30.0))
    }

    /// What the probes say beyond "ok".
    fn notes(&self, servers: &[String]) -> String {
        let b = self.buffer.lock().expect("buffer lock");
        let mut out = String::new();
        if let Some(p) = &b.problem {
            out.push_str(p);
            out.push('\n');
        }
        let pushes = self.last_push.lock().expect("push lock");
        for (i, s) in servers.iter().enumerate() {
            out.push_str(&format!("{} cycle(s) waiting for {s}", b.pending(i)));
            if let Some((bytes, narrowed)) = pushes[i] {
                let how = if narrowed { "the difference from the last" } else { "a whole snapshot" };
                out.push_str(&format!("; last push {bytes} bytes ({how})"));
            }
            out.push('\n');
        }
        out
    }
}

pub fn main(options: AgentOptions) -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("the async runtime starts");
    let span = events::agent(options.cluster.as_deref());
    match runtime.block_on(run(options).instrument(span)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(crate::error::EXIT_UNKNOWN)
        }
    }
}

/// Watch mode: how long changes are let come together before a cycle reports them.
const DEBOUNCE: Duration = Duration::from_millis(100);

/// Watch mode: the least time between two cycles taken on changes (or twenty times what the
/// last cycle took, as serve does).
const MIN_BETWEEN: Duration = Duration::from_millis(500);

async fn run(o: AgentOptions) -> Result<(), AgentError> {
    let clock = Clock::from_env()?;
    let servers =
        o.servers.iter().map(|u| Server::new(u, o.server_ca_file.as_deref())).collect::<Result<Vec<_>, _>>()?;
    let urls: Vec<String> = servers.iter().map(|s| s.url.clone()).collect();
    let settings_file = o.buffer_dir.as_ref().map(|d| d.join("settings.json"));
    let cached: Option<Settings> =
        settings_file.as_ref().and_then(|f| std::fs::read(f).ok()).and_then(|b| serde_json::from_slice(&b).ok());
    let settings = cached.unwrap_or_else(|| Settings {
        cluster: o.cluster.clone().unwrap_or_default(),
        interval_seconds: 60.0,
        timeout_seconds: o.connect.timeout.0,
        ignored_namespaces: o.connect.ignored_namespaces.clone(),
        namespaces: o.connect.namespaces.clone(),
    });
    let shared = Arc::new(Shared {
        buffer: Mutex::new(Buffer::open(o.buffer_dir.as_deref(), &urls, o.max_age, o.max_bytes)),
        settings: Mutex::new(settings),
        settings_file,
        token_file: o.token_file.clone(),
        cluster: o.cluster.clone(),
        wake: urls.iter().map(|_| Notify::new()).collect(),
        last_push: Mutex::new(vec![None; urls.len()]),
        made_one: Default::default(),
    });
    // The cluster's name, when the settings kept from the last run know it.
    let known = shared.settings.lock().expect("settings lock").cluster.clone();
    if !known.is_empty() {
        tracing::Span::current().record("cluster", known.as_str());
    }
    shared.token()?;
    let servers: Vec<Arc<Server>> = servers.into_iter().map(Arc::new).collect();
    let said_at_start = ask_settings(&servers, &shared).await;

    let (stop_tx, stop) = watch::channel(false);
    let mut tasks = Vec::new();
    for (i, s) in servers.iter().enumerate() {
        Reporting { server: &s.url, proxy: s.proxy.as_deref() }.emit();
        let said = said_at_start[i].clone();
        let delivery = deliver(i, s.clone(), shared.clone(), stop.clone(), said);
        tasks.push(tokio::spawn(delivery.in_current_span()));
    }
    if let Some(listen) = o.listen {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|source| AgentError::Listen { address: listen, source })?;
        let bound = listener.local_addr().map_err(AgentError::System)?;
        ProbesOn { address: bound }.emit();
        tokio::spawn(probes(listener, shared.clone(), urls.clone()));
    }

    let mut connect = o.connect.clone();
    let mut reader = Reader::new(connect.clone()).await;
    let mut interval = Duration::ZERO;
    let mut ticker = tokio::time::interval(Duration::from_secs(3600));
    let mut last: Option<Timestamp> = None;
    let mut last_taken = tokio::time::Instant::now();
    let mut last_cost = Duration::ZERO;
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).map_err(AgentError::System)?;
    loop {
        let s = shared.settings.lock().expect("settings lock").clone();
        let wanted = Duration::from_secs_f64(s.interval_seconds.max(0.001));
        if wanted != interval {
            interval = wanted;
            ticker = tokio::time::interval(interval);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        }
        let timeout = crate::kube::Seconds(s.timeout_seconds.max(0.001));
        if timeout.duration() != connect.timeout.duration() {
            connect.timeout = timeout;
            reader = Reader::new(connect.clone()).await;
        }
        if o.watch {
            reader.follow(interval);
        }
        let changed = reader.changed();
        let between = tokio::select! {
            _ = ticker.tick() => false,
            // Watch mode: a change is reported within a second (changes that come together, once).
            _ = changed.notified(), if o.watch => {
                let settle = (last_taken + MIN_BETWEEN.max(last_cost * 20)).max(tokio::time::Instant::now() + DEBOUNCE);
                tokio::time::sleep_until(settle).await;
                true
            }
            _ = term.recv() => break,
            _ = tokio::signal::ctrl_c() => break,
        };
        let taking = tokio::time::Instant::now();
        let now = if between { clock.between(last) } else { clock.now(last) };
        last = Some(now);
        let options = CycleOptions {
            ignored_namespaces: s.ignored_namespaces.clone(),
            namespaces: s.namespaces.clone(),
            between,
            ..CycleOptions::default()
        };
        let cycle = reader.cycle(&options, now).await;
        last_taken = tokio::time::Instant::now();
        // The read once the stores are in sync (not the wait for a first list).
        last_cost = (last_taken - taking).min(Duration::from_secs(1));
        let (duration, stats, outcome) = reader::outcome(cycle, &reader.redactor);
        let note = shared.buffer.lock().expect("buffer lock").problem.clone();
        let report = Report {
            format: wire::FORMAT,
            time: now,
            sent: now + duration,
            duration_ms: duration.as_millis() as u64,
            stats: Stat::from_stats(&stats),
            address: reader.address().unwrap_or("the API server").to_string(),
            note,
            outcome: match outcome {
                Ok(snapshot) => Reported::Snapshot(Box::new(wire::whole(snapshot))),
                Err(u) => {
                    ClusterUnreadable { error: &u.message, duration }.emit();
                    Reported::Error(u.message)
                }
            },
            between,
        };
        let gz = report.to_gzip();
        drop(report);
        shared.buffer.lock().expect("buffer lock").keep(now, gz);
        shared.made_one.store(true, std::sync::atomic::Ordering::SeqCst);
        for w in &shared.wake {
            w.notify_one();
        }
    }
    Stopping.emit();
    let _ = stop_tx.send(true);
    for t in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(5), t).await;
    }
    Ok(())
}

/// Asks the servers for the cluster's settings before the first cycle; the first to answer
/// wins. None answering is no reason to wait: the agent starts with what it has. Returns what
/// was said of each server, so that it is not said again at the first push.
async fn ask_settings(servers: &[Arc<Server>], shared: &Arc<Shared>) -> Vec<Option<String>> {
    let mut said = vec![None; servers.len()];
    let Ok(token) = shared.token() else { return said };
    for (i, s) in servers.iter().enumerate() {
        let reply = s
            .send(
                Method::GET,
                "/api/v1/agent/settings",
                &token,
                shared.cluster.as_deref(),
                Vec::new(),
                Duration::from_secs(5),
            )
            .await;
        match reply {
            Ok(r) if r.status.is_success() => {
                if let Some(settings) = r.answer.and_then(|a| a.settings) {
                    shared.take_settings(settings);
                    return said;
                }
            }
            Ok(r) => {
                let reason = r.answer.and_then(|a| a.message);
                say(
                    &mut said[i],
                    &ServerRefused { server: &s.url, status: r.status.as_u16(), reason: reason.as_deref() },
                )
            }
            Err(e) => say(&mut said[i], &ServerUnreachable { server: &s.url, error: &e, kept: None }),
        }
    }
    said
}

/// Delivers the kept cycles to server `i`, oldest first, until told to stop.
async fn deliver(
    i: usize,
    server: Arc<Server>,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
    mut said: Option<String>,
) {
    // `said`: what was last said of a failure, so that a server that stays away is said once.
    let mut acked = Acknowledged::default();
    let mut backoff = Duration::from_millis(200);
    loop {
        if *stop.borrow() {
            return;
        }
        let next = shared.buffer.lock().expect("buffer lock").next_for(i);
        let Some(kept) = next else {
            tokio::select! {
                _ = shared.wake[i].notified() => {}
                _ = stop.changed() => return,
            }
            continue;
        };
        let report = match kept.bytes() {
            Ok(b) => Report::parse(&b, u64::MAX).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        let mut report = match report {
            Ok(r) => r,
            Err(e) => {
                KeptCycleUnreadable { cycle: kept.time, error: &e }.emit();
                shared.buffer.lock().expect("buffer lock").delivered(i, kept.time);
                continue;
            }
        };
        // How long it waited is the agent's clock moving on.
        report.sent += Timestamp::now().duration_since(kept.made);
        let mut whole_held = None;
        if let Reported::Snapshot(d) = report.outcome {
            whole_held = Some(d.held(report.time));
            report.outcome = Reported::Snapshot(Box::new(d.narrowed(&acked)));
        }
        let narrowed = matches!(&report.outcome, Reported::Snapshot(d) if d.base.is_some());
        let body = report.to_gzip();
        let size = body.len();
        let token = match shared.token() {
            Ok(t) => t,
            Err(e) => {
                say(&mut said, &TokenUnreadable { error: &e.to_string() });
                wait(&mut stop, backoff).await;
                continue;
            }
        };
        let deadline = Duration::from_secs(60);
        let reply =
            server.send(Method::POST, "/api/v1/agent/cycles", &token, shared.cluster.as_deref(), body, deadline).await;
        match reply {
            Ok(r) if r.status.is_success() => {
                if let Some(h) = whole_held {
                    acked = h;
                }
                if said.take().is_some() {
                    ServerBack { server: &server.url }.emit();
                }
                backoff = Duration::from_millis(200);
                shared.last_push.lock().expect("push lock")[i] = Some((size, narrowed));
                if let Some(s) = r.answer.and_then(|a| a.settings) {
                    shared.take_settings(s);
                }
                shared.buffer.lock().expect("buffer lock").delivered(i, report.time);
                drop(report);
            }
            Ok(r) if r.status == http::StatusCode::CONFLICT => {
                // The server does not hold the base (it restarted): the whole snapshot goes.
                acked = Acknowledged::default();
            }
            Ok(r) if matches!(r.status.as_u16(), 400 | 413 | 422) => {
                let why = r.answer.and_then(|a| a.message).unwrap_or_default();
                CycleRefused { server: &server.url, cycle: report.time, status: r.status.as_u16(), reason: &why }
                    .emit();
                shared.buffer.lock().expect("buffer lock").delivered(i, report.time);
            }
            Ok(r) => {
                let reason = r.answer.and_then(|a| a.message);
                say(
                    &mut said,
                    &ServerRefused { server: &server.url, status: r.status.as_u16(), reason: reason.as_deref() },
                );
                wait(&mut stop, backoff).await;
                backoff = (backoff * 2).min(shared.retry_cap());
            }
            Err(e) => {
                let waiting = shared.buffer.lock().expect("buffer lock").pending(i);
                say(&mut said, &ServerUnreachable { server: &server.url, error: &e, kept: Some(waiting) });
                wait(&mut stop, backoff).await;
                backoff = (backoff * 2).min(shared.retry_cap());
            }
        }
    }
}

/// Logs a failure unless it is the one said last.
fn say(said: &mut Option<String>, event: &dyn Emit) {
    // The count of kept cycles changes at every try: compare what comes before it.
    let message = event.to_string();
    let key = message.split("; ").next().unwrap_or("").to_string();
    if said.as_deref() != Some(key.as_str()) {
        event.emit();
        *said = Some(key);
    }
}

async fn wait(stop: &mut watch::Receiver<bool>, d: Duration) {
    tokio::select! {
        _ = tokio::time::sleep(d) => {}
        _ = stop.changed() => {}
    }
}

/// `/healthz` (alive: always 200, with what the agent has to say) and `/readyz` (200 once a
/// cycle was made). Neither depends on a cycle in progress, so a busy agent is never killed.
async fn probes(listener: tokio::net::TcpListener, shared: Arc<Shared>, servers: Vec<String>) {
    use http_body_util::Full;
    use hyper::service::service_fn;
    loop {
        let Ok((tcp, _)) = listener.accept().await else { continue };
        let shared = shared.clone();
        let servers = servers.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req: http::Request<hyper::body::Incoming>| {
                let (status, text) = match req.uri().path() {
                    "/healthz" => (200, format!("ok\n{}", shared.notes(&servers))),
                    "/readyz" if shared.made_one.load(std::sync::atomic::Ordering::SeqCst) => {
                        (200, format!("ready\n{}", shared.notes(&servers)))
                    }
                    "/readyz" => (503, "not ready: no cycle yet\n".to_string()),
                    _ => (404, "not found\n".to_string()),
                };
                let mut r = http::Response::new(Full::new(bytes::Bytes::from(text)));
                *r.status_mut() = http::StatusCode::from_u16(status).expect("a valid status");
                r.headers_mut().insert("content-type", http::HeaderValue::from_static("text/plain; charset=utf-8"));
                async move { Ok::<_, std::convert::Infallible>(r) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(Duration::from_secs(10))
                .serve_connection(hyper_util::rt::TokioIo::new(tcp), service)
                .await;
        });
    }
}
