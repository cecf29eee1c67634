//! What the pages change in the state directory: a cluster kept with its token sealed by the
//! secret key, or removed, each with its audit entry; the change logged and told to serve.
//! The sealing is here alone, so that it can move into the state room whole.

use super::refusal::FormError;
use crate::board::Board;
use crate::clock::log;
use crate::config::PageSettings;
use crate::state::{AuditEntry, PageCluster, StateError};

/// The audit entry of a change made now.
fn entry(who: &str, action: &str, name: &str) -> AuditEntry {
    AuditEntry {
        time: jiff::Timestamp::now().as_second(),
        who: who.to_string(),
        action: action.to_string(),
        cluster: name.to_string(),
    }
}

/// Seals the token, stores the cluster with its audit entry, logs the change and tells serve.
pub(super) fn save(
    board: &Board,
    who: &str,
    name: &str,
    settings: &PageSettings,
    token: &str,
    action: &str,
) -> Result<(), FormError> {
    let key = board.secret_key.as_ref().ok_or(FormError::NoKey)?;
    let row = PageCluster {
        name: name.to_string(),
        settings: serde_json::to_string(settings).expect("settings serialize"),
        sealed: key.seal(token.as_bytes()),
    };
    board
        .store
        .lock()
        .expect("store lock")
        .save_page_cluster(&row, &entry(who, action, name))
        .map_err(FormError::NotStored)?;
    log(&format!("audit: {who} {action} cluster {name}"));
    board.clusters_changed.notify_one();
    Ok(())
}

/// Removes a cluster added on the pages with its audit entry, logs it and tells serve; false
/// when no such cluster was added on the pages.
pub(super) fn remove(board: &Board, who: &str, name: &str) -> Result<bool, StateError> {
    let removed = board.store.lock().expect("store lock").remove_page_cluster(name, &entry(who, "removed", name))?;
    if removed {
        log(&format!("audit: {who} removed cluster {name}"));
        board.clusters_changed.notify_one();
    }
    Ok(removed)
}
