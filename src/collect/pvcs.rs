//! PersistentVolumeClaims: their phase.

use serde::{Deserialize, Serialize};

use super::Meta;

/// The compact record of a claim.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
