//! A simulated Kubernetes API server for DumbMonit's tests, demo and benchmarks.
//!
//! It follows the real API's contract: the list paths, List objects with `resourceVersion`,
//! `continue` and `remainingItemCount`, limit/continue paging with tokens that can be made to
//! expire, field selectors, bearer-token authentication and `Status` error bodies; and watches
//! as kube-apiserver v1.37's watch cache serves them (an event history per resource, streaming
//! lists ending with the initial-events-end bookmark, bookmarks, 410 for a version older than the
//! history). It serves HTTPS with a CA and serving certificate made at start, and logs every
//! request.

pub mod api;
pub mod fixtures;
pub mod scenario;
mod server;
pub mod tls;
pub mod watch;

pub use fixtures::Cluster;
pub use server::{BodyFault, Faults, RequestRecord, Sim, SimOptions};
