//! The leader leases of the control plane (`coordination.k8s.io/v1`, optional), read in
//! `kube-system` only: whether kube-controller-manager and kube-scheduler still renew theirs.
//!
//! Watch mode follows them quietly: a leader renews its lease every two seconds, so a change
//! does not start a cycle (it would cost a cycle every two seconds); the next cycle sees the
//! newest.

use serde::{Deserialize, Serialize};

use super::Kind;
use crate::collect::{FromApi, Meta, nullable, parse_time};
use crate::collection::{About, Collection, Follow};

/// The namespace the control plane's leases live in.
pub const NAMESPACE: &str = "kube-system";

const ABOUT: About = About {
    name: "leases",
    resource: "leases.coordination.k8s.io",
    list_kind: "LeaseList",
    api_version: "coordination.k8s.io/v1",
    // Only kube-system's: the node leases (one per node, in kube-node-lease) are not read.
    path: "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
    namespaced: false,
    optional: true,
    follow: Follow::Quietly,
};

impl Kind for Lease {
    const COLLECTION: Collection = Collection::of(&ABOUT);
    fn namespace(&self) -> &str {
        NAMESPACE
    }
}

impl FromApi for Lease {
    type Raw = RawLease;
}

/// The compact record of a lease.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Lease {
    pub name: String,
    /// `spec.holderIdentity`: the leader.
    pub holder: String,
    /// `spec.renewTime`; None when absent or not a time.
    pub renewed: Option<jiff::Timestamp>,
    /// `spec.leaseDurationSeconds`, when set.
    pub duration_seconds: Option<i64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawLease {
    #[serde(default)]
    metadata: Meta,
    #[serde(default, deserialize_with = "nullable")]
    spec: LeaseSpec,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct LeaseSpec {
    #[serde(deserialize_with = "nullable")]
    holder_identity: String,
    renew_time: Option<String>,
    lease_duration_seconds: Option<i64>,
}

impl From<RawLease> for Lease {
    fn from(raw: RawLease) -> Lease {
        Lease {
            name: raw.metadata.name,
            holder: raw.spec.holder_identity,
            renewed: parse_time(raw.spec.renew_time.as_deref()),
            duration_seconds: raw.spec.lease_duration_seconds,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_with_its_renewal_and_one_without() {
        let l: Lease = crate::collect::from_api(
            r#"{"metadata":{"name":"kube-scheduler","namespace":"kube-system"},
                "spec":{"holderIdentity":"cp-1_5f2c","leaseDurationSeconds":15,
                        "renewTime":"2026-12-04T01:02:03.456789Z"}}"#,
        )
        .unwrap();
        assert_eq!(l.holder, "cp-1_5f2c");
        assert_eq!(l.renewed, Some("2026-12-04T01:02:03.456789Z".parse().unwrap()));
        assert_eq!(l.duration_seconds, Some(15));
        let bare: Lease =
            crate::collect::from_api(r#"{"metadata":{"name":"kube-controller-manager"},"spec":{"renewTime":"soon"}}"#)
                .unwrap();
        assert_eq!((bare.renewed, bare.duration_seconds), (None, None));
    }
}
