//! Silences and maintenance windows made through the API or the pages: kept as the JSON the API
//! lists (the silence room reads it back), each change with its audit entry in one transaction.

use super::db::args;
use super::{AuditEntry, ENQUEUE, StateError, Store, millis};

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
    pub fn kept(&mut self, kind: QuietKind) -> Result<Vec<Kept>, StateError> {
        let rows = self
            .conn
            .query("SELECT id, body FROM quiet WHERE kind = ?1 ORDER BY id", args![kind.as_str()])
            .map_err(|e| self.db(e))?;
        rows.iter()
            .map(|r| Ok(Kept { id: r.text(0)?, body: r.text(1)? }))
            .collect::<Result<_, super::db::DbError>>()
            .map_err(|e| self.db(e))
    }

    /// Adds or replaces one, with its audit entry.
    pub fn keep(&mut self, kind: QuietKind, kept: &Kept, entry: &AuditEntry) -> Result<(), StateError> {
        let place = self.place.clone();
        self.conn
            .transaction(|tx| {
                tx.execute(
                    "INSERT INTO quiet (kind, id, body) VALUES (?1, ?2, ?3)
                     ON CONFLICT (kind, id) DO UPDATE SET body = excluded.body",
                    args![kind.as_str(), &kept.id, &kept.body],
                )?;
                Store::audit_in(tx, entry)
            })
            .map_err(|source| StateError::Db { place, source: Box::new(source) })
    }

    /// Removes one, with its audit entry; false when there was none.
    pub fn unkeep(&mut self, kind: QuietKind, id: &str, entry: &AuditEntry) -> Result<bool, StateError> {
        let place = self.place.clone();
        self.conn
            .transaction(|tx| {
                let removed = tx.execute("DELETE FROM quiet WHERE kind = ?1 AND id = ?2", args![kind.as_str(), id])?;
                Store::audit_in(tx, entry)?;
                Ok(removed > 0)
            })
            .map_err(|source| StateError::Db { place, source: Box::new(source) })
    }

    /// Queues notifications made outside a cycle (an acknowledgement's), with the audit entry
    /// of what made them, in one transaction.
    pub fn queue_with(&mut self, notifications: &[(String, String)], entry: &AuditEntry) -> Result<(), StateError> {
        let place = self.place.clone();
        let now = jiff::Timestamp::now();
        self.conn
            .transaction(|tx| {
                for (notifier, body) in notifications {
                    tx.execute(ENQUEUE, args![notifier, body, now.to_string(), millis(now)])?;
                }
                Store::audit_in(tx, entry)
            })
            .map_err(|source| StateError::Db { place, source: Box::new(source) })
    }

    /// Forgets these, without an audit entry (silences long expired: Alertmanager keeps them
    /// five days).
    pub fn forget(&mut self, kind: QuietKind, ids: &[String]) -> Result<(), StateError> {
        for id in ids {
            self.conn
                .execute("DELETE FROM quiet WHERE kind = ?1 AND id = ?2", args![kind.as_str(), id.as_str()])
                .map_err(|e| self.db(e))?;
        }
        Ok(())
    }
}

/// An acknowledgement shared with the other replicas, as kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedAck {
    pub fingerprint: String,
    /// The start of the alert it was made for (RFC 3339).
    pub active_at: String,
    pub cluster: String,
    /// The acknowledgement (JSON).
    pub ack: String,
}

impl Store {
    /// Keeps an acknowledgement for the replica that owns its cluster; `made`: Unix seconds.
    pub fn share_acknowledgement(&mut self, a: &SharedAck, made: i64) -> Result<(), StateError> {
        self.conn
            .execute(
                "INSERT INTO acknowledgements (fingerprint, active_at, cluster, ack, made) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (fingerprint, active_at) DO UPDATE SET ack = excluded.ack, made = excluded.made",
                args![&a.fingerprint, &a.active_at, &a.cluster, &a.ack, made],
            )
            .map(drop)
            .map_err(|e| self.db(e))
    }

    /// The acknowledgements made since `since` (Unix seconds); older ones are forgotten.
    pub fn shared_acknowledgements(&mut self, since: i64) -> Result<Vec<SharedAck>, StateError> {
        self.conn.execute("DELETE FROM acknowledgements WHERE made < ?1", args![since]).map_err(|e| self.db(e))?;
        let rows = self
            .conn
            .query("SELECT fingerprint, active_at, cluster, ack FROM acknowledgements ORDER BY made", &[])
            .map_err(|e| self.db(e))?;
        rows.iter()
            .map(|r| {
                Ok(SharedAck { fingerprint: r.text(0)?, active_at: r.text(1)?, cluster: r.text(2)?, ack: r.text(3)? })
            })
            .collect::<Result<_, super::db::DbError>>()
            .map_err(|e| self.db(e))
    }

    /// Every cluster's active alerts as last saved, by cluster (the replicas' together).
    pub fn saved_alerts(&mut self) -> Result<Vec<(String, crate::rules::Alert)>, StateError> {
        let rows = self.conn.query("SELECT cluster, key, alert FROM alerts", &[]).map_err(|e| self.db(e))?;
        rows.iter()
            .map(|r| {
                let (cluster, key, json) = (
                    r.text(0).map_err(|e| self.db(e))?,
                    r.text(1).map_err(|e| self.db(e))?,
                    r.text(2).map_err(|e| self.db(e))?,
                );
                let alert = serde_json::from_str(&json).map_err(|e| self.corrupt(super::Row::Alert { key }, e))?;
                Ok((cluster, alert))
            })
            .collect()
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
