//! `dumbmonit serve --config FILE`: watches every configured cluster every interval, evaluates
//! the rules, keeps their state in SQLite and delivers notifications.
//!
//! Clusters are independent: each has its own task and its own deadline, so a slow or dead
//! cluster never delays another; their cycles are spread over the interval.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use tokio::sync::{Notify, watch};

use crate::collect::{self, CycleOptions};
use crate::config::{ClusterConfig, Config};
use crate::error::Redactor;
use crate::health;
use crate::kube::{self, Fetcher};
use crate::notify::worker::{Counters, Delivery};
use crate::notify::{Client, Notifier};
use crate::rules::{Alert, RuleState, TransitionState};
use crate::state::Store;

/// For tests only: `START/STEP` (an RFC 3339 time and seconds) makes the first cycle happen at
/// START and each next one STEP seconds after the last committed one, whatever the wall clock
/// says, so that hours of rule time pass in seconds, across restarts too.
pub const TEST_CLOCK_ENV: &str = "DUMBMONIT_TEST_CLOCK";

#[derive(Clone, Copy, Debug)]
enum Clock {
    Wall,
    Stepped { start: Timestamp, step: SignedDuration },
}

impl Clock {
    fn from_env() -> Result<Clock, String> {
        let Ok(v) = std::env::var(TEST_CLOCK_ENV) else { return Ok(Clock::Wall) };
        let (start, step) = v.split_once('/').ok_or_else(|| format!("{TEST_CLOCK_ENV}: expected START/STEP"))?;
        let start = start.parse().map_err(|e| format!("{TEST_CLOCK_ENV}: {e}"))?;
        let step: i64 = step.parse().map_err(|e| format!("{TEST_CLOCK_ENV}: {e}"))?;
        Ok(Clock::Stepped { start, step: SignedDuration::from_secs(step) })
    }

    fn now(self, last: Option<Timestamp>) -> Timestamp {
        match self {
            Clock::Wall => Timestamp::now(),
            Clock::Stepped { start, step } => last.map(|t| t + step).unwrap_or(start),
        }
    }
}

fn log(message: &str) {
    eprintln!("{} {message}", Timestamp::now().round(jiff::Unit::Second).unwrap_or(Timestamp::now()));
}

/// What every cluster task shares.
struct Shared {
    store: Arc<Mutex<Store>>,
    notifiers: Arc<Vec<Notifier>>,
    firing: Arc<Mutex<BTreeMap<String, Vec<Alert>>>>,
    wake: Arc<Notify>,
    clock: Clock,
}

pub fn main(config_path: &Path) -> ExitCode {
    let config = match Config::load(config_path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(crate::cli::EXIT_UNKNOWN);
        }
    };
    let clock = match Clock::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(crate::cli::EXIT_UNKNOWN);
        }
    };
    let notifiers = match config.notifiers.iter().map(Notifier::from_config).collect::<Result<Vec<_>, _>>() {
        Ok(n) => n,
        Err(e) => {
            eprintln!("{}: {e}", config_path.display());
            return ExitCode::from(crate::cli::EXIT_UNKNOWN);
        }
    };
    let store = match Store::open(&config.state_dir).and_then(|s| s.retry_all_now().map(|_| s)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(crate::cli::EXIT_UNKNOWN);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("the async runtime starts");
    runtime.block_on(run(config, store, notifiers, clock))
}

async fn run(config: Config, store: Store, notifiers: Vec<Notifier>, clock: Clock) -> ExitCode {
    let shared = Arc::new(Shared {
        store: Arc::new(Mutex::new(store)),
        notifiers: Arc::new(notifiers),
        firing: Arc::new(Mutex::new(BTreeMap::new())),
        wake: Arc::new(Notify::new()),
        clock,
    });
    let (stop_tx, stop_rx) = watch::channel(false);
    let delivery = Delivery {
        store: shared.store.clone(),
        notifiers: shared.notifiers.clone(),
        client: Client::new(),
        firing: shared.firing.clone(),
        counters: Arc::new(Mutex::new(Counters::default())),
    };
    let worker = tokio::spawn(delivery.run(shared.wake.clone(), stop_rx.clone()));
    let count = config.clusters.len() as u32;
    let mut tasks = Vec::new();
    for (i, cluster) in config.clusters.into_iter().enumerate() {
        // Spread the clusters' cycles over the interval.
        let offset = cluster.interval.duration().mul_f64(i as f64 / count as f64);
        tasks.push(tokio::spawn(watch_cluster(cluster, shared.clone(), offset, stop_rx.clone())));
    }
    log(&format!("dumbmonit serve: watching {count} cluster(s)"));
    wait_for_signal().await;
    log("stopping: finishing the cycles under way and flushing the outbox");
    let _ = stop_tx.send(true);
    for t in tasks {
        let _ = t.await;
    }
    let _ = worker.await;
    ExitCode::SUCCESS
}

