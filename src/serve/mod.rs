//! `dumbmonit serve --config FILE`: watches every configured cluster every interval, evaluates
//! the rules, keeps their state and history in SQLite, delivers notifications, and serves the
//! pages, the JSON API and /metrics.
//!
//! This file is the supervisor: it starts the pages and the delivery worker, starts and stops one
//! task per cluster as the configuration (and the pages) change, and stops them all on SIGTERM.
//! The rooms below it, each using only what the one below exports:
//!
//! - [`direct`]: a cluster `serve` reads itself, a cycle every interval;
//! - [`agents`]: a cluster read by a relay agent, whose reports are put in order;
//! - [`path`]: the one path every cycle takes, whichever of those brought it (derive → commit →
//!   publish).
//!
//! Clusters are independent: each has its own task and its own deadlines, so a slow or dead
//! cluster never delays another; their cycles are spread over the interval. SIGHUP or a changed
//! file reloads the configuration without losing state; SIGTERM finishes the cycles under way
//! and the outbox flush, then exits.

mod agents;
mod direct;
mod events;
mod home;
mod owners;
pub mod path;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::sync::{Notify, watch};

use crate::board::{Arranged, Board, Persistence, StartPages};
use crate::clock::{Clock, ClockError};
use crate::config::{ClusterConfig, Config};
use crate::error::{ConfigError, PagesError};
use crate::kube;
use crate::logs::Emit;
use crate::notify::worker::{Delivery, NotifierSet};
use crate::notify::{Client, Notifier};
use crate::rules::tune::Tuning;
use crate::state::{StateError, Store};
use events::Said;
use path::Shared;

/// How `serve` runs beyond its configuration file.
#[derive(Default)]
pub struct ServeOptions {
    /// Shown on every page: a message of the pages (`locales/*/pages.ftl`), said in the reader's
    /// language.
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

/// How many threads `serve` runs its blocking work on at most: the cycles' derivations and
/// commits, the state's loads, the leases. tokio's default is 512, for blocking on I/O. At 5,000
/// clusters (83 cycles a second) the pool grew to about 500 threads in the first interval, and
/// handing each task to the next idle thread kept them all alive (none stays idle for tokio's
/// 10 s); every thread holds its own allocator cache, and a core runs one derivation at a time.
pub const BLOCKING_THREADS: usize = 64;

/// `serve`'s runtime: a worker thread per core, and at most [`BLOCKING_THREADS`] for its
/// blocking work (the pages have a runtime of their own, `web`).
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .max_blocking_threads(BLOCKING_THREADS)
        .enable_all()
        .build()
        .expect("the async runtime starts")
}

pub fn main(config_path: &Path, shard: Option<crate::config::Shard>, pages: StartPages) -> ExitCode {
    let config = match Config::load(config_path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(crate::error::EXIT_UNKNOWN);
        }
    };
    let runtime = runtime();
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

fn notifiers(config: &Config) -> Result<Vec<Notifier>, ConfigError> {
    config.notifiers.iter().map(Notifier::from_config).collect()
}

/// Why `serve` could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Clock(#[from] ClockError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Not even a state in memory could be opened.
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Pages(#[from] PagesError),
    #[error("serve: nothing to serve the pages with")]
    NoPages,
    /// `[state]` that cannot be used: settings, or a server that answers and refuses.
    #[error("{0}")]
    SharedState(#[from] crate::state::postgres::StartError),
    #[error(
        "serve: --shard splits the clusters of replicas that keep their own state; replicas sharing [state] split them themselves"
    )]
    ShardWithSharedState,
    #[error(
        "[state]: the secret key {} cannot unseal the tokens of {} cluster(s) added on the pages ({}): every replica sharing the state needs the same secret_key_file; copy it from the replica that added them",
        path.display(),
        clusters.len(),
        clusters.join(", ")
    )]
    KeyMismatch { path: PathBuf, clusters: Vec<String> },
    /// SIGTERM or SIGHUP cannot be listened for.
    #[error("{0}")]
    Signals(std::io::Error),
}

struct Running {
    config: ClusterConfig,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
    /// Where an agent's reports go, for a cluster read through an agent.
    inbox: Option<tokio::sync::mpsc::Sender<crate::board::Push>>,
}

