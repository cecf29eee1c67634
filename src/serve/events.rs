//! What `serve` says in the log, as events (see `crate::logs`): each names the `cluster` it is
//! about when there is one, the `error` when something failed, and its other facts as fields.

use std::fmt;
use std::path::Path;

use jiff::{SignedDuration, Timestamp};

use crate::clock::words;
use crate::logs::Emit;
use crate::rules::{Transition, TransitionState};

const TARGET: &str = "dumbmonit::serve";

/// One line of `serve`'s log.
pub enum Said<'a> {
    /// The state directory cannot be used: the state lives in memory.
    StateInMemory {
        error: &'a dyn fmt::Display,
    },
    /// The shared state (PostgreSQL) cannot be reached: the clusters owned are read on.
    SharedStateAway {
        error: &'a str,
    },
    /// It can again.
    SharedStateBack {
        place: &'a str,
    },
    /// This replica's share of the clusters changed.
    Owns {
        owned: usize,
        known: usize,
    },
    /// The secret key cannot be read or made.
    NoSecretKey {
        error: &'a dyn fmt::Display,
    },
    /// Alertmanager's silences cannot be read: the last read are kept.
    SilencesUnread {
        error: &'a str,
    },
    /// Alertmanager's silences are read again.
    SilencesRead {
        notifier: &'a str,
    },
    /// Serving: how many clusters, of which shard, where the pages are.
    Watching {
        clusters: usize,
        shard: Option<(String, usize)>,
        pages: &'a str,
    },
    /// A notifier whose receiver keeps every notification (a webhook, a chat, email): replicas
    /// would each send.
    NotDeduplicated {
        notifier: &'a str,
        kind: &'a str,
    },
    Reloaded {
        path: &'a Path,
    },
    NotReloaded {
        error: &'a dyn fmt::Display,
    },
    /// A key that only a restart changes.
    NeedsRestart {
        key: &'static str,
        stays: &'static str,
    },
    NotifiersNotReloaded {
        error: &'a dyn fmt::Display,
    },
    AuthNotReloaded {
        error: &'a dyn fmt::Display,
    },
    ShardNow {
        shard: &'a str,
    },
    Stopping,
    /// A cluster added on the pages under a name the file uses.
    InFileAndOnPages {
        cluster: &'a str,
    },
    /// A cluster added on the pages that cannot be watched (its token does not unseal).
    NotWatched {
        cluster: &'a str,
        error: &'a dyn fmt::Display,
    },
    /// The agent's token file cannot be read.
    AgentTokenUnreadable {
        cluster: &'a str,
        error: &'a dyn fmt::Display,
    },
    /// Reports from inside a stretch of "no report" arrive.
    KeptCyclesArrive {
        cluster: &'a str,
        from: Timestamp,
    },
    NotRecorded {
        cluster: &'a str,
        path: &'a Path,
        error: &'a dyn fmt::Display,
    },
    StateNotLoaded {
        cluster: &'a str,
        error: &'a dyn fmt::Display,
    },
    NotPersisted {
        cluster: &'a str,
        error: &'a dyn fmt::Display,
    },
    /// A cycle failed and changed no alert.
    CycleFailed {
        cluster: &'a str,
        error: &'a dyn fmt::Display,
    },
    /// A cycle of a cluster `serve` reads itself was taken (debug): why, and how long it took
    /// from its read's end to the board (rules, state, notifications, pages).
    Cycled {
        cluster: &'a str,
        why: CycleWhy,
        seconds: f64,
    },
    /// A cycle between intervals whose kept judgements of its pods differ from the full
    /// derivation of the same cycle (looked for with `RUST_LOG=dumbmonit::serve=debug`): a
    /// defect, said with the object it concerns.
    JudgedDiffers {
        cluster: &'a str,
        object: &'a str,
    },
    /// An alert fired, escalated or resolved (`late`: the cycle was heard of that late).
    Alert {
        cluster: &'a str,
        transition: &'a Transition,
        late: Option<SignedDuration>,
    },
}

