//! The two engines the state is kept in, behind one small seam: SQLite (a file in `state_dir`,
//! the default) and PostgreSQL (`[state] url`, shared by replicas).
//!
//! Every statement of the state is written once, in the SQL both engines speak, with SQLite's
//! `?1` placeholders (PostgreSQL is given `$1`), and bound with [`Value`]s; rows come back as
//! [`Value`]s too. What only one engine can say (the schema's types, a lease on the database's
//! clock, `FOR UPDATE SKIP LOCKED`) is said where it is used, by engine.
//!
//! PostgreSQL is reached with tokio-postgres (its own asynchronous driver, no libpq) and a
//! deadpool pool, on a runtime of its own: the state's callers are synchronous (a cycle commits
//! on a blocking thread, as with SQLite), so each call enters that runtime and waits for its
//! answer; the connections' I/O runs on the runtime's thread.

use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Object, Pool};
use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};

/// One value bound to a statement or read from a row.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    Text(String),
    Bytes(Vec<u8>),
    Null,
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(v.to_string())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Text(v)
    }
}

impl From<&String> for Value {
    fn from(v: &String) -> Value {
        Value::Text(v.clone())
    }
}

impl From<Option<String>> for Value {
    fn from(v: Option<String>) -> Value {
        v.map_or(Value::Null, Value::Text)
    }
}

impl From<&[u8]> for Value {
    fn from(v: &[u8]) -> Value {
        Value::Bytes(v.to_vec())
    }
}

/// Values to bind, in order: `args![a, b]`.
macro_rules! args {
    ($($v:expr),* $(,)?) => { &[$($crate::state::db::Value::from($v)),*][..] };
}
pub(crate) use args;

/// A statement or a connection that failed.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    #[error("{}", postgres_said(.0))]
    Postgres(#[from] tokio_postgres::Error),
    /// No connection could be had from the pool (the server away, every connection busy).
    #[error("{0}")]
    Pool(String),
    /// A column of another type than the statement reads.
    #[error("column {column} is not {wanted}")]
    Type { column: usize, wanted: &'static str },
}

/// What PostgreSQL said: the server's own message and its SQLSTATE when it answered, else the
/// driver's error and its cause (a refused connection, a closed one).
fn postgres_said(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{} (SQLSTATE {})", db.message(), db.code().code());
    }
    match std::error::Error::source(e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}

impl DbError {
    /// The SQLSTATE of a PostgreSQL error, when the server answered one.
    pub fn sqlstate(&self) -> Option<&str> {
        match self {
            DbError::Postgres(e) => e.as_db_error().map(|d| d.code().code()),
            _ => None,
        }
    }
}

/// One row read.
#[derive(Debug)]
pub struct Row(pub Vec<Value>);

impl Row {
    pub fn int(&self, i: usize) -> Result<i64, DbError> {
        match &self.0[i] {
            Value::Int(v) => Ok(*v),
            _ => Err(DbError::Type { column: i, wanted: "an integer" }),
        }
    }

    pub fn text(&self, i: usize) -> Result<String, DbError> {
        match &self.0[i] {
            Value::Text(v) => Ok(v.clone()),
            _ => Err(DbError::Type { column: i, wanted: "text" }),
        }
    }

    pub fn maybe_text(&self, i: usize) -> Result<Option<String>, DbError> {
        match &self.0[i] {
            Value::Null => Ok(None),
            _ => self.text(i).map(Some),
        }
    }

    pub fn bytes(&self, i: usize) -> Result<Vec<u8>, DbError> {
        match &self.0[i] {
            Value::Bytes(v) => Ok(v.clone()),
            _ => Err(DbError::Type { column: i, wanted: "bytes" }),
        }
    }
}

/// The engine a store speaks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

/// A connection to either engine.
pub enum Conn {
    Sqlite(rusqlite::Connection),
    Postgres(Postgres),
}

/// The runtime PostgreSQL's connections run on. Shut down in the background when the last
/// store using it goes: a runtime cannot be dropped where blocking is not allowed.
pub struct DbRuntime(Option<tokio::runtime::Runtime>);

impl DbRuntime {
    pub fn new() -> std::io::Result<Arc<DbRuntime>> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("dumbmonit-state")
            .enable_all()
            .build()?;
        Ok(Arc::new(DbRuntime(Some(rt))))
    }

    /// Runs `f` to its end from any thread, async or not: inside the runtime's context (a new
    /// connection is spawned on it), waiting here for the answer.
    pub fn wait<F: std::future::Future>(&self, f: F) -> F::Output {
        let _entered = self.0.as_ref().expect("the runtime is up until dropped").enter();
        futures_executor::block_on(f)
    }
}