async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM can be handled");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

async fn watch_cluster(c: ClusterConfig, shared: Arc<Shared>, offset: Duration, mut stop: watch::Receiver<bool>) {
    let name = c.name.clone();
    let mut state: RuleState = match shared.store.lock().expect("store lock").load(&name) {
        Ok(s) => s,
        Err(e) => {
            log(&format!("cluster {name}: {e}; starting from an empty state"));
            RuleState::default()
        }
    };
    let options = CycleOptions { ignored_namespaces: c.ignored_namespaces.clone(), record: c.record_dir.is_some() };
    let mut redactor = Redactor::default();
    if let Some(t) = &c.token {
        redactor.add(t);
    }
    // A connection that cannot be set up (a missing token file, say) fails every cycle with its
    // message, as a read would: the unreachable rule then speaks for it.
    let fetcher = match kube::connect(&c.connect_options()).await {
        Ok(conn) => {
            redactor = conn.redactor.clone();
            Fetcher::new(&conn, c.timeout.duration()).map_err(|e| e.to_string())
        }
        Err(e) => Err(e.to_string()),
    };
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + offset, c.interval.duration());
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            _ = stop.changed() => return,
        }
        let now = shared.clock.now(state.last_cycle);
        let (transitions, summary) = match &fetcher {
            Ok(f) => {
                let cycle = collect::run(f, &options, now).await;
                if let Some(dir) = &c.record_dir {
                    record(dir, &cycle, &redactor, c.record_retention.duration());
                }
                match &cycle.result {
                    Ok(snapshot) => {
                        let h = health::assess(snapshot);
                        (state.observe(now, &name, &h), h.summary())
                    }
                    Err(e) => {
                        let message = redactor.clean(&e.to_string());
                        (state.observe_failure(now, &name, &message), message)
                    }
                }
            }
            Err(message) => (state.observe_failure(now, &name, message), message.clone()),
        };
        let notifications: Vec<(String, String)> = shared
            .notifiers
            .iter()
            .flat_map(|n| n.bodies(&transitions).into_iter().map(|b| (n.name.clone(), b)))
            .collect();
        if let Err(e) = shared.store.lock().expect("store lock").commit_cycle(&name, &state, &notifications) {
            log(&format!("cluster {name}: cannot persist the cycle, monitoring goes on: {e}"));
        }
        shared
            .firing
            .lock()
            .expect("firing lock")
            .insert(name.clone(), state.alerts.values().filter(|a| a.firing()).cloned().collect());
        shared.wake.notify_one();
        for t in &transitions {
            let verb = match t.state {
                TransitionState::Firing => "firing",
                TransitionState::Escalated => "escalated",
                TransitionState::Resolved => "resolved",
            };
            log(&format!(
                "cluster {name}: {verb} {} ({}): {}",
                t.alert.alertname,
                t.alert.severity.as_str(),
                t.alert.summary
            ));
        }
        if transitions.is_empty() && state.failures > 0 {
            log(&format!("cluster {name}: {summary}"));
        }
    }
}

/// Writes the cycle into `dir` and removes recorded cycles older than `retention`.
fn record(dir: &Path, cycle: &collect::Cycle, redactor: &Redactor, retention: Duration) {
    let message = cycle.result.as_ref().err().map(|e| redactor.clean(&e.to_string()));
    let outcome = match (&cycle.recording, &message) {
        (Some(r), _) => Ok(r),
        (None, Some(m)) => Err(m.as_str()),
        (None, None) => return,
    };
    let stamp = cycle.time.strftime("%Y%m%dT%H%M%SZ").to_string();
    let path: PathBuf = dir.join(format!("cycle-{stamp}.json.gz"));
    let text = redactor.clean(&crate::record::render(cycle.time, outcome));
    if let Err(e) = std::fs::create_dir_all(dir).and_then(|_| crate::record::write(&path, &text)) {
        log(&format!("cannot record the cycle to {}: {e}", path.display()));
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let cutoff = std::time::SystemTime::now() - retention;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let old = e.metadata().and_then(|m| m.modified()).is_ok_and(|m| m < cutoff);
        if name.starts_with("cycle-") && name.ends_with(".json.gz") && old {
            let _ = std::fs::remove_file(e.path());
        }
    }
}
