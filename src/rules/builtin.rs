//! What each built-in rule watches, read from a cycle's health.

use std::collections::{BTreeMap, HashSet};

use jiff::Timestamp;

use super::engine::{PodMemory, PodRef, RuleState, Transition};

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
use super::{
    AGGREGATED_API_UNAVAILABLE, CERTIFICATE_EXPIRING, CRASHLOOP_WINDOW, CRONJOB_MISSED, FLAPPING_CHANGES,
    HPA_METRICS_UNAVAILABLE, JOB_FAILED, MONITOR_UNREACHABLE, NODE_FLAPPING, NODE_NOT_READY, NODE_PRESSURE,
    Observation, POD_CRASH_LOOPING, POD_PENDING, POD_RESTARTING, POD_STUCK_TERMINATING, PVC_PENDING, RESTART_THRESHOLD,
    RESTART_WINDOW, ROLLOUT_STUCK, TERMINATING_PATIENCE, UNREACHABLE_AFTER, VERSION_SKEW, WORKLOAD_REPLICAS_MISSING,
};
use crate::health::memory::within;
use crate::health::{CERTIFICATE_URGENT, Health, PodHealth};
use crate::lang::{Arg, Message};

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn pod_labels(p: &PodHealth) -> BTreeMap<String, String> {
    labels(&[("namespace", &p.namespace), ("pod", &p.name), ("workload", &p.workload)])
}

