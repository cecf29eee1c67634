//! Clusters `serve` reads itself: a cycle every interval, recorded when asked, each taken by the
//! one path ([`super::path`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::events::{CycleWhy, Said};
use super::path::{Arrival, Shared, Track};
use crate::board::Timings;
use crate::collect::reader::{self, Reader};
use crate::collect::{self, CycleOptions};
use crate::config::ClusterConfig;
use crate::logs::Emit;
use crate::redact::Redactor;

/// Reads the cluster every interval, starting `offset` into it, until told to stop.
pub(super) async fn read_cluster(
    c: ClusterConfig,
    shared: Arc<Shared>,
    offset: Duration,
    mut stop: watch::Receiver<bool>,
) {
    let mut track =
        Track::load(&c.name, c.interval.duration(), &shared).await.with_namespace_labels(&c.namespace_labels);
    let mut options = CycleOptions { record: c.record_dir.is_some(), ..CycleOptions::of(&c.connect) };
    let mut reader = Reader::new(c.connect_options()).await;
    if c.watch {
        reader.follow(c.interval.duration());
    }
    let changed = reader.changed();
    let mut quiet_changes = shared.board.quieting().quiet_changes();
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + offset, c.interval.duration());
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut pace = Pace::new(tokio::time::Instant::now());
    let keeps_from = super::path::keeps_judgements_from();
    loop {
        let why = tokio::select! {
            // A stop wins over a tick that is due at the same moment.
            biased;
            _ = stop.changed() => return,
            due = ticker.tick() => {
                shared.board.timed(|t| Timings::push(&mut t.start_lag, due.elapsed()));
                CycleWhy::Interval
            }
            // Watch mode: a change is shown within a second (changes that come together, once).
            _ = changed.notified(), if c.watch => {
                let settle = pace.settle(tokio::time::Instant::now());
                tokio::select! {
                    biased;
                    _ = stop.changed() => return,
                    _ = tokio::time::sleep_until(settle) => CycleWhy::Change,
                }
            }
            // A silence expired or a window ended early: an alert it kept untold that still
            // fires is told at once, by a cycle taken now (not at the next interval).
            Ok(()) = quiet_changes.changed() => {
                let now = shared.clock.between(track.state.last_cycle);
                if !track.state.owes_a_firing(now, &shared.board.quieting().quiet()) {
                    continue;
                }
                CycleWhy::Quiet
            }
        };
        let between = why != CycleWhy::Interval;
        let now = if between {
            shared.clock.between(track.state.last_cycle)
        } else {
            shared.clock.now(track.state.last_cycle)
        };
        options.between = between;
        let cycle = reader.cycle(&options, now).await;
        if let (Some(dir), Ok(cycle)) = (&c.record_dir, &cycle) {
            record(&c.name, dir, cycle, &reader.redactor, c.record_retention.duration());
        }
        let (duration, stats, outcome) = reader::outcome(cycle, &reader.redactor);
        let mut arrival = Arrival::read(now, duration, stats, outcome);
        arrival.between = between;
        if c.watch {
            arrival = arrival.from_stores(keeps_from);
        }
        // What a cycle costs: from the cycle to the board (not the read, which waits for the
        // first lists; from the stores it is the lesser part).
        let deriving = tokio::time::Instant::now();
        track.take(arrival).await;
        reader.shelve(track.given_back());
        let taken = tokio::time::Instant::now();
        pace.taken(between, deriving, taken);
        Said::Cycled { cluster: &c.name, why, seconds: (taken - deriving).as_secs_f64() }.emit();
    }
}

/// The least time between two cycles taken on changes: half a second, or twenty times what the
/// last cycle on a change took (from the stores, through the rules, to the board), so that a
/// cluster whose pods change all the time costs at most a twentieth of a core in cycles between
/// intervals (at 150,000 simulated pods a cycle on a change takes about 0.1 s: one about every
/// 2 s). An interval's cycle, the full derivation, does not set it ([`Pace`]).
pub(crate) fn between_spacing(last_cost: Duration) -> Duration {
    MIN_BETWEEN.max(last_cost * 20)
}

