//! Watches, as kube-apiserver's watch cache serves them: an event history per resource, the
//! events of a watch from a resourceVersion (field selectors applied to the object before and
//! after each change), bookmarks, and the JSON lines of the stream.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use crate::api::{self, ApiError, Requirement, Resource, StoredObject};

/// What a change did to an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn word(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change in the store, at its resourceVersion.
#[derive(Clone, Debug)]
pub struct Change {
    pub rv: u64,
    pub kind: EventType,
    /// The object after the change; for a deletion its last state, at the deletion's
    /// resourceVersion.
    pub object: StoredObject,
    /// The object before the change (for a deletion, its last state as it was stored).
    pub prev: Option<StoredObject>,
}

/// The events of one resource the watch cache still has.
#[derive(Debug)]
pub struct History {
    events: VecDeque<Arc<Change>>,
    /// A watch may start at this resourceVersion or later (the list the cache started from).
    floor: u64,
    /// Whether events were dropped from the window since the cache started.
    dropped: bool,
    /// The resourceVersion of the last event forgotten (dropped or compacted away).
    forgotten: u64,
}

impl History {
    /// An empty history that serves watches from `rv` on (as after the cache's list at `rv`).
    pub fn starting_at(rv: u64) -> History {
        History { events: VecDeque::new(), floor: rv, dropped: false, forgotten: 0 }
    }

    pub fn push(&mut self, change: Change, window: usize) {
        self.events.push_back(Arc::new(change));
        while self.events.len() > window.max(1) {
            if let Some(e) = self.events.pop_front() {
                self.forgotten = e.rv;
            }
            self.dropped = true;
        }
    }

    /// Forgets every event: watches may start at `rv` or later, as after the watch cache
    /// started over from a list at `rv`.
    pub fn compact(&mut self, rv: u64) {
        if let Some(last) = self.events.back() {
            self.forgotten = last.rv;
        }
        self.events.clear();
        self.floor = rv;
        self.dropped = false;
    }

    /// The events after `rv` for a stream that has seen everything up to it, or None when
    /// some of them were forgotten before it read them (the watch cache ends such a stream).
    pub fn next_for_stream(&self, rv: u64) -> Option<Vec<Arc<Change>>> {
        if self.forgotten > rv {
            return None;
        }
        let first = self.events.partition_point(|e| e.rv <= rv);
        Some(self.events.range(first..).cloned().collect())
    }

    /// The resourceVersion of its newest event.
    pub fn newest(&self) -> Option<u64> {
        self.events.back().map(|e| e.rv)
    }

    /// The oldest resourceVersion a watch may start from, as the watch cache reckons it: the
    /// list it started from, or once events fell out of its window, the one before its oldest.
    pub fn oldest(&self) -> u64 {
        match self.events.front() {
            Some(first) if self.dropped => first.rv - 1,
            _ => self.floor,
        }
    }

