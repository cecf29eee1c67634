//! Who reads which cluster, when replicas share PostgreSQL: a row per cluster naming its owner
//! and when its lease ends, on the database's clock (`now()`), so that the replicas' own clocks
//! never decide. Each replica renews its leases and its own row every third of a lease; it takes
//! free clusters (never owned, or whose lease ran out) up to an even share among the replicas
//! alive, and every cluster no other replica knows, and lets the surplus run out when more
//! replicas come. A replica that stops renewing (killed, cut off from the database) loses its
//! clusters one lease later, and the others take them with the state it last saved.
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
            let rows = tx.query(
                "SELECT clusters FROM replicas WHERE expires > now() AND replica <> ?1",
                args![me.name.as_str()],
            )?;
            let others: Vec<BTreeSet<String>> = rows
                .iter()
                .map(|r| r.text(0).map(|t| serde_json::from_str(&t).unwrap_or_default()))
                .collect::<Result<_, _>>()?;
            let split = Split::of(mine, &others);
            // What it owns still, of what it knows; the rest of its rows are not renewed. A row
            // whose lease ran out and that no other replica took is still its own (the database
            // was away, say): taken back as it was, not shuffled.
            let rows =
                tx.query("SELECT cluster FROM owners WHERE replica = ?1 ORDER BY cluster", args![me.name.as_str()])?;
            let held: Vec<String> = rows.iter().map(|r| r.text(0)).collect::<Result<Vec<_>, _>>()?;
            // More than its share of the clusters others know too (a replica came): the surplus
            // is not renewed, and runs out a lease later, once this replica has stopped reading
            // it. What no other replica knows is always kept: no one else could read it.
            let mut owned = split.keep(&held);
            let kept = serde_json::to_string(&owned).expect("names serialize");
            tx.execute(
                "UPDATE owners SET expires = now() + ?2::bigint * interval '1 millisecond'
                 WHERE replica = ?1 AND cluster IN (SELECT value FROM json_array_elements_text(?3::json))",
                args![me.name.as_str(), lease, kept.as_str()],
            )?;
            if split.short(&owned) {
                let rows = tx.query(
                    "SELECT cluster FROM owners WHERE replica <> ?1 AND (expires > now() OR ?2 = 0)",
                    args![me.name.as_str(), i64::from(take_others)],
                )?;
                let taken: BTreeSet<String> = rows.iter().map(|r| r.text(0)).collect::<Result<_, _>>()?;
                let wanted = split.wanted(&me.name, &held, &owned, &taken);
                // Its own alone in one statement, then the common ones a batch a statement (a
                // row another replica took meanwhile is not: its lease runs), until the share is
                // reached or nothing is free.
                let mut limit = wanted.limit;
                let mut common = wanted.common.into_iter();
                let mut batch = wanted.alone;
                loop {
                    batch.extend(common.by_ref().take(limit));
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
                        let cluster = row.text(0)?;
                        if !split.is_alone(&cluster) {
                            limit = limit.saturating_sub(1);
                        }
                        owned.push(cluster);
                    }
                    batch = Vec::new();
                    if limit == 0 {
                        break;
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

/// How a replica divides what it knows, given what the other replicas alive know.
///
/// The clusters no other replica alive knows (in its file alone) are its own whatever the share:
/// no one else may read them. Of the others, a cluster that k replicas know (this one included)
/// counts for 1/k of a replica: for each k, it holds up to `ceil(n / k)` of its `n` clusters
/// that k replicas know. With the same files everywhere that is `ceil(clusters / replicas)`, the
/// plain even share; with different files, every set of clusters has, among the replicas that
/// know it, at least as many places as clusters. Clusters known to fewer replicas are kept and
/// taken first, since fewer could read them.
#[derive(Debug)]
struct Split<'a> {
    /// Every cluster it knows, with how many replicas alive know it (1: this one alone).
    known: std::collections::BTreeMap<&'a str, usize>,
    /// How many of the clusters others know too it holds at most.
    common: usize,
}

/// The free clusters a replica would take: its own alone (all of them), and the common ones in
/// the order it tries them, at most `limit` of those.
#[derive(Debug)]
struct Wanted<'a> {
    alone: Vec<&'a str>,
    common: Vec<&'a str>,
    limit: usize,
}

