//! The board: what `serve` knows of every cluster, kept up to date by the cluster tasks and read
//! by the pages, the JSON API, /metrics and the agents' door. It sits below both `serve` (which
//! fills it) and `web` (which reads it), so that neither imports the other.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use tokio::sync::{mpsc, oneshot};

use crate::auth::Protection;
use crate::clock::words;
use crate::collect::CollectionStat;
use crate::health::{Grade, Health, Problems};
use crate::lang::Lang;
use crate::metrics::exposition::Packed;
use crate::notify::worker::{Counters, NotifierSet};
use crate::rules::{Alert, RuleState};
use crate::state::{HistoryPoint, StateError, Store};
use crate::wire::{Report, Settings};

mod acks;
mod pages;
mod quiet;
mod views;

pub use acks::AckError;
pub use pages::PageClusters;
pub use quiet::{NotApplied, QuietError, Quieting, cluster_of};
pub use views::Views;

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
    pub alerts: Alerts,
    /// The `dumbmonit_k8s_` object series of the last good cycle, rendered and compressed once
    /// for /metrics.
    pub objects: Arc<Vec<Packed>>,
    /// The monitor's own series of the last cycle (`up`, durations), rendered and compressed once.
    pub own: Arc<Vec<Packed>>,
    /// For a cluster read through an agent: what is known of the agent.
    pub agent: Option<AgentView>,
    /// Added on the pages (editable there), not in the configuration file.
    pub from_pages: bool,
    /// How far apart its cycles are on the cycles' clock (how often its firing alerts are sent
    /// again).
    pub period: Duration,
    /// The API's words for `health`, made at the first request that asks after each cycle.
    pub health_json: HealthMemo,
    /// The API's words for each node and each pod with a problem, kept from one cycle to the
    /// next while its judgement is the same ([`ObjectJson`]).
    pub object_json: ObjectJson,
    /// How many of each problem `health` has (its status and its sentence), counted at the
    /// first request that asks after each cycle.
    pub problems: HealthMemo<Problems>,
}

/// What is made from a cluster's health (its JSON, its problems counted), kept while the health
/// is the one it was made from: made once a cycle, not at every request (a client polling the
/// API would otherwise pay the whole document, every pod with a problem, at each request).
#[derive(Clone, Debug)]
pub struct HealthMemo<T = Arc<str>>(Arc<Mutex<Option<Made<T>>>>);

impl<T> Default for HealthMemo<T> {
    fn default() -> Self {
        HealthMemo(Arc::default())
    }
}

/// What was made, and the health it was made from.
type Made<T> = (std::sync::Weak<Health>, T);

impl<T: Clone> HealthMemo<T> {
    /// What was made from `health`, made now unless it was made from this very health. Held
    /// by a weak reference, the health's allocation cannot be another's while it is kept: its
    /// address tells it.
    pub fn get_or_make(&self, health: &Arc<Health>, make: impl FnOnce(&Health) -> T) -> T {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((of, made)) = kept.as_ref()
            && std::ptr::eq(of.as_ptr(), Arc::as_ptr(health))
        {
            return made.clone();
        }
        let made = make(health);
        *kept = Some((Arc::downgrade(health), made.clone()));
        made
    }
}

/// The API's JSON of each of a cluster's nodes and pods with a problem, kept while the object's
/// judgement is the very one it was written from (by a weak reference, as [`HealthMemo`] keeps
/// its health: the allocation cannot be another's while it is kept, and a judgement let go by
/// the cycles is not held whole by the API): a cycle on a change judges again the objects it touched and takes the
/// others' judgements again, and the API writes again only the touched objects' JSON (on the
/// real API server at 10,000 pods, writing its 100 nodes and 125 pods with a problem again after
/// each cycle on a change was four fifths of what answering a client that polled the cluster
/// cost, and a ninth of watch mode's CPU).
#[derive(Clone, Debug, Default)]
pub struct ObjectJson(Arc<Mutex<ObjectLines>>);

#[derive(Debug, Default)]
struct ObjectLines {
    nodes: Lines<crate::health::NodeHealth>,
    pods: Lines<crate::health::PodHealth>,
    /// How many lines the last request wrote (for the tests).
    written: usize,
}

/// Each object's JSON, by the address of the judgement it was written from.
type Lines<T> = std::collections::HashMap<usize, (std::sync::Weak<T>, Arc<str>)>;

