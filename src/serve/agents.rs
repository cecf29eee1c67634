//! Clusters read by a relay agent. The agent pushes each cycle (`crate::wire`); here each push
//! is checked, put in order and taken by the same path as a cycle read by `serve` itself
//! ([`super::path`]). Times are the agent's: a stretch the agent kept while the server was away is
//! evaluated afterwards as it happened.
//!
//! Two failures stay apart: the agent reporting that it cannot read its API server (its message,
//! said to come from the agent), and no report at all for two intervals ("No report from the
//! agent for 2 min"). When reports come back from inside a stretch the server had filled with
//! "no report", the server goes back to its state before that stretch and takes them in order;
//! what it raised meanwhile is resolved.

use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::events::Said;
use super::path::{Arrival, Failure, Shared, Track};
use crate::board::{AgentView, Door, Push, Reply};
use crate::clock::words;
use crate::config::ClusterConfig;
use crate::logs::Emit;
use crate::rules::RuleState;
use crate::wire::{Held, Report, Reported, Settings, Stat};

/// How far ahead of the server's clock a cycle may be before it is refused.
pub const FUTURE_BOUND: SignedDuration = SignedDuration::from_hours(1);

pub fn settings_of(c: &ClusterConfig) -> Settings {
    Settings {
        cluster: c.name.clone(),
        interval_seconds: c.interval.0,
        timeout_seconds: c.connect.timeout.0,
        ignored_namespaces: c.connect.ignored_namespaces.clone(),
        namespaces: c.connect.namespaces.clone(),
    }
}

/// Opens (or re-keys) the door of an agent's cluster; the token is read from its file. A token
/// that cannot be read leaves the door closed, which the log says.
pub(super) fn open_door(shared: &Shared, c: &ClusterConfig, inbox: mpsc::Sender<Push>) {
    let token = match c.agent_token() {
        Some(Ok(t)) => t,
        Some(Err(e)) => {
            Said::AgentTokenUnreadable { cluster: &c.name, error: &e }.emit();
            String::new()
        }
        None => return,
    };
    let door = Door { token, settings: settings_of(c), inbox };
    shared.board.views().open_door(&c.name, door);
}

/// Everything one agent's cluster carries between reports.
struct Link {
    track: Track,
    held: Held,
    ignored: Vec<String>,
    interval: Duration,
    heard: Instant,
    /// Agent clock − server clock, from the last report.
    skew: SignedDuration,
    /// The state before the server started saying "no report": reports from inside that
    /// stretch are taken from there.
    checkpoint: Option<RuleState>,
}

pub(super) async fn watch_agent(
    c: ClusterConfig,
    shared: Arc<Shared>,
    mut inbox: mpsc::Receiver<Push>,
    mut stop: watch::Receiver<bool>,
) {
    let interval = c.interval.duration();
    let mut link = Link {
        track: Track::load(&c.name, interval, &shared).await.with_namespace_labels(&c.namespace_labels),
        held: Held::default(),
        ignored: c.connect.ignored_namespaces.clone(),
        interval,
        heard: Instant::now(),
        skew: SignedDuration::ZERO,
        checkpoint: None,
    };
    let silence = interval * 2;
    let mut ticker = tokio::time::interval_at(Instant::now() + silence, interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            biased;
            _ = stop.changed() => return,
            push = inbox.recv() => {
                let Some(push) = push else { return };
                let reply = link.take(push.report, push.received).await;
                let _ = push.reply.send(reply);
            }
            _ = ticker.tick() => {
                if link.heard.elapsed() >= silence {
                    link.silent(silence).await;
                }
            }
        }
    }
}

impl Link {
    /// No report for two intervals: a failed cycle, at the agent's clock as last seen.
    async fn silent(&mut self, silence: Duration) {
        if self.checkpoint.is_none() {
            self.checkpoint = Some(self.track.state.clone());
        }
        let estimate = Timestamp::now() + self.skew;
        // Time never goes backwards, whatever the skew did.
        let time = match self.track.state.last_cycle {
            Some(last) if estimate <= last => last + SignedDuration::from_secs(1),
            _ => estimate,
        };
        let arrival = Arrival {
            time,
            duration: Duration::ZERO,
            stats: Vec::new(),
            outcome: Err(Failure::NoReport(SignedDuration::try_from(silence).unwrap_or_default())),
            late: None,
            retracted: Vec::new(),
            agent: None,
            between: false,
            followed: false,
        };
        self.track.take(arrival).await;
    }

    async fn take(&mut self, r: Report, received: Timestamp) -> Reply {
        let name = self.track.name.clone();
        if r.time > received + FUTURE_BOUND {
            return Reply::Refused(format!(
                "the cycle's time {} is more than {} ahead of this server's clock ({})",
                r.time,
                words(FUTURE_BOUND),
                received.round(jiff::Unit::Second).unwrap_or(received)
            ));
        }
        // The agent is heard, even when what it says is a cycle the server already has.
        self.heard = Instant::now();
        self.skew = r.sent.duration_since(received);
        // A cycle not newer than the last one taken is one the server has, unless it comes from
        // inside a stretch the server filled with "no report": then it is taken from before it.
        let from_silence = match self.track.state.last_cycle {
            Some(last) if r.time <= last => {
                let inside = self.checkpoint.as_ref().is_some_and(|cp| cp.last_cycle.is_none_or(|t| r.time > t));
                if !inside {
                    return Reply::Duplicate;
                }
                true
            }
            _ => false,
        };
        // The difference is applied before anything changes: a report refused here leaves the
        // cluster's state as it was.
        let outcome = match r.outcome {
            Reported::Snapshot(delta) => match self.held.apply(r.time, *delta) {
                Ok(mut snapshot) => {
                    // The server's ignored namespaces hold even for a cycle read with older settings.
                    snapshot.leave_out(&self.ignored);
                    Ok(snapshot)
                }
                Err(e) => return Reply::UnknownBase(e.to_string()),
            },
            // What an agent says was cleaned of every secret this server knows when it was
            // read (wire::Report::read), as the log is.
            Reported::Error(m) => Err(Failure::AgentReports(m)),
        };
        let mut retracted = Vec::new();
        if from_silence {
            let before = self.checkpoint.take().expect("checked above");
            let provisional = std::mem::replace(&mut self.track.state, before);
            retracted = provisional.alerts.into_values().filter(|a| a.firing()).map(Arc::unwrap_or_clone).collect();
            Said::KeptCyclesArrive { cluster: &name, from: r.time }.emit();
        }
        self.checkpoint = None;
        let held_back = r.sent.duration_since(r.time);
        let late = (held_back > SignedDuration::try_from(self.interval * 2).unwrap_or_default()).then_some(held_back);
        let between = r.between;
        let arrival = Arrival {
            time: r.time,
            duration: Duration::from_millis(r.duration_ms),
            stats: Stat::to_stats(&r.stats),
            outcome,
            late,
            retracted,
            agent: Some((r.address, AgentView { last_report: Some(received), skew: self.skew, note: r.note })),
            between,
            followed: false,
        };
        self.track.take(arrival).await;
        Reply::Taken
    }
}
