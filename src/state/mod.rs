//! The state that must survive a restart, in SQLite: each cluster's active alerts (with their
//! activeAt, firing and escalation times), what the rules remember of each pod (restart counts,
//! the last crash loop), failed cycles in a row, and the notification outbox.
//!
//! A cycle's whole outcome — rule state and the notifications it causes — is written in one
//! transaction: a crash, even `kill -9`, keeps a cycle entirely or not at all.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, params};

mod clusters;
mod quiet;

pub use clusters::{StoredCluster, UnreadableSettings, Unsealed};
pub use quiet::{Kept, QuietKind};

use crate::rules::engine::{PodMemories, PodMemory};
use crate::rules::{Alert, RuleState};

/// The database file inside the state directory.
pub const FILE: &str = "dumbmonit.db";

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("The state directory {dir} cannot be used: {source}")]
    Dir { dir: PathBuf, source: std::io::Error },
    #[error("The state database {file} cannot be used: {source}")]
    Db { file: PathBuf, source: rusqlite::Error },
    /// A row that the database holds cannot be read back.
    #[error("The state database {file} holds something unreadable: {row}: {source}")]
    Corrupt { file: PathBuf, row: Row, source: Undecodable },
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

/// What a commit wrote of a cluster's pods.
struct Wrote<'s> {
    /// The pods whose memory was written (new or changed).
    changed: Vec<&'s (String, String)>,
    /// The pods written before that were gone, and deleted.
    gone: Vec<(String, String)>,
}

