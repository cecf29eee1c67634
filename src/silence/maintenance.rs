//! Maintenance windows: a cluster (or the clusters a matcher names) is read and its alerts are
//! evaluated as usual, but nothing of it is told while the window lasts, not even that the
//! monitor cannot reach it (the point of a k3s upgrade window is that the API server goes away).
//! One-off (a start and an end) or recurring (a cron schedule in a time zone, and a duration).

use jiff::{SignedDuration, Timestamp};

use super::{Matcher, MatcherError};

/// The longest window, one-off or each time of a recurring one.
pub const LONGEST: SignedDuration = SignedDuration::from_hours(366 * 24);

/// Which clusters a window is for.
#[derive(Clone, Debug, PartialEq)]
pub enum Clusters {
    /// One cluster, by its name.
    Named(String),
    /// Those whose name the matchers over `cluster` match: `{cluster=~"edge-.*"}`.
    Matching(Vec<Matcher>),
}

impl Clusters {
    /// A cluster's name, or matchers over `cluster` in braces.
    pub fn parse(text: &str, field: &'static str) -> Result<Clusters, WindowError> {
        let t = text.trim();
        let Some(inner) = t.strip_prefix('{') else {
            if t.is_empty() || t.chars().any(|c| c.is_control() || c == '/') {
                return Err(WindowError::NoCluster { field });
            }
            return Ok(Clusters::Named(t.to_string()));
        };
        let inner = inner.strip_suffix('}').ok_or(WindowError::NoCluster { field })?;
        let mut matchers = Vec::new();
        for part in split_matchers(inner) {
            let m = Matcher::parse(&part).map_err(|source| WindowError::Matcher { field, source })?;
            if m.name != "cluster" {
                return Err(WindowError::NotCluster { field, name: m.name });
            }
            matchers.push(m);
        }
        if matchers.is_empty() {
            return Err(WindowError::NoCluster { field });
        }
        Ok(Clusters::Matching(matchers))
    }

    pub fn includes(&self, cluster: &str) -> bool {
        match self {
            Clusters::Named(name) => name == cluster,
            Clusters::Matching(matchers) => {
                let labels = std::collections::BTreeMap::from([("cluster".to_string(), cluster.to_string())]);
                matchers.iter().all(|m| m.matches(&labels))
            }
        }
    }
}

impl std::fmt::Display for Clusters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Clusters::Named(name) => f.write_str(name),
            Clusters::Matching(m) => {
                write!(f, "{{{}}}", m.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))
            }
        }
    }
}

/// `a="x", b=~"y,z"`, split at the commas outside quotes.
fn split_matchers(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let (mut quoted, mut escaped) = (false, false);
    for c in text.chars() {
        match c {
            ',' if !quoted => parts.push(std::mem::take(&mut current)),
            '"' if !escaped => {
                quoted = !quoted;
                current.push(c);
            }
            _ => current.push(c),
        }
        escaped = c == '\\' && !escaped;
    }
    parts.push(current);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

/// When a window holds.
#[derive(Clone, Debug)]
pub enum When {
    Once {
        start: Timestamp,
        end: Timestamp,
    },
    /// From each run of `schedule` in `zone`, for `duration`.
    Every {
        schedule: String,
        cron: Box<croner::Cron>,
        zone: chrono_tz::Tz,
        duration: SignedDuration,
    },
}

impl PartialEq for When {
    fn eq(&self, other: &When) -> bool {
        match (self, other) {
            (When::Once { start: a, end: b }, When::Once { start: c, end: d }) => (a, b) == (c, d),
            (
                When::Every { schedule: a, zone: b, duration: c, .. },
                When::Every { schedule: d, zone: e, duration: f, .. },
            ) => (a, b, c) == (d, e, f),
            _ => false,
        }
    }
}

/// A maintenance window.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    /// `file-N` for the file's N-th `[[maintenance]]`; a random UUID for one made through the API.
    pub id: String,
    pub clusters: Clusters,
    pub when: When,
    pub comment: String,
    pub created_by: String,
    pub updated_at: Option<Timestamp>,
    /// From serve's file: read-only on the pages and through the API.
    pub from_file: bool,
}

/// A window as given, whatever its source (`names` are the fields' names there); as it is, the
/// file's `[[maintenance]]`: a cluster (or `{cluster=~"…"}`), then `start` and `end` (RFC 3339),
/// or `schedule` (cron), `time_zone` (UTC when absent) and `duration`; and why.
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    pub cluster: String,
    pub start: Option<String>,
    pub end: Option<String>,
    pub schedule: Option<String>,
    pub time_zone: Option<String>,
    pub duration: Option<String>,
    #[serde(default)]
    pub comment: String,
}

/// The names of a window's fields where it was given.
#[derive(Clone, Copy, Debug)]
pub struct Names {
    pub start: &'static str,
    pub end: &'static str,
    pub time_zone: &'static str,
}

