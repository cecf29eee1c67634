//! The web side of `serve`: status pages, the forms that add clusters (`admin`), JSON API,
//! `/metrics`, health probes and the agents' door, on axum and tower-http; pages are maud
//! templates, which escape every value.
//!
//! Every response carries a strict Content-Security-Policy (no script at all, styles only from
//! our own stylesheet), `X-Content-Type-Options: nosniff` and `frame-ancestors 'none'`. Every
//! route but `/healthz` and the agents' door (and `/metrics` when configured open) requires the
//! configured credentials; changes need the admin role.

pub mod admin;
pub mod agent;
pub mod api;
pub mod charts;
pub mod events;
pub mod html;
pub mod metrics;
pub mod pages;
pub mod quiet;
pub mod rules;
pub mod runbooks;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, delete, get, post};
use bytes::Bytes;
use http::header::{
    ACCEPT_ENCODING, AUTHORIZATION, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, HeaderName, HeaderValue, VARY,
    WWW_AUTHENTICATE,
};
use http::{Method, StatusCode};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tower::ServiceExt;
use tower_http::compression::CompressionLayer;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::TimeoutLayer;

use crate::auth::{Role, Verdict};
use crate::board::{Board, Pages};
use crate::error::{PagesError, TlsError};
use crate::logs::Emit;

