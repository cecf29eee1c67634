//! CronJobs (`batch/v1`, optional): when each last ran, against its schedule.

use serde::{Deserialize, Serialize};

use super::Kind;
use crate::collect::{FromApi, Meta, nullable};
use crate::collection::{About, Collection, Follow};

const ABOUT: About = About {
    name: "cronjobs",
    resource: "cronjobs.batch",
    list_kind: "CronJobList",
    api_version: "batch/v1",
    path: "/apis/batch/v1/cronjobs",
    namespaced: true,
    optional: true,
    follow: Follow::Whole,
};

impl Kind for CronJob {
    const COLLECTION: Collection = Collection::of(&ABOUT);
    fn namespace(&self) -> &str {
        &self.namespace
    }
}

impl FromApi for CronJob {
    type Raw = RawCronJob;
}

/// The compact record of a CronJob.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CronJob {
    pub namespace: String,
    pub name: String,
    /// `spec.schedule`, as written (`*/5 * * * *`, `@hourly`).
    pub schedule: String,
    /// `spec.timeZone`: an IANA name; None for the controller's own time zone (UTC in the
    /// kube-controller-manager images).
    pub time_zone: Option<String>,
    pub suspended: bool,
    pub created: Option<jiff::Timestamp>,
    /// `status.lastScheduleTime`.
    pub last_schedule: Option<jiff::Timestamp>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawCronJob {
    #[serde(default)]
    metadata: Meta,
    #[serde(default, deserialize_with = "nullable")]
    spec: CronJobSpec,
    #[serde(default, deserialize_with = "nullable")]
    status: CronJobStatus,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct CronJobSpec {
    #[serde(deserialize_with = "nullable")]
    schedule: String,
    time_zone: Option<String>,
    #[serde(deserialize_with = "nullable")]
    suspend: bool,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct CronJobStatus {
    last_schedule_time: Option<String>,
}

impl From<RawCronJob> for CronJob {
    fn from(raw: RawCronJob) -> CronJob {
        CronJob {
            created: crate::collect::parse_time(raw.metadata.creation_timestamp.as_deref()),
            namespace: raw.metadata.namespace,
            name: raw.metadata.name,
            schedule: raw.spec.schedule,
            time_zone: raw.spec.time_zone.filter(|z| !z.is_empty()),
            suspended: raw.spec.suspend,
            last_schedule: crate::collect::parse_time(raw.status.last_schedule_time.as_deref()),
        }
    }
}
