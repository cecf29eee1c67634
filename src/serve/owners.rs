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
use crate::state::postgres::Shared;
use crate::state::{Beat, Store};

/// What the supervisor shares with the renewals: the clusters this replica knows.
pub type Known = Arc<Mutex<BTreeSet<String>>>;

/// Renews until `stop`, then lets go of every lease (the others take the clusters at once).
pub async fn follow(
    shared: Shared,
    board: Arc<Board>,
    known: Known,
    pages: String,
    owned: watch::Sender<Option<BTreeSet<String>>>,
    mut stop: watch::Receiver<bool>,
) {
    let every = shared.replica.lease / 3;
    let mut store: Option<Store> = None;
    let mut away = false;
    loop {
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
                let beat = store.beat(&mine, &pages).map_err(|e| e.to_string());
                (Some(store), beat)
            })
            .await
            .expect("a renewal does not panic")
        };
        store = kept;
        match outcome {
            Ok(Beat { owned: now, replicas }) => {
                if away {
                    Said::SharedStateBack { place: &shared.place }.emit();
                    away = false;
                }
                board.set_shared_away(None);
                board.set_replicas(Replicas { me: shared.replica.name.clone(), alive: replicas });
                owned.send_if_modified(|was| {
                    let changed = was.as_ref() != Some(&now);
                    if changed {
                        Said::Owns { owned: now.len(), known: mine.len() }.emit();
                        *was = Some(now);
                    }
                    changed
                });
            }
            Err(error) => {
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

fn refused(e: &crate::state::StateError) -> crate::state::postgres::StartError {
    crate::state::postgres::StartError::Refused(e.to_string())
}
