//! The board: what `serve` knows of every cluster, kept up to date by the cluster tasks and read
//! by the pages, the JSON API, /metrics and the agents' door. It sits below both `serve` (which
//! fills it) and `web` (which reads it), so that neither imports the other.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use tokio::sync::{mpsc, oneshot};

use crate::auth::Protection;
use crate::clock::words;
use crate::collect::CollectionStat;
use crate::health::{Grade, Health};
use crate::lang::Lang;
use crate::metrics::cache::ExpositionCache;
use crate::metrics::exposition::Packed;
use crate::notify::worker::{Counters, NotifierSet};
use crate::rules::{Alert, RuleState, Transition};
use crate::state::{AuditEntry, HistoryPoint, StateError, Store, StoredCluster};
use crate::wire::{Report, Settings};

mod acks;
mod quiet;

pub use acks::AckError;
pub use quiet::{NotApplied, QuietError, cluster_of};

/// Starts the web side on the board, at the listen address, over TLS when `[tls]` is given.
/// `serve` is given `web::start` by its caller, so that it never imports `web`, which sits above it.
pub type StartPages =
    fn(std::net::SocketAddr, Option<&crate::config::TlsConfig>, Arc<Board>) -> Result<Pages, crate::error::PagesError>;

/// The web side, running until dropped.
pub struct Pages {
    pub address: std::net::SocketAddr,
    pub scheme: &'static str,
    pub running: Box<dyn Send>,
}

const TARGET: &str = "dumbmonit::board";

fn unreadable_page_clusters(e: &StateError) {
    tracing::error!(target: TARGET, error = %e, "the clusters added on the pages cannot be read: {e}");
}

/// A clock skew past this is said on the cluster's page.
pub const SKEW_SHOWN: SignedDuration = SignedDuration::from_secs(30);

/// A watched cluster, in the board's order.
pub struct Arranged {
    pub name: String,
    pub address: String,
    pub agent: bool,
    pub from_pages: bool,
}

/// What the pages, the API and /metrics know of one cluster.
#[derive(Clone, Debug)]
pub struct ClusterView {
    pub name: String,
    pub address: String,
    pub last_cycle: Option<Timestamp>,
    pub last_good: Option<Timestamp>,
    /// The last good cycle's health, kept while the cluster cannot be read.
    pub health: Option<Arc<Health>>,
    /// Why the last cycle failed; None when it succeeded.
    pub error: Option<String>,
    pub up: bool,
    pub cycle_duration: Duration,
    pub stats: Vec<CollectionStat>,
    /// Active alerts, pending and firing: firing first, then the most severe, then the oldest.
    pub alerts: Arc<Vec<Alert>>,
    /// The `dumbmonit_k8s_` object series of the last good cycle, rendered and compressed once
    /// for /metrics.
    pub objects: Arc<Vec<Packed>>,
    /// The monitor's own series of the last cycle (`up`, durations), rendered and compressed once.
    pub own: Arc<Vec<Packed>>,
    /// For a cluster read through an agent: what is known of the agent.
    pub agent: Option<AgentView>,
    /// Added on the pages (editable there), not in the configuration file.
    pub from_pages: bool,
}

/// What the server knows of a cluster's agent.
#[derive(Clone, Debug, Default)]
pub struct AgentView {
    /// When its last report arrived, by the server's clock.
    pub last_report: Option<Timestamp>,
    /// The agent's clock − the server's, from that report.
    pub skew: SignedDuration,
    /// What the agent said about itself (its buffer cannot be written, say).
    pub note: Option<String>,
}

impl ClusterView {
    pub fn new(name: &str, address: &str) -> ClusterView {
        ClusterView {
            name: name.into(),
            address: address.into(),
            last_cycle: None,
            last_good: None,
            health: None,
            error: None,
            up: false,
            cycle_duration: Duration::ZERO,
            stats: Vec::new(),
            alerts: Arc::default(),
            objects: Arc::default(),
            own: Arc::default(),
            agent: None,
            from_pages: false,
        }
    }

