//! Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`), as far as a watch
//! needs it: the event of a watch stream, the envelope around each object, and the pieces of
//! `k8s.io/apimachinery` every kind shares (metadata, times, quantities, `Status`).
//!
//! kube-apiserver serves the built-in kinds in protobuf as well as JSON; a pod is about half
//! the bytes, the number of bytes a watch sends for every change. Each message here declares
//! only the fields DumbMonit reads, with the field numbers of the Kubernetes project's
//! `generated.proto`; every other field is skipped when decoding.
//!
//! The framing of a watch stream (`;stream=watch`): each event is a 4-byte big-endian length,
//! then a `WatchEvent` without envelope, whose object is the kind's message behind the magic
//! `k8s\0` and a `runtime.Unknown` envelope.

use std::collections::HashMap;

use prost::Message;

/// The media type of Kubernetes' protobuf encoding.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The four bytes before an object encoded on its own.
const MAGIC: &[u8] = b"k8s\0";

/// `k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct WatchEvent {
    /// ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.
    #[prost(string, tag = "1")]
    pub kind: String,
    #[prost(message, optional, tag = "2")]
    pub object: Option<RawExtension>,
}

/// `k8s.io.apimachinery.pkg.runtime.RawExtension`.
#[derive(Clone, PartialEq, Message)]
pub struct RawExtension {
    #[prost(bytes = "vec", tag = "1")]
    pub raw: Vec<u8>,
}

/// `k8s.io.apimachinery.pkg.runtime.Unknown`: the envelope of an object encoded on its own.
#[derive(Clone, PartialEq, Message)]
struct Unknown {
    #[prost(message, optional, tag = "1")]
    type_meta: Option<TypeMeta>,
    #[prost(bytes = "vec", tag = "2")]
    raw: Vec<u8>,
    #[prost(string, tag = "3")]
    content_encoding: String,
}

/// `k8s.io.apimachinery.pkg.runtime.TypeMeta`.
#[derive(Clone, PartialEq, Message)]
struct TypeMeta {
    #[prost(string, tag = "1")]
    api_version: String,
    #[prost(string, tag = "2")]
    kind: String,
}

/// An object taken out of its envelope: its kind, and its message's bytes.
#[derive(Debug)]
pub struct Enveloped {
    pub kind: String,
    pub raw: Vec<u8>,
}

