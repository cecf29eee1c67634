//! What `dumbmonit agent` says in the log, one type an event (see `crate::logs`). The whole
//! agent runs in one span whose `cluster` field (the cluster's name on the servers, once
//! known) every event carries; an event about one server has its URL as `server`.

use std::fmt;
use std::time::Duration;

use jiff::Timestamp;

use crate::logs::Emit;

const TARGET: &str = "dumbmonit::agent";

/// The span the agent runs in: at the highest level, so that it is there whatever `RUST_LOG`
/// lets through.
pub fn agent(cluster: Option<&str>) -> tracing::Span {
    tracing::error_span!(target: TARGET, "agent", cluster)
}

/// A server sent the cluster's settings, and they differ from the ones at hand.
pub struct SettingsTaken<'a> {
    pub cluster: &'a str,
    pub interval_seconds: f64,
    pub timeout_seconds: f64,
    pub ignored_namespaces: &'a [String],
    /// Namespaced access (said only when set).
    pub namespaces: &'a [String],
}

impl fmt::Display for SettingsTaken<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "settings of cluster {} from the server: every {} s, timeout {} s, ignored namespaces [{}]",
            self.cluster,
            self.interval_seconds,
            self.timeout_seconds,
            self.ignored_namespaces.join(", ")
        )?;
        if !self.namespaces.is_empty() {
            write!(f, ", namespaces [{}]", self.namespaces.join(", "))?;
        }
        Ok(())
    }
}

impl Emit for SettingsTaken<'_> {
    fn emit(&self) {
        tracing::info!(
            target: TARGET,
            cluster = self.cluster,
            interval_seconds = self.interval_seconds,
            timeout_seconds = self.timeout_seconds,
            ignored_namespaces = self.ignored_namespaces.join(","),
            namespaces = self.namespaces.join(","),
            "{self}"
        );
    }
}

/// The agent reports to a server (through a proxy, when one is used).
pub struct Reporting<'a> {
    pub server: &'a str,
    pub proxy: Option<&'a str>,
}

impl fmt::Display for Reporting<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "reporting to {}", self.server)?;
        if let Some(p) = self.proxy {
            write!(f, " through the proxy {p}")?;
        }
        Ok(())
    }
}

impl Emit for Reporting<'_> {
    fn emit(&self) {
        tracing::info!(target: TARGET, server = self.server, proxy = self.proxy, "{self}");
    }
}

/// The probes are served.
pub struct ProbesOn {
    pub address: std::net::SocketAddr,
}

impl fmt::Display for ProbesOn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "probes on http://{}/healthz and /readyz", self.address)
    }
}

impl Emit for ProbesOn {
    fn emit(&self) {
        tracing::info!(target: TARGET, address = %self.address, "{self}");
    }
}

/// A cycle could not read the cluster (the report says so to the servers).
pub struct ClusterUnreadable<'a> {
    pub error: &'a str,
    /// How long the cycle took.
    pub duration: Duration,
}

impl fmt::Display for ClusterUnreadable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot read the cluster: {}", self.error)
    }
}

impl Emit for ClusterUnreadable<'_> {
    fn emit(&self) {
        tracing::warn!(target: TARGET, error = self.error, duration_seconds = self.duration.as_secs_f64(), "{self}");
    }
}

/// The agent stops.
pub struct Stopping;

impl fmt::Display for Stopping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stopping: the cycles not yet delivered stay in the buffer")
    }
}

impl Emit for Stopping {
    fn emit(&self) {
        tracing::info!(target: TARGET, "{self}");
    }
}

/// A kept cycle could not be read back: it is skipped.
pub struct KeptCycleUnreadable<'a> {
    pub cycle: Timestamp,
    pub error: &'a str,
}

impl fmt::Display for KeptCycleUnreadable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a kept cycle of {} cannot be read ({}): skipped", self.cycle, self.error)
    }
}

impl Emit for KeptCycleUnreadable<'_> {
    fn emit(&self) {
        tracing::warn!(target: TARGET, cycle = %self.cycle, error = self.error, "{self}");
    }
}

/// A server that had failed takes the reports again.
pub struct ServerBack<'a> {
    pub server: &'a str,
}

