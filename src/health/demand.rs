//! What the pods ask of each node, and of the cluster: a cross-object fact kept as an index. A
//! full derivation adds every pod up; a cycle taken on a change (see [`super::judged`]) takes
//! the last cycle's sums and changes them by the pods that changed, came or went.
//!
//! Sums are exact (128 bits: 150,000 pods of the largest quantity are far from their bound), so
//! that taking a pod away gives back what the sum was without it, in whatever order the pods
//! came. A figure is held at the largest `i64` only when read: a quantity comes from the
//! cluster, and a huge one ("9e18") must not wrap a sum.

use std::collections::HashMap;

use crate::collect::Pod;
use crate::collect::pods::Phase;
use crate::collect::quantity::Resources;

/// Requests and limits, summed exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sum {
    cpu_requests: i128,
    cpu_limits: i128,
    memory_requests: i128,
    memory_limits: i128,
}

impl Sum {
    /// Adds `r` once per `times` (-1 takes it away).
    fn add(&mut self, r: Resources, times: i128) {
        self.cpu_requests += i128::from(r.cpu_requests) * times;
        self.cpu_limits += i128::from(r.cpu_limits) * times;
        self.memory_requests += i128::from(r.memory_requests) * times;
        self.memory_limits += i128::from(r.memory_limits) * times;
    }

    /// Each figure held within an `i64`.
    fn resources(self) -> Resources {
        let held = |v: i128| v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
        Resources {
            cpu_requests: held(self.cpu_requests),
            cpu_limits: held(self.cpu_limits),
            memory_requests: held(self.memory_requests),
            memory_limits: held(self.memory_limits),
        }
    }
}

/// What the non-terminated pods on each node ask of it, and how many they are; and what every
/// non-terminated pod asks, scheduled or not (Succeeded pods are not in a snapshot; Failed ones
/// ask nothing).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Demand {
    /// By node name (std's randomly keyed SipHash: names come from the cluster). A node no pod
    /// asks anything of has no entry.
    by_node: HashMap<std::sync::Arc<str>, (Sum, i64)>,
    total: Sum,
}

impl Demand {
    /// Every pod added up.
    pub fn of(pods: &[std::sync::Arc<Pod>]) -> Demand {
        let mut d = Demand::default();
        pods.iter().for_each(|p| d.count(p, 1));
        d
    }

    /// Counts `p` once more (`times` 1) or once less (-1).
    pub fn count(&mut self, p: &Pod, times: i8) {
        if p.phase == Phase::Failed {
            return;
        }
        let times = i128::from(times);
        self.total.add(p.resources, times);
        if p.node.is_empty() {
            return;
        }
        let gone = match self.by_node.get_mut(&*p.node) {
            Some((sum, pods)) => {
                sum.add(p.resources, times);
                *pods += times as i64;
                *pods == 0
            }
            None => {
                let mut sum = Sum::default();
                sum.add(p.resources, times);
                self.by_node.insert(p.node.clone(), (sum, times as i64));
                false
            }
        };
        if gone {
            self.by_node.remove(&*p.node);
        }
    }

    /// What the pods on `node` ask of it, and how many they are.
    pub fn on(&self, node: &str) -> (Resources, u64) {
        self.by_node
            .get(node)
            .map(|(sum, pods)| (sum.resources(), u64::try_from(*pods).unwrap_or(0)))
            .unwrap_or_default()
    }

    /// What every pod asks.
    pub fn total(&self) -> Resources {
        self.total.resources()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, node: &str, phase: &str, cpu: i64) -> Pod {
        Pod {
            namespace: "shop".into(),
            name: name.into(),
            workload: "".into(),
            owner: Default::default(),
            phase: phase.into(),
            ready: true,
            detail: None,
            restarts: 0,
            containers: vec![],
            claims: vec![],
            node: node.into(),
            resources: Resources { cpu_requests: cpu, ..Default::default() },
        }
    }

    /// Taking pods away gives back the sums without them, a huge quantity included (held when
    /// read, exact while summed), and a node with no pod left has no entry.
    #[test]
    fn a_pod_taken_away_gives_back_the_sum_without_it() {
        let (a, b, huge) =
            (pod("a", "n1", "Running", 300), pod("b", "n1", "Pending", 200), pod("h", "n1", "Running", i64::MAX));
        let mut d = Demand::default();
        for p in [&a, &b, &huge] {
            d.count(p, 1);
        }
        assert_eq!(d.on("n1"), (Resources { cpu_requests: i64::MAX, ..Default::default() }, 3));
        d.count(&huge, -1);
        assert_eq!(d.on("n1"), (Resources { cpu_requests: 500, ..Default::default() }, 2));
        d.count(&a, -1);
        d.count(&b, -1);
        assert_eq!(d, Demand::default(), "nothing left over");
        d.count(&pod("f", "n1", "Failed", 900), 1);
        d.count(&pod("u", "", "Pending", 700), 1);
        assert_eq!(d.on("n1"), (Resources::default(), 0), "a Failed pod asks nothing");
        assert_eq!(d.total().cpu_requests, 700, "an unscheduled pod counts in the total");
    }
}
