//! The state's schema, by version, for both engines: each migration is applied once, in order,
//! in a transaction with the version it brings, when a store opens. A database whose version is
//! newer than this binary knows is refused, both versions named.
//!
//! A SQLite file written before versions were kept holds version 1's tables and no version:
//! version 1 creates only what is missing, so it is taken up as it is.

use super::db::{Conn, DbError, Engine};

/// One step of the schema.
struct Migration {
    version: i64,
    sqlite: &'static str,
    postgres: &'static str,
}

/// The newest version this binary knows.
pub const LATEST: i64 = 3;

/// Version 1 in SQLite: the schema as it stood before versions were kept.
pub const SQLITE_V1: &str = "
CREATE TABLE IF NOT EXISTS clusters (
    cluster TEXT PRIMARY KEY,
    failures INTEGER NOT NULL,
    last_cycle TEXT
);
CREATE TABLE IF NOT EXISTS alerts (
    cluster TEXT NOT NULL,
    key TEXT NOT NULL,
    alert TEXT NOT NULL,
    PRIMARY KEY (cluster, key)
);
CREATE TABLE IF NOT EXISTS pods (
    cluster TEXT NOT NULL,
    namespace TEXT NOT NULL,
    pod TEXT NOT NULL,
    memory TEXT NOT NULL,
    PRIMARY KEY (cluster, namespace, pod)
);
CREATE TABLE IF NOT EXISTS notice_groups (
    cluster TEXT PRIMARY KEY,
    groups TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    notifier TEXT NOT NULL,
    body TEXT NOT NULL,
    created TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt TEXT NOT NULL,
    last_error TEXT
);
CREATE INDEX IF NOT EXISTS outbox_due ON outbox (next_attempt);
CREATE TABLE IF NOT EXISTS history (
    cluster TEXT NOT NULL,
    time INTEGER NOT NULL,
    nodes INTEGER NOT NULL,
    nodes_ready INTEGER NOT NULL,
    pods_running INTEGER NOT NULL,
    pods_pending INTEGER NOT NULL,
    pods_failed INTEGER NOT NULL,
    pods_crashlooping INTEGER NOT NULL,
    warning_events INTEGER NOT NULL,
    PRIMARY KEY (cluster, time)
);
CREATE TABLE IF NOT EXISTS pod_restarts (
    cluster TEXT NOT NULL,
    namespace TEXT NOT NULL,
    pod TEXT NOT NULL,
    time INTEGER NOT NULL,
    restarts INTEGER NOT NULL,
    PRIMARY KEY (cluster, namespace, pod, time)
);
CREATE INDEX IF NOT EXISTS pod_restarts_age ON pod_restarts (cluster, time);
CREATE TABLE IF NOT EXISTS page_clusters (
    name TEXT PRIMARY KEY,
    settings TEXT NOT NULL,
    sealed BLOB NOT NULL,
    updated INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS quiet (
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (kind, id)
);
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    time INTEGER NOT NULL,
    who TEXT NOT NULL,
    action TEXT NOT NULL,
    cluster TEXT NOT NULL
);
";

const POSTGRES_V1: &str = "
CREATE TABLE clusters (
    cluster TEXT PRIMARY KEY,
    failures BIGINT NOT NULL,
    last_cycle TEXT
);
CREATE TABLE alerts (
    cluster TEXT NOT NULL,
    key TEXT NOT NULL,
    alert TEXT NOT NULL,
    PRIMARY KEY (cluster, key)
);
CREATE TABLE pods (
    cluster TEXT NOT NULL,
    namespace TEXT NOT NULL,
    pod TEXT NOT NULL,
    memory TEXT NOT NULL,
    PRIMARY KEY (cluster, namespace, pod)
);
CREATE TABLE notice_groups (
    cluster TEXT PRIMARY KEY,
    groups TEXT NOT NULL
);
CREATE TABLE outbox (
    id BIGSERIAL PRIMARY KEY,
    notifier TEXT NOT NULL,
    body TEXT NOT NULL,
    created TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    next_attempt TEXT NOT NULL,
    last_error TEXT
);
CREATE INDEX outbox_due ON outbox (next_attempt);
CREATE TABLE history (
    cluster TEXT NOT NULL,
    time BIGINT NOT NULL,
    nodes BIGINT NOT NULL,
    nodes_ready BIGINT NOT NULL,
    pods_running BIGINT NOT NULL,
    pods_pending BIGINT NOT NULL,
    pods_failed BIGINT NOT NULL,
    pods_crashlooping BIGINT NOT NULL,
    warning_events BIGINT NOT NULL,
    PRIMARY KEY (cluster, time)
);
CREATE TABLE pod_restarts (
    cluster TEXT NOT NULL,
    namespace TEXT NOT NULL,
    pod TEXT NOT NULL,
    time BIGINT NOT NULL,
    restarts BIGINT NOT NULL,
    PRIMARY KEY (cluster, namespace, pod, time)
);
CREATE INDEX pod_restarts_age ON pod_restarts (cluster, time);
CREATE TABLE page_clusters (
    name TEXT PRIMARY KEY,
    settings TEXT NOT NULL,
    sealed BYTEA NOT NULL,
    updated BIGINT NOT NULL
);
CREATE TABLE quiet (
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (kind, id)
);
CREATE TABLE audit (
    id BIGSERIAL PRIMARY KEY,
    time BIGINT NOT NULL,
    who TEXT NOT NULL,
    action TEXT NOT NULL,
    cluster TEXT NOT NULL
);
";

