//! Sending requests: a hard deadline on each whole request, API failures decoded from the
//! API server's `Status`, transport failures classified, lists read page by page.

use std::error::Error as StdError;
use std::sync::Arc;
use std::time::Duration;

use http::StatusCode;
use http_body_util::BodyExt;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

use super::address::host_of;
use super::connect::Connection;
use super::request::{PAGE_SIZE, get, get_watch, list_uri};
pub use super::request::{WatchFrom, watch_uri};
use crate::collection::Collection;
use crate::error::{ConfigError, ConnectionError, ReadError, ReadErrorKind};

/// The largest answer read (after decompression). A page holds 500 objects, and the API server
/// stores none larger than 1.5 MB; anything past this is not an API server talking.
pub const MAX_BODY: usize = 256 * 1024 * 1024;

/// The most pages one list may take: 2,000,000 objects at 500 a page, 13 times the pods of
/// Kubernetes' largest supported cluster. A server that keeps handing out new continue tokens
/// past this never finishes its list.
pub const MAX_PAGES: usize = 4_000;

/// Reads from one API server.
#[derive(Clone)]
pub struct Fetcher {
    client: kube::Client,
    address: String,
    timeout: Duration,
    /// The serving certificate's `notAfter`, noted at each TLS handshake.
    serving: super::certificates::Slot,
    /// The client certificate's, from the kubeconfig.
    client_not_after: Option<jiff::Timestamp>,
    /// Until the first answer, one request at a time (see [`Fetcher::send`]).
    first: Arc<First>,
}

/// Whether a request of this fetcher was answered yet, and the turn of the requests until one is.
#[derive(Debug, Default)]
struct First {
    answered: std::sync::atomic::AtomicBool,
    turn: tokio::sync::Mutex<()>,
}

/// The API server's `Status` object, as far as messages need it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Status {
    pub kind: Option<String>,
    pub message: Option<String>,
    pub reason: Option<String>,
    pub code: Option<u16>,
}

/// The metadata of a List page.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct ListMeta {
    #[serde(rename = "continue")]
    continue_token: Option<String>,
    resource_version: Option<String>,
    remaining_item_count: Option<u64>,
}

/// Every item of a List, and the List's resourceVersion (of its first page).
#[derive(Debug)]
pub struct Listed<T> {
    pub items: Vec<T>,
    pub resource_version: String,
}

/// One page of a List, decoded into the compact view `T` of each item.
#[derive(Debug, Deserialize)]
#[serde(bound = "T: DeserializeOwned")]
pub struct ListPage<T> {
    #[serde(default)]
    metadata: ListMeta,
    #[serde(default, deserialize_with = "nullable")]
    pub items: Vec<T>,
}

impl<T> ListPage<T> {
    /// The token of the next page, if any.
    pub fn continue_token(&self) -> Option<&str> {
        self.metadata.continue_token.as_deref()
    }
}

/// Why a single request failed.
enum Failure {
    Read(ReadErrorKind),
    /// 410 Gone, reason Expired: the continue token's snapshot is gone.
    Expired,
}

/// How long a connection to an API server may stay idle in the pool. A cycle's requests share
/// connections; between cycles (a minute apart by default) none is held: an idle TLS
/// connection keeps its buffers, about 360 KB a cluster (docs/scale.md).
pub const POOL_IDLE: Duration = Duration::from_secs(5);

