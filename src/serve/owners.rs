//! Replicas sharing PostgreSQL: this replica's share of the clusters, renewed every third of a
//! lease (`state::owners` says how the share is taken). What it owns is sent to the supervisor,
//! which starts and stops the clusters' tasks; while the database cannot be reached, it keeps
//! what it owns, and the pages say so.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use super::events::Said;
use crate::board::{Board, Replicas};
use crate::logs::Emit;
use crate::state::postgres::Database;
use crate::state::{Beat, Store};

/// What the supervisor shares with the renewals: the clusters this replica knows.
pub type Known = Arc<Mutex<BTreeSet<String>>>;

/// What a renewal tells the supervisor: the clusters this replica owns, and a digest of the
/// clusters added on the pages (of any replica), whose change the supervisor applies too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owned {
    pub clusters: BTreeSet<String>,
    pub page_clusters: u64,
}

/// Renews until `stop`, then lets go of every lease (the others take the clusters at once).
pub async fn follow(
    shared: Database,
    board: Arc<Board>,
    known: Known,
    pages: String,
    owned: watch::Sender<Option<Owned>>,
    mut stop: watch::Receiver<bool>,
) {
    let every = shared.replica.lease / 3;
    let mut store: Option<Store> = None;
    let mut away = false;
    // Since when the renewals succeed without a break.
    let mut reached: Option<std::time::Instant> = None;
    // The silences and windows kept, as last read (they were read at start).
    let mut kept_quiet: u64 = 0;
    loop {
        let take_others = reached.is_some_and(|t| t.elapsed() >= shared.replica.lease);
        let mine = known.lock().expect("known lock").clone();
        let (kept, outcome) = {
            let shared = shared.clone();
            let pages = pages.clone();
            let mine = mine.clone();
            tokio::task::spawn_blocking(move || {
                let mut store = match store {
                    Some(s) => s,
                    // The first renewal reaches the server (it may have been away at start).
                    None => match shared.check().and_then(|_| shared.store().map_err(|e| refused(&e))) {
                        Ok(s) => s,
                        Err(e) => return (None, Err(e.to_string())),
                    },
                };
                let beat = store.beat(&mine, &pages, take_others).map_err(|e| e.to_string());
                let digest = store.page_clusters().map(|rows| digest(&rows)).unwrap_or_default();
                let quiet = kept_digest(&mut store);
                (Some(store), beat.map(|b| (b, digest, quiet)))
            })
            .await
            .expect("a renewal does not panic")
        };
        store = kept;
        match outcome {
            Ok((Beat { owned: now, replicas }, page_clusters, quiet)) => {
                reached.get_or_insert_with(std::time::Instant::now);
                if away {
                    Said::SharedStateBack { place: &shared.place }.emit();
                    away = false;
                }
                board.set_shared_away(None);
                board.set_replicas(Replicas { me: shared.replica.name.clone(), alive: replicas, renewed_every: every });
                // Silences and maintenance windows made on any replica's pages act here too (read
                // again when they changed), and acknowledgements, for this replica's cycles to hold.
                let reload = board.clone();
                let quiet_changed = quiet != kept_quiet;
                kept_quiet = quiet;
                let _ = tokio::task::spawn_blocking(move || {
                    if quiet_changed {
                        reload.quieting().load_kept_quiet();
                    }
                    reload.quieting().take_shared_acknowledgements();
                })
                .await;
                let now = Owned { clusters: now, page_clusters };
                owned.send_if_modified(|was| {
                    let changed = was.as_ref() != Some(&now);
                    if changed {
                        if was.as_ref().is_none_or(|w| w.clusters != now.clusters) {
                            Said::Owns { owned: now.clusters.len(), known: mine.len() }.emit();
                        }
                        *was = Some(now);
                    }
                    changed
                });
            }
            Err(error) => {
                reached = None;
                if !away {
                    Said::SharedStateAway { error: &error }.emit();
                    away = true;
                }
                board.set_shared_away(Some(error));
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = stop.changed() => break,
        }
    }
    if let Some(mut store) = store {
        let _ = tokio::task::spawn_blocking(move || store.let_go()).await;
    }
}

/// A digest of the clusters added on the pages as stored: names, settings and sealed tokens.
fn digest(rows: &[crate::state::PageCluster]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for r in rows {
        (&r.name, &r.settings, &r.sealed).hash(&mut h);
    }
    h.finish()
}

/// A digest of the silences and windows kept; 0 when they cannot be read.
fn kept_digest(store: &mut Store) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for kind in [crate::state::QuietKind::Silence, crate::state::QuietKind::Window] {
        match store.kept(kind) {
            Ok(rows) => rows.iter().for_each(|k| (&k.id, &k.body).hash(&mut h)),
            Err(_) => return 0,
        }
    }
    h.finish()
}

fn refused(e: &crate::state::StateError) -> crate::state::postgres::StartError {
    crate::state::postgres::StartError::Refused(e.to_string())
}