const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/// A response with the given status, type and body (the security headers are added to every
/// response by [`router`]'s layers).
pub fn respond(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Response {
    let mut body = body.into();
    if content_type == HTML {
        body = html::visible(body);
    }
    (status, [(CONTENT_TYPE, HeaderValue::from_static(content_type))], Body::from(body)).into_response()
}

pub const HTML: &str = "text/html; charset=utf-8";
pub const JSON: &str = "application/json";
const TEXT: &str = "text/plain; charset=utf-8";

/// A request that takes longer than this (an agent's report stuck in its cluster's queue, say)
/// is answered 503.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

fn not_found(board: &Board, what: &str) -> Response {
    let title = html::t("not-found");
    let body = html::page(&title, board.banner(), maud::html! { h1 { (title) } p { (what) } });
    respond(StatusCode::NOT_FOUND, HTML, body)
}

/// The language of a request, chosen once: its `dumbmonit_lang` cookie, else its
/// `Accept-Language`. The pages are made in it ([`html::Visitor`]), and every answer says that it
/// varies with both headers, so that no cache serves one reader's language to another.
async fn reader(request: Request, next: Next) -> Response {
    let lang = {
        let header = |name| request.headers().get(name).and_then(|v| v.to_str().ok());
        crate::lang::from_cookie(header(http::header::COOKIE))
            .unwrap_or_else(|| crate::lang::from_accept_language(header(http::header::ACCEPT_LANGUAGE)))
    };
    let here = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_string();
    let mut response = html::Visitor { lang, here }.scope(next.run(request)).await;
    response.headers_mut().append(VARY, HeaderValue::from_static("Accept-Language, Cookie"));
    response
}

/// `GET /language/{en|fr}?back=/path`: the footer's link. Sets the `dumbmonit_lang` cookie (a
/// preference: SameSite=Strict, a year; Secure over HTTPS) and goes back to the page it came
/// from, on this server only.
async fn choose_language(
    https: axum::Extension<admin::Https>,
    Path(code): Path<String>,
    Query(params): Query<Params>,
) -> Response {
    let lang = match code.as_str() {
        "en" => crate::lang::Lang::En,
        "fr" => crate::lang::Lang::Fr,
        _ => return respond(StatusCode::NOT_FOUND, TEXT, "no such language: en or fr\n"),
    };
    let back = param(&params, "back").filter(|b| local_path(b)).unwrap_or("/").to_string();
    let mut r = respond(StatusCode::SEE_OTHER, TEXT, "");
    let secure = if https.0.0 { "; Secure" } else { "" };
    let cookie =
        format!("{}={}; Path=/; Max-Age=31536000; SameSite=Strict; HttpOnly{secure}", crate::lang::COOKIE, lang.code());
    let headers = r.headers_mut();
    headers.insert(http::header::SET_COOKIE, HeaderValue::from_str(&cookie).expect("a plain cookie"));
    match HeaderValue::from_str(&back) {
        Ok(v) => headers.insert(http::header::LOCATION, v),
        Err(_) => headers.insert(http::header::LOCATION, HeaderValue::from_static("/")),
    };
    r
}

/// A path of this server, and only that: browsers read `//host`, `/\\host` and a path with a tab
/// or a line break in it (which they drop) as another site.
fn local_path(back: &str) -> bool {
    back.starts_with('/') && !back.starts_with("//") && !back.starts_with("/\\") && !back.chars().any(char::is_control)
}

/// Every route: the pages, the JSON API, /metrics, the probes and the agents' door, with the
/// security headers on every answer, compression of what is not compressed yet, and a deadline.
pub fn router(board: Arc<Board>, https: bool, listen: SocketAddr) -> Router {
    let header = |name: &'static str, value: &'static str| {
        SetResponseHeaderLayer::overriding(HeaderName::from_static(name), HeaderValue::from_static(value))
    };
    let mut probes = Router::new().route("/healthz", get(|| async { respond(StatusCode::OK, TEXT, "ok\n") }));
    if std::env::var(TEST_PANIC_ENV).is_ok_and(|v| v == "1") {
        events::PanicRouteOn { variable: TEST_PANIC_ENV }.emit();
        probes = probes.route("/test/panic", get(panic_on_purpose));
    }
    let router = Router::new()
        .route("/", get(overview))
        .route("/clusters/{name}", get(cluster))
        .route("/readyz", get(readyz))
        .route("/metrics", get(exposition))
        .route(
            "/api/v1/clusters",
            get(|State(b): State<Arc<Board>>| async move { respond(StatusCode::OK, JSON, api::clusters(&b)) }),
        )
        .route("/api/v1/clusters/{name}", get(api_cluster))
        .route(
            "/api/v1/alerts",
            get(|State(b): State<Arc<Board>>| async move { respond(StatusCode::OK, JSON, api::alerts(&b)) }),
        )
        .route(
            "/rules",
            get(|State(b): State<Arc<Board>>| async move { respond(StatusCode::OK, HTML, rules::page(&b)) }),
        )
        .route(
            "/runbooks",
            get(|State(b): State<Arc<Board>>| async move { respond(StatusCode::OK, HTML, runbooks::page(&b, None)) }),
        )
        .route(
            "/runbooks/en",
            get(|State(b): State<Arc<Board>>| async move {
                respond(StatusCode::OK, HTML, runbooks::page(&b, Some(crate::lang::Lang::En)))
            }),
        )
        .route(
            "/runbooks/fr",
            get(|State(b): State<Arc<Board>>| async move {
                respond(StatusCode::OK, HTML, runbooks::page(&b, Some(crate::lang::Lang::Fr)))
            }),
        )
        .route(
            "/api/v1/rules",
            get(|State(b): State<Arc<Board>>| async move { respond(StatusCode::OK, JSON, rules::api(&b)) }),
        )
        .route("/api/v1/silences", get(quiet::silences))
        .route("/api/v1/maintenance", get(quiet::windows))
        .route(
            "/api/v1/monitor",
            get(|State(b): State<Arc<Board>>| async move { respond(StatusCode::OK, JSON, api::monitor(&b)) }),
        )
        .route("/static/dumbmonit.css", get(stylesheet))
        .route("/audit", get(admin::audit))
        .route("/notifiers", get(admin::notifiers::list))
        .merge(
            Router::new()
                .route("/clusters/new", get(admin::new_form).post(admin::new_post))
                .route("/clusters/{name}/edit", get(admin::edit_form).post(admin::edit_post))
                .route("/clusters/{name}/remove", post(admin::remove_post))
                .route("/silences", get(admin::silences::list).post(admin::silences::create))
                .route("/silences/new", get(admin::silences::new))
                .route("/silences/{id}/edit", get(admin::silences::edit).post(admin::silences::edit_post))
                .route("/silences/{id}/expire", post(admin::silences::expire))
                .route("/maintenance", post(admin::silences::create_window))
                .route("/maintenance/new", get(admin::silences::new_window))
                .route("/maintenance/{id}/end", post(admin::silences::end_window))
                .route("/alerts/{fingerprint}/ack", get(admin::silences::ack_form).post(admin::silences::ack_post))
                .route("/notifiers/{name}/test", post(admin::notifiers::test_post))
                // A change must come from a page of this server: its Origin (or Sec-Fetch-Site)
                // says so; the handlers check the session's CSRF token too.
                .route_layer(tower_http::csrf::CsrfLayer::new())
                .route_layer(middleware::from_fn(same_scheme))
                .route_layer(tower_http::limit::RequestBodyLimitLayer::new(MAX_FORM)),
        )
        .merge(
            // The API's changes: admin credentials and a JSON body (quiet.rs); a browser's
            // request from another site is refused on its Origin or Sec-Fetch-Site too.
            Router::new()
                .route("/api/v1/silences", post(quiet::post_silence))
                .route("/api/v1/silences/{id}", delete(quiet::delete_silence))
                .route("/api/v1/maintenance", post(quiet::post_window))
                .route("/api/v1/maintenance/{id}", delete(quiet::delete_window))
                .route("/api/v1/alerts/{fingerprint}/ack", post(quiet::acknowledge))
                .route("/api/v1/notifiers/{name}/test", post(admin::notifiers::api_test))
                .route_layer(tower_http::csrf::CsrfLayer::new())
                .route_layer(tower_http::limit::RequestBodyLimitLayer::new(MAX_FORM)),
        )
        .route("/language/{code}", get(choose_language))
        .fallback(nothing_here)
        .layer(middleware::from_fn_with_state(board.clone(), viewers_only))
        .layer(middleware::from_fn(reader))
        // The probe and the agents' door are outside the viewers' credentials: an agent has a
        // token of its own, checked by its door.
        .merge(probes)
        .route("/api/v1/agent/{*rest}", any(agent::handle))
        .with_state(board)
        .layer(axum::Extension(admin::Https(https)))
        .layer(axum::Extension(Listen(listen)))
        .layer(CompressionLayer::new().gzip(true))
        .layer(TimeoutLayer::with_status_code(StatusCode::SERVICE_UNAVAILABLE, REQUEST_TIMEOUT))
        // A handler that panics answers 500 and is logged; the connection and the server go on.
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(panicked))
        .layer(header("content-security-policy", CSP))
        .layer(header("x-content-type-options", "nosniff"))
        .layer(header("x-frame-options", "DENY"))
        .layer(header("referrer-policy", "no-referrer"))
        .layer(SetResponseHeaderLayer::if_not_present(CACHE_CONTROL, HeaderValue::from_static("no-store")));
    if https {
        // Over [tls], browsers are told to come back over HTTPS only.
        router.layer(header("strict-transport-security", "max-age=31536000"))
    } else {
        router
    }
}

