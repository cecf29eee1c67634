//! Jobs that failed and CronJobs that stopped running, from the optional `batch/v1` reads.

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use crate::collect::kinds::{cronjob::CronJob, job::Job};

/// A Job whose `Failed` condition is True.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JobHealth {
    pub namespace: String,
    pub name: String,
    /// Its CronJob, empty for a Job of its own.
    pub owner: String,
    /// The condition's reason and message.
    pub why: String,
    /// A newer Job of the same CronJob completed since: the failure is history, not a problem.
    pub superseded: bool,
}

/// A CronJob that is not suspended.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CronJobHealth {
    pub namespace: String,
    pub name: String,
    pub schedule: String,
    pub last_schedule: Option<Timestamp>,
    /// Seconds since `lastScheduleTime`.
    pub last_schedule_age: Option<i64>,
    /// Seconds from the last schedule (or, never scheduled, from its creation) to the run due
    /// next after it: the schedule's period there.
    pub interval: Option<i64>,
    /// Older than twice that period: at least one run was due and did not happen.
    pub missed: bool,
    /// The reasons (`why`): English in JSON.
    #[serde(serialize_with = "super::why::english")]
    pub why: Vec<crate::lang::Message>,
}

/// A Job still running: its pods active, neither Complete nor Failed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunningJob {
    pub namespace: String,
    pub name: String,
    /// Its CronJob, empty for a Job of its own.
    pub owner: String,
    /// Seconds since `status.startTime`.
    pub seconds: i64,
}

/// A Job running longer than this has not completed in time.
pub const JOB_TOO_LONG: SignedDuration = SignedDuration::from_hours(12);

impl RunningJob {
    pub fn too_long(&self) -> bool {
        self.seconds > JOB_TOO_LONG.as_secs()
    }
}

/// The Jobs with active pods that are neither Complete nor Failed, with how long they have run.
pub fn running_jobs(jobs: &[Job], now: Timestamp) -> Vec<RunningJob> {
    jobs.iter()
        .filter(|j| j.active > 0 && !j.complete && j.failed.is_none())
        .filter_map(|j| {
            Some(RunningJob {
                namespace: j.namespace.clone(),
                name: j.name.clone(),
                owner: j.owner.clone(),
                seconds: now.duration_since(j.started?).as_secs().max(0),
            })
        })
        .collect()
}

/// Every Job with a `Failed` condition, each marked superseded when a Job of the same CronJob
/// created after it completed.
pub fn failed_jobs(jobs: &[Job]) -> Vec<JobHealth> {
    jobs.iter()
        .filter_map(|j| {
            let why = j.failed.clone()?;
            let superseded = !j.owner.is_empty()
                && jobs.iter().any(|other| {
                    other.complete
                        && other.namespace == j.namespace
                        && other.owner == j.owner
                        && matches!((other.created, j.created), (Some(a), Some(b)) if a > b)
                });
            Some(JobHealth {
                namespace: j.namespace.clone(),
                name: j.name.clone(),
                owner: j.owner.clone(),
                why,
                superseded,
            })
        })
        .collect()
}

/// The CronJobs that are not suspended, with how long since each last ran against its schedule.
pub fn cronjobs(list: &[CronJob], now: Timestamp) -> Vec<CronJobHealth> {
    list.iter()
        .filter(|c| !c.suspended)
        .map(|c| {
            // The run due after the last schedule (never scheduled: after its creation), and the
            // schedule's period there: from that run to the one after it.
            let base = c.last_schedule.or(c.created);
            let due = base.map(|b| {
                let first = next_after(&c.schedule, c.time_zone.as_deref(), b)?;
                let second = next_after(&c.schedule, c.time_zone.as_deref(), first)?;
                Ok::<_, ScheduleError>((first, second.duration_since(first).as_secs()))
            });
            let (due, interval, error) = match due {
                Some(Ok((first, period))) => (Some(first), Some(period), None),
                Some(Err(e)) => (None, None, Some(e)),
                None => (None, None, None),
            };
            let age = |t: Timestamp| now.duration_since(t).as_secs();
            // A run due more than a period ago that did not happen: at least one was missed.
            let missed = match (due, interval) {
                (Some(d), Some(i)) => i > 0 && age(d) > i,
                _ => false,
            };
            let mut why = Vec::new();
            if missed {
                let (scheduled, ago) = match c.last_schedule {
                    Some(t) => ("last", words(age(t))),
                    None => ("never", words(age(base.expect("a base")))),
                };
                why.push(super::why::ours(
                    "why-cronjob-missed",
                    &[
                        ("scheduled", scheduled.into()),
                        ("ago", ago.into()),
                        ("schedule", format!("{:?}", c.schedule).into()),
                        ("every", words(interval.unwrap_or_default()).into()),
                    ],
                ));
            }
            if let Some(e) = error {
                why.push(crate::lang::Message::verbatim(e.to_string()));
            }
            CronJobHealth {
                namespace: c.namespace.clone(),
                name: c.name.clone(),
                schedule: c.schedule.clone(),
                last_schedule: c.last_schedule,
                last_schedule_age: c.last_schedule.map(age),
                interval,
                missed,
                why,
            }
        })
        .collect()
}