/// kube's client, with a connection pool that lets idle connections go after `POOL_IDLE`
/// (kube's own keeps them 90 s). The same layers as kube's: base URI, gzip, authentication
/// (tokens, exec plugins), extra headers. A kubeconfig that names a proxy gets kube's own.
fn client(config: &kube::Config, serving: &super::certificates::Slot) -> Result<kube::Client, kube::Error> {
    use kube::client::ConfigExt;
    if config.proxy_url.is_some() {
        return kube::Client::try_from(config.clone());
    }
    let mut http = hyper_util::client::legacy::connect::HttpConnector::new();
    http.enforce_http(false);
    http.set_connect_timeout(config.connect_timeout);
    // HTTP/2 where the server offers it (kube-apiserver does): a cycle's reads, and all the
    // watches of a cluster, share one connection; HTTP/1.1 otherwise.
    // One cluster, one API server (two, when its address changes): rustls' default cache keeps
    // sessions for 32 servers, allocated up front (about 15 KB a cluster, 75 MB at 5,000).
    let mut tls_config = config.rustls_client_config()?;
    tls_config.resumption = rustls::client::Resumption::in_memory_sessions(16);
    let mut tls = hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(tls_config).https_or_http();
    if let Some(name) = &config.tls_server_name {
        let name = rustls_pki_types::ServerName::try_from(name.clone())
            .map_err(|e| kube::Error::Service(format!("invalid tls-server-name {name:?}: {e}").into()))?;
        tls = tls.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name));
    }
    let https =
        super::certificates::Noting { inner: tls.enable_all_versions().wrap_connector(http), slot: serving.clone() };
    let pool = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .pool_timer(hyper_util::rt::TokioTimer::new())
        .pool_idle_timeout(POOL_IDLE)
        // One HTTP/2 connection carries a cluster's watches: pings tell a connection gone
        // half-open (a load balancer's failover) within 40 s, as client-go's do.
        .timer(hyper_util::rt::TokioTimer::new())
        .http2_keep_alive_interval(Duration::from_secs(30))
        .http2_keep_alive_timeout(Duration::from_secs(10))
        .build::<_, kube::client::Body>(https);
    let service = tower::ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .layer(
            tower_http::decompression::DecompressionLayer::new()
                .no_br()
                .no_deflate()
                .no_zstd()
                .gzip(!config.disable_compression),
        )
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(|e: hyper_util::client::legacy::Error| -> Box<dyn StdError + Send + Sync> { Box::new(e) })
        .service(pool);
    Ok(kube::Client::new(service, config.default_namespace.clone()))
}

impl Fetcher {
    pub fn new(conn: &Connection, timeout: Duration) -> Result<Fetcher, ConfigError> {
        let serving = super::certificates::Slot::default();
        let client = client(&conn.config, &serving)
            .map_err(|source| ConnectionError::Client { address: conn.address.clone(), source })?;
        let client_not_after = super::certificates::client_not_after(&conn.config.auth_info);
        Ok(Fetcher { client, address: conn.address.clone(), timeout, serving, client_not_after, first: Arc::default() })
    }

    /// When the certificates of the connection expire, as far as known now.
    pub fn certificates(&self) -> super::certificates::Certificates {
        super::certificates::Certificates {
            serving: *self.serving.lock().expect("certificate slot"),
            client: self.client_not_after,
        }
    }

    pub fn address(&self) -> &str {
        &self.address
    }

    fn error(&self, collection: Collection, kind: ReadErrorKind) -> ReadError {
        ReadError { address: self.address.clone(), collection, kind }
    }

    /// One GET, decoded as `T`.
    pub async fn get<T: DeserializeOwned>(&self, collection: Collection, uri: &str) -> Result<T, ReadError> {
        let body = self.fetch(uri).await.map_err(|f| match f {
            Failure::Read(k) => self.error(collection, k),
            Failure::Expired => self.error(collection, ReadErrorKind::Status { code: 410, message: "Expired".into() }),
        })?;
        decode(&body).map_err(|k| self.error(collection, k))
    }