impl ObjectJson {
    /// The JSON of each of `nodes` and `pods`, in their order: kept for a judgement written
    /// before, written now by `node` and `pod` otherwise. Only these objects' lines are kept
    /// after.
    pub fn lines(
        &self,
        nodes: &[Arc<crate::health::NodeHealth>],
        pods: &[Arc<crate::health::PodHealth>],
        node: impl Fn(&crate::health::NodeHealth) -> String,
        pod: impl Fn(&crate::health::PodHealth) -> String,
    ) -> (Vec<Arc<str>>, Vec<Arc<str>>) {
        fn kept<T>(
            lines: &mut Lines<T>,
            objects: &[Arc<T>],
            write: impl Fn(&T) -> String,
            written: &mut usize,
        ) -> Vec<Arc<str>> {
            let mut last = std::mem::take(lines);
            objects
                .iter()
                .map(|o| {
                    let at = Arc::as_ptr(o) as usize;
                    let (o, text) = last.remove(&at).unwrap_or_else(|| {
                        *written += 1;
                        (Arc::downgrade(o), write(o).into())
                    });
                    lines.insert(at, (o, text.clone()));
                    text
                })
                .collect()
        }
        let mut k = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let ObjectLines { nodes: node_lines, pods: pod_lines, written } = &mut *k;
        *written = 0;
        let nodes = kept(node_lines, nodes, node, written);
        let pods = kept(pod_lines, pods, pod, written);
        (nodes, pods)
    }

