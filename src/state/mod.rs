//! The state that must survive a restart, in SQLite: each cluster's active alerts (with their
//! activeAt, firing and escalation times), what the rules remember of each pod (restart counts,
//! the last crash loop), failed cycles in a row, and the notification outbox.
//!
//! A cycle's whole outcome — rule state and the notifications it causes — is written in one
//! transaction: a crash, even `kill -9`, keeps a cycle entirely or not at all.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use jiff::Timestamp;

mod clusters;
pub mod db;
pub mod migrate;
mod owners;
pub mod postgres;
mod quiet;
pub mod schema;

pub use clusters::{StoredCluster, UnreadableSettings, Unsealed};
pub use owners::{Beat, Replica, ReplicaSeen};
pub use quiet::{Kept, QuietKind, SharedAck};

use crate::rules::engine::{PodMemories, PodMemory, PodsChanged};
use crate::rules::{Alert, RuleState};
use db::{Conn, DbError, Engine, args};

/// The database file inside the state directory.
pub const FILE: &str = "dumbmonit.db";

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("The state directory {dir} cannot be used: {source}")]
    Dir { dir: PathBuf, source: std::io::Error },
    /// `place`: the SQLite file, or the PostgreSQL address (never with a password).
    #[error("The state database {place} cannot be used: {source}")]
    Db { place: String, source: Box<DbError> },
    /// A row that the database holds cannot be read back.
    #[error("The state database {place} holds something unreadable: {row}: {source}")]
    Corrupt { place: String, row: Box<Row>, source: Box<Undecodable> },
    /// A schema this binary cannot use (newer than it knows).
    #[error("The state database {place} cannot be used: {source}")]
    Schema { place: String, source: Box<schema::SchemaError> },
    /// PostgreSQL could not be used at start (its sentence names `[state]`).
    #[error("{0}")]
    Start(String),
    /// A cycle of a cluster this replica no longer owns (its lease ran out, another took it):
    /// not written; the owner's cycles are.
    #[error("cluster {cluster} is read by another replica now: this replica's cycle was not saved")]
    NotOwner { cluster: String },
}

/// A statement's error inside a transaction, where it is said once the transaction ends.
impl From<DbError> for StateError {
    fn from(source: DbError) -> StateError {
        StateError::Db { place: String::new(), source: Box::new(source) }
    }
}

impl StateError {
    /// Says where, for an error made without it.
    fn at(self, place: &str) -> StateError {
        match self {
            StateError::Db { place: p, source } if p.is_empty() => StateError::Db { place: place.to_string(), source },
            other => other,
        }
    }
}

/// Which stored value cannot be read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Row {
    /// A cluster's last cycle time, as stored.
    LastCycle { value: String },
    /// An active alert, by its key.
    Alert { key: String },
    /// What the rules remember of a pod.
    Pod { namespace: String, pod: String },
    /// When a queued notification is next tried, by its id.
    NextAttempt { id: i64 },
    /// A cluster's notifiers' groups.
    Groups,
}

impl std::fmt::Display for Row {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Row::LastCycle { value } => write!(f, "last_cycle {value:?}"),
            Row::Alert { key } => write!(f, "alert {key}"),
            Row::Pod { namespace, pod } => write!(f, "pod {namespace}/{pod}"),
            Row::NextAttempt { id } => write!(f, "outbox {id}: next_attempt"),
            Row::Groups => write!(f, "notice_groups"),
        }
    }
}

/// Why a stored value cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum Undecodable {
    #[error(transparent)]
    Time(#[from] jiff::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Column(#[from] DbError),
}

/// A notification waiting to be delivered.
#[derive(Clone, Debug, PartialEq)]
pub struct Queued {
    pub id: i64,
    /// The notifier's name, as configured.
    pub notifier: String,
    /// The exact request body to send.
    pub body: String,
    pub attempts: i64,
    /// Not to be tried before.
    pub next_attempt: Timestamp,
}

/// What a commit knows of a cluster's pods' rows: what was written (None: not known, all
/// written afresh), and the pods to look at (None: every pod, compared with what was written).
struct WrittenPods<'w, 's> {
    written: Option<&'w PodMemories>,
    changed: Option<&'s [(String, String)]>,
}

/// What a commit wrote of a cluster's pods and alerts.
struct Wrote<'s> {
    /// The pods whose memory was written (new or changed).
    changed: Vec<&'s (String, String)>,
    /// The pods written before that were gone, and deleted.
    gone: Vec<(String, String)>,
    /// The alerts written (new or changed), by key.
    alerts_changed: Vec<&'s String>,
    /// The alerts written before that were gone, and deleted.
    alerts_gone: Vec<String>,
}

/// What was last written of a cluster's alerts, by key: shared with the rules' state, so that an
/// alert that is the very one written is unchanged without comparing it.
type WrittenAlerts = BTreeMap<String, std::sync::Arc<Alert>>;

/// The most notifications of a cluster kept in memory while its cycles cannot be saved (the
/// database away): sent with the first cycle saved after.
const UNSAVED_KEPT: usize = 1000;

/// The state database of one monitor: SQLite, or PostgreSQL shared with other replicas.
pub struct Store {
    conn: Conn,
    /// Where it is, as said in errors: the SQLite file, or the PostgreSQL address.
    place: String,
    /// With PostgreSQL: this replica, whose cycles are saved only for the clusters it owns.
    replica: Option<Replica>,
    /// What was last written of each cluster's pods, so that a cycle writes only what changed;
    /// none for a cluster whose rows are not known to match (never loaded, or its last commit
    /// failed): its next commit writes them all afresh. With it, the mark of the rules' look at
    /// the pods it is (`PodsChanged`): a cycle whose look follows that one writes the pods the
    /// look says it changed, without comparing the others.
    written_pods: HashMap<String, (PodMemories, Option<u64>)>,
    /// The same of each cluster's alerts: a cycle writes the alerts that changed, not all of
    /// them (at thousands of alerts, the cycle's largest write).
    written_alerts: HashMap<String, WrittenAlerts>,
    /// The notifications of cycles that could not be saved, by cluster: queued with the next
    /// cycle that is (dropped if another replica owns the cluster by then).
    unsaved: HashMap<String, Vec<(String, String)>>,
}