impl<'a> Split<'a> {
    fn of(mine: &'a BTreeSet<String>, others: &[BTreeSet<String>]) -> Split<'a> {
        let known: std::collections::BTreeMap<&str, usize> =
            mine.iter().map(|c| (c.as_str(), 1 + others.iter().filter(|o| o.contains(c)).count())).collect();
        let mut by_k = std::collections::BTreeMap::<usize, usize>::new();
        for k in known.values().filter(|k| **k > 1) {
            *by_k.entry(*k).or_default() += 1;
        }
        let common = by_k.iter().map(|(k, n)| n.div_ceil(*k)).sum();
        Split { known, common }
    }

    fn is_alone(&self, cluster: &str) -> bool {
        self.known.get(cluster) == Some(&1)
    }

    /// Of the clusters it holds rows of, those it keeps: every one of its own alone, and the
    /// common ones up to its share, those fewer replicas know first (then in the order given).
    fn keep(&self, held: &[String]) -> Vec<String> {
        let mut common: Vec<(usize, &String)> =
            held.iter().filter_map(|c| self.known.get(c.as_str()).map(|k| (*k, c))).filter(|(k, _)| *k > 1).collect();
        common.sort_by_key(|(k, _)| *k);
        common.truncate(self.common);
        let kept: BTreeSet<&String> = common.into_iter().map(|(_, c)| c).collect();
        held.iter().filter(|c| self.is_alone(c) || kept.contains(c)).cloned().collect()
    }

    /// Whether it holds less than it should (a cluster of its own alone, or its share).
    fn short(&self, owned: &[String]) -> bool {
        let owned: BTreeSet<&str> = owned.iter().map(String::as_str).collect();
        let holds = owned.iter().filter(|c| !self.is_alone(c)).count();
        self.known.iter().any(|(c, k)| *k == 1 && !owned.contains(c)) || holds < self.common
    }

    /// What it would take: the clusters no one holds (not `taken` by another replica, no row of
    /// its own: what it just let go it does not take back), those fewer replicas know first, the
    /// rest in an order of its own, so that replicas starting together seldom reach for the same
    /// cluster first.
    fn wanted(&self, me: &str, held: &[String], owned: &[String], taken: &BTreeSet<String>) -> Wanted<'a> {
        let held: BTreeSet<&str> = held.iter().map(String::as_str).collect();
        let free = |c: &&str| !taken.contains(*c) && !held.contains(*c);
        let alone = self.known.iter().filter(|(_, k)| **k == 1).map(|(c, _)| *c).filter(free).collect();
        let mut common: Vec<(usize, &str)> =
            self.known.iter().filter(|(c, k)| **k > 1 && free(c)).map(|(c, k)| (*k, *c)).collect();
        common.sort_by_key(|(k, c)| (*k, spread(me, c)));
        let holds = owned.iter().filter(|c| !self.is_alone(c)).count();
        Wanted { alone, common: common.into_iter().map(|(_, c)| c).collect(), limit: self.common.saturating_sub(holds) }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    fn strings(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn with_the_same_files_each_replica_holds_an_even_share_in_its_own_order() {
        let mine = set(&["a", "b", "c", "d", "e"]);
        let split = Split::of(&mine, std::slice::from_ref(&mine));
        assert_eq!(split.common, 3);
        assert_eq!(split.keep(&strings(&["a", "b", "c", "d"])), ["a", "b", "c"]);
        let wanted = split.wanted("r", &strings(&["a"]), &strings(&["a"]), &set(&["b"]));
        assert!(wanted.alone.is_empty());
        assert_eq!(wanted.limit, 2);
        let mut order = strings(&["c", "d", "e"]);
        order.sort_by_key(|c| spread("r", c));
        assert_eq!(names(&wanted.common), order);
        assert!(!split.short(&strings(&["a", "b", "c"])));
        // Three replicas: a third each, rounded up.
        assert_eq!(Split::of(&mine, &[mine.clone(), mine.clone()]).common, 2);
    }

    #[test]
    fn a_cluster_no_other_replica_knows_is_always_taken_and_kept() {
        // a knows c04 alone; the four others are in both files.
        let a = set(&["c00", "c01", "c02", "c03", "c04"]);
        let b = set(&["c00", "c01", "c02", "c03"]);
        let of_a = Split::of(&a, std::slice::from_ref(&b));
        assert!(of_a.is_alone("c04") && !of_a.is_alone("c00"));
        assert_eq!(of_a.common, 2);
        // Its own alone, whatever the share.
        let wanted = of_a.wanted("replica-a", &[], &[], &BTreeSet::new());
        assert_eq!((names(&wanted.alone), wanted.common.len(), wanted.limit), (strings(&["c04"]), 4, 2));
        // Holding three common ones, it lets one go, takes its own, and not what it let go.
        let held = strings(&["c00", "c01", "c02"]);
        let kept = of_a.keep(&held);
        assert_eq!(kept, ["c00", "c01"]);
        assert!(of_a.short(&kept));
        let wanted = of_a.wanted("replica-a", &held, &kept, &set(&["c03"]));
        assert_eq!((names(&wanted.alone), wanted.common.len(), wanted.limit), (strings(&["c04"]), 0, 0));
        // Never lets go of it, even past the share.
        assert_eq!(of_a.keep(&strings(&["c00", "c01", "c02", "c03", "c04"])), ["c00", "c01", "c04"]);
        // b holds the other two common ones: every cluster is read.
        assert_eq!(Split::of(&b, std::slice::from_ref(&a)).common, 2);
    }

    #[test]
    fn with_three_replicas_and_two_files_every_cluster_has_a_place() {
        // a and b know c1 to c10, c (a canary) only c1: c1 is known to three, the rest to two.
        let ab = set(&["c01", "c02", "c03", "c04", "c05", "c06", "c07", "c08", "c09", "c10"]);
        let canary = set(&["c01"]);
        let of_a = Split::of(&ab, &[ab.clone(), canary.clone()]);
        assert_eq!(of_a.common, 5 + 1, "nine known to two (5), one known to three (1)");
        assert_eq!(Split::of(&canary, &[ab.clone(), ab.clone()]).common, 1);
        // Those fewer know first: c01, which the canary can read, is let go before the others.
        let all = strings(&["c01", "c02", "c03", "c04", "c05", "c06", "c07", "c08", "c09", "c10"]);
        assert_eq!(of_a.keep(&all), ["c02", "c03", "c04", "c05", "c06", "c07"]);
        let wanted = of_a.wanted("a", &[], &[], &BTreeSet::new());
        assert_eq!(wanted.common.last().copied(), Some("c01"));
        // Nested files: a and b know c1 to c6, c knows c1 to c4. c5 and c6 are kept first.
        let six = set(&["c1", "c2", "c3", "c4", "c5", "c6"]);
        let four = set(&["c1", "c2", "c3", "c4"]);
        let of_a = Split::of(&six, &[six.clone(), four.clone()]);
        assert_eq!(of_a.common, 1 + 2);
        assert_eq!(of_a.keep(&strings(&["c1", "c3", "c5"])), ["c1", "c3", "c5"]);
        assert_eq!(of_a.keep(&strings(&["c1", "c2", "c3", "c5"])).last().map(String::as_str), Some("c5"));
        assert_eq!(Split::of(&four, &[six.clone(), six.clone()]).common, 2);
    }

    #[test]
    fn clusters_in_neither_file_are_dropped() {
        let mine = set(&["a"]);
        let split = Split::of(&mine, &[]);
        assert_eq!(split.keep(&strings(&["a", "gone"])), ["a"]);
        let wanted = split.wanted("r", &[], &[], &BTreeSet::new());
        assert_eq!((names(&wanted.alone), wanted.limit), (strings(&["a"]), 0));
    }
}