    /// How many lines the last call to [`ObjectJson::lines`] wrote.
    pub fn written(&self) -> usize {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).written
    }
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
            period: Duration::from_secs(60),
            health_json: HealthMemo::default(),
            object_json: ObjectJson::default(),
            problems: HealthMemo::default(),
        }
    }

    /// `ok`, `notice`, `critical`, `unreachable` or `waiting`.
    pub fn status(&self) -> &'static str {
        if self.error.is_some() {
            return "unreachable";
        }
        match self.health.as_ref().map(|h| h.severity_of(&self.problems_of(h))) {
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
            (None, Some(h)) => h.summary_of(lang, &self.problems_of(h)),
            (None, None) => lang.t("waiting"),
        }
    }

    /// How many of each problem `health` (its own) has, counted once a cycle.
    fn problems_of(&self, health: &Arc<Health>) -> Problems {
        self.problems.get_or_make(health, Health::problems)
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

/// A cluster's active alerts as the board shows them, each shared with the list before it while
/// it does not change (a cycle that changes one alert of many copies none of the others).
pub type Alerts = Arc<Vec<Arc<Alert>>>;

/// One cycle of a cluster as the board shows it: written at once, so that the pages, the API
/// and /metrics show either the last cycle or this one, never half of each.
pub struct Publication {
    pub time: Timestamp,
    pub duration: Duration,
    pub stats: Vec<CollectionStat>,
    pub alerts: Alerts,
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

/// With a shared state: this replica and the others alive, as the last renewal of its leases
/// found them.
#[derive(Clone, Debug, Default)]
pub struct Replicas {
    /// This replica's name; empty without a shared state.
    pub me: String,
    pub alive: Vec<crate::state::ReplicaSeen>,
    /// How often the leases are renewed: how old what is said of the others may be.
    pub renewed_every: Duration,
}

impl Replicas {
    /// The replica that reads `cluster`, if one does.
    pub fn owner(&self, cluster: &str) -> Option<&crate::state::ReplicaSeen> {
        self.alive.iter().find(|r| r.owns.contains(cluster))
    }
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
    /// The views of the clusters, and the agents' doors.
    views: Arc<views::Views>,
    /// What keeps the notifiers quiet: silences, windows and acknowledgements.
    quieting: quiet::Quieting,
    /// The clusters added on the pages.
    page_clusters: pages::PageClusters,
    /// The state database, shared with the delivery worker.
    store: Arc<Mutex<Store>>,
    /// A second connection for the pages' queries: in WAL mode they never wait for a cycle's
    /// transaction.
    reader: Mutex<Store>,
    /// Why the state directory could not be opened at start (the state is then in memory).
    state_error: Option<String>,
    /// Why the last cycle could not be written (a full disk, say); None once one is.
    persist_error: Mutex<Option<String>>,
    /// With a shared state: why PostgreSQL cannot be reached now; None while it can.
    shared_away: Mutex<Option<String>>,
    /// With a shared state: the replicas alive and what each reads, as last renewed.
    replicas: Mutex<Replicas>,
    started: Instant,
    /// The delivery worker's counters.
    counters: Arc<Mutex<Counters>>,
    /// The message shown on every page (the demo says the cluster is simulated).
    banner: Option<String>,
    protection: RwLock<Arc<Protection>>,
    notifiers: NotifierSet,
    /// The file's `[[rule]]` entries, checked: the rules as the cycles apply them.
    tuning: RwLock<Arc<crate::rules::tune::Tuning>>,
    ready: AtomicBool,
    /// How late cycles start and how long their state takes to save, recently.
    timings: Mutex<Timings>,
    /// Seals the tokens of clusters added on the pages and signs the forms' CSRF tokens; None
    /// when `secret_key_file` could not be read or made (the pages then change nothing).
    secret_key: Option<Arc<crate::secret::SecretKey>>,
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
    /// An empty board on a state of its own in memory (`name` tells the state apart), without
    /// notifiers, as the tests take it; with `secret_key`, the pages can store tokens.
    #[cfg(test)]
    pub fn in_memory(name: &str, secret_key: Option<Arc<crate::secret::SecretKey>>) -> Board {
        let store = Arc::new(Mutex::new(Store::open_in_memory(name).expect("a state in memory")));
        let reader = Store::open_in_memory(name).expect("a state in memory");
        let notifiers = Arc::new(RwLock::new(Arc::new(Vec::new())));
        let persistence = Persistence { store, reader, error: None };
        Board::new(persistence, None, Default::default(), notifiers, secret_key, Arc::default())
    }

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
        let views = Arc::new(views::Views::default());
        Board {
            quieting: quiet::Quieting::new(store.clone(), notifiers.clone(), views.clone()),
            page_clusters: pages::PageClusters::new(store.clone(), secret_key.clone()),
            views,
            store,
            reader: Mutex::new(reader),
            state_error,
            persist_error: Mutex::new(None),
            shared_away: Mutex::new(None),
            replicas: Mutex::new(Replicas::default()),
            started: Instant::now(),
            counters,
            banner,
            protection: RwLock::new(Arc::new(protection)),
            notifiers,
            tuning: RwLock::new(Arc::default()),
            ready: AtomicBool::new(false),
            timings: Mutex::new(Timings::default()),
            secret_key,
        }
    }

    /// The views of the clusters (the pages, the API and /metrics read them; the cycles
    /// publish into them), and the agents' doors.
    pub fn views(&self) -> &views::Views {
        &self.views
    }

    /// What keeps the notifiers quiet: silences, maintenance windows, acknowledgements.
    pub fn quieting(&self) -> &quiet::Quieting {
        &self.quieting
    }

    /// The clusters added on the pages.
    pub fn page_clusters(&self) -> &pages::PageClusters {
        &self.page_clusters
    }

    /// The cycles' clock: set once, by `serve`, before the first cycle.
    pub fn set_clock(&self, clock: crate::clock::Clock) {
        self.quieting.set_clock(clock);
    }

    /// Now, on the cycles' clock (see [`quiet::Quieting::now`]).
    pub fn now(&self) -> Timestamp {
        self.quieting.now()
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
        // A cycle of a cluster another replica took over is not a failure to save: that
        // replica saves its own.
        if !matches!(committed, Err(StateError::NotOwner { .. })) {
            *self.persist_error.lock().expect("persist lock") = committed.as_ref().err().map(|e| e.to_string());
        }
        committed
    }

    /// With a shared state: why PostgreSQL cannot be reached (None once it can), said on every
    /// page.
    pub fn set_shared_away(&self, why: Option<String>) {
        *self.shared_away.lock().expect("shared lock") = why;
    }

    /// With a shared state: the replicas alive, as the last renewal found them.
    pub fn set_replicas(&self, replicas: Replicas) {
        *self.replicas.lock().expect("replicas lock") = replicas;
    }

    pub fn replicas(&self) -> Replicas {
        self.replicas.lock().expect("replicas lock").clone()
    }

    /// The notifiers as they are now.
    pub fn notifiers_now(&self) -> Arc<Vec<crate::notify::Notifier>> {
        self.notifiers.read().expect("notifiers lock").clone()
    }

    /// The rules as the file tunes them now (the next cycle applies them).
    pub fn tuning_now(&self) -> Arc<crate::rules::tune::Tuning> {
        self.tuning.read().expect("tuning lock").clone()
    }

    pub fn set_tuning(&self, tuning: crate::rules::tune::Tuning) {
        *self.tuning.write().expect("tuning lock") = Arc::new(tuning);
    }

    /// Why the state is not being saved, if it is not: said on every page.
    pub fn persistence_problem(&self) -> Option<String> {
        if let Some(why) = self.shared_away.lock().expect("shared lock").clone() {
            return Some(format!(
                "The shared state cannot be reached: {why}. This replica goes on reading the clusters it owns; \
                 what they notify is sent once it is back."
            ));
        }
        let now = self.persist_error.lock().expect("persist lock").clone();
        match (&self.state_error, now) {
            (Some(e), _) => Some(format!("{e}. The state is kept in memory only: a restart loses alerts and history.")),
            (None, Some(e)) => Some(format!(
                "The last cycle could not be saved: {e}. Monitoring goes on; what is not saved is lost on a restart."
            )),
            (None, None) => None,
        }
    }

    /// One line for each notifier whose receiver refuses notifications for good (a 4xx that
    /// retrying cannot fix: each was dropped), said on every page until it takes one again.
    pub fn refusals(&self) -> Vec<String> {
        let names = self.notifier_names();
        let counters = self.counters();
        let mut lines: Vec<String> = names
            .iter()
            .filter_map(|name| {
                let r = counters.refusals.get(name)?;
                let plural = if r.count == 1 { "" } else { "s" };
                Some(format!(
                    "{name} refused {} notification{plural} since {} UTC: {}",
                    r.count,
                    r.since.strftime("%Y-%m-%d %H:%M"),
                    r.answer
                ))
            })
            .collect();
        lines.sort();
        lines
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
        self.notifiers_now().iter().map(|n| n.name.clone()).collect()
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