/// The file's `[[maintenance]]`.
pub const FILE: Names = Names { start: "start", end: "end", time_zone: "time_zone" };
/// The API's `POST /api/v1/maintenance`.
pub const API: Names = Names { start: "startsAt", end: "endsAt", time_zone: "timeZone" };

/// Why a window was refused: the field, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WindowError {
    #[error("field `{field}`: name a cluster, or clusters with matchers such as {{cluster=~\"edge-.*\"}}")]
    NoCluster { field: &'static str },
    #[error("field `{field}`: {source}")]
    Matcher { field: &'static str, source: MatcherError },
    #[error("field `{field}`: a window's matchers are over `cluster` only, not {name:?}")]
    NotCluster { field: &'static str, name: String },
    #[error("give `{start}` and `{end}`, or `schedule` and `duration` (with `{time_zone}`), not both and not neither")]
    Shape { start: &'static str, end: &'static str, time_zone: &'static str },
    #[error("field `{field}`: {value:?} is not an RFC 3339 time (such as 2026-12-06T02:00:00+01:00)")]
    Time { field: &'static str, value: String },
    #[error("field `{end}`: not after `{start}`")]
    EndFirst { start: &'static str, end: &'static str },
    #[error("field `{field}`: a window lasts at most a year")]
    TooLong { field: &'static str },
    #[error("field `{field}`: already past")]
    Past { field: &'static str },
    #[error(
        "field `schedule`: {value:?} is not a cron schedule of five fields (minute hour day-of-month month day-of-week): {detail}"
    )]
    Schedule { value: String, detail: String },
    #[error("field `{field}`: {value:?} is not a time zone of the tz database (such as Europe/Paris)")]
    Zone { field: &'static str, value: String },
    #[error("field `duration`: {value:?} is not a duration above 0 (such as 2h or 90m)")]
    Duration { value: String },
    #[error("field `{field}`: {len} bytes; it has at most {most}")]
    TextTooLong { field: &'static str, len: usize, most: usize },
}

impl Window {
    /// A window from what was given. `now`, when given, refuses a one-off window already over.
    pub fn from_spec(
        id: String,
        spec: &Spec,
        names: Names,
        created_by: String,
        from_file: bool,
        now: Option<Timestamp>,
    ) -> Result<Window, WindowError> {
        let clusters = Clusters::parse(&spec.cluster, "cluster")?;
        let shape = WindowError::Shape { start: names.start, end: names.end, time_zone: names.time_zone };
        let when = match (&spec.start, &spec.end, &spec.schedule, &spec.duration) {
            (Some(start), Some(end), None, None) if spec.time_zone.is_none() => {
                let time = |field: &'static str, value: &str| {
                    value.trim().parse::<Timestamp>().map_err(|_| WindowError::Time { field, value: value.to_string() })
                };
                let (start, end) = (time(names.start, start)?, time(names.end, end)?);
                if end <= start {
                    return Err(WindowError::EndFirst { start: names.start, end: names.end });
                }
                if end.duration_since(start) > LONGEST {
                    return Err(WindowError::TooLong { field: names.end });
                }
                if now.is_some_and(|now| end <= now) {
                    return Err(WindowError::Past { field: names.end });
                }
                When::Once { start, end }
            }
            (None, None, Some(schedule), Some(duration)) => {
                let cron: croner::Cron = schedule.trim().parse().map_err(|e: croner::errors::CronError| {
                    WindowError::Schedule { value: schedule.clone(), detail: e.to_string() }
                })?;
                if schedule.split_whitespace().count() != 5 {
                    return Err(WindowError::Schedule { value: schedule.clone(), detail: "not five fields".into() });
                }
                // A schedule that never runs (30 February) would be searched for at every cycle.
                let epoch = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH;
                if let Err(e) = cron.find_next_occurrence(&epoch, false) {
                    return Err(WindowError::Schedule { value: schedule.clone(), detail: e.to_string() });
                }
                let zone = match &spec.time_zone {
                    None => chrono_tz::UTC,
                    Some(z) => {
                        z.trim().parse().map_err(|_| WindowError::Zone { field: names.time_zone, value: z.clone() })?
                    }
                };
                let d = parse_duration(duration).ok_or_else(|| WindowError::Duration { value: duration.clone() })?;
                if d > LONGEST {
                    return Err(WindowError::TooLong { field: "duration" });
                }
                When::Every { schedule: schedule.trim().to_string(), cron: Box::new(cron), zone, duration: d }
            }
            _ => return Err(shape),
        };
        Ok(Window { id, clusters, when, comment: spec.comment.clone(), created_by, updated_at: now, from_file })
    }

    /// When the window that holds at `now` for `cluster` ends; None when none holds.
    pub fn until(&self, now: Timestamp, cluster: &str) -> Option<Timestamp> {
        if !self.clusters.includes(cluster) {
            return None;
        }
        match &self.when {
            When::Once { start, end } => (*start <= now && now < *end).then_some(*end),
            When::Every { cron, zone, duration, .. } => {
                let start = last_run(cron, *zone, now, *duration)?;
                let end = start.checked_add(*duration).ok()?;
                (now < end).then_some(end)
            }
        }
    }

    /// Whether it is over for good (a one-off window past its end).
    pub fn over(&self, now: Timestamp) -> bool {
        matches!(self.when, When::Once { end, .. } if end <= now)
    }

    /// Where it stands: `active` (for some cluster), `pending`, `expired`; a recurring
    /// window between its runs is `scheduled`.
    pub fn state(&self, now: Timestamp) -> &'static str {
        match &self.when {
            When::Once { end, .. } if *end <= now => "expired",
            When::Once { start, .. } if *start > now => "pending",
            When::Once { .. } => "active",
            When::Every { cron, zone, duration, .. } => match last_run(cron, *zone, now, *duration) {
                Some(start) if start.checked_add(*duration).is_ok_and(|end| now < end) => "active",
                _ => "scheduled",
            },
        }
    }
}

/// A duration above 0: `2h`, `90m`, `1h30m`, `7d` (days of 24 hours), or ISO 8601 (`PT2H`).
pub fn parse_duration(text: &str) -> Option<SignedDuration> {
    let t = text.trim();
    let d = match t.strip_suffix('d').and_then(|days| days.trim().parse::<i64>().ok()) {
        Some(days) => SignedDuration::from_secs(days.checked_mul(86_400)?),
        None => t.parse::<SignedDuration>().ok()?,
    };
    d.is_positive().then_some(d)
}

/// The latest run of `cron` in `zone` at or before `now` and after `now - within`, if any.
fn last_run(cron: &croner::Cron, zone: chrono_tz::Tz, now: Timestamp, within: SignedDuration) -> Option<Timestamp> {
    use chrono::TimeZone;
    let at = zone.timestamp_opt(now.as_second(), 0).single()?;
    let last = cron.find_previous_occurrence(&at, true).ok()?;
    let t = Timestamp::from_second(last.timestamp()).ok()?;
    (now.duration_since(t) < within).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn every(schedule: &str, zone: &str, duration: &str) -> Window {
        let spec = Spec {
            cluster: "edge-1".into(),
            schedule: Some(schedule.into()),
            time_zone: Some(zone.into()),
            duration: Some(duration.into()),
            ..Spec::default()
        };
        Window::from_spec("w".into(), &spec, API, "ops".into(), false, None).unwrap()
    }

    #[test]
    fn a_one_off_window_holds_from_its_start_to_its_end_for_its_clusters() {
        let spec = Spec {
            cluster: r#"{cluster=~"edge-.*"}"#.into(),
            start: Some("2026-12-06T02:00:00+01:00".into()),
            end: Some("2026-12-06T04:00:00+01:00".into()),
            ..Spec::default()
        };
        let w = Window::from_spec("w".into(), &spec, FILE, "the configuration file".into(), true, None).unwrap();
        assert_eq!(w.until(t("2026-12-06T00:59:59Z"), "edge-1"), None);
        assert_eq!(w.until(t("2026-12-06T01:00:00Z"), "edge-1"), Some(t("2026-12-06T03:00:00Z")));
        assert_eq!(w.until(t("2026-12-06T01:00:00Z"), "core"), None, "another cluster");
        assert_eq!(w.until(t("2026-12-06T03:00:00Z"), "edge-1"), None, "the end is not in it");
        assert_eq!(w.clusters.to_string(), r#"{cluster=~"edge-.*"}"#);
        assert_eq!(w.state(t("2026-12-06T03:00:00Z")), "expired");
    }

    /// Every Sunday 02:00 in Europe/Paris for 2 h: at 01:00 UTC in winter, at 00:00 UTC in
    /// summer, once on the night 02:00 happens twice; the night it does not happen at all is the
    /// next test.
    #[test]
    fn a_recurring_window_opens_at_the_right_instant_across_daylight_saving_changes() {
        let w = every("0 2 * * 0", "Europe/Paris", "2h");
        // Winter: 2027-03-21 02:00 CET = 01:00Z.
        assert_eq!(w.until(t("2027-03-21T00:59:00Z"), "edge-1"), None);
        assert_eq!(w.until(t("2027-03-21T01:00:00Z"), "edge-1"), Some(t("2027-03-21T03:00:00Z")));
        assert_eq!(w.until(t("2027-03-21T02:59:59Z"), "edge-1"), Some(t("2027-03-21T03:00:00Z")));
        assert_eq!(w.until(t("2027-03-21T03:00:00Z"), "edge-1"), None);
        // Summer: 2027-04-04 02:00 CEST = 00:00Z.
        assert_eq!(w.until(t("2027-04-03T23:59:00Z"), "edge-1"), None);
        assert_eq!(w.until(t("2027-04-04T00:00:00Z"), "edge-1"), Some(t("2027-04-04T02:00:00Z")));
        // Autumn: 2027-10-31 02:00 happens twice (CEST, then CET once the clocks went back):
        // the window opens at the first, 00:00Z, and is not opened again an hour later.
        assert_eq!(w.until(t("2027-10-30T23:59:00Z"), "edge-1"), None);
        assert_eq!(w.until(t("2027-10-31T00:00:00Z"), "edge-1"), Some(t("2027-10-31T02:00:00Z")));
        assert_eq!(w.until(t("2027-10-31T01:30:00Z"), "edge-1"), Some(t("2027-10-31T02:00:00Z")));
        assert_eq!(w.until(t("2027-10-31T02:00:00Z"), "edge-1"), None);
        // Not on weekdays.
        assert_eq!(w.until(t("2027-03-22T01:30:00Z"), "edge-1"), None);
        assert_eq!(w.state(t("2027-03-22T01:30:00Z")), "scheduled");
    }

    /// On the night the clocks go forward (28 March 2027, 02:00 does not exist), at 03:00
    /// summer time, the first moment after the gap, as cron runs a job whose time the change
    /// skipped.
    #[test]
    fn the_spring_gap_opens_the_window_after_the_gap() {
        let w = every("0 2 * * 0", "Europe/Paris", "2h");
        let opened = (0..6 * 60)
            .map(|m| t("2027-03-27T22:00:00Z") + SignedDuration::from_mins(m))
            .find(|now| w.until(*now, "edge-1").is_some());
        assert_eq!(opened, Some(t("2027-03-28T01:00:00Z")), "03:00 CEST, the first instant after the gap");
    }

    #[test]
    fn bad_windows_are_refused_naming_the_field() {
        let refused = |spec: Spec, names: Names| {
            Window::from_spec("w".into(), &spec, names, "x".into(), false, Some(t("2026-12-01T00:00:00Z")))
                .unwrap_err()
                .to_string()
        };
        let once = |start: &str, end: &str| Spec {
            cluster: "c".into(),
            start: Some(start.into()),
            end: Some(end.into()),
            ..Spec::default()
        };
        assert_eq!(
            refused(once("2026-12-06T04:00:00Z", "2026-12-06T02:00:00Z"), API),
            "field `endsAt`: not after `startsAt`"
        );
        assert_eq!(
            refused(once("2026-12-06T04:00:00Z", "2028-12-06T02:00:00Z"), FILE),
            "field `end`: a window lasts at most a year"
        );
        assert_eq!(refused(once("2026-11-06T04:00:00Z", "2026-11-07T02:00:00Z"), API), "field `endsAt`: already past");
        assert!(
            refused(once("tomorrow", "2026-12-07T02:00:00Z"), FILE).starts_with("field `start`: \"tomorrow\" is not")
        );
        let recurring = |schedule: &str, zone: &str, duration: &str| Spec {
            cluster: "c".into(),
            schedule: Some(schedule.into()),
            time_zone: Some(zone.into()),
            duration: Some(duration.into()),
            ..Spec::default()
        };
        assert!(refused(recurring("0 2 * *", "UTC", "2h"), API).starts_with("field `schedule`:"));
        assert!(refused(recurring("0 0 30 2 *", "UTC", "2h"), API).starts_with("field `schedule`:"), "never runs");
        assert!(refused(recurring("0 2 * * 0", "UTC", "200000000000000d"), API).starts_with("field `duration`:"));
        assert!(refused(recurring("0 2 * * 0", "Mars/Olympus", "2h"), API).starts_with("field `timeZone`:"));
        assert!(refused(recurring("0 2 * * 0", "UTC", "-2h"), API).starts_with("field `duration`:"));
        assert_eq!(
            refused(recurring("0 2 * * 0", "UTC", "400d"), API),
            "field `duration`: a window lasts at most a year"
        );
        assert!(refused(Spec { cluster: "c".into(), ..Spec::default() }, FILE).starts_with("give `start` and `end`"));
        assert!(
            refused(
                Spec { cluster: "{pod=\"x\"}".into(), ..once("2026-12-06T02:00:00Z", "2026-12-06T04:00:00Z") },
                API
            )
            .starts_with("field `cluster`: a window's matchers are over `cluster` only")
        );
        assert!(
            refused(Spec { cluster: String::new(), ..once("2026-12-06T02:00:00Z", "2026-12-06T04:00:00Z") }, API)
                .starts_with("field `cluster`: name a cluster")
        );
    }
}
