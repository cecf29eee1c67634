//! The optional kinds read like any List: each is one file here (its description, its compact
//! record and how it is decoded) and one line of [`registry!`]. From that line, and nothing
//! else, a cycle reads it (through the one wrapper, with its stat), watch mode follows it, the
//! ignored namespaces leave it out, the recordings keep and replay it, the agent's wire carries
//! it (`Extras` is its whole form), `dumbmonit rbac --optional` grants it, and the page and
//! `check` say when it is not granted. What a kind means (its health, its metrics, its rows on
//! the pages) is the kind's own, in those rooms.
//!
//! The core reads (the guide's role) and the Metrics API (read after its APIService, whose
//! state decides whether it is asked at all) are read by name in `collect::run`.

pub mod cronjob;
pub mod hpa;
pub mod job;
pub mod lease;
pub mod namespace;
pub mod pdb;
pub mod pv;
pub mod quota;
pub mod webhook;
#[cfg(test)]
pub mod widget;

use std::fmt::Debug;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::follow::Followed;
use crate::collection::Collection;

/// A kind of object DumbMonit reads: its collection (described once, in the kind's file) and
/// its compact record, which is also its form on the agent's wire.
pub trait Kind: Followed + Debug + Serialize + DeserializeOwned {
    /// Its collection: path, group, RBAC resource, optional or not, namespaced or not, how
    /// watch mode follows it. Its protobuf decoder, when it has one, is its
    /// [`super::FromApi::PROTOBUF`].
    const COLLECTION: Collection;

    /// Its namespace (empty for an object of the cluster's): what the ignored namespaces
    /// leave out.
    fn namespace(&self) -> &str;
}

/// The registry of the optional kinds: one line each, `field: Type`, where `field` is the
/// kind's collection name (its key in `Extras`, in recordings and on the wire). Hands the list
/// to the macro `$then`, which each room that needs the kinds one by one defines for itself.
///
/// A kind whose records a cycle only reads is held shared (`Arc<Kind>`): a cycle taken from a
/// watch's store points at the records the store keeps rather than copying each, and its health
/// holds them as they are (volumes: 20,000 at 150,000 simulated pods; quotas, namespaces and
/// webhook configurations: at 10,000 simulated pods, copying the 300 quotas, the 300 namespaces
/// and the 15 configurations at each cycle was about 6% of what `serve` spent). An `Arc` is
/// written as what it holds, in recordings and on the agent's wire.
macro_rules! registry {
    ($then:ident) => {
        $then! {
            hpas: $crate::collect::kinds::hpa::Hpa,
            jobs: $crate::collect::kinds::job::Job,
            cronjobs: $crate::collect::kinds::cronjob::CronJob,
            poddisruptionbudgets: $crate::collect::kinds::pdb::Pdb,
            resourcequotas: std::sync::Arc<$crate::collect::kinds::quota::Quota>,
            persistentvolumes: std::sync::Arc<$crate::collect::kinds::pv::Pv>,
            leases: $crate::collect::kinds::lease::Lease,
            validatingwebhookconfigurations: std::sync::Arc<$crate::collect::kinds::webhook::Validating>,
            mutatingwebhookconfigurations: std::sync::Arc<$crate::collect::kinds::webhook::Mutating>,
            namespaces: std::sync::Arc<$crate::collect::kinds::namespace::Namespace>,
            #[cfg(test)] widgets: $crate::collect::kinds::widget::Widget,
        }
    };
}
pub(crate) use registry;

macro_rules! collections {
    ($($(#[$m:meta])* $field:ident: $ty:ty),* $(,)?) => {
        /// The registry's collections, in its order.
        #[allow(clippy::vec_init_then_push)] // a line of the registry may be left out (cfg)
        pub fn registered() -> Vec<Collection> {
            let mut out = Vec::new();
            $( $(#[$m])* out.push(<$ty as Kind>::COLLECTION); )*
            out
        }

        /// Each registry line's field and its kind's collection name, which must be the same.
        #[cfg(test)]
        #[allow(clippy::vec_init_then_push)] // a line of the registry may be left out (cfg)
        fn fields() -> Vec<(&'static str, &'static str)> {
            let mut out = Vec::new();
            $( $(#[$m])* out.push((stringify!($field), <$ty as Kind>::COLLECTION.name())); )*
            out
        }
    };
}
registry!(collections);

/// Every collection a cycle may read: the core reads, the Metrics API's group, the registry's,
/// then the webhooks' backends (read after the webhooks, `collect::backends`).
pub fn every() -> Vec<Collection> {
    Collection::ALL
        .into_iter()
        .chain(Collection::METRICS_GROUP)
        .chain(registered())
        .chain(super::backends::GROUP)
        .collect()
}

/// Where `c` comes in [`every`]: the order collections are said in.
pub fn rank(c: Collection) -> usize {
    every().iter().position(|e| *e == c).unwrap_or(usize::MAX)
}

/// The collection of this name (`collection` label, recordings, the agent's stats).
pub fn named(name: &str) -> Option<Collection> {
    every().into_iter().find(|c| c.name() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_collection_has_its_own_name_and_each_line_names_its_kind() {
        let every = every();
        let mut names: Vec<&str> = every.iter().map(|c| c.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), every.len(), "{names:?}");
        for (field, name) in fields() {
            assert_eq!(field, name, "a registry line's field is its kind's collection name");
        }
        assert!(registered().iter().all(|c| c.optional()), "the registry holds optional kinds");
        assert_eq!(named("cronjobs"), Some(cronjob::CronJob::COLLECTION));
        assert_eq!(named("pods"), Some(Collection::PODS));
        assert_eq!(named("secrets"), None);
    }
}