    /// `ok`, `notice`, `critical`, `unreachable` or `waiting`.
    pub fn status(&self) -> &'static str {
        if self.error.is_some() {
            return "unreachable";
        }
        match self.health.as_ref().map(|h| h.severity()) {
            None => "waiting",
            Some(Grade::Ok) => "ok",
            Some(Grade::Notice) => "notice",
            Some(Grade::Critical) => "critical",
        }
    }

    /// The one sentence.
    pub fn sentence(&self) -> String {
        self.sentence_in(Lang::En)
    }

    /// The one sentence in `lang` (the error, quoted by the guide, stays as it is).
    pub fn sentence_in(&self, lang: Lang) -> String {
        match (&self.error, &self.health) {
            (Some(e), _) => lang.tr("cannot-be-read-with", &[("error", e.into())]),
            (None, Some(h)) => h.summary_in(lang),
            (None, None) => lang.t("waiting"),
        }
    }

    pub fn firing(&self) -> usize {
        self.alerts.iter().filter(|a| a.firing()).count()
    }
}

/// A change made on the pages, counted so that its answer can wait until `serve` applied it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[must_use]
pub struct Change(u64);

/// Why a cluster of the pages was not stored.
#[derive(Debug, thiserror::Error)]
pub enum NotStored {
    #[error("the secret key is not available")]
    NoKey,
    #[error(transparent)]
    State(#[from] StateError),
}

/// One cycle of a cluster as the board shows it: written at once, so that the pages, the API
/// and /metrics show either the last cycle or this one, never half of each.
pub struct Publication {
    pub time: Timestamp,
    pub duration: Duration,
    pub stats: Vec<CollectionStat>,
    pub alerts: Arc<Vec<Alert>>,
    /// A good cycle's health; None for a failed one (the last good health stays).
    pub health: Option<Arc<Health>>,
    /// Why a failed cycle failed.
    pub error: Option<String>,
    /// A good cycle's object series; None for a failed one (the last good series stay).
    pub objects: Option<Arc<Vec<Packed>>>,
    pub own: Arc<Vec<Packed>>,
    /// For an agent's report: the address it reports, and what is known of the agent.
    pub agent: Option<(String, AgentView)>,
}

/// The state database as the board is given it.
pub struct Persistence {
    /// The connection cycles are committed with, shared with the delivery worker.
    pub store: Arc<Mutex<Store>>,
    /// A second connection for the pages' queries.
    pub reader: Store,
    /// Why the state directory could not be opened at start (the state is then in memory).
    pub error: Option<String>,
}

/// Everything the web side reads, kept up to date by the cluster tasks.
pub struct Board {
    clusters: RwLock<Vec<ClusterView>>,
    /// The state database, shared with the delivery worker.
    store: Arc<Mutex<Store>>,
    /// A second connection for the pages' queries: in WAL mode they never wait for a cycle's
    /// transaction.
    reader: Mutex<Store>,
    /// Why the state directory could not be opened at start (the state is then in memory).
    state_error: Option<String>,
    /// Why the last cycle could not be written (a full disk, say); None once one is.
    persist_error: Mutex<Option<String>>,
    started: Instant,
    /// The delivery worker's counters.
    counters: Arc<Mutex<Counters>>,
    /// The message shown on every page (the demo says the cluster is simulated).
    banner: Option<String>,
    protection: RwLock<Arc<Protection>>,
    notifiers: NotifierSet,
    ready: AtomicBool,
    /// Changes whenever a view does, so that what is derived from all views can be cached.
    generation: AtomicU64,
    /// The last /metrics text, kept while nothing it depends on changes.
    exposition: Arc<ExpositionCache>,
    /// Where each agent's reports go, by cluster.
    agents: RwLock<HashMap<String, Door>>,
    /// How late cycles start and how long their state takes to save, recently.
    timings: Mutex<Timings>,
    /// Seals the tokens of clusters added on the pages and signs the forms' CSRF tokens; None
    /// when `secret_key_file` could not be read or made (the pages then change nothing).
    secret_key: Option<Arc<crate::secret::SecretKey>>,
    /// Told when a cluster is added, changed or removed on the pages.
    clusters_changed: tokio::sync::Notify,
    /// How many changes the pages made, and up to which one serve has applied.
    changes_made: AtomicU64,
    changes_applied: tokio::sync::watch::Sender<u64>,
    /// What keeps the notifiers quiet: the file's silences and windows, and those made through
    /// the API or the pages (`quiet`).
    quiet: RwLock<quiet::Parts>,
    /// Counts the changes of what is quiet, so that the clusters' tasks see them at once.
    quiet_changed: tokio::sync::watch::Sender<u64>,
    /// The cycles' clock (the stepped one in tests): the time of the API's changes.
    clock: std::sync::OnceLock<crate::clock::Clock>,
    /// Acknowledgements not yet taken by their cluster's cycle (`acks`).
    acks: Mutex<acks::Pending>,
}

/// The most recent samples of two durations, in seconds: how late each cycle started after its
/// schedule, and how long each cycle's transaction took.
#[derive(Debug, Default)]
pub struct Timings {
    pub start_lag: std::collections::VecDeque<f64>,
    pub commit: std::collections::VecDeque<f64>,
}

impl Timings {
    const KEPT: usize = 20_000;