impl fmt::Display for ServerBack<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} takes the reports again", self.server)
    }
}

impl Emit for ServerBack<'_> {
    fn emit(&self) {
        tracing::info!(target: TARGET, server = self.server, "{self}");
    }
}

/// A server refused one cycle for good (400, 413, 422): it is not sent to it again.
pub struct CycleRefused<'a> {
    pub server: &'a str,
    pub cycle: Timestamp,
    pub status: u16,
    pub reason: &'a str,
}

impl fmt::Display for CycleRefused<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} refused the cycle of {} ({}): {}; it is dropped for this server",
            self.server, self.cycle, self.status, self.reason
        )
    }
}

impl Emit for CycleRefused<'_> {
    fn emit(&self) {
        tracing::warn!(
            target: TARGET,
            server = self.server,
            cycle = %self.cycle,
            status = self.status,
            error = self.reason,
            "{self}"
        );
    }
}

/// A server refused the agent for now (its token, its cluster, or another status): the cycles
/// are kept until it takes them.
pub struct ServerRefused<'a> {
    pub server: &'a str,
    pub status: u16,
    /// What the server said, if anything.
    pub reason: Option<&'a str>,
}

impl fmt::Display for ServerRefused<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let url = self.server;
        let why = self.reason.map(|m| format!(": {m}")).unwrap_or_default();
        match self.status {
            401 => write!(
                f,
                "{url} refused the agent token (401){why}. Check --agent-token-file against the server's \
                 agent_token_file; cycles are kept until the server takes them"
            ),
            404 => write!(f, "{url} does not know this cluster (404){why}; cycles are kept until it does"),
            code => write!(f, "{url} answered {code}{why}; cycles are kept until it takes them"),
        }
    }
}

impl Emit for ServerRefused<'_> {
    fn emit(&self) {
        tracing::warn!(target: TARGET, server = self.server, status = self.status, error = self.reason, "{self}");
    }
}

/// A server could not be reached (or gave no answer in time).
pub struct ServerUnreachable<'a> {
    pub server: &'a str,
    pub error: &'a dyn fmt::Display,
    /// The cycles kept for it, once the agent runs; None before the first cycle.
    pub kept: Option<usize>,
}

impl fmt::Display for ServerUnreachable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kept {
            Some(n) => write!(f, "{}; {n} cycle(s) kept until it answers", self.error),
            None => write!(f, "{}; starting with the settings at hand", self.error),
        }
    }
}

impl Emit for ServerUnreachable<'_> {
    fn emit(&self) {
        tracing::warn!(target: TARGET, server = self.server, error = %self.error, kept = self.kept, "{self}");
    }
}

/// The agent's token cannot be read: nothing is pushed until it can.
pub struct TokenUnreadable<'a> {
    pub error: &'a str,
}

impl fmt::Display for TokenUnreadable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.error)
    }
}

impl Emit for TokenUnreadable<'_> {
    fn emit(&self) {
        tracing::warn!(target: TARGET, error = self.error, "{self}");
    }
}

/// The buffer directory cannot be written: cycles are kept in memory.
pub struct BufferUnwritable<'a> {
    pub dir: &'a str,
    pub error: &'a dyn fmt::Display,
}

impl fmt::Display for BufferUnwritable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the buffer directory {} cannot be written ({}): cycles are kept in memory only",
            self.dir, self.error
        )
    }
}

impl Emit for BufferUnwritable<'_> {
    fn emit(&self) {
        tracing::warn!(target: TARGET, dir = self.dir, error = %self.error, "{self}");
    }
}

/// Kept cycles not yet delivered everywhere were dropped, past the buffer's age or size.
pub struct KeptCyclesDropped {
    pub dropped: usize,
}

impl fmt::Display for KeptCyclesDropped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "dropped the {} oldest kept cycle(s) not yet delivered everywhere: past --buffer-max-age or --buffer-max-size",
            self.dropped
        )
    }
}

impl Emit for KeptCyclesDropped {
    fn emit(&self) {
        tracing::warn!(target: TARGET, dropped = self.dropped, "{self}");
    }
}
