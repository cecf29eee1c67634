//! What the optional reads of budgets, quotas and volumes say: disruption budgets short of
//! healthy pods (a node drain hangs on them), namespace quotas nearly full, full or over, and
//! volumes in error.

use std::sync::Arc;

use serde::Serialize;

use crate::collect::kinds::{pdb::Pdb, pv::Pv, quota::Quota};

/// A PodDisruptionBudget.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PdbHealth {
    pub namespace: String,
    pub name: String,
    pub current_healthy: i64,
    pub desired_healthy: i64,
    pub disruptions_allowed: i64,
    pub expected_pods: i64,
    /// Fewer healthy pods than it asks for (once its controller has seen it).
    pub short: bool,
}

/// How full one resource of a quota is, when it is worth saying.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fullness {
    /// 90 % or more.
    AlmostFull,
    /// Exactly all of it: new objects that would need more are refused.
    Full,
    /// More than all of it (the quota was lowered under what exists).
    Exceeded,
}

/// One resource of a ResourceQuota, counted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QuotaHealth {
    pub namespace: String,
    pub quota: String,
    pub resource: String,
    /// In base units: cores, bytes, counts.
    pub hard: f64,
    pub used: f64,
    /// None below 90 %, or with a hard limit of 0 (nothing may be made: a choice, not a fault).
    pub fullness: Option<Fullness>,
}

impl QuotaHealth {
    /// Used over hard, in percent (0 for a hard limit of 0).
    pub fn percent(&self) -> f64 {
        if self.hard > 0.0 { self.used / self.hard * 100.0 } else { 0.0 }
    }
}

/// How far the quotas may promise past what the nodes give before it is said (the
/// kubernetes-mixin's threshold).
pub const QUOTA_OVERCOMMIT: f64 = 1.5;

/// What the namespaces' quotas promise of CPU or memory, against what the Ready, schedulable
/// nodes give: quotas that together promise far more than the cluster has cannot all be used.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QuotaCommitment {
    /// `cpu` or `memory`.
    pub resource: &'static str,
    /// The quotas' hard limits summed, in cores or bytes: each quota's smaller of `cpu` and
    /// `requests.cpu` (`memory`, `requests.memory`).
    pub hard: f64,
    /// What the nodes give, in the same unit.
    pub allocatable: f64,
    /// More than [`QUOTA_OVERCOMMIT`] times it.
    pub overcommitted: bool,
}

impl QuotaCommitment {
    /// The hard limits over allocatable, in percent.
    pub fn percent(&self) -> f64 {
        if self.allocatable > 0.0 { self.hard / self.allocatable * 100.0 } else { 0.0 }
    }

    /// The arguments of its rule's summary: the limits and allocatable as Kubernetes writes
    /// quantities, and the percent.
    pub fn args(&self) -> Vec<(&'static str, crate::lang::Arg)> {
        let said = |v: f64| crate::lang::quantity(self.resource, v);
        vec![
            ("hard", said(self.hard).into()),
            ("allocatable", said(self.allocatable).into()),
            ("percent", (self.percent().round() as i64).into()),
        ]
    }

    /// Its rule's messages (`rule-cpu-quota-overcommit`).
    pub fn words(&self) -> String {
        format!("rule-{}-quota-overcommit", self.resource)
    }
}

/// What the quotas promise of each of CPU and memory that some quota limits; `allocatable` in
/// millicores and bytes.
pub fn commitments(quotas: &[QuotaHealth], cpu_allocatable: i64, memory_allocatable: i64) -> Vec<QuotaCommitment> {
    let mut out = Vec::new();
    for (resource, names, allocatable) in [
        ("cpu", ["cpu", "requests.cpu"], cpu_allocatable as f64 / 1000.0),
        ("memory", ["memory", "requests.memory"], memory_allocatable as f64),
    ] {
        // Each quota's smaller limit of the two names.
        let mut each: std::collections::BTreeMap<(&str, &str), f64> = std::collections::BTreeMap::new();
        for q in quotas.iter().filter(|q| names.contains(&q.resource.as_str())) {
            let e = each.entry((&q.namespace, &q.quota)).or_insert(f64::INFINITY);
            *e = e.min(q.hard);
        }
        if each.is_empty() {
            continue;
        }
        let hard: f64 = each.values().sum();
        let overcommitted = allocatable > 0.0 && hard > QUOTA_OVERCOMMIT * allocatable;
        out.push(QuotaCommitment { resource, hard, allocatable, overcommitted });
    }
    out
}

/// A PersistentVolume: its record, shared with the cycle's read (and, in watch mode, with its
/// store and the last cycle: compared by address first), and whether it is in error.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PvHealth {
    /// Its name, phase, claim (`namespace/name`, empty when none) and why.
    #[serde(flatten)]
    pub volume: Arc<Pv>,
    /// Failed or Pending.
    pub in_error: bool,
}

