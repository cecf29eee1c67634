//! Talking to the API server: where it is, how to trust it, what to ask, how to read the answer.

pub mod address;
pub mod ca;
pub mod certificates;
pub mod connect;
pub mod fetch;
pub mod proto;
pub mod request;

pub(crate) use connect::connect_table;
pub use connect::{ConnectOptions, Connection, Seconds, connect};
pub use fetch::Fetcher;
