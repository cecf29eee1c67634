//! The time a cycle happens at: the wall clock, or for tests a stepped clock.

use jiff::{SignedDuration, Timestamp};

/// For tests only: `START/STEP` (an RFC 3339 time and seconds) makes the first cycle happen at
/// START and each next one STEP seconds after the last committed one, whatever the wall clock
/// says, so that hours of rule time pass in seconds, across restarts too.
pub const TEST_CLOCK_ENV: &str = "DUMBMONIT_TEST_CLOCK";

/// `DUMBMONIT_TEST_CLOCK` cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ClockError {
    #[error("{TEST_CLOCK_ENV}: expected START/STEP")]
    NotStartStep,
    #[error("{TEST_CLOCK_ENV}: {0}")]
    Start(jiff::Error),
    #[error("{TEST_CLOCK_ENV}: {0}")]
    Step(std::num::ParseIntError),
}

#[derive(Clone, Copy, Debug)]
pub enum Clock {
    Wall,
    Stepped { start: Timestamp, step: SignedDuration },
}

impl Clock {
    pub fn from_env() -> Result<Clock, ClockError> {
        let Ok(v) = std::env::var(TEST_CLOCK_ENV) else { return Ok(Clock::Wall) };
        let (start, step) = v.split_once('/').ok_or(ClockError::NotStartStep)?;
        let start = start.parse().map_err(ClockError::Start)?;
        let step: i64 = step.parse().map_err(ClockError::Step)?;
        Ok(Clock::Stepped { start, step: SignedDuration::from_secs(step) })
    }

    pub fn now(self, last: Option<Timestamp>) -> Timestamp {
        match self {
            Clock::Wall => Timestamp::now(),
            Clock::Stepped { start, step } => last.map(|t| t + step).unwrap_or(start),
        }
    }

    /// How far apart two interval cycles are on this clock: the interval, or the step of the
    /// stepped clock (whatever the interval, rule time moves by one step a cycle).
    pub fn period(self, interval: std::time::Duration) -> std::time::Duration {
        match self {
            Clock::Wall => interval,
            Clock::Stepped { step, .. } => step.unsigned_abs(),
        }
    }

    /// The time of a cycle taken between two intervals (watch mode, on a change): now; on the
    /// stepped clock, the last cycle's time (rule time moves by interval cycles alone).
    pub fn between(self, last: Option<Timestamp>) -> Timestamp {
        match self {
            Clock::Wall => Timestamp::now(),
            Clock::Stepped { start, .. } => last.unwrap_or(start),
        }
    }
}

/// `45 s`, `2 min`, `3 h`, `2 days`.
pub fn words(d: SignedDuration) -> String {
    let s = d.as_secs().abs();
    let exact = d.as_secs_f64().abs();
    if exact < 10.0 && exact.fract() > 0.0 {
        return format!("{} s", (exact * 10.0).round() / 10.0);
    }
    match s {
        s if s < 90 => format!("{s} s"),
        s if s < 90 * 60 => format!("{} min", s / 60),
        s if s < 48 * 3600 => format!("{} h", s / 3600),
        s => format!("{} days", s / 86400),
    }
}
