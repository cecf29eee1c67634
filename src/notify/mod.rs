//! Notifications: built from a cycle's transitions, queued in the persistent outbox with the
//! cycle's state, delivered by a worker that never blocks a cycle, retried with backoff.

pub mod alertmanager;
pub mod email;
pub mod events;
pub mod group;
pub mod pagerduty;
pub mod payload;
pub mod slack;
pub mod teams;
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

    /// The bodies of one message of a group ([`group`]): by default what [`Sink::bodies`]
    /// makes of its transitions.
    fn group_bodies(
        &self,
        receiver: &str,
        told: &group::Told<'_>,
        resent_every: Duration,
        voice: Voice<'_>,
    ) -> Vec<String> {
        self.bodies(receiver, told.transitions, resent_every, voice)
    }

    /// The heartbeat's body at `now`, sent every `every`: the `DumbMonitWatchdog` alert, firing;
    /// None for a kind that sends none ([`NotifierKind::beats`]).
    fn heartbeat_body(&self, _receiver: &str, _now: jiff::Timestamp, _every: Duration, _lang: Lang) -> Option<String> {
        None
    }

    /// Its URL is a secret whoever gives it (a Slack webhook's): the log shows its host alone.
    fn secret_url(&self) -> bool {
        false
    }

    /// The body as it is sent, from the body as it was queued, with `key` (a secret the kind
    /// puts in its bodies: a PagerDuty routing key). The outbox never holds the key.
    fn sent_as(&self, body: &str, _key: Option<&str>) -> String {
        body.to_string()
    }

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
        NotifierKind::Slack => &slack::Slack,
        NotifierKind::Teams => &teams::Teams,
        NotifierKind::Email => &email::Email,
        NotifierKind::Pagerduty => &pagerduty::Pagerduty,
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
    /// The pages' address.
    pub pages: String,
    /// A secret of the kind's that goes in the body, added as it is sent (never queued): a
    /// PagerDuty routing key.
    key: Option<String>,
    /// What it is told: see [`route`].
    pub routing: Routing,
    /// An email notifier's server and addresses.
    smtp: Option<email::Smtp>,
    /// How it groups its alerts; None: each change alone.
    pub grouping: Option<crate::config::Grouping>,
}

/// Which alerts a notifier is told (`min_severity`, `matchers`); Alertmanager's is everything.
#[derive(Debug, Default)]
pub struct Routing {
    pub min_severity: Option<crate::rules::Severity>,
    pub matchers: Vec<crate::silence::Matcher>,
}

impl Routing {
    fn from_config(c: &crate::config::NotifierConfig) -> Result<Routing, Problem> {
        let min_severity = match &c.min_severity {
            None => None,
            Some(s) => Some(crate::rules::Severity::named(s).ok_or_else(|| Problem::Unusable {
                field: "min_severity",
                why: format!("{s:?} is not a severity (notice, warning or critical)"),
            })?),
        };
        let mut matchers = Vec::with_capacity(c.matchers.len());
        for text in &c.matchers {
            let m = crate::silence::Matcher::parse_any_label(text)
                .map_err(|e| Problem::Unusable { field: "matchers", why: e.to_string() })?;
            matchers.push(m);
        }
        crate::silence::within_budget(&matchers)
            .map_err(|e| Problem::Unusable { field: "matchers", why: e.to_string() })?;
        Ok(Routing { min_severity, matchers })
    }

    /// Its matchers all hold on these labels (and it has some).
    fn claims(&self, labels: &std::collections::BTreeMap<String, String>) -> bool {
        !self.matchers.is_empty() && self.matchers.iter().all(|m| m.matches(labels))
    }

    fn severe_enough(&self, a: &Alert) -> bool {
        self.min_severity.is_none_or(|least| a.severity >= least)
    }
}

