//! A change the pages make, kept: the cluster stored (its token sealed by the state room) or
//! removed, each with its audit entry, and the change logged for the audit.

use super::refusal::FormError;
use crate::board::Board;
use crate::config::PageSettings;
use crate::logs::Event;
use crate::state::{AuditEntry, StateError};
use crate::web::events::Audit;

/// The audit entry of a change made now.
fn entry(who: &str, action: &str, name: &str) -> AuditEntry {
    AuditEntry {
        time: jiff::Timestamp::now().as_second(),
        who: who.to_string(),
        action: action.to_string(),
        cluster: name.to_string(),
    }
}

/// Stores the cluster, its token sealed, with its audit entry (serve is told), and logs it.
pub(super) fn save(
    board: &Board,
    who: &str,
    name: &str,
    settings: &PageSettings,
    token: &str,
    action: &str,
) -> Result<(), FormError> {
    board.save_page_cluster(name, settings, token, &entry(who, action, name))?;
    Audit { user: who, action, cluster: name }.emit();
    Ok(())
}

/// Removes a cluster added on the pages with its audit entry (serve is told), and logs it;
/// false when no such cluster was added on the pages.
pub(super) fn remove(board: &Board, who: &str, name: &str) -> Result<bool, StateError> {
    let removed = board.remove_page_cluster(name, &entry(who, "removed", name))?;
    if removed {
        Audit { user: who, action: "removed", cluster: name }.emit();
    }
    Ok(removed)
}
