//! The web side of `serve`: status pages, JSON API, `/metrics`, health probes.
//!
//! Every response carries a strict Content-Security-Policy (no script at all, styles only from
//! our own stylesheet), `X-Content-Type-Options: nosniff` and `frame-ancestors 'none'`. Every
//! route but `/healthz` (and `/metrics` when configured open) requires the configured
//! credentials.

pub mod agent;
pub mod api;
pub mod charts;
pub mod html;
pub mod metrics;
pub mod pages;

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::header::{
    ACCEPT_ENCODING, AUTHORIZATION, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, HeaderValue, VARY, WWW_AUTHENTICATE,
};
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;

use crate::board::{Board, Pages};

const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/// A response with the security headers.
pub fn respond(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_str(content_type).expect("a static content type"));
    h.insert("content-security-policy", HeaderValue::from_static(CSP));
    h.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

pub const HTML: &str = "text/html; charset=utf-8";
pub const JSON: &str = "application/json";

fn not_found(board: &Board, what: &str) -> Response<Full<Bytes>> {
    let body =
        html::page("Not found", board.banner.as_deref(), &format!("<h1>Not found</h1><p>{}</p>", html::esc(what)));
    respond(StatusCode::NOT_FOUND, HTML, body)
}

/// Routes one request.
pub fn route(
    board: &Arc<Board>,
    method: &Method,
    path: &str,
    query: &str,
    authorization: Option<&str>,
    accepts_gzip: bool,
) -> Response<Full<Bytes>> {
    if method != Method::GET && method != Method::HEAD {
        let mut r = respond(StatusCode::METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", "only GET and HEAD\n");
        r.headers_mut().insert("allow", HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    if path == "/healthz" {
        return respond(StatusCode::OK, "text/plain; charset=utf-8", "ok\n");
    }
    let protection = board.protection();
    let open = path == "/metrics" && protection.open_metrics;
    if !open && !protection.allows(authorization) {
        let mut r = respond(StatusCode::UNAUTHORIZED, "text/plain; charset=utf-8", "credentials required\n");
        r.headers_mut().insert(WWW_AUTHENTICATE, HeaderValue::from_static(protection.challenge()));
        return r;
    }
    let segments: Vec<String> = path.trim_start_matches('/').split('/').map(percent_decode).collect();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    match segments.as_slice() {
        [""] => respond(StatusCode::OK, HTML, pages::overview(board, query)),
        ["clusters", name] => match pages::cluster(board, name, query) {
            Some(page) => respond(StatusCode::OK, HTML, page),
            None => not_found(board, &format!("No cluster named {name}.")),
        },
        ["readyz"] => {
            if board.ready() {
                respond(StatusCode::OK, "text/plain; charset=utf-8", "ready\n")
            } else {
                respond(StatusCode::SERVICE_UNAVAILABLE, "text/plain; charset=utf-8", "not ready\n")
            }
        }
        ["metrics"] => {
            let text = metrics::current(board);
            let content_type = crate::metrics::exposition::CONTENT_TYPE;
            if accepts_gzip {
                let mut r = respond(StatusCode::OK, content_type, text.gzip());
                r.headers_mut().insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
                r.headers_mut().insert(VARY, HeaderValue::from_static("accept-encoding"));
                r
            } else {
                respond(StatusCode::OK, content_type, text.plain())
            }
        }
        ["api", "v1", "clusters"] => respond(StatusCode::OK, JSON, api::clusters(board)),
        ["api", "v1", "clusters", name] => match api::cluster(board, name) {
            Some(doc) => respond(StatusCode::OK, JSON, doc),
            None => respond(StatusCode::NOT_FOUND, JSON, api::error(&format!("no cluster named {name}"))),
        },
        ["api", "v1", "alerts"] => respond(StatusCode::OK, JSON, api::alerts(board)),
        ["api", "v1", "monitor"] => respond(StatusCode::OK, JSON, api::monitor(board)),
        ["static", "dumbmonit.css"] => {
            let mut r = respond(StatusCode::OK, "text/css; charset=utf-8", html::CSS);
            r.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("max-age=3600"));
            r
        }
        _ => not_found(board, &format!("Nothing at {path}.")),
    }
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

fn percent_decode(s: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(hi << 4 | lo);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// At most this many connections are served at once; more wait to be accepted.
const MAX_CONNECTIONS: usize = 256;

/// A client has this long to send a request's head; a connection idle that long is closed.
const HEAD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Serves until the process ends, over TLS when `tls` is given.
pub async fn serve(listener: tokio::net::TcpListener, board: Arc<Board>, tls: Option<Arc<rustls::ServerConfig>>) {
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
    loop {
        let Ok(slot) = slots.clone().acquire_owned().await else { return };
        let tcp = match listener.accept().await {
            Ok((tcp, _)) => tcp,
            Err(_) => {
                // Out of file descriptors, say: wait instead of spinning.
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let board = board.clone();
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let _slot = slot;
            match acceptor {
                None => connection(TokioIo::new(tcp), board).await,
                // A client that never finishes its handshake is dropped like one that never
                // sends a request's head.
                Some(a) => {
                    if let Ok(Ok(tls)) = tokio::time::timeout(HEAD_TIMEOUT, a.accept(tcp)).await {
                        connection(TokioIo::new(tls), board).await;
                    }
                }
            }
        });
    }
}

/// Serves the requests of one connection.
async fn connection<I>(io: I, board: Arc<Board>)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let service = service_fn(move |req: Request<Incoming>| {
        let board = board.clone();
        async move {
            if req.uri().path().starts_with("/api/v1/agent/") {
                return Ok::<_, std::convert::Infallible>(agent::handle(&board, req).await);
            }
            let auth = req.headers().get(AUTHORIZATION).and_then(|v| v.to_str().ok());
            let gzip = accepts_gzip(req.headers().get(ACCEPT_ENCODING).and_then(|v| v.to_str().ok()));
            let mut response =
                route(&board, req.method(), req.uri().path(), req.uri().query().unwrap_or(""), auth, gzip);
            if req.method() == Method::HEAD {
                *response.body_mut() = Full::new(Bytes::new());
            }
            Ok(response)
        }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .serve_connection(io, service)
        .await;
}

/// The TLS settings of `[tls]`: the certificate chain and key read from their PEM files.
pub fn tls_config(t: &crate::config::TlsConfig) -> Result<rustls::ServerConfig, String> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let certs = CertificateDer::pem_file_iter(&t.cert_file)
        .and_then(|i| i.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("tls: field `cert_file` {}: {e}", t.cert_file.display()))?;
    if certs.is_empty() {
        return Err(format!("tls: field `cert_file` {}: no certificate in it", t.cert_file.display()));
    }
    let key = PrivateKeyDer::from_pem_file(&t.key_file)
        .map_err(|e| format!("tls: field `key_file` {}: {e}", t.key_file.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("tls: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("tls: the certificate and key of `cert_file` and `key_file` do not go together: {e}"))
}

/// Binds the listen address, with a message that names it when that fails.
fn bind(listen: SocketAddr) -> Result<std::net::TcpListener, String> {
    let listener = std::net::TcpListener::bind(listen).map_err(|e| format!("Cannot listen on {listen}: {e}"))?;
    listener.set_nonblocking(true).map_err(|e| format!("Cannot listen on {listen}: {e}"))?;
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
pub fn start(listen: SocketAddr, tls: Option<&crate::config::TlsConfig>, board: Arc<Board>) -> Result<Pages, String> {
    let tls = tls.map(tls_config).transpose()?.map(Arc::new);
    let scheme = if tls.is_some() { "https" } else { "http" };
    let listener = bind(listen)?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    let failed = |e: std::io::Error| format!("Cannot serve the pages: {e}");
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
    fn gzip_is_taken_unless_refused() {
        assert!(accepts_gzip(Some("gzip")));
        assert!(accepts_gzip(Some("deflate, GZIP;q=0.5")));
        assert!(accepts_gzip(Some("*")));
        assert!(!accepts_gzip(Some("gzip;q=0")));
        assert!(!accepts_gzip(Some("identity")));
        assert!(!accepts_gzip(Some("gzipped")));
        assert!(!accepts_gzip(None));
    }

    #[test]
    fn paths_are_decoded() {
        assert_eq!(percent_decode("k3s%20lab"), "k3s lab");
        assert_eq!(percent_decode("%zz"), "%zz");
        assert_eq!(percent_decode("a%2"), "a%2");
        assert_eq!(percent_decode("%é%41"), "%éA", "no slicing inside a character");
    }
}