/// The transitions each notifier is told, in the order of `notifiers`: a notifier that routes
/// ([`NotifierKind::routed`]) is told an alert its matchers all match, or, when it has no
/// matchers, an alert that no routed notifier's matchers match; in both cases only at its
/// `min_severity` or above. Alertmanager is told everything.
pub fn route<'t>(notifiers: &[Notifier], transitions: &'t [Transition]) -> Vec<Vec<&'t Transition>> {
    let claimed: Vec<bool> = transitions.iter().map(|t| claimed(notifiers, &t.alert.labels)).collect();
    notifiers
        .iter()
        .map(|n| {
            transitions
                .iter()
                .zip(&claimed)
                .filter(|(t, claimed)| n.tells(&t.alert, **claimed))
                .map(|(t, _)| t)
                .collect()
        })
        .collect()
}

/// Whether a routed notifier's matchers all match these labels (then the notifiers without
/// matchers are not told the alert).
pub(crate) fn claimed(notifiers: &[Notifier], labels: &std::collections::BTreeMap<String, String>) -> bool {
    notifiers.iter().any(|n| n.sink.kind().routed() && n.routing.claims(labels))
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
        let section = || Section::Notifier(name.clone());
        let read = |path: &std::path::Path, field: &'static str| -> Result<String, ConfigError> {
            let text = std::fs::read_to_string(path).map_err(|source| {
                ConfigError::section(section(), Problem::Unreadable { field, path: path.to_path_buf(), source })
            })?;
            let text = text.trim().to_string();
            if text.is_empty() {
                return Err(ConfigError::section(section(), Problem::EmptyFile { field }));
            }
            crate::redact::know_secret(&text);
            Ok(text)
        };
        let smtp = match c.kind.posts() {
            true => None,
            false => Some(
                email::Smtp::from_config(c, credentials.as_ref().map(Credentials::secret), c.timeout.duration())
                    .map_err(|p| ConfigError::section(section(), p))?,
            ),
        };
        // A URL from a file is a secret (a Slack webhook's is its token): kept out of the log,
        // which shows its scheme and host alone.
        let (given_url, secret_url) = match (&c.url, &c.url_file, c.kind.default_url()) {
            // An SMTP server, as the log shows it.
            _ if smtp.is_some() => {
                let port = c.port.unwrap_or(if c.starttls.unwrap_or(true) { 587 } else { 465 });
                (format!("smtp://{}:{port}", c.host.as_deref().unwrap_or_default()), false)
            }
            (Some(u), ..) => (u.clone(), false),
            (None, Some(f), _) => {
                let u = read(f, "url_file")?;
                if !crate::config::is_http_url(&u) {
                    return Err(ConfigError::section(section(), Problem::NotHttpUrlFile));
                }
                redactor.add(&u);
                (u, true)
            }
            (None, None, Some(d)) => (d.to_string(), false),
            (None, None, None) => return Err(ConfigError::section(section(), Problem::NoUrl)),
        };
        let key = match &c.routing_key_file {
            Some(f) => {
                let k = read(f, "routing_key_file")?;
                redactor.add(&k);
                Some(k)
            }
            None => None,
        };
        let routing = Routing::from_config(c).map_err(|p| ConfigError::section(section(), p))?;
        let grouping = c.grouping().map_err(|p| ConfigError::section(section(), p))?;
        // A user and password in the URL (`https://user:pass@host/…`) are sent as basic
        // authentication, as curl and Go's HTTP client (Alertmanager's) do, unless the section
        // gives credentials of its own, which win; the URL requested is without them.
        let (url, from_url) = without_user_info(given_url.trim_end_matches('/'), &mut redactor);
        let auth = auth.or(from_url);
        let sink = sink(c.kind);
        let url = sink.endpoint(&url);
        let endpoint: http::Uri = url.parse().map_err(|e| ConfigError::section(section(), Problem::Url(e)))?;
        let shown = if secret_url || sink.secret_url() { shown_host(&endpoint) } else { url.clone() };
        if sink.secret_url() {
            redactor.add(&url);
            crate::redact::know_secret(&url);
        }
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
            pages: settings.pages.clone(),
            key,
            routing,
            smtp,
            grouping,
        })
    }

    /// Whether it is told alert `a` ([`route`]), given whether a routed notifier's matchers
    /// claimed it ([`claimed`]).
    pub(crate) fn tells(&self, a: &Alert, claimed: bool) -> bool {
        let r = &self.routing;
        let leaf = if r.matchers.is_empty() { !claimed } else { r.claims(&a.labels) };
        !self.sink.kind().routed() || (r.severe_enough(a) && leaf)
    }

    /// The bodies to queue for a cycle's transitions, whose firing alerts are sent again every
    /// `resent_every`.
    pub fn bodies(&self, transitions: &[Transition], resent_every: Duration) -> Vec<String> {
        self.sink.bodies(&self.name, transitions, resent_every, self.voice())
    }

    /// How it speaks: its language, its runbooks and the pages it links to.
    pub fn voice(&self) -> Voice<'_> {
        Voice { lang: self.lang, runbooks: &self.runbooks, pages: &self.pages }
    }

    /// The heartbeat's body at `now`; None for a kind without heartbeats.
    pub fn heartbeat_body(&self, now: jiff::Timestamp, every: Duration) -> Option<String> {
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

/// The (notifier, body) of each notification the transitions make, for each of `notifiers`
/// as [`route`] tells it; the firing alerts among them are sent again every `resent_every`.
pub fn bodies(notifiers: &[Notifier], transitions: &[Transition], resent_every: Duration) -> Vec<(String, String)> {
    let routed = route(notifiers, transitions);
    let mut out = Vec::new();
    for (n, told) in notifiers.iter().zip(routed) {
        if told.is_empty() {
            continue;
        }
        let told: Vec<Transition> = told.into_iter().cloned().collect();
        out.extend(n.bodies(&told, resent_every).into_iter().map(|b| (n.name.clone(), b)));
    }
    out
}

/// A secret URL as the log shows it: its scheme and host, the rest left out.
fn shown_host(endpoint: &http::Uri) -> String {
    let port = endpoint.port_u16().map(|p| format!(":{p}")).unwrap_or_default();
    format!("{}://{}{port}/…", endpoint.scheme_str().unwrap_or("https"), endpoint.host().unwrap_or(""))
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

/// The alert of a test notification (`Client::send_test`).
pub const TEST_ALERT: &str = "DumbMonitTest";

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
    /// The SMTP server did not take the message: `permanent` when it refused it for good (5xx).
    #[error("{detail}")]
    Mail { detail: String, permanent: bool },
}

impl PostError {
    /// A refusal that retrying cannot fix: a 4xx answer other than 408 (Request Timeout) and
    /// 429 (Too Many Requests), an SMTP server's 5xx (its 4xx is "try later"), a message that
    /// cannot be made. The notification is dropped rather than tried again.
    pub fn is_permanent(&self) -> bool {
        match self {
            PostError::Refused { status, .. } => {
                status.is_client_error()
                    && *status != http::StatusCode::REQUEST_TIMEOUT
                    && *status != http::StatusCode::TOO_MANY_REQUESTS
            }
            PostError::Mail { permanent, .. } => *permanent,
            _ => false,
        }
    }

    /// How long the receiver asked to wait before the next try, if it said.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            PostError::Refused { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// The most of a receiver's answer that is read (Alertmanager's silences list included).
const ANSWER_MOST: usize = 4 << 20;

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

    /// POSTs a queued JSON body, as its kind sends it; Ok on a 2xx answer, else why (never the
    /// credentials).
    pub async fn post(&self, n: &Notifier, body: &str) -> Result<(), PostError> {
        self.deliver(n, body).await.map(drop)
    }

    /// Sends a queued body; what the receiver answered when it took it (`200 OK`, the SMTP
    /// server's `250 …`).
    async fn deliver(&self, n: &Notifier, body: &str) -> Result<String, PostError> {
        if let Some(smtp) = &n.smtp {
            // What the server said, as a receiver's answer is: on one line, its start, no secret.
            let said = |text: String| n.redactor.clean_owned(crate::health::why::clean_line(&text, 200));
            return match tokio::time::timeout(n.timeout * 2, smtp.send(body)).await {
                Ok(Ok(answer)) => Ok(said(answer)),
                Ok(Err(e)) => Err(PostError::Mail { detail: said(e.detail), permanent: e.permanent }),
                Err(_) => Err(PostError::Timeout { after: n.timeout * 2 }),
            };
        }
        let sent = n.sink.sent_as(body, n.key.as_deref());
        let key = idempotency_key(body);
        let (status, _) = self
            .exchange(n, http::Method::POST, n.endpoint.clone(), &sent, &key, n.auth.as_ref(), Answer::Status)
            .await?;
        Ok(status.to_string())
    }

    /// Sends `n` a test notification now, apart from the outbox: the `DumbMonitTest` alert,
    /// firing (then resolved, for PagerDuty), said to be sent by `who`. Gives what the receiver answered, or why it did not take it.
    pub async fn send_test(&self, n: &Notifier, who: &str, now: jiff::Timestamp) -> Result<String, PostError> {
        let mut labels = std::collections::BTreeMap::from([
            ("alertname".to_string(), TEST_ALERT.to_string()),
            ("severity".to_string(), "notice".to_string()),
        ]);
        labels.insert("notifier".into(), n.name.clone());
        let alert = Alert {
            alertname: TEST_ALERT.into(),
            severity: crate::rules::Severity::Notice,
            labels,
            summary: n.lang.tr("notify-test-summary", &[("who", who.into())]),
            description: n.lang.tr("notify-test-description", &[("notifier", (&n.name).into())]),
            active_at: now,
            fired_at: Some(now),
            escalated_at: None,
            untold: false,
            acknowledged: None,
            told_labels: None,
            said: None,
            said_description: None,
        };
        let firing =
            Transition { time: now, state: crate::rules::TransitionState::Firing, alert, previous_labels: None };
        // PagerDuty would keep the test's incident open: it is resolved at once. Alertmanager's
        // test alert ends by itself four minutes later, once its receivers were told.
        let mut told = vec![firing.clone()];
        if n.sink.kind() == NotifierKind::Pagerduty {
            told.push(Transition { state: crate::rules::TransitionState::Resolved, ..firing });
        }
        let mut answer = String::new();
        for t in told {
            for body in n.bodies(std::slice::from_ref(&t), Duration::from_secs(60)) {
                answer = self.deliver(n, &body).await?;
            }
        }
        Ok(answer)
    }

    /// POSTs the notifier's heartbeat, to its `heartbeat_url` when it has one.
    pub async fn post_heartbeat(&self, n: &Notifier, body: &str) -> Result<(), PostError> {
        match &n.heartbeat_endpoint {
            Some(to) => {
                let key = idempotency_key(body);
                self.exchange(n, http::Method::POST, to.clone(), body, &key, n.heartbeat_auth.as_ref(), Answer::Status)
                    .await
                    .map(drop)
            }
            None => {
                let key = idempotency_key(body);
                self.exchange(n, http::Method::POST, n.endpoint.clone(), body, &key, n.auth.as_ref(), Answer::Status)
                    .await
                    .map(drop)
            }
        }
    }

    /// A request to another path of the notifier's server (Alertmanager's silences): the
    /// answer's body on a 2xx answer, else why (never the credentials).
    pub async fn call(&self, n: &Notifier, method: http::Method, path: &str, body: &str) -> Result<Bytes, PostError> {
        let uri = n.at(path).map_err(|e| PostError::Request { detail: n.redactor.clean_owned(e.to_string()) })?;
        self.exchange(n, method, uri, body, &idempotency_key(body), n.auth.as_ref(), Answer::Body).await.map(|(_, b)| b)
    }

    #[allow(clippy::too_many_arguments)] // a request's parts, each its own
    async fn exchange(
        &self,
        n: &Notifier,
        method: http::Method,
        uri: http::Uri,
        body: &str,
        idempotency: &str,
        auth: Option<&HeaderValue>,
        wanted: Answer,
    ) -> Result<(http::StatusCode, Bytes), PostError> {
        let mut request = http::Request::builder()
            .method(method)
            .uri(uri)
            .header(CONTENT_TYPE, "application/json")
            .header(USER_AGENT, concat!("dumbmonit/", env!("CARGO_PKG_VERSION")))
            .header(IDEMPOTENCY_KEY, idempotency);
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
            // A notification a receiver took is taken, whatever follows its status: its body is
            // not read (one that never ends, or is huge, would make a delivery look failed and
            // be sent again).
            if status.is_success() && wanted == Answer::Status {
                return Ok((status, Bytes::new()));
            }
            // A receiver's answer is read up to a bound: one that sends more is cut there.
            let read = http_body_util::Limited::new(response.into_body(), ANSWER_MOST).collect().await;
            if status.is_success() {
                read.map(|b| (status, b.to_bytes())).map_err(|e| PostError::Unreachable {
                    detail: clean(format!("{status}, but its answer could not be read whole: {e}")),
                })
            } else {
                let text = read.map(|b| b.to_bytes()).unwrap_or_default();
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

/// What of a receiver's answer a request needs: a delivery its status (and the body of a
/// refusal, to say it), a read of Alertmanager's silences the body too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    Status,
    Body,
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

    /// A notifier from a `[[notifier]]` section's keys (TOML), and what loading it says.
    fn from_keys(keys: &str) -> Result<Notifier, String> {
        let c: NotifierConfig = toml::from_str(keys).map_err(|e| e.to_string())?;
        Notifier::from_config(&c.named("n", crate::lang::Lang::En)).map_err(|e| e.to_string())
    }

    #[test]
    fn what_cannot_be_used_is_refused_at_load_with_the_field_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p.display().to_string()
        };
        let slack = |url_file: &str| from_keys(&format!("type = \"slack\"\nurl_file = {url_file:?}"));
        let said = |r: Result<Notifier, String>| r.err().unwrap_or_default();
        assert!(said(slack("/nowhere/slack.url")).starts_with("notifier \"n\": field `url_file` /nowhere/slack.url: "));
        assert_eq!(said(slack(&file("empty", "\n"))), "notifier \"n\": field `url_file`: the file is empty");
        assert_eq!(
            said(slack(&file("bare", "hooks.slack.com/services/x\n"))),
            "notifier \"n\": field `url_file`: the file must hold an http:// or https:// URL"
        );
        let webhook = |extra: &str| from_keys(&format!("type = \"webhook\"\nurl = \"http://h/x\"\n{extra}"));
        assert_eq!(
            said(webhook("min_severity = \"urgent\"")),
            "notifier \"n\": field `min_severity`: \"urgent\" is not a severity (notice, warning or critical)"
        );
        assert!(said(webhook("matchers = ['team=~\"(\"']")).starts_with("notifier \"n\": field `matchers`: "));
        let ok = webhook("min_severity = \"warning\"\nmatchers = ['team=\"payments\"']").unwrap();
        assert_eq!((ok.routing.min_severity, ok.routing.matchers.len()), (Some(crate::rules::Severity::Warning), 1));
        assert!(ok.grouping.is_none(), "a webhook without group_by is told each change alone");
        // Grouping, as Alertmanager's keys say it.
        assert_eq!(
            said(webhook("group_by = [\"cluster\"]\ngroup_wait = \"5m\"\ngroup_interval = \"1m\"")),
            "notifier \"n\": field `group_interval`: 60s is shorter than group_wait (300s)"
        );
        assert_eq!(
            said(webhook("group_wait = \"1m\"")),
            "notifier \"n\": field `group_wait`: a webhook groups only with `group_by`"
        );
        assert_eq!(
            said(webhook("group_by = [\"team-name\"]")),
            "notifier \"n\": field `group_by`: \"team-name\" is not a label name"
        );
        assert_eq!(
            said(webhook("group_by = [\"...\", \"cluster\"]")),
            "notifier \"n\": field `group_by`: \"...\" (every label) goes alone"
        );
        assert_eq!(
            said(webhook("group_by = [\"cluster\"]\nrepeat_interval = \"1m\"")),
            "notifier \"n\": field `repeat_interval`: 60s is shorter than group_interval (300s)"
        );
        let slack =
            from_keys("type = \"slack\"\nurl = \"https://hooks.slack.com/services/x\"\nrepeat_interval = \"0\"");
        let g = slack.unwrap().grouping.unwrap();
        assert_eq!(g.by, crate::config::GroupBy::Labels(vec!["cluster".into()]));
        assert_eq!((g.wait.as_secs(), g.interval.as_secs(), g.repeat), (30, 300, None), "\"0\": no reminders");
    }

    #[test]
    fn a_secret_url_shows_its_host_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("url");
        std::fs::write(&path, "https://hooks.slack.com/services/T1/B2/S3CR3T\n").unwrap();
        let n = from_keys(&format!("type = \"slack\"\nurl_file = {:?}", path.display().to_string())).unwrap();
        assert_eq!(n.shown, "https://hooks.slack.com/…");
        assert_eq!(
            n.redactor.clean_owned("posting https://hooks.slack.com/services/T1/B2/S3CR3T".into()),
            "posting [redacted]"
        );
        // Given in the file itself, a Slack URL is as secret.
        let n = from_keys("type = \"slack\"\nurl = \"https://hooks.slack.com/services/T1/B2/S3CR3T\"").unwrap();
        assert_eq!(n.shown, "https://hooks.slack.com/…");
    }

    #[test]
    fn a_team_is_told_what_its_matchers_match_and_the_rest_goes_to_the_others() {
        use crate::rules::{Severity, TransitionState};
        let team = from_keys("type = \"webhook\"\nurl = \"http://h/t\"\nmatchers = ['team=\"payments\"']").unwrap();
        let all = from_keys("type = \"webhook\"\nurl = \"http://h/a\"").unwrap();
        let loud = from_keys("type = \"webhook\"\nurl = \"http://h/l\"\nmin_severity = \"warning\"").unwrap();
        let am = from_keys("type = \"alertmanager\"\nurl = \"http://am:9093\"").unwrap();
        let t = |team: Option<&str>, severity: Severity| {
            let mut a = crate::notify::payload::tests::alert();
            a.severity = severity;
            if let Some(team) = team {
                a.labels.insert("team".into(), team.into());
            }
            Transition { time: a.active_at, state: TransitionState::Firing, alert: a, previous_labels: None }
        };
        let ts =
            [t(Some("payments"), Severity::Warning), t(Some("search"), Severity::Notice), t(None, Severity::Critical)];
        let routed = route(&[team, all, loud, am], &ts);
        let which = |i: usize| -> Vec<usize> {
            routed[i].iter().map(|x| ts.iter().position(|y| std::ptr::eq(*x, y)).unwrap()).collect()
        };
        assert_eq!(which(0), [0], "the team: its own");
        assert_eq!(which(1), [1, 2], "the catch-all: what no team claims");
        assert_eq!(which(2), [2], "warnings and above that no team claims");
        assert_eq!(which(3), [0, 1, 2], "Alertmanager: everything");
    }

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
