//! DumbMonit: the health of a Kubernetes cluster, read through its API server alone.
//!
//! - [`kube`]: where the API server is, how to trust it, what to ask, how to read the answer.
//! - [`collect`]: one cycle, eight collections, each into compact records.
//! - [`health`]: what is wrong and why, derived from a cycle.
//! - [`metrics`]: the `dumbmonit_k8s_` exposition.
//! - [`report`]: the text and JSON reports of `check`.
//! - [`wire`]: the agent protocol, what an agent sends for each cycle and the server answers.

pub mod agent;
pub mod allocator;
pub mod auth;
pub mod board;
pub mod cli;
pub mod clock;
pub mod collect;
pub mod collection;
pub mod config;
pub mod demo;
pub mod error;
mod flat;
pub mod health;
pub mod kube;
pub mod lang;
pub mod logs;
pub mod manifests;
pub mod metrics;
pub mod notify;
pub mod rbac;
pub mod record;
pub mod redact;
pub mod replay;
pub mod report;
pub mod rules;
pub mod secret;
pub mod serve;
pub mod silence;
pub mod state;
pub mod web;
pub mod wire;