/// Why an object could not be taken out of its envelope.
#[derive(Debug, thiserror::Error)]
pub enum EnvelopeError {
    #[error("an object without the protobuf envelope")]
    NoMagic,
    #[error("invalid protobuf envelope: {0}")]
    Invalid(#[from] prost::DecodeError),
    #[error("an object encoded as {0:?}")]
    Encoded(String),
}

/// Takes an object out of the `k8s\0` magic and its `Unknown` envelope.
pub fn unwrap(data: &[u8]) -> Result<Enveloped, EnvelopeError> {
    let inner = data.strip_prefix(MAGIC).ok_or(EnvelopeError::NoMagic)?;
    let unknown = Unknown::decode(inner)?;
    if !unknown.content_encoding.is_empty() {
        return Err(EnvelopeError::Encoded(unknown.content_encoding));
    }
    Ok(Enveloped { kind: unknown.type_meta.map(|t| t.kind).unwrap_or_default(), raw: unknown.raw })
}

/// `k8s.io.apimachinery.pkg.apis.meta.v1.Time`: seconds and nanoseconds since the epoch.
#[derive(Clone, Copy, PartialEq, Message)]
pub struct Time {
    #[prost(int64, tag = "1")]
    pub seconds: i64,
    #[prost(int32, tag = "2")]
    pub nanos: i32,
}

impl Time {
    /// As the JSON encoding writes it (RFC 3339, to the second).
    pub fn to_rfc3339(self) -> Option<String> {
        jiff::Timestamp::from_second(self.seconds).ok().map(|t| t.to_string())
    }
}

/// `k8s.io.apimachinery.pkg.api.resource.Quantity`: its text, as JSON has it.
#[derive(Clone, PartialEq, Message)]
pub struct Quantity {
    #[prost(string, tag = "1")]
    pub string: String,
}

/// The fields of `k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta` that are read.
#[derive(Clone, PartialEq, Message)]
pub struct ObjectMeta {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub namespace: String,
    #[prost(string, tag = "5")]
    pub uid: String,
    #[prost(string, tag = "6")]
    pub resource_version: String,
    #[prost(message, optional, tag = "8")]
    pub creation_timestamp: Option<Time>,
    #[prost(message, optional, tag = "9")]
    pub deletion_timestamp: Option<Time>,
    #[prost(map = "string, string", tag = "11")]
    pub labels: HashMap<String, String>,
    #[prost(map = "string, string", tag = "12")]
    pub annotations: HashMap<String, String>,
    #[prost(message, repeated, tag = "13")]
    pub owner_references: Vec<OwnerReference>,
    #[prost(string, repeated, tag = "14")]
    pub finalizers: Vec<String>,
}

/// The fields of `k8s.io.apimachinery.pkg.apis.meta.v1.OwnerReference` that are read.
#[derive(Clone, PartialEq, Message)]
pub struct OwnerReference {
    #[prost(string, tag = "1")]
    pub kind: String,
    #[prost(string, tag = "3")]
    pub name: String,
    #[prost(bool, optional, tag = "6")]
    pub controller: Option<bool>,
}

/// Any kind, read for its metadata alone (every kind has it as field 1).
#[derive(Clone, PartialEq, Message)]
pub struct Head {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
}

/// The fields of `k8s.io.apimachinery.pkg.apis.meta.v1.Status` that are read.
#[derive(Clone, PartialEq, Message)]
pub struct Status {
    #[prost(string, tag = "3")]
    pub message: String,
    #[prost(string, tag = "4")]
    pub reason: String,
    #[prost(int32, tag = "6")]
    pub code: i32,
}

/// A `Status` sent in protobuf (an error answer to a request that accepted protobuf).
pub fn status(data: &[u8]) -> Option<Status> {
    let object = unwrap(data).ok().filter(|o| o.kind == "Status")?;
    Status::decode(object.raw.as_slice()).ok()
}

/// An optional text of the JSON encoding: protobuf writes an empty text where JSON leaves the
/// field out.
pub fn text(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

/// An object put in its envelope, as kube-apiserver sends it: for tests.
#[cfg(test)]
pub fn envelope(kind: &str, raw: Vec<u8>) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta { api_version: "v1".into(), kind: kind.into() }),
        raw,
        content_encoding: String::new(),
    };
    [MAGIC, &unknown.encode_to_vec()].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_comes_out_of_its_envelope() {
        let meta = ObjectMeta { name: "api-1".into(), namespace: "shop".into(), ..Default::default() };
        let data = envelope("Pod", Head { metadata: Some(meta.clone()) }.encode_to_vec());
        let object = unwrap(&data).unwrap();
        assert_eq!(object.kind, "Pod");
        assert_eq!(Head::decode(object.raw.as_slice()).unwrap().metadata, Some(meta));
        assert!(unwrap(b"{\"kind\":\"Pod\"}").unwrap_err().to_string().contains("without the protobuf envelope"));
        assert!(unwrap(b"k8s\0\xff\xff").is_err(), "garbage behind the magic is refused");
    }

    #[test]
    fn a_status_in_protobuf_is_read() {
        let s = Status { message: "pods is forbidden".into(), reason: "Forbidden".into(), code: 403 };
        let data = envelope("Status", s.encode_to_vec());
        assert_eq!(status(&data), Some(s.clone()));
        assert_eq!(status(&envelope("Pod", s.encode_to_vec())), None, "only a Status is a Status");
        assert_eq!(status(b"{}"), None);
    }

    #[test]
    fn times_and_texts_read_as_json_has_them() {
        assert_eq!(Time { seconds: 1_764_570_900, nanos: 0 }.to_rfc3339().as_deref(), Some("2025-12-01T06:35:00Z"));
        assert_eq!(text(String::new()), None);
        assert_eq!(text("x".into()).as_deref(), Some("x"));
    }
}
