//! What reading a cluster says in the log (see `crate::logs`), at debug level: for watch mode,
//! each event a store applies and whether it changed what DumbMonit keeps, so that an operator
//! can see why a cluster takes cycles between its intervals
//! (`RUST_LOG=dumbmonit=info,dumbmonit::collect=debug`).

use std::fmt;

use crate::collection::Collection;
use crate::logs::Emit;

pub const TARGET: &str = "dumbmonit::collect";

/// Whether this room's debug events are let through: looked at before making what only they
/// need.
pub fn debugging() -> bool {
    tracing::enabled!(target: TARGET, tracing::Level::DEBUG)
}

/// A watch event (ADDED, MODIFIED or DELETED) applied to a collection's store.
pub struct Applied<'a> {
    /// The API server's address.
    pub address: &'a str,
    pub collection: Collection,
    /// ADDED, MODIFIED or DELETED.
    pub event: &'a str,
    /// Empty for a cluster-scoped object.
    pub namespace: &'a str,
    pub name: &'a str,
    pub resource_version: &'a str,
    /// It changed the store's record (or removed it): a cycle follows.
    pub changed: bool,
}

impl fmt::Display for Applied<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let object = match self.namespace {
            "" => self.name.to_string(),
            ns => format!("{ns}/{}", self.name),
        };
        write!(
            f,
            "{} {object} {} at resourceVersion {} from {}: {}",
            self.collection.resource(),
            self.event,
            self.resource_version,
            self.address,
            if self.changed { "its record changed, a cycle follows" } else { "its record is as it was, no cycle" }
        )
    }
}

impl Emit for Applied<'_> {
    fn emit(&self) {
        tracing::debug!(
            target: TARGET,
            address = self.address,
            collection = self.collection.resource(),
            event = self.event,
            namespace = self.namespace,
            name = self.name,
            resource_version = self.resource_version,
            changed = self.changed,
            "{self}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_applied_event_says_what_it_was_about_and_whether_it_takes_a_cycle() {
        let mut e = Applied {
            address: "https://10.0.0.1:6443",
            collection: Collection::PODS,
            event: "MODIFIED",
            namespace: "shop",
            name: "web-1",
            resource_version: "4021",
            changed: false,
        };
        assert_eq!(
            e.to_string(),
            "pods shop/web-1 MODIFIED at resourceVersion 4021 from https://10.0.0.1:6443: its record is as it was, no cycle"
        );
        e.collection = Collection::NODES;
        e.namespace = "";
        e.name = "node-1";
        e.changed = true;
        assert_eq!(
            e.to_string(),
            "nodes node-1 MODIFIED at resourceVersion 4021 from https://10.0.0.1:6443: its record changed, a cycle follows"
        );
    }
}