/// Why a cycle was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CycleWhy {
    /// Its interval came.
    Interval,
    /// Watch mode: a store changed.
    Change,
    /// A silence or a maintenance window ended early with an alert it kept untold.
    Quiet,
}

impl CycleWhy {
    pub fn as_str(self) -> &'static str {
        match self {
            CycleWhy::Interval => "interval",
            CycleWhy::Change => "change",
            CycleWhy::Quiet => "quiet",
        }
    }
}

impl Said<'_> {
    /// Whether cycles between intervals are derived both ways and compared: with serve's debug
    /// log on (the comparison costs a full derivation).
    pub fn comparing() -> bool {
        tracing::enabled!(target: TARGET, tracing::Level::DEBUG)
    }
}

fn verb(t: &Transition) -> &'static str {
    match t.state {
        TransitionState::Firing => "firing",
        TransitionState::Escalated => "escalated",
        TransitionState::Resolved => "resolved",
        TransitionState::Acknowledged => "acknowledged",
        TransitionState::Reminder => "still firing",
    }
}

impl fmt::Display for Said<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Said::StateInMemory { error } => write!(f, "{error}; monitoring goes on with the state in memory only"),
            Said::NoSecretKey { error } => {
                write!(f, "{error}; clusters cannot be added on the pages, and those added before are not watched")
            }
            Said::SharedStateAway { error } => write!(
                f,
                "the shared state cannot be reached: {error}; the clusters this replica owns are read on, \
                 what they notify is sent once it is back"
            ),
            Said::SharedStateBack { place } => write!(f, "the shared state {place} is reached again"),
            Said::Owns { owned, known } => {
                write!(
                    f,
                    "this replica reads {owned} of the {known} cluster(s) it knows; the other replicas read the rest"
                )
            }
            Said::SilencesUnread { error } => {
                write!(f, "{error}; the silences last read from it stay in force")
            }
            Said::SilencesRead { notifier } => write!(f, "the silences of Alertmanager {notifier} are read again"),
            Said::Watching { clusters, shard, pages } => {
                write!(f, "dumbmonit serve: watching {clusters} cluster(s)")?;
                if let Some((shard, configured)) = shard {
                    write!(f, " (shard {shard} of {configured} configured)")?;
                }
                write!(f, "; pages on {pages}")
            }
            Said::NotDeduplicated { notifier, kind } => write!(
                f,
                "notifier {notifier} ({kind}) is sent every notification directly: replicas of serve would each \
                 send their own; to run replicas, notify through Alertmanager or PagerDuty, which deduplicate them"
            ),
            Said::Reloaded { path } => write!(f, "configuration reloaded from {}", path.display()),
            Said::NotReloaded { error } => write!(f, "configuration not reloaded, the running one stays: {error}"),
            Said::NeedsRestart { key, stays } => write!(f, "`{key}` changed: that needs a restart; {stays}"),
            Said::NotifiersNotReloaded { error } => write!(f, "notifiers not reloaded: {error}"),
            Said::AuthNotReloaded { error } => write!(f, "auth not reloaded: {error}"),
            Said::ShardNow { shard } => {
                write!(f, "shard is now {shard}: clusters move in and out, each with its saved state")
            }
            Said::Stopping => write!(f, "stopping: finishing the cycles under way and flushing the outbox"),
            Said::InFileAndOnPages { cluster } => {
                write!(f, "cluster {cluster}: added on the pages and in the file; the file's is watched")
            }
            Said::NotWatched { cluster, error } => write!(f, "cluster {cluster}: {error}"),
            Said::AgentTokenUnreadable { cluster, error } => {
                write!(f, "{error}; the agent of cluster {cluster} cannot report until this is fixed")
            }
            Said::KeptCyclesArrive { cluster, from } => {
                write!(f, "cluster {cluster}: the agent's kept cycles arrive; taking them from {from} on")
            }
            Said::NotRecorded { path, error, .. } => {
                write!(f, "cannot record the cycle to {}: {error}", path.display())
            }
            Said::StateNotLoaded { cluster, error } => {
                write!(f, "cluster {cluster}: {error}; starting from an empty state")
            }
            Said::NotPersisted { cluster, error } => {
                write!(f, "cluster {cluster}: cannot persist the cycle, monitoring goes on: {error}")
            }
            Said::CycleFailed { cluster, error } => write!(f, "cluster {cluster}: {error}"),
            Said::Cycled { cluster, why, seconds } => {
                let why = match why {
                    CycleWhy::Interval => "at its interval",
                    CycleWhy::Change => "on a change (watch mode)",
                    CycleWhy::Quiet => "for an alert a silence or a window kept untold",
                };
                write!(f, "cluster {cluster}: a cycle {why}, on the board {:.1} ms after its read", seconds * 1000.0)
            }
            Said::JudgedDiffers { cluster, object } => write!(
                f,
                "cluster {cluster}: the cycle derived from the pods that changed differs from its full derivation at {object}"
            ),
            Said::Alert { cluster, transition: t, late } => {
                write!(f, "cluster {cluster}: {} {} ({})", verb(t), t.alert.alertname, t.alert.severity.as_str())?;
                if let Some(l) = late {
                    write!(f, " (reported {} late)", words(*l))?;
                }
                write!(f, ": {}", t.alert.summary)
            }
        }
    }
}

