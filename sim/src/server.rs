//! The simulated API server on a TLS socket.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper::body::Incoming;
use hyper::header::{ACCEPT_ENCODING, AUTHORIZATION, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::api::{self, ApiError, ListParams, Resource, Route, StoredObject, WatchParams};
use crate::fixtures::Cluster;
use crate::tls::Pki;
use crate::watch::{self, Change, Control, EventType, History, Hub, Selection};

/// kube-apiserver compresses responses of at least this size for clients that accept gzip.
const GZIP_THRESHOLD: usize = 128 * 1024;

/// How a simulated API server is started.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// Where to listen; port 0 picks a free one.
    pub bind: SocketAddr,
    /// The only bearer token accepted.
    pub token: String,
    /// Names and IPs in the serving certificate.
    pub sans: Vec<String>,
    /// The user the token authenticates as (named in 403 messages).
    pub user: String,
    /// How long the serving certificate stays valid from the start; None: a year.
    pub certificate_lifetime: Option<Duration>,
    /// How often a watch with `allowWatchBookmarks` gets a BOOKMARK (the watch cache: about a
    /// minute). A bookmark is also due 2 s before a watch's deadline; either is sent only when
    /// the store's resourceVersion has passed the one the watch started from.
    pub bookmark_interval: Duration,
    /// How many events of each resource the history keeps (the watch cache's window): a watch
    /// from a resourceVersion older than the window gets 410.
    pub history_window: usize,
    /// Offer HTTP/2 (ALPN `h2`) beside HTTP/1.1, as kube-apiserver does. Off by default: the
    /// faults that cut a connection mid-answer are HTTP/1.1's.
    pub http2: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            token: "sim-token-0123456789abcdef".into(),
            sans: vec!["127.0.0.1".into(), "localhost".into(), "::1".into(), "kubernetes.default.svc".into()],
            user: "system:serviceaccount:kube-system:dumbmonit".into(),
            certificate_lifetime: None,
            bookmark_interval: Duration::from_secs(60),
            history_window: 10_000,
            http2: false,
        }
    }
}

/// Switches that make the server misbehave, for tests.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// Added before every answer.
    pub latency: Duration,
    /// Resources (plural, e.g. `persistentvolumeclaims`) the token may not list: 403 (on
    /// watches too, in their words: `cannot watch resource`).
    pub forbidden: Vec<Resource>,
    /// The next N requests that carry a continue token get 410 Expired.
    pub expire_continue: u32,
    /// Every API request is answered with this status (500, 503, 429…).
    pub fail_status: Option<u16>,
    /// Lists of this resource are answered with this broken body.
    pub body: Option<(Resource, BodyFault)>,
    /// A continued list comes back with the very continue token it was asked with.
    pub repeat_continue: bool,
    /// Every continued list is an empty page with yet another continue token.
    pub endless_pages: bool,
    /// Each connection is closed after one answer, so every request makes a new handshake
    /// (and sees the certificate as it is then).
    pub close_connections: bool,
    /// Resources the token may list but not watch (a role with get and list, without watch):
    /// 403 `cannot watch resource` on watches only. (`forbidden` refuses watches too.)
    pub watch_forbidden: Vec<Resource>,
    /// The server answers as one without the WatchList feature: `sendInitialEvents` is refused
    /// with 422, and a watch from `""` or `"0"` is the legacy one (the current objects as
    /// ADDED, no bookmark ending them, never gzip).
    pub no_watch_list: bool,
    /// Watch streams send nothing at all, not even bookmarks, and do not end at their timeout:
    /// a stuck stream. New watches get their 200 and headers, then silence. Once the fault is
    /// lifted, the streams go on where they were.
    pub silent_watches: bool,
    /// Namespaced access: the token is granted only these namespaces (a Role and RoleBinding in
    /// each, as `dumbmonit rbac --namespace` prints): Lists and watches elsewhere, and every
    /// cluster-scoped one (nodes, APIServices, the nodes' usage), are 403 in RBAC's words.
    pub granted_namespaces: Option<Vec<String>>,
    /// The token may get Namespaces (a kubeconfig admin's may; the guide's role and namespaced
    /// Roles may not): a GET of `/api/v1/namespaces/NAME` is then 200 or 404, else 403.
    pub get_namespaces: bool,
}

impl Faults {
    /// Whether RBAC refuses the token a `list`/`watch` in `namespace` (None: cluster-wide).
    fn refused(&self, namespace: Option<&str>) -> bool {
        match (&self.granted_namespaces, namespace) {
            (None, _) => false,
            (Some(granted), Some(ns)) => !granted.iter().any(|g| g == ns),
            (Some(_), None) => true,
        }
    }
}

/// A list answer broken on the way.
#[derive(Clone, Debug)]
pub enum BodyFault {
    /// Half the body is sent, then the connection is cut.
    ResetMidway,
    /// Half the body, as a complete answer (its Content-Length is the half's).
    Truncated,
    /// Another answer altogether: an HTML page from a proxy, invalid JSON, invalid UTF-8…
    Replace { status: u16, content_type: &'static str, body: Bytes },
}

/// The body of an answer.
pub(crate) type Body = BoxBody<Bytes, std::io::Error>;

fn full(bytes: Bytes) -> Body {
    Full::new(bytes).map_err(|never| match never {}).boxed()
}

/// One request as the server saw it (never the token).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestRecord {
    pub method: String,
    pub path: String,
    pub query: String,
    pub accept_gzip: bool,
    pub authorized: bool,
}

