//! Who reads which cluster, when replicas share PostgreSQL: a row per cluster naming its owner
//! and when its lease ends, on the database's clock (`now()`), so that the replicas' own clocks
//! never decide. Each replica renews its leases and its own row every third of a lease; it takes
//! free clusters (never owned, or whose lease ran out) up to an even share of its clusters among
//! the replicas alive, and lets the surplus run out when more replicas come. A replica that stops
//! renewing (killed, cut off from the database) loses its clusters one lease later, and the
//! others take them with the state it last saved.
//!
//! Rows with an expiry rather than advisory locks: a session's advisory lock lives as long as
//! its connection, so a replica cut off from the database would keep its clusters until
//! PostgreSQL notices the dead connection (minutes of TCP keepalive), and a pooled connection
//! makes a session lock follow the wrong holder. A row's expiry is read by every replica, shown
//! on the pages, and ends on time.

use std::collections::BTreeSet;
use std::time::Duration;

use super::db::args;
use super::{StateError, Store};

/// This replica, as the others know it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replica {
    pub name: String,
    /// How long its clusters stay its own without a renewal.
    pub lease: Duration,
}

/// Another replica alive, as its last renewal said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplicaSeen {
    pub name: String,
    /// Where its pages are.
    pub pages: String,
    /// The clusters it knows (its file's and the pages').
    pub clusters: BTreeSet<String>,
    /// The clusters it owns now.
    pub owns: BTreeSet<String>,
}

/// What one renewal found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Beat {
    /// The clusters this replica owns now, and may read.
    pub owned: BTreeSet<String>,
    /// Every replica alive, this one included, by name.
    pub replicas: Vec<ReplicaSeen>,
}