/// For tests only: with this variable set to 1, `GET /test/panic` panics in its handler, so that a
/// test sees what a panic in a handler becomes.
pub const TEST_PANIC_ENV: &str = "DUMBMONIT_TEST_PANIC";

async fn panic_on_purpose() -> Response {
    panic!("a handler panicked, as asked for by the test")
}

/// The answer to a request whose handler panicked: 500, and a line in the log.
fn panicked(payload: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let why = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("no message");
    events::HandlerPanicked { why }.emit();
    respond(StatusCode::INTERNAL_SERVER_ERROR, TEXT, "internal error: the server's log says more\n")
}

/// The address the pages listen on (its host is one the pages answer to).
#[derive(Clone, Copy)]
pub struct Listen(pub SocketAddr);

/// A change's `Origin`, when given, has this server's scheme too (the CSRF layer compares the
/// host and port only). An opaque `Origin: null` (what Chromium sends for a form posted from a
/// page with `Referrer-Policy: no-referrer`, as ours are) names no scheme: it is left to the
/// CSRF layer and the form's token. A form's POST that says neither its `Origin` nor its
/// `Sec-Fetch-Site` (which every browser of the pages sends) is refused: the CSRF layer lets
/// such a request through, as it may be no browser's.
async fn same_scheme(https: axum::Extension<admin::Https>, request: Request, next: Next) -> Response {
    let ours = if https.0.0 { "https" } else { "http" };
    let unsaid =
        !request.headers().contains_key(http::header::ORIGIN) && !request.headers().contains_key("sec-fetch-site");
    if request.method() == http::Method::POST && unsaid {
        events::ChangeRefused::Unsaid.emit();
        return respond(
            StatusCode::FORBIDDEN,
            TEXT,
            "cross-origin request refused: the request says neither its Origin nor its Sec-Fetch-Site\n",
        );
    }
    let origin = request.headers().get(http::header::ORIGIN).and_then(|v| v.to_str().ok());
    if let Some(origin) = origin
        && origin != "null"
        && origin.parse::<http::Uri>().ok().and_then(|u| u.scheme_str().map(str::to_ascii_lowercase)).as_deref()
            != Some(ours)
    {
        events::ChangeRefused::Origin.emit();
        return respond(StatusCode::FORBIDDEN, TEXT, "cross-origin request refused\n");
    }
    next.run(request).await
}