struct Store {
    version: Value,
    resource_version: u64,
    objects: HashMap<Resource, Vec<StoredObject>>,
    /// Every change, per resource, within the window.
    histories: HashMap<Resource, History>,
    window: usize,
    /// Rendered answers by (path, query): a page is rendered (and compressed) once, so that the
    /// simulator is not what a benchmark measures.
    pages: Mutex<HashMap<(String, String), Arc<Page>>>,
}

/// One rendered answer, and its gzip form once asked for.
struct Page {
    plain: Bytes,
    gzip: std::sync::OnceLock<Bytes>,
}

impl Page {
    fn gzipped(&self) -> Bytes {
        self.gzip
            .get_or_init(|| {
                use std::io::Write;
                let mut enc = flate2::write::GzEncoder::new(
                    Vec::with_capacity(self.plain.len() / 8),
                    flate2::Compression::fast(),
                );
                enc.write_all(&self.plain).expect("writing to memory");
                Bytes::from(enc.finish().expect("writing to memory"))
            })
            .clone()
    }
}

impl Store {
    /// The pages of every list, as the server answers `?limit=500` (events with the
    /// `type=Warning` selector) following `continue`: what a full cycle reads.
    fn pages(&self) -> Vec<(Resource, Vec<String>)> {
        let mut out = Vec::new();
        for resource in Resource::ALL {
            let objects = self.objects.get(&resource).map(Vec::as_slice).unwrap_or(&[]);
            let selector = (resource == Resource::Events).then(|| "type=Warning".to_string());
            let mut params = ListParams { limit: Some(500), continue_token: None, field_selector: selector };
            let mut bodies = Vec::new();
            loop {
                let body =
                    api::list_page(resource, objects, None, &params, self.resource_version).expect("a valid query");
                let next = serde_json::from_str::<Value>(&body)
                    .ok()
                    .and_then(|v| v["metadata"]["continue"].as_str().map(String::from));
                bodies.push(body);
                match next {
                    Some(c) => params.continue_token = Some(c),
                    None => break,
                }
            }
            out.push((resource, bodies));
        }
        out
    }

    /// The store as a watch cache that has just listed it: its history starts empty, at the
    /// resourceVersion of its last object.
    fn new(cluster: Cluster, window: usize) -> Store {
        let mut rv = 1000u64;
        let mut objects = HashMap::new();
        let version = cluster.version.clone();
        for (resource, items) in cluster.lists() {
            let mut stored: Vec<StoredObject> = items
                .into_iter()
                .map(|o| {
                    rv += 1;
                    StoredObject::new(resource, o, rv)
                })
                .collect();
            stored.sort_by(|a, b| a.key.cmp(&b.key));
            objects.insert(resource, stored);
        }
        let histories = Resource::ALL.into_iter().map(|r| (r, History::starting_at(rv))).collect();
        Store { version, resource_version: rv, objects, histories, window, pages: Mutex::new(HashMap::new()) }
    }

    fn next_rv(&mut self) -> u64 {
        self.resource_version += 1;
        self.resource_version
    }

    fn record(&mut self, resource: Resource, kind: EventType, object: StoredObject, prev: Option<StoredObject>) {
        let change = Change { rv: object.resource_version, kind, object, prev };
        let window = self.window;
        self.histories.entry(resource).or_insert_with(|| History::starting_at(0)).push(change, window);
    }

    /// Makes `resource`'s objects `items`: what is unchanged keeps its resourceVersion, what
    /// changed is MODIFIED, what is new ADDED, what is gone DELETED (in key order).
    fn replace(&mut self, resource: Resource, items: Vec<Value>) {
        let mut incoming: Vec<(String, Value)> = items.into_iter().map(|v| (api::key_of(resource, &v), v)).collect();
        incoming.sort_by(|a, b| a.0.cmp(&b.0));
        let old = std::mem::take(self.objects.entry(resource).or_default());
        let mut kept = Vec::with_capacity(incoming.len());
        let mut old = old.into_iter().peekable();
        let mut incoming = incoming.into_iter().peekable();
        loop {
            let order = match (old.peek(), incoming.peek()) {
                (None, None) => break,
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (Some(o), Some((key, _))) => o.key.cmp(key),
            };
            match order {
                std::cmp::Ordering::Less => {
                    let gone = old.next().expect("peeked");
                    self.remove(resource, gone);
                }
                std::cmp::Ordering::Greater => {
                    let (_, v) = incoming.next().expect("peeked");
                    let rv = self.next_rv();
                    let added = StoredObject::new(resource, v, rv);
                    self.record(resource, EventType::Added, added.clone(), None);
                    kept.push(added);
                }
                std::cmp::Ordering::Equal => {
                    let before = old.next().expect("peeked");
                    let (_, v) = incoming.next().expect("peeked");
                    let same = StoredObject::new(resource, v, before.resource_version);
                    if same.json == before.json {
                        kept.push(before);
                    } else {
                        let rv = self.next_rv();
                        let after = same.restamped(resource, rv);
                        self.record(resource, EventType::Modified, after.clone(), Some(before));
                        kept.push(after);
                    }
                }
            }
        }
        self.objects.insert(resource, kept);
    }

    /// Creates or replaces one object; an update that changes nothing is no change (as the API
    /// server skips it). Its resourceVersion.
    fn upsert(&mut self, resource: Resource, object: Value) -> u64 {
        let key = api::key_of(resource, &object);
        let list = self.objects.entry(resource).or_default();
        let at = list.partition_point(|o| o.key < key);
        let existing = list.get(at).filter(|o| o.key == key).cloned();
        match existing {
            Some(before) => {
                let same = StoredObject::new(resource, object, before.resource_version);
                if same.json == before.json {
                    return before.resource_version;
                }
                let rv = self.next_rv();
                let after = same.restamped(resource, rv);
                self.objects.get_mut(&resource).expect("listed")[at] = after.clone();
                self.record(resource, EventType::Modified, after, Some(before));
                rv
            }
            None => {
                let rv = self.next_rv();
                let added = StoredObject::new(resource, object, rv);
                self.objects.get_mut(&resource).expect("listed").insert(at, added.clone());
                self.record(resource, EventType::Added, added, None);
                rv
            }
        }
    }

