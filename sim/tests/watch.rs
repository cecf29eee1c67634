//! The simulator's watches over HTTPS, read as a client reads them: the chunked stream line by
//! line, its end, its cut.

use std::sync::Arc;
use std::time::Duration;

use dumbmonit_sim::api::Resource;
use dumbmonit_sim::{Cluster, Faults, Sim, SimOptions, scenario};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

fn pod(namespace: &str, name: &str, phase: &str) -> Value {
    json!({
        "metadata": {"namespace": namespace, "name": name, "uid": format!("uid-{name}")},
        "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "app:1"}]},
        "status": {"phase": phase},
    })
}

fn cluster(pods: Vec<Value>) -> Cluster {
    let mut c = scenario::healthy(jiff::Timestamp::now());
    c.pods = pods;
    c
}

async fn start(pods: Vec<Value>) -> Sim {
    start_with(SimOptions::default(), pods).await
}

async fn start_with(options: SimOptions, pods: Vec<Value>) -> Sim {
    Sim::start(options, cluster(pods)).await.unwrap()
}

/// What the next read of a stream found.
#[derive(Debug, PartialEq)]
enum Next {
    Event(Value),
    /// The last chunk: a clean end.
    End,
    /// The connection closed without the last chunk.
    Cut,
    /// Nothing within the time allowed.
    Quiet,
}

/// An HTTP/1.1 answer being read.
struct Stream {
    status: u16,
    headers: Vec<(String, String)>,
    reader: BufReader<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>,
    pending: Vec<u8>,
    ended: bool,
}

async fn open(sim: &Sim, path: &str) -> Stream {
    open_with(sim, path, &[]).await
}

async fn open_with(sim: &Sim, path: &str, headers: &[(&str, &str)]) -> Stream {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(sim.ca_pem().as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(sim.addr()).await.unwrap();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let mut tls = connector.connect("localhost".try_into().unwrap(), tcp).await.unwrap();
    let mut head = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {}\r\n", sim.token());
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    tls.write_all(head.as_bytes()).await.unwrap();
    let mut reader = BufReader::new(tls);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).await.unwrap();
    let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).await.unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (k, v) = line.split_once(':').unwrap();
        headers.push((k.to_ascii_lowercase(), v.trim().to_string()));
    }
    Stream { status, headers, reader, pending: Vec::new(), ended: false }
}

impl Stream {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The whole body of an answer with a Content-Length.
    async fn body(&mut self) -> Value {
        let n: usize = self.header("content-length").unwrap().parse().unwrap();
        let mut buf = vec![0; n];
        self.reader.read_exact(&mut buf).await.unwrap();
        serde_json::from_slice(&buf).unwrap()
    }

    /// One chunk's data; None at the last chunk; Err when the connection is cut.
    async fn chunk(&mut self) -> Result<Option<Vec<u8>>, ()> {
        let mut size = String::new();
        match self.reader.read_line(&mut size).await {
            Ok(0) | Err(_) => return Err(()),
            Ok(_) => {}
        }
        let n = usize::from_str_radix(size.trim(), 16).map_err(|_| ())?;
        let mut data = vec![0; n + 2];
        self.reader.read_exact(&mut data).await.map_err(|_| ())?;
        data.truncate(n);
        Ok((n > 0).then_some(data))
    }

    /// The next event, within `wait`.
    async fn next_within(&mut self, wait: Duration) -> Next {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(at) = self.pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=at).collect();
                return Next::Event(serde_json::from_slice(&line).unwrap());
            }
            if self.ended {
                return Next::End;
            }
            match tokio::time::timeout_at(deadline, self.chunk()).await {
                Err(_) => return Next::Quiet,
                Ok(Err(())) => return Next::Cut,
                Ok(Ok(None)) => self.ended = true,
                Ok(Ok(Some(data))) => self.pending.extend(data),
            }
        }
    }

    async fn next(&mut self) -> Next {
        self.next_within(Duration::from_secs(5)).await
    }

    async fn event(&mut self) -> Value {
        match self.next().await {
            Next::Event(e) => e,
            other => panic!("expected an event, got {other:?}"),
        }
    }

    /// Every event until the stream ends.
    async fn rest(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            match self.next_within(Duration::from_secs(10)).await {
                Next::Event(e) => out.push(e),
                Next::End => return out,
                other => panic!("expected the end, got {other:?} after {out:?}"),
            }
        }
    }
}

