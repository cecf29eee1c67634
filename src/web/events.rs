//! What the web side says in the log, one type an event (see `crate::logs`). A request at the
//! agents' door is a span whose fields every event inside it carries: `agent`, the cluster the
//! agent named in its `DumbMonit-Cluster` header (as sent, cut short), and `cluster`, the one
//! its token opened.

use std::fmt;

use crate::logs::Emit;

const TARGET: &str = "dumbmonit::web";

/// The span of one request at the agents' door: at the highest level, so that it is there
/// whatever `RUST_LOG` lets through.
pub fn agent_request(agent: Option<&str>) -> tracing::Span {
    tracing::error_span!(target: TARGET, "agent_request", agent, cluster = tracing::field::Empty)
}

/// An agent's request was refused; the agent was answered `status` and `reason`.
pub struct AgentRefused<'a> {
    pub status: u16,
    pub reason: &'a str,
}

impl fmt::Display for AgentRefused<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "agent request refused ({}): {}", self.status, self.reason)
    }
}

impl Emit for AgentRefused<'_> {
    fn emit(&self) {
        tracing::warn!(target: TARGET, status = self.status, error = self.reason, "{self}");
    }
}

/// An agent's report is a difference from a cycle this server does not hold: it is asked for
/// the whole snapshot.
pub struct WholeSnapshotAsked<'a> {
    pub cluster: &'a str,
    pub reason: &'a str,
}

impl fmt::Display for WholeSnapshotAsked<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cluster {}: {}; the agent sends the whole snapshot", self.cluster, self.reason)
    }
}

impl Emit for WholeSnapshotAsked<'_> {
    fn emit(&self) {
        tracing::info!(target: TARGET, cluster = self.cluster, reason = self.reason, "{self}");
    }
}

/// `GET /test/panic` is served (tests only).
pub struct PanicRouteOn<'a> {
    pub variable: &'a str,
}

impl fmt::Display for PanicRouteOn<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}=1: GET /test/panic panics on purpose (for tests only)", self.variable)
    }
}

impl Emit for PanicRouteOn<'_> {
    fn emit(&self) {
        tracing::warn!(target: TARGET, "{self}");
    }
}

/// A handler panicked; the request was answered 500.
pub struct HandlerPanicked<'a> {
    pub why: &'a str,
}

impl fmt::Display for HandlerPanicked<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "web: a request failed on an internal error (a panic: {}); answered 500", self.why)
    }
}

impl Emit for HandlerPanicked<'_> {
    fn emit(&self) {
        tracing::error!(target: TARGET, error = self.why, status = 500u16, "{self}");
    }
}

/// Why a change (a POST of the pages) was refused before it was looked at.
#[derive(Clone, Copy, Debug)]
pub enum ChangeRefused {
    /// Its `Origin` is not this server's scheme.
    Origin,
    /// It says neither its `Origin` nor its `Sec-Fetch-Site`.
    Unsaid,
    /// Its CSRF token is missing or not its session's.
    Csrf,
}

impl fmt::Display for ChangeRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChangeRefused::Origin => write!(f, "web: a change was refused: its Origin is not this server's scheme"),
            ChangeRefused::Unsaid => {
                write!(f, "web: a change was refused: it says neither its Origin nor its Sec-Fetch-Site")
            }
            ChangeRefused::Csrf => {
                write!(f, "web: a change was refused: its CSRF token is missing or not this session's")
            }
        }
    }
}

impl Emit for ChangeRefused {
    fn emit(&self) {
        let reason = match self {
            ChangeRefused::Origin => "origin",
            ChangeRefused::Unsaid => "no_origin",
            ChangeRefused::Csrf => "csrf",
        };
        tracing::warn!(target: TARGET, reason, status = 403u16, "{self}");
    }
}

/// A change made on the pages, as the audit keeps it.
pub struct Audit<'a> {
    /// Who made it (the admin's user name, or "admin token").
    pub user: &'a str,
    /// `added`, `added (read through an agent)`, `changed`, `removed`.
    pub action: &'a str,
    pub cluster: &'a str,
}

impl fmt::Display for Audit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "audit: {} {} cluster {}", self.user, self.action, self.cluster)
    }
}

impl Emit for Audit<'_> {
    fn emit(&self) {
        tracing::info!(target: TARGET, user = self.user, action = self.action, cluster = self.cluster, "{self}");
    }
}

/// A silence or a maintenance window made, changed or ended through the API or the pages, as the
/// audit keeps it.
pub struct QuietChanged<'a> {
    pub user: &'a str,
    /// `silence made or changed`, `silence expired`, `maintenance window made or changed`,
    /// `maintenance window ended`.
    pub action: &'a str,
    pub id: &'a str,
}

impl fmt::Display for QuietChanged<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "audit: {} {} {}", self.user, self.action, self.id)
    }
}

impl Emit for QuietChanged<'_> {
    fn emit(&self) {
        tracing::info!(target: TARGET, user = self.user, action = self.action, id = self.id, "{self}");
    }
}