    /// Deletes one object: its resourceVersion of deletion, or None when there was none.
    fn delete(&mut self, resource: Resource, namespace: &str, name: &str) -> Option<u64> {
        let key = api::object_key(resource, namespace, name);
        let list = self.objects.get_mut(&resource)?;
        let at = list.partition_point(|o| o.key < key);
        if list.get(at).is_none_or(|o| o.key != key) {
            return None;
        }
        let gone = list.remove(at);
        Some(self.remove(resource, gone))
    }

    /// The events of an object's deletion; the resourceVersion of the last. A pod is first
    /// marked (a MODIFIED with a deletionTimestamp and a grace period of 0, as the API server
    /// does on every pod deletion that ends at once, even a forced one), unless it already was.
    fn remove(&mut self, resource: Resource, mut gone: StoredObject) -> u64 {
        if resource == Resource::Pods {
            let mut pod: Value = serde_json::from_str(&gone.json).expect("stored objects are JSON");
            let meta = &mut pod["metadata"];
            if meta["deletionTimestamp"].is_null() || meta["deletionGracePeriodSeconds"] != 0 {
                if meta["deletionTimestamp"].is_null() {
                    meta["deletionTimestamp"] = Value::String(crate::fixtures::time(jiff::Timestamp::now()));
                }
                meta["deletionGracePeriodSeconds"] = Value::from(0);
                let rv = self.next_rv();
                let marked = StoredObject::new(resource, pod, rv);
                self.record(resource, EventType::Modified, marked.clone(), Some(gone));
                gone = marked;
            }
        }
        let rv = self.next_rv();
        self.record(resource, EventType::Deleted, gone.restamped(resource, rv), Some(gone));
        rv
    }
}

struct Shared {
    options: SimOptions,
    /// Shared by the members of a fleet: they serve the same objects.
    store: Arc<RwLock<Store>>,
    faults: Mutex<Faults>,
    log: Mutex<Vec<RequestRecord>>,
    gzip_responses: std::sync::atomic::AtomicU64,
    bytes_sent: std::sync::atomic::AtomicU64,
    /// TLS connections accepted (counted on the first member: a fleet shares one listener).
    connections: std::sync::atomic::AtomicU64,
    compress: std::sync::atomic::AtomicBool,
    /// Numbers the pages of `endless_pages`.
    endless: std::sync::atomic::AtomicU64,
    /// The token accepted instead of the first one, once rotated (the old one is then refused).
    rotated: Mutex<Option<String>>,
    /// Watches, shared by the members of a fleet.
    hub: Arc<Hub>,
}

/// A running simulated API server. Dropping it stops it.
///
/// A fleet (`start_fleet`) is many clusters from one process: cluster `i` is served under the
/// path prefix `/c/i` (`member_url(i)`), each with its own faults and request log, all with the
/// same objects (stored once).
pub struct Sim {
    addr: SocketAddr,
    ca_pem: String,
    shared: Arc<Shared>,
    members: Arc<Vec<Arc<Shared>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Sim {
    fn drop(&mut self) {
        self.task.abort();
        // Open watch streams go with the server.
        let _ = self.shared.hub.control.send(Control::Cut);
    }
}

impl Sim {
    /// Generates the PKI, binds, and serves `cluster` until dropped.
    pub async fn start(options: SimOptions, cluster: Cluster) -> std::io::Result<Sim> {
        Sim::serve(options, cluster, None).await
    }

    /// `count` clusters with the same objects, cluster `i` under `/c/i`.
    pub async fn start_fleet(options: SimOptions, cluster: Cluster, count: usize) -> std::io::Result<Sim> {
        Sim::serve(options, cluster, Some(count)).await
    }

    async fn serve(options: SimOptions, cluster: Cluster, fleet: Option<usize>) -> std::io::Result<Sim> {
        let pki = Pki::generate(&options.sans, options.certificate_lifetime).map_err(std::io::Error::other)?;
        let mut tls = pki.server_config().map_err(std::io::Error::other)?;
        if options.http2 {
            tls.alpn_protocols.insert(0, b"h2".to_vec());
        }
        let acceptor = TlsAcceptor::from(Arc::new(tls));
        let listener = TcpListener::bind(options.bind).await?;
        let addr = listener.local_addr()?;
        let store = Store::new(cluster, options.history_window);
        let hub = Arc::new(Hub::new(store.resource_version, options.bookmark_interval));
        let store = Arc::new(RwLock::new(store));
        let member = |options: SimOptions| {
            Arc::new(Shared {
                options,
                store: store.clone(),
                faults: Mutex::new(Faults::default()),
                log: Mutex::new(Vec::new()),
                gzip_responses: Default::default(),
                bytes_sent: Default::default(),
                connections: Default::default(),
                compress: std::sync::atomic::AtomicBool::new(true),
                endless: Default::default(),
                rotated: Mutex::new(None),
                hub: hub.clone(),
            })
        };
        let members: Vec<Arc<Shared>> = (0..fleet.unwrap_or(1).max(1)).map(|_| member(options.clone())).collect();
        let members = Arc::new(members);
        let shared = members[0].clone();
        let task = tokio::spawn(accept_loop(listener, acceptor, members.clone(), fleet.is_some()));
        Ok(Sim { addr, ca_pem: pki.ca_pem, shared, members, task })
    }

