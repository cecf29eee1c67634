//! How a cluster is read, by every command: [`connect`] sets it up (the connection, then the
//! reader of its collections) and [`Connected::read`] reads a cycle. `check`, `top` and the
//! pages' Test do it once; `serve` and an agent do it cycle after cycle with [`Reader`]: the
//! connection is set up once and set up again when the token file changes (kubelet replaces a
//! pod's service-account token about every hour), so that a rotated token is used from the next
//! cycle on.

use std::path::PathBuf;
use std::time::Duration;

use jiff::Timestamp;

use super::{CollectionStat, Cycle, CycleOptions, Snapshot};
use crate::error::ConfigError;
use crate::kube::{self, ConnectOptions, Connection, Fetcher};
use crate::redact::Redactor;

/// Where kubelet mounts a pod's service-account token.
pub const IN_CLUSTER_TOKEN: &str = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/// Why a cycle has no snapshot: one line free of secrets, as the page, the log and the
/// monitor-unreachable rule say it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Unreadable {
    pub message: String,
}

/// What a cycle brought: the snapshot, or why there is none.
pub type Outcome = Result<Snapshot, Unreadable>;

/// A cluster set up to be read: its connection (the address as shown, the secrets to keep out
/// of every text) and the reader of its collections.
pub struct Connected {
    pub connection: Connection,
    pub fetcher: Fetcher,
}

/// Why a cluster could not be set up to be read. The messages are left to each caller, which
/// knows what to clean out of them and what help to give.
#[derive(Debug, thiserror::Error)]
pub enum SetUpError {
    /// The settings lead to no cluster: a token file that cannot be read, a CA that is not one,
    /// an address that is not one, a kubeconfig that cannot be used.
    #[error("{0}")]
    Settings(ConfigError),
    /// The connection is known, but its HTTP client could not be made.
    #[error("{error}")]
    Client { connection: Box<Connection>, error: ConfigError },
}

/// Sets a cluster up to be read: the connection that `options` give, then the reader of its
/// collections, with the deadline of each request.
pub async fn connect(options: &ConnectOptions) -> Result<Connected, SetUpError> {
    let connection = kube::connect(options).await.map_err(SetUpError::Settings)?;
    match Fetcher::new(&connection, options.timeout.duration()) {
        Ok(fetcher) => Ok(Connected { connection, fetcher }),
        Err(error) => Err(SetUpError::Client { connection: Box::new(connection), error }),
    }
}

impl Connected {
    /// Reads one cycle: every collection, the optional reads with them.
    pub async fn read(&self, options: &CycleOptions, now: Timestamp) -> Cycle {
        // Boxed: a cycle's future joins every read and is large; unboxed, each caller's frame
        // holds a copy of it (over a megabyte of stack in a debug build's test).
        Box::pin(super::run(&self.fetcher, options, now)).await
    }
}

/// Reads one cluster, cycle after cycle.
pub struct Reader {
    options: ConnectOptions,
    /// The cluster set up, or why it could not be (every cycle then fails with that message).
    connected: Result<Connected, Unreadable>,
    /// The API server's address as shown, once known.
    address: Option<String>,
    /// Secrets that must never leave the process in any text.
    pub redactor: Redactor,
    /// The token file's content when the connection was set up.
    token_seen: Option<String>,
    /// Watch mode: the cluster's interval, and the follower of the connection set up (made at
    /// the first cycle, made again when the connection or the ignored namespaces change).
    watch: Option<(Duration, Option<super::follow::Follower>)>,
    /// Told of every change a watch applies.
    changed: std::sync::Arc<tokio::sync::Notify>,
}

impl Reader {
    pub async fn new(options: ConnectOptions) -> Reader {
        let mut r = Reader {
            options,
            connected: Err(Unreadable { message: String::new() }),
            address: None,
            redactor: Redactor::default(),
            token_seen: None,
            watch: None,
            changed: Default::default(),
        };
        r.token_seen = r.token_now();
        r.set_up().await;
        r
    }

    /// The token file the connection uses, if it uses one.
    fn token_file(&self) -> Option<PathBuf> {
        if self.options.in_cluster {
            return Some(PathBuf::from(IN_CLUSTER_TOKEN));
        }
        self.options.token_file.clone()
    }