/// Runs until SIGTERM or Ctrl-C.
pub async fn run(config: Config, options: ServeOptions) -> Result<(), ServeError> {
    let clock = Clock::from_env()?;
    let notifier_set: NotifierSet = Arc::new(RwLock::new(Arc::new(notifiers(&config)?)));
    let protection = config.protection()?;
    let tuning = Tuning::check(&config.rules, options.config_path.as_deref())?;
    // With `[state]`, PostgreSQL, shared with the other replicas: settings or a server that
    // cannot be used stop the start; a server that cannot be reached yet does not (the
    // renewals reach it, and this replica reads no cluster until they do).
    let shared_state = match &config.state {
        None => None,
        Some(settings) => {
            if options.shard.or(config.shard).is_some() {
                return Err(ServeError::ShardWithSharedState);
            }
            let shared = crate::state::postgres::open(settings)?;
            if let Err(e) = shared.check() {
                if !e.is_unreachable() {
                    return Err(e.into());
                }
                Said::SharedStateAway { error: &e.to_string() }.emit();
            }
            Some(shared)
        }
    };
    // A state directory that cannot be used (read-only, full, missing) does not stop the
    // monitoring: the state then lives in memory, and every page says so.
    let (store, reader, state_error) = match &shared_state {
        Some(shared) => (shared.store()?, shared.store()?, None),
        None => match Store::open(&config.state_dir)
            .and_then(|mut s| s.retry_all_now().map(|_| s))
            .and_then(|s| Ok((s, Store::open(&config.state_dir)?)))
        {
            Ok((store, reader)) => (store, reader, None),
            Err(e) => {
                Said::StateInMemory { error: &e }.emit();
                let name = format!("dumbmonit-{}", std::process::id());
                let store = Store::open_in_memory(&name)?;
                (store, Store::open_in_memory(&name)?, Some(e.to_string()))
            }
        },
    };
    // The key that seals the tokens of clusters added on the pages. Without it those clusters
    // cannot be read, and the pages change nothing; the clusters of the file are watched anyway.
    let secret_key = match crate::secret::SecretKey::load_or_create(&config.secret_key_path()) {
        Ok(k) => Some(Arc::new(k)),
        Err(e) => {
            Said::NoSecretKey { error: &e }.emit();
            None
        }
    };
    // Replicas share the clusters added on the pages, sealed with the key of the replica that
    // added them: one whose key opens none of them would watch none, and say so one by one.
    let mut reader = reader;
    if let (Some(_), Some(key)) = (&shared_state, &secret_key)
        && let Ok(stored) = reader.stored_clusters(key)
    {
        let sealed: Vec<String> = stored.into_iter().flatten().filter(|c| c.token.is_err()).map(|c| c.name).collect();
        if !sealed.is_empty() {
            return Err(ServeError::KeyMismatch { path: config.secret_key_path(), clusters: sealed });
        }
    }
    let store = Arc::new(Mutex::new(store));
    let counters = Arc::new(Mutex::new(Default::default()));
    let board = Arc::new(Board::new(
        Persistence { store: store.clone(), reader, error: state_error },
        options.banner,
        protection,
        notifier_set.clone(),
        secret_key,
        counters.clone(),
    ));
    board.set_clock(clock);
    board.set_tuning(tuning);
    board.quieting().set_file_quiet(config.silences(), config.windows());
    board.quieting().load_kept_quiet();
    let shared = Arc::new(Shared {
        board: board.clone(),
        firing: Arc::new(Mutex::new(Default::default())),
        wake: Arc::new(Notify::new()),
        clock,
        #[cfg(test)]
        derived: None,
    });
    let (stop_tx, stop_rx) = watch::channel(false);
    let claimer = shared_state.as_ref().map(|s| s.replica.clone());
    let delivery = Delivery {
        store,
        notifiers: notifier_set,
        client: Client::new(),
        firing: shared.firing.clone(),
        counters,
        claimer: claimer.as_ref().map(|r| r.name.clone()).unwrap_or_else(|| "local".into()),
        claim_for: claimer.map(|r| r.lease).unwrap_or(Duration::from_secs(300)),
    };
    let worker = tokio::spawn(delivery.run(shared.wake.clone(), stop_rx.clone()));
    let home = tokio::spawn(home::follow(board.clone(), stop_rx.clone()));
    let start = options.pages.ok_or(ServeError::NoPages)?;
    let pages = start(config.listen, config.tls.as_ref(), board.clone())?;
    let (scheme, address) = (pages.scheme, pages.address);

    let mut running: HashMap<String, Running> = HashMap::new();
    let shard = options.shard;
    // With a shared state, the clusters this replica owns (None until the first renewal says).
    let known: owners::Known = Default::default();
    let (owned_tx, mut owned) = watch::channel::<Option<owners::Owned>>(None);
    let sharing = shared_state.is_some();
    // Before the first renewal: what this replica knows (the renewals' list), and none read.
    let mine = mine_of(&config, shard, &board, sharing.then(|| owned_set(&owned)), &known);
    let renewals = shared_state.map(|s| {
        let pages = config.external_url.clone().unwrap_or_else(|| format!("{scheme}://{address}"));
        tokio::spawn(owners::follow(s, board.clone(), known.clone(), pages, owned_tx, stop_rx.clone()))
    });
    apply_clusters(&shared, &mut running, &mine).await;
    board.set_ready();
    let pages_at = format!("{scheme}://{address}");
    Said::Watching {
        clusters: mine.len(),
        shard: shard.or(config.shard).map(|s| (s.to_string(), config.clusters.len())),
        pages: &pages_at,
    }
    .emit();
    // Replicas sharing PostgreSQL share one outbox: each notification is sent once whatever
    // the notifier, and there is nothing to warn of.
    for n in board.notifiers().read().expect("notifiers lock").iter().filter(|_| !sharing) {
        if !n.sink.deduplicates() {
            Said::NotDeduplicated { notifier: &n.name, kind: n.sink.kind().as_str() }.emit();
        }
    }
    if let Some(f) = options.on_listening {
        f(address);
    }

    let mut current = config;
    let mut seen = options.config_path.as_deref().and_then(file_stamp);
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).map_err(ServeError::Signals)?;
    let mut hup = signal(SignalKind::hangup()).map_err(ServeError::Signals)?;
    loop {
        let reload = tokio::select! {
            _ = tokio::signal::ctrl_c() => break,
            _ = term.recv() => break,
            _ = hup.recv() => true,
            change = board.page_clusters().changed() => {
                let mine = mine_of(&current, shard, &board, sharing.then(|| owned_set(&owned)), &known);
                apply_clusters(&shared, &mut running, &mine).await;
                board.page_clusters().applied_up_to(change);
                continue;
            }
            Ok(()) = owned.changed(), if sharing => {
                let now = owned.borrow_and_update().clone().map(|o| o.clusters);
                apply_clusters(&shared, &mut running, &mine_of(&current, shard, &board, Some(now), &known)).await;
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
            // A file whose `[[rule]]` entries are refused is not reloaded at all, as one whose
            // other sections are.
            match Config::load(path).and_then(|new| Tuning::check(&new.rules, Some(path)).map(|t| (new, t))) {
                Err(e) => Said::NotReloaded { error: &e }.emit(),
                Ok((new, tuning)) => {
                    shared.board.set_tuning(tuning);
                    let owned = sharing.then(|| owned_set(&owned));
                    reload_into(&shared, &mut running, &current, &new, shard, owned, &known).await;
                    current = new;
                    Said::Reloaded { path }.emit();
                }
            }
        }
    }
    Said::Stopping.emit();
    apply_clusters(&shared, &mut running, &[]).await;
    let _ = stop_tx.send(true);
    let _ = worker.await;
    let _ = home.await;
    if let Some(r) = renewals {
        let _ = r.await;
    }
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
    owned: Option<Option<BTreeSet<String>>>,
    known: &owners::Known,
) {
    if new.listen != old.listen {
        Said::NeedsRestart { key: "listen", stays: "the pages stay where they are" }.emit();
    }
    if new.state_dir != old.state_dir {
        Said::NeedsRestart { key: "state_dir", stays: "the state stays where it is" }.emit();
    }
    if new.state != old.state {
        Said::NeedsRestart { key: "state", stays: "the state stays where it is" }.emit();
    }
    match notifiers(new) {
        Ok(n) => *shared.board.notifiers().write().expect("notifiers lock") = Arc::new(n),
        Err(e) => Said::NotifiersNotReloaded { error: &e }.emit(),
    }
    // Checked when the file loaded: a file with a bad silence or window is not reloaded at all.
    shared.board.quieting().set_file_quiet(new.silences(), new.windows());
    match new.protection() {
        Ok(p) => shared.board.set_protection(p),
        Err(e) => Said::AuthNotReloaded { error: &e }.emit(),
    }
    if shard.is_none() && new.shard != old.shard {
        let now = new.shard.map(|s| s.to_string()).unwrap_or_else(|| "none".into());
        Said::ShardNow { shard: &now }.emit();
    }
    apply_clusters(shared, running, &mine_of(new, shard, &shared.board, owned, known)).await;
}