    /// Every item of a List, read in pages of 500 following `metadata.continue`. Each page is
    /// decoded into compact views and dropped before the next is read. An expired continue
    /// token restarts the list from the beginning, once.
    pub async fn list<T: DeserializeOwned>(
        &self,
        collection: Collection,
        path: &str,
        field_selector: Option<&str>,
    ) -> Result<Listed<T>, ReadError> {
        let mut items = Vec::new();
        let mut resource_version = String::new();
        let mut continue_token: Option<String> = None;
        let mut restarted = false;
        let mut pages = 0;
        loop {
            pages += 1;
            if pages > MAX_PAGES {
                return Err(self.error(collection, ReadErrorKind::EndlessPages { pages: MAX_PAGES }));
            }
            let uri = list_uri(path, field_selector, PAGE_SIZE, continue_token.as_deref());
            let body = match self.fetch(&uri).await {
                Ok(b) => b,
                Err(Failure::Expired) if continue_token.is_some() && !restarted => {
                    restarted = true;
                    pages = 0;
                    items.clear();
                    continue_token = None;
                    continue;
                }
                Err(Failure::Expired) => {
                    let message = "the continue token expired again after the list was restarted".to_string();
                    return Err(self.error(collection, ReadErrorKind::Status { code: 410, message }));
                }
                Err(Failure::Read(k)) => return Err(self.error(collection, k)),
            };
            let page = decode_page::<T>(&body).map_err(|k| self.error(collection, k))?;
            drop(body);
            if continue_token.is_none() {
                resource_version = page.metadata.resource_version.clone().unwrap_or_default();
                // The first page says how many follow (without a selector): no growth by doubling.
                let remaining = page.metadata.remaining_item_count.unwrap_or(0).min(10_000_000) as usize;
                items.reserve_exact(page.items.len() + remaining);
            }
            items.extend(page.items);
            match page.metadata.continue_token.filter(|c| !c.is_empty()) {
                None => return Ok(Listed { items, resource_version }),
                Some(next) if continue_token.as_deref() == Some(next.as_str()) => {
                    return Err(self.error(collection, ReadErrorKind::RepeatedContinue));
                }
                Some(next) => continue_token = Some(next),
            }
        }
    }

    /// Opens a watch (`uri` from [`watch_uri`]): the answer's head within the deadline, then
    /// its events as they come, for as long as the server keeps the stream open. A refusal
    /// comes back as the error a List would give (a 410 as `Status { code: 410 }`).
    /// With `protobuf`, the events are asked for in protobuf first (the server may still send
    /// JSON: a kind it has no protobuf for).
    pub async fn watch(&self, collection: Collection, uri: &str, protobuf: bool) -> Result<Watch, ReadError> {
        let response = match tokio::time::timeout(self.timeout, self.send(get_watch(uri, protobuf))).await {
            Err(_) => return Err(self.error(collection, ReadErrorKind::Timeout { after: self.timeout })),
            Ok(Err(e)) => return Err(self.error(collection, self.classify(&e))),
            Ok(Ok(r)) => r,
        };
        let status = response.status();
        if status.is_success() {
            let protobuf = response
                .headers()
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|t| t.starts_with(super::proto::MEDIA_TYPE));
            return Ok(Watch {
                body: response.into_body(),
                buffer: bytes::BytesMut::new(),
                host: host_of(&self.address),
                protobuf,
            });
        }
        let body = http_body_util::Limited::new(response.into_body(), 1024 * 1024).collect();
        let body = match tokio::time::timeout(self.timeout, body).await {
            Ok(Ok(b)) => b.to_bytes(),
            _ => bytes::Bytes::new(),
        };
        Err(match status_failure(status, &body) {
            Failure::Read(k) => self.error(collection, k),
            Failure::Expired => self.error(collection, ReadErrorKind::Status { code: 410, message: "Expired".into() }),
        })
    }

    /// Sends a GET; once more on a new connection when the one it went on was closed under it
    /// by an HTTP/2 GOAWAY (kube-apiserver closes a connection that carried a request it could
    /// not authenticate: the other requests on it fail so, and the retry gets the answer, a 401).
    ///
    /// Until this fetcher's first answer, requests go one at a time: the first opens the
    /// connection and learns that it speaks HTTP/2, and the others then share it. Sent together
    /// (watch mode's first lists beside a cycle's `/version`), each found no connection yet and
    /// opened its own. The wait counts against each request's deadline.
    async fn send(&self, request: http::Request<Vec<u8>>) -> Result<http::Response<kube::client::Body>, kube::Error> {
        use std::sync::atomic::Ordering::Relaxed;
        let _turn = if self.first.answered.load(Relaxed) { None } else { Some(self.first.turn.lock().await) };
        // Boxed: the client's future is large, and every read of a cycle holds one.
        let again = request.clone();
        let answer = match Box::pin(self.client.send(request.map(kube::client::Body::from))).await {
            Err(e) if went_away(&e) => Box::pin(self.client.send(again.map(kube::client::Body::from))).await,
            other => other,
        };
        if answer.is_ok() {
            self.first.answered.store(true, Relaxed);
        }
        answer
    }

    /// Sends a GET and reads the whole body within the deadline.
    async fn fetch(&self, uri: &str) -> Result<bytes::Bytes, Failure> {
        let exchange = async {
            let response = self.send(get(uri)).await.map_err(|e| Failure::Read(self.classify(&e)))?;
            let status = response.status();
            let retry_after =
                response.headers().get(http::header::RETRY_AFTER).and_then(|v| v.to_str().ok()).map(one_line);
            let body = http_body_util::Limited::new(response.into_body(), MAX_BODY).collect().await.map_err(|e| {
                if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() {
                    Failure::Read(ReadErrorKind::TooLarge { limit: MAX_BODY })
                } else {
                    Failure::Read(classify_chain(e.as_ref(), &host_of(&self.address)))
                }
            })?;
            Ok::<_, Failure>((status, retry_after, body.to_bytes()))
        };
        let (status, retry_after, body) = match tokio::time::timeout(self.timeout, exchange).await {
            Err(_) => return Err(Failure::Read(ReadErrorKind::Timeout { after: self.timeout })),
            Ok(r) => r?,
        };
        if status.is_success() {
            return Ok(body);
        }
        Err(match (status_failure(status, &body), retry_after) {
            // Said, not obeyed: the next cycle comes at its interval, and until then the cluster
            // is reported as it is, unreadable.
            (Failure::Read(ReadErrorKind::Status { code, message }), Some(after)) => {
                let asks = format!("it asks to retry after {after} s");
                let message = if message.is_empty() { asks } else { format!("{message} ({asks})") };
                Failure::Read(ReadErrorKind::Status { code, message })
            }
            (failure, _) => failure,
        })
    }

    /// Names a transport failure from the error chain: TLS, refused, DNS, or other.
    fn classify(&self, err: &kube::Error) -> ReadErrorKind {
        match classify_chain(err, &host_of(&self.address)) {
            // The connector's own deadline (the same timeout) ran out: a server that accepts the
            // connection and never completes the TLS handshake, say.
            ReadErrorKind::ConnectTimeout => ReadErrorKind::Timeout { after: self.timeout },
            kind => kind,
        }
    }
}