    pub fn push(list: &mut std::collections::VecDeque<f64>, d: Duration) {
        if list.len() == Self::KEPT {
            list.pop_front();
        }
        list.push_back(d.as_secs_f64());
    }

    /// (p50, p99, max, samples) of a list.
    pub fn quantiles(list: &std::collections::VecDeque<f64>) -> Option<(f64, f64, f64, usize)> {
        if list.is_empty() {
            return None;
        }
        let mut v: Vec<f64> = list.iter().copied().collect();
        v.sort_by(f64::total_cmp);
        let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
        Some((at(0.5), at(0.99), v[v.len() - 1], v.len()))
    }
}

impl Board {
    /// An empty board: no cluster yet, not ready. The store and `counters` are shared with the
    /// delivery worker.
    pub fn new(
        Persistence { store, reader, error: state_error }: Persistence,
        banner: Option<String>,
        protection: Protection,
        notifiers: NotifierSet,
        secret_key: Option<Arc<crate::secret::SecretKey>>,
        counters: Arc<Mutex<Counters>>,
    ) -> Board {
        Board {
            clusters: RwLock::new(Vec::new()),
            store,
            reader: Mutex::new(reader),
            state_error,
            persist_error: Mutex::new(None),
            started: Instant::now(),
            counters,
            banner,
            protection: RwLock::new(Arc::new(protection)),
            notifiers,
            ready: AtomicBool::new(false),
            generation: AtomicU64::new(0),
            exposition: Arc::default(),
            agents: RwLock::new(HashMap::new()),
            timings: Mutex::new(Timings::default()),
            secret_key,
            clusters_changed: tokio::sync::Notify::new(),
            changes_made: AtomicU64::new(0),
            changes_applied: tokio::sync::watch::Sender::new(0),
            quiet: RwLock::new(quiet::Parts::default()),
            quiet_changed: tokio::sync::watch::Sender::new(0),
            clock: std::sync::OnceLock::new(),
            acks: Mutex::default(),
        }
    }

    pub fn set_ready(&self) {
        self.ready.store(true, Ordering::SeqCst);
    }

    pub fn set_protection(&self, p: Protection) {
        *self.protection.write().expect("protection lock") = Arc::new(p);
    }

    pub fn notifiers(&self) -> &NotifierSet {
        &self.notifiers
    }

    /// Opens (or re-keys) the door of an agent's cluster.
    pub fn open_door(&self, cluster: &str, door: Door) {
        self.agents.write().expect("agents lock").insert(cluster.to_string(), door);
    }

