//! A watch's events, decoded from JSON lines or protobuf frames into [`WatchEvent`]: the
//! object's key, uid and resourceVersion, and its compact record, read by the kind's own
//! decoding; a bookmark's resourceVersion; an `ERROR`'s Status.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{Followed, INITIAL_EVENTS_END, Key};
use crate::collect::{Undecoded, from_api};
use crate::kube::fetch::{Frame, Status};
use crate::kube::proto;

/// An event of a watch.
#[derive(Debug)]
pub enum WatchEvent<T> {
    Added(Object<T>),
    Modified(Object<T>),
    /// The object as it was last: its record is not read (a DELETED only removes).
    Deleted(Object<()>),
    /// Nothing changed; the watch is at `resource_version`. A streaming list's initial events
    /// end at the bookmark that says so.
    Bookmark {
        resource_version: String,
        initial_events_end: bool,
    },
    /// An `ERROR` event: the Status it carries (410: the resourceVersion is too old).
    Error {
        code: u16,
        message: String,
    },
}

/// The object of an `ADDED`, `MODIFIED` or `DELETED` event.
#[derive(Debug)]
pub struct Object<T> {
    pub key: Key,
    pub uid: String,
    pub resource_version: String,
    pub record: T,
}

impl<T> WatchEvent<T> {
    /// Its type as the API server names it: `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`.
    pub fn name(&self) -> &'static str {
        match self {
            WatchEvent::Added(_) => "ADDED",
            WatchEvent::Modified(_) => "MODIFIED",
            WatchEvent::Deleted(_) => "DELETED",
            WatchEvent::Bookmark { .. } => "BOOKMARK",
            WatchEvent::Error { .. } => "ERROR",
        }
    }
}

/// The fields of an object's metadata a store needs.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct Meta {
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub uid: Option<String>,
    pub resource_version: Option<String>,
    annotations: Option<HashMap<String, String>>,
}

#[derive(Deserialize)]
pub(super) struct Head {
    #[serde(default)]
    pub metadata: Meta,
}

/// One line of a watch.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type")]
    kind: String,
    #[serde(borrow)]
    object: &'a RawValue,
}

/// An event, from its frame: a JSON line, or a protobuf `WatchEvent`. What it says otherwise
/// is the detail of the stream's error.
pub fn decode<T: Followed>(frame: &Frame) -> Result<WatchEvent<T>, Undecoded> {
    match frame {
        Frame::Json(line) => decode_json(line),
        Frame::Protobuf(event) => decode_protobuf(event),
    }
    .map_err(Undecoded)
}

/// The object of an event whose type is `kind`, its record read by `record` unless deleted.
fn of_object<T>(
    kind: &str,
    key: Key,
    uid: String,
    resource_version: String,
    record: impl FnOnce() -> Result<T, String>,
) -> Result<WatchEvent<T>, String> {
    if kind == "DELETED" {
        return Ok(WatchEvent::Deleted(Object { key, uid, resource_version, record: () }));
    }
    let o = Object { record: record()?, key, uid, resource_version };
    Ok(if kind == "ADDED" { WatchEvent::Added(o) } else { WatchEvent::Modified(o) })
}

pub(super) fn decode_json<T: Followed>(line: &[u8]) -> Result<WatchEvent<T>, String> {
    let line: Line = serde_json::from_slice(line).map_err(|e| format!("invalid watch event: {e}"))?;
    match line.kind.as_str() {
        "ERROR" => {
            let s: Status = serde_json::from_str(line.object.get()).map_err(|e| format!("invalid ERROR event: {e}"))?;
            Ok(WatchEvent::Error { code: s.code.unwrap_or(500), message: s.message.unwrap_or_default() })
        }
        "BOOKMARK" => {
            let head: Head = serde_json::from_str(line.object.get()).map_err(|e| format!("invalid bookmark: {e}"))?;
            let end =
                head.metadata.annotations.as_ref().and_then(|a| a.get(INITIAL_EVENTS_END)).is_some_and(|v| v == "true");
            Ok(WatchEvent::Bookmark {
                resource_version: head.metadata.resource_version.unwrap_or_default(),
                initial_events_end: end,
            })
        }
        kind @ ("ADDED" | "MODIFIED" | "DELETED") => {
            let head: Head = serde_json::from_str(line.object.get()).map_err(|e| format!("invalid object: {e}"))?;
            let m = head.metadata;
            of_object(
                kind,
                (m.namespace.unwrap_or_default().into(), m.name.unwrap_or_default().into()),
                m.uid.unwrap_or_default(),
                m.resource_version.unwrap_or_default(),
                || from_api::<T>(line.object.get()).map_err(|e| format!("invalid item: {e}")),
            )
        }
        other => Err(format!("unknown watch event type {other:?}")),
    }
}

