//! Alertmanager as the home of silences: its silences are read every few seconds, so that those
//! made on another replica, in its UI or with amtool mute this replica's notifiers too. A read
//! that fails keeps the last silences read (rather than notifying everything) and is said.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::events::Said;
use crate::board::Board;
use crate::logs::Emit;
use crate::notify::Client;
use crate::notify::alertmanager::silences::list;

/// How often Alertmanager's silences are read.
pub const EVERY: Duration = Duration::from_secs(5);

/// Reads them until `stop`, while an Alertmanager notifier is configured.
pub(super) async fn follow(board: Arc<Board>, mut stop: watch::Receiver<bool>) {
    let client = Client::new();
    let mut failing = false;
    loop {
        if let Some((set, at)) = board.quieting().silence_home() {
            let n = &set[at];
            let read = list(&client, n).await.map_err(|e| e.to_string());
            match &read {
                Err(e) if !failing => Said::SilencesUnread { error: e }.emit(),
                Ok(_) if failing => Said::SilencesRead { notifier: &n.name }.emit(),
                _ => {}
            }
            failing = read.is_err();
            // Compiled off the runtime's threads (a silence read before compiles nothing).
            let b = board.clone();
            let _ = tokio::task::spawn_blocking(move || b.quieting().set_home_silences(read)).await;
        }
        tokio::select! {
            _ = stop.changed() => return,
            _ = tokio::time::sleep(EVERY) => {}
        }
    }
}
