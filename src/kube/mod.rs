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

/// A DNS-1123 label, as namespaces and these object names must be.
pub fn check_name(flag: &'static str, v: &str) -> Result<(), crate::error::ConfigError> {
    let ok = !v.is_empty()
        && v.len() <= 63
        && v.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !v.starts_with('-')
        && !v.ends_with('-');
    if ok { Ok(()) } else { Err(crate::error::FlagError::NotAName { flag, value: v.to_string() }.into()) }
}
