//! Notifications: built from a cycle's transitions, queued in the persistent outbox with the
//! cycle's state, delivered by a worker that never blocks a cycle, retried with backoff.

pub mod alertmanager;
pub mod events;
pub mod payload;
pub mod webhook;
pub mod worker;

use std::time::Duration;

use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue, USER_AGENT};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::auth::Credentials;
use crate::config::{NotifierKind, NotifierSettings, Purpose};
use crate::error::{ConfigError, Problem, Section};
use crate::lang::Lang;
use crate::redact::Redactor;
use crate::rules::{Alert, Transition};
pub use payload::Voice;

/// What makes one kind of notifier: what it is sent and where. The outbox worker calls it
/// through [`Notifier`]; the connection, credentials, timeout and retries are every kind's.
/// A kind is a folder under `notify/` with its payload and tests, a line of [`sink`], and a
/// variant of the configuration's [`NotifierKind`].
pub trait Sink: Send + Sync {
    /// Its `type` in the configuration.
    fn kind(&self) -> NotifierKind;

    /// Where notifications are POSTed, from the configured URL (without its trailing `/`).
    fn endpoint(&self, url: &str) -> String {
        url.to_string()
    }

    /// The configured URL again, from [`Sink::endpoint`]: the base of its other paths.
    fn base<'a>(&self, endpoint: &'a str) -> &'a str {
        endpoint
    }

    /// The bodies to queue for a cycle's transitions, for the notifier named `receiver`; the
    /// firing alerts among them are sent again every `resent_every` (the cluster's interval).
    fn bodies(
        &self,
        receiver: &str,
        transitions: &[Transition],
        resent_every: Duration,
        voice: Voice<'_>,
    ) -> Vec<String>;

    /// The heartbeat's body at `now`, sent every `every`: the `DumbMonitWatchdog` alert, firing.
    fn heartbeat_body(&self, receiver: &str, now: jiff::Timestamp, every: Duration, lang: Lang) -> String;

    /// The firing alerts again, each with the time it holds until unless sent again
    /// ([`holds_until`]), for a receiver that expects active alerts re-sent; None: it does not.
    fn resend(
        &self,
        _firing: &mut dyn Iterator<Item = (&Alert, jiff::Timestamp)>,
        _voice: Voice<'_>,
    ) -> Option<String> {
        None
    }

    /// It drops a notification it was already sent (by its labels): replicas may all send.
    fn deduplicates(&self) -> bool;

    /// It keeps silences that the pages can make and read (`notify::alertmanager::silences`).
    fn keeps_silences(&self) -> bool {
        false
    }
}

/// The registry: each kind of the configuration, and what sends it.
pub fn sink(kind: NotifierKind) -> &'static dyn Sink {
    match kind {
        NotifierKind::Webhook => &webhook::Webhook,
        NotifierKind::Alertmanager => &alertmanager::Alertmanager,
        #[cfg(test)]
        NotifierKind::Echo => &echo::Echo,
    }
}

#[cfg(test)]
mod echo;

/// One configured destination.
pub struct Notifier {
    pub name: String,
    /// What it is sent, and where.
    pub sink: &'static dyn Sink,
    /// Where the POSTs go (`…/api/v2/alerts` for Alertmanager).
    endpoint: http::Uri,
    /// The endpoint as shown in logs: no user information.
    pub shown: String,
    auth: Option<HeaderValue>,
    timeout: Duration,
    /// How often the always-firing `DumbMonitWatchdog` is sent (`heartbeat`); None: never.
    pub heartbeat: Option<Duration>,
    /// Where a webhook's heartbeat goes (`heartbeat_url`); None: where its notifications go.
    heartbeat_endpoint: Option<http::Uri>,
    /// What `heartbeat_url` is sent: its own user and password, or the notifier's credentials
    /// when it is on the notifier's server; nothing elsewhere.
    heartbeat_auth: Option<HeaderValue>,
    /// The notifier's secrets, kept out of logs.
    pub redactor: Redactor,
    /// The language of its summaries (`language`).
    pub lang: crate::lang::Lang,
    /// Where its alerts' runbooks are.
    pub runbooks: String,
}