    /// The clusters added on the pages, none without the secret key. One whose settings cannot
    /// be read is left out, and said; one whose token cannot be unsealed (another key, a
    /// damaged row) says why in its `token`.
    pub fn stored_clusters(&self) -> Vec<StoredCluster> {
        let Some(key) = &self.secret_key else { return Vec::new() };
        let rows = match self.store.lock().expect("store lock").stored_clusters(key) {
            Ok(rows) => rows,
            Err(e) => {
                unreadable_page_clusters(&e);
                return Vec::new();
            }
        };
        rows.into_iter()
            .filter_map(|row| {
                row.map_err(|e| {
                    tracing::error!(target: TARGET, cluster = e.name, error = %e.source, "{e}");
                })
                .ok()
            })
            .collect()
    }

    /// The cluster of the pages named so (only its token is unsealed); None without the
    /// secret key.
    pub fn stored_cluster(&self, name: &str) -> Option<StoredCluster> {
        let key = self.secret_key.as_ref()?;
        match self.store.lock().expect("store lock").stored_cluster(key, name) {
            Ok(found) => found,
            Err(e) => {
                unreadable_page_clusters(&e);
                None
            }
        }
    }

    /// Adds or replaces a cluster of the pages (its token sealed) with its audit entry, and
    /// tells `serve`. Fails without the secret key.
    pub fn save_page_cluster(
        &self,
        name: &str,
        settings: &crate::config::PageSettings,
        token: &str,
        entry: &AuditEntry,
    ) -> Result<Change, NotStored> {
        let key = self.secret_key.as_ref().ok_or(NotStored::NoKey)?;
        self.store.lock().expect("store lock").store_cluster(key, name, settings, token, entry)?;
        Ok(self.tell_serve())
    }

    /// Removes a cluster of the pages with its audit entry, and tells `serve`; None when none
    /// has that name.
    pub fn remove_page_cluster(&self, name: &str, entry: &AuditEntry) -> Result<Option<Change>, StateError> {
        let removed = self.store.lock().expect("store lock").remove_page_cluster(name, entry)?;
        Ok(removed.then(|| self.tell_serve()))
    }

    /// Counts a stored change and wakes `serve`.
    fn tell_serve(&self) -> Change {
        let change = Change(self.changes_made.fetch_add(1, Ordering::SeqCst) + 1);
        self.clusters_changed.notify_one();
        change
    }

    /// Waits until a cluster is added, changed or removed on the pages; gives the last change
    /// made, which `serve` applies with what it reads of the store now.
    pub async fn page_clusters_changed(&self) -> Change {
        self.clusters_changed.notified().await;
        Change(self.changes_made.load(Ordering::SeqCst))
    }

    /// `serve` watches the clusters as of `change`.
    pub fn page_clusters_applied(&self, change: Change) {
        self.changes_applied.send_if_modified(|applied| {
            let newer = change.0 > *applied;
            *applied = (*applied).max(change.0);
            newer
        });
    }

    /// Waits (at most `bound`) until `serve` watches the clusters as of `change`, so that the
    /// page answering a change shows it; false when it did not within `bound`.
    pub async fn applied(&self, change: Change, bound: Duration) -> bool {
        let mut applied = self.changes_applied.subscribe();
        tokio::time::timeout(bound, applied.wait_for(|a| *a >= change.0)).await.is_ok_and(|r| r.is_ok())
    }

    /// The secret key, which seals the pages' tokens and signs their sessions and forms; the
    /// pages change nothing without it.
    pub fn secret_key(&self) -> Option<&crate::secret::SecretKey> {
        self.secret_key.as_deref()
    }

    /// The message shown on every page (the demo says the cluster is simulated).
    pub fn banner(&self) -> Option<&str> {
        self.banner.as_deref()
    }

    /// The delivery worker's counters, now.
    pub fn counters(&self) -> Counters {
        self.counters.lock().expect("counters lock").clone()
    }

    /// The /metrics text kept.
    pub fn exposition(&self) -> &Arc<ExpositionCache> {
        &self.exposition
    }

    /// Adds to the timings.
    pub fn timed(&self, f: impl FnOnce(&mut Timings)) {
        f(&mut self.timings.lock().expect("timings lock"))
    }

    /// Reads the timings.
    pub fn timings<R>(&self, f: impl FnOnce(&Timings) -> R) -> R {
        f(&self.timings.lock().expect("timings lock"))
    }

