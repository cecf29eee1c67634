//! What each built-in rule watches, read from a cycle's health.

use std::collections::{BTreeMap, HashMap};

use jiff::{SignedDuration, Timestamp};

use super::engine::{PodMemory, RuleState, Transition};

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
use super::{
    AGGREGATED_API_UNAVAILABLE, CRASHLOOP_WINDOW, HPA_METRICS_UNAVAILABLE, MONITOR_UNREACHABLE, NODE_NOT_READY,
    NODE_PRESSURE, Observation, POD_CRASH_LOOPING, POD_PENDING, POD_RESTARTING, PVC_PENDING, RESTART_THRESHOLD,
    RESTART_WINDOW, UNREACHABLE_AFTER, WORKLOAD_REPLICAS_MISSING,
};
use crate::health::{Health, PodHealth};

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// Whether `t` lies in the window (now − window, now]: a sighting exactly one window old is out,
/// so a crash loop last seen at 12:00 no longer counts at 12:10.
fn within(now: Timestamp, t: Timestamp, window: std::time::Duration) -> bool {
    now.duration_since(t) < SignedDuration::try_from(window).expect("small windows")
}

fn pod_labels(p: &PodHealth) -> BTreeMap<String, String> {
    labels(&[("namespace", &p.namespace), ("pod", &p.name), ("workload", &p.workload)])
}

fn pod_description(p: &PodHealth) -> String {
    let mut parts = p.why.clone();
    parts.push(format!("restarts: {}", p.restarts));
    parts.join("; ")
}

impl RuleState {
    /// Evaluates every rule after a successful cycle.
    pub fn observe(&mut self, now: Timestamp, cluster: &str, h: &Health) -> Vec<Transition> {
        let mut obs = Vec::new();
        for n in &h.nodes {
            if !n.ready {
                obs.push(Observation {
                    rule: &NODE_NOT_READY,
                    labels: labels(&[("node", &n.name)]),
                    summary: format!("Node {} is not ready", n.name),
                    description: n.why.join("; "),
                });
            }
            for (condition, on) in &n.pressure {
                if *on && condition != "network" {
                    obs.push(Observation {
                        rule: &NODE_PRESSURE,
                        labels: labels(&[("node", &n.name), ("condition", condition)]),
                        summary: format!("Node {} is under {condition} pressure", n.name),
                        description: n.why.join("; "),
                    });
                }
            }
        }

        let mut pods = HashMap::with_capacity(h.pods.len());
        for p in &h.pods {
            let key = (p.namespace.clone(), p.name.clone());
            let mut memory = self.pods.remove(&key).map(|m| remember(m, now, p)).unwrap_or_else(|| PodMemory {
                restarts: p.restarts,
                increases: Vec::new(),
                crashloop_seen: p.crashlooping.then_some(now),
            });
            memory.increases.retain(|(t, _)| within(now, *t, RESTART_WINDOW));
            let crashlooped = memory.crashloop_seen.is_some_and(|t| within(now, t, CRASHLOOP_WINDOW));
            if crashlooped {
                obs.push(Observation {
                    rule: &POD_CRASH_LOOPING,
                    labels: pod_labels(p),
                    summary: format!("Pod {}/{} is crash-looping", p.namespace, p.name),
                    description: if p.crashlooping { pod_description(p) } else { String::new() },
                });
            }
            if p.pending {
                obs.push(Observation {
                    rule: &POD_PENDING,
                    labels: pod_labels(p),
                    summary: format!("Pod {}/{} is pending", p.namespace, p.name),
                    description: pod_description(p),
                });
            }
            let increase: i64 = memory.increases.iter().map(|(_, n)| n).sum();
            if increase > RESTART_THRESHOLD && !crashlooped {
                obs.push(Observation {
                    rule: &POD_RESTARTING,
                    labels: pod_labels(p),
                    summary: format!("Pod {}/{} restarted {increase} times in the last hour", p.namespace, p.name),
                    description: pod_description(p),
                });
            }
            pods.insert(key, memory);
        }
        // Pods that are gone are forgotten, and their alerts resolve.
        self.pods = pods;

        for w in h.workloads.iter().filter(|w| w.unavailable > 0) {
            obs.push(Observation {
                rule: &WORKLOAD_REPLICAS_MISSING,
                labels: labels(&[("kind", w.kind.as_str()), ("namespace", &w.namespace), ("workload", &w.name)]),
                summary: format!(
                    "{} {}/{} is missing {} of {} replicas",
                    w.kind.as_str(),
                    w.namespace,
                    w.name,
                    w.unavailable,
                    w.desired
                ),
                description: w.why.join("; "),
            });
        }
        for c in h.pvcs.iter().filter(|c| c.stuck) {
            obs.push(Observation {
                rule: &PVC_PENDING,
                labels: labels(&[("namespace", &c.namespace), ("pvc", &c.name)]),
                summary: format!("Claim {}/{} is stuck in Pending", c.namespace, c.name),
                description: c.why.join("; "),
            });
        }
        // The optional reads: their rules are evaluated only when their read succeeded, so that
        // a read that is not granted, or fails, resolves nothing.
        let apiservices_read = h.extras.apiservices.is_some();
        for a in h.extras.apiservices.iter().flatten().filter(|a| !a.available) {
            obs.push(Observation {
                rule: &AGGREGATED_API_UNAVAILABLE,
                labels: labels(&[("apiservice", &a.name), ("service", &a.service)]),
                summary: format!("APIService {} is not available", a.name),
                description: format!("{} (service {})", a.why(), a.service),
            });
        }
        let hpas_read = h.extras.hpas.is_some();
        for x in h.extras.hpas.iter().flatten().filter(|x| !x.scaling_active) {
            obs.push(Observation {
                rule: &HPA_METRICS_UNAVAILABLE,
                labels: labels(&[("namespace", &x.namespace), ("hpa", &x.name)]),
                summary: format!("HPA {}/{} cannot scale: {}", x.namespace, x.name, x.reason),
                description: x.message.clone(),
            });
        }
        self.failures = 0;
        self.evaluate(now, cluster, obs, |rule| {
            if rule.alertname == AGGREGATED_API_UNAVAILABLE.alertname {
                apiservices_read
            } else if rule.alertname == HPA_METRICS_UNAVAILABLE.alertname {
                hpas_read
            } else {
                true
            }
        })
    }

    /// Evaluates the unreachable rule alone after a failed cycle: nothing else fires or resolves.
    pub fn observe_failure(&mut self, now: Timestamp, cluster: &str, message: &str) -> Vec<Transition> {
        self.failures += 1;
        let obs = if self.failures >= UNREACHABLE_AFTER {
            vec![Observation {
                rule: &MONITOR_UNREACHABLE,
                labels: BTreeMap::new(),
                summary: format!("Cluster {cluster} cannot be read"),
                description: message.to_string(),
            }]
        } else {
            Vec::new()
        };
        self.evaluate(now, cluster, obs, |r| std::ptr::eq(r, &MONITOR_UNREACHABLE))
    }
}

/// A pod seen again: counts its restarts (a decrease is a reset) and its crash loop.
fn remember(mut m: PodMemory, now: Timestamp, p: &PodHealth) -> PodMemory {
    let increase = if p.restarts >= m.restarts { p.restarts - m.restarts } else { p.restarts };
    if increase > 0 {
        m.increases.push((now, increase));
    }
    m.restarts = p.restarts;
    if p.crashlooping {
        m.crashloop_seen = Some(now);
    }
    m
}
