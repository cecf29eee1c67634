//! `dumbmonit serve --config FILE`: watches every configured cluster every interval, evaluates
//! the rules, keeps their state and history in SQLite, delivers notifications, and serves the
//! pages, the JSON API and /metrics.
//!
//! Clusters are independent: each has its own task and its own deadlines, so a slow or dead
//! cluster never delays another; their cycles are spread over the interval. SIGHUP or a changed
//! file reloads the configuration without losing state; SIGTERM finishes the cycles under way
//! and the outbox flush, then exits.

pub mod agents;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use tokio::sync::{Notify, watch};

use crate::clock::Clock;
use crate::collect::reader::{self, Reader};
use crate::collect::{self, CollectionStat, CycleOptions};
use crate::config::{ClusterConfig, Config};
use crate::error::Redactor;
use crate::health::{self, Health};
use crate::kube;
use crate::metrics::exposition::{Packed, pack, prerender};
use crate::notify::worker::{Delivery, NotifierSet};
use crate::notify::{Client, Notifier};
use crate::rules::{Alert, RuleState, Transition, TransitionState};
use crate::state::{HistoryPoint, Store};

use crate::board::{Arranged, Board, StartPages, Timings};
pub use crate::clock::{log, words};

/// How `serve` runs beyond its configuration file.
#[derive(Default)]
pub struct ServeOptions {
    /// Shown on every page.
    pub banner: Option<String>,
    /// The file to reload on SIGHUP or change; None: no reload.
    pub config_path: Option<PathBuf>,
    /// Told the address once the pages are served.
    pub on_listening: Option<Box<dyn FnOnce(std::net::SocketAddr) + Send>>,
    /// `--shard`: wins over the file's `shard`.
    pub shard: Option<crate::config::Shard>,
    /// What serves the pages, the API, /metrics and the agents' door (`web::start`).
    pub pages: Option<StartPages>,
}

/// The clusters this instance watches: its shard's, or all.
fn owned(config: &Config, flag: Option<crate::config::Shard>) -> Vec<ClusterConfig> {
    match flag.or(config.shard) {
        None => config.clusters.clone(),
        Some(s) => config.clusters.iter().filter(|c| s.owns(&c.name)).cloned().collect(),
    }
}

pub fn main(config_path: &Path, shard: Option<crate::config::Shard>, pages: StartPages) -> ExitCode {
    let config = match Config::load(config_path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(crate::error::EXIT_UNKNOWN);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("the async runtime starts");
    let options =
        ServeOptions { config_path: Some(config_path.to_path_buf()), shard, pages: Some(pages), ..Default::default() };
    match runtime.block_on(run(config, options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(crate::error::EXIT_UNKNOWN)
        }
    }
}

fn notifiers(config: &Config) -> Result<Vec<Notifier>, String> {
    config.notifiers.iter().map(Notifier::from_config).collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())
}

struct Running {
    config: ClusterConfig,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
    /// Where an agent's reports go, for a cluster read through an agent.
    inbox: Option<tokio::sync::mpsc::Sender<crate::board::Push>>,
}

/// What every cluster task shares.
struct Shared {
    board: Arc<Board>,
    firing: Arc<Mutex<crate::notify::worker::Firing>>,
    wake: Arc<Notify>,
    clock: Clock,
}