/// A cluster's rows as the store reads them, in one place for both engines.
const UPSERT_CLUSTER: &str = "INSERT INTO clusters (cluster, failures, last_cycle) VALUES (?1, ?2, ?3)
     ON CONFLICT (cluster) DO UPDATE SET failures = excluded.failures, last_cycle = excluded.last_cycle";
const ENQUEUE: &str = "INSERT INTO outbox (notifier, body, created, next_attempt, due) VALUES (?1, ?2, ?3, ?3, ?4)";

/// A cluster added on the pages: its settings (JSON, no secret in them) and its token (the
/// service account's, or the agent's), sealed with the secret key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageCluster {
    pub name: String,
    pub settings: String,
    pub sealed: Vec<u8>,
}

/// One change made on the pages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditEntry {
    /// Unix seconds.
    pub time: i64,
    pub who: String,
    pub action: String,
    pub cluster: String,
}

/// How long history is kept.
pub const HISTORY_DAYS: i64 = 8;

/// One point of a cluster's history: the counters of one successful cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HistoryPoint {
    /// Unix seconds.
    pub time: i64,
    pub nodes: i64,
    pub nodes_ready: i64,
    pub pods_running: i64,
    pub pods_pending: i64,
    pub pods_failed: i64,
    pub pods_crashlooping: i64,
    pub warning_events: i64,
}

impl HistoryPoint {
    /// The point of a good cycle at `time`.
    pub fn of(time: Timestamp, k: &crate::health::Counts) -> HistoryPoint {
        HistoryPoint {
            time: time.as_second(),
            nodes: k.nodes as i64,
            nodes_ready: k.nodes_ready as i64,
            pods_running: k.pods_running as i64,
            pods_pending: k.pods_pending as i64,
            pods_failed: k.pods_failed as i64,
            pods_crashlooping: k.pods_crashlooping as i64,
            warning_events: k.warning_events as i64,
        }
    }
}

/// Now in Unix milliseconds, as the outbox compares times.
fn millis(t: Timestamp) -> i64 {
    t.as_millisecond()
}