/// The clusters a renewal said this replica owns (None before the first).
fn owned_set(owned: &watch::Receiver<Option<owners::Owned>>) -> Option<BTreeSet<String>> {
    owned.borrow().as_ref().map(|o| o.clusters.clone())
}

/// The clusters this process reads: with a shared state, those of [`watched`] it owns (none
/// before the first renewal), the others being known to the renewals; else all of [`watched`].
fn mine_of(
    config: &Config,
    flag: Option<crate::config::Shard>,
    board: &Board,
    owned: Option<Option<BTreeSet<String>>>,
    known: &owners::Known,
) -> Vec<ClusterConfig> {
    let all = watched(config, flag, board);
    match owned {
        None => all,
        Some(owned) => {
            *known.lock().expect("known lock") = all.iter().map(|c| c.name.clone()).collect();
            let owned = owned.unwrap_or_default();
            all.into_iter().filter(|c| owned.contains(&c.name)).collect()
        }
    }
}

/// The clusters this instance watches: its share of the file's, then its share of those added
/// on the pages (a name the file already uses is left out, and said).
fn watched(config: &Config, flag: Option<crate::config::Shard>, board: &Board) -> Vec<ClusterConfig> {
    let mut list = owned(config, flag);
    let shard = flag.or(config.shard);
    for c in page_clusters(board) {
        if list.iter().any(|f| f.name == c.name) {
            Said::InFileAndOnPages { cluster: &c.name }.emit();
        } else if shard.is_none_or(|s| s.owns(&c.name)) {
            list.push(c);
        }
    }
    list
}