fn summary(events: &[Value]) -> Vec<(String, String)> {
    events
        .iter()
        .map(|e| {
            let name = e["object"]["metadata"]["name"].as_str().unwrap_or("").to_string();
            (e["type"].as_str().unwrap().to_string(), name)
        })
        .collect()
}

fn rv(event: &Value) -> u64 {
    event["object"]["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap()
}

async fn list_rv(sim: &Sim, path: &str) -> u64 {
    let mut s = open(sim, path).await;
    assert_eq!(s.status, 200);
    s.body().await["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap()
}

#[tokio::test]
async fn a_watch_from_a_version_replays_what_followed_then_goes_live() {
    let sim = start(vec![pod("shop", "a", "Running"), pod("shop", "b", "Running"), pod("ci", "c", "Pending")]).await;
    let from = list_rv(&sim, "/api/v1/pods?limit=500").await;
    assert_eq!(from, sim.resource_version());
    let mut changed = pod("shop", "a", "Running");
    changed["metadata"]["labels"] = json!({"tier": "web"});
    let modified_at = sim.upsert(Resource::Pods, changed.clone());
    assert_eq!(modified_at, from + 1);
    assert_eq!(sim.upsert(Resource::Pods, changed), modified_at, "an update that changes nothing is none");
    let deleted_at = sim.delete(Resource::Pods, "shop", "b").unwrap();
    assert_eq!(sim.delete(Resource::Pods, "shop", "b"), None);

    let mut s = open(&sim, &format!("/api/v1/pods?watch=1&resourceVersion={from}&timeoutSeconds=2")).await;
    assert_eq!(s.status, 200);
    assert_eq!(s.header("content-type"), Some("application/json"));
    assert_eq!(s.header("transfer-encoding"), Some("chunked"));
    let m = s.event().await;
    assert_eq!((m["type"].as_str(), rv(&m)), (Some("MODIFIED"), modified_at));
    assert_eq!(m["object"]["kind"], "Pod");
    assert_eq!(m["object"]["apiVersion"], "v1");
    assert_eq!(m["object"]["metadata"]["labels"]["tier"], "web");
    let marked = s.event().await;
    assert_eq!((marked["type"].as_str(), rv(&marked)), (Some("MODIFIED"), deleted_at - 1));
    assert_eq!(marked["object"]["metadata"]["deletionGracePeriodSeconds"], 0);
    let d = s.event().await;
    assert_eq!((d["type"].as_str(), rv(&d)), (Some("DELETED"), deleted_at));
    assert_eq!(d["object"]["metadata"]["name"], "b");
    assert_eq!(d["object"]["status"]["phase"], "Running", "a deletion carries the last state");
    // Live: a new pod while the stream is open.
    let added_at = sim.upsert(Resource::Pods, pod("shop", "d", "Pending"));
    let a = s.event().await;
    assert_eq!((a["type"].as_str(), rv(&a)), (Some("ADDED"), added_at));
    // Another resource's change is not in this stream; the timeout ends it cleanly.
    sim.upsert(Resource::Nodes, json!({"metadata": {"name": "node-new"}}));
    assert_eq!(s.rest().await, Vec::<Value>::new());
    assert!(sim.requests().iter().any(|r| r.query.starts_with("watch=1&resourceVersion=")));
    assert!(sim.bytes_sent() > 0);
}

#[tokio::test]
async fn set_cluster_is_the_diff_of_the_two() {
    let sim = start(vec![pod("shop", "a", "Running"), pod("shop", "b", "Running"), pod("shop", "c", "Running")]).await;
    let from = sim.resource_version();
    let rv_of = |sim: &Sim| {
        let sim_pages = sim.pages();
        let pods = &sim_pages.iter().find(|(r, _)| *r == Resource::Pods).unwrap().1[0];
        let v: Value = serde_json::from_str(pods).unwrap();
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| (i["metadata"]["name"].as_str().unwrap().to_string(), i["metadata"]["resourceVersion"].clone()))
            .collect::<Vec<_>>()
    };
    let before = rv_of(&sim);
    // a unchanged, b changed, c gone, d new.
    sim.set_cluster(cluster(vec![
        pod("shop", "a", "Running"),
        pod("shop", "b", "Failed"),
        pod("shop", "d", "Running"),
    ]));
    let after = rv_of(&sim);
    assert_eq!(after[0], before[0], "an unchanged object keeps its resourceVersion");
    assert_ne!(after[1], before[1]);
    let mut s =
        open(&sim, &format!("/api/v1/namespaces/shop/pods?watch=1&resourceVersion={from}&timeoutSeconds=1")).await;
    let events = s.rest().await;
    assert_eq!(
        summary(&events),
        [
            ("MODIFIED".into(), "b".into()),
            ("MODIFIED".into(), "c".into()),
            ("DELETED".into(), "c".into()),
            ("ADDED".into(), "d".into())
        ]
    );
    let versions: Vec<u64> = events.iter().map(rv).collect();
    assert_eq!(versions, [from + 1, from + 2, from + 3, from + 4]);
    // A pod's deletion marks it first, as the API server does.
    assert_eq!(events[1]["object"]["metadata"]["deletionGracePeriodSeconds"], 0);
    assert!(events[1]["object"]["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(
        events[2]["object"]["metadata"]["deletionTimestamp"],
        events[1]["object"]["metadata"]["deletionTimestamp"]
    );
    assert_eq!(sim.resource_version(), from + 4, "nothing else changed: every other list was the same");
}

#[tokio::test]
async fn a_streaming_list_ends_its_initial_events_with_a_bookmark() {
    let sim = start(vec![pod("shop", "b", "Running"), pod("shop", "a", "Running"), pod("ci", "c", "Running")]).await;
    let query = "/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1";
    let events = open(&sim, query).await.rest().await;
    assert_eq!(
        summary(&events),
        [
            ("ADDED".into(), "c".into()),
            ("ADDED".into(), "a".into()),
            ("ADDED".into(), "b".into()),
            ("BOOKMARK".into(), String::new())
        ]
    );
    assert_eq!(
        events[3]["object"],
        json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": sim.resource_version().to_string(), "annotations": {"k8s.io/initial-events-end": "true"}}, "spec": {"containers": null}, "status": {}})
    );
    // Without allowWatchBookmarks: the objects, no bookmark.
    let plain = "/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1";
    assert_eq!(open(&sim, plain).await.rest().await.len(), 3);
    // A watch from "" or "0" is one too (the WatchList feature defaults it so).
    for q in ["", "&resourceVersion=0"] {
        let events = open(&sim, &format!("/api/v1/pods?watch=true&allowWatchBookmarks=true&timeoutSeconds=1{q}"))
            .await
            .rest()
            .await;
        assert_eq!(events.len(), 4, "{q}");
        assert_eq!(events[3]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
    }
    // Without the feature: the objects, and no bookmark.
    sim.set_faults(Faults { no_watch_list: true, ..Default::default() });
    let events = open(&sim, "/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=1").await.rest().await;
    assert_eq!(events.len(), 3);
    let mut refused = open(&sim, query).await;
    assert_eq!(refused.status, 422);
    let body = refused.body().await;
    assert_eq!(
        body["message"],
        "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"
    );
}

#[tokio::test]
async fn a_streaming_list_is_gzipped_one_member_a_flush() {
    let sim = start(vec![pod("shop", "a", "Running")]).await;
    let mut s = open_with(
        &sim,
        "/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=2",
        &[("Accept-Encoding", "gzip")],
    )
    .await;
    assert_eq!(s.header("content-encoding"), Some("gzip"));
    assert_eq!(s.header("vary"), Some("Accept-Encoding"));
    let first = s.chunk().await.unwrap().unwrap();
    sim.upsert(Resource::Pods, pod("shop", "b", "Running"));
    let second = s.chunk().await.unwrap().unwrap();
    let text = |gz: &[u8]| {
        let mut out = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(gz), &mut out).unwrap();
        out
    };
    assert_eq!(text(&first).lines().count(), 2, "the object and the bookmark");
    assert!(text(&second).starts_with(r#"{"type":"ADDED""#));
    // A plain watch from a version is never compressed.
    let from = sim.resource_version();
    let plain = open_with(
        &sim,
        &format!("/api/v1/pods?watch=1&resourceVersion={from}&timeoutSeconds=1"),
        &[("Accept-Encoding", "gzip")],
    )
    .await;
    assert_eq!(plain.header("content-encoding"), None);
}

#[tokio::test]
async fn a_field_selector_turns_a_change_out_of_it_into_a_deletion() {
    let sim = start(vec![pod("shop", "a", "Running"), pod("shop", "b", "Pending")]).await;
    let from = sim.resource_version();
    let mut s = open(
        &sim,
        &format!("/api/v1/pods?watch=1&resourceVersion={from}&fieldSelector=status.phase%3DRunning&timeoutSeconds=2"),
    )
    .await;
    let failed_at = sim.upsert(Resource::Pods, pod("shop", "a", "Failed"));
    let gone = s.event().await;
    assert_eq!(gone["type"], "DELETED");
    assert_eq!(gone["object"]["status"]["phase"], "Running", "the object as it was while it matched");
    assert_eq!(rv(&gone), failed_at);
    sim.upsert(Resource::Pods, pod("shop", "b", "Running"));
    let came = s.event().await;
    assert_eq!((came["type"].as_str(), came["object"]["metadata"]["name"].as_str()), (Some("ADDED"), Some("b")));
    sim.upsert(Resource::Pods, pod("shop", "c", "Pending"));
    assert_eq!(s.rest().await, Vec::<Value>::new(), "a pod that never matched is not sent");
    let mut bad = open(&sim, "/api/v1/pods?watch=1&fieldSelector=spec.nothing%3Dx").await;
    assert_eq!(bad.status, 400);
    assert_eq!(bad.body().await["message"], "field label not supported: spec.nothing");
}

#[tokio::test]
async fn bookmarks_come_at_the_interval_once_the_store_moved_on() {
    let options = SimOptions { bookmark_interval: Duration::from_millis(300), ..Default::default() };
    let sim = start_with(options, vec![pod("shop", "a", "Running")]).await;
    let from = sim.resource_version();
    let mut s = open(&sim, &format!("/api/v1/pods?watch=1&resourceVersion={from}&allowWatchBookmarks=true")).await;
    // Nothing newer than the watch's start: no bookmark.
    assert_eq!(s.next_within(Duration::from_millis(900)).await, Next::Quiet);
    let at = sim.upsert(Resource::Nodes, json!({"metadata": {"name": "node-new"}}));
    let b = s.event().await;
    assert_eq!(b["type"], "BOOKMARK");
    assert_eq!(
        b["object"],
        json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": at.to_string()}, "spec": {"containers": null}, "status": {}})
    );
    // A new interval reaches open streams at once.
    sim.set_bookmark_interval(Duration::from_secs(3600));
    let mut slow = open(&sim, &format!("/api/v1/pods?watch=1&resourceVersion={from}&allowWatchBookmarks=true")).await;
    assert_eq!(slow.next_within(Duration::from_millis(500)).await, Next::Quiet);
    sim.set_bookmark_interval(Duration::from_millis(200));
    assert_eq!(slow.event().await["type"], "BOOKMARK");
    // Without allowWatchBookmarks, none.
    let mut quiet = open(&sim, &format!("/api/v1/pods?watch=1&resourceVersion={from}")).await;
    assert_eq!(quiet.next_within(Duration::from_millis(900)).await, Next::Quiet);
}

#[tokio::test]
async fn a_version_older_than_the_history_is_410_in_an_error_event() {
    let options = SimOptions { history_window: 2, ..Default::default() };
    let sim = start_with(options, vec![pod("shop", "a", "Running")]).await;
    let start = sim.resource_version();
    let first = sim.upsert(Resource::Pods, pod("shop", "b", "Running"));
    sim.upsert(Resource::Pods, pod("shop", "c", "Running"));
    let last = sim.upsert(Resource::Pods, pod("shop", "d", "Running"));
    // The window keeps the last two: a watch may start at the one before them.
    let events =
        open(&sim, &format!("/api/v1/pods?watch=1&resourceVersion={}&timeoutSeconds=1", first)).await.rest().await;
    assert_eq!(summary(&events), [("ADDED".into(), "c".into()), ("ADDED".into(), "d".into())]);
    let mut s = open(&sim, &format!("/api/v1/pods?watch=1&resourceVersion={start}")).await;
    assert_eq!(s.status, 200);
    assert_eq!(
        s.rest().await,
        [
            json!({"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": format!("too old resource version: {start} ({first})"), "reason": "Expired", "code": 410}})
        ]
    );
    // compact(): nothing before now.
    sim.compact();
    let now = sim.resource_version();
    assert_eq!(now, last, "compacting is no change");
    let events = open(&sim, &format!("/api/v1/pods?watch=1&resourceVersion={}", last - 1)).await.rest().await;
    assert_eq!(events[0]["object"]["message"], format!("too old resource version: {} ({now})", last - 1));
    let mut fine = open(&sim, &format!("/api/v1/pods?watch=1&resourceVersion={now}")).await;
    assert_eq!(fine.next_within(Duration::from_millis(300)).await, Next::Quiet);
    // A streaming list from an old version is served from the current objects.
    let q = format!(
        "/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion={start}&timeoutSeconds=1"
    );
    assert_eq!(open(&sim, &q).await.rest().await.len(), 4);
}

#[tokio::test]
async fn a_streaming_list_from_the_future_times_out_with_504() {
    let sim = start(vec![pod("shop", "a", "Running")]).await;
    let ahead = sim.resource_version() + 100;
    let q = format!(
        "/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion={ahead}"
    );
    let events = open(&sim, &q).await.rest().await;
    assert_eq!(events[0]["type"], "ERROR");
    assert_eq!(events[0]["object"]["code"], 504);
    assert_eq!(
        events[0]["object"]["message"],
        format!("Timeout: Too large resource version: {ahead}, current: {}", sim.resource_version())
    );
}

#[tokio::test]
async fn invalid_watches_are_refused_as_the_api_server_refuses_them() {
    let sim = start(vec![pod("shop", "a", "Running")]).await;
    let cases = [
        (
            "sendInitialEvents=true",
            422,
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ),
        (
            "resourceVersionMatch=NotOlderThan",
            422,
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        ),
        (
            "resourceVersionMatch=Exact",
            422,
            "ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, resourceVersionMatch: Unsupported value: \"Exact\": supported values: \"NotOlderThan\"]",
        ),
        (
            "resourceVersion=abc",
            500,
            "resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax",
        ),
        ("timeoutSeconds=abc", 400, "strconv.ParseInt: parsing \"abc\": invalid syntax"),
        ("fieldSelector=foo", 400, "invalid selector: 'foo'; can't understand 'foo'"),
    ];
    for (q, code, message) in cases {
        let mut s = open(&sim, &format!("/api/v1/pods?watch=1&{q}")).await;
        assert_eq!(s.status, code, "{q}");
        let body = s.body().await;
        assert_eq!(body["message"], message, "{q}");
        if code == 500 {
            assert!(body.get("reason").is_none(), "the API server gives this one no reason");
        }
    }
    let mut s = open(&sim, "/api/v1/pods?watch=1&sendInitialEvents=true").await;
    assert_eq!(
        s.body().await["details"],
        json!({"group": "meta.k8s.io", "kind": "ListOptions", "causes": [{"reason": "FieldValueForbidden", "message": "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan", "field": "resourceVersionMatch"}]})
    );
    // The Metrics API serves no watch.
    let mut metrics = open(&sim, "/apis/metrics.k8s.io/v1beta1/pods?watch=1").await;
    if metrics.status == 405 {
        assert_eq!(
            metrics.body().await["message"],
            "watch is not supported on resources of kind \"pods.metrics.k8s.io\""
        );
    }
}

#[tokio::test]
async fn a_role_without_watch_gets_403_on_watches_only() {
    let sim = start(vec![pod("shop", "a", "Running")]).await;
    sim.set_faults(Faults { watch_forbidden: vec![Resource::Pods], ..Default::default() });
    let mut s = open(&sim, "/api/v1/namespaces/shop/pods?watch=1").await;
    assert_eq!(s.status, 403);
    assert_eq!(
        s.body().await["message"],
        "pods is forbidden: User \"system:serviceaccount:kube-system:dumbmonit\" cannot watch resource \"pods\" in API group \"\" in the namespace \"shop\""
    );
    assert_eq!(open(&sim, "/api/v1/pods?limit=500").await.status, 200);
    assert_eq!(open(&sim, "/api/v1/pods?watch=1").await.status, 403);
    // 401 as for lists.
    sim.rotate_token("another");
    assert_eq!(open(&sim, "/api/v1/pods?watch=1").await.status, 401);
}

#[tokio::test]
async fn faults_cut_expire_end_and_silence_open_streams() {
    let sim = start(vec![pod("shop", "a", "Running")]).await;
    let from = sim.resource_version();
    let watch = format!("/api/v1/pods?watch=1&resourceVersion={from}&allowWatchBookmarks=true");
    let wait_open = |n: usize| {
        let sim = &sim;
        async move {
            for _ in 0..100 {
                if sim.open_watches() == n {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            panic!("{} open watches, not {n}", sim.open_watches());
        }
    };

    let mut s = open(&sim, &watch).await;
    wait_open(1).await;
    sim.break_watches();
    assert_eq!(s.next().await, Next::Cut);
    wait_open(0).await;

    let mut s = open(&sim, &watch).await;
    wait_open(1).await;
    sim.send_watch_error_410();
    let e = s.event().await;
    assert_eq!(e["type"], "ERROR");
    assert_eq!(
        e["object"],
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "The resourceVersion for the provided watch is too old.", "reason": "Expired", "code": 410})
    );
    assert_eq!(s.next().await, Next::End);

    let mut s = open(&sim, &watch).await;
    wait_open(1).await;
    sim.end_watches();
    assert_eq!(s.next().await, Next::End);
    wait_open(0).await;

    sim.set_faults(Faults { silent_watches: true, ..Default::default() });
    sim.set_bookmark_interval(Duration::from_millis(100));
    let mut s = open(&sim, &format!("{watch}&timeoutSeconds=1")).await;
    assert_eq!(s.status, 200);
    let at = sim.upsert(Resource::Pods, pod("shop", "b", "Running"));
    assert_eq!(s.next_within(Duration::from_millis(1500)).await, Next::Quiet, "no event, no bookmark, no end");
    sim.set_faults(Faults::default());
    let e = s.event().await;
    assert_eq!((e["type"].as_str(), rv(&e)), (Some("ADDED"), at));
    // A client that leaves closes its stream.
    drop(s);
    wait_open(0).await;
}

#[tokio::test]
async fn a_stream_that_falls_out_of_the_window_ends() {
    let options = SimOptions { history_window: 3, ..Default::default() };
    let sim = start_with(options, vec![]).await;
    let from = sim.resource_version();
    let mut s = open(&sim, &format!("/api/v1/pods?watch=1&resourceVersion={from}")).await;
    let first = sim.upsert(Resource::Pods, pod("shop", "first", "Running"));
    assert_eq!(rv(&s.event().await), first);
    // It reads nothing more while five changes go by a window of three.
    sim.set_faults(Faults { silent_watches: true, ..Default::default() });
    for i in 0..5 {
        sim.upsert(Resource::Pods, pod("shop", &format!("p{i}"), "Running"));
    }
    sim.set_faults(Faults::default());
    assert_eq!(s.next().await, Next::End);
}
