//! PersistentVolumeClaims: their phase, and what a Pending one waits for.
//!
//! The PersistentVolume controller says what a claim waits for in Normal events
//! (`WaitForFirstConsumer`, `ExternalProvisioning`), which the Warning events of a cycle leave
//! out. They are read by one more List of events, `involvedObject.kind=PersistentVolumeClaim,
//! type=Normal`, in a cycle that has a Pending claim and in no other: one request, filtered by
//! the server, rather than one per claim with the claim's own field selector (a cluster with a
//! hundred claims waiting would cost a hundred).

use serde::{Deserialize, Serialize};

use super::Meta;

/// The compact record of a claim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pvc {
    pub namespace: String,
    pub name: String,
    pub phase: String,
}

#[derive(Deserialize)]
pub struct RawPvc {
    #[serde(default)]
    metadata: Meta,
    status: Option<Status>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Status {
    phase: Option<String>,
}

impl From<RawPvc> for Pvc {
    fn from(raw: RawPvc) -> Pvc {
        Pvc {
            namespace: raw.metadata.namespace,
            name: raw.metadata.name,
            phase: raw.status.and_then(|s| s.phase).unwrap_or_else(|| "Pending".into()),
        }
    }
}

impl super::FromApi for Pvc {
    type Raw = RawPvc;
}

/// Cycles hold claims shared, as they do nodes and pods: a cycle taken from a watch's store
/// points at the records the store keeps rather than copying them (at the envelope, 20,000).
impl From<RawPvc> for std::sync::Arc<Pvc> {
    fn from(raw: RawPvc) -> std::sync::Arc<Pvc> {
        std::sync::Arc::new(Pvc::from(raw))
    }
}

impl super::FromApi for std::sync::Arc<Pvc> {
    type Raw = RawPvc;
}

/// The field selector of the events about claims that [`WAITS`] may be among.
pub const CLAIM_EVENTS: &str = "involvedObject.kind=PersistentVolumeClaim,type=Normal";

/// The reasons of the PersistentVolume controller's events that say what a claim waits for.
pub const WAITS: [&str; 2] = ["WaitForFirstConsumer", "ExternalProvisioning"];

/// What a Pending claim waits for, from the newest of its [`WAITS`] events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Waits {
    /// Its class binds when a pod that uses it is scheduled.
    FirstConsumer,
    /// A provisioner outside the control plane (a CSI driver, rancher.io/local-path) should
    /// make its volume; its name when the event gives it.
    Provisioner(String),
}

impl Waits {
    /// From one event's reason and message.
    pub fn of(reason: &str, message: &str) -> Option<Waits> {
        match reason {
            "WaitForFirstConsumer" => Some(Waits::FirstConsumer),
            "ExternalProvisioning" => Some(Waits::Provisioner(provisioner(message).unwrap_or_default())),
            _ => None,
        }
    }
}

/// The provisioner an `ExternalProvisioning` message names: `… by the external provisioner
/// 'rancher.io/local-path' or …` (recent releases), `… by external provisioner
/// "rancher.io/local-path" or …` (older ones).
fn provisioner(message: &str) -> Option<String> {
    let after = &message[message.find("provisioner ")? + "provisioner ".len()..];
    let quote = after.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let name = after[1..].split(quote).next()?;
    (!name.is_empty() && name.len() <= 253).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_provisioner_is_read_from_the_messages_of_old_and_new_releases() {
        let new = "Waiting for a volume to be created either by the external provisioner 'rancher.io/local-path' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.";
        let old = "waiting for a volume to be created, either by external provisioner \"ebs.csi.aws.com\" or manually created by system administrator";
        assert_eq!(Waits::of("ExternalProvisioning", new), Some(Waits::Provisioner("rancher.io/local-path".into())));
        assert_eq!(Waits::of("ExternalProvisioning", old), Some(Waits::Provisioner("ebs.csi.aws.com".into())));
        assert_eq!(Waits::of("ExternalProvisioning", "something else"), Some(Waits::Provisioner(String::new())));
        assert_eq!(
            Waits::of("WaitForFirstConsumer", "waiting for first consumer to be created before binding"),
            Some(Waits::FirstConsumer)
        );
        assert_eq!(Waits::of("ProvisioningSucceeded", ""), None);
    }
}