impl Store {
    /// Renews this replica and its leases, takes free clusters up to its share, and says what
    /// it owns. `mine`: the clusters it knows; `pages`: where its pages are.
    ///
    /// `take_others`: whether clusters another replica owned and let run out may be taken. A
    /// replica that has just reached the database (at start, or after it was away) waits one
    /// lease before it does, so that the others, who were away too, renew theirs first.
    pub fn beat(&mut self, mine: &BTreeSet<String>, pages: &str, take_others: bool) -> Result<Beat, StateError> {
        let Some(me) = self.replica.clone() else {
            return Ok(Beat { owned: mine.clone(), replicas: Vec::new() });
        };
        let lease = me.lease.as_millis() as i64;
        let place = self.place.clone();
        let known = serde_json::to_string(mine).expect("names serialize");
        let beat = self.conn.transaction(|tx| {
            // One renewal at a time across replicas: two taking free clusters at once in their
            // own orders would deadlock on each other's rows (and each renewal is a few
            // statements, whatever the number of clusters).
            tx.query("SELECT pg_advisory_xact_lock(7410002)", &[])?;
            tx.execute(
                "INSERT INTO replicas (replica, expires, pages, clusters)
                 VALUES (?1, now() + ?2::bigint * interval '1 millisecond', ?3, ?4)
                 ON CONFLICT (replica) DO UPDATE SET expires = excluded.expires, pages = excluded.pages,
                 clusters = excluded.clusters",
                args![me.name.as_str(), lease, pages, known.as_str()],
            )?;
            tx.execute("DELETE FROM replicas WHERE expires < now() - interval '1 day'", &[])?;
            let alive = tx
                .query_one("SELECT count(*) FROM replicas WHERE expires > now()", &[])?
                .map(|r| r.int(0))
                .transpose()?
                .unwrap_or(1)
                .max(1) as usize;
            let share = mine.len().div_ceil(alive);
            // What it owns still, of what it knows; the rest of its rows are not renewed. A row
            // whose lease ran out and that no other replica took is still its own (the database
            // was away, say): taken back as it was, not shuffled.
            let rows =
                tx.query("SELECT cluster FROM owners WHERE replica = ?1 ORDER BY cluster", args![me.name.as_str()])?;
            let mut owned: Vec<String> =
                rows.iter().map(|r| r.text(0)).collect::<Result<Vec<_>, _>>()?.into_iter().collect();
            owned.retain(|c| mine.contains(c));
            // More than its share (a replica came): the surplus is not renewed, and runs out a
            // lease later, once this replica has stopped reading it.
            owned.truncate(share);
            let kept = serde_json::to_string(&owned).expect("names serialize");
            tx.execute(
                "UPDATE owners SET expires = now() + ?2::bigint * interval '1 millisecond'
                 WHERE replica = ?1 AND cluster IN (SELECT value FROM json_array_elements_text(?3::json))",
                args![me.name.as_str(), lease, kept.as_str()],
            )?;
            if owned.len() < share {
                let rows = tx.query(
                    "SELECT cluster FROM owners WHERE replica <> ?1 AND (expires > now() OR ?2 = 0)",
                    args![me.name.as_str(), i64::from(take_others)],
                )?;
                let taken: BTreeSet<String> = rows.iter().map(|r| r.text(0)).collect::<Result<_, _>>()?;
                // In an order of its own, so that replicas starting together seldom reach for the
                // same cluster first.
                let mut free: Vec<&String> =
                    mine.iter().filter(|c| !taken.contains(*c) && !owned.contains(*c)).collect();
                free.sort_by_key(|c| spread(&me.name, c));
                // Taken in one statement a batch (a row another replica took meanwhile is not:
                // its lease runs), until the share is reached or nothing is free.
                let mut free = free.into_iter();
                while owned.len() < share {
                    let batch: Vec<&String> = free.by_ref().take(share - owned.len()).collect();
                    if batch.is_empty() {
                        break;
                    }
                    let names = serde_json::to_string(&batch).expect("names serialize");
                    let took = tx.query(
                        "INSERT INTO owners (cluster, replica, expires)
                         SELECT value, ?2, now() + ?3::bigint * interval '1 millisecond'
                         FROM json_array_elements_text(?1::json)
                         ON CONFLICT (cluster) DO UPDATE SET replica = excluded.replica, expires = excluded.expires
                         WHERE owners.expires <= now() OR owners.replica = excluded.replica
                         RETURNING cluster",
                        args![names.as_str(), me.name.as_str(), lease],
                    )?;
                    for row in &took {
                        owned.push(row.text(0)?);
                    }
                }
            }
            let rows = tx.query(
                "SELECT r.replica, r.pages, r.clusters,
                        coalesce((SELECT json_agg(o.cluster ORDER BY o.cluster)::text FROM owners o
                                  WHERE o.replica = r.replica AND o.expires > now()), '[]')
                 FROM replicas r WHERE r.expires > now() ORDER BY r.replica",
                &[],
            )?;
            let replicas = rows
                .iter()
                .map(|r| {
                    Ok(ReplicaSeen {
                        name: r.text(0)?,
                        pages: r.text(1)?,
                        clusters: serde_json::from_str(&r.text(2)?).unwrap_or_default(),
                        owns: serde_json::from_str(&r.text(3)?).unwrap_or_default(),
                    })
                })
                .collect::<Result<Vec<_>, super::db::DbError>>()?;
            Ok::<_, super::db::DbError>(Beat { owned: owned.into_iter().collect(), replicas })
        });
        beat.map_err(|source| StateError::Db { place, source: Box::new(source) })
    }

    /// Lets go of every lease of this replica at once (it stops): the others take its clusters
    /// at their next renewal rather than a lease later.
    pub fn let_go(&mut self) -> Result<(), StateError> {
        let Some(me) = self.replica.clone() else { return Ok(()) };
        self.conn
            .execute(
                "UPDATE owners SET expires = now() WHERE replica = ?1 AND expires > now()",
                args![me.name.as_str()],
            )
            .and_then(|_| {
                self.conn.execute("UPDATE replicas SET expires = now() WHERE replica = ?1", args![me.name.as_str()])
            })
            .map(drop)
            .map_err(|e| self.db(e))
    }
}

/// A replica's own order of the clusters (FNV-1a of both names).
fn spread(replica: &str, cluster: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in replica.bytes().chain([0]).chain(cluster.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}