/// `90 min`, `2 h`, `3 days`: whole units, the largest that fits twice.
fn words(seconds: i64) -> crate::lang::Message {
    let s = seconds.max(0);
    let (count, unit) = if s >= 2 * 86_400 {
        (s / 86_400, "days")
    } else if s >= 2 * 3_600 {
        (s / 3_600, "h")
    } else if s >= 2 * 60 {
        (s / 60, "min")
    } else {
        (s, "s")
    };
    super::why::ours("duration-words", &[("count", count.into()), ("unit", unit.into())])
}

/// The first run of `schedule` strictly after `after`, in `zone` (UTC when None), as the
/// CronJob controller reads it: five fields, or one of `@yearly`, `@annually`, `@monthly`,
/// `@weekly`, `@daily`, `@midnight`, `@hourly`, `@every <duration>`.
pub fn next_after(schedule: &str, zone: Option<&str>, after: Timestamp) -> Result<Timestamp, ScheduleError> {
    use chrono::TimeZone;
    let schedule = schedule.trim();
    if let Some(every) = schedule.strip_prefix("@every ") {
        let d = crate::config::parse_duration(every.trim())
            .map_err(|source| ScheduleError::Every { schedule: schedule.to_string(), source })?;
        let d = SignedDuration::try_from_secs_f64(d)?;
        return Ok(after.checked_add(d)?);
    }
    let fields = match schedule {
        "@yearly" | "@annually" => "0 0 1 1 *",
        "@monthly" => "0 0 1 * *",
        "@weekly" => "0 0 * * 0",
        "@daily" | "@midnight" => "0 0 * * *",
        "@hourly" => "0 * * * *",
        other => other,
    };
    let cron: croner::Cron =
        fields.parse().map_err(|source| ScheduleError::Cron { schedule: schedule.to_string(), source })?;
    let tz: chrono_tz::Tz = match zone {
        None => chrono_tz::UTC,
        Some(z) => z.parse().map_err(|_| ScheduleError::UnknownZone { zone: z.to_string() })?,
    };
    let start =
        tz.timestamp_opt(after.as_second(), 0).single().ok_or(ScheduleError::Unplaceable { after, zone: tz })?;
    let next = cron
        .find_next_occurrence(&start, false)
        .map_err(|source| ScheduleError::NoNextRun { schedule: schedule.to_string(), source })?;
    Ok(Timestamp::from_second(next.timestamp())?)
}