/// Watch mode: when a cycle on a change may be taken.
struct Pace {
    /// When the last cycle between intervals was on the board.
    last_between: tokio::time::Instant,
    /// What the last cycle between intervals cost. An interval's cycle, the full derivation
    /// (the safety net), costs many times more: spaced by it, the changes after each interval
    /// waited twenty times its cost (at 150,000 simulated pods, 26 s with no change shown).
    last_cost: Duration,
}

impl Pace {
    fn new(now: tokio::time::Instant) -> Pace {
        Pace { last_between: now, last_cost: Duration::ZERO }
    }

    /// When a change seen at `now` is shown: once changes that come with it came, and spaced
    /// from the last cycle between intervals. An interval's cycle does not space them: a
    /// change seen while it ran is shown once it is done (it already waited for it), and what
    /// the spacing bounds is the CPU of the cycles on changes, of which there is then one more
    /// an interval at most (at 150,000 simulated pods, spacing them from the interval's cycle
    /// too held a change that came during it for that cycle and 2 s more: 2.56 s).
    fn settle(&self, now: tokio::time::Instant) -> tokio::time::Instant {
        (self.last_between + between_spacing(self.last_cost)).max(now + DEBOUNCE)
    }

    /// A cycle was derived from `started` and on the board at `ended`.
    fn taken(&mut self, between: bool, started: tokio::time::Instant, ended: tokio::time::Instant) {
        if between {
            self.last_between = ended;
            self.last_cost = ended - started;
        }
    }
}

/// Watch mode: how long changes are let come together before a cycle shows them.
const DEBOUNCE: Duration = Duration::from_millis(100);

/// Watch mode: the least time between two cycles taken on changes, for a small cluster (shown
/// at most twice a second).
const MIN_BETWEEN: Duration = Duration::from_millis(500);

/// Writes the cycle into `dir` and removes recorded cycles older than `retention`.
fn record(cluster: &str, dir: &Path, cycle: &collect::Cycle, redactor: &Redactor, retention: Duration) {
    let message = cycle.result.as_ref().err().map(|e| redactor.clean(&e.to_string()));
    let outcome = match (&cycle.recording, &message) {
        (Some(r), _) => Ok(r),
        (None, Some(m)) => Err(m.as_str()),
        (None, None) => return,
    };
    let stamp = cycle.time.strftime("%Y%m%dT%H%M%SZ").to_string();
    let path: PathBuf = dir.join(format!("cycle-{stamp}.json.gz"));
    let text = redactor.clean(&crate::record::render(cycle.time, outcome));
    if let Err(e) = std::fs::create_dir_all(dir).and_then(|_| crate::record::write(&path, &text)) {
        Said::NotRecorded { cluster, path: &path, error: &e }.emit();
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let cutoff = std::time::SystemTime::now() - retention;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let old = e.metadata().and_then(|m| m.modified()).is_ok_and(|m| m < cutoff);
        if name.starts_with("cycle-") && name.ends_with(".json.gz") && old {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_changes_after_an_interval_are_spaced_by_what_a_cycle_on_a_change_costs() {
        let ms = Duration::from_millis;
        let t0 = tokio::time::Instant::now();
        let mut pace = Pace::new(t0);
        assert_eq!(pace.settle(t0), t0 + MIN_BETWEEN, "a small cluster: at most twice a second");
        // A cycle on a change that took 0.1 s: the next is 2 s after it.
        pace.taken(true, t0, t0 + ms(100));
        assert_eq!(pace.settle(t0 + ms(100)), t0 + ms(2_100));
        // A change seen long after is shown once the changes with it came.
        assert_eq!(pace.settle(t0 + ms(9_000)), t0 + ms(9_000) + DEBOUNCE);
        // An interval's full derivation that took 1.3 s, 0.2 s after a cycle on a change: the
        // changes after it are spaced from that cycle by 2 s, not by 26 s, and not from the
        // interval's.
        pace.taken(true, t0 + ms(9_800), t0 + ms(9_900));
        pace.taken(false, t0 + ms(10_000), t0 + ms(11_300));
        assert_eq!(pace.settle(t0 + ms(11_300)), t0 + ms(11_900));
        // Long after the last cycle on a change, a change seen while the interval's ran is
        // shown once it is done and the changes with it came.
        pace.taken(false, t0 + ms(70_000), t0 + ms(71_300));
        assert_eq!(pace.settle(t0 + ms(71_300)), t0 + ms(71_300) + DEBOUNCE);
    }
}