/// Runs until SIGTERM or Ctrl-C.
pub async fn run(config: Config, options: ServeOptions) -> Result<(), String> {
    let clock = Clock::from_env().map_err(|e| e.to_string())?;
    let notifier_set: NotifierSet = Arc::new(RwLock::new(Arc::new(notifiers(&config)?)));
    let protection = config.protection().map_err(|e| e.to_string())?;
    // A state directory that cannot be used (read-only, full, missing) does not stop the
    // monitoring: the state then lives in memory, and every page says so.
    let (store, reader, state_error) = match Store::open(&config.state_dir)
        .and_then(|s| s.retry_all_now().map(|_| s))
        .and_then(|s| Ok((s, Store::open(&config.state_dir)?)))
    {
        Ok((store, reader)) => (store, reader, None),
        Err(e) => {
            log(&format!("{e}; monitoring goes on with the state in memory only"));
            let name = format!("dumbmonit-{}", std::process::id());
            let store = Store::open_in_memory(&name).map_err(|e| e.to_string())?;
            (store, Store::open_in_memory(&name).map_err(|e| e.to_string())?, Some(e.to_string()))
        }
    };
    // The key that seals the tokens of clusters added on the pages. Without it those clusters
    // cannot be read, and the pages change nothing; the clusters of the file are watched anyway.
    let secret_key = match crate::secret::SecretKey::load_or_create(&config.secret_key_path()) {
        Ok(k) => Some(Arc::new(k)),
        Err(e) => {
            log(&format!("{e}; clusters cannot be added on the pages, and those added before are not watched"));
            None
        }
    };
    let board =
        Arc::new(Board::new(store, reader, state_error, options.banner, protection, notifier_set.clone(), secret_key));
    let shared = Arc::new(Shared {
        board: board.clone(),
        firing: Arc::new(Mutex::new(Default::default())),
        wake: Arc::new(Notify::new()),
        clock,
    });
    let (stop_tx, stop_rx) = watch::channel(false);
    let delivery = Delivery {
        store: board.store.clone(),
        notifiers: notifier_set,
        client: Client::new(),
        firing: shared.firing.clone(),
        counters: board.counters.clone(),
    };
    let worker = tokio::spawn(delivery.run(shared.wake.clone(), stop_rx));
    let start = options.pages.ok_or("serve: nothing to serve the pages with")?;
    let pages = start(config.listen, config.tls.as_ref(), board.clone()).map_err(|e| e.to_string())?;
    let (scheme, address) = (pages.scheme, pages.address);

    let mut running: HashMap<String, Running> = HashMap::new();
    let shard = options.shard;
    let mine = watched(&config, shard, &board);
    apply_clusters(&shared, &mut running, &mine).await;
    board.set_ready();
    let of = match shard.or(config.shard) {
        Some(s) => format!(" (shard {s} of {} configured)", config.clusters.len()),
        None => String::new(),
    };
    log(&format!("dumbmonit serve: watching {} cluster(s){of}; pages on {scheme}://{address}", mine.len()));
    for n in board.notifiers().read().expect("notifiers lock").iter() {
        if n.kind == crate::config::NotifierKind::Webhook {
            log(&format!(
                "notifier {} posts to its webhook directly: replicas of serve would each post their own; \
                 to run replicas, notify through Alertmanager, which deduplicates them",
                n.name
            ));
        }
    }
    if let Some(f) = options.on_listening {
        f(address);
    }

    let mut current = config;
    let mut seen = options.config_path.as_deref().and_then(file_stamp);
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).map_err(|e| e.to_string())?;
    let mut hup = signal(SignalKind::hangup()).map_err(|e| e.to_string())?;
    loop {
        let reload = tokio::select! {
            _ = tokio::signal::ctrl_c() => break,
            _ = term.recv() => break,
            _ = hup.recv() => true,
            _ = board.clusters_changed.notified() => {
                apply_clusters(&shared, &mut running, &watched(&current, shard, &board)).await;
                continue;
            }
            _ = tokio::time::sleep(Duration::from_secs(2)) => {
                let stamp = options.config_path.as_deref().and_then(file_stamp);
                let changed = stamp.is_some() && stamp != seen;
                seen = stamp;
                changed
            }
        };
        if let (true, Some(path)) = (reload, options.config_path.as_deref()) {
            match Config::load(path) {
                Err(e) => log(&format!("configuration not reloaded, the running one stays: {e}")),
                Ok(new) => {
                    reload_into(&shared, &mut running, &current, &new, shard).await;
                    current = new;
                    log(&format!("configuration reloaded from {}", path.display()));
                }
            }
        }
    }
    log("stopping: finishing the cycles under way and flushing the outbox");
    apply_clusters(&shared, &mut running, &[]).await;
    let _ = stop_tx.send(true);
    let _ = worker.await;
    drop(pages);
    Ok(())
}

fn file_stamp(path: &Path) -> Option<(std::time::SystemTime, u64)> {
    std::fs::metadata(path).ok().and_then(|m| Some((m.modified().ok()?, m.len())))
}