/// The largest event a watch may send: the API server stores no object above 1.5 MB.
pub const MAX_EVENT: usize = 16 * 1024 * 1024;

/// An open watch: its events, one JSON object a line, or length-prefixed protobuf frames
/// (`application/vnd.kubernetes.protobuf;stream=watch`), as the server chose.
pub struct Watch {
    body: kube::client::Body,
    buffer: bytes::BytesMut,
    host: String,
    protobuf: bool,
}

/// One event of a watch, as it came.
#[derive(Debug)]
pub enum Frame {
    /// A line of JSON (without its newline).
    Json(bytes::Bytes),
    /// A protobuf `WatchEvent` (without its length).
    Protobuf(bytes::Bytes),
}

impl Watch {
    /// Whether the server sends the events in protobuf.
    pub fn protobuf(&self) -> bool {
        self.protobuf
    }

    /// The next event; None when the server ended the stream. A stream cut inside an event
    /// gives what came of it, which does not decode.
    pub async fn next_frame(&mut self) -> Result<Option<Frame>, ReadErrorKind> {
        loop {
            if let Some(frame) = self.split_frame()? {
                return Ok(Some(frame));
            }
            // Every event taken, the buffer goes before the wait for more: emptied by the events
            // split off it, it still holds the allocation a burst grew (a streaming list's first
            // events), whatever its capacity says, and a watch waits long (some ten of them a
            // cluster, for as long as each stream stays open).
            if self.buffer.is_empty() {
                self.buffer = bytes::BytesMut::new();
            }
            match self.body.frame().await {
                None if self.protobuf && self.buffer.is_empty() => return Ok(None),
                None if self.protobuf => return Ok(Some(Frame::Protobuf(std::mem::take(&mut self.buffer).freeze()))),
                None if self.buffer.iter().all(u8::is_ascii_whitespace) => return Ok(None),
                None => return Ok(Some(Frame::Json(std::mem::take(&mut self.buffer).freeze()))),
                Some(Err(e)) => return Err(classify_chain(&e, &self.host)),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.buffer.extend_from_slice(&data);
                    }
                }
            }
        }
    }

    /// A whole event from the front of the buffer, if one is there.
    fn split_frame(&mut self) -> Result<Option<Frame>, ReadErrorKind> {
        if self.protobuf {
            let Some(head) = self.buffer.first_chunk::<4>() else { return Ok(None) };
            let length = u32::from_be_bytes(*head) as usize;
            if length > MAX_EVENT {
                return Err(ReadErrorKind::TooLarge { limit: MAX_EVENT });
            }
            if self.buffer.len() < 4 + length {
                return Ok(None);
            }
            let mut frame = self.buffer.split_to(4 + length);
            return Ok(Some(Frame::Protobuf(frame.split_off(4).freeze())));
        }
        while let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
            let line = self.buffer.split_to(end + 1).freeze();
            if end > 0 {
                return Ok(Some(Frame::Json(line.slice(..end))));
            }
        }
        if self.buffer.len() > MAX_EVENT {
            return Err(ReadErrorKind::TooLarge { limit: MAX_EVENT });
        }
        Ok(None)
    }
}