    /// Every event after `rv`, or 410 when the history no longer reaches back to it.
    pub fn since(&self, rv: u64) -> Result<Vec<Arc<Change>>, ApiError> {
        let oldest = self.oldest();
        if rv < oldest {
            return Err(ApiError::too_old_resource_version(rv, oldest));
        }
        let first = self.events.partition_point(|e| e.rv <= rv);
        Ok(self.events.range(first..).cloned().collect())
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

/// What a watch selects: a namespace and field requirements.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    pub namespace: Option<String>,
    pub requirements: Vec<Requirement>,
}

impl Selection {
    pub fn admits(&self, object: &StoredObject) -> bool {
        self.namespace.as_deref().is_none_or(|ns| object.namespace == ns) && api::matches(object, &self.requirements)
    }
}

/// The event a watcher with `selection` gets for `change`, as the watch cache decides it: an
/// object that starts to match is ADDED, one that stops matching is DELETED (its previous state
/// at the change's resourceVersion), one that matches neither before nor after is not sent.
pub fn event_for(resource: Resource, change: &Change, selection: &Selection) -> Option<String> {
    let now = change.kind != EventType::Deleted && selection.admits(&change.object);
    let before = change.prev.as_ref().is_some_and(|p| selection.admits(p));
    match (before, now) {
        (false, true) => Some(line("ADDED", &change.object.with_kind(resource))),
        (true, true) => Some(line("MODIFIED", &change.object.with_kind(resource))),
        (true, false) if change.kind == EventType::Deleted => Some(line("DELETED", &change.object.with_kind(resource))),
        (true, false) => {
            let prev = change.prev.as_ref().expect("matched before");
            Some(line("DELETED", &prev.restamped(resource, change.rv).with_kind(resource)))
        }
        (false, false) => None,
    }
}

/// One line of a watch stream.
pub fn line(kind: &str, object: &str) -> String {
    let mut out = String::with_capacity(object.len() + 32);
    out.push_str(r#"{"type":""#);
    out.push_str(kind);
    out.push_str(r#"","object":"#);
    out.push_str(object);
    out.push_str("}\n");
    out
}

/// The ERROR event carrying `error`'s Status.
pub fn error_line(error: &ApiError) -> String {
    line("ERROR", &error.body())
}

/// A BOOKMARK event: the resource's empty object, as the API server encodes its zero value,
/// with only the resourceVersion set (and on the bookmark that ends a streaming list's initial
/// events, the `k8s.io/initial-events-end` annotation).
pub fn bookmark_line(resource: Resource, rv: u64, initial_events_end: bool) -> String {
    // A DaemonSet's conversion always writes its template generation as an annotation.
    let mut annotations = Vec::new();
    if resource == Resource::DaemonSets {
        annotations.push(r#""deprecated.daemonset.template.generation":"0""#);
    }
    if initial_events_end {
        annotations.push(r#""k8s.io/initial-events-end":"true""#);
    }
    let metadata = if annotations.is_empty() {
        format!(r#"{{"resourceVersion":"{rv}"}}"#)
    } else {
        format!(r#"{{"resourceVersion":"{rv}","annotations":{{{}}}}}"#, annotations.join(","))
    };
    let object = format!(
        r#"{{"kind":"{}","apiVersion":"{}","metadata":{metadata}{}}}"#,
        resource.kind(),
        resource.api_version(),
        empty_fields(resource)
    );
    line("BOOKMARK", &object)
}

/// What follows `metadata` in the JSON of the resource's zero value, as kube-apiserver v1.37
/// writes it in bookmarks.
fn empty_fields(resource: Resource) -> &'static str {
    match resource {
        Resource::Nodes => {
            r#","spec":{},"status":{"daemonEndpoints":{"kubeletEndpoint":{"Port":0}},"nodeInfo":{"machineID":"","systemUUID":"","bootID":"","kernelVersion":"","osImage":"","containerRuntimeVersion":"","kubeletVersion":"","kubeProxyVersion":"","operatingSystem":"","architecture":""}}"#
        }
        Resource::Pods => r#","spec":{"containers":null},"status":{}"#,
        Resource::Deployments => {
            r#","spec":{"replicas":0,"selector":null,"template":{"metadata":{},"spec":{"containers":null}},"strategy":{}},"status":{}"#
        }
        Resource::StatefulSets => {
            r#","spec":{"replicas":0,"selector":null,"template":{"metadata":{},"spec":{"containers":null}},"serviceName":"","updateStrategy":{}},"status":{"replicas":0,"availableReplicas":0}"#
        }
        Resource::DaemonSets => {
            r#","spec":{"selector":null,"template":{"metadata":{},"spec":{"containers":null}},"updateStrategy":{}},"status":{"currentNumberScheduled":0,"numberMisscheduled":0,"desiredNumberScheduled":0,"numberReady":0}"#
        }
        Resource::PersistentVolumeClaims => r#","spec":{"resources":{}},"status":{}"#,
        Resource::Events => {
            r#","involvedObject":{},"source":{},"firstTimestamp":null,"lastTimestamp":null,"eventTime":null,"reportingComponent":"","reportingInstance":"""#
        }
        Resource::ApiServices => r#","spec":{"groupPriorityMinimum":0,"versionPriority":0},"status":{}"#,
        Resource::HorizontalPodAutoscalers => {
            r#","spec":{"scaleTargetRef":{"kind":"","name":""},"maxReplicas":0},"status":{"desiredReplicas":0,"currentMetrics":null}"#
        }
        Resource::Jobs => r#","spec":{"template":{"metadata":{},"spec":{"containers":null}}},"status":{}"#,
        Resource::CronJobs => {
            r#","spec":{"schedule":"","jobTemplate":{"metadata":{},"spec":{"template":{"metadata":{},"spec":{"containers":null}}}}},"status":{}"#
        }
        Resource::PodDisruptionBudgets => {
            r#","spec":{},"status":{"disruptionsAllowed":0,"currentHealthy":0,"desiredHealthy":0,"expectedPods":0}"#
        }
        Resource::ResourceQuotas | Resource::PersistentVolumes => r#","spec":{},"status":{}"#,
        Resource::Leases => r#","spec":{}"#,
        Resource::ValidatingWebhookConfigurations | Resource::MutatingWebhookConfigurations => r#","webhooks":null"#,
        Resource::Services => r#","spec":{},"status":{}"#,
        Resource::EndpointSlices => r#","addressType":"IPv4","endpoints":null"#,
        Resource::Namespaces => r#","spec":{},"status":{}"#,
        // The Metrics API serves no watch.
        Resource::NodeMetrics | Resource::PodMetrics => "",
    }
}

/// What the tests can do to open streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Cut the connection mid-stream.
    Cut,
    /// An ERROR event with a 410, then the end.
    Expire,
    /// A clean end (the last chunk), as when the watch cache drops a watcher.
    End,
}

/// What every member of a server shares about watches.
pub struct Hub {
    /// The store's resourceVersion, sent on every change.
    pub changed: tokio::sync::watch::Sender<u64>,
    pub control: tokio::sync::broadcast::Sender<Control>,
    pub open: AtomicUsize,
    /// How often bookmarks are due; open streams follow a change at once.
    pub bookmark_interval: tokio::sync::watch::Sender<Duration>,
}

impl Hub {
    pub fn new(rv: u64, bookmark_interval: Duration) -> Hub {
        Hub {
            changed: tokio::sync::watch::Sender::new(rv),
            control: tokio::sync::broadcast::Sender::new(16),
            open: AtomicUsize::new(0),
            bookmark_interval: tokio::sync::watch::Sender::new(bookmark_interval),
        }
    }
}

/// When the next bookmark is due, as the watch cache schedules them: after the interval, but
/// no later than 2 s before the watch's deadline; none once that moment has passed.
pub fn next_bookmark(
    now: tokio::time::Instant,
    interval: Duration,
    deadline: Option<tokio::time::Instant>,
) -> Option<tokio::time::Instant> {
    let heartbeat = now + interval;
    match deadline {
        None => Some(heartbeat),
        Some(d) => {
            let before = d.checked_sub(Duration::from_secs(2))?;
            let at = heartbeat.min(before);
            (at >= now).then_some(at)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn pod(name: &str, phase: &str, rv: u64) -> StoredObject {
        StoredObject::new(
            Resource::Pods,
            json!({"metadata": {"namespace": "shop", "name": name}, "status": {"phase": phase}}),
            rv,
        )
    }

    fn change(rv: u64, kind: EventType, object: StoredObject, prev: Option<StoredObject>) -> Change {
        Change { rv, kind, object, prev }
    }

    fn parsed(line: &str) -> Value {
        assert!(line.ends_with('\n'));
        serde_json::from_str(line).unwrap()
    }

    #[test]
    fn history_serves_events_after_a_version_and_410_before_its_start() {
        let mut h = History::starting_at(100);
        for rv in 101..=105 {
            h.push(change(rv, EventType::Added, pod(&format!("p{rv}"), "Running", rv), None), 10);
        }
        let rvs = |v: Vec<Arc<Change>>| v.iter().map(|c| c.rv).collect::<Vec<_>>();
        assert_eq!(rvs(h.since(100).unwrap()), [101, 102, 103, 104, 105]);
        assert_eq!(rvs(h.since(103).unwrap()), [104, 105]);
        assert_eq!(rvs(h.since(200).unwrap()), Vec::<u64>::new(), "a future version waits");
        let e = h.since(99).unwrap_err();
        assert_eq!((e.code, e.reason), (410, "Expired"));
        assert_eq!(e.message, "too old resource version: 99 (100)");
    }

    #[test]
    fn a_full_window_forgets_its_oldest_events() {
        let mut h = History::starting_at(100);
        for rv in 101..=110 {
            h.push(change(rv, EventType::Added, pod(&format!("p{rv}"), "Running", rv), None), 3);
        }
        assert_eq!(h.len(), 3);
        // 108, 109 and 110 are kept: a watch may start at 107 or later.
        assert_eq!(h.oldest(), 107);
        assert_eq!(h.since(107).unwrap().len(), 3);
        assert_eq!(h.since(106).unwrap_err().message, "too old resource version: 106 (107)");
    }

    #[test]
    fn a_field_selector_sees_objects_come_and_go() {
        let running = Selection {
            namespace: None,
            requirements: api::parse_field_selector(Resource::Pods, "status.phase=Running").unwrap(),
        };
        let before = pod("a", "Running", 10);
        let after = pod("a", "Failed", 11);
        // Stops matching: DELETED, with the object as it was, at the change's version.
        let gone =
            event_for(Resource::Pods, &change(11, EventType::Modified, after.clone(), Some(before.clone())), &running)
                .unwrap();
        let gone = parsed(&gone);
        assert_eq!(gone["type"], "DELETED");
        assert_eq!(gone["object"]["status"]["phase"], "Running");
        assert_eq!(gone["object"]["metadata"]["resourceVersion"], "11");
        assert_eq!(gone["object"]["kind"], "Pod");
        // Starts matching: ADDED.
        let back = pod("a", "Running", 12);
        let added =
            event_for(Resource::Pods, &change(12, EventType::Modified, back.clone(), Some(after.clone())), &running)
                .unwrap();
        assert_eq!(parsed(&added)["type"], "ADDED");
        // Matches before and after: MODIFIED; neither: nothing.
        let again = pod("a", "Running", 13);
        let modified = event_for(Resource::Pods, &change(13, EventType::Modified, again.clone(), Some(back)), &running);
        assert_eq!(parsed(&modified.unwrap())["type"], "MODIFIED");
        let failed = Selection {
            namespace: None,
            requirements: api::parse_field_selector(Resource::Pods, "status.phase=Pending").unwrap(),
        };
        assert!(
            event_for(Resource::Pods, &change(14, EventType::Modified, again.clone(), Some(before)), &failed).is_none()
        );
        // A deletion of a matching object: DELETED; of another namespace's: nothing.
        let deleted = change(15, EventType::Deleted, again.restamped(Resource::Pods, 15), Some(again));
        assert_eq!(parsed(&event_for(Resource::Pods, &deleted, &running).unwrap())["type"], "DELETED");
        let elsewhere = Selection { namespace: Some("ci".into()), requirements: Vec::new() };
        assert!(event_for(Resource::Pods, &deleted, &elsewhere).is_none());
    }

    #[test]
    fn bookmarks_carry_the_zero_object_of_their_kind() {
        let b = parsed(&bookmark_line(Resource::Pods, 42, false));
        assert_eq!(
            b,
            json!({"type": "BOOKMARK", "object": {"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": "42"}, "spec": {"containers": null}, "status": {}}})
        );
        let end = parsed(&bookmark_line(Resource::DaemonSets, 7, true));
        assert_eq!(
            end["object"]["metadata"],
            json!({"resourceVersion": "7", "annotations": {"deprecated.daemonset.template.generation": "0", "k8s.io/initial-events-end": "true"}})
        );
        for r in Resource::ALL.into_iter().filter(|r| r.group() != "metrics.k8s.io") {
            let v = parsed(&bookmark_line(r, 1, true));
            assert_eq!(v["object"]["kind"], r.kind());
            assert_eq!(v["object"]["apiVersion"], r.api_version());
        }
    }

    #[test]
    fn bookmarks_come_at_the_interval_and_before_the_deadline() {
        let now = tokio::time::Instant::now();
        let s = Duration::from_secs;
        assert_eq!(next_bookmark(now, s(60), None), Some(now + s(60)));
        assert_eq!(next_bookmark(now, s(60), Some(now + s(10))), Some(now + s(8)));
        assert_eq!(next_bookmark(now, s(1), Some(now + s(10))), Some(now + s(1)));
        assert_eq!(next_bookmark(now, s(60), Some(now + s(1))), None);
    }

    #[test]
    fn events_and_errors_are_one_json_object_a_line() {
        let e = parsed(&error_line(&ApiError::too_old_resource_version(5, 243)));
        assert_eq!(
            e,
            json!({"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "too old resource version: 5 (243)", "reason": "Expired", "code": 410}})
        );
        let added = line("ADDED", &pod("a", "Running", 3).with_kind(Resource::Pods));
        assert!(
            added.starts_with(r#"{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":"#),
            "{added}"
        );
    }
}