async fn reload_into(
    shared: &Arc<Shared>,
    running: &mut HashMap<String, Running>,
    old: &Config,
    new: &Config,
    shard: Option<crate::config::Shard>,
) {
    if new.listen != old.listen {
        log("`listen` changed: that needs a restart; the pages stay where they are");
    }
    if new.state_dir != old.state_dir {
        log("`state_dir` changed: that needs a restart; the state stays where it is");
    }
    match notifiers(new) {
        Ok(n) => *shared.board.notifiers().write().expect("notifiers lock") = Arc::new(n),
        Err(e) => log(&format!("notifiers not reloaded: {e}")),
    }
    match new.protection() {
        Ok(p) => shared.board.set_protection(p),
        Err(e) => log(&format!("auth not reloaded: {e}")),
    }
    if shard.is_none() && new.shard != old.shard {
        let now = new.shard.map(|s| s.to_string()).unwrap_or_else(|| "none".into());
        log(&format!("shard is now {now}: clusters move in and out, each with its saved state"));
    }
    apply_clusters(shared, running, &watched(new, shard, &shared.board)).await;
}

/// The clusters this instance watches: its share of the file's, then its share of those added
/// on the pages (a name the file already uses is left out, and said).
fn watched(config: &Config, flag: Option<crate::config::Shard>, board: &Board) -> Vec<ClusterConfig> {
    let mut list = owned(config, flag);
    let shard = flag.or(config.shard);
    for c in page_clusters(board) {
        if list.iter().any(|f| f.name == c.name) {
            log(&format!("cluster {}: added on the pages and in the file; the file's is watched", c.name));
        } else if shard.is_none_or(|s| s.owns(&c.name)) {
            list.push(c);
        }
    }
    list
}

/// The clusters added on the pages that can be watched: those whose token unseals.
fn page_clusters(board: &Board) -> Vec<ClusterConfig> {
    board
        .stored_clusters()
        .into_iter()
        .filter_map(|c| match c.token {
            Ok(token) => Some(c.settings.to_cluster(&c.name, token)),
            Err(e) => {
                log(&format!("cluster {}: {e}", c.name));
                None
            }
        })
        .collect()
}

/// Stops the clusters that are gone or changed, starts the new and changed ones.
async fn apply_clusters(shared: &Arc<Shared>, running: &mut HashMap<String, Running>, clusters: &[ClusterConfig]) {
    let keep: Vec<&str> = clusters
        .iter()
        .filter(|c| running.get(&c.name).is_some_and(|r| r.config == **c))
        .map(|c| c.name.as_str())
        .collect();
    let stopping: Vec<String> = running.keys().filter(|n| !keep.contains(&n.as_str())).cloned().collect();
    for name in stopping {
        let r = running.remove(&name).expect("listed above");
        let _ = r.stop.send(true);
        let _ = r.task.await;
    }
    let order: Vec<Arranged> = clusters
        .iter()
        .map(|c| Arranged {
            name: c.name.clone(),
            address: shown_address(c),
            agent: c.is_agent(),
            from_pages: c.from_pages,
        })
        .collect();
    shared.board.arrange(&order);
    let watched: HashSet<&str> = order.iter().map(|a| a.name.as_str()).collect();
    shared.firing.lock().expect("firing lock").retain(|name| watched.contains(name));
    shared.board.keep_doors(|name| running.contains_key(name));
    let count = clusters.len().max(1) as u32;
    for (i, c) in clusters.iter().enumerate() {
        if let Some(r) = running.get(&c.name) {
            // A kept agent's cluster: its token file is read again.
            if let Some(inbox) = &r.inbox {
                agents::open_door(shared, c, inbox.clone());
            }
            continue;
        }
        let (stop, stop_rx) = watch::channel(false);
        let (task, inbox) = if c.is_agent() {
            let (tx, rx) = tokio::sync::mpsc::channel(8);
            agents::open_door(shared, c, tx.clone());
            (tokio::spawn(agents::watch_agent(c.clone(), shared.clone(), rx, stop_rx)), Some(tx))
        } else {
            // Spread the clusters' cycles over the interval.
            let offset = c.interval.duration().mul_f64(i as f64 / count as f64);
            (tokio::spawn(watch_cluster(c.clone(), shared.clone(), offset, stop_rx)), None)
        };
        running.insert(c.name.clone(), Running { config: c.clone(), stop, task, inbox });
    }
}

fn shown_address(c: &ClusterConfig) -> String {
    if c.is_agent() {
        return "through its agent (no report yet)".into();
    }
    match (&c.address, &c.kubeconfig, &c.context, c.in_cluster) {
        (Some(a), ..) => kube::address::parse_address(a, c.port).unwrap_or_else(|_| a.clone()),
        (None, Some(k), ctx, _) => {
            format!("kubeconfig {}{}", k.display(), ctx.as_ref().map(|c| format!(" ({c})")).unwrap_or_default())
        }
        (None, None, Some(ctx), _) => format!("kubeconfig context {ctx}"),
        _ => "in-cluster".into(),
    }
}