/// One page of a List as `list` reads it: the items decoded into the compact view `T`, and the
/// List's metadata. Public for the fuzzer.
pub fn decode_page<T: DeserializeOwned>(body: &[u8]) -> Result<ListPage<T>, ReadErrorKind> {
    decode(body)
}

/// Decodes JSON, or says briefly why it is not what was expected (never echoing the body).
fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, ReadErrorKind> {
    serde_json::from_slice(body).map_err(|e| {
        let start = body.iter().copied().find(|b| !b.is_ascii_whitespace());
        let detail = match start {
            None => "the body is empty".to_string(),
            Some(b'<') => "an HTML page came back instead of JSON (a proxy or load balancer in the way?)".to_string(),
            Some(b'{') | Some(b'[') => format!("invalid JSON: {e}"),
            Some(_) => format!("not JSON: {e}"),
        };
        ReadErrorKind::Unreadable { detail }
    })
}

/// Maps a non-2xx answer to its failure, using the `Status` body when there is one.
fn status_failure(status: StatusCode, body: &[u8]) -> Failure {
    // In protobuf when the request accepted it (a watch of pods).
    let decoded: Option<Status> =
        serde_json::from_slice(body).ok().filter(|s: &Status| s.kind.as_deref() == Some("Status")).or_else(|| {
            super::proto::status(body).map(|s| Status {
                kind: Some("Status".into()),
                message: super::proto::text(s.message),
                reason: super::proto::text(s.reason),
                code: u16::try_from(s.code).ok().filter(|c| *c > 0),
            })
        });
    let message = decoded.as_ref().and_then(|s| s.message.clone()).unwrap_or_default();
    let reason = decoded.as_ref().and_then(|s| s.reason.clone()).unwrap_or_default();
    match status.as_u16() {
        401 => Failure::Read(ReadErrorKind::Unauthorized),
        403 => {
            let message = if message.is_empty() { "forbidden".to_string() } else { message };
            Failure::Read(ReadErrorKind::Forbidden { message })
        }
        410 if reason == "Expired" || decoded.is_none() => Failure::Expired,
        code => Failure::Read(ReadErrorKind::Status { code, message: one_line(&message) }),
    }
}

fn one_line(s: &str) -> String {
    let flat: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if flat.chars().count() > 300 { format!("{}…", flat.chars().take(300).collect::<String>()) } else { flat }
}

