//! Talking to one DumbMonit server: HTTPS only (plain HTTP to a loopback address alone), the
//! server verified with the system roots or `--server-ca-file`, through the proxy that
//! `HTTPS_PROXY`/`NO_PROXY` name (a CONNECT tunnel, so the proxy sees no content).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::TokioExecutor;

use crate::error::{AgentConfigError, ConfigError, FlagError};
use crate::notify::describe;
use crate::wire::Answer;

type Https<C> = hyper_rustls::HttpsConnector<C>;

enum Route {
    Direct(HyperClient<Https<HttpConnector>, Full<Bytes>>),
    Proxied(HyperClient<Https<Tunnel<HttpConnector>>, Full<Bytes>>),
}

/// One server the agent reports to.
pub struct Server {
    /// The URL as given, without user information: shown in messages.
    pub url: String,
    base: String,
    route: Route,
    /// The proxy used, as shown (no credentials).
    pub proxy: Option<String>,
}

/// How a request to a server went, short of an answer it gave.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    #[error("cannot reach {url}: {detail}")]
    Unreachable { url: String, detail: String },
    #[error("{url} gave no answer within {seconds} s")]
    Timeout { url: String, seconds: u64 },
}

/// An answer: its status and what it said.
pub struct Pushed {
    pub status: StatusCode,
    pub answer: Option<Answer>,
}

fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

impl Server {
    /// Checks the URL and sets up the connection (nothing is sent yet).
    pub fn new(url: &str, ca_file: Option<&Path>) -> Result<Server, ConfigError> {
        let uri: Uri = url.parse().map_err(|source| AgentConfigError::ServerNotUrl { url: url.to_string(), source })?;
        let host = uri.host().ok_or_else(|| AgentConfigError::ServerNoHost { url: url.to_string() })?.to_string();
        match uri.scheme_str() {
            Some("https") => {}
            Some("http") if is_loopback(&host) => {}
            Some("http") => return Err(AgentConfigError::ServerPlainHttp { url: url.to_string() }.into()),
            _ => return Err(AgentConfigError::ServerNotHttps { url: url.to_string() }.into()),
        }
        if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
            return Err(AgentConfigError::ServerCredentials.into());
        }
        let mut roots = rustls::RootCertStore::empty();
        for c in rustls_native_certs::load_native_certs().certs {
            let _ = roots.add(c);
        }
        if let Some(f) = ca_file {
            let pem = std::fs::read(f).map_err(|source| FlagError::FlagFile {
                flag: "--server-ca-file",
                path: f.to_path_buf(),
                source,
            })?;
            let given = format!("--server-ca-file {}", f.display());
            for der in crate::kube::ca::parse_ca(&pem, &given)?.into_iter() {
                roots
                    .add(rustls_pki_types::CertificateDer::from(der))
                    .map_err(|source| AgentConfigError::ServerCa { path: f.to_path_buf(), source })?;
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(AgentConfigError::ClientTls)?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(Duration::from_secs(10)));
        let matcher = Matcher::from_env();
        let (route, proxy) = match matcher.intercept(&uri) {
            Some(intercept) => {
                let mut tunnel = Tunnel::new(intercept.uri().clone(), http);
                if let Some(auth) = intercept.basic_auth() {
                    tunnel = tunnel.with_auth(auth.clone());
                }
                let shown = format!(
                    "{}://{}",
                    intercept.uri().scheme_str().unwrap_or("http"),
                    intercept.uri().host().unwrap_or("")
                ) + &intercept.uri().port_u16().map(|p| format!(":{p}")).unwrap_or_default();
                let https = hyper_rustls::HttpsConnectorBuilder::new()
                    .with_tls_config(tls)
                    .https_or_http()
                    .enable_http1()
                    .wrap_connector(tunnel);
                (Route::Proxied(HyperClient::builder(TokioExecutor::new()).build(https)), Some(shown))
            }
            None => {
                let https = hyper_rustls::HttpsConnectorBuilder::new()
                    .with_tls_config(tls)
                    .https_or_http()
                    .enable_http1()
                    .wrap_connector(http);
                (Route::Direct(HyperClient::builder(TokioExecutor::new()).build(https)), None)
            }
        };
        Ok(Server { url: url.to_string(), base: url.trim_end_matches('/').to_string(), route, proxy })
    }

    /// Sends one request to `path` and reads the answer, within `deadline`.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        token: &str,
        cluster: Option<&str>,
        body: Vec<u8>,
        deadline: Duration,
    ) -> Result<Pushed, SendError> {
        let mut req = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header("authorization", format!("Bearer {token}"))
            .header("user-agent", concat!("dumbmonit-agent/", env!("CARGO_PKG_VERSION")));
        if !body.is_empty() {
            req = req.header("content-type", "application/json").header("content-encoding", "gzip");
        }
        if let Some(c) = cluster {
            req = req.header(crate::wire::CLUSTER_HEADER, c);
        }
        let req = req
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| SendError::Unreachable { url: self.url.clone(), detail: e.to_string() })?;
        let exchange = async {
            let response = match &self.route {
                Route::Direct(c) => c.request(req).await,
                Route::Proxied(c) => c.request(req).await,
            }
            .map_err(|e| SendError::Unreachable { url: self.url.clone(), detail: describe(&e) })?;
            let status = response.status();
            let body = Limited::new(response.into_body(), 1024 * 1024).collect().await.map_err(|e| {
                SendError::Unreachable { url: self.url.clone(), detail: format!("the answer was cut: {e}") }
            })?;
            Ok(Pushed { status, answer: serde_json::from_slice(&body.to_bytes()).ok() })
        };
        tokio::time::timeout(deadline, exchange)
            .await
            .unwrap_or_else(|_| Err(SendError::Timeout { url: self.url.clone(), seconds: deadline.as_secs() }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_only_to_loopback() {
        assert!(Server::new("http://127.0.0.1:8080", None).is_ok());
        assert!(Server::new("http://[::1]:8080", None).is_ok());
        assert!(Server::new("http://localhost:8080", None).is_ok());
        let e = Server::new("http://monitor.example:8080", None).err().unwrap().to_string();
        assert!(e.contains("plain http:// is refused except to a loopback address"), "{e}");
        assert!(Server::new("ftp://x", None).err().unwrap().to_string().contains("give an https:// URL"));
        assert!(Server::new("https://u:p@x", None).err().unwrap().to_string().contains("no credentials"));
    }
}
