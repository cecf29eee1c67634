//! Warning events: what they are about, why, and when they last happened.

use std::sync::Arc;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{Meta, nullable, parse_time};

/// The compact record of an Event.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Event {
    /// Where the event is recorded.
    pub namespace: String,
    /// `involvedObject`.
    pub kind: String,
    pub object_namespace: Option<String>,
    pub object_name: String,
    pub reason: String,
    pub message: String,
    pub event_type: String,
    /// The last occurrence: `series.lastObservedTime`, else `lastTimestamp`, else `eventTime`,
    /// else `metadata.creationTimestamp`.
    pub last_seen: Option<Timestamp>,
    pub count: i64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawEvent {
    #[serde(default)]
    metadata: Meta,
    involved_object: Option<ObjectReference>,
    reason: Option<String>,
    message: Option<String>,
    #[serde(rename = "type")]
    event_type: Option<String>,
    series: Option<Series>,
    last_timestamp: Option<String>,
    event_time: Option<String>,
    count: Option<i64>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ObjectReference {
    #[serde(deserialize_with = "nullable")]
    kind: String,
    namespace: Option<String>,
    #[serde(deserialize_with = "nullable")]
    name: String,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Series {
    last_observed_time: Option<String>,
    count: Option<i64>,
}

impl From<RawEvent> for Event {
    fn from(raw: RawEvent) -> Event {
        let series_time = raw.series.as_ref().and_then(|s| s.last_observed_time.as_deref());
        let last_seen = parse_time(series_time)
            .or_else(|| parse_time(raw.last_timestamp.as_deref()))
            .or_else(|| parse_time(raw.event_time.as_deref()))
            .or_else(|| parse_time(raw.metadata.creation_timestamp.as_deref()));
        let involved = raw.involved_object.unwrap_or_default();
        Event {
            namespace: raw.metadata.namespace,
            kind: involved.kind,
            object_namespace: involved.namespace.filter(|n| !n.is_empty()),
            object_name: involved.name,
            reason: raw.reason.unwrap_or_default(),
            message: raw.message.unwrap_or_default(),
            event_type: raw.event_type.unwrap_or_default(),
            last_seen,
            count: raw.series.and_then(|s| s.count).or(raw.count).unwrap_or(1),
        }
    }
}

impl super::FromApi for Event {
    type Raw = RawEvent;
}

/// Cycles hold Warning events shared, as they do pods: a cycle taken from a watch's store
/// points at the events the store keeps rather than copying them (at the envelope, 50,000
/// events of six strings each).
impl From<RawEvent> for Arc<Event> {
    fn from(raw: RawEvent) -> Arc<Event> {
        Arc::new(Event::from(raw))
    }
}

impl super::FromApi for Arc<Event> {
    type Raw = RawEvent;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last_seen(json: &str) -> Option<String> {
        crate::collect::from_api::<Event>(json).unwrap().last_seen.map(|t| t.to_string())
    }

    #[test]
    fn last_occurrence_follows_the_precedence() {
        let base = r#""metadata":{"creationTimestamp":"2026-01-01T00:00:00Z"}"#;
        assert_eq!(
            last_seen(&format!(
                r#"{{{base},"series":{{"lastObservedTime":"2026-01-01T04:00:00.500000Z"}},"lastTimestamp":"2026-01-01T03:00:00Z","eventTime":"2026-01-01T02:00:00.000000Z"}}"#
            ))
            .as_deref(),
            Some("2026-01-01T04:00:00.5Z")
        );
        assert_eq!(
            last_seen(&format!(r#"{{{base},"lastTimestamp":"2026-01-01T03:00:00Z","eventTime":null}}"#)).as_deref(),
            Some("2026-01-01T03:00:00Z")
        );
        assert_eq!(
            last_seen(&format!(r#"{{{base},"lastTimestamp":null,"eventTime":"2026-01-01T02:00:00.000000Z"}}"#))
                .as_deref(),
            Some("2026-01-01T02:00:00Z")
        );
        assert_eq!(last_seen(&format!(r#"{{{base},"lastTimestamp":null}}"#)).as_deref(), Some("2026-01-01T00:00:00Z"));
        assert_eq!(last_seen(r#"{"metadata":{"creationTimestamp":null}}"#), None);
    }
}