impl Emit for Said<'_> {
    fn emit(&self) {
        match self {
            Said::Watching { clusters, shard, pages } => tracing::info!(
                target: TARGET,
                clusters,
                shard = shard.as_ref().map(|s| s.0.as_str()),
                pages,
                "{self}"
            ),
            Said::Reloaded { path } => tracing::info!(target: TARGET, path = %path.display(), "{self}"),
            Said::ShardNow { shard } => tracing::info!(target: TARGET, shard, "{self}"),
            Said::Stopping => tracing::info!(target: TARGET, "{self}"),
            Said::KeptCyclesArrive { cluster, from } => {
                tracing::info!(target: TARGET, cluster, from = %from, "{self}")
            }
            Said::Cycled { cluster, why, seconds } => {
                tracing::debug!(target: TARGET, cluster, why = why.as_str(), seconds, "{self}")
            }
            Said::JudgedDiffers { cluster, .. } => tracing::warn!(target: TARGET, cluster, "{self}"),
            Said::Alert { cluster, transition: t, late } => tracing::info!(
                target: TARGET,
                cluster,
                alertname = t.alert.alertname,
                severity = t.alert.severity.as_str(),
                state = verb(t),
                late_seconds = late.map(|l| l.as_secs_f64()),
                "{self}"
            ),
            Said::NotDeduplicated { notifier, .. } => tracing::warn!(target: TARGET, notifier, "{self}"),
            Said::SilencesUnread { error } => tracing::warn!(target: TARGET, error, "{self}"),
            Said::SharedStateAway { error } => tracing::error!(target: TARGET, error, "{self}"),
            Said::SharedStateBack { place } => tracing::info!(target: TARGET, place, "{self}"),
            Said::Owns { owned, known } => tracing::info!(target: TARGET, owned, known, "{self}"),
            Said::SilencesRead { notifier } => tracing::info!(target: TARGET, notifier, "{self}"),
            Said::NeedsRestart { key, .. } => tracing::warn!(target: TARGET, key, "{self}"),
            Said::InFileAndOnPages { cluster } => tracing::warn!(target: TARGET, cluster, "{self}"),
            Said::NotRecorded { cluster, path, error } => {
                tracing::warn!(target: TARGET, cluster, path = %path.display(), error = %error, "{self}")
            }
            Said::StateInMemory { error }
            | Said::NoSecretKey { error }
            | Said::NotReloaded { error }
            | Said::NotifiersNotReloaded { error }
            | Said::AuthNotReloaded { error } => tracing::warn!(target: TARGET, error = %error, "{self}"),
            Said::NotWatched { cluster, error }
            | Said::AgentTokenUnreadable { cluster, error }
            | Said::StateNotLoaded { cluster, error }
            | Said::CycleFailed { cluster, error } => tracing::warn!(target: TARGET, cluster, error = %error, "{self}"),
            Said::NotPersisted { cluster, error } => tracing::error!(target: TARGET, cluster, error = %error, "{self}"),
        }
    }
}
