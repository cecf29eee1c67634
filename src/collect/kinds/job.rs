//! Jobs (`batch/v1`, optional): which failed, and which CronJob made them.

use serde::{Deserialize, Serialize};

use super::Kind;
use crate::collect::{FromApi, Meta, nullable};
use crate::collection::{About, Collection, Follow};

const ABOUT: About = About {
    name: "jobs",
    resource: "jobs.batch",
    list_kind: "JobList",
    api_version: "batch/v1",
    path: "/apis/batch/v1/jobs",
    namespaced: true,
    optional: true,
    follow: Follow::Whole,
};

impl Kind for Job {
    const COLLECTION: Collection = Collection::of(&ABOUT);
    fn namespace(&self) -> &str {
        &self.namespace
    }
}

impl FromApi for Job {
    type Raw = RawJob;
}

/// The compact record of a Job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub namespace: String,
    pub name: String,
    /// The CronJob that created it (its controller), empty for a Job of its own.
    pub owner: String,
    pub created: Option<jiff::Timestamp>,
    /// The `Failed` condition is True: its reason and message (`BackoffLimitExceeded: Job has
    /// reached the specified backoff limit`).
    pub failed: Option<String>,
    /// The `Complete` condition is True.
    pub complete: bool,
    /// `status.active`: its pods running now.
    #[serde(default)]
    pub active: i64,
    /// `status.startTime`.
    #[serde(default)]
    pub started: Option<jiff::Timestamp>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawJob {
    #[serde(default)]
    metadata: OwnedMeta,
    #[serde(default, deserialize_with = "nullable")]
    status: JobStatus,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct JobStatus {
    #[serde(deserialize_with = "nullable")]
    conditions: Vec<crate::collect::nodes::Condition>,
    #[serde(deserialize_with = "nullable")]
    active: i64,
    start_time: Option<String>,
}

/// `metadata` with the owner references.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct OwnedMeta {
    #[serde(flatten)]
    meta: Meta,
    #[serde(deserialize_with = "nullable")]
    owner_references: Vec<crate::collect::pods::OwnerReference>,
}

impl From<RawJob> for Job {
    fn from(raw: RawJob) -> Job {
        let holds = |kind: &str| raw.status.conditions.iter().find(|c| c.kind == kind && c.status == "True");
        let failed = holds("Failed").map(|c| {
            match (c.reason.as_deref().filter(|r| !r.is_empty()), c.message.as_deref().filter(|m| !m.is_empty())) {
                (Some(r), Some(m)) => format!("{r}: {m}"),
                (Some(x), None) | (None, Some(x)) => x.to_string(),
                (None, None) => "Failed".into(),
            }
        });
        let complete = holds("Complete").is_some();
        let owner = raw
            .metadata
            .owner_references
            .iter()
            .find(|o| o.controller && o.kind == "CronJob")
            .map(|o| o.name.clone())
            .unwrap_or_default();
        Job {
            created: crate::collect::parse_time(raw.metadata.meta.creation_timestamp.as_deref()),
            namespace: raw.metadata.meta.namespace,
            name: raw.metadata.meta.name,
            owner,
            failed,
            complete,
            active: raw.status.active,
            started: crate::collect::parse_time(raw.status.start_time.as_deref()),
        }
    }
}