/// Without `[auth]`, a page is only answered to a `Host` that is this server's: an IP address
/// the listen address covers, a loopback name, or a name of `allowed_hosts`. A page elsewhere
/// that made its own name resolve to this server (DNS rebinding) is refused.
fn known_host(host: &str, listen: SocketAddr, allowed: &[String]) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').filter(|(_, p)| p.chars().all(|c| c.is_ascii_digit())).map_or(host, |(h, _)| h),
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    if let Ok(ip) = name.parse::<std::net::IpAddr>() {
        return ip.is_loopback() || listen.ip().is_unspecified() || ip == listen.ip();
    }
    name == "localhost" || name.ends_with(".localhost") || allowed.iter().any(|a| a.eq_ignore_ascii_case(&name))
}

/// The largest form taken (a cluster's settings with its CA).
const MAX_FORM: usize = 64 * 1024;

/// Whether a request is one of the admins' changes: a POST of the forms or of the API, a
/// DELETE of the API.
fn is_change(method: &Method, path: &str) -> bool {
    let api_item = |base: &str| path.strip_prefix(base).is_some_and(|id| !id.is_empty() && !id.contains('/'));
    match *method {
        Method::POST => {
            path == "/clusters/new"
                || (path.starts_with("/clusters/") && (path.ends_with("/edit") || path.ends_with("/remove")))
                || path == "/silences"
                || (path.starts_with("/silences/") && (path.ends_with("/edit") || path.ends_with("/expire")))
                || path == "/maintenance"
                || (path.starts_with("/maintenance/") && path.ends_with("/end"))
                || (path.starts_with("/alerts/") && path.ends_with("/ack"))
                || path == "/api/v1/silences"
                || path == "/api/v1/maintenance"
                || path
                    .strip_prefix("/api/v1/alerts/")
                    .and_then(|rest| rest.strip_suffix("/ack"))
                    .is_some_and(|print| !print.is_empty() && !print.contains('/'))
                || ["/notifiers/", "/api/v1/notifiers/"].iter().any(|base| {
                    path.strip_prefix(base)
                        .and_then(|rest| rest.strip_suffix("/test"))
                        .is_some_and(|name| !name.is_empty() && !name.contains('/'))
                })
        }
        Method::DELETE => api_item("/api/v1/silences/") || api_item("/api/v1/maintenance/"),
        _ => false,
    }
}

