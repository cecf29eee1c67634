//! The clusters added on the pages: kept in the state database (their tokens sealed with the
//! secret key), each change audited, and `serve` told of it; a page that made a change can wait
//! until `serve` applied it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{Change, NotStored, TARGET, unreadable_page_clusters};
use crate::state::{AuditEntry, StateError, Store, StoredCluster};

/// The clusters of the pages, and the changes made to them.
pub struct PageClusters {
    store: Arc<Mutex<Store>>,
    /// Seals their tokens; None when `secret_key_file` could not be read or made (the pages
    /// then change nothing).
    secret_key: Option<Arc<crate::secret::SecretKey>>,
    /// Told when a cluster is added, changed or removed on the pages.
    clusters_changed: tokio::sync::Notify,
    /// How many changes the pages made, and up to which one serve has applied.
    changes_made: AtomicU64,
    changes_applied: tokio::sync::watch::Sender<u64>,
}

impl PageClusters {
    pub(super) fn new(store: Arc<Mutex<Store>>, secret_key: Option<Arc<crate::secret::SecretKey>>) -> PageClusters {
        PageClusters {
            store,
            secret_key,
            clusters_changed: tokio::sync::Notify::new(),
            changes_made: AtomicU64::new(0),
            changes_applied: tokio::sync::watch::Sender::new(0),
        }
    }

    /// The clusters added on the pages, none without the secret key. One whose settings cannot
    /// be read is left out, and said; one whose token cannot be unsealed (another key, a
    /// damaged row) says why in its `token`.
    pub fn stored(&self) -> Vec<StoredCluster> {
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
    pub fn stored_one(&self, name: &str) -> Option<StoredCluster> {
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
    pub fn save(
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
    pub fn remove(&self, name: &str, entry: &AuditEntry) -> Result<Option<Change>, StateError> {
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
    pub async fn changed(&self) -> Change {
        self.clusters_changed.notified().await;
        Change(self.changes_made.load(Ordering::SeqCst))
    }

    /// `serve` watches the clusters as of `change`.
    pub fn applied_up_to(&self, change: Change) {
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
}