impl Drop for DbRuntime {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

/// A PostgreSQL store's connections: a pool, and the one connection a transaction holds.
pub struct Postgres {
    pub pool: Pool,
    pub runtime: Arc<DbRuntime>,
    /// The connection of the transaction under way.
    held: Option<Object>,
}

impl Postgres {
    pub fn new(pool: Pool, runtime: Arc<DbRuntime>) -> Postgres {
        Postgres { pool, runtime, held: None }
    }

    fn client(&mut self) -> Result<Client<'_>, DbError> {
        match &self.held {
            Some(c) => Ok(Client::Held(c)),
            None => {
                let pool = self.pool.clone();
                let c = self.runtime.wait(async move { pool.get().await }).map_err(pool_error)?;
                Ok(Client::Taken(c))
            }
        }
    }
}

impl Clone for Postgres {
    /// Another handle on the same pool (with no transaction under way).
    fn clone(&self) -> Postgres {
        Postgres { pool: self.pool.clone(), runtime: self.runtime.clone(), held: None }
    }
}

/// The connection a statement runs on: the transaction's, or one taken from the pool for it.
#[allow(clippy::large_enum_variant)] // lives for one statement, on the stack
enum Client<'a> {
    Held(&'a Object),
    Taken(Object),
}

impl std::ops::Deref for Client<'_> {
    type Target = Object;
    fn deref(&self) -> &Object {
        match self {
            Client::Held(c) => c,
            Client::Taken(c) => c,
        }
    }
}

pub fn pool_error(e: deadpool_postgres::PoolError) -> DbError {
    use deadpool_postgres::PoolError;
    match e {
        PoolError::Backend(e) => DbError::Postgres(e),
        PoolError::Timeout(_) => DbError::Pool("no connection to PostgreSQL within the timeout".into()),
        PoolError::Closed => DbError::Pool("the connection pool is closed".into()),
        PoolError::NoRuntimeSpecified => DbError::Pool("the connection pool has no runtime".into()),
        PoolError::PostCreateHook(e) => DbError::Pool(e.to_string()),
    }
}

/// `?1` → `$1`: the statements are written with SQLite's numbered placeholders.
fn dollars(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

impl ToSql for Value {
    fn to_sql(&self, ty: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Value::Int(v) if *ty == Type::INT4 => i32::try_from(*v)?.to_sql(ty, out),
            Value::Int(v) if *ty == Type::INT2 => i16::try_from(*v)?.to_sql(ty, out),
            Value::Int(v) if *ty == Type::FLOAT8 => (*v as f64).to_sql(ty, out),
            Value::Int(v) => v.to_sql(ty, out),
            Value::Text(v) => v.as_str().to_sql(ty, out),
            Value::Bytes(v) => v.as_slice().to_sql(ty, out),
            Value::Null => Ok(IsNull::Yes),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Int(v) => ValueRef::Integer(*v),
            Value::Text(v) => ValueRef::Text(v.as_bytes()),
            Value::Bytes(v) => ValueRef::Blob(v),
            Value::Null => ValueRef::Null,
        }))
    }
}

fn postgres_row(row: &tokio_postgres::Row) -> Result<Row, DbError> {
    let mut values = Vec::with_capacity(row.len());
    for (i, column) in row.columns().iter().enumerate() {
        let ty = column.type_();
        let v = if *ty == Type::VOID {
            None
        } else if *ty == Type::INT8 {
            row.try_get::<_, Option<i64>>(i)?.map(Value::Int)
        } else if *ty == Type::INT4 {
            row.try_get::<_, Option<i32>>(i)?.map(|v| Value::Int(v.into()))
        } else if *ty == Type::INT2 {
            row.try_get::<_, Option<i16>>(i)?.map(|v| Value::Int(v.into()))
        } else if *ty == Type::BOOL {
            row.try_get::<_, Option<bool>>(i)?.map(|v| Value::Int(v.into()))
        } else if *ty == Type::BYTEA {
            row.try_get::<_, Option<Vec<u8>>>(i)?.map(Value::Bytes)
        } else {
            row.try_get::<_, Option<String>>(i)?.map(Value::Text)
        };
        values.push(v.unwrap_or(Value::Null));
    }
    Ok(Row(values))
}