impl Notifier {
    pub fn from_config(settings: &NotifierSettings) -> Result<Notifier, ConfigError> {
        let (name, c) = (settings.name.clone(), &settings.given);
        let mut redactor = Redactor::default();
        let credentials = c.credentials.credentials(Section::Notifier(name.clone()), Purpose::Sending)?;
        if let Some(c) = &credentials {
            redactor.add(c.secret());
        }
        let auth = match credentials.as_ref().and_then(Credentials::authorization) {
            Some(a) => {
                let mut v = HeaderValue::from_str(&a).map_err(|_| {
                    ConfigError::section(Section::Notifier(name.clone()), Problem::CredentialCharacters)
                })?;
                v.set_sensitive(true);
                Some(v)
            }
            None => None,
        };
        // A user and password in the URL (`https://user:pass@host/…`) are sent as basic
        // authentication, as curl and Go's HTTP client (Alertmanager's) do, unless the section
        // gives credentials of its own, which win; the URL requested is without them.
        let section = || Section::Notifier(name.clone());
        let (url, from_url) = without_user_info(c.url.trim_end_matches('/'), &mut redactor);
        let auth = auth.or(from_url);
        let sink = sink(c.kind);
        let url = sink.endpoint(&url);
        let endpoint: http::Uri = url.parse().map_err(|e| ConfigError::section(section(), Problem::Url(e)))?;
        let shown = url.clone();
        // A dead man's switch URL may carry a secret of its own (user information, a key). It
        // is sent its own user and password, or the notifier's credentials when it is on the
        // notifier's own server (scheme, host and port), and none elsewhere: a dead man's switch
        // of another service is never shown the webhook's token.
        let (heartbeat_endpoint, heartbeat_auth) = match &c.heartbeat_url {
            None => (None, None),
            Some(u) => {
                redactor.add(u);
                let (u, from_url) = without_user_info(u, &mut redactor);
                let parsed: http::Uri = u.parse().map_err(|e| ConfigError::section(section(), Problem::Url(e)))?;
                let same_server = parsed.scheme() == endpoint.scheme()
                    && parsed.authority().map(|a| a.as_str().to_ascii_lowercase())
                        == endpoint.authority().map(|a| a.as_str().to_ascii_lowercase());
                let heartbeat_auth = from_url.or_else(|| auth.clone().filter(|_| same_server));
                (Some(parsed), heartbeat_auth)
            }
        };
        Ok(Notifier {
            name,
            sink,
            endpoint,
            shown,
            auth,
            timeout: c.timeout.duration(),
            heartbeat: c.heartbeat.map(|h| h.duration()),
            heartbeat_endpoint,
            heartbeat_auth,
            redactor,
            lang: settings.language,
            runbooks: settings.runbooks.clone(),
        })
    }

    /// The bodies to queue for a cycle's transitions, whose firing alerts are sent again every
    /// `resent_every`.
    pub fn bodies(&self, transitions: &[Transition], resent_every: Duration) -> Vec<String> {
        self.sink.bodies(&self.name, transitions, resent_every, self.voice())
    }

    /// The heartbeat's body at `now`.
    /// How it speaks: its language and its runbooks.
    pub fn voice(&self) -> Voice<'_> {
        Voice { lang: self.lang, runbooks: &self.runbooks }
    }

    pub fn heartbeat_body(&self, now: jiff::Timestamp, every: Duration) -> String {
        self.sink.heartbeat_body(&self.name, now, every, self.lang)
    }

    /// Another path of the same server: `/api/v2/silences` beside `/api/v2/alerts`.
    fn at(&self, path: &str) -> Result<http::Uri, http::uri::InvalidUri> {
        let endpoint = self.endpoint.to_string();
        format!("{}{path}", self.sink.base(&endpoint)).parse()
    }

    /// The firing alerts to re-send, for a receiver that expects it.
    pub fn resend<'a>(&self, mut firing: impl Iterator<Item = (&'a Alert, jiff::Timestamp)>) -> Option<String> {
        self.sink.resend(&mut firing, self.voice())
    }
}

/// The (notifier, body) of each notification the transitions make, for each of `notifiers`;
/// the firing alerts among them are sent again every `resent_every`.
pub fn bodies(notifiers: &[Notifier], transitions: &[Transition], resent_every: Duration) -> Vec<(String, String)> {
    notifiers
        .iter()
        .flat_map(|n| n.bodies(transitions, resent_every).into_iter().map(|b| (n.name.clone(), b)))
        .collect()
}