/// Only GET and HEAD are served to viewers (POST to the admins' forms, which check the role),
/// and only with the configured credentials (but `/metrics` when it is configured open).
async fn viewers_only(State(board): State<Arc<Board>>, request: Request, next: Next) -> Response {
    let change = is_change(request.method(), request.uri().path());
    if request.method() != Method::GET && request.method() != Method::HEAD && !change {
        let mut r = respond(StatusCode::METHOD_NOT_ALLOWED, TEXT, "only GET and HEAD\n");
        r.headers_mut().insert("allow", HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    let protection = board.protection();
    if protection.credentials.is_none()
        && let Some(Listen(listen)) = request.extensions().get::<Listen>().copied()
    {
        let host = request.uri().authority().map(|a| a.as_str().to_string()).or_else(|| {
            // A Host that is not plain text is no host of ours (fail closed).
            request.headers().get(http::header::HOST).map(|h| h.to_str().unwrap_or_default().to_string())
        });
        if let Some(host) = host
            && !known_host(&host, listen, &protection.allowed_hosts)
        {
            return respond(
                StatusCode::MISDIRECTED_REQUEST,
                TEXT,
                "this server does not answer to that host name: without [auth], add it to allowed_hosts\n",
            );
        }
    }
    let open = request.uri().path() == "/metrics" && protection.open_metrics;
    let authorization = request.headers().get(AUTHORIZATION).and_then(|v| v.to_str().ok());
    let client = request.extensions().get::<Peer>().map_or(std::net::Ipv4Addr::UNSPECIFIED.into(), |c| c.0);
    let role = match protection.check(authorization, client).await {
        Verdict::Role(role) => role,
        Verdict::Wait(wait) => {
            let mut r = respond(StatusCode::TOO_MANY_REQUESTS, TEXT, "too many failed logins from here: wait\n");
            r.headers_mut().insert(http::header::RETRY_AFTER, HeaderValue::from(wait.as_secs().max(1)));
            return r;
        }
    };
    if !open && role.is_none() {
        let mut r = respond(StatusCode::UNAUTHORIZED, TEXT, "credentials required\n");
        r.headers_mut().insert(WWW_AUTHENTICATE, HeaderValue::from_static(protection.challenge()));
        return r;
    }
    let mut request = request;
    request.extensions_mut().insert(Checked(role));
    next.run(request).await
}

/// The client's address, set on every request of its connection.
#[derive(Clone, Copy)]
pub struct Peer(pub std::net::IpAddr);

/// What the request's credentials may do, checked once by [`viewers_only`] for the handlers.
#[derive(Clone)]
pub struct Checked(pub Option<Role>);

/// A query string's pairs, decoded, in order (`Query<Params>`): each page reads the keys it
/// knows, leniently (an unknown key, a repeated one or a value it cannot use is not an error).
pub type Params = Vec<(String, String)>;

/// The first value of `key`.
fn param<'a>(params: &'a Params, key: &str) -> Option<&'a str> {
    params.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

async fn overview(State(board): State<Arc<Board>>, Query(params): Query<Params>) -> Response {
    respond(StatusCode::OK, HTML, pages::overview(&board, &params))
}

async fn cluster(State(board): State<Arc<Board>>, Path(name): Path<String>, Query(params): Query<Params>) -> Response {
    match pages::cluster(&board, &name, &params) {
        Some(page) => respond(StatusCode::OK, HTML, page),
        None => not_found(&board, &format!("No cluster named {name}.")),
    }
}

async fn api_cluster(State(board): State<Arc<Board>>, Path(name): Path<String>) -> Response {
    match api::cluster(&board, &name) {
        Some(doc) => respond(StatusCode::OK, JSON, doc),
        None => respond(StatusCode::NOT_FOUND, JSON, api::error(&format!("no cluster named {name}"))),
    }
}

async fn readyz(State(board): State<Arc<Board>>) -> Response {
    if board.ready() {
        respond(StatusCode::OK, TEXT, "ready\n")
    } else {
        respond(StatusCode::SERVICE_UNAVAILABLE, TEXT, "not ready\n")
    }
}

/// `/metrics`: the kept gzip body as it is when the client takes gzip (Prometheus does), else
/// the kept text.
async fn exposition(State(board): State<Arc<Board>>, headers: http::HeaderMap) -> Response {
    let text = metrics::current(&board);
    let content_type = crate::metrics::exposition::CONTENT_TYPE;
    if accepts_gzip(headers.get(ACCEPT_ENCODING).and_then(|v| v.to_str().ok())) {
        let mut r = respond(StatusCode::OK, content_type, text.gzip());
        r.headers_mut().insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        r.headers_mut().insert(VARY, HeaderValue::from_static("accept-encoding"));
        r
    } else {
        respond(StatusCode::OK, content_type, text.plain())
    }
}

async fn stylesheet() -> Response {
    let mut r = respond(StatusCode::OK, "text/css; charset=utf-8", html::CSS);
    r.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("max-age=3600"));
    r
}

