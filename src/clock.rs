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

    /// The time of a cycle taken between two intervals (watch mode, on a change): now; on the
    /// stepped clock, the last cycle's time (rule time moves by interval cycles alone).
    pub fn between(self, last: Option<Timestamp>) -> Timestamp {
        match self {
            Clock::Wall => Timestamp::now(),
            Clock::Stepped { start, .. } => last.unwrap_or(start),
        }
    }
}

/// Whether `c`, written as it is, could forge a line or drive a terminal: a control character
/// (newlines, escape sequences), a line or paragraph separator, a direction change.
pub fn forges(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `message` with its control characters, line separators and direction changes escaped
/// (`\n`, `\u{1b}`), so that nothing logged (an agent's error, a name) can forge a line or
/// drive the terminal.
pub fn escaped(message: &str) -> std::borrow::Cow<'_, str> {
    if !message.chars().any(forges) {
        return message.into();
    }
    let mut out = String::with_capacity(message.len() + 16);
    for c in message.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if forges(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.into()
}

/// At most `max` bytes of `s` (cut at a character), saying how long it was: for what is logged
/// from a request (a path, a header), which anyone may make as long as they like.
pub fn shortened(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if s.len() <= max {
        return s.into();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &s[..end], s.len()).into()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logged_text_cannot_forge_lines_or_drive_the_terminal() {
        assert_eq!(escaped("plain: ünïcode"), "plain: ünïcode");
        assert_eq!(escaped("a\nb\r\tc\x1b[2J"), "a\\nb\\r\\tc\\u{1b}[2J");
        assert_eq!(escaped("x\u{2028}y\u{202e}z"), "x\\u{2028}y\\u{202e}z");
        assert_eq!(shortened("short", 10), "short");
        assert_eq!(shortened(&"é".repeat(10), 5), "éé… (20 bytes)");
    }
}