impl Store {
    /// Opens (or creates) the database in `dir`.
    /// The directory is made (or kept) mode 0700 and the database's files 0600: the audit list,
    /// the addresses and the pods are no other local user's to read.
    pub fn open(dir: &Path) -> Result<Store, StateError> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
        let dir_error = |source| StateError::Dir { dir: dir.to_path_buf(), source };
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(dir_error)?;
        // A directory made before (or by someone else) is narrowed when it is ours to change.
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        let file = dir.join(FILE);
        let place = file.display().to_string();
        let db = |source: rusqlite::Error| StateError::Db { place: place.clone(), source: Box::new(source.into()) };
        // SQLite gives the -wal and -shm files the mode of the database file.
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&file)
            .map_err(dir_error)?;
        for suffix in ["", "-wal", "-shm"] {
            let path = dir.join(format!("{FILE}{suffix}"));
            if path.exists() {
                let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
            }
        }
        let conn = rusqlite::Connection::open(&file).map_err(db)?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(db)?;
        // WAL: a reader (the delivery worker) never blocks the cycle's writer. synchronous=NORMAL:
        // in WAL mode a commit survives a killed process without waiting for an fsync (a power
        // cut may lose the last commits, which the next cycles redo). It also keeps short the
        // moment between a notification's 200 and its removal from the outbox, the only moment
        // where a kill makes it be sent again.
        conn.pragma_update(None, "journal_mode", "WAL").map_err(db)?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(db)?;
        Store::with(Conn::Sqlite(conn), place, None)
    }

    /// A database in memory, shared by every connection opened with the same `name` in this
    /// process: what `serve` uses when its state directory cannot be used, so that it goes on
    /// monitoring (nothing then survives a restart).
    pub fn open_in_memory(name: &str) -> Result<Store, StateError> {
        let place = format!("(in memory: {name})");
        let db = |source: rusqlite::Error| StateError::Db { place: place.clone(), source: Box::new(source.into()) };
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
            | rusqlite::OpenFlags::SQLITE_OPEN_CREATE
            | rusqlite::OpenFlags::SQLITE_OPEN_URI
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = rusqlite::Connection::open_with_flags(format!("file:{name}?mode=memory&cache=shared"), flags)
            .map_err(db)?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(db)?;
        Store::with(Conn::Sqlite(conn), place, None)
    }

    /// A store on an open connection, its schema brought up to date.
    fn with(mut conn: Conn, place: String, replica: Option<Replica>) -> Result<Store, StateError> {
        schema::migrate(&mut conn).map_err(|source| match source {
            schema::SchemaError::Db(source) => StateError::Db { place: place.clone(), source: Box::new(source) },
            source => StateError::Schema { place: place.clone(), source: Box::new(source) },
        })?;
        Ok(Store {
            conn,
            place,
            replica,
            written_pods: HashMap::new(),
            written_alerts: HashMap::new(),
            unsaved: HashMap::new(),
        })
    }

    /// Which engine it is.
    pub fn engine(&self) -> Engine {
        self.conn.engine()
    }

    /// Where it is, as errors say it.
    pub fn place(&self) -> &str {
        &self.place
    }

    fn db(&self, source: DbError) -> StateError {
        StateError::Db { place: self.place.clone(), source: Box::new(source) }
    }

    fn corrupt(&self, row: Row, source: impl Into<Undecodable>) -> StateError {
        StateError::Corrupt { place: self.place.clone(), row: Box::new(row), source: Box::new(source.into()) }
    }

    /// A cluster's rule state as last committed (empty for a new cluster).
    pub fn load(&mut self, cluster: &str) -> Result<RuleState, StateError> {
        let mut state = RuleState::default();
        let row = self
            .conn
            .query_one("SELECT failures, last_cycle FROM clusters WHERE cluster = ?1", args![cluster])
            .map_err(|e| self.db(e))?;
        if let Some(row) = row {
            state.failures = row.int(0).map_err(|e| self.db(e))? as u32;
            state.last_cycle = match row.maybe_text(1).map_err(|e| self.db(e))? {
                Some(t) => Some(t.parse().map_err(|e: jiff::Error| self.corrupt(Row::LastCycle { value: t }, e))?),
                None => None,
            };
        }
        let rows = self
            .conn
            .query("SELECT key, alert FROM alerts WHERE cluster = ?1", args![cluster])
            .map_err(|e| self.db(e))?;
        for row in rows {
            let (key, json) = (row.text(0).map_err(|e| self.db(e))?, row.text(1).map_err(|e| self.db(e))?);
            let alert: Alert =
                serde_json::from_str(&json).map_err(|e| self.corrupt(Row::Alert { key: key.clone() }, e))?;
            state.alerts.insert(key, std::sync::Arc::new(alert));
        }
        let rows = self
            .conn
            .query("SELECT namespace, pod, memory FROM pods WHERE cluster = ?1", args![cluster])
            .map_err(|e| self.db(e))?;
        for row in rows {
            let text = |i| row.text(i).map_err(|e| self.db(e));
            let (ns, pod, json) = (text(0)?, text(1)?, text(2)?);
            let memory: PodMemory = serde_json::from_str(&json)
                .map_err(|e| self.corrupt(Row::Pod { namespace: ns.clone(), pod: pod.clone() }, e))?;
            state.pods.insert((ns, pod), memory);
        }
        let groups = self
            .conn
            .query_one("SELECT groups FROM notice_groups WHERE cluster = ?1", args![cluster])
            .map_err(|e| self.db(e))?;
        if let Some(row) = groups {
            let json = row.text(0).map_err(|e| self.db(e))?;
            state.groups = serde_json::from_str(&json).map_err(|e| self.corrupt(Row::Groups, e))?;
        }
        // The state as read is what is written: the first look at its pods follows this mark.
        let mark = PodsChanged::new_mark();
        state.pods_changed.mark = Some(mark);
        self.written_pods.insert(cluster.to_string(), (state.pods.clone(), Some(mark)));
        self.written_alerts.insert(cluster.to_string(), state.alerts.clone());
        Ok(state)
    }

    /// Writes a cycle's outcome: the cluster's rule state and the notifications it causes
    /// (notifier name, body), in one transaction. The outbox runs on the wall clock.
    ///
    /// With PostgreSQL the cycle is written only while this replica owns the cluster
    /// ([`StateError::NotOwner`] otherwise). A cycle that cannot be written keeps its
    /// notifications, queued with the next one that is.
    pub fn commit_cycle(
        &mut self,
        cluster: &str,
        state: &RuleState,
        notifications: &[(String, String)],
        history: Option<HistoryPoint>,
    ) -> Result<(), StateError> {
        let (written, mark) = self.written_pods.remove(cluster).unzip();
        // The pods' rows are as the last look left them: those it changed are all there is to write.
        let changed = state.pods_changed.after.filter(|after| mark.flatten() == Some(*after) && written.is_some());
        let changed = changed.map(|_| state.pods_changed.keys.as_slice());
        let alerts_written = self.written_alerts.remove(cluster);
        let mut queued = self.unsaved.remove(cluster).unwrap_or_default();
        queued.extend_from_slice(notifications);
        let pods = WrittenPods { written: written.as_ref(), changed };
        let wrote = match self.write_cycle(cluster, state, &queued, history, pods, alerts_written.as_ref()) {
            Ok(wrote) => wrote,
            Err(e) => {
                if !matches!(e, StateError::NotOwner { .. }) {
                    let keep = queued.len().saturating_sub(UNSAVED_KEPT);
                    queued.drain(..keep);
                    self.unsaved.insert(cluster.to_string(), queued);
                }
                return Err(e);
            }
        };
        // Only what was committed counts as written; after a failure everything is written again.
        // Updated in place: a cycle copies only the pods that changed, not all of them.
        let written = match written {
            Some(mut written) => {
                for key in &wrote.gone {
                    written.remove(key);
                }
                for key in wrote.changed {
                    let memory = state.pods[key].clone();
                    match written.get_mut(key) {
                        Some(was) => *was = memory,
                        None => {
                            written.insert(key.clone(), memory);
                        }
                    }
                }
                written
            }
            None => state.pods.clone(),
        };
        self.written_pods.insert(cluster.to_string(), (written, state.pods_changed.mark));
        let alerts_written = match alerts_written {
            Some(mut written) => {
                for key in &wrote.alerts_gone {
                    written.remove(key);
                }
                for key in wrote.alerts_changed {
                    written.insert(key.clone(), state.alerts[key].clone());
                }
                written
            }
            None => state.alerts.clone(),
        };
        self.written_alerts.insert(cluster.to_string(), alerts_written);
        Ok(())
    }

    /// How many notifications wait in memory for a cycle to be saved.
    pub fn unsaved(&self) -> usize {
        self.unsaved.values().map(Vec::len).sum()
    }

    fn write_cycle<'s>(
        &mut self,
        cluster: &str,
        state: &'s RuleState,
        notifications: &[(String, String)],
        history: Option<HistoryPoint>,
        pods: WrittenPods,
        alerts_written: Option<&WrittenAlerts>,
    ) -> Result<Wrote<'s>, StateError> {
        let written = pods.written;
        let now = Timestamp::now();
        let place = self.place.clone();
        let replica = self.replica.as_ref().map(|r| r.name.clone());
        let fail = |source| StateError::Db { place: place.clone(), source: Box::new(source) };
        let written_ok = self.conn.transaction(|tx| {
            let mut wrote =
                Wrote { changed: Vec::new(), gone: Vec::new(), alerts_changed: Vec::new(), alerts_gone: Vec::new() };
            if let Some(me) = &replica {
                // The owner's row, locked until the end of the transaction: a replica taking the
                // cluster over waits for this cycle, and loads it. A lease that ran out with no
                // one taking the cluster (the database was away) is still this replica's.
                let owned = tx
                    .query_one(
                        "SELECT 1 FROM owners WHERE cluster = ?1 AND replica = ?2 FOR UPDATE",
                        args![cluster, me.as_str()],
                    )
                    .map_err(fail)?;
                if owned.is_none() {
                    return Err(StateError::NotOwner { cluster: cluster.to_string() });
                }
            }
            tx.execute(
                UPSERT_CLUSTER,
                &[cluster.into(), i64::from(state.failures).into(), state.last_cycle.map(|t| t.to_string()).into()],
            )
            .map_err(fail)?;
            if state.groups.is_empty() {
                tx.execute("DELETE FROM notice_groups WHERE cluster = ?1", args![cluster]).map_err(fail)?;
            } else {
                let json = serde_json::to_string(&state.groups).expect("groups serialize");
                tx.execute(
                    "INSERT INTO notice_groups (cluster, groups) VALUES (?1, ?2)
                     ON CONFLICT (cluster) DO UPDATE SET groups = excluded.groups",
                    args![cluster, json],
                )
                .map_err(fail)?;
            }
            // The alerts that changed since the last commit (all of them when what was written
            // is not known), and those gone.
            if alerts_written.is_none() {
                tx.execute("DELETE FROM alerts WHERE cluster = ?1", args![cluster]).map_err(fail)?;
            }
            for (key, alert) in &state.alerts {
                if alerts_written.is_some_and(|w| w.get(key) == Some(alert)) {
                    continue;
                }
                let json = serde_json::to_string(&**alert).expect("an alert serializes");
                tx.execute(
                    "INSERT INTO alerts (cluster, key, alert) VALUES (?1, ?2, ?3)
                     ON CONFLICT (cluster, key) DO UPDATE SET alert = excluded.alert",
                    args![cluster, key, json],
                )
                .map_err(fail)?;
                wrote.alerts_changed.push(key);
            }
            for key in alerts_written.iter().flat_map(|w| w.keys()).filter(|k| !state.alerts.contains_key(*k)) {
                tx.execute("DELETE FROM alerts WHERE cluster = ?1 AND key = ?2", args![cluster, key]).map_err(fail)?;
                wrote.alerts_gone.push(key.clone());
            }
            let cycle_time = state.last_cycle.map(|t| t.as_second()).unwrap_or(now.as_second());
            if written.is_none() {
                tx.execute("DELETE FROM pods WHERE cluster = ?1", args![cluster]).map_err(fail)?;
            }
            // Each pod looked up once in what was written; what changed written a batch a
            // statement (a cluster's first cycle writes every pod: one round trip, not a hundred).
            let mut found = 0;
            let mut memories = Vec::new();
            let mut restarts = Vec::new();
            // The pods the last look changed, when what was written is as the look before left
            // it; otherwise every pod, compared with what was written.
            let looked: Box<dyn Iterator<Item = (&'s (String, String), &'s PodMemory)>> = match pods.changed {
                Some(keys) => Box::new(keys.iter().filter_map(|k| state.pods.get_key_value(k))),
                None => Box::new(state.pods.iter()),
            };
            for (key, memory) in looked {
                let before = written.and_then(|w| w.get(key));
                found += usize::from(before.is_some());
                if before != Some(memory) {
                    let json = serde_json::to_string(memory).expect("a pod's memory serializes");
                    memories.push([cluster.into(), (&key.0).into(), (&key.1).into(), json.into()]);
                    wrote.changed.push(key);
                }
                // The restart history keeps the first count seen and every change.
                if before.map(|b| b.restarts) != Some(memory.restarts) {
                    restarts.push([
                        cluster.into(),
                        (&key.0).into(),
                        (&key.1).into(),
                        cycle_time.into(),
                        memory.restarts.into(),
                    ]);
                }
            }
            insert_rows(
                tx,
                "INSERT INTO pods (cluster, namespace, pod, memory)",
                "ON CONFLICT (cluster, namespace, pod) DO UPDATE SET memory = excluded.memory",
                &memories,
            )
            .map_err(fail)?;
            insert_rows(
                tx,
                "INSERT INTO pod_restarts (cluster, namespace, pod, time, restarts)",
                "ON CONFLICT (cluster, namespace, pod, time) DO UPDATE SET restarts = excluded.restarts",
                &restarts,
            )
            .map_err(fail)?;
            // A pod written before and not found now is gone: among those the look changed, or
            // any when every pod was looked at.
            let gone: Box<dyn Iterator<Item = &(String, String)>> = match (pods.changed, written) {
                (Some(keys), Some(written)) => {
                    Box::new(keys.iter().filter(|k| written.contains_key(*k) && !state.pods.contains_key(*k)))
                }
                (None, Some(written)) if written.len() > found => {
                    Box::new(written.keys().filter(|k| !state.pods.contains_key(*k)))
                }
                _ => Box::new(std::iter::empty()),
            };
            {
                for key in gone {
                    tx.execute(
                        "DELETE FROM pods WHERE cluster = ?1 AND namespace = ?2 AND pod = ?3",
                        args![cluster, &key.0, &key.1],
                    )
                    .map_err(fail)?;
                    wrote.gone.push(key.clone());
                }
            }
            for (notifier, body) in notifications {
                tx.execute(ENQUEUE, args![notifier, body, now.to_string(), millis(now)]).map_err(fail)?;
            }
            if let Some(h) = history {
                tx.execute(
                    "INSERT INTO history (cluster, time, nodes, nodes_ready, pods_running, pods_pending,
                     pods_failed, pods_crashlooping, warning_events) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                     ON CONFLICT (cluster, time) DO UPDATE SET nodes = excluded.nodes,
                     nodes_ready = excluded.nodes_ready, pods_running = excluded.pods_running,
                     pods_pending = excluded.pods_pending, pods_failed = excluded.pods_failed,
                     pods_crashlooping = excluded.pods_crashlooping, warning_events = excluded.warning_events",
                    args![
                        cluster,
                        h.time,
                        h.nodes,
                        h.nodes_ready,
                        h.pods_running,
                        h.pods_pending,
                        h.pods_failed,
                        h.pods_crashlooping,
                        h.warning_events
                    ],
                )
                .map_err(fail)?;
                let cutoff = h.time - HISTORY_DAYS * 86400;
                tx.execute("DELETE FROM history WHERE cluster = ?1 AND time < ?2", args![cluster, cutoff])
                    .map_err(fail)?;
                tx.execute("DELETE FROM pod_restarts WHERE cluster = ?1 AND time < ?2", args![cluster, cutoff])
                    .map_err(fail)?;
            }
            Ok(wrote)
        });
        written_ok.map_err(|e: StateError| e.at(&place))
    }

    /// A cluster's history since `since` (Unix seconds), oldest first.
    pub fn history(&mut self, cluster: &str, since: i64) -> Result<Vec<HistoryPoint>, StateError> {
        let rows = self
            .conn
            .query(
                "SELECT time, nodes, nodes_ready, pods_running, pods_pending, pods_failed, pods_crashlooping,
                 warning_events FROM history WHERE cluster = ?1 AND time >= ?2 ORDER BY time",
                args![cluster, since],
            )
            .map_err(|e| self.db(e))?;
        rows.iter()
            .map(|r| {
                Ok(HistoryPoint {
                    time: r.int(0)?,
                    nodes: r.int(1)?,
                    nodes_ready: r.int(2)?,
                    pods_running: r.int(3)?,
                    pods_pending: r.int(4)?,
                    pods_failed: r.int(5)?,
                    pods_crashlooping: r.int(6)?,
                    warning_events: r.int(7)?,
                })
            })
            .collect::<Result<_, DbError>>()
            .map_err(|e| self.db(e))
    }

    /// A pod's restart counts since `since` (and the last one before, as the starting point).
    pub fn pod_restarts(
        &mut self,
        cluster: &str,
        namespace: &str,
        pod: &str,
        since: i64,
    ) -> Result<Vec<(i64, i64)>, StateError> {
        let rows = self
            .conn
            .query(
                "SELECT time, restarts FROM pod_restarts WHERE cluster = ?1 AND namespace = ?2 AND pod = ?3
                 AND time >= (SELECT coalesce(max(time), 0) FROM pod_restarts
                              WHERE cluster = ?1 AND namespace = ?2 AND pod = ?3 AND time <= ?4)
                 ORDER BY time",
                args![cluster, namespace, pod, since],
            )
            .map_err(|e| self.db(e))?;
        rows.iter().map(|r| Ok((r.int(0)?, r.int(1)?))).collect::<Result<_, DbError>>().map_err(|e| self.db(e))
    }

    /// Claims the notifications due now, oldest first (at most `limit`), for `claimer` until
    /// `until`: another replica does not send them meanwhile. A notifier's notification is not
    /// claimed while an older one of it waits (for its retry, or with another replica), so that
    /// each notifier's notifications go strictly in order.
    pub fn claim(&mut self, claimer: &str, limit: usize, until: Timestamp) -> Result<Vec<Queued>, StateError> {
        let now = millis(Timestamp::now());
        // Most passes find nothing due: a read says so without the write lock (SQLite) or the
        // advisory lock (PostgreSQL) the claim takes (claiming an empty outbox once a second and
        // after each cycle that changed an alert was about 4% of watch mode's CPU at 10,000
        // simulated pods). A row queued after this read is claimed by the next pass, as one
        // queued just after the claim would be.
        let due = self
            .conn
            .query(
                "SELECT 1 FROM outbox WHERE due <= ?1 AND (claimed_until < ?1 OR claimed_by = ?2) LIMIT 1",
                args![now, claimer],
            )
            .map_err(|e| self.db(e))?;
        if due.is_empty() {
            return Ok(Vec::new());
        }
        let engine = self.engine();
        let place = self.place.clone();
        let rows = self
            .conn
            .transaction(|tx| {
                // PostgreSQL: one claim at a time (a transaction-scoped advisory lock, released at
                // its end), so that each sees the claims made before it; the rows themselves are
                // taken FOR UPDATE SKIP LOCKED.
                let lock = match engine {
                    Engine::Postgres => {
                        tx.query("SELECT pg_advisory_xact_lock(7410002)", &[])?;
                        " FOR UPDATE SKIP LOCKED"
                    }
                    Engine::Sqlite => "",
                };
                let sql = format!(
                    "UPDATE outbox SET claimed_by = ?1, claimed_until = ?2 WHERE id IN (
                       SELECT o.id FROM outbox o WHERE o.due <= ?3 AND (o.claimed_until < ?3 OR o.claimed_by = ?1)
                       AND NOT EXISTS (SELECT 1 FROM outbox e WHERE e.notifier = o.notifier AND e.id < o.id
                                       AND (e.due > ?3 OR (e.claimed_until >= ?3 AND e.claimed_by <> ?1)))
                       ORDER BY o.id LIMIT ?4{lock})
                     RETURNING id, notifier, body, attempts, next_attempt"
                );
                tx.query(&sql, args![claimer, millis(until), now, limit as i64])
            })
            .map_err(|source| StateError::Db { place, source: Box::new(source) })?;
        let mut queued = rows
            .iter()
            .map(|r| {
                let id = r.int(0).map_err(|e| self.db(e))?;
                let next_attempt = r
                    .text(4)
                    .map_err(|e| self.db(e))?
                    .parse()
                    .map_err(|e: jiff::Error| self.corrupt(Row::NextAttempt { id }, e))?;
                Ok(Queued {
                    id,
                    notifier: r.text(1).map_err(|e| self.db(e))?,
                    body: r.text(2).map_err(|e| self.db(e))?,
                    attempts: r.int(3).map_err(|e| self.db(e))?,
                    next_attempt,
                })
            })
            .collect::<Result<Vec<_>, StateError>>()?;
        queued.sort_by_key(|q| q.id);
        Ok(queued)
    }

    /// Holds a claimed notification's claim until `until`, just before it is sent: false when
    /// it is no longer this claimer's (its claim ran out and another replica took it).
    pub fn reclaim(&mut self, claimer: &str, id: i64, until: Timestamp) -> Result<bool, StateError> {
        self.conn
            .execute(
                "UPDATE outbox SET claimed_until = ?3 WHERE id = ?1 AND claimed_by = ?2",
                args![id, claimer, millis(until)],
            )
            .map(|n| n == 1)
            .map_err(|e| self.db(e))
    }

    /// Lets go of every claim of `claimer` (what a delivery pass claimed and did not send).
    pub fn unclaim(&mut self, claimer: &str) -> Result<(), StateError> {
        self.conn
            .execute("UPDATE outbox SET claimed_until = 0 WHERE claimed_by = ?1 AND claimed_until > 0", args![claimer])
            .map(drop)
            .map_err(|e| self.db(e))
    }

    /// Undelivered notifications, oldest first (at most `limit`), whoever claims them.
    pub fn queued(&mut self, limit: usize) -> Result<Vec<Queued>, StateError> {
        let rows = self
            .conn
            .query(
                "SELECT id, notifier, body, attempts, next_attempt FROM outbox ORDER BY id LIMIT ?1",
                args![limit as i64],
            )
            .map_err(|e| self.db(e))?;
        rows.iter()
            .map(|r| {
                let id = r.int(0).map_err(|e| self.db(e))?;
                let next_attempt = r
                    .text(4)
                    .map_err(|e| self.db(e))?
                    .parse()
                    .map_err(|e: jiff::Error| self.corrupt(Row::NextAttempt { id }, e))?;
                Ok(Queued {
                    id,
                    notifier: r.text(1).map_err(|e| self.db(e))?,
                    body: r.text(2).map_err(|e| self.db(e))?,
                    attempts: r.int(3).map_err(|e| self.db(e))?,
                    next_attempt,
                })
            })
            .collect()
    }

    /// How many notifications wait.
    pub fn queued_count(&mut self) -> Result<u64, StateError> {
        let row = self.conn.query_one("SELECT count(*) FROM outbox", &[]).map_err(|e| self.db(e))?;
        Ok(row.map(|r| r.int(0).unwrap_or(0)).unwrap_or(0) as u64)
    }

    /// Makes every queued notification due now (a monitor that starts tries at once).
    pub fn retry_all_now(&mut self) -> Result<(), StateError> {
        let now = Timestamp::now();
        self.conn
            .execute("UPDATE outbox SET next_attempt = ?1, due = ?2", args![now.to_string(), millis(now)])
            .map(drop)
            .map_err(|e| self.db(e))
    }

    /// The clusters added on the pages, by name.
    pub fn page_clusters(&mut self) -> Result<Vec<PageCluster>, StateError> {
        let rows = self
            .conn
            .query("SELECT name, settings, sealed FROM page_clusters ORDER BY name", &[])
            .map_err(|e| self.db(e))?;
        rows.iter()
            .map(|r| Ok(PageCluster { name: r.text(0)?, settings: r.text(1)?, sealed: r.bytes(2)? }))
            .collect::<Result<_, DbError>>()
            .map_err(|e| self.db(e))
    }

    /// Adds or replaces a cluster of the pages, and writes the change to the audit list, at once.
    pub fn save_page_cluster(&mut self, c: &PageCluster, entry: &AuditEntry) -> Result<(), StateError> {
        let place = self.place.clone();
        self.conn
            .transaction(|tx| {
                tx.execute(
                    "INSERT INTO page_clusters (name, settings, sealed, updated) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (name) DO UPDATE SET settings = excluded.settings, sealed = excluded.sealed,
                     updated = excluded.updated",
                    args![&c.name, &c.settings, c.sealed.as_slice(), entry.time],
                )?;
                Self::audit_in(tx, entry)
            })
            .map_err(|source| StateError::Db { place, source: Box::new(source) })
    }

    /// Removes a cluster of the pages (and says so in the audit list); false when none has
    /// that name.
    pub fn remove_page_cluster(&mut self, name: &str, entry: &AuditEntry) -> Result<bool, StateError> {
        let place = self.place.clone();
        self.conn
            .transaction(|tx| {
                let removed = tx.execute("DELETE FROM page_clusters WHERE name = ?1", args![name])?;
                if removed > 0 {
                    Self::audit_in(tx, entry)?;
                }
                Ok(removed > 0)
            })
            .map_err(|source| StateError::Db { place, source: Box::new(source) })
    }

    fn audit_in(tx: &mut Conn, e: &AuditEntry) -> Result<(), DbError> {
        tx.execute(
            "INSERT INTO audit (time, who, action, cluster) VALUES (?1, ?2, ?3, ?4)",
            args![e.time, &e.who, &e.action, &e.cluster],
        )
        .map(drop)
    }

    /// The newest changes first.
    pub fn audit(&mut self, limit: usize) -> Result<Vec<AuditEntry>, StateError> {
        let rows = self
            .conn
            .query("SELECT time, who, action, cluster FROM audit ORDER BY id DESC LIMIT ?1", args![limit as i64])
            .map_err(|e| self.db(e))?;
        rows.iter()
            .map(|r| Ok(AuditEntry { time: r.int(0)?, who: r.text(1)?, action: r.text(2)?, cluster: r.text(3)? }))
            .collect::<Result<_, DbError>>()
            .map_err(|e| self.db(e))
    }

    pub fn delivered(&mut self, id: i64) -> Result<(), StateError> {
        self.conn.execute("DELETE FROM outbox WHERE id = ?1", args![id]).map(drop).map_err(|e| self.db(e))
    }

    /// A notification to try again at `next_attempt`, claimed by nobody until then.
    pub fn retry_later(&mut self, id: i64, next_attempt: Timestamp, error: &str) -> Result<(), StateError> {
        self.conn
            .execute(
                "UPDATE outbox SET attempts = attempts + 1, next_attempt = ?2, due = ?3, last_error = ?4,
                 claimed_until = 0 WHERE id = ?1",
                args![id, next_attempt.to_string(), millis(next_attempt), error],
            )
            .map(drop)
            .map_err(|e| self.db(e))
    }
}