/// Whether an HTTP/2 connection was closed (GOAWAY) under the request.
fn went_away(err: &(dyn StdError + 'static)) -> bool {
    let mut cur: Option<&(dyn StdError + 'static)> = Some(err);
    while let Some(e) = cur {
        if e.downcast_ref::<h2::Error>().is_some_and(h2::Error::is_go_away) {
            return true;
        }
        cur = e.source();
    }
    false
}

/// Walks an error's sources to find what happened on the wire. An `io::Error` hides the error
/// it wraps from `source()`, so the walk looks inside it first.
pub(crate) fn classify_chain(err: &(dyn StdError + 'static), host: &str) -> ReadErrorKind {
    // The connection closed under the request by a GOAWAY (what `send` retries on, once).
    if went_away(err) {
        return ReadErrorKind::GoneAway;
    }
    let mut texts = Vec::new();
    let mut cur: Option<&(dyn StdError + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return tls_kind(tls, host);
        }
        let io = e.downcast_ref::<std::io::Error>();
        match io.map(std::io::Error::kind) {
            Some(std::io::ErrorKind::ConnectionRefused) => return ReadErrorKind::Refused,
            Some(std::io::ErrorKind::TimedOut) => return ReadErrorKind::ConnectTimeout,
            Some(std::io::ErrorKind::UnexpectedEof) => {
                return ReadErrorKind::Connection {
                    detail: "the server closed the connection in the middle of an answer".into(),
                };
            }
            Some(std::io::ErrorKind::ConnectionReset) => {
                return ReadErrorKind::Connection { detail: "the connection was reset".into() };
            }
            _ => {}
        }
        texts.push(e.to_string());
        cur = match io.and_then(std::io::Error::get_ref) {
            Some(inner) => Some(inner as &(dyn StdError + 'static)),
            None => e.source(),
        };
    }
    let all = texts.join(": ").to_lowercase();
    if all.contains("dns error")
        || all.contains("failed to lookup address")
        || all.contains("name or service not known")
    {
        return ReadErrorKind::Dns { host: host.to_string() };
    }
    if all.contains("connection refused") {
        return ReadErrorKind::Refused;
    }
    let detail = texts.last().cloned().unwrap_or_else(|| "unknown error".into());
    ReadErrorKind::Connection { detail: one_line(&detail) }
}

fn tls_kind(err: &rustls::Error, host: &str) -> ReadErrorKind {
    use rustls::CertificateError as C;
    match err {
        rustls::Error::InvalidCertificate(c) => match c {
            C::UnknownIssuer | C::BadSignature => ReadErrorKind::UnknownAuthority,
            C::NotValidForName => ReadErrorKind::WrongName { host: host.to_string(), names: vec![] },
            C::NotValidForNameContext { presented, .. } => {
                ReadErrorKind::WrongName { host: host.to_string(), names: presented.iter().map(|p| san(p)).collect() }
            }
            C::Expired | C::ExpiredContext { .. } | C::NotValidYet | C::NotValidYetContext { .. } => {
                ReadErrorKind::CertificateExpired
            }
            other => ReadErrorKind::Tls { detail: format!("invalid certificate: {other:?}") },
        },
        other => ReadErrorKind::Tls { detail: other.to_string() },
    }
}

/// `DnsName("localhost")` → `localhost`; `IpAddress(127.0.0.1)` → `127.0.0.1`.
fn san(presented: &str) -> String {
    let s = presented.trim();
    for prefix in ["DnsName(", "IpAddress("] {
        if let Some(inner) = s.strip_prefix(prefix).and_then(|r| r.strip_suffix(')')) {
            return inner.trim_matches('"').to_string();
        }
    }
    s.to_string()
}

/// Deserializes `null` as the default, for fields the API server may send as null.
pub fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A burst of events (a streaming list's first) grows a watch's buffer; once they are all
    /// taken, the watch waits for the next with a small one.
    #[tokio::test]
    async fn a_watch_waits_for_its_next_event_without_the_buffer_of_a_burst() {
        let line = format!("{{\"type\":\"ADDED\",\"object\":{{\"pad\":\"{}\"}}}}\n", "x".repeat(1000));
        let mut watch = Watch {
            body: kube::client::Body::from(line.repeat(100).into_bytes()),
            buffer: bytes::BytesMut::new(),
            host: "h".into(),
            protobuf: false,
        };
        for _ in 0..100 {
            assert!(matches!(watch.next_frame().await, Ok(Some(Frame::Json(f))) if f.len() == line.len() - 1));
        }
        // Every event taken, the burst's allocation was the buffer's alone, which could take the
        // next events into it, and kept it while the stream stayed open.
        assert!(watch.next_frame().await.unwrap().is_none());
        assert!(!watch.buffer.try_reclaim(50_000), "a waiting watch holds no burst's buffer");
    }

    #[test]
    fn status_bodies_become_failures() {
        let forbidden = br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods is forbidden: User \"x\" cannot list resource \"pods\"","reason":"Forbidden","code":403}"#;
        match status_failure(StatusCode::FORBIDDEN, forbidden) {
            Failure::Read(ReadErrorKind::Forbidden { message }) => assert!(message.starts_with("pods is forbidden")),
            _ => panic!("403 must be Forbidden"),
        }
        assert!(matches!(
            status_failure(StatusCode::UNAUTHORIZED, b"Unauthorized"),
            Failure::Read(ReadErrorKind::Unauthorized)
        ));
        let expired = br#"{"kind":"Status","status":"Failure","reason":"Expired","code":410,"message":"too old"}"#;
        assert!(matches!(status_failure(StatusCode::GONE, expired), Failure::Expired));
        let gone_other = br#"{"kind":"Status","status":"Failure","reason":"Gone","code":410,"message":"gone"}"#;
        assert!(matches!(
            status_failure(StatusCode::GONE, gone_other),
            Failure::Read(ReadErrorKind::Status { code: 410, .. })
        ));
        // The same answers in protobuf (to a watch that asked for it first).
        let in_protobuf = |code: i32, reason: &str, message: &str| {
            use prost::Message;
            let status = super::super::proto::Status { message: message.into(), reason: reason.into(), code };
            super::super::proto::envelope("Status", status.encode_to_vec())
        };
        match status_failure(StatusCode::FORBIDDEN, &in_protobuf(403, "Forbidden", "pods is forbidden: no watch")) {
            Failure::Read(ReadErrorKind::Forbidden { message }) => assert_eq!(message, "pods is forbidden: no watch"),
            _ => panic!("403 must be Forbidden"),
        }
        assert!(matches!(status_failure(StatusCode::GONE, &in_protobuf(410, "Expired", "too old")), Failure::Expired));
        match status_failure(StatusCode::UNPROCESSABLE_ENTITY, &in_protobuf(422, "Invalid", "sendInitialEvents")) {
            Failure::Read(ReadErrorKind::Status { code, message }) => {
                assert_eq!((code, message.as_str()), (422, "sendInitialEvents"))
            }
            _ => panic!("422 must be Status"),
        }
        match status_failure(StatusCode::BAD_GATEWAY, b"<html>bad gateway</html>") {
            Failure::Read(ReadErrorKind::Status { code, message }) => assert_eq!((code, message.as_str()), (502, "")),
            _ => panic!("502 must be Status"),
        }
    }

    #[test]
    fn bodies_that_are_not_json_are_named() {
        let e = decode::<serde_json::Value>(b"<html><body>502</body></html>").unwrap_err();
        assert!(matches!(e, ReadErrorKind::Unreadable { ref detail } if detail.contains("HTML")), "{e:?}");
        let e = decode::<serde_json::Value>(br#"{"items": [1, 2"#).unwrap_err();
        assert!(matches!(e, ReadErrorKind::Unreadable { ref detail } if detail.starts_with("invalid JSON")), "{e:?}");
        let e = decode::<serde_json::Value>(b"").unwrap_err();
        assert!(matches!(e, ReadErrorKind::Unreadable { ref detail } if detail == "the body is empty"), "{e:?}");
    }

    #[test]
    fn presented_names_are_cleaned() {
        assert_eq!(san("DnsName(\"localhost\")"), "localhost");
        assert_eq!(san("IpAddress(127.0.0.1)"), "127.0.0.1");
    }

    #[test]
    fn io_errors_in_the_chain_are_classified() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(classify_chain(&refused, "h"), ReadErrorKind::Refused);
        let tls = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
        );
        assert_eq!(classify_chain(&tls, "h"), ReadErrorKind::UnknownAuthority);
        // hyper-rustls wraps the TLS error twice.
        let nested = std::io::Error::other(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForName),
        ));
        assert_eq!(classify_chain(&nested, "h"), ReadErrorKind::WrongName { host: "h".into(), names: vec![] });
        let dns = std::io::Error::other("dns error: failed to lookup address information: Name or service not known");
        assert_eq!(classify_chain(&dns, "k3s.lan"), ReadErrorKind::Dns { host: "k3s.lan".into() });
    }
}
