//! Whether the control plane's controllers still run, from their leader leases in
//! `kube-system`: kube-controller-manager and kube-scheduler each renew theirs every few
//! seconds while they lead. A lease not renewed for three times its duration (at least a
//! minute) is a component that stopped: nothing it does happens any more. Managed clusters
//! hide these leases; then there is nothing to say.
//!
//! A lease's age is counted from the renewals DumbMonit saw, not from the control plane's clock
//! alone: the first sight of a renewal is taken at its `renewTime` (no later than the cycle's
//! time), and a renewal seen since the last cycle at no earlier than that cycle. A clock skewed
//! against the control plane's so gives at most one cycle's wrong age, never an alert.

use std::collections::HashMap;

use jiff::Timestamp;
use serde::Serialize;

use crate::collect::kinds::lease::Lease;

/// The components whose leases are read, and what stops with each.
pub const COMPONENTS: [&str; 2] = ["kube-controller-manager", "kube-scheduler"];

/// The lease duration the components use when the lease does not say (their default).
const DEFAULT_DURATION: i64 = 15;
/// A lease is stale after three times its duration, and never before a minute.
const LEAST_STALE: i64 = 60;

/// One component of the control plane, as its lease says.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ComponentHealth {
    /// `kube-controller-manager` or `kube-scheduler`.
    pub component: &'static str,
    /// The leader's identity.
    pub holder: String,
    /// Seconds since its last renewal.
    pub age_seconds: i64,
    /// Past this age, it has stopped.
    pub stale_after: i64,
    pub down: bool,
}

/// What the derivation remembers of a lease: its `renewTime`, the time the renewal counts
/// from, and the cycle that last saw it.
#[derive(Clone, Debug, PartialEq)]
pub struct Renewal {
    renewed: Timestamp,
    counted_from: Timestamp,
    seen: Timestamp,
}

/// The components whose lease exists; a lease with no `renewTime` makes a line of `unreadable`.
pub fn components(
    leases: &[Lease],
    now: Timestamp,
    memory: &mut HashMap<String, Renewal>,
    unreadable: &mut Vec<String>,
) -> Vec<ComponentHealth> {
    let mut out = Vec::new();
    let mut kept = HashMap::new();
    for component in COMPONENTS {
        let Some(lease) = leases.iter().find(|l| l.name == component) else { continue };
        let Some(renewed) = lease.renewed else {
            unreadable.push(format!(
                "Lease {}/{component} has no renewTime: whether {component} runs cannot be told",
                crate::collect::kinds::lease::NAMESPACE
            ));
            continue;
        };
        let at_most_now = renewed.min(now);
        let counted_from = match memory.remove(component) {
            Some(r) if r.renewed == renewed => r.counted_from,
            Some(r) => at_most_now.max(r.seen),
            None => at_most_now,
        };
        kept.insert(component.to_string(), Renewal { renewed, counted_from, seen: now });
        let age_seconds = now.duration_since(counted_from).as_secs();
        let stale_after = (3 * lease.duration_seconds.filter(|d| *d > 0).unwrap_or(DEFAULT_DURATION)).max(LEAST_STALE);
        out.push(ComponentHealth {
            component,
            holder: lease.holder.clone(),
            age_seconds,
            stale_after,
            down: age_seconds > stale_after,
        });
    }
    *memory = kept;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(name: &str, renewed: &str) -> Lease {
        Lease { name: name.into(), holder: "cp-1".into(), renewed: renewed.parse().ok(), duration_seconds: Some(15) }
    }

    fn at(t: &str) -> Timestamp {
        t.parse().unwrap()
    }

    #[test]
    fn a_lease_renewed_is_up_and_one_left_is_down_after_a_minute() {
        let mut memory = HashMap::new();
        let mut unreadable = Vec::new();
        let leases =
            [lease("kube-controller-manager", "2026-12-04T10:00:00Z"), lease("kube-scheduler", "2026-12-04T09:58:00Z")];
        let got = components(&leases, at("2026-12-04T10:00:02Z"), &mut memory, &mut unreadable);
        assert_eq!(
            got.iter().map(|c| (c.component, c.age_seconds, c.down)).collect::<Vec<_>>(),
            [("kube-controller-manager", 2, false), ("kube-scheduler", 122, true)]
        );
        assert_eq!(got[0].stale_after, 60);
        assert!(unreadable.is_empty());
        let other = [lease("some-operator", "2026-12-04T10:00:00Z")];
        assert!(components(&other, at("2026-12-04T10:00:02Z"), &mut HashMap::new(), &mut unreadable).is_empty());
    }

    #[test]
    fn a_clock_skewed_against_the_control_planes_gives_one_wrong_age_at_most() {
        // DumbMonit's clock an hour ahead: the first sight is an hour old, the next renewal
        // counts from the last cycle.
        let mut memory = HashMap::new();
        let mut none = Vec::new();
        let first = components(
            &[lease("kube-scheduler", "2026-12-04T10:00:00Z")],
            at("2026-12-04T11:00:00Z"),
            &mut memory,
            &mut none,
        );
        assert_eq!(first[0].age_seconds, 3600);
        let next = components(
            &[lease("kube-scheduler", "2026-12-04T10:00:30Z")],
            at("2026-12-04T11:00:30Z"),
            &mut memory,
            &mut none,
        );
        assert_eq!((next[0].age_seconds, next[0].down), (30, false));
        // An hour behind: a lease that stops is seen to stop by its renewals.
        let mut memory = HashMap::new();
        let behind = |now: &str, memory: &mut HashMap<String, Renewal>| {
            components(&[lease("kube-scheduler", "2026-12-04T11:00:00Z")], at(now), memory, &mut Vec::new())[0].clone()
        };
        assert_eq!(behind("2026-12-04T10:00:00Z", &mut memory).age_seconds, 0);
        let later = behind("2026-12-04T10:02:00Z", &mut memory);
        assert_eq!((later.age_seconds, later.down), (120, true));
    }

    #[test]
    fn a_lease_without_its_renewal_is_one_line() {
        let mut unreadable = Vec::new();
        let got = components(
            &[lease("kube-scheduler", "")],
            at("2026-12-04T10:00:00Z"),
            &mut HashMap::new(),
            &mut unreadable,
        );
        assert!(got.is_empty());
        assert_eq!(
            unreadable,
            ["Lease kube-system/kube-scheduler has no renewTime: whether kube-scheduler runs cannot be told"]
        );
    }
}