/// When an alert told firing at `at`, and sent again every `resent_every`, ends at a receiver
/// that expires what is not sent again (Alertmanager's `endsAt`): four periods later, a period
/// being at least a minute, as Prometheus tells it (`--rules.alert.resend-delay`). Three
/// re-sends may be lost before the receiver ends it; a sender's clock ahead of the receiver's
/// never makes the alert end before it starts.
pub fn holds_until(at: jiff::Timestamp, resent_every: Duration) -> jiff::Timestamp {
    const LEAST: Duration = Duration::from_secs(60);
    jiff::SignedDuration::try_from(resent_every.max(LEAST).saturating_mul(4))
        .ok()
        .and_then(|d| at.checked_add(d).ok())
        .unwrap_or(jiff::Timestamp::MAX)
}

/// A URL without its user information, and that user and password as a basic authentication
/// header (percent-decoded, as RFC 3986 writes them); both are secrets from then on.
fn without_user_info(url: &str, redactor: &mut Redactor) -> (String, Option<HeaderValue>) {
    let Some(authority) = url.parse::<http::Uri>().ok().and_then(|u| u.authority().cloned()) else {
        return (url.to_string(), None);
    };
    let Some((userinfo, host)) = authority.as_str().rsplit_once('@') else { return (url.to_string(), None) };
    redactor.add(userinfo);
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let decoded = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
    let (user, password) = (decoded(user), decoded(password));
    // The password alone too: an error may quote it apart from the user.
    if !password.is_empty() {
        redactor.add(&password);
        redactor.add(userinfo.split_once(':').map_or("", |(_, p)| p));
    }
    let header = Credentials::Basic { username: user, password: crate::auth::Password::Plain(password) }
        .authorization()
        .and_then(|a| HeaderValue::from_str(&a).ok())
        .map(|mut v| {
            v.set_sensitive(true);
            v
        });
    (url.replacen(authority.as_str(), host, 1), header)
}

/// Delivery is at least once: a monitor killed after the receiver accepted a notification but
/// before it forgot it sends it again. The same notification always carries the same key, so a
/// receiver can drop the repeat.
pub const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// The key of a notification: the FNV-1a fingerprint of its body, which a retry sends unchanged
/// (and which differs for every transition: alert, state and time are in it).
pub fn idempotency_key(body: &str) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in body.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

/// Why a notification was not delivered. What it says is cleaned of the notifier's secrets.
#[derive(Debug, thiserror::Error)]
pub enum PostError {
    /// The request could not be made.
    #[error("{detail}")]
    Request { detail: String },
    /// No connection, or it broke: the error and its sources, in one line.
    #[error("{detail}")]
    Unreachable { detail: String },
    /// The receiver answered other than 2xx; `body`: the start of what it said, on one line;
    /// `retry_after`: how long it asked to wait (`Retry-After` in seconds), if it did.
    #[error("{status}: {body}")]
    Refused { status: http::StatusCode, body: String, retry_after: Option<Duration> },
    /// No answer within the notifier's timeout.
    #[error("no answer within {} s", .after.as_secs_f64())]
    Timeout { after: Duration },
}

impl PostError {
    /// A refusal that retrying cannot fix: a 4xx answer other than 408 (Request Timeout) and
    /// 429 (Too Many Requests). The notification is dropped rather than tried again.
    pub fn is_permanent(&self) -> bool {
        matches!(self, PostError::Refused { status, .. }
            if status.is_client_error()
                && *status != http::StatusCode::REQUEST_TIMEOUT
                && *status != http::StatusCode::TOO_MANY_REQUESTS)
    }

    /// How long the receiver asked to wait before the next try, if it said.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            PostError::Refused { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// The longest wait a receiver's `Retry-After` is followed for.
const MOST_RETRY_AFTER: Duration = Duration::from_secs(3600);

/// `Retry-After` in seconds (its HTTP-date form is not followed: the backoff applies), at most
/// [`MOST_RETRY_AFTER`].
fn retry_after(headers: &http::HeaderMap) -> Option<Duration> {
    let seconds: u64 = headers.get(http::header::RETRY_AFTER)?.to_str().ok()?.trim().parse().ok()?;
    Some(Duration::from_secs(seconds).min(MOST_RETRY_AFTER))
}

/// The HTTP client of every notifier: HTTP or HTTPS with the system's roots.
#[derive(Clone)]
pub struct Client {
    inner: HyperClient<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>,
}

impl Default for Client {
    fn default() -> Self {
        Client::new()
    }
}

impl Client {
    pub fn new() -> Client {
        let mut roots = rustls::RootCertStore::empty();
        for cert in rustls_native_certs::load_native_certs().certs {
            let _ = roots.add(cert);
        }
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports the default versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        let https =
            hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(tls).https_or_http().enable_http1().build();
        Client { inner: HyperClient::builder(TokioExecutor::new()).build(https) }
    }