    /// A cluster's saved rules' state.
    pub fn load_state(&self, name: &str) -> Result<RuleState, StateError> {
        self.store.lock().expect("store lock").load(name)
    }

    /// Saves a cycle: the rules' state, its notifications and its history point, in one
    /// transaction (blocking: called off the async threads). Whether it could be saved is said
    /// on every page until a cycle is.
    pub fn commit_cycle(
        &self,
        name: &str,
        state: &RuleState,
        notifications: &[(String, String)],
        point: Option<HistoryPoint>,
    ) -> Result<(), StateError> {
        let committed = self.store.lock().expect("store lock").commit_cycle(name, state, notifications, point);
        *self.persist_error.lock().expect("persist lock") = committed.as_ref().err().map(|e| e.to_string());
        committed
    }

    /// The (notifier, body) of each notification the transitions make, for every notifier.
    pub fn notification_bodies(&self, transitions: &[Transition]) -> Vec<(String, String)> {
        crate::notify::bodies(&self.notifiers_now(), transitions)
    }

    /// The notifiers as they are now.
    pub fn notifiers_now(&self) -> Arc<Vec<crate::notify::Notifier>> {
        self.notifiers.read().expect("notifiers lock").clone()
    }

    /// Closes the doors of the clusters `keep` does not name.
    pub fn keep_doors(&self, keep: impl Fn(&str) -> bool) {
        self.agents.write().expect("agents lock").retain(|name, _| keep(name));
    }

    pub fn clusters(&self) -> Vec<ClusterView> {
        self.clusters.read().expect("board lock").clone()
    }

    pub fn cluster(&self, name: &str) -> Option<ClusterView> {
        self.clusters.read().expect("board lock").iter().find(|c| c.name == name).cloned()
    }

    /// Why the state is not being saved, if it is not: said on every page.
    pub fn persistence_problem(&self) -> Option<String> {
        let now = self.persist_error.lock().expect("persist lock").clone();
        match (&self.state_error, now) {
            (Some(e), _) => Some(format!("{e}. The state is kept in memory only: a restart loses alerts and history.")),
            (None, Some(e)) => Some(format!(
                "The last cycle could not be saved: {e}. Monitoring goes on; what is not saved is lost on a restart."
            )),
            (None, None) => None,
        }
    }

    /// How long the monitor has run.
    pub fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    /// The connection the pages read with.
    pub fn reader(&self) -> std::sync::MutexGuard<'_, Store> {
        self.reader.lock().expect("reader lock")
    }

    pub fn protection(&self) -> Arc<Protection> {
        self.protection.read().expect("protection lock").clone()
    }

    pub fn ready(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }

    pub fn notifier_names(&self) -> Vec<String> {
        self.notifiers.read().expect("notifiers lock").iter().map(|n| n.name.clone()).collect()
    }

