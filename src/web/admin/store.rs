//! A change the pages make, kept: the cluster stored (its token sealed by the state room) or
//! removed, each with its audit entry, and the change logged for the audit.

use super::refusal::FormError;
use crate::board::Board;
use crate::config::PageSettings;
use crate::logs::Emit;
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

/// How long the answer to a change waits for `serve` to watch it (it takes milliseconds), so
/// that the page it leads to shows the change.
const APPLIED_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

/// Stores the cluster, its token sealed, with its audit entry, logs it, and returns once serve
/// watches it.
pub(super) async fn save(
    board: &Board,
    who: &str,
    name: &str,
    settings: &PageSettings,
    token: &str,
    action: &str,
) -> Result<(), FormError> {
    let change = board.page_clusters().save(name, settings, token, &entry(who, action, name))?;
    Audit { user: who, action, cluster: name }.emit();
    board.page_clusters().applied(change, APPLIED_WITHIN).await;
    Ok(())
}

/// Removes a cluster added on the pages with its audit entry, logs it, and returns once serve
/// no longer watches it; false when no such cluster was added on the pages.
pub(super) async fn remove(board: &Board, who: &str, name: &str) -> Result<bool, StateError> {
    let Some(change) = board.page_clusters().remove(name, &entry(who, "removed", name))? else {
        return Ok(false);
    };
    Audit { user: who, action: "removed", cluster: name }.emit();
    board.page_clusters().applied(change, APPLIED_WITHIN).await;
    Ok(true)
}