    /// POSTs a JSON body; Ok on a 2xx answer, else why (never the credentials).
    pub async fn post(&self, n: &Notifier, body: &str) -> Result<(), PostError> {
        self.exchange(n, http::Method::POST, n.endpoint.clone(), body, n.auth.as_ref()).await.map(drop)
    }

    /// POSTs the notifier's heartbeat, to its `heartbeat_url` when it has one.
    pub async fn post_heartbeat(&self, n: &Notifier, body: &str) -> Result<(), PostError> {
        match &n.heartbeat_endpoint {
            Some(to) => {
                self.exchange(n, http::Method::POST, to.clone(), body, n.heartbeat_auth.as_ref()).await.map(drop)
            }
            None => self.exchange(n, http::Method::POST, n.endpoint.clone(), body, n.auth.as_ref()).await.map(drop),
        }
    }

    /// A request to another path of the notifier's server (Alertmanager's silences): the
    /// answer's body on a 2xx answer, else why (never the credentials).
    pub async fn call(&self, n: &Notifier, method: http::Method, path: &str, body: &str) -> Result<Bytes, PostError> {
        let uri = n.at(path).map_err(|e| PostError::Request { detail: n.redactor.clean_owned(e.to_string()) })?;
        self.exchange(n, method, uri, body, n.auth.as_ref()).await
    }

    async fn exchange(
        &self,
        n: &Notifier,
        method: http::Method,
        uri: http::Uri,
        body: &str,
        auth: Option<&HeaderValue>,
    ) -> Result<Bytes, PostError> {
        let mut request = http::Request::builder()
            .method(method)
            .uri(uri)
            .header(CONTENT_TYPE, "application/json")
            .header(USER_AGENT, concat!("dumbmonit/", env!("CARGO_PKG_VERSION")))
            .header(IDEMPOTENCY_KEY, idempotency_key(body));
        if let Some(a) = auth {
            request = request.header(AUTHORIZATION, a.clone());
        }
        let clean = |text: String| n.redactor.clean_owned(text);
        let request = request
            .body(Full::new(Bytes::from(body.to_string())))
            .map_err(|e| PostError::Request { detail: clean(e.to_string()) })?;
        let exchange = async {
            let response = self
                .inner
                .request(request)
                .await
                .map_err(|e| PostError::Unreachable { detail: clean(describe(&e)) })?;
            let status = response.status();
            let retry_after = retry_after(response.headers());
            let text = response.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
            if status.is_success() {
                Ok(text)
            } else {
                let text = String::from_utf8_lossy(&text);
                let body = clean(crate::health::why::clean_line(&text, 200));
                Err(PostError::Refused { status, body, retry_after })
            }
        };
        match tokio::time::timeout(n.timeout, exchange).await {
            Ok(r) => r,
            Err(_) => Err(PostError::Timeout { after: n.timeout }),
        }
    }
}

/// An error and its sources, in one line (a refused connection, a certificate problem).
pub fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        parts.push(s.to_string());
        cur = s.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::NotifierConfig;

    #[test]
    fn a_4xx_but_408_and_429_is_a_refusal_retrying_cannot_fix() {
        let refused = |code: u16| PostError::Refused {
            status: http::StatusCode::from_u16(code).unwrap(),
            body: String::new(),
            retry_after: None,
        };
        for code in [400, 401, 403, 404, 413, 422] {
            assert!(refused(code).is_permanent(), "{code}");
        }
        for code in [408, 429, 500, 502, 503] {
            assert!(!refused(code).is_permanent(), "{code}");
        }
        assert!(!PostError::Timeout { after: Duration::from_secs(10) }.is_permanent());
        assert!(!PostError::Unreachable { detail: "connection refused".into() }.is_permanent());
    }

    #[test]
    fn retry_after_is_followed_in_seconds_up_to_an_hour() {
        let headers = |v: &str| {
            let mut h = http::HeaderMap::new();
            h.insert(http::header::RETRY_AFTER, HeaderValue::from_str(v).unwrap());
            h
        };
        assert_eq!(retry_after(&headers("120")), Some(Duration::from_secs(120)));
        assert_eq!(retry_after(&headers(" 7 ")), Some(Duration::from_secs(7)));
        assert_eq!(retry_after(&headers("86400")), Some(MOST_RETRY_AFTER));
        assert_eq!(retry_after(&headers("Wed, 21 Oct 2026 07:28:00 GMT")), None, "the date form is not followed");
        assert_eq!(retry_after(&http::HeaderMap::new()), None);
    }

