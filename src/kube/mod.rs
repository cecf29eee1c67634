//! Talking to the API server: where it is, how to trust it, what to ask, how to read the answer.

pub mod address;
pub mod ca;
pub mod certificates;
pub mod connect;
pub mod fetch;
pub mod request;

pub use connect::{ConnectOptions, Connection, connect};
pub use fetch::Fetcher;