/// The same event in protobuf: its object (behind its envelope) read by the kind's protobuf
/// decoding, the metadata and an `ERROR`'s Status by the messages every kind shares.
fn decode_protobuf<T: Followed>(event: &[u8]) -> Result<WatchEvent<T>, String> {
    use prost::Message;
    let event = proto::WatchEvent::decode(event).map_err(|e| format!("invalid watch event: {e}"))?;
    let object =
        proto::unwrap(event.object.as_ref().map_or(&[][..], |o| o.raw.as_slice())).map_err(|e| e.to_string())?.raw;
    let head = || {
        proto::Head::decode(object.as_slice())
            .map(|h| h.metadata.unwrap_or_default())
            .map_err(|e| format!("invalid object: {e}"))
    };
    match event.kind.as_str() {
        "ERROR" => {
            let s = proto::Status::decode(object.as_slice()).map_err(|e| format!("invalid ERROR event: {e}"))?;
            Ok(WatchEvent::Error {
                code: u16::try_from(s.code).ok().filter(|c| *c > 0).unwrap_or(500),
                message: s.message,
            })
        }
        "BOOKMARK" => {
            let m = head()?;
            let end = m.annotations.get(INITIAL_EVENTS_END).is_some_and(|v| v == "true");
            Ok(WatchEvent::Bookmark { resource_version: m.resource_version, initial_events_end: end })
        }
        kind @ ("ADDED" | "MODIFIED" | "DELETED") => {
            let m = head()?;
            of_object(kind, (m.namespace.into(), m.name.into()), m.uid, m.resource_version, || match T::PROTOBUF {
                Some(decode) => decode(&object).map_err(|e| e.0),
                None => Err("this kind is not read from protobuf".to_string()),
            })
        }
        other => Err(format!("unknown watch event type {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::{Node, Pod};

    #[test]
    fn watch_lines_decode_into_events() {
        let added = br#"{"type":"ADDED","object":{"kind":"Node","metadata":{"name":"n1","uid":"u1","resourceVersion":"12"},"status":{"conditions":[{"type":"Ready","status":"True"}]}}}"#;
        match decode_json::<Node>(added).unwrap() {
            WatchEvent::Added(Object { key, uid, resource_version, record }) => {
                assert_eq!((key, uid.as_str(), resource_version.as_str()), (("".into(), "n1".into()), "u1", "12"));
                assert_eq!(record.name, "n1");
            }
            other => panic!("an added object, not {}", other.name()),
        }
        let end = br#"{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"99","annotations":{"k8s.io/initial-events-end":"true"}}}}"#;
        assert!(
            matches!(decode_json::<Pod>(end).unwrap(), WatchEvent::Bookmark { ref resource_version, initial_events_end: true } if resource_version == "99")
        );
        let gone = br#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (9)","reason":"Expired","code":410}}"#;
        assert!(matches!(decode_json::<Pod>(gone).unwrap(), WatchEvent::Error { code: 410, .. }));
        assert!(decode_json::<Pod>(br#"{"type":"WHAT","object":{}}"#).is_err());
        let modified = br#"{"type":"MODIFIED","object":{"kind":"Node","metadata":{"name":"n1","uid":"u1","resourceVersion":"13"}}}"#;
        assert_eq!(decode_json::<Node>(modified).unwrap().name(), "MODIFIED");
    }

    #[test]
    fn protobuf_events_decode_into_the_same_events() {
        use prost::Message;
        let event = |kind: &str, object: Vec<u8>| {
            let e = proto::WatchEvent { kind: kind.into(), object: Some(proto::RawExtension { raw: object }) };
            Frame::Protobuf(e.encode_to_vec().into())
        };
        let meta = |name: &str, rv: &str| proto::ObjectMeta {
            name: name.into(),
            namespace: "shop".into(),
            uid: format!("uid-{name}"),
            resource_version: rv.into(),
            ..Default::default()
        };
        let head = |m: proto::ObjectMeta| proto::Head { metadata: Some(m) }.encode_to_vec();
        match decode::<Pod>(&event("DELETED", proto::envelope("Pod", head(meta("api-1", "12"))))).unwrap() {
            WatchEvent::Deleted(Object { key, uid, resource_version, .. }) => {
                assert_eq!(
                    (key, uid.as_str(), resource_version.as_str()),
                    (("shop".into(), "api-1".into()), "uid-api-1", "12")
                );
            }
            other => panic!("a deleted object, not {}", other.name()),
        }
        let mut end = meta("", "99");
        end.annotations.insert(INITIAL_EVENTS_END.into(), "true".into());
        assert!(matches!(
            decode::<Pod>(&event("BOOKMARK", proto::envelope("Pod", head(end)))).unwrap(),
            WatchEvent::Bookmark { ref resource_version, initial_events_end: true } if resource_version == "99"
        ));
        let gone =
            proto::Status { message: "too old resource version: 5 (9)".into(), reason: "Expired".into(), code: 410 };
        assert!(matches!(
            decode::<Pod>(&event("ERROR", proto::envelope("Status", gone.encode_to_vec()))).unwrap(),
            WatchEvent::Error { code: 410, ref message } if message == "too old resource version: 5 (9)"
        ));
        let refused = decode::<Pod>(&event("ADDED", head(meta("api-1", "12")))).err().unwrap();
        assert!(refused.0.contains("envelope"), "{refused}");
        assert!(decode::<Pod>(&Frame::Protobuf(bytes::Bytes::from_static(b"\xff\xff\xff"))).is_err());
    }
}
