//! Silences and maintenance windows made through the API or the pages: kept as the JSON the API
//! lists (the silence room reads it back), each change with its audit entry in one transaction.

use rusqlite::params;

use super::{AuditEntry, StateError, Store};

/// What is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuietKind {
    Silence,
    Window,
}

impl QuietKind {
    fn as_str(self) -> &'static str {
        match self {
            QuietKind::Silence => "silence",
            QuietKind::Window => "maintenance",
        }
    }
}

/// One kept silence or window: its id and its JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kept {
    pub id: String,
    pub body: String,
}

impl Store {
    /// Every kept silence, or window.
    pub fn kept(&self, kind: QuietKind) -> Result<Vec<Kept>, StateError> {
        let mut stmt =
            self.conn.prepare("SELECT id, body FROM quiet WHERE kind = ?1 ORDER BY id").map_err(|e| self.db(e))?;
        let rows =
            stmt.query_map([kind.as_str()], |r| Ok(Kept { id: r.get(0)?, body: r.get(1)? })).map_err(|e| self.db(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.db(e))
    }

    /// Adds or replaces one, with its audit entry.
    pub fn keep(&mut self, kind: QuietKind, kept: &Kept, entry: &AuditEntry) -> Result<(), StateError> {
        let tx = self.conn.transaction().map_err(|e| StateError::Db { file: self.file.clone(), source: e })?;
        tx.execute(
            "INSERT INTO quiet (kind, id, body) VALUES (?1, ?2, ?3) ON CONFLICT (kind, id) DO UPDATE SET body = ?3",
            params![kind.as_str(), kept.id, kept.body],
        )
        .and_then(|_| Store::audit_in(&tx, entry))
        .and_then(|_| tx.commit())
        .map_err(|e| StateError::Db { file: self.file.clone(), source: e })
    }

    /// Removes one, with its audit entry; false when there was none.
    pub fn unkeep(&mut self, kind: QuietKind, id: &str, entry: &AuditEntry) -> Result<bool, StateError> {
        let tx = self.conn.transaction().map_err(|e| StateError::Db { file: self.file.clone(), source: e })?;
        let removed = tx
            .execute("DELETE FROM quiet WHERE kind = ?1 AND id = ?2", params![kind.as_str(), id])
            .and_then(|n| Store::audit_in(&tx, entry).map(|_| n))
            .and_then(|n| tx.commit().map(|_| n))
            .map_err(|e| StateError::Db { file: self.file.clone(), source: e })?;
        Ok(removed > 0)
    }

    /// Queues notifications made outside a cycle (an acknowledgement's), with the audit entry
    /// of what made them, in one transaction.
    pub fn queue_with(&mut self, notifications: &[(String, String)], entry: &AuditEntry) -> Result<(), StateError> {
        let file = self.file.clone();
        let db = |source| StateError::Db { file: file.clone(), source };
        let tx = self.conn.transaction().map_err(db)?;
        {
            let now = jiff::Timestamp::now().to_string();
            let mut enqueue = tx
                .prepare("INSERT INTO outbox (notifier, body, created, next_attempt) VALUES (?1, ?2, ?3, ?3)")
                .map_err(db)?;
            for (notifier, body) in notifications {
                enqueue.execute(params![notifier, body, now]).map_err(db)?;
            }
        }
        Store::audit_in(&tx, entry).and_then(|_| tx.commit()).map_err(db)
    }

    /// Forgets these, without an audit entry (silences long expired: Alertmanager keeps them
    /// five days).
    pub fn forget(&mut self, kind: QuietKind, ids: &[String]) -> Result<(), StateError> {
        for id in ids {
            self.conn
                .execute("DELETE FROM quiet WHERE kind = ?1 AND id = ?2", params![kind.as_str(), id])
                .map_err(|e| self.db(e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silences_and_windows_are_kept_apart_and_audited() {
        let mut store = Store::open_in_memory("quiet").unwrap();
        let entry =
            AuditEntry { time: 1, who: "admin".into(), action: "silence a created".into(), cluster: String::new() };
        let a = Kept { id: "a".into(), body: "{\"x\":1}".into() };
        store.keep(QuietKind::Silence, &a, &entry).unwrap();
        store.keep(QuietKind::Window, &Kept { id: "a".into(), body: "{}".into() }, &entry).unwrap();
        let changed = Kept { id: "a".into(), body: "{\"x\":2}".into() };
        store.keep(QuietKind::Silence, &changed, &entry).unwrap();
        assert_eq!(store.kept(QuietKind::Silence).unwrap(), [changed]);
        assert!(store.unkeep(QuietKind::Window, "a", &entry).unwrap());
        assert!(!store.unkeep(QuietKind::Window, "a", &entry).unwrap());
        assert!(store.kept(QuietKind::Window).unwrap().is_empty());
        assert_eq!(store.audit(10).unwrap().len(), 5);
        store.forget(QuietKind::Silence, &["a".into()]).unwrap();
        assert!(store.kept(QuietKind::Silence).unwrap().is_empty());
    }
}
