//! The state's tests, one suite on both engines: SQLite in a directory, and a real PostgreSQL
//! server (Debian's, started as an unprivileged cluster in a temporary directory). Each test
//! runs on both; what only replicas sharing PostgreSQL do (leases) runs on PostgreSQL.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;
use std::time::Duration;

use dumbmonit::config::{Seconds, SslMode, StateConfig};
use dumbmonit::rules::engine::PodMemory;
use dumbmonit::rules::{Alert, RuleState, Severity};
use dumbmonit::state::{AuditEntry, HistoryPoint, Kept, QuietKind, StateError, Store};
use jiff::Timestamp;

use common::postgres::Postgres;

/// The server of this test binary, started once.
fn server() -> &'static Postgres {
    static SERVER: OnceLock<Postgres> = OnceLock::new();
    SERVER.get_or_init(Postgres::start)
}

/// The settings of a replica of `database`.
fn settings(pg: &Postgres, dir: &std::path::Path, database: &str, replica: &str, lease: f64) -> StateConfig {
    let password = dir.join(format!("password-{replica}"));
    std::fs::write(&password, common::postgres::PASSWORD).unwrap();
    StateConfig {
        url: pg.url(database),
        password_file: Some(password),
        sslmode: SslMode::Disable,
        ca_file: None,
        pool: Some(4),
        connect_timeout: None,
        statement_timeout: None,
        lease: Some(Seconds(lease)),
        replica: Some(replica.into()),
    }
}

/// One engine for one test: each test has its own database.
enum Engine {
    Sqlite(tempfile::TempDir),
    Postgres { config: StateConfig, _dir: tempfile::TempDir },
}

impl Engine {
    fn both(test: &str) -> [Engine; 2] {
        let dir = tempfile::tempdir().unwrap();
        let pg = server();
        pg.database(test);
        let config = settings(pg, dir.path(), test, "replica-a", 30.0);
        [Engine::Sqlite(tempfile::tempdir().unwrap()), Engine::Postgres { config, _dir: dir }]
    }

    fn name(&self) -> &'static str {
        match self {
            Engine::Sqlite(_) => "SQLite",
            Engine::Postgres { .. } => "PostgreSQL",
        }
    }

    /// A store on it, as a replica (or a restarted process) opens one.
    fn open(&self) -> Store {
        match self {
            Engine::Sqlite(dir) => Store::open(dir.path()).unwrap(),
            Engine::Postgres { config, .. } => {
                let mut store = dumbmonit::state::postgres::connect(config).unwrap().store().unwrap();
                // The one replica owns the test's clusters.
                let mine = BTreeSet::from(["lab".to_string(), "other".to_string()]);
                assert_eq!(store.beat(&mine, "http://a", true).unwrap().owned, mine);
                store
            }
        }
    }
}

fn t(s: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + s).unwrap()
}

fn node_not_ready() -> Alert {
    Alert {
        alertname: "KubernetesNodeNotReady".into(),
        severity: Severity::Warning,
        labels: BTreeMap::from([("node".to_string(), "n1".to_string())]),
        summary: "Node n1 is not ready".into(),
        description: "l'nœud \u{1F4A5} \"quoted\"".into(),
        active_at: t(0),
        fired_at: Some(t(60)),
        escalated_at: None,
        untold: false,
        acknowledged: None,
        told_labels: None,
        said: None,
        said_description: None,
    }
}

fn crashed(restarts: i64) -> PodMemory {
    PodMemory { restarts, increases: vec![(t(30), restarts)], crashloop_seen: Some(t(60)), crashlooping: false }
}

fn entry(action: &str) -> AuditEntry {
    AuditEntry { time: 1, who: "admin".into(), action: action.into(), cluster: "lab".into() }
}