    fn update(&self, name: &str, f: impl FnOnce(&mut ClusterView)) {
        let mut clusters = self.clusters.write().expect("board lock");
        if let Some(v) = clusters.iter_mut().find(|c| c.name == name) {
            f(v);
        }
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// A cluster's alerts and last cycle as saved, shown until its first cycle here.
    pub fn restored(&self, name: &str, alerts: Arc<Vec<Alert>>, last_cycle: Option<Timestamp>) {
        self.update(name, |v| {
            v.alerts = alerts;
            v.last_cycle = v.last_cycle.or(last_cycle);
        });
    }

    /// Shows a cycle: one write.
    pub fn publish(&self, name: &str, p: Publication) {
        self.update(name, |v| {
            v.last_cycle = Some(p.time);
            v.up = p.error.is_none();
            v.cycle_duration = p.duration;
            v.stats = p.stats;
            v.alerts = p.alerts;
            v.own = p.own;
            if let Some(objects) = p.objects {
                v.objects = objects;
            }
            if let Some((address, agent)) = p.agent {
                v.address = address;
                v.agent = Some(agent);
            }
            match p.health {
                Some(h) => {
                    v.health = Some(h);
                    v.last_good = Some(p.time);
                    v.error = None;
                }
                None => v.error = p.error,
            }
        });
    }

    /// Changes whenever a cluster's view does.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Each cluster's series, in order: its objects', then its own.
    pub fn packed_series(&self) -> Vec<Arc<Vec<Packed>>> {
        self.clusters.read().expect("board lock").iter().flat_map(|c| [c.objects.clone(), c.own.clone()]).collect()
    }

    /// Keeps the views of `order` (new ones empty), in that order.
    pub fn arrange(&self, order: &[Arranged]) {
        let mut clusters = self.clusters.write().expect("board lock");
        let mut old: HashMap<String, ClusterView> = clusters.drain(..).map(|c| (c.name.clone(), c)).collect();
        *clusters = order
            .iter()
            .map(|Arranged { name, address, agent, from_pages }| {
                let mut v = old.remove(name).unwrap_or_else(|| ClusterView::new(name, address));
                v.from_pages = *from_pages;
                match (agent, &v.agent) {
                    (false, _) => {
                        v.address = address.clone();
                        v.agent = None;
                    }
                    (true, None) => {
                        v.address = address.clone();
                        v.agent = Some(AgentView::default());
                    }
                    // The address the agent reported stays.
                    (true, Some(_)) => {}
                }
                v
            })
            .collect();
        self.generation.fetch_add(1, Ordering::SeqCst);
    }
}

/// A report on its way to its cluster's task.
pub struct Push {
    pub report: Report,
    /// When it arrived, by the server's clock.
    pub received: Timestamp,
    pub reply: oneshot::Sender<Reply>,
}

/// What became of a report.
#[derive(Debug, PartialEq)]
pub enum Reply {
    Taken,
    /// The server already had this cycle (or a later one): dropped, so the agent moves on.
    Duplicate,
    /// The difference's base is not held here: the agent sends the whole snapshot.
    UnknownBase(String),
    Refused(String),
}

/// Where an agent's reports go.
pub struct Door {
    pub token: String,
    pub settings: Settings,
    pub inbox: mpsc::Sender<Push>,
}

/// The answer to an agent's knock.
pub enum Knock {
    Open {
        settings: Settings,
        inbox: mpsc::Sender<Push>,
    },
    /// The token is not the one of the cluster named (or of any agent's cluster).
    WrongToken,
    /// No cluster of that name is read through an agent here.
    NotConfigured(String),
}

impl Board {
    /// Finds the agent's cluster: by name when the agent gives one, else by token. Every token
    /// is compared, in constant time, whatever matches.
    pub fn knock(&self, cluster: Option<&str>, token: &str) -> Knock {
        let doors = self.agents.read().expect("agents lock");
        if token.is_empty() {
            return Knock::WrongToken;
        }
        // Every door is tried, the named one or not: a wrong token learns nothing of which
        // clusters are read through an agent (401 for any name), a valid one of another
        // cluster is told that the name is not one (404).
        let (mut named, mut any) = (None, false);
        for (name, door) in doors.iter() {
            // A door whose token file could not be read has no token, and opens to none.
            let same = !door.token.is_empty() && crate::auth::constant_time_eq(door.token.as_bytes(), token.as_bytes());
            any |= same;
            if same && cluster.is_none_or(|c| c == name) {
                named = Some(door);
            }
        }
        match (named, cluster) {
            (Some(d), _) => Knock::Open { settings: d.settings.clone(), inbox: d.inbox.clone() },
            (None, Some(name)) if any && !doors.contains_key(name) => Knock::NotConfigured(name.to_string()),
            (None, _) => Knock::WrongToken,
        }
    }
}

impl AgentView {
    /// What the page says about the agent, beyond the cluster's health.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.skew.abs() > SKEW_SHOWN {
            let way = if self.skew.is_positive() { "ahead of" } else { "behind" };
            notes.push(format!(
                "The agent's clock is {} {way} the server's: cycle times are the agent's.",
                words(self.skew)
            ));
        }
        if let Some(n) = &self.note {
            notes.push(format!("The agent says: {n}"));
        }
        notes
    }
}