/// The next run of a CronJob's schedule cannot be known.
#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    #[error("schedule {schedule:?} cannot be read: {source}")]
    Every { schedule: String, source: crate::error::DurationError },
    #[error("schedule {schedule:?} cannot be read: {source}")]
    Cron { schedule: String, source: croner::errors::CronError },
    #[error("time zone {zone:?} is not known")]
    UnknownZone { zone: String },
    #[error("{after} cannot be placed in {zone}")]
    Unplaceable { after: Timestamp, zone: chrono_tz::Tz },
    #[error("schedule {schedule:?} has no next run: {source}")]
    NoNextRun { schedule: String, source: croner::errors::CronError },
    /// The run would be outside the times that can be written.
    #[error("{0}")]
    OutOfRange(#[from] jiff::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn the_next_run_of_a_schedule() {
        assert_eq!(next_after("*/5 * * * *", None, t("2026-11-30T10:00:00Z")).unwrap(), t("2026-11-30T10:05:00Z"));
        assert_eq!(next_after("@hourly", None, t("2026-11-30T10:00:00Z")).unwrap(), t("2026-11-30T11:00:00Z"));
        assert_eq!(next_after("@every 90m", None, t("2026-11-30T10:00:00Z")).unwrap(), t("2026-11-30T11:30:00Z"));
        // 02:00 in Paris is 01:00 UTC in winter.
        assert_eq!(
            next_after("0 2 * * *", Some("Europe/Paris"), t("2026-11-30T10:00:00Z")).unwrap(),
            t("2026-12-01T01:00:00Z")
        );
        // Weekdays at 09:00: after Friday's run, Monday's.
        assert_eq!(next_after("0 9 * * 1-5", None, t("2026-12-04T09:00:00Z")).unwrap(), t("2026-12-07T09:00:00Z"));
        assert!(
            next_after("61 * * * *", None, t("2026-11-30T10:00:00Z"))
                .unwrap_err()
                .to_string()
                .contains("cannot be read")
        );
        assert!(
            next_after("0 * * * *", Some("Mars/Olympus"), t("2026-11-30T10:00:00Z"))
                .unwrap_err()
                .to_string()
                .contains("not known")
        );
    }

    fn cron(schedule: &str, last: Option<&str>) -> CronJob {
        CronJob {
            namespace: "ops".into(),
            name: "backup".into(),
            schedule: schedule.into(),
            time_zone: None,
            suspended: false,
            created: Some(t("2026-11-01T00:00:00Z")),
            last_schedule: last.map(t),
        }
    }

    #[test]
    fn a_cronjob_misses_when_the_run_due_is_older_than_its_period() {
        let now = t("2026-11-30T10:20:00Z");
        let on_time = cronjobs(&[cron("*/5 * * * *", Some("2026-11-30T10:15:00Z"))], now);
        assert_eq!(
            (on_time[0].interval, on_time[0].missed, on_time[0].last_schedule_age),
            (Some(300), false, Some(300))
        );
        let exactly_twice = cronjobs(&[cron("*/5 * * * *", Some("2026-11-30T10:10:00Z"))], now);
        assert!(!exactly_twice[0].missed, "ten minutes is not older than twice five");
        let late = cronjobs(&[cron("*/5 * * * *", Some("2026-11-30T10:09:00Z"))], now);
        assert!(late[0].missed);
        let said = crate::lang::Lang::En.say(&late[0].why[0]);
        assert!(said.contains("last scheduled 11 min ago"), "{said}");
        let french = crate::lang::Lang::Fr.say(&late[0].why[0]);
        assert!(french.contains("planifié pour la dernière fois il y a 11 min"), "{french}");
        let never = cronjobs(&[cron("@daily", None)], now);
        assert!(never[0].missed && never[0].last_schedule_age.is_none(), "{never:?}");
        assert_eq!(never[0].interval, Some(86_400), "the schedule's period, also when never scheduled");
        // Made a minute before its first run: that run is due at midnight, and missed only once
        // a whole period has passed after it, not two minutes after the CronJob was made.
        let mut fresh = cron("@daily", None);
        fresh.created = Some(t("2026-11-29T23:59:00Z"));
        let early = cronjobs(&[fresh.clone()], t("2026-11-30T00:30:00Z"));
        assert_eq!((early[0].interval, early[0].missed), (Some(86_400), false));
        assert!(cronjobs(&[fresh], t("2026-12-01T00:01:00Z"))[0].missed);
        let mut suspended = cron("*/5 * * * *", Some("2026-11-01T00:00:00Z"));
        suspended.suspended = true;
        assert!(cronjobs(&[suspended], now).is_empty());
    }

    #[test]
    fn a_failed_job_is_history_once_a_newer_run_completed() {
        let job = |name: &str, created: &str, failed: bool, complete: bool| Job {
            active: 0,
            started: None,
            namespace: "ops".into(),
            name: name.into(),
            owner: "backup".into(),
            created: Some(t(created)),
            failed: failed.then(|| "BackoffLimitExceeded: Job has reached the specified backoff limit".into()),
            complete,
        };
        let failed = failed_jobs(&[job("backup-1", "2026-11-30T09:00:00Z", true, false)]);
        assert!(!failed[0].superseded);
        let later = failed_jobs(&[
            job("backup-1", "2026-11-30T09:00:00Z", true, false),
            job("backup-2", "2026-11-30T10:00:00Z", false, true),
        ]);
        assert_eq!(later.len(), 1);
        assert!(later[0].superseded);
        let earlier = failed_jobs(&[
            job("backup-0", "2026-11-30T08:00:00Z", false, true),
            job("backup-1", "2026-11-30T09:00:00Z", true, false),
        ]);
        assert!(!earlier[0].superseded, "an older success does not clear a newer failure");
    }
}