/// The clusters added on the pages that can be watched: those whose token unseals.
fn page_clusters(board: &Board) -> Vec<ClusterConfig> {
    board
        .page_clusters()
        .stored()
        .into_iter()
        .filter_map(|c| match c.token {
            Ok(token) => Some(c.settings.to_cluster(&c.name, token)),
            Err(e) => {
                Said::NotWatched { cluster: &c.name, error: &e }.emit();
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
    shared.board.views().arrange(&order);
    let watched: HashSet<&str> = order.iter().map(|a| a.name.as_str()).collect();
    shared.firing.lock().expect("firing lock").retain(|name| watched.contains(name));
    shared.board.views().keep_doors(|name| running.contains_key(name));
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
            (tokio::spawn(direct::read_cluster(c.clone(), shared.clone(), offset, stop_rx)), None)
        };
        running.insert(c.name.clone(), Running { config: c.clone(), stop, task, inbox });
    }
}

fn shown_address(c: &ClusterConfig) -> String {
    if c.is_agent() {
        return "through its agent (no report yet)".into();
    }
    match (&c.connect.address, &c.connect.kubeconfig, &c.connect.context, c.connect.in_cluster) {
        (Some(a), ..) => kube::address::parse_address(a, c.connect.port).unwrap_or_else(|_| a.clone()),
        (None, Some(k), ctx, _) => {
            format!("kubeconfig {}{}", k.display(), ctx.as_ref().map(|c| format!(" ({c})")).unwrap_or_default())
        }
        (None, None, Some(ctx), _) => format!("kubeconfig context {ctx}"),
        _ => "in-cluster".into(),
    }
}