#[test]
fn a_cycle_round_trips_on_both_engines() {
    for engine in Engine::both("round_trip") {
        let e = engine.name();
        let mut store = engine.open();
        assert_eq!(store.load("lab").unwrap(), RuleState::default(), "{e}");
        let mut state = RuleState { failures: 2, last_cycle: Some(t(60)), ..Default::default() };
        state.alerts.insert("KubernetesNodeNotReady{node=\"n1\"}".into(), std::sync::Arc::new(node_not_ready()));
        state.pods.insert(("shop".into(), "api".into()), crashed(3));
        let point = HistoryPoint { time: 1_790_000_060, nodes: 3, nodes_ready: 2, ..Default::default() };
        store.commit_cycle("lab", &state, &[("hook".into(), "{\"a\":1}".into())], Some(point)).unwrap();
        // The same point again (a replayed cycle) replaces, as INSERT OR REPLACE did.
        store.commit_cycle("lab", &state, &[], Some(point)).unwrap();
        drop(store);

        let mut store = engine.open();
        assert_eq!(store.load("lab").unwrap(), state, "{e}: everything committed is read back");
        assert_eq!(store.history("lab", 0).unwrap(), [point], "{e}");
        assert_eq!(store.pod_restarts("lab", "shop", "api", 0).unwrap(), [(1_790_000_060, 3)], "{e}");
        assert_eq!(store.load("other").unwrap(), RuleState::default(), "{e}: clusters are apart");
        assert_eq!(store.queued_count().unwrap(), 1, "{e}");

        // A gone pod is deleted, a changed one rewritten, a new one added.
        let mut next = state.clone();
        next.pods.clear();
        next.pods.insert(("shop".into(), "web".into()), crashed(1));
        store.commit_cycle("lab", &next, &[], None).unwrap();
        next.pods.get_mut(&("shop".to_string(), "web".to_string())).unwrap().restarts = 5;
        store.commit_cycle("lab", &next, &[], None).unwrap();
        assert_eq!(engine.open().load("lab").unwrap().pods, next.pods, "{e}");
    }
}

#[test]
fn silences_windows_page_clusters_and_the_audit_list_are_kept_on_both_engines() {
    for engine in Engine::both("kept") {
        let e = engine.name();
        let mut store = engine.open();
        let a = Kept { id: "a".into(), body: "{\"x\":1}".into() };
        store.keep(QuietKind::Silence, &a, &entry("silence a created")).unwrap();
        store.keep(QuietKind::Window, &Kept { id: "a".into(), body: "{}".into() }, &entry("window")).unwrap();
        let changed = Kept { id: "a".into(), body: "{\"x\":2}".into() };
        store.keep(QuietKind::Silence, &changed, &entry("silence a changed")).unwrap();
        assert_eq!(engine.open().kept(QuietKind::Silence).unwrap(), [changed], "{e}");
        assert!(store.unkeep(QuietKind::Window, "a", &entry("window ended")).unwrap(), "{e}");
        assert!(engine.open().kept(QuietKind::Window).unwrap().is_empty(), "{e}");

        let sealed: Vec<u8> = (0..=255).collect();
        let row = dumbmonit::state::PageCluster { name: "edge".into(), settings: "{}".into(), sealed };
        store.save_page_cluster(&row, &entry("cluster edge added")).unwrap();
        assert_eq!(
            engine.open().page_clusters().unwrap(),
            std::slice::from_ref(&row),
            "{e}: every byte of a sealed token"
        );
        assert!(store.remove_page_cluster("edge", &entry("cluster edge removed")).unwrap(), "{e}");
        assert!(!store.remove_page_cluster("edge", &entry("again")).unwrap(), "{e}");

        store.queue_with(&[("hook".into(), "ack".into())], &entry("acknowledged")).unwrap();
        let audit: Vec<String> = engine.open().audit(10).unwrap().into_iter().map(|a| a.action).collect();
        assert_eq!(
            audit,
            [
                "acknowledged",
                "cluster edge removed",
                "cluster edge added",
                "window ended",
                "silence a changed",
                "window",
                "silence a created"
            ],
            "{e}: newest first"
        );
    }
}