pub fn pdbs(list: &[Pdb]) -> Vec<PdbHealth> {
    list.iter()
        .map(|p| PdbHealth {
            namespace: p.namespace.clone(),
            name: p.name.clone(),
            current_healthy: p.current_healthy,
            desired_healthy: p.desired_healthy,
            disruptions_allowed: p.disruptions_allowed,
            expected_pods: p.expected_pods,
            short: p.observed && p.current_healthy < p.desired_healthy,
        })
        .collect()
}

/// Each resource of each quota the controller has counted; a quantity that does not parse
/// makes a line of `unreadable` instead.
pub fn quotas(list: &[std::sync::Arc<Quota>], unreadable: &mut Vec<String>) -> Vec<QuotaHealth> {
    let mut out = Vec::new();
    for q in list {
        for r in &q.resources {
            let (hard, used) = match (&r.hard, &r.used) {
                (Ok(hard), Some(Ok(used))) => (*hard, *used),
                (_, None) => continue,
                (Err(bad), _) | (_, Some(Err(bad))) => {
                    unreadable.push(format!(
                        "ResourceQuota {}/{}: {} is not a quantity ({bad:?})",
                        q.namespace, q.name, r.resource
                    ));
                    continue;
                }
            };
            let share = if hard > 0.0 { used / hard } else { 0.0 };
            let fullness = if hard <= 0.0 || share < 0.9 {
                None
            } else if share > 1.0 {
                Some(Fullness::Exceeded)
            } else if share == 1.0 {
                Some(Fullness::Full)
            } else {
                Some(Fullness::AlmostFull)
            };
            out.push(QuotaHealth {
                namespace: q.namespace.clone(),
                quota: q.name.clone(),
                resource: r.resource.clone(),
                hard,
                used,
                fullness,
            });
        }
    }
    out
}

pub fn pvs(list: Vec<Arc<Pv>>) -> Vec<PvHealth> {
    list.into_iter().map(|v| PvHealth { in_error: v.phase == "Failed" || v.phase == "Pending", volume: v }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::kinds::quota::QuotaResource;

    #[test]
    fn each_quota_resource_at_the_highest_level_that_applies() {
        let r = |resource: &str, hard: f64, used: f64| QuotaResource {
            resource: resource.into(),
            hard: Ok(hard),
            used: Some(Ok(used)),
        };
        let q = Quota {
            namespace: "shop".into(),
            name: "team".into(),
            resources: vec![
                r("pods", 10.0, 8.0),
                r("requests.cpu", 2.0, 1.8),
                r("requests.memory", 4.0, 4.0),
                r("services", 1.0, 3.0),
                r("secrets", 0.0, 0.0),
                QuotaResource { resource: "limits.cpu".into(), hard: Err("lots".into()), used: Some(Ok(1.0)) },
                QuotaResource { resource: "configmaps".into(), hard: Ok(5.0), used: None },
            ],
        };
        let mut unreadable = Vec::new();
        let got: Vec<(String, Option<Fullness>)> =
            quotas(&[std::sync::Arc::new(q)], &mut unreadable).into_iter().map(|h| (h.resource, h.fullness)).collect();
        assert_eq!(
            got,
            [
                ("pods".to_string(), None),
                ("requests.cpu".to_string(), Some(Fullness::AlmostFull)),
                ("requests.memory".to_string(), Some(Fullness::Full)),
                ("services".to_string(), Some(Fullness::Exceeded)),
                ("secrets".to_string(), None),
            ]
        );
        assert_eq!(unreadable, ["ResourceQuota shop/team: limits.cpu is not a quantity (\"lots\")"]);
    }

    #[test]
    fn a_budget_is_short_only_once_its_controller_has_seen_it() {
        let pdb = |current: i64, observed: bool| Pdb {
            namespace: "shop".into(),
            name: "db".into(),
            current_healthy: current,
            desired_healthy: 2,
            disruptions_allowed: 0,
            expected_pods: 3,
            observed,
        };
        let got: Vec<bool> = pdbs(&[pdb(1, true), pdb(2, true), pdb(0, false)]).iter().map(|p| p.short).collect();
        assert_eq!(got, [true, false, false]);
    }

    #[test]
    fn a_volume_s_health_holds_its_record_and_is_written_as_before() {
        let record = |name: &str, phase: &str| {
            Arc::new(Pv { name: name.into(), phase: phase.into(), claim: "shop/data-0".into(), why: "no disk".into() })
        };
        let read = vec![record("pv-1", "Failed"), record("pv-2", "Bound")];
        let judged = pvs(read.clone());
        assert!(judged.iter().zip(&read).all(|(h, r)| Arc::ptr_eq(&h.volume, r)), "the records, not copies");
        assert_eq!(judged.iter().map(|h| h.in_error).collect::<Vec<_>>(), [true, false]);
        // What `check --output json` and the API say of a volume: the same fields in the same order.
        assert_eq!(
            serde_json::to_string(&judged[0]).unwrap(),
            r#"{"name":"pv-1","phase":"Failed","claim":"shop/data-0","why":"no disk","in_error":true}"#
        );
        // A record read again is equal to the one before, and one that changed is not.
        assert_eq!(pvs(vec![record("pv-2", "Bound")]), judged[1..]);
        assert_ne!(pvs(vec![record("pv-2", "Released")]), judged[1..]);
    }
}