async fn nothing_here(State(board): State<Arc<Board>>, uri: http::Uri) -> Response {
    not_found(&board, &format!("Nothing at {}.", uri.path()))
}

/// Whether an Accept-Encoding header takes gzip (`gzip` or `*`, not refused with `q=0`).
fn accepts_gzip(header: Option<&str>) -> bool {
    header.is_some_and(|h| {
        h.split(',').any(|part| {
            let mut fields = part.split(';').map(str::trim);
            let coding = fields.next().unwrap_or("");
            let quality = fields
                .find_map(|f| f.strip_prefix("q=").or_else(|| f.strip_prefix("Q=")))
                .map(|q| q.trim().parse::<f32>().unwrap_or(0.0))
                .unwrap_or(1.0);
            (coding.eq_ignore_ascii_case("gzip") || coding == "*") && quality > 0.0
        })
    })
}

/// At most this many connections are served at once; more wait to be accepted.
const MAX_CONNECTIONS: usize = 256;

/// A client has this long to send a request's head; a connection idle that long is closed.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// A new connection has this long to send its first byte (a request, or a TLS hello).
const FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(3);

/// Connections served at once for one client (an IP address); more are closed at once, so that
/// one client's silent sockets never hold the slots of the others.
const PER_CLIENT: usize = 32;

/// The connections of each client, counted while they are open.
#[derive(Clone, Default)]
struct PerClient(Arc<std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>>);

/// One connection counted for its client until it is dropped.
struct Counted(PerClient, std::net::IpAddr);

impl PerClient {
    fn take(&self, ip: std::net::IpAddr) -> Option<Counted> {
        let mut open = self.0.lock().expect("per-client lock");
        let n = open.entry(ip).or_insert(0);
        if *n >= PER_CLIENT {
            return None;
        }
        *n += 1;
        Some(Counted(self.clone(), ip))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let mut open = (self.0).0.lock().expect("per-client lock");
        if let Some(n) = open.get_mut(&self.1) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.1);
            }
        }
    }
}

/// Serves until the process ends, over TLS when `tls` is given.
pub async fn serve(listener: tokio::net::TcpListener, board: Arc<Board>, tls: Option<Arc<rustls::ServerConfig>>) {
    let https = tls.is_some();
    let listen = listener.local_addr().unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)));
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
    let clients = PerClient::default();
    let router = router(board, https, listen);
    loop {
        let Ok(slot) = slots.clone().acquire_owned().await else { return };
        let (tcp, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(_) => {
                // Out of file descriptors, say: wait instead of spinning.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let ip = peer.ip().to_canonical();
        let Some(counted) = clients.take(ip) else {
            drop(tcp);
            continue;
        };
        let router = router.clone().map_request(move |mut r: http::Request<hyper::body::Incoming>| {
            r.extensions_mut().insert(Peer(ip));
            r
        });
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let _slot = (slot, counted);
            // A socket that stays silent is closed soon, before it holds a slot for long.
            let mut first = [0u8; 1];
            if !matches!(tokio::time::timeout(FIRST_BYTE_TIMEOUT, tcp.peek(&mut first)).await, Ok(Ok(1..))) {
                return;
            }
            match acceptor {
                None => connection(TokioIo::new(tcp), router).await,
                // A client that never finishes its handshake is dropped like one that never
                // sends a request's head.
                Some(a) => {
                    if let Ok(Ok(tls)) = tokio::time::timeout(HEAD_TIMEOUT, a.accept(tcp)).await {
                        connection(TokioIo::new(tls), router).await;
                    }
                }
            }
        });
    }
}