/// One cycle of a cluster, however it arrived: read here, or pushed by an agent. Everything
/// after it (the derivation, the rules, the state, notifications, the pages and /metrics) is
/// one path, `Watch::take`.
pub struct Arrival {
    /// When the cycle happened: the rules' "now" (an agent's cycles keep the agent's times).
    pub time: Timestamp,
    pub duration: Duration,
    pub stats: Vec<CollectionStat>,
    /// What was read, or why it could not be (a message free of secrets).
    pub outcome: Result<collect::Snapshot, String>,
    /// Heard of this long after it happened (a cycle an agent kept while the server was away).
    pub late: Option<SignedDuration>,
    /// Alerts raised while no report came which the late cycles show did not hold: resolved.
    pub retracted: Vec<Alert>,
}

/// The rules' state of one cluster and the one path its cycles take.
struct Watch {
    name: String,
    state: RuleState,
    shared: Arc<Shared>,
}

impl Watch {
    fn load(name: &str, shared: &Arc<Shared>) -> Watch {
        let board = &shared.board;
        let state: RuleState = match board.store.lock().expect("store lock").load(name) {
            Ok(s) => s,
            Err(e) => {
                log(&format!("cluster {name}: {e}; starting from an empty state"));
                RuleState::default()
            }
        };
        board.update(name, |v| {
            v.alerts = shown_alerts(&state);
            v.last_cycle = v.last_cycle.or(state.last_cycle);
        });
        Watch { name: name.into(), state, shared: shared.clone() }
    }

    /// Takes one cycle: derives its health, evaluates the rules, saves the state and the
    /// notifications in one transaction, and updates what the pages and /metrics show.
    async fn take(&mut self, arrival: Arrival) -> Vec<Transition> {
        let name = self.name.clone();
        let board = &self.shared.board;
        let now = arrival.time;
        let (mut transitions, health, error) = match arrival.outcome {
            Ok(snapshot) => {
                // The derivation takes a while at scale: off the threads that serve pages.
                let cluster = name.clone();
                let mut moved = std::mem::take(&mut self.state);
                let (back, transitions, h, objects) = tokio::task::spawn_blocking(move || {
                    let mut h = health::assess(snapshot);
                    let transitions = moved.observe(now, &cluster, &mut h);
                    let objects = object_series(&cluster, &h);
                    h.keep_problem_pods();
                    (moved, transitions, h, objects)
                })
                .await
                .expect("the derivation does not panic");
                self.state = back;
                board.update(&name, |v| v.objects = Arc::new(objects));
                (transitions, Some(h), None)
            }
            Err(message) => (self.state.observe_failure(now, &name, &message), None, Some(message)),
        };
        for alert in arrival.retracted {
            if !self.state.alerts.values().any(|a| a.labels == alert.labels) {
                transitions.push(Transition {
                    time: now,
                    state: TransitionState::Resolved,
                    alert,
                    previous_labels: None,
                });
            }
        }
        // Notifications of a cycle heard of late say so; the alert's own times stay the cycle's.
        let told: Vec<Transition> = match arrival.late {
            None => transitions.clone(),
            Some(late) => transitions.iter().cloned().map(|t| late_note(t, late)).collect(),
        };
        let notifications: Vec<(String, String)> = board
            .notifiers()
            .read()
            .expect("notifiers lock")
            .iter()
            .flat_map(|n| n.bodies(&told).into_iter().map(|b| (n.name.clone(), b)))
            .collect();
        let point = health.as_ref().map(|h| {
            let k = &h.counts;
            HistoryPoint {
                time: now.as_second(),
                nodes: k.nodes as i64,
                nodes_ready: k.nodes_ready as i64,
                pods_running: k.pods_running as i64,
                pods_pending: k.pods_pending as i64,
                pods_failed: k.pods_failed as i64,
                pods_crashlooping: k.pods_crashlooping as i64,
                warning_events: k.warning_events as i64,
            }
        });
        // What Alertmanager is re-sent changes before the outbox does: a re-send taken from the
        // previous cycle must never follow this cycle's resolution (it would fire the alert again).
        self.shared
            .firing
            .lock()
            .expect("firing lock")
            .cycled(&name, self.state.alerts.values().filter(|a| a.firing()).cloned().collect());
        let saving = std::time::Instant::now();
        let committed = board.store.lock().expect("store lock").commit_cycle(&name, &self.state, &notifications, point);
        Timings::push(&mut board.timings.lock().expect("timings lock").commit, saving.elapsed());
        match committed {
            Ok(()) => board.saved(Ok(())),
            Err(e) => {
                log(&format!("cluster {name}: cannot persist the cycle, monitoring goes on: {e}"));
                board.saved(Err(e.to_string()));
            }
        }
        self.shared.wake.notify_one();
        let failed = error.is_some();
        if failed && transitions.is_empty() {
            log(&format!("cluster {name}: {}", error.as_deref().unwrap_or("")));
        }
        let own = labelled(&name, crate::metrics::monitor_families(!failed, arrival.duration, &arrival.stats));
        let alerts = shown_alerts(&self.state);
        board.update(&name, |v| {
            v.last_cycle = Some(now);
            v.up = !failed;
            v.cycle_duration = arrival.duration;
            v.stats = arrival.stats;
            v.alerts = alerts;
            v.own = Arc::new(own);
            match health {
                Some(h) => {
                    v.health = Some(Arc::new(h));
                    v.last_good = Some(now);
                    v.error = None;
                }
                None => v.error = error,
            }
        });
        reader::release_free_memory_now_and_then();
        for t in &transitions {
            let verb = match t.state {
                TransitionState::Firing => "firing",
                TransitionState::Escalated => "escalated",
                TransitionState::Resolved => "resolved",
            };
            let late = arrival.late.map(|l| format!(" (reported {} late)", words(l))).unwrap_or_default();
            log(&format!(
                "cluster {name}: {verb} {} ({}){late}: {}",
                t.alert.alertname,
                t.alert.severity.as_str(),
                t.alert.summary
            ));
        }
        transitions
    }
}

