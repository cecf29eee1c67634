//! `dumbmonit state migrate`: a SQLite state carried into PostgreSQL, table by table, in one
//! transaction of the target. The rows keep their order (the outbox's and the audit list's
//! numbers are the target's own, in the same order); leases are not carried (SQLite has none):
//! the first replica to start takes the clusters with the state they had.

use super::db::{Conn, DbError, Value};
use super::{StateError, Store};

/// The tables carried, each with its columns (the numbered ones without their number).
const TABLES: &[(&str, &[&str])] = &[
    ("clusters", &["cluster", "failures", "last_cycle"]),
    ("alerts", &["cluster", "key", "alert"]),
    ("pods", &["cluster", "namespace", "pod", "memory"]),
    ("notice_groups", &["cluster", "groups"]),
    ("outbox", &["notifier", "body", "created", "attempts", "next_attempt", "last_error", "due"]),
    (
        "history",
        &[
            "cluster",
            "time",
            "nodes",
            "nodes_ready",
            "pods_running",
            "pods_pending",
            "pods_failed",
            "pods_crashlooping",
            "warning_events",
        ],
    ),
    ("pod_restarts", &["cluster", "namespace", "pod", "time", "restarts"]),
    ("page_clusters", &["name", "settings", "sealed", "updated"]),
    ("quiet", &["kind", "id", "body"]),
    ("audit", &["time", "who", "action", "cluster"]),
];

/// Tables with a row number, read in its order.
fn ordered(table: &str) -> &'static str {
    match table {
        "outbox" | "audit" => " ORDER BY id",
        _ => "",
    }
}

/// Why a state was not carried.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    #[error(transparent)]
    State(#[from] StateError),
    #[error("{place} already holds a state ({rows} rows: {tables}): nothing was written; add --force to replace it")]
    NotEmpty { place: String, rows: i64, tables: String },
    #[error("{0}")]
    Db(#[from] DbError),
}

/// What was carried: rows per table, in [`TABLES`]' order.
pub type Carried = Vec<(&'static str, usize)>;

/// Carries `from` into `to`; `to` must be empty unless `replace` (its rows are then deleted
/// first, in the same transaction).
pub fn carry(from: &mut Store, to: &mut Store, replace: bool) -> Result<Carried, MigrateError> {
    let place = to.place.clone();
    let mut held = Vec::new();
    for (table, _) in TABLES {
        let n = to.conn.query_one(&format!("SELECT count(*) FROM {table}"), &[])?.map(|r| r.int(0)).transpose()?;
        if let Some(n) = n.filter(|n| *n > 0) {
            held.push((*table, n));
        }
    }
    if !held.is_empty() && !replace {
        let rows = held.iter().map(|(_, n)| n).sum();
        let tables = held.iter().map(|(t, n)| format!("{t} {n}")).collect::<Vec<_>>().join(", ");
        return Err(MigrateError::NotEmpty { place, rows, tables });
    }
    let mut read = Vec::new();
    for (table, columns) in TABLES {
        let sql = format!("SELECT {} FROM {table}{}", columns.join(", "), ordered(table));
        read.push(from.conn.query(&sql, &[])?);
    }
    let carried = to.conn.transaction(|tx: &mut Conn| {
        let mut carried = Vec::new();
        if replace {
            for (table, _) in TABLES.iter().rev() {
                tx.execute(&format!("DELETE FROM {table}"), &[])?;
            }
            tx.execute("DELETE FROM owners", &[])?;
        }
        for ((table, columns), rows) in TABLES.iter().zip(&read) {
            let marks: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
            let sql = format!("INSERT INTO {table} ({}) VALUES ({})", columns.join(", "), marks.join(", "));
            for row in rows {
                let values: Vec<Value> = row.0.clone();
                tx.execute(&sql, &values)?;
            }
            carried.push((*table, rows.len()));
        }
        Ok::<_, DbError>(carried)
    })?;
    Ok(carried)
}