/// Serves the requests of one connection.
async fn connection<I, S>(io: I, router: S)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    S: tower::Service<http::Request<hyper::body::Incoming>, Response = Response, Error = std::convert::Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .serve_connection(io, TowerToHyperService::new(router))
        .await;
}

/// The TLS settings of `[tls]`: the certificate chain and key read from their PEM files.
pub fn tls_config(t: &crate::config::TlsConfig) -> Result<rustls::ServerConfig, TlsError> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let certs = CertificateDer::pem_file_iter(&t.cert_file)
        .and_then(|i| i.collect::<Result<Vec<_>, _>>())
        .map_err(|source| TlsError::File { field: "cert_file", path: t.cert_file.clone(), source })?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate { path: t.cert_file.clone() });
    }
    let key = PrivateKeyDer::from_pem_file(&t.key_file).map_err(|source| TlsError::File {
        field: "key_file",
        path: t.key_file.clone(),
        source,
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Protocols)?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(TlsError::Mismatch)
}

/// Binds the listen address, with a message that names it when that fails.
fn bind(listen: SocketAddr) -> Result<std::net::TcpListener, PagesError> {
    let failed = |source| PagesError::Listen { address: listen, source };
    let listener = std::net::TcpListener::bind(listen).map_err(failed)?;
    listener.set_nonblocking(true).map_err(failed)?;
    Ok(listener)
}

/// The web side's runtime, stopped when dropped (also from inside the main runtime).
struct WebSide(Option<tokio::runtime::Runtime>);

impl Drop for WebSide {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

/// Serves the pages, the API, /metrics and the agents' door on `listen` (over TLS when `tls` is
/// given), on a runtime of their own: with thousands of clusters, the cycles' TLS handshakes and
/// decoding keep the main runtime's threads busy, and requests queued behind them (at 5,000
/// clusters, /metrics p95 700 ms with the text ready). Runs until the answer is dropped.
pub fn start(
    listen: SocketAddr,
    tls: Option<&crate::config::TlsConfig>,
    board: Arc<Board>,
) -> Result<Pages, PagesError> {
    let tls = tls.map(tls_config).transpose()?.map(Arc::new);
    let scheme = if tls.is_some() { "https" } else { "http" };
    let listener = bind(listen)?;
    let address = listener.local_addr().map_err(PagesError::Address)?;
    let failed = PagesError::Runtime;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("dumbmonit-web")
        .enable_all()
        .build()
        .map_err(failed)?;
    let listener = {
        let _entered = runtime.enter();
        tokio::net::TcpListener::from_std(listener).map_err(failed)?
    };
    runtime.spawn(serve(listener, board, tls));
    Ok(Pages { address, scheme, running: Box::new(WebSide(Some(runtime))) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_language_link_comes_back_to_this_server_only() {
        for ok in ["/", "/clusters/a%20b?range=7d", "/silences"] {
            assert!(local_path(ok), "{ok:?}");
        }
        for away in ["", "https://example.com/", "//example.com", "/\\example.com", "/\t/example.com", "/\r\n/x", "x"] {
            assert!(!local_path(away), "{away:?}");
        }
    }

    #[test]
    fn gzip_is_taken_unless_refused() {
        assert!(accepts_gzip(Some("gzip")));
        assert!(accepts_gzip(Some("deflate, GZIP;q=0.5")));
        assert!(accepts_gzip(Some("*")));
        assert!(!accepts_gzip(Some("gzip;q=0")));
        assert!(!accepts_gzip(Some("identity")));
        assert!(!accepts_gzip(Some("gzipped")));
        assert!(!accepts_gzip(None));
    }
}
