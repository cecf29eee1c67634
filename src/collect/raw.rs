//! A cycle's Lists as the API server returned them, kept for a recording (`record`).

use serde_json::value::RawValue;

use super::{Certificates, Collection};

/// One List as the API server returned it.
#[derive(Debug)]
pub struct RawList {
    pub collection: Collection,
    pub resource_version: String,
    pub items: Vec<Box<RawValue>>,
}

/// What an optional read returned.
#[derive(Debug)]
pub enum OptionalList {
    Read(RawList),
    NotGranted,
    Failed(String),
}

/// Everything a successful cycle read, as returned.
#[derive(Debug)]
pub struct Recording {
    pub version: Box<RawValue>,
    pub lists: Vec<RawList>,
    pub optional: Vec<(Collection, OptionalList)>,
    pub certificates: Certificates,
}