#[test]
fn the_outbox_is_claimed_in_order_by_one_claimer_at_a_time_on_both_engines() {
    for engine in Engine::both("claims") {
        let e = engine.name();
        let (mut a, mut b) = (engine.open(), engine.open());
        let n = |notifier: &str, body: &str| (notifier.to_string(), body.to_string());
        a.commit_cycle("lab", &RuleState::default(), &[n("hook", "1"), n("chat", "2"), n("hook", "3")], None).unwrap();
        let later = Timestamp::now() + jiff::SignedDuration::from_secs(60);
        let bodies = |q: &[dumbmonit::state::Queued]| q.iter().map(|q| q.body.clone()).collect::<Vec<_>>();

        let first = a.claim("a", 10, later).unwrap();
        assert_eq!(bodies(&first), ["1", "2", "3"], "{e}");
        assert!(b.claim("b", 10, later).unwrap().is_empty(), "{e}: claimed by a until it lets go");
        // The first hook notification fails: it waits for its retry, and the one after it waits
        // too (a notifier's notifications go in order), whoever claims.
        a.retry_later(first[0].id, later, "503").unwrap();
        a.delivered(first[1].id).unwrap();
        a.unclaim("a").unwrap();
        assert!(b.claim("b", 10, later).unwrap().is_empty(), "{e}: \"3\" waits behind \"1\"");
        a.retry_all_now().unwrap();
        let second = b.claim("b", 10, later).unwrap();
        assert_eq!(bodies(&second), ["1", "3"], "{e}");
        assert!(!a.reclaim("a", second[0].id, later).unwrap(), "{e}: b's now");
        assert!(b.reclaim("b", second[0].id, later).unwrap(), "{e}");
        // A claim that ran out is anyone's.
        b.unclaim("b").unwrap();
        let past = Timestamp::now() - jiff::SignedDuration::from_secs(1);
        assert_eq!(bodies(&b.claim("b", 10, past).unwrap()), ["1", "3"], "{e}");
        assert_eq!(bodies(&a.claim("a", 10, later).unwrap()), ["1", "3"], "{e}: b's claim had run out");
        assert_eq!(a.queued_count().unwrap(), 2, "{e}");
    }
}

/// The delivery worker claims once a second and after each cycle that changes an alert: a
/// pass that finds nothing due does not take SQLite's write lock, which the cycles' commits
/// wait for.
#[test]
fn a_claim_with_nothing_due_does_not_take_the_write_lock() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path()).unwrap();
    let n = |notifier: &str, body: &str| (notifier.to_string(), body.to_string());
    store.commit_cycle("lab", &RuleState::default(), &[n("hook", "1")], None).unwrap();
    let later = Timestamp::now() + jiff::SignedDuration::from_secs(60);
    assert_eq!(store.claim("a", 10, later).unwrap().len(), 1, "due, and claimed by a");
    // Another writer holds the lock: the claim of b, which finds nothing it may take, reads
    // and answers; taking the lock, it would wait for the busy timeout and fail.
    let writer = rusqlite::Connection::open(dir.path().join(dumbmonit::state::FILE)).unwrap();
    writer.execute_batch("BEGIN IMMEDIATE").unwrap();
    assert!(store.claim("b", 10, later).expect("answered without the lock").is_empty(), "a's until later");
    writer.execute_batch("ROLLBACK").unwrap();
    assert_eq!(store.claim("a", 10, later).unwrap().len(), 1, "still a's to send");
}

#[test]
fn a_schema_newer_than_the_binary_is_refused_with_both_versions_on_both_engines() {
    for engine in Engine::both("newer") {
        let e = engine.name();
        let mut store = engine.open();
        store.commit_cycle("lab", &RuleState::default(), &[], None).unwrap();
        drop(store);
        match &engine {
            Engine::Sqlite(dir) => {
                let conn = rusqlite::Connection::open(dir.path().join(dumbmonit::state::FILE)).unwrap();
                conn.execute("UPDATE schema_version SET version = 99", []).unwrap();
            }
            Engine::Postgres { .. } => {
                server().psql("newer", "UPDATE schema_version SET version = 99");
            }
        }
        let error = match &engine {
            Engine::Sqlite(dir) => Store::open(dir.path()).err().unwrap().to_string(),
            Engine::Postgres { config, .. } => dumbmonit::state::postgres::connect(config).err().unwrap().to_string(),
        };
        assert!(error.contains("schema is version 99, newer than this DumbMonit knows (version 3)"), "{e}: {error}");
    }
}

