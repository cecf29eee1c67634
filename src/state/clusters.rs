//! The clusters added on the pages: stored with their token sealed by the secret key, found by
//! name, and unsealed one at a time (only the one asked for).

use super::db::args;
use super::{AuditEntry, PageCluster, StateError, Store};
use crate::config::PageSettings;
use crate::secret::SecretKey;

/// A cluster added on the pages, as stored: its settings, and its token unsealed (or why not).
pub struct StoredCluster {
    pub name: String,
    pub settings: PageSettings,
    pub token: Result<String, Unsealed>,
}

/// A stored token the secret key does not open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("its token cannot be unsealed with this secret_key_file (another key?)")]
pub struct Unsealed;

/// A stored cluster whose settings cannot be read (written by a later version, say).
#[derive(Debug, thiserror::Error)]
#[error("cluster {name}: its settings cannot be read: {source}")]
pub struct UnreadableSettings {
    pub name: String,
    pub source: serde_json::Error,
}

fn opened(row: PageCluster, key: &SecretKey) -> Result<StoredCluster, UnreadableSettings> {
    let settings =
        serde_json::from_str(&row.settings).map_err(|source| UnreadableSettings { name: row.name.clone(), source })?;
    let token = key.open(&row.sealed).ok().and_then(|t| String::from_utf8(t).ok()).ok_or(Unsealed);
    Ok(StoredCluster { name: row.name, settings, token })
}

impl Store {
    /// Every cluster added on the pages, by name, each unsealed; one whose settings cannot be
    /// read is its own error, so that the others are still given.
    pub fn stored_clusters(
        &mut self,
        key: &SecretKey,
    ) -> Result<Vec<Result<StoredCluster, UnreadableSettings>>, StateError> {
        Ok(self.page_clusters()?.into_iter().map(|row| opened(row, key)).collect())
    }

    /// The cluster of the pages named so, the only token unsealed.
    pub fn stored_cluster(&mut self, key: &SecretKey, name: &str) -> Result<Option<StoredCluster>, StateError> {
        let row = self
            .conn
            .query_one("SELECT name, settings, sealed FROM page_clusters WHERE name = ?1", args![name])
            .map_err(|e| self.db(e))?;
        let row = match row {
            Some(r) => Some(
                (|| Ok(PageCluster { name: r.text(0)?, settings: r.text(1)?, sealed: r.bytes(2)? }))()
                    .map_err(|e| self.db(e))?,
            ),
            None => None,
        };
        Ok(row.and_then(|row| opened(row, key).ok()))
    }

    /// Seals the token and adds or replaces the cluster, with its audit entry, in one transaction.
    pub fn store_cluster(
        &mut self,
        key: &SecretKey,
        name: &str,
        settings: &PageSettings,
        token: &str,
        entry: &AuditEntry,
    ) -> Result<(), StateError> {
        let row = PageCluster {
            name: name.to_string(),
            settings: serde_json::to_string(settings).expect("settings serialize"),
            sealed: key.seal(token.as_bytes()),
        };
        self.save_page_cluster(&row, entry)
    }
}