/// The state database of one monitor.
pub struct Store {
    conn: Connection,
    file: PathBuf,
    /// What was last written of each cluster's pods, so that a cycle writes only what changed;
    /// none for a cluster whose rows are not known to match (never loaded, or its last commit
    /// failed): its next commit writes them all afresh.
    written_pods: HashMap<String, PodMemories>,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS clusters (
    cluster TEXT PRIMARY KEY,
    failures INTEGER NOT NULL,
    last_cycle TEXT
);
CREATE TABLE IF NOT EXISTS alerts (
    cluster TEXT NOT NULL,
    key TEXT NOT NULL,
    alert TEXT NOT NULL,
    PRIMARY KEY (cluster, key)
);
CREATE TABLE IF NOT EXISTS pods (
    cluster TEXT NOT NULL,
    namespace TEXT NOT NULL,
    pod TEXT NOT NULL,
    memory TEXT NOT NULL,
    PRIMARY KEY (cluster, namespace, pod)
);
CREATE TABLE IF NOT EXISTS notice_groups (
    cluster TEXT PRIMARY KEY,
    groups TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    notifier TEXT NOT NULL,
    body TEXT NOT NULL,
    created TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt TEXT NOT NULL,
    last_error TEXT
);
CREATE INDEX IF NOT EXISTS outbox_due ON outbox (next_attempt);
CREATE TABLE IF NOT EXISTS history (
    cluster TEXT NOT NULL,
    time INTEGER NOT NULL,
    nodes INTEGER NOT NULL,
    nodes_ready INTEGER NOT NULL,
    pods_running INTEGER NOT NULL,
    pods_pending INTEGER NOT NULL,
    pods_failed INTEGER NOT NULL,
    pods_crashlooping INTEGER NOT NULL,
    warning_events INTEGER NOT NULL,
    PRIMARY KEY (cluster, time)
);
CREATE TABLE IF NOT EXISTS pod_restarts (
    cluster TEXT NOT NULL,
    namespace TEXT NOT NULL,
    pod TEXT NOT NULL,
    time INTEGER NOT NULL,
    restarts INTEGER NOT NULL,
    PRIMARY KEY (cluster, namespace, pod, time)
);
CREATE INDEX IF NOT EXISTS pod_restarts_age ON pod_restarts (cluster, time);
CREATE TABLE IF NOT EXISTS page_clusters (
    name TEXT PRIMARY KEY,
    settings TEXT NOT NULL,
    sealed BLOB NOT NULL,
    updated INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS quiet (
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (kind, id)
);
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    time INTEGER NOT NULL,
    who TEXT NOT NULL,
    action TEXT NOT NULL,
    cluster TEXT NOT NULL
);
";

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
        let db = |source| StateError::Db { file: file.clone(), source };
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
        let conn = Connection::open(&file).map_err(db)?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(db)?;
        // WAL: a reader (the delivery worker) never blocks the cycle's writer. synchronous=NORMAL:
        // in WAL mode a commit survives a killed process without waiting for an fsync (a power
        // cut may lose the last commits, which the next cycles redo). It also keeps short the
        // moment between a notification's 200 and its removal from the outbox, the only moment
        // where a kill makes it be sent again.
        conn.pragma_update(None, "journal_mode", "WAL").map_err(db)?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(db)?;
        conn.execute_batch(SCHEMA).map_err(db)?;
        Ok(Store { conn, file, written_pods: HashMap::new() })
    }

    /// A database in memory, shared by every connection opened with the same `name` in this
    /// process: what `serve` uses when its state directory cannot be used, so that it goes on
    /// monitoring (nothing then survives a restart).
    pub fn open_in_memory(name: &str) -> Result<Store, StateError> {
        let file = PathBuf::from(format!("(in memory: {name})"));
        let db = |source| StateError::Db { file: file.clone(), source };
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
            | rusqlite::OpenFlags::SQLITE_OPEN_CREATE
            | rusqlite::OpenFlags::SQLITE_OPEN_URI
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(format!("file:{name}?mode=memory&cache=shared"), flags).map_err(db)?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(db)?;
        conn.execute_batch(SCHEMA).map_err(db)?;
        Ok(Store { conn, file, written_pods: HashMap::new() })
    }

    fn db(&self, source: rusqlite::Error) -> StateError {
        StateError::Db { file: self.file.clone(), source }
    }

    fn corrupt(&self, row: Row, source: impl Into<Undecodable>) -> StateError {
        StateError::Corrupt { file: self.file.clone(), row, source: source.into() }
    }

    /// A cluster's rule state as last committed (empty for a new cluster).
    pub fn load(&mut self, cluster: &str) -> Result<RuleState, StateError> {
        let mut state = RuleState::default();
        let row: Option<(u32, Option<String>)> = self
            .conn
            .query_row("SELECT failures, last_cycle FROM clusters WHERE cluster = ?1", [cluster], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
            .map_err(|e| self.db(e))?;
        if let Some((failures, last)) = row {
            state.failures = failures;
            state.last_cycle = match last {
                Some(t) => Some(t.parse().map_err(|e: jiff::Error| self.corrupt(Row::LastCycle { value: t }, e))?),
                None => None,
            };
        }
        let mut stmt = self.conn.prepare("SELECT key, alert FROM alerts WHERE cluster = ?1").map_err(|e| self.db(e))?;
        let rows: Vec<(String, String)> = stmt
            .query_map([cluster], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.db(e))?;
        drop(stmt);
        for (key, json) in rows {
            let alert: Alert =
                serde_json::from_str(&json).map_err(|e| self.corrupt(Row::Alert { key: key.clone() }, e))?;
            state.alerts.insert(key, alert);
        }
        let mut stmt =
            self.conn.prepare("SELECT namespace, pod, memory FROM pods WHERE cluster = ?1").map_err(|e| self.db(e))?;
        let rows: Vec<(String, String, String)> = stmt
            .query_map([cluster], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.db(e))?;
        drop(stmt);
        for (ns, pod, json) in rows {
            let memory: PodMemory = serde_json::from_str(&json)
                .map_err(|e| self.corrupt(Row::Pod { namespace: ns.clone(), pod: pod.clone() }, e))?;
            state.pods.insert((ns, pod), memory);
        }
        let groups: Option<String> = self
            .conn
            .query_row("SELECT groups FROM notice_groups WHERE cluster = ?1", [cluster], |r| r.get(0))
            .optional()
            .map_err(|e| self.db(e))?;
        if let Some(json) = groups {
            state.groups = serde_json::from_str(&json).map_err(|e| self.corrupt(Row::Groups, e))?;
        }
        self.written_pods.insert(cluster.to_string(), state.pods.clone());
        Ok(state)
    }

    /// Writes a cycle's outcome: the cluster's rule state and the notifications it causes
    /// (notifier name, body), in one transaction. The outbox runs on the wall clock.
    pub fn commit_cycle(
        &mut self,
        cluster: &str,
        state: &RuleState,
        notifications: &[(String, String)],
        history: Option<HistoryPoint>,
    ) -> Result<(), StateError> {
        let written = self.written_pods.remove(cluster);
        let wrote = self.write_cycle(cluster, state, notifications, history, written.as_ref())?;
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
        self.written_pods.insert(cluster.to_string(), written);
        Ok(())
    }

    fn write_cycle<'s>(
        &mut self,
        cluster: &str,
        state: &'s RuleState,
        notifications: &[(String, String)],
        history: Option<HistoryPoint>,
        written: Option<&PodMemories>,
    ) -> Result<Wrote<'s>, StateError> {
        let now = Timestamp::now();
        let file = self.file.clone();
        let db = |source| StateError::Db { file: file.clone(), source };
        let mut wrote = Wrote { changed: Vec::new(), gone: Vec::new() };
        let tx = self.conn.transaction().map_err(db)?;
        tx.execute(
            "INSERT INTO clusters (cluster, failures, last_cycle) VALUES (?1, ?2, ?3)
             ON CONFLICT (cluster) DO UPDATE SET failures = excluded.failures, last_cycle = excluded.last_cycle",
            params![cluster, state.failures, state.last_cycle.map(|t| t.to_string())],
        )
        .map_err(db)?;
        tx.execute("DELETE FROM alerts WHERE cluster = ?1", [cluster]).map_err(db)?;
        if state.groups.is_empty() {
            tx.execute("DELETE FROM notice_groups WHERE cluster = ?1", [cluster]).map_err(db)?;
        } else {
            let json = serde_json::to_string(&state.groups).expect("groups serialize");
            tx.execute(
                "INSERT OR REPLACE INTO notice_groups (cluster, groups) VALUES (?1, ?2)",
                params![cluster, json],
            )
            .map_err(db)?;
        }
        {
            let mut insert = tx.prepare("INSERT INTO alerts (cluster, key, alert) VALUES (?1, ?2, ?3)").map_err(db)?;
            for (key, alert) in &state.alerts {
                let json = serde_json::to_string(alert).expect("an alert serializes");
                insert.execute(params![cluster, key, json]).map_err(db)?;
            }
            let mut upsert = tx
                .prepare(
                    "INSERT INTO pods (cluster, namespace, pod, memory) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (cluster, namespace, pod) DO UPDATE SET memory = excluded.memory",
                )
                .map_err(db)?;
            let mut restarts = tx
                .prepare(
                    "INSERT OR REPLACE INTO pod_restarts (cluster, namespace, pod, time, restarts) VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(db)?;
            let cycle_time = state.last_cycle.map(|t| t.as_second()).unwrap_or(now.as_second());
            if written.is_none() {
                tx.execute("DELETE FROM pods WHERE cluster = ?1", [cluster]).map_err(db)?;
            }
            // Each pod looked up once in what was written.
            let mut found = 0;
            for (key, memory) in &state.pods {
                let before = written.and_then(|w| w.get(key));
                found += usize::from(before.is_some());
                if before != Some(memory) {
                    let json = serde_json::to_string(memory).expect("a pod's memory serializes");
                    upsert.execute(params![cluster, key.0, key.1, json]).map_err(db)?;
                    wrote.changed.push(key);
                }
                // The restart history keeps the first count seen and every change.
                if before.map(|b| b.restarts) != Some(memory.restarts) {
                    restarts.execute(params![cluster, key.0, key.1, cycle_time, memory.restarts]).map_err(db)?;
                }
            }
            // A pod written before and not found now is gone.
            if let Some(written) = written.filter(|w| w.len() > found) {
                let mut delete =
                    tx.prepare("DELETE FROM pods WHERE cluster = ?1 AND namespace = ?2 AND pod = ?3").map_err(db)?;
                for key in written.keys().filter(|k| !state.pods.contains_key(*k)) {
                    delete.execute(params![cluster, key.0, key.1]).map_err(db)?;
                    wrote.gone.push(key.clone());
                }
            }
            let mut enqueue = tx
                .prepare("INSERT INTO outbox (notifier, body, created, next_attempt) VALUES (?1, ?2, ?3, ?3)")
                .map_err(db)?;
            for (notifier, body) in notifications {
                enqueue.execute(params![notifier, body, now.to_string()]).map_err(db)?;
            }
            if let Some(h) = history {
                tx.execute(
                    "INSERT OR REPLACE INTO history (cluster, time, nodes, nodes_ready, pods_running, pods_pending,
                     pods_failed, pods_crashlooping, warning_events) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    params![
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
                .map_err(db)?;
                let cutoff = h.time - HISTORY_DAYS * 86400;
                tx.execute("DELETE FROM history WHERE cluster = ?1 AND time < ?2", params![cluster, cutoff])
                    .map_err(db)?;
                tx.execute("DELETE FROM pod_restarts WHERE cluster = ?1 AND time < ?2", params![cluster, cutoff])
                    .map_err(db)?;
            }
        }
        tx.commit().map_err(db)?;
        Ok(wrote)
    }

    /// A cluster's history since `since` (Unix seconds), oldest first.
    pub fn history(&self, cluster: &str, since: i64) -> Result<Vec<HistoryPoint>, StateError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT time, nodes, nodes_ready, pods_running, pods_pending, pods_failed, pods_crashlooping,
                 warning_events FROM history WHERE cluster = ?1 AND time >= ?2 ORDER BY time",
            )
            .map_err(|e| self.db(e))?;
        stmt.query_map(params![cluster, since], |r| {
            Ok(HistoryPoint {
                time: r.get(0)?,
                nodes: r.get(1)?,
                nodes_ready: r.get(2)?,
                pods_running: r.get(3)?,
                pods_pending: r.get(4)?,
                pods_failed: r.get(5)?,
                pods_crashlooping: r.get(6)?,
                warning_events: r.get(7)?,
            })
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| self.db(e))
    }

    /// A pod's restart counts since `since` (and the last one before, as the starting point).
    pub fn pod_restarts(
        &self,
        cluster: &str,
        namespace: &str,
        pod: &str,
        since: i64,
    ) -> Result<Vec<(i64, i64)>, StateError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT time, restarts FROM pod_restarts WHERE cluster = ?1 AND namespace = ?2 AND pod = ?3
                 AND time >= (SELECT coalesce(max(time), 0) FROM pod_restarts
                              WHERE cluster = ?1 AND namespace = ?2 AND pod = ?3 AND time <= ?4)
                 ORDER BY time",
            )
            .map_err(|e| self.db(e))?;
        stmt.query_map(params![cluster, namespace, pod, since], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.db(e))
    }

    /// Undelivered notifications, oldest first (at most `limit`).
    pub fn queued(&self, limit: usize) -> Result<Vec<Queued>, StateError> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, notifier, body, attempts, next_attempt FROM outbox ORDER BY id LIMIT ?1")
            .map_err(|e| self.db(e))?;
        let rows: Vec<(i64, String, String, i64, String)> = stmt
            .query_map(params![limit as i64], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.db(e))?;
        rows.into_iter()
            .map(|(id, notifier, body, attempts, next)| {
                let next_attempt = next.parse().map_err(|e: jiff::Error| self.corrupt(Row::NextAttempt { id }, e))?;
                Ok(Queued { id, notifier, body, attempts, next_attempt })
            })
            .collect()
    }

    /// How many notifications wait.
    pub fn queued_count(&self) -> Result<u64, StateError> {
        self.conn
            .query_row("SELECT count(*) FROM outbox", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| self.db(e))
    }

    /// Makes every queued notification due now (a monitor that starts tries at once).
    pub fn retry_all_now(&self) -> Result<(), StateError> {
        self.conn
            .execute("UPDATE outbox SET next_attempt = ?1", [Timestamp::now().to_string()])
            .map(drop)
            .map_err(|e| self.db(e))
    }

    /// The clusters added on the pages, by name.
    pub fn page_clusters(&self) -> Result<Vec<PageCluster>, StateError> {
        let mut stmt = self
            .conn
            .prepare("SELECT name, settings, sealed FROM page_clusters ORDER BY name")
            .map_err(|e| self.db(e))?;
        let rows = stmt
            .query_map([], |r| Ok(PageCluster { name: r.get(0)?, settings: r.get(1)?, sealed: r.get(2)? }))
            .map_err(|e| self.db(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.db(e))
    }

    /// Adds or replaces a cluster of the pages, and writes the change to the audit list, at once.
    pub fn save_page_cluster(&mut self, c: &PageCluster, entry: &AuditEntry) -> Result<(), StateError> {
        let file = self.file.clone();
        let db = |source| StateError::Db { file: file.clone(), source };
        let tx = self.conn.transaction().map_err(db)?;
        tx.execute(
            "INSERT INTO page_clusters (name, settings, sealed, updated) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(name) DO UPDATE SET settings = ?2, sealed = ?3, updated = ?4",
            params![c.name, c.settings, c.sealed, entry.time],
        )
        .and_then(|_| Self::audit_in(&tx, entry))
        .and_then(|_| tx.commit())
        .map_err(db)
    }

    /// Removes a cluster of the pages (and says so in the audit list); false when none has
    /// that name.
    pub fn remove_page_cluster(&mut self, name: &str, entry: &AuditEntry) -> Result<bool, StateError> {
        let file = self.file.clone();
        let db = |source| StateError::Db { file: file.clone(), source };
        let tx = self.conn.transaction().map_err(db)?;
        let removed = tx.execute("DELETE FROM page_clusters WHERE name = ?1", [name]).map_err(db)?;
        if removed > 0 {
            Self::audit_in(&tx, entry).map_err(db)?;
        }
        tx.commit().map_err(db)?;
        Ok(removed > 0)
    }

    fn audit_in(tx: &rusqlite::Transaction<'_>, e: &AuditEntry) -> rusqlite::Result<()> {
        tx.execute(
            "INSERT INTO audit (time, who, action, cluster) VALUES (?1, ?2, ?3, ?4)",
            params![e.time, e.who, e.action, e.cluster],
        )
        .map(drop)
    }

    /// The newest changes first.
    pub fn audit(&self, limit: usize) -> Result<Vec<AuditEntry>, StateError> {
        let mut stmt = self
            .conn
            .prepare("SELECT time, who, action, cluster FROM audit ORDER BY id DESC LIMIT ?1")
            .map_err(|e| self.db(e))?;
        let rows = stmt
            .query_map([limit as i64], |r| {
                Ok(AuditEntry { time: r.get(0)?, who: r.get(1)?, action: r.get(2)?, cluster: r.get(3)? })
            })
            .map_err(|e| self.db(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.db(e))
    }

    pub fn delivered(&self, id: i64) -> Result<(), StateError> {
        self.conn.execute("DELETE FROM outbox WHERE id = ?1", [id]).map(drop).map_err(|e| self.db(e))
    }

    pub fn retry_later(&self, id: i64, next_attempt: Timestamp, error: &str) -> Result<(), StateError> {
        self.conn
            .execute(
                "UPDATE outbox SET attempts = attempts + 1, next_attempt = ?2, last_error = ?3 WHERE id = ?1",
                params![id, next_attempt.to_string(), error],
            )
            .map(drop)
            .map_err(|e| self.db(e))
    }
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
        PodMemory { restarts: 3, increases: vec![(t(30), 3)], crashloop_seen: Some(t(60)) }
    }

    #[test]
    fn a_cycle_round_trips_and_the_outbox_drains() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path()).unwrap();
        let mut state = store.load("lab").unwrap();
        assert_eq!(state, RuleState::default());
        state.failures = 1;
        state.last_cycle = Some(t(60));
        state.alerts.insert("KubernetesNodeNotReady{node=\"n1\"}".into(), node_not_ready());
        state.pods.insert(("shop".into(), "api".into()), crashed_three_times());
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

    #[test]
    fn a_state_written_before_the_derivation_kept_its_own_memory_still_loads() {
        // Rows as earlier versions wrote them, word for word: what the rules remember is stored
        // as it was; the derivation's memory (Ready changes, updates without progress) never was
        // stored, and starts empty after a restart as it always did.
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join(FILE)).unwrap();
        conn.execute_batch(SCHEMA).unwrap();
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
        expected.alerts.insert("KubernetesNodeNotReady{node=\"n1\"}".into(), node_not_ready());
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
