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

use crate::api::{self, ApiError, ListParams, Resource, Route, StoredObject};
use crate::fixtures::Cluster;
use crate::tls::Pki;

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
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            token: "sim-token-0123456789abcdef".into(),
            sans: vec!["127.0.0.1".into(), "localhost".into(), "::1".into(), "kubernetes.default.svc".into()],
            user: "system:serviceaccount:kube-system:dumbmonit".into(),
            certificate_lifetime: None,
        }
    }
}

/// Switches that make the server misbehave, for tests.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// Added before every answer.
    pub latency: Duration,
    /// Resources (plural, e.g. `persistentvolumeclaims`) the token may not list: 403.
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

    fn new(cluster: Cluster) -> Store {
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
        Store { version, resource_version: rv, objects, pages: Mutex::new(HashMap::new()) }
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
    compress: std::sync::atomic::AtomicBool,
    /// Numbers the pages of `endless_pages`.
    endless: std::sync::atomic::AtomicU64,
    /// The token accepted instead of the first one, once rotated (the old one is then refused).
    rotated: Mutex<Option<String>>,
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
        let acceptor = TlsAcceptor::from(Arc::new(pki.server_config().map_err(std::io::Error::other)?));
        let listener = TcpListener::bind(options.bind).await?;
        let addr = listener.local_addr()?;
        let store = Arc::new(RwLock::new(Store::new(cluster)));
        let member = |options: SimOptions| {
            Arc::new(Shared {
                options,
                store: store.clone(),
                faults: Mutex::new(Faults::default()),
                log: Mutex::new(Vec::new()),
                gzip_responses: Default::default(),
                bytes_sent: Default::default(),
                compress: std::sync::atomic::AtomicBool::new(true),
                endless: Default::default(),
                rotated: Mutex::new(None),
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

    /// Replaces the whole cluster (a scenario step).
    pub fn set_cluster(&self, cluster: Cluster) {
        let mut store = self.shared.store.write().unwrap();
        let next_rv = store.resource_version;
        *store = Store::new(cluster);
        store.resource_version = store.resource_version.max(next_rv + 1);
    }

    /// Adds objects to a list (a large cluster is built in chunks, so that its objects never
    /// all exist as JSON values at once).
    pub fn extend(&self, resource: Resource, items: Vec<Value>) {
        let mut store = self.shared.store.write().unwrap();
        let mut rv = store.resource_version;
        let list = store.objects.entry(resource).or_default();
        for o in items {
            rv += 1;
            list.push(StoredObject::new(resource, o, rv));
        }
        list.sort_by(|a, b| a.key.cmp(&b.key));
        store.resource_version = rv;
        store.pages.lock().unwrap().clear();
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
            let _ = hyper::server::conn::http1::Builder::new()
                .keep_alive(keep_alive)
                .serve_connection(TokioIo::new(tls), service)
                .await;
        });
    }
}

async fn handle(shared: &Shared, path: String, req: Request<Incoming>) -> Response<Body> {
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

fn answer(shared: &Shared, faults: &Faults, path: &str, query: &str) -> Result<Arc<Page>, ApiError> {
    if let Some(code) = faults.fail_status {
        return Err(match code {
            429 => ApiError::too_many_requests(),
            503 => ApiError::service_unavailable(),
            _ => ApiError::internal("etcdserver: request timed out"),
        });
    }
    let route = api::route(path).ok_or_else(ApiError::not_found)?;
    if let Route::List { resource, namespace } = &route {
        if faults.forbidden.contains(resource) {
            return Err(ApiError::forbidden(*resource, &shared.options.user, namespace.as_deref()));
        }
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

/// A page under `repeat_continue` (the token asked with, again) or `endless_pages` (the first
/// page with a continue token, then empty pages each with yet another token).
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
    // An empty page needs only the List's envelope: rendering one item is enough for that.
    let limit = if faults.endless_pages && token.is_some() { 1 } else { 500 };
    let first = ListParams { limit: Some(limit), continue_token: None, field_selector: None };
    let page = api::list_page(resource, objects, namespace.as_deref(), &first, store.resource_version)?;
    let mut page: Value = serde_json::from_str(&page).expect("a rendered page is JSON");
    let next = match token {
        Some(t) if !faults.endless_pages => t.to_string(),
        _ => {
            if token.is_some() {
                page["items"] = Value::Array(Vec::new());
            }
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