/// The steps, oldest first.
const MIGRATIONS: &[Migration] = &[
    Migration { version: 1, sqlite: SQLITE_V1, postgres: POSTGRES_V1 },
    // Version 2: the outbox is claimed (by the replica sending a notification, until a time in
    // Unix milliseconds) and due at a time it can be compared by; PostgreSQL keeps each
    // cluster's owner and each replica's lease, on the database's clock.
    Migration {
        version: 2,
        sqlite: "
ALTER TABLE outbox ADD COLUMN due INTEGER NOT NULL DEFAULT 0;
ALTER TABLE outbox ADD COLUMN claimed_by TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN claimed_until INTEGER NOT NULL DEFAULT 0;
",
        postgres: "
ALTER TABLE outbox ADD COLUMN due BIGINT NOT NULL DEFAULT 0;
ALTER TABLE outbox ADD COLUMN claimed_by TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN claimed_until BIGINT NOT NULL DEFAULT 0;
CREATE TABLE owners (
    cluster TEXT PRIMARY KEY,
    replica TEXT NOT NULL,
    expires TIMESTAMPTZ NOT NULL
);
CREATE TABLE replicas (
    replica TEXT PRIMARY KEY,
    expires TIMESTAMPTZ NOT NULL,
    pages TEXT NOT NULL,
    clusters TEXT NOT NULL
);
",
    },
    // Version 3: acknowledgements made on one replica's pages, for the replica that owns the
    // alert's cluster to take (by the alert's fingerprint and the start it was made for).
    Migration {
        version: 3,
        sqlite: "
CREATE TABLE acknowledgements (
    fingerprint TEXT NOT NULL,
    active_at TEXT NOT NULL,
    cluster TEXT NOT NULL,
    ack TEXT NOT NULL,
    made INTEGER NOT NULL,
    PRIMARY KEY (fingerprint, active_at)
);
",
        postgres: "
CREATE TABLE acknowledgements (
    fingerprint TEXT NOT NULL,
    active_at TEXT NOT NULL,
    cluster TEXT NOT NULL,
    ack TEXT NOT NULL,
    made BIGINT NOT NULL,
    PRIMARY KEY (fingerprint, active_at)
);
",
    },
];

/// Why a schema cannot be brought up to date.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    #[error(
        "its schema is version {found}, newer than this DumbMonit knows (version {known}): run the DumbMonit that wrote it, or a newer one"
    )]
    Newer { found: i64, known: i64 },
    #[error(transparent)]
    Db(#[from] DbError),
}

/// The advisory lock replicas take on PostgreSQL around every schema change: two `CREATE TABLE
/// IF NOT EXISTS` at once can both pass the test and one then fails on the catalog's unique index.
const MIGRATION_LOCK: &str = "SELECT pg_advisory_xact_lock(7410001)";

/// The version the database is at (0: none kept), its table made under the migrations' lock.
/// (SQLite needs no lock for it, and takes none: a read-only state directory must still open.)
pub fn version(conn: &mut Conn) -> Result<i64, DbError> {
    fn read(conn: &mut Conn) -> Result<i64, DbError> {
        conn.batch("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)")?;
        let row = conn.query_one("SELECT max(version) FROM schema_version", &[])?;
        Ok(row.map(|r| r.int(0).unwrap_or(0)).unwrap_or(0))
    }
    match conn.engine() {
        Engine::Sqlite => read(conn),
        Engine::Postgres => conn.transaction(|tx| {
            tx.query(MIGRATION_LOCK, &[])?;
            read(tx)
        }),
    }
}

/// Applies every step the database lacks. Two replicas starting at once apply each step once:
/// PostgreSQL serializes them on an advisory lock, SQLite on its write lock.
pub fn migrate(conn: &mut Conn) -> Result<i64, SchemaError> {
    let engine = conn.engine();
    let found = version(conn)?;
    if found > LATEST {
        return Err(SchemaError::Newer { found, known: LATEST });
    }
    for m in MIGRATIONS.iter().filter(|m| m.version > found) {
        conn.transaction(|tx| {
            if engine == Engine::Postgres {
                tx.query(MIGRATION_LOCK, &[])?;
            }
            // Read again inside the lock: another replica may have applied it meanwhile.
            let now = tx.query_one("SELECT max(version) FROM schema_version", &[])?;
            let now = now.map(|r| r.int(0).unwrap_or(0)).unwrap_or(0);
            if now >= m.version {
                return Ok::<_, SchemaError>(());
            }
            tx.batch(match engine {
                Engine::Sqlite => m.sqlite,
                Engine::Postgres => m.postgres,
            })?;
            tx.execute("DELETE FROM schema_version", &[])?;
            tx.execute("INSERT INTO schema_version (version) VALUES (?1)", &[m.version.into()])?;
            Ok(())
        })?;
    }
    Ok(LATEST)
}