    /// A `[[notifier]]` section alone, named as it says.
    fn section(text: &str) -> NotifierSettings {
        let c: NotifierConfig = toml::from_str(text).unwrap();
        let name = c.name.clone().unwrap_or_default();
        c.named(&name, crate::lang::Lang::En)
    }

    fn notifier(extra: &str) -> Result<Notifier, ConfigError> {
        let c = section(&format!(
            "type = \"webhook\"\nname = \"hook\"\nurl = \"https://user:pw@hooks.example/x\"\n{extra}"
        ));
        Notifier::from_config(&c)
    }

    #[test]
    fn alertmanagers_other_paths_are_beside_its_alerts() {
        let c = section("type = \"alertmanager\"\nname = \"am\"\nurl = \"http://am.example:9093/prefix/\"");
        let n = Notifier::from_config(&c).unwrap();
        assert_eq!(n.at("/api/v2/silences").unwrap().to_string(), "http://am.example:9093/prefix/api/v2/silences");
    }

    #[test]
    fn a_user_and_password_in_the_url_are_sent_as_basic_authentication() {
        let n = notifier("").unwrap();
        assert_eq!(n.auth.as_ref().unwrap(), "Basic dXNlcjpwdw==", "user:pw");
        assert!(n.auth.as_ref().unwrap().is_sensitive());
        assert_eq!(
            (n.endpoint.to_string(), n.shown.as_str()),
            ("https://hooks.example/x".into(), "https://hooks.example/x")
        );
        let c =
            section("type = \"alertmanager\"\nname = \"am\"\nurl = \"http://dm:p%40ss-w0rd-long@am.example:9093/\"");
        let n = Notifier::from_config(&c).unwrap();
        assert_eq!(n.auth.as_ref().unwrap(), "Basic ZG06cEBzcy13MHJkLWxvbmc=", "percent-decoded: dm:p@ss-w0rd-long");
        assert_eq!(n.at("/api/v2/silences").unwrap().to_string(), "http://am.example:9093/api/v2/silences");
        assert_eq!(n.redactor.clean("p@ss-w0rd-long and p%40ss-w0rd-long"), "[redacted] and [redacted]");
    }

    #[test]
    fn a_dead_mans_switch_elsewhere_is_never_sent_the_notifiers_credentials() {
        let with = |heartbeat_url: &str| {
            let c = section(&format!(
                "type = \"webhook\"\nname = \"hook\"\nurl = \"https://hooks.example/x\"\nbearer_token = \"tok-1234567890\"\n\
                 heartbeat = \"1m\"\nheartbeat_url = \"{heartbeat_url}\""
            ));
            Notifier::from_config(&c).unwrap().heartbeat_auth.map(|a| a.to_str().unwrap().to_string())
        };
        assert_eq!(with("https://hooks.example/ping").as_deref(), Some("Bearer tok-1234567890"), "its own server");
        assert_eq!(with("https://switch.example/ping/6c1f"), None, "another service");
        assert_eq!(with("http://hooks.example/ping"), None, "another scheme");
        assert_eq!(with("https://hooks.example:8443/ping"), None, "another port");
        assert_eq!(
            with("https://ping:pong-secret@switch.example/p").as_deref(),
            Some("Basic cGluZzpwb25nLXNlY3JldA==")
        );
    }

    #[test]
    fn credentials_become_the_authorization_header_and_stay_out_of_logs() {
        let n = notifier("username = \"dm\"\npassword = \"s3cret-pass\"").unwrap();
        assert_eq!(n.auth.as_ref().unwrap(), "Basic ZG06czNjcmV0LXBhc3M=");
        assert!(n.auth.as_ref().unwrap().is_sensitive());
        assert_eq!(n.shown, "https://hooks.example/x", "user information is not shown");
        assert_eq!(n.redactor.clean("failed with s3cret-pass"), "failed with [redacted]");
        let n = notifier("bearer_token = \"tok-1234567890\"").unwrap();
        assert_eq!(n.auth.as_ref().unwrap(), "Bearer tok-1234567890");
        let e = notifier("bearer_token_file = \"/nonexistent/token\"").err().unwrap();
        assert!(e.to_string().starts_with("notifier \"hook\": field `bearer_token_file` /nonexistent/token:"), "{e}");
    }
}