/// A transition as told when its cycle was heard of late.
fn late_note(mut t: Transition, late: SignedDuration) -> Transition {
    let note = format!(
        "Reported late: this happened at {}, {} before the server heard of it (the agent could not reach the server until then).",
        t.time,
        words(late)
    );
    t.alert.description = if t.alert.description.is_empty() { note } else { format!("{} {note}", t.alert.description) };
    t
}

async fn watch_cluster(c: ClusterConfig, shared: Arc<Shared>, offset: Duration, mut stop: watch::Receiver<bool>) {
    let name = c.name.clone();
    let mut watch = Watch::load(&name, &shared);
    let options = CycleOptions { ignored_namespaces: c.ignored_namespaces.clone(), record: c.record_dir.is_some() };
    let mut reader = Reader::new(c.connect_options()).await;
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + offset, c.interval.duration());
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let due = tokio::select! {
            // A stop wins over a tick that is due at the same moment.
            biased;
            _ = stop.changed() => return,
            due = ticker.tick() => due,
        };
        Timings::push(&mut shared.board.timings.lock().expect("timings lock").start_lag, due.elapsed());
        let now = shared.clock.now(watch.state.last_cycle);
        let cycle = reader.cycle(&options, now).await;
        if let (Some(dir), Ok(cycle)) = (&c.record_dir, &cycle) {
            record(dir, cycle, &reader.redactor, c.record_retention.duration());
        }
        let (duration, stats, outcome) = reader::outcome(cycle, &reader.redactor);
        watch.take(Arrival { time: now, duration, stats, outcome, late: None, retracted: Vec::new() }).await;
    }
}

/// The active alerts as the pages list them: firing first, then the most severe, then the oldest.
fn shown_alerts(state: &RuleState) -> Arc<Vec<Alert>> {
    let mut list: Vec<Alert> = state.alerts.values().cloned().collect();
    list.sort_by_key(|a| (!a.firing(), std::cmp::Reverse(a.severity), a.active_at));
    Arc::new(list)
}

/// Families with the `cluster` label first, rendered and compressed.
fn labelled(cluster: &str, mut families: Vec<crate::metrics::exposition::Family>) -> Vec<Packed> {
    for f in &mut families {
        for s in &mut f.samples {
            s.labels.insert(0, ("cluster", cluster.to_string()));
        }
    }
    pack(prerender(&families))
}

/// A good cycle's object series, rendered for /metrics.
fn object_series(cluster: &str, h: &Health) -> Vec<Packed> {
    labelled(cluster, crate::metrics::cluster_families(h))
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