    /// The address of cluster `i` of a fleet: `https://127.0.0.1:PORT/c/i`.
    pub fn member_url(&self, i: usize) -> String {
        format!("https://{}/c/{i}", self.addr)
    }

    /// How many clusters this server serves.
    pub fn members(&self) -> usize {
        self.members.len()
    }

    /// Every request cluster `i` of a fleet served so far.
    pub fn member_requests(&self, i: usize) -> Vec<RequestRecord> {
        self.members[i].log.lock().unwrap().clone()
    }

    /// Faults of cluster `i` of a fleet.
    pub fn set_member_faults(&self, i: usize, faults: Faults) {
        *self.members[i].faults.lock().unwrap() = faults;
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `https://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// The cluster CA, PEM.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// From now on only `token` is accepted, as after a service-account token rotation.
    pub fn rotate_token(&self, token: &str) {
        *self.shared.rotated.lock().unwrap() = Some(token.to_string());
    }

    pub fn token(&self) -> &str {
        &self.shared.options.token
    }

    /// Every request served so far.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.log.lock().unwrap().clone()
    }

    /// Replaces the whole cluster (a scenario step), as the changes that lead to it: per
    /// resource and by key (namespace/name), an unchanged object keeps its resourceVersion, a
    /// changed one gets the next and a MODIFIED event, a new one ADDED, a missing one DELETED
    /// (its last state at a new resourceVersion). `/version` becomes the cluster's.
    pub fn set_cluster(&self, cluster: Cluster) {
        self.change(|store| {
            store.version = cluster.version.clone();
            for (resource, items) in cluster.lists() {
                store.replace(resource, items);
            }
        });
    }

    /// Adds objects to a list (a large cluster is built in chunks, so that its objects never
    /// all exist as JSON values at once): an ADDED event each.
    pub fn extend(&self, resource: Resource, items: Vec<Value>) {
        self.change(|store| {
            let mut added = Vec::with_capacity(items.len());
            for o in items {
                let rv = store.next_rv();
                added.push(StoredObject::new(resource, o, rv));
            }
            for o in &added {
                store.record(resource, EventType::Added, o.clone(), None);
            }
            let list = store.objects.entry(resource).or_default();
            list.extend(added);
            list.sort_by(|a, b| a.key.cmp(&b.key));
        });
    }

    /// Creates `object` (ADDED) or replaces the one of the same namespace and name (MODIFIED),
    /// at the next resourceVersion, which it returns. An object equal to the stored one is no
    /// change: no event, its resourceVersion kept. Cheap: no other object is touched.
    pub fn upsert(&self, resource: Resource, object: Value) -> u64 {
        self.change(|store| store.upsert(resource, object))
    }

    /// Deletes an object at once (`namespace` is ignored for cluster-scoped resources): a
    /// DELETED event with its last state at a new resourceVersion, which it returns; None when
    /// there was no such object. A pod is first marked, as the API server marks every pod it
    /// deletes: a MODIFIED with `deletionTimestamp` (now, unless it had one) and
    /// `deletionGracePeriodSeconds: 0`, then the DELETED (set_cluster deletes pods so too).
    pub fn delete(&self, resource: Resource, namespace: &str, name: &str) -> Option<u64> {
        let namespace = if resource.namespaced() { namespace } else { "" };
        self.change(|store| store.delete(resource, namespace, name))
    }

    /// Forgets every event up to now, as a watch cache that starts over from a list of the
    /// current state (what kube-apiserver does at its start): a watch from an older
    /// resourceVersion gets the ERROR event with 410 `too old resource version: R (NOW)`. Open
    /// streams that had not yet sent every event of their resource end.
    pub fn compact(&self) {
        self.change(|store| {
            let rv = store.resource_version;
            for h in store.histories.values_mut() {
                h.compact(rv);
            }
        });
    }

    /// The store's current resourceVersion (of its last change).
    pub fn resource_version(&self) -> u64 {
        self.shared.store.read().unwrap().resource_version
    }

    /// Every open watch stream is cut now, mid-connection: the connection is dropped without
    /// the last chunk.
    pub fn break_watches(&self) {
        let _ = self.shared.hub.control.send(Control::Cut);
    }

    /// Every open watch stream gets an ERROR event with a 410 Expired Status (`The
    /// resourceVersion for the provided watch is too old.`, as the API server words it when etcd
    /// compacted past a watch it serves), then ends cleanly.
    pub fn send_watch_error_410(&self) {
        let _ = self.shared.hub.control.send(Control::Expire);
    }

    /// Every open watch stream ends cleanly, without an event: what the watch cache does to a
    /// watcher that falls behind, and to all of them when it starts over.
    pub fn end_watches(&self) {
        let _ = self.shared.hub.control.send(Control::End);
    }

    /// How many watch streams are open (of every member of a fleet).
    pub fn open_watches(&self) -> usize {
        self.shared.hub.open.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// How often watches with `allowWatchBookmarks` get a bookmark (open ones too: the next is
    /// due one interval from now).
    pub fn set_bookmark_interval(&self, interval: Duration) {
        self.shared.hub.bookmark_interval.send_replace(interval);
    }

    /// One change to the store: the rendered pages are forgotten and the watches told.
    fn change<T>(&self, f: impl FnOnce(&mut Store) -> T) -> T {
        let (out, rv) = {
            let mut store = self.shared.store.write().unwrap();
            let out = f(&mut store);
            store.pages.lock().unwrap().clear();
            (out, store.resource_version)
        };
        self.shared.hub.changed.send_replace(rv);
        out
    }

    /// Every page of every list, as a full cycle reads them (for measuring parsing alone).
    pub fn pages(&self) -> Vec<(Resource, Vec<String>)> {
        self.shared.store.read().unwrap().pages()
    }

    /// Body bytes sent so far (compressed size when compressed).
    pub fn bytes_sent(&self) -> u64 {
        self.shared.bytes_sent.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether answers of 128 KiB and more are compressed for clients that accept gzip (on by
    /// default, as kube-apiserver does).
    pub fn set_compression(&self, on: bool) {
        self.shared.compress.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// How many TLS connections clients opened to it so far.
    pub fn connections(&self) -> u64 {
        self.shared.connections.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many answers were sent gzip-compressed.
    pub fn gzip_responses(&self) -> u64 {
        self.shared.gzip_responses.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn set_faults(&self, faults: Faults) {
        *self.shared.faults.lock().unwrap() = faults;
    }
}

/// The member a path is for, and the path within it: `/c/17/api/v1/pods` is cluster 17's
/// `/api/v1/pods` in a fleet; a single cluster takes every path as it is.
fn member_of(members: &[Arc<Shared>], fleet: bool, path: &str) -> Option<(Arc<Shared>, String)> {
    if !fleet {
        return Some((members[0].clone(), path.to_string()));
    }
    let rest = path.strip_prefix("/c/")?;
    let (index, inner) = rest.split_once('/').unwrap_or((rest, ""));
    let member = members.get(index.parse::<usize>().ok()?)?;
    Some((member.clone(), format!("/{inner}")))
}

async fn accept_loop(listener: TcpListener, acceptor: TlsAcceptor, members: Arc<Vec<Arc<Shared>>>, fleet: bool) {
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        let acceptor = acceptor.clone();
        let members = members.clone();
        tokio::spawn(async move {
            // A failed handshake (untrusted CA on the client side, say) just ends the connection.
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            members[0].connections.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let keep_alive = !members.iter().any(|m| m.faults.lock().unwrap().close_connections);
            let service = service_fn(move |req: Request<Incoming>| {
                let found = member_of(&members, fleet, req.uri().path());
                async move {
                    Ok::<_, std::convert::Infallible>(match found {
                        Some((shared, path)) => handle(&shared, path, req).await,
                        None => respond(StatusCode::NOT_FOUND, Bytes::from(ApiError::not_found().body()), false, None),
                    })
                }
            });
            if tls.get_ref().1.alpn_protocol() == Some(b"h2") {
                let _ = hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .max_concurrent_streams(1000)
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
                return;
            }
            let _ = hyper::server::conn::http1::Builder::new()
                .keep_alive(keep_alive)
                .serve_connection(TokioIo::new(tls), service)
                .await;
        });
    }
}

async fn handle(shared: &Arc<Shared>, path: String, req: Request<Incoming>) -> Response<Body> {
    let query = req.uri().query().unwrap_or("").to_string();
    let accept_gzip = req
        .headers()
        .get(ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|e| e.trim().starts_with("gzip")));
    let token = shared.rotated.lock().unwrap().clone().unwrap_or_else(|| shared.options.token.clone());
    let expected = format!("Bearer {token}");
    let authorized = req.headers().get(AUTHORIZATION).is_some_and(|v| v.as_bytes() == expected.as_bytes());
    shared.log.lock().unwrap().push(RequestRecord {
        method: req.method().to_string(),
        path: path.clone(),
        query: query.clone(),
        accept_gzip,
        authorized,
    });

    let faults = shared.faults.lock().unwrap().clone();
    if !faults.latency.is_zero() {
        tokio::time::sleep(faults.latency).await;
    }
    if authorized
        && req.method() == hyper::Method::GET
        && api::is_watch(&query)
        && let Some(Route::List { resource, namespace }) = api::route(&path)
    {
        // The API server compresses a watch only when gzip is named exactly.
        let gzip = shared.compress.load(std::sync::atomic::Ordering::Relaxed)
            && req
                .headers()
                .get(ACCEPT_ENCODING)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.split(',').any(|e| e.trim() == "gzip"));
        return match start_watch(shared, &faults, resource, namespace, &query, gzip) {
            Ok(response) => response,
            Err(e) => failure(shared, e),
        };
    }
    let result = if !authorized {
        Err(ApiError::unauthorized())
    } else if req.method() != hyper::Method::GET {
        Err(ApiError::method_not_allowed())
    } else {
        answer(shared, &faults, &path, &query)
    };
    if let (Ok(page), Some((resource, fault))) = (&result, &faults.body)
        && matches!(api::route(&path), Some(Route::List { resource: r, .. }) if r == *resource)
    {
        return broken(&page.plain, fault);
    }
    let compress = accept_gzip && shared.compress.load(std::sync::atomic::Ordering::Relaxed);
    let (status, body, gzip, retry_after) = match result {
        Ok(page) if compress && page.plain.len() >= GZIP_THRESHOLD => (StatusCode::OK, page.gzipped(), true, None),
        Ok(page) => (StatusCode::OK, page.plain.clone(), false, None),
        Err(e) => {
            let retry_after = (e.code == 429 || e.code == 503).then_some("1");
            (
                StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                Bytes::from(e.body()),
                false,
                retry_after,
            )
        }
    };
    if gzip {
        shared.gzip_responses.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    shared.bytes_sent.fetch_add(body.len() as u64, std::sync::atomic::Ordering::Relaxed);
    respond(status, body, gzip, retry_after)
}

/// An error answer, counted.
fn failure(shared: &Shared, e: ApiError) -> Response<Body> {
    let retry_after = (e.code == 429 || e.code == 503).then_some("1");
    let body = Bytes::from(e.body());
    shared.bytes_sent.fetch_add(body.len() as u64, std::sync::atomic::Ordering::Relaxed);
    respond(StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), body, false, retry_after)
}

/// One frame of a watch body.
type Chunk = Result<Frame<Bytes>, std::io::Error>;

/// A watch that passed authorization and validation.
struct WatchSpec {
    resource: Resource,
    selection: Selection,
    params: WatchParams,
    /// The resourceVersion asked for (`""` is 0).
    rv: u64,
    timeout: Duration,
    gzip: bool,
}

/// Checks a watch request as the API server does, in its order (authorization, the query's
/// decoding, its validation, the field selector's fields, the resourceVersion), then answers 200
/// with the stream.
fn start_watch(
    shared: &Arc<Shared>,
    faults: &Faults,
    resource: Resource,
    namespace: Option<String>,
    query: &str,
    gzip: bool,
) -> Result<Response<Body>, ApiError> {
    if let Some(code) = faults.fail_status {
        return Err(match code {
            429 => ApiError::too_many_requests(),
            503 => ApiError::service_unavailable(),
            _ => ApiError::internal("etcdserver: request timed out"),
        });
    }
    if matches!(resource, Resource::NodeMetrics | Resource::PodMetrics) {
        metrics_api_gate(&shared.store.read().unwrap())?;
        return Err(ApiError::method_not_supported(resource, "watch"));
    }
    if faults.forbidden.contains(&resource)
        || faults.watch_forbidden.contains(&resource)
        || faults.refused(namespace.as_deref())
    {
        return Err(ApiError::forbidden_to("watch", resource, &shared.options.user, namespace.as_deref()));
    }
    let params = WatchParams::from_query(query, !faults.no_watch_list)?;
    let requirements = match &params.field_selector {
        Some(s) => api::parse_field_selector(resource, s)?,
        None => Vec::new(),
    };
    let rv = params.parsed_resource_version()?;
    let timeout = match params.timeout_seconds {
        Some(t) => Duration::from_secs(t.max(0) as u64),
        // The API server's default: its minimum request timeout (30 min) times 1 to 2.
        None => Duration::from_secs(1800 + u64::from(jiff::Timestamp::now().subsec_nanosecond().unsigned_abs()) % 1800),
    };
    let gzip = gzip && params.watch_list();
    let spec = WatchSpec { resource, selection: Selection { namespace, requirements }, params, rv, timeout, gzip };
    let (tx, rx) = tokio::sync::mpsc::channel::<Chunk>(16);
    let task_shared = shared.clone();
    shared.hub.open.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    tokio::spawn(async move {
        stream_watch(&task_shared, spec, tx).await;
        task_shared.hub.open.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    });
    let body =
        StreamBody::new(futures_util::stream::unfold(
            rx,
            |mut rx| async move { rx.recv().await.map(|chunk| (chunk, rx)) },
        ))
        .boxed();
    let mut builder = Response::builder().status(StatusCode::OK).header(CONTENT_TYPE, "application/json");
    if gzip {
        shared.gzip_responses.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        builder = builder.header(CONTENT_ENCODING, "gzip").header(hyper::header::VARY, "Accept-Encoding");
    }
    Ok(builder.body(body).expect("static headers are valid"))
}

/// Where a watch stream writes: each write is one flush (with gzip, one gzip member, as the
/// API server's per-flush writer makes them).
struct Out<'a> {
    shared: &'a Shared,
    tx: tokio::sync::mpsc::Sender<Chunk>,
    gzip: bool,
}

impl Out<'_> {
    /// False once the client is gone.
    async fn send(&self, text: String) -> bool {
        if text.is_empty() {
            return true;
        }
        let bytes = if self.gzip {
            use std::io::Write;
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            enc.write_all(text.as_bytes()).expect("writing to memory");
            Bytes::from(enc.finish().expect("writing to memory"))
        } else {
            Bytes::from(text)
        };
        self.shared.bytes_sent.fetch_add(bytes.len() as u64, std::sync::atomic::Ordering::Relaxed);
        self.tx.send(Ok(Frame::data(bytes))).await.is_ok()
    }

    fn silent(&self) -> bool {
        self.shared.faults.lock().unwrap().silent_watches
    }
}

/// Frames of about this size carry a streaming list's initial events.
const INITIAL_FRAME: usize = 64 * 1024;

/// A watch stream, until its deadline, a fault, or the client leaving.
async fn stream_watch(shared: &Shared, spec: WatchSpec, tx: tokio::sync::mpsc::Sender<Chunk>) {
    let hub = &shared.hub;
    let mut control = hub.control.subscribe();
    let mut changed = hub.changed.subscribe();
    let mut interval = hub.bookmark_interval.subscribe();
    let started = tokio::time::Instant::now();
    let deadline = started + spec.timeout;
    let out = Out { shared, tx, gzip: spec.gzip };
    let resource = spec.resource;
    // Events after `cursor` are yet to be sent; bookmarks need a version above `start`.
    let mut cursor = 0u64;
    let mut start = 0u64;
    let mut begun = false;
    let mut bookmark_due = false;
    let mut next_bookmark = None;
    loop {
        let silent = out.silent();
        if !silent {
            if !begun {
                begun = true;
                match begin(shared, &spec, &out, &mut changed).await {
                    Some((c, s)) => (cursor, start) = (c, s),
                    None => return,
                }
                let every = *interval.borrow_and_update();
                next_bookmark = watch::next_bookmark(tokio::time::Instant::now(), every, Some(deadline));
            }
            let (lines, newest, current) = {
                let store = shared.store.read().unwrap();
                let Some(history) = store.histories.get(&resource) else { return };
                let Some(events) = history.next_for_stream(cursor) else {
                    // Events it had not sent fell out of the window: the watch cache ends it.
                    return;
                };
                let mut lines = String::new();
                for e in &events {
                    if let Some(line) = watch::event_for(resource, e, &spec.selection) {
                        lines.push_str(&line);
                    }
                }
                (lines, events.last().map(|e| e.rv), store.resource_version)
            };
            if let Some(rv) = newest {
                cursor = rv;
            }
            if !out.send(lines).await {
                return;
            }
            if bookmark_due {
                bookmark_due = false;
                if spec.params.allow_bookmarks
                    && current > start
                    && !out.send(watch::bookmark_line(resource, current, false)).await
                {
                    return;
                }
                let every = *interval.borrow_and_update();
                next_bookmark = watch::next_bookmark(tokio::time::Instant::now(), every, Some(deadline));
            }
        }
        let poll = async {
            if silent {
                tokio::time::sleep(Duration::from_millis(50)).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            _ = out.tx.closed() => return,
            signal = control.recv() => match signal {
                Ok(Control::Cut) => {
                    let cut = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "watch cut");
                    let _ = out.tx.send(Err(cut)).await;
                    return;
                }
                Ok(Control::Expire) => {
                    out.send(watch::error_line(&ApiError::watch_compacted())).await;
                    return;
                }
                Ok(Control::End) => return,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            },
            _ = changed.changed() => {}
            Ok(()) = interval.changed(), if begun => {
                let every = *interval.borrow_and_update();
                next_bookmark = watch::next_bookmark(tokio::time::Instant::now(), every, Some(deadline));
            }
            _ = sleep_until(next_bookmark), if !silent && next_bookmark.is_some() => bookmark_due = true,
            _ = tokio::time::sleep_until(deadline), if !silent => return,
            _ = poll => {}
        }
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The start of a stream: the current objects (with the bookmark that ends them on a streaming
/// list), or the check that the history reaches back to the version asked for. The version
/// events are sent after, and the one bookmarks must pass; None when the stream is over.
async fn begin(
    shared: &Shared,
    spec: &WatchSpec,
    out: &Out<'_>,
    changed: &mut tokio::sync::watch::Receiver<u64>,
) -> Option<(u64, u64)> {
    let resource = spec.resource;
    if spec.params.initial_events() {
        // A streaming list waits, up to 3 s, for the store to reach the version asked for.
        if spec.params.send_initial_events == Some(true) && spec.rv > 0 {
            let wait = tokio::time::sleep(Duration::from_secs(3));
            tokio::pin!(wait);
            loop {
                let current = *changed.borrow_and_update();
                if current >= spec.rv {
                    break;
                }
                tokio::select! {
                    _ = &mut wait => {
                        out.send(watch::error_line(&ApiError::too_large_resource_version(spec.rv, current))).await;
                        return None;
                    }
                    _ = changed.changed() => {}
                    _ = out.tx.closed() => return None,
                }
            }
        }
        let (objects, rv) = {
            let store = shared.store.read().unwrap();
            let objects: Vec<StoredObject> = store
                .objects
                .get(&resource)
                .map(|list| list.iter().filter(|o| spec.selection.admits(o)).cloned().collect())
                .unwrap_or_default();
            (objects, store.resource_version)
        };
        let mut text = String::new();
        for o in &objects {
            text.push_str(&watch::line("ADDED", &o.with_kind(resource)));
            if text.len() >= INITIAL_FRAME && !out.send(std::mem::take(&mut text)).await {
                return None;
            }
        }
        if spec.params.watch_list() {
            text.push_str(&watch::bookmark_line(resource, rv, true));
        }
        if !out.send(text).await {
            return None;
        }
        return Some((rv, rv));
    }
    let from = {
        let store = shared.store.read().unwrap();
        // From "" or "0" without initial events: from now.
        let from = if spec.rv == 0 { store.resource_version } else { spec.rv };
        let history = store.histories.get(&resource)?;
        match history.since(from) {
            Ok(_) => Ok((from, history.newest().unwrap_or(0).max(from))),
            Err(e) => Err(e),
        }
    };
    match from {
        Ok((from, start)) => Some((from, start)),
        Err(e) => {
            out.send(watch::error_line(&e)).await;
            None
        }
    }
}

fn answer(shared: &Shared, faults: &Faults, path: &str, query: &str) -> Result<Arc<Page>, ApiError> {
    if let Some(code) = faults.fail_status {
        return Err(match code {
            429 => ApiError::too_many_requests(),
            503 => ApiError::service_unavailable(),
            _ => ApiError::internal("etcdserver: request timed out"),
        });
    }
    let route = api::route(path).ok_or_else(ApiError::not_found)?;
    if let Route::Namespace(name) = &route {
        if !faults.get_namespaces {
            return Err(ApiError::namespace_forbidden(name, &shared.options.user));
        }
        let store = shared.store.read().unwrap();
        let exists = ["default", "kube-system", "kube-public", "kube-node-lease"].contains(&name.as_str())
            || store.objects.values().flatten().any(|o| o.namespace == *name);
        if !exists {
            return Err(ApiError::namespace_not_found(name));
        }
        let body = serde_json::json!({
            "kind": "Namespace",
            "apiVersion": "v1",
            "metadata": {"name": name},
            "status": {"phase": "Active"},
        });
        return Ok(Arc::new(Page { plain: Bytes::from(body.to_string()), gzip: Default::default() }));
    }
    if let Route::List { resource, namespace } = &route {
        if faults.forbidden.contains(resource) || faults.refused(namespace.as_deref()) {
            return Err(ApiError::forbidden(*resource, &shared.options.user, namespace.as_deref()));
        }
        api::validate_list_query(query)?;
        let params = ListParams::from_query(query)?;
        if params.continue_token.is_some() && take_expiry(shared) {
            let rv = shared.store.read().unwrap().resource_version;
            return Err(ApiError::expired(api::encode_continue(rv, "")));
        }
    }
    if let Route::List { resource, namespace } = &route {
        let token = ListParams::from_query(query)?.continue_token;
        if faults.endless_pages || (faults.repeat_continue && token.is_some()) {
            let body = looping_page(shared, faults, *resource, namespace, token.as_deref())?;
            return Ok(Arc::new(Page { plain: Bytes::from(body), gzip: Default::default() }));
        }
    }
    if matches!(
        &route,
        Route::List { resource: Resource::NodeMetrics | Resource::PodMetrics, .. }
            | Route::Discovery("/apis/metrics.k8s.io/v1beta1")
    ) {
        metrics_api_gate(&shared.store.read().unwrap())?;
    }
    let store = shared.store.read().unwrap();
    let key = (path.to_string(), query.to_string());
    if let Some(page) = store.pages.lock().unwrap().get(&key) {
        return Ok(page.clone());
    }
    let body = match route {
        Route::Version => store.version.to_string(),
        Route::Namespace(_) => unreachable!("answered above"),
        Route::Discovery(doc) => api::discovery(doc, metrics_api_gate(&store).is_ok()),
        Route::List { resource, namespace } => {
            let mut params = ListParams::from_query(query)?;
            // metrics-server answers every item at once: it does not page.
            if matches!(resource, Resource::NodeMetrics | Resource::PodMetrics) {
                params.limit = None;
                params.continue_token = None;
            }
            let empty = Vec::new();
            let objects = store.objects.get(&resource).unwrap_or(&empty);
            api::list_page(resource, objects, namespace.as_deref(), &params, store.resource_version)?
        }
    };
    let page = Arc::new(Page { plain: Bytes::from(body), gzip: std::sync::OnceLock::new() });
    store.pages.lock().unwrap().insert(key, page.clone());
    Ok(page)
}

/// A page under `repeat_continue` (the first page, then empty pages with the token asked with,
/// again) or `endless_pages` (the first page with a continue token, then empty pages each with
/// yet another token).
fn looping_page(
    shared: &Shared,
    faults: &Faults,
    resource: Resource,
    namespace: &Option<String>,
    token: Option<&str>,
) -> Result<String, ApiError> {
    let store = shared.store.read().unwrap();
    let empty = Vec::new();
    let objects = store.objects.get(&resource).unwrap_or(&empty);
    // A continued page is empty (its items cannot matter: the reader must stop at its token), and
    // an empty page needs only the List's envelope: rendering one item is enough for that. (A
    // page of 500 pods rendered, parsed and written again at every request took over a second
    // of a debug build on a loaded machine: the reader's deadline, not the token, ended it.)
    let limit = if token.is_some() { 1 } else { 500 };
    let first = ListParams { limit: Some(limit), continue_token: None, field_selector: None };
    let page = api::list_page(resource, objects, namespace.as_deref(), &first, store.resource_version)?;
    let mut page: Value = serde_json::from_str(&page).expect("a rendered page is JSON");
    if token.is_some() {
        page["items"] = Value::Array(Vec::new());
    }
    let next = match token {
        Some(t) if !faults.endless_pages => t.to_string(),
        _ => {
            let n = shared.endless.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            api::encode_continue(store.resource_version, &format!("zz-endless/{n}"))
        }
    };
    page["metadata"]["continue"] = Value::String(next);
    Ok(page.to_string())
}

/// The answer `fault` makes of `plain`.
fn broken(plain: &Bytes, fault: &BodyFault) -> Response<Body> {
    let half = plain.slice(..plain.len() / 2);
    let builder = Response::builder().header(CONTENT_TYPE, "application/json");
    match fault {
        BodyFault::ResetMidway => {
            let frames: Vec<Result<Frame<Bytes>, std::io::Error>> =
                vec![Ok(Frame::data(half)), Err(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "cut"))];
            let body = StreamBody::new(futures_util::stream::iter(frames)).boxed();
            builder.header(CONTENT_LENGTH, plain.len()).body(body)
        }
        BodyFault::Truncated => builder.body(full(half)),
        BodyFault::Replace { status, content_type, body } => {
            Response::builder().status(*status).header(CONTENT_TYPE, *content_type).body(full(body.clone()))
        }
    }
    .expect("static headers are valid")
}

/// How the aggregator answers for `metrics.k8s.io`: 404 when no APIService registers it, 503
/// while that APIService is not Available (the aggregator cannot reach metrics-server).
fn metrics_api_gate(store: &Store) -> Result<(), ApiError> {
    let registered = store
        .objects
        .get(&Resource::ApiServices)
        .and_then(|list| list.iter().find(|o| o.key == "v1beta1.metrics.k8s.io"))
        .ok_or_else(ApiError::not_found)?;
    let object: Value = serde_json::from_str(&registered.json).expect("stored objects are JSON");
    let available = object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Available" && c["status"] == "True");
    if available { Ok(()) } else { Err(ApiError::service_unavailable()) }
}

fn take_expiry(shared: &Shared) -> bool {
    let mut faults = shared.faults.lock().unwrap();
    if faults.expire_continue > 0 {
        faults.expire_continue -= 1;
        true
    } else {
        false
    }
}

fn respond(status: StatusCode, body: Bytes, gzip: bool, retry_after: Option<&str>) -> Response<Body> {
    let mut builder = Response::builder().status(status).header(CONTENT_TYPE, "application/json");
    if let Some(r) = retry_after {
        builder = builder.header(RETRY_AFTER, r);
    }
    if gzip {
        builder = builder.header(CONTENT_ENCODING, "gzip");
    }
    builder.body(full(body)).expect("static headers are valid")
}