/// The arguments of an alert's summary, said by its rule's message in each language.
fn args(args: &[(&'static str, Arg)]) -> Vec<(&'static str, Arg)> {
    args.to_vec()
}

fn pod_args(p: &PodHealth) -> Vec<(&'static str, Arg)> {
    vec![("namespace", (&p.namespace).into()), ("pod", (&p.name).into())]
}

fn workload_args(w: &crate::health::WorkloadHealth) -> Vec<(&'static str, Arg)> {
    vec![("kind", w.kind.as_str().into()), ("namespace", (&w.namespace).into()), ("workload", (&w.name).into())]
}

/// Why the pod is in trouble (the cluster's words), then its restarts (ours).
fn pod_description(p: &PodHealth) -> Message {
    let why = if p.why.is_empty() { String::new() } else { format!("{}; ", p.why.join("; ")) };
    Message::new("pod-description", &[("why", why.into()), ("restarts", p.restarts.into())])
}

impl RuleState {
    /// Evaluates every rule after a successful cycle, on its final health: what only earlier
    /// cycles tell (Ready changes, updates without progress) is already in it, derived with
    /// [`RuleState::memory`] by `health::assess_with`.
    pub fn observe(&mut self, now: Timestamp, cluster: &str, h: &Health) -> Vec<Transition> {
        let mut obs = Vec::new();
        for n in &h.nodes {
            let flapping = n.ready_transitions > FLAPPING_CHANGES;
            if flapping {
                obs.push(Observation {
                    rule: &NODE_FLAPPING,
                    labels: labels(&[("node", &n.name)]),
                    summary: args(&[("node", (&n.name).into()), ("changes", n.ready_transitions.into())]),
                    description: Message::verbatim(n.why.join("; ")),
                    escalate: false,
                });
            }
            if n.kubelet_skew {
                obs.push(Observation {
                    rule: &VERSION_SKEW,
                    labels: labels(&[("node", &n.name)]),
                    summary: args(&[
                        ("kubelet", (&n.kubelet_version).into()),
                        ("node", (&n.name).into()),
                        ("version", (&h.version).into()),
                    ]),
                    description: Message::new(&format!("{}.description", VERSION_SKEW.words), &[]),
                    escalate: false,
                });
            }
            // While the node flaps, that one alert tells it: not a not-ready alert each time.
            if !n.ready && !flapping {
                obs.push(Observation {
                    rule: &NODE_NOT_READY,
                    labels: labels(&[("node", &n.name)]),
                    summary: args(&[("node", (&n.name).into())]),
                    description: Message::verbatim(n.why.join("; ")),
                    escalate: false,
                });
            }
            for (condition, on) in &n.pressure {
                if *on && condition != "network" {
                    obs.push(Observation {
                        rule: &NODE_PRESSURE,
                        labels: labels(&[("node", &n.name), ("condition", condition)]),
                        summary: args(&[("node", (&n.name).into()), ("condition", condition.into())]),
                        description: Message::verbatim(n.why.join("; ")),
                        escalate: false,
                    });
                }
            }
        }

        // Each pod's memory is updated where it is: one lookup, no key made again for a pod
        // seen before (at 150,000 pods, rebuilding the table each cycle cost 300,000
        // allocations).
        for p in &h.pods {
            let update = |memory: &mut PodMemory| {
                memory.increases.retain(|(t, _)| within(now, *t, RESTART_WINDOW));
                let crashlooped = memory.crashloop_seen.is_some_and(|t| within(now, t, CRASHLOOP_WINDOW));
                (crashlooped, memory.increases.iter().map(|(_, n)| n).sum::<i64>())
            };
            let (crashlooped, increase) = match self.pods.get_mut(&PodRef(&p.namespace, &p.name)) {
                Some(memory) => {
                    *memory = remember(std::mem::take(memory), now, p);
                    update(memory)
                }
                None => {
                    let mut memory = PodMemory {
                        restarts: p.restarts,
                        increases: Vec::new(),
                        crashloop_seen: p.crashlooping.then_some(now),
                    };
                    let judged = update(&mut memory);
                    self.pods.insert((p.namespace.clone(), p.name.clone()), memory);
                    judged
                }
            };
            if crashlooped {
                obs.push(Observation {
                    rule: &POD_CRASH_LOOPING,
                    labels: pod_labels(p),
                    summary: args(&pod_args(p)),
                    description: if p.crashlooping { pod_description(p) } else { Message::verbatim(String::new()) },
                    escalate: false,
                });
            }
            if p.pending {
                obs.push(Observation {
                    rule: &POD_PENDING,
                    labels: pod_labels(p),
                    summary: args(&pod_args(p)),
                    description: pod_description(p),
                    escalate: false,
                });
            }
            if increase > RESTART_THRESHOLD && !crashlooped {
                obs.push(Observation {
                    rule: &POD_RESTARTING,
                    labels: pod_labels(p),
                    summary: args(&[pod_args(p).as_slice(), &[("restarts", increase.into())]].concat()),
                    description: pod_description(p),
                    escalate: false,
                });
            }
        }
        // Pods that are gone are forgotten, and their alerts resolve. Every pod of the cycle has
        // a memory now and a cycle's pods are distinct (its snapshot keeps one of each name), so
        // the table holds as many as the cycle has pods unless some are gone.
        if self.pods.len() != h.pods.len() {
            let present: HashSet<(&str, &str)> =
                h.pods.iter().map(|p| (p.namespace.as_str(), p.name.as_str())).collect();
            self.pods.retain(|(namespace, name), _| present.contains(&(namespace.as_str(), name.as_str())));
        }

        for w in h.workloads.iter().filter(|w| w.rollout_stuck) {
            obs.push(Observation {
                rule: &ROLLOUT_STUCK,
                labels: labels(&[("kind", w.kind.as_str()), ("namespace", &w.namespace), ("workload", &w.name)]),
                summary: args(&workload_args(w)),
                description: Message::verbatim(w.why.join("; ")),
                escalate: false,
            });
        }
        for e in h.expiring() {
            let k3s = h.version.contains("+k3s");
            let fix = match (e.certificate, k3s) {
                ("serving", true) => "serving-k3s",
                ("serving", false) => "serving",
                (_, true) => "client-k3s",
                (_, false) => "client",
            };
            let left = e.not_after.duration_since(h.time);
            obs.push(Observation {
                rule: &CERTIFICATE_EXPIRING,
                labels: labels(&[("certificate", e.certificate)]),
                summary: args(&[
                    ("certificate", e.certificate.into()),
                    ("date", Arg::Moment(e.not_after.as_second())),
                    ("when", crate::health::days_when(e.days).into()),
                    ("days", e.days.abs().into()),
                ]),
                description: Message::new(
                    &format!("{}.description", CERTIFICATE_EXPIRING.words),
                    &[("until", e.not_after.to_string().into()), ("fix", fix.into())],
                ),
                escalate: left < CERTIFICATE_URGENT,
            });
        }
        let patience = TERMINATING_PATIENCE.as_secs() as i64;
        for p in h.pods.iter().filter(|p| p.terminating.is_some_and(|s| s >= patience)) {
            obs.push(Observation {
                rule: &POD_STUCK_TERMINATING,
                labels: pod_labels(p),
                summary: args(
                    &[pod_args(p).as_slice(), &[("minutes", (p.terminating.unwrap_or_default() / 60).into())]].concat(),
                ),
                description: Message::verbatim(p.why.join("; ")),
                escalate: false,
            });
        }
        let jobs_read = h.extras.jobs.is_some();
        for j in h.extras.jobs.iter().flatten().filter(|j| !j.superseded) {
            obs.push(Observation {
                rule: &JOB_FAILED,
                labels: labels(&[("namespace", &j.namespace), ("job", &j.name), ("owner", &j.owner)]),
                summary: args(&[
                    ("namespace", (&j.namespace).into()),
                    ("job", (&j.name).into()),
                    ("of", if j.owner.is_empty() { "none" } else { "cronjob" }.into()),
                    ("owner", (&j.owner).into()),
                ]),
                description: Message::verbatim(j.why.clone()),
                escalate: false,
            });
        }
        let cronjobs_read = h.extras.cronjobs.is_some();
        for c in h.extras.cronjobs.iter().flatten().filter(|c| c.missed) {
            obs.push(Observation {
                rule: &CRONJOB_MISSED,
                labels: labels(&[("namespace", &c.namespace), ("cronjob", &c.name)]),
                summary: args(&[("namespace", (&c.namespace).into()), ("cronjob", (&c.name).into())]),
                description: Message::verbatim(c.why.join("; ")),
                escalate: false,
            });
        }
        // A stuck rollout is told once, by its own alert, not also as missing replicas.
        for w in h.workloads.iter().filter(|w| w.unavailable > 0 && !w.rollout_stuck) {
            obs.push(Observation {
                rule: &WORKLOAD_REPLICAS_MISSING,
                labels: labels(&[("kind", w.kind.as_str()), ("namespace", &w.namespace), ("workload", &w.name)]),
                summary: args(
                    &[workload_args(w).as_slice(), &[("missing", w.unavailable.into()), ("desired", w.desired.into())]]
                        .concat(),
                ),
                description: Message::verbatim(w.why.join("; ")),
                escalate: false,
            });
        }
        for c in h.pvcs.iter().filter(|c| c.stuck) {
            obs.push(Observation {
                rule: &PVC_PENDING,
                labels: labels(&[("namespace", &c.namespace), ("pvc", &c.name)]),
                summary: args(&[("namespace", (&c.namespace).into()), ("pvc", (&c.name).into())]),
                description: Message::verbatim(c.why.join("; ")),
                escalate: false,
            });
        }
        // The optional reads: their rules are evaluated only when their read succeeded, so that
        // a read that is not granted, or fails, resolves nothing.
        let apiservices_read = h.extras.apiservices.is_some();
        for a in h.extras.apiservices.iter().flatten().filter(|a| !a.available) {
            obs.push(Observation {
                rule: &AGGREGATED_API_UNAVAILABLE,
                labels: labels(&[("apiservice", &a.name), ("service", &a.service)]),
                summary: args(&[("apiservice", (&a.name).into())]),
                description: Message::verbatim(format!("{} (service {})", a.why(), a.service)),
                escalate: false,
            });
        }
        let hpas_read = h.extras.hpas.is_some();
        for x in h.extras.hpas.iter().flatten().filter(|x| !x.scaling_active) {
            obs.push(Observation {
                rule: &HPA_METRICS_UNAVAILABLE,
                labels: labels(&[("namespace", &x.namespace), ("hpa", &x.name)]),
                summary: args(&[
                    ("namespace", (&x.namespace).into()),
                    ("hpa", (&x.name).into()),
                    ("reason", (&x.reason).into()),
                ]),
                description: Message::verbatim(x.message.clone()),
                escalate: false,
            });
        }
        self.failures = 0;
        // Namespaced access that may not list nodes: no node rule fires or resolves.
        let nodes_read = h.nodes_visible();
        let node_rules = [&NODE_FLAPPING, &VERSION_SKEW, &NODE_NOT_READY, &NODE_PRESSURE];
        // A namespace not read this cycle resolves none of its alerts.
        let unread: &[String] = h.extras.namespaced.as_ref().map_or(&[], |n| &n.unread);
        self.evaluate_where(
            now,
            cluster,
            obs,
            |alert| !alert.labels.get("namespace").is_some_and(|ns| unread.contains(ns)),
            |rule| {
                if node_rules.iter().any(|r| r.alertname == rule.alertname) {
                    nodes_read
                } else if rule.alertname == AGGREGATED_API_UNAVAILABLE.alertname {
                    apiservices_read
                } else if rule.alertname == HPA_METRICS_UNAVAILABLE.alertname {
                    hpas_read
                } else if rule.alertname == JOB_FAILED.alertname {
                    jobs_read
                } else if rule.alertname == CRONJOB_MISSED.alertname {
                    cronjobs_read
                } else {
                    true
                }
            },
        )
    }

    /// Evaluates the unreachable rule alone after a failed cycle: nothing else fires or resolves.
    pub fn observe_failure(&mut self, now: Timestamp, cluster: &str, message: &str) -> Vec<Transition> {
        self.failures += 1;
        let obs = if self.failures >= UNREACHABLE_AFTER {
            vec![Observation {
                rule: &MONITOR_UNREACHABLE,
                labels: BTreeMap::new(),
                summary: args(&[("cluster", cluster.into())]),
                description: Message::verbatim(message.to_string()),
                escalate: false,
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