    fn token_now(&self) -> Option<String> {
        self.token_file().and_then(|f| std::fs::read_to_string(f).ok()).map(|t| t.trim().to_string())
    }

    async fn set_up(&mut self) {
        if let Some(t) = &self.token_seen {
            self.redactor.add(t);
        }
        // A connection that cannot be set up (a missing token file, say) fails every cycle with
        // its message, as a read would: the unreachable rule then speaks for it.
        let connected = connect(&self.options).await;
        let connection = match &connected {
            Ok(c) => Some(&c.connection),
            Err(SetUpError::Client { connection, .. }) => Some(&**connection),
            Err(SetUpError::Settings(_)) => None,
        };
        if let Some(connection) = connection {
            for s in connection.redactor.secrets() {
                self.redactor.add(s);
            }
            self.address = Some(connection.address.clone());
        }
        // A new connection: its own watches, from a fresh list.
        if let Some((_, follower)) = &mut self.watch {
            *follower = None;
        }
        self.connected = connected.map_err(|e| match e {
            SetUpError::Settings(e) => Unreadable { message: self.redactor.clean(&e.to_string()) },
            SetUpError::Client { error, .. } => Unreadable { message: self.redactor.clean(&error.to_string()) },
        });
    }

    /// The API server's address, as shown in messages (None before a connection was set up).
    pub fn address(&self) -> Option<&str> {
        self.address.as_deref()
    }

    /// From now on, follows the cluster by list-then-watch (see [`super::follow`]) and takes
    /// each cycle from its stores; `interval` is how long a watch may stay broken before a
    /// cycle fails. Called again, only updates the interval.
    pub fn follow(&mut self, interval: Duration) {
        match &mut self.watch {
            Some((i, follower)) => {
                *i = interval;
                if let Some(f) = follower {
                    f.set_interval(interval);
                }
            }
            None => self.watch = Some((interval, None)),
        }
    }

    /// Told of every change a watch applies (never, in list mode).
    pub fn changed(&self) -> std::sync::Arc<tokio::sync::Notify> {
        self.changed.clone()
    }

    /// Watch mode: gives the follower back the lists its last cycle took, once judged.
    pub fn shelve(&self, given: super::GivenBack) {
        if let Some((_, Some(follower))) = &self.watch {
            follower.shelve(given);
        }
    }

    /// Reads one cycle (after setting the connection up again if the token file changed), or
    /// says why the connection cannot be set up.
    pub async fn cycle(&mut self, options: &CycleOptions, now: Timestamp) -> Result<Cycle, Unreadable> {
        let token = self.token_now();
        if token.is_some() && token != self.token_seen {
            self.token_seen = token;
            self.set_up().await;
        }
        let connected = match &self.connected {
            Ok(c) => c,
            Err(m) => return Err(m.clone()),
        };
        // Namespaced access is read every interval, also by an agent started with --watch.
        let Some((interval, follower)) = self.watch.as_mut().filter(|_| options.namespaces.is_empty()) else {
            if let Some((_, follower)) = &mut self.watch {
                *follower = None;
            }
            return Ok(connected.read(options, now).await);
        };
        if !follower.as_ref().is_some_and(|f| f.ignores(&options.ignored_namespaces)) {
            *follower = None;
            *follower = Some(super::follow::Follower::start(
                connected.fetcher.clone(),
                options,
                *interval,
                self.changed.clone(),
            ));
        }
        Ok(follower.as_ref().expect("made above").cycle(options, now).await)
    }
}

/// A cycle as everything after reading takes it: its duration, how each collection went, and
/// the snapshot or the error in one line free of secrets.
pub fn outcome(cycle: Result<Cycle, Unreadable>, redactor: &Redactor) -> (Duration, Vec<CollectionStat>, Outcome) {
    match cycle {
        Ok(c) => (c.duration, c.stats, c.result.map_err(|e| Unreadable { message: redactor.clean(&e.to_string()) })),
        Err(m) => (Duration::ZERO, Vec::new(), Err(m)),
    }
}