/// Rows inserted by `head VALUES (…), (…) tail`, a hundred a statement.
fn insert_rows<const N: usize>(
    tx: &mut db::Conn,
    head: &str,
    tail: &str,
    rows: &[[db::Value; N]],
) -> Result<(), db::DbError> {
    for batch in rows.chunks(100) {
        let values: Vec<String> = (0..batch.len())
            .map(|r| {
                let places: Vec<String> = (1..=N).map(|c| format!("?{}", r * N + c)).collect();
                format!("({})", places.join(", "))
            })
            .collect();
        let args: Vec<db::Value> = batch.iter().flat_map(|row| row.iter().cloned()).collect();
        tx.execute(&format!("{head} VALUES {} {tail}", values.join(", ")), &args)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Severity;
    use std::collections::BTreeMap;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(1_790_000_000 + s).unwrap()
    }

    /// The alert the stored states hold.
    fn node_not_ready() -> Alert {
        Alert {
            alertname: "KubernetesNodeNotReady".into(),
            severity: Severity::Warning,
            labels: BTreeMap::from([("node".to_string(), "n1".to_string())]),
            summary: "Node n1 is not ready".into(),
            description: String::new(),
            active_at: t(0),
            fired_at: None,
            escalated_at: None,
            untold: false,
            acknowledged: None,
            told_labels: None,
            said: None,
            said_description: None,
        }
    }

    /// The pod memory the stored states hold.
    fn crashed_three_times() -> PodMemory {
        PodMemory { restarts: 3, increases: vec![(t(30), 3)], crashloop_seen: Some(t(60)), crashlooping: false }
    }

    #[test]
    fn a_cycle_round_trips_and_the_outbox_drains() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path()).unwrap();
        let mut state = store.load("lab").unwrap();
        assert_eq!(state, RuleState::default());
        state.failures = 1;
        state.last_cycle = Some(t(60));
        state.alerts.insert("KubernetesNodeNotReady{node=\"n1\"}".into(), std::sync::Arc::new(node_not_ready()));
        state.pods.insert(("shop".into(), "api".into()), crashed_three_times());
        // A crash loop under way is stored as such.
        state.pods.insert(("shop".into(), "web".into()), PodMemory { crashlooping: true, ..crashed_three_times() });
        let point = HistoryPoint { time: 1_790_000_060, nodes: 3, nodes_ready: 2, ..Default::default() };
        store
            .commit_cycle(
                "lab",
                &state,
                &[("hook".into(), "{\"a\":1}".into()), ("am".into(), "[]".into())],
                Some(point),
            )
            .unwrap();
        drop(store);

        let mut store = Store::open(dir.path()).unwrap();
        assert_eq!(store.load("lab").unwrap(), state, "everything committed is read back");
        assert_eq!(store.history("lab", 0).unwrap(), [point]);
        assert_eq!(store.pod_restarts("lab", "shop", "api", 0).unwrap(), [(1_790_000_060, 3)]);
        assert_eq!(store.load("other").unwrap(), RuleState::default(), "clusters are apart");
        let queued = store.queued(10).unwrap();
        assert_eq!(queued.iter().map(|q| q.notifier.as_str()).collect::<Vec<_>>(), ["hook", "am"]);
        let later = Timestamp::now() + jiff::SignedDuration::from_secs(60);
        store.retry_later(queued[0].id, later, "503").unwrap();
        store.delivered(queued[1].id).unwrap();
        let queued = store.queued(10).unwrap();
        assert_eq!((queued.len(), queued[0].attempts, queued[0].next_attempt), (1, 1, later));
        store.retry_all_now().unwrap();
        assert!(store.queued(10).unwrap()[0].next_attempt <= Timestamp::now());
        assert_eq!(store.queued_count().unwrap(), 1);

        // A pod that is gone is deleted; an unchanged one is not rewritten.
        let mut next = state.clone();
        next.pods.clear();
        store.commit_cycle("lab", &next, &[], None).unwrap();
        assert!(Store::open(dir.path()).unwrap().load("lab").unwrap().pods.is_empty());
    }

    /// A store that has not read a cluster's rows (another process's, or after a failed commit)
    /// writes its pods afresh: no row of a pod it does not know is left behind.
    #[test]
    fn pods_are_written_afresh_unless_the_rows_are_known() {
        let dir = tempfile::tempdir().unwrap();
        let pod = |name: &str| (("shop".to_string(), name.to_string()), crashed_three_times());
        let mut state = RuleState::default();
        state.pods.extend([pod("a"), pod("b")]);
        Store::open(dir.path()).unwrap().commit_cycle("lab", &state, &[], None).unwrap();

        let mut other = Store::open(dir.path()).unwrap();
        let mut later = RuleState::default();
        later.pods.extend([pod("c")]);
        other.commit_cycle("lab", &later, &[], None).unwrap();
        assert_eq!(Store::open(dir.path()).unwrap().load("lab").unwrap().pods, later.pods, "a and b deleted");

        // Rows known: a changed pod is written, a gone one deleted, a new one added.
        let mut next = later.clone();
        next.pods.get_mut(&("shop".to_string(), "c".to_string())).unwrap().restarts = 4;
        next.pods.extend([pod("d")]);
        other.commit_cycle("lab", &next, &[], None).unwrap();
        next.pods.remove(&("shop".to_string(), "d".to_string()));
        next.pods.extend([pod("e")]);
        other.commit_cycle("lab", &next, &[], None).unwrap();
        assert_eq!(Store::open(dir.path()).unwrap().load("lab").unwrap().pods, next.pods);
    }

    /// A look at the pods that follows the one last written names the pods it changed: those
    /// alone are written, the others not even compared. A look that follows one not written (a
    /// commit missed) has every pod compared again.
    #[test]
    fn a_look_after_the_one_written_writes_the_pods_it_changed() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path()).unwrap();
        let mut state = store.load("lab").unwrap();
        let key = |name: &str| ("shop".to_string(), name.to_string());
        let look = |state: &mut RuleState, changes: &[(&str, Option<i64>)]| {
            state.pods_changed.start();
            for (name, restarts) in changes {
                match restarts {
                    Some(r) => state.pods.insert(key(name), PodMemory { restarts: *r, ..Default::default() }),
                    None => state.pods.remove(&key(name)),
                };
                state.pods_changed.keys.push(key(name));
            }
        };
        let restarts = |name: &str| {
            let pods = Store::open(dir.path()).unwrap().load("lab").unwrap().pods;
            pods.get(&key(name)).map(|m| m.restarts)
        };
        look(&mut state, &[("a", Some(1)), ("b", Some(1)), ("c", Some(1))]);
        store.commit_cycle("lab", &state, &[], None).unwrap();
        assert_eq!([restarts("a"), restarts("b"), restarts("c")], [Some(1); 3], "the first look after the load");

        // The look's word is taken: b, changed without being named, is not written.
        look(&mut state, &[("a", Some(2)), ("c", None)]);
        state.pods.get_mut(&key("b")).unwrap().restarts = 5;
        store.commit_cycle("lab", &state, &[], None).unwrap();
        assert_eq!([restarts("a"), restarts("b"), restarts("c")], [Some(2), Some(1), None]);

        // A look not committed: the next look does not follow the one written, every pod is
        // compared with what was written.
        look(&mut state, &[("a", Some(3))]);
        look(&mut state, &[]);
        store.commit_cycle("lab", &state, &[], None).unwrap();
        assert_eq!([restarts("a"), restarts("b"), restarts("c")], [Some(3), Some(5), None]);
    }

    /// Alerts likewise: a store that has not read a cluster's rows writes them all afresh; one
    /// that has writes the alerts that changed, deletes those gone, and leaves the others.
    #[test]
    fn alerts_are_written_when_they_change_and_afresh_unless_the_rows_are_known() {
        let dir = tempfile::tempdir().unwrap();
        let alert = |node: &str| {
            let mut a = node_not_ready();
            a.labels.insert("node".into(), node.into());
            (format!("KubernetesNodeNotReady{{node=\"{node}\"}}"), std::sync::Arc::new(a))
        };
        let mut state = RuleState::default();
        state.alerts.extend([alert("a"), alert("b")]);
        Store::open(dir.path()).unwrap().commit_cycle("lab", &state, &[], None).unwrap();

        let mut other = Store::open(dir.path()).unwrap();
        let mut later = RuleState::default();
        later.alerts.extend([alert("c")]);
        other.commit_cycle("lab", &later, &[], None).unwrap();
        assert_eq!(Store::open(dir.path()).unwrap().load("lab").unwrap().alerts, later.alerts, "a and b deleted");

        // Rows known: a changed alert is written, a gone one deleted, a new one added.
        let mut next = later.clone();
        next.alerts.values_mut().for_each(|a| std::sync::Arc::make_mut(a).fired_at = Some(t(120)));
        next.alerts.extend([alert("d")]);
        other.commit_cycle("lab", &next, &[], None).unwrap();
        next.alerts.retain(|_, a| a.labels["node"] != "d");
        next.alerts.extend([alert("e")]);
        other.commit_cycle("lab", &next, &[], None).unwrap();
        assert_eq!(Store::open(dir.path()).unwrap().load("lab").unwrap().alerts, next.alerts);

        // An alert left as it was is not written again: a row changed behind the store's back
        // stays as it is.
        let c = "KubernetesNodeNotReady{node=\"c\"}";
        let conn = rusqlite::Connection::open(dir.path().join(FILE)).unwrap();
        let marked = conn
            .execute("UPDATE alerts SET alert = replace(alert, '\"summary\":\"', '\"summary\":\"(row kept) ') WHERE key = ?1", [c])
            .unwrap();
        assert_eq!(marked, 1);
        std::sync::Arc::make_mut(next.alerts.get_mut(&alert("e").0).unwrap()).fired_at = Some(t(180));
        other.commit_cycle("lab", &next, &[], None).unwrap();
        let loaded = Store::open(dir.path()).unwrap().load("lab").unwrap().alerts;
        assert!(loaded[c].summary.starts_with("(row kept) "), "{:?}", loaded[c]);
        assert_eq!(loaded[&alert("e").0], next.alerts[&alert("e").0], "the changed one written");
    }

    #[test]
    fn a_state_written_before_the_derivation_kept_its_own_memory_still_loads() {
        // Rows as earlier versions wrote them, word for word: what the rules remember is stored
        // as it was; the derivation's memory (Ready changes, updates without progress) never was
        // stored, and starts empty after a restart as it always did.
        let dir = tempfile::tempdir().unwrap();
        let conn = rusqlite::Connection::open(dir.path().join(FILE)).unwrap();
        conn.execute_batch(schema::SQLITE_V1).unwrap();
        conn.execute_batch(
            r#"INSERT INTO clusters (cluster, failures, last_cycle) VALUES ('lab', 1, '2026-09-21T14:14:20Z');
               INSERT INTO alerts (cluster, key, alert) VALUES ('lab', 'KubernetesNodeNotReady{node="n1"}',
                 '{"alertname":"KubernetesNodeNotReady","severity":"warning","labels":{"node":"n1"},"summary":"Node n1 is not ready","description":"","active_at":"2026-09-21T14:13:20Z","fired_at":null,"escalated_at":null}');
               INSERT INTO pods (cluster, namespace, pod, memory) VALUES ('lab', 'shop', 'api',
                 '{"restarts":3,"increases":[["2026-09-21T14:13:50Z",3]],"crashloop_seen":"2026-09-21T14:14:20Z"}');"#,
        )
        .unwrap();
        drop(conn);
        let state = Store::open(dir.path()).unwrap().load("lab").unwrap();
        let mut expected = RuleState { failures: 1, last_cycle: Some(t(60)), ..Default::default() };
        expected.alerts.insert("KubernetesNodeNotReady{node=\"n1\"}".into(), std::sync::Arc::new(node_not_ready()));
        expected.pods.insert(("shop".into(), "api".into()), crashed_three_times());
        assert_eq!(state, expected);
        assert_eq!(state.memory, crate::health::Memory::default());
    }

    #[test]
    fn an_unusable_directory_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-dir");
        std::fs::write(&file, "x").unwrap();
        let e = Store::open(&file).err().unwrap().to_string();
        assert!(e.starts_with(&format!("The state directory {} cannot be used", file.display())), "{e}");
    }
}