#[test]
fn replicas_split_the_clusters_and_take_over_a_silent_ones_after_its_lease() {
    let pg = server();
    pg.database("leases");
    let dir = tempfile::tempdir().unwrap();
    let replica = |name: &str| {
        let config = settings(pg, dir.path(), "leases", name, 2.0);
        dumbmonit::state::postgres::connect(&config).unwrap().store().unwrap()
    };
    let (mut a, mut b) = (replica("a"), replica("b"));
    let all: BTreeSet<String> = (0..10).map(|i| format!("c{i}")).collect();
    let first = a.beat(&all, "http://a", true).unwrap();
    assert_eq!(first.owned, all, "alone, a takes every cluster");
    // b comes: a's share is now five, the other five run out, and b takes them.
    let b_first = b.beat(&all, "http://b", true).unwrap();
    assert!(b_first.owned.is_empty(), "a's leases still run: {b_first:?}");
    let a_now = a.beat(&all, "http://a", true).unwrap();
    assert_eq!(a_now.owned.len(), 5, "{a_now:?}");
    // a's cycle of a cluster it let go is not saved.
    let gone = all.difference(&a_now.owned).next().unwrap().clone();
    let kept = a_now.owned.iter().next().unwrap().clone();
    a.commit_cycle(&kept, &RuleState::default(), &[], None).unwrap();
    std::thread::sleep(Duration::from_millis(2100));
    // A lease run out that no one took is still a's: its cycle is saved.
    a.commit_cycle(&gone, &RuleState::default(), &[], None).unwrap();
    // a renewed nothing for a lease: b takes its share, then a's share once a is gone.
    let b_now = b.beat(&all, "http://b", true).unwrap();
    assert_eq!(b_now.owned.len(), 10, "a's leases ran out, and a is not counted alive: {b_now:?}");
    let err = a.commit_cycle(&gone, &RuleState::default(), &[("hook".into(), "x".into())], None).unwrap_err();
    assert!(matches!(err, StateError::NotOwner { .. }), "{err}");
    let a_back = a.beat(&all, "http://a", true).unwrap();
    assert!(a_back.owned.is_empty(), "b holds them all now: {a_back:?}");
    let b_after = b.beat(&all, "http://b", true).unwrap();
    assert_eq!(b_after.owned.len(), 5, "b lets its surplus run out for a: {b_after:?}");
    assert_eq!(b_after.replicas.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    a.let_go().unwrap();
    assert_eq!(b.beat(&all, "http://b", true).unwrap().replicas.len(), 1, "a said it stops");
    // No notification of a's refused cycle was queued.
    assert_eq!(b.queued_count().unwrap(), 0);
}

#[test]
fn a_replica_starting_while_another_makes_the_schema_waits_for_it() {
    use std::io::{BufRead, Write};
    let pg = server();
    pg.database("together");
    let dir = tempfile::tempdir().unwrap();
    // Another replica is making the schema: it holds the migrations' lock and has created the
    // version's table, not yet committed.
    let mut other = pg.session("together");
    let mut input = other.stdin.take().unwrap();
    let mut output = std::io::BufReader::new(other.stdout.take().unwrap());
    writeln!(
        input,
        "BEGIN; SELECT pg_advisory_xact_lock(7410001); CREATE TABLE schema_version (version BIGINT NOT NULL); SELECT 'held';"
    )
    .unwrap();
    let mut line = String::new();
    while line.trim() != "held" {
        line.clear();
        assert!(output.read_line(&mut line).unwrap() > 0, "psql ended before it held the lock");
    }
    let config = settings(pg, dir.path(), "together", "late", 30.0);
    std::thread::scope(|s| {
        let late = s.spawn(|| dumbmonit::state::postgres::connect(&config).map(drop).map_err(|e| e.to_string()));
        // The late replica waits on the lock (before the migrations' lock covered the version's
        // table, it waited on the uncommitted table instead, then failed on PostgreSQL's
        // catalog: "duplicate key value violates unique constraint").
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let waiting = "SELECT count(*) FROM pg_stat_activity WHERE datname = 'together' AND wait_event_type = 'Lock'";
        while pg.psql("together", waiting) != "1" {
            assert!(!late.is_finished(), "the late replica did not wait for the other");
            assert!(std::time::Instant::now() < deadline, "the late replica never waited");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        writeln!(input, "COMMIT;").unwrap();
        drop(input);
        assert_eq!(late.join().unwrap(), Ok(()), "the late replica starts once the other is done");
    });
    assert!(other.wait().unwrap().success());
    let versions = pg.psql("together", "SELECT count(*) || ' ' || max(version) FROM schema_version");
    assert_eq!(versions, format!("1 {}", dumbmonit::state::schema::LATEST), "one row, the latest version");
}