fn sqlite_row(row: &rusqlite::Row<'_>, columns: usize) -> rusqlite::Result<Row> {
    use rusqlite::types::ValueRef;
    let mut values = Vec::with_capacity(columns);
    for i in 0..columns {
        values.push(match row.get_ref(i)? {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(v) => Value::Int(v),
            ValueRef::Real(v) => Value::Int(v as i64),
            ValueRef::Text(v) => Value::Text(String::from_utf8_lossy(v).into_owned()),
            ValueRef::Blob(v) => Value::Bytes(v.to_vec()),
        });
    }
    Ok(Row(values))
}

fn bound(args: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    args.iter().map(|v| v as &(dyn ToSql + Sync)).collect()
}

impl Conn {
    pub fn engine(&self) -> Engine {
        match self {
            Conn::Sqlite(_) => Engine::Sqlite,
            Conn::Postgres(_) => Engine::Postgres,
        }
    }

    /// Runs one statement; how many rows it changed.
    pub fn execute(&mut self, sql: &str, args: &[Value]) -> Result<u64, DbError> {
        match self {
            Conn::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                Ok(stmt.execute(rusqlite::params_from_iter(args.iter()))? as u64)
            }
            Conn::Postgres(p) => {
                let runtime = p.runtime.clone();
                let client = p.client()?;
                let sql = dollars(sql);
                runtime.wait(async {
                    let stmt = client.prepare_cached(&sql).await?;
                    Ok(client.execute(&stmt, &bound(args)).await?)
                })
            }
        }
    }

    /// Runs one query; its rows.
    pub fn query(&mut self, sql: &str, args: &[Value]) -> Result<Vec<Row>, DbError> {
        match self {
            Conn::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                let columns = stmt.column_count();
                let rows = stmt.query_map(rusqlite::params_from_iter(args.iter()), |r| sqlite_row(r, columns))?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            }
            Conn::Postgres(p) => {
                let runtime = p.runtime.clone();
                let client = p.client()?;
                let sql = dollars(sql);
                let rows = runtime.wait(async {
                    let stmt = client.prepare_cached(&sql).await?;
                    client.query(&stmt, &bound(args)).await
                })?;
                rows.iter().map(postgres_row).collect()
            }
        }
    }

    /// The first row of a query, if any.
    pub fn query_one(&mut self, sql: &str, args: &[Value]) -> Result<Option<Row>, DbError> {
        Ok(self.query(sql, args)?.into_iter().next())
    }

    /// Statements without arguments, separated by `;` (a schema).
    pub fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        match self {
            Conn::Sqlite(c) => Ok(c.execute_batch(sql)?),
            Conn::Postgres(p) => {
                let runtime = p.runtime.clone();
                let client = p.client()?;
                runtime.wait(client.batch_execute(sql))?;
                Ok(())
            }
        }
    }

    /// Runs `f` in one transaction: committed when it returns Ok, rolled back otherwise.
    pub fn transaction<T, E: From<DbError>>(&mut self, f: impl FnOnce(&mut Conn) -> Result<T, E>) -> Result<T, E> {
        let begin = match self {
            // IMMEDIATE: the write lock from the start, so that two writers never deadlock on
            // an upgrade.
            Conn::Sqlite(_) => "BEGIN IMMEDIATE",
            Conn::Postgres(p) => {
                let pool = p.pool.clone();
                p.held = Some(p.runtime.wait(async move { pool.get().await }).map_err(pool_error)?);
                "BEGIN"
            }
        };
        let outcome = self.batch(begin).map_err(E::from).and_then(|_| f(self));
        let end = match &outcome {
            Ok(_) => self.batch("COMMIT"),
            Err(_) => self.batch("ROLLBACK"),
        };
        if let Conn::Postgres(p) = self {
            p.held = None;
        }
        match (outcome, end) {
            (Ok(v), Ok(())) => Ok(v),
            (Ok(_), Err(e)) => Err(e.into()),
            (Err(e), _) => Err(e),
        }
    }
}

/// How long to wait for a connection, and for a statement, by default.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_the_postgres_way() {
        assert_eq!(dollars("SELECT a FROM t WHERE b = ?1 AND c = ?12"), "SELECT a FROM t WHERE b = $1 AND c = $12");
        assert_eq!(dollars("SELECT '?'"), "SELECT '?'");
    }
}
