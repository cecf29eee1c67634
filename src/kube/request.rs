//! Building requests, apart from sending them.

use http::Request;
use http::header::ACCEPT;

/// Items per page, as kubectl's `--chunk-size` default.
pub const PAGE_SIZE: u32 = 500;

/// The URI of one page of a list: `path?fieldSelector=…&limit=500&continue=…`.
pub fn list_uri(path: &str, field_selector: Option<&str>, limit: u32, continue_token: Option<&str>) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    if let Some(fs) = field_selector.filter(|s| !s.is_empty()) {
        query.append_pair("fieldSelector", fs);
    }
    query.append_pair("limit", &limit.to_string());
    if let Some(c) = continue_token {
        query.append_pair("continue", c);
    }
    format!("{path}?{}", query.finish())
}

/// How a watch starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchFrom<'a> {
    /// A streaming list (KEP-3157): every object as an ADDED event, then the bookmark
    /// annotated `k8s.io/initial-events-end`, then the changes.
    InitialEvents,
    /// The changes after this resourceVersion.
    Version(&'a str),
}

/// The URI of a watch, with bookmarks and a server-side timeout, as client-go's reflector sends it.
pub fn watch_uri(path: &str, field_selector: Option<&str>, from: WatchFrom<'_>, timeout_seconds: u32) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    query.append_pair("allowWatchBookmarks", "true");
    if let Some(fs) = field_selector.filter(|s| !s.is_empty()) {
        query.append_pair("fieldSelector", fs);
    }
    match from {
        WatchFrom::InitialEvents => {
            query.append_pair("resourceVersionMatch", "NotOlderThan");
            query.append_pair("sendInitialEvents", "true");
        }
        WatchFrom::Version(rv) => {
            query.append_pair("resourceVersion", rv);
        }
    }
    query.append_pair("timeoutSeconds", &timeout_seconds.to_string());
    query.append_pair("watch", "1");
    format!("{path}?{}", query.finish())
}

/// The field selector that keeps the ignored namespaces out on the server side, plus `extra`.
pub fn field_selector(extra: Option<&str>, ignored_namespaces: &[String]) -> Option<String> {
    let terms: Vec<String> = extra
        .into_iter()
        .map(String::from)
        .chain(ignored_namespaces.iter().map(|ns| format!("metadata.namespace!={ns}")))
        .collect();
    (!terms.is_empty()).then(|| terms.join(","))
}

/// A GET of a watch: not compressed (kube-apiserver compresses a streaming list's answer in
/// pieces that a gzip stream cannot carry, and a watch's events are small); in protobuf, as
/// client-go asks, where the kind is read from protobuf, else JSON.
pub fn get_watch(uri: &str, protobuf: bool) -> Request<Vec<u8>> {
    let accept = if protobuf { "application/vnd.kubernetes.protobuf, application/json" } else { "application/json" };
    Request::get(uri)
        .header(ACCEPT, accept)
        .header(http::header::ACCEPT_ENCODING, "identity")
        .body(Vec::new())
        .expect("a path and static headers are valid")
}

/// A GET for JSON. The only method DumbMonit ever sends.
pub fn get(uri: &str) -> Request<Vec<u8>> {
    Request::get(uri).header(ACCEPT, "application/json").body(Vec::new()).expect("a path and a static header are valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_uris_are_encoded_like_kubectl_sends_them() {
        assert_eq!(list_uri("/api/v1/pods", None, 500, None), "/api/v1/pods?limit=500");
        assert_eq!(
            list_uri("/api/v1/events", Some("type=Warning"), 500, None),
            "/api/v1/events?fieldSelector=type%3DWarning&limit=500"
        );
        assert_eq!(
            list_uri("/api/v1/pods", Some("metadata.namespace!=ci"), 500, Some("eyJ2Ijoi+/=")),
            "/api/v1/pods?fieldSelector=metadata.namespace%21%3Dci&limit=500&continue=eyJ2Ijoi%2B%2F%3D"
        );
    }

    #[test]
    fn watch_uris_ask_for_bookmarks_and_a_timeout() {
        assert_eq!(
            watch_uri("/api/v1/pods", Some("metadata.namespace!=ci"), WatchFrom::InitialEvents, 421),
            "/api/v1/pods?allowWatchBookmarks=true&fieldSelector=metadata.namespace%21%3Dci\
             &resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeoutSeconds=421&watch=1"
        );
        assert_eq!(
            watch_uri("/api/v1/nodes", None, WatchFrom::Version("1234"), 300),
            "/api/v1/nodes?allowWatchBookmarks=true&resourceVersion=1234&timeoutSeconds=300&watch=1"
        );
    }

    #[test]
    fn ignored_namespaces_become_field_selectors() {
        assert_eq!(field_selector(None, &[]), None);
        assert_eq!(
            field_selector(None, &["ci".into(), "dev".into()]).as_deref(),
            Some("metadata.namespace!=ci,metadata.namespace!=dev")
        );
        assert_eq!(field_selector(Some("type=Warning"), &[]).as_deref(), Some("type=Warning"));
    }

    #[test]
    fn requests_are_gets_for_json() {
        let r = get("/version");
        assert_eq!(r.method(), http::Method::GET);
        assert_eq!(r.headers()[ACCEPT], "application/json");
        assert!(r.body().is_empty());
    }
}
