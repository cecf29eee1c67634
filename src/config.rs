//! The configuration file of `dumbmonit serve` (TOML). Defaults live in `defaults`; every field
//! is checked at load, and an error names the file, the cluster or notifier, and the field.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};

use crate::auth::{Credentials, Password};
use crate::error::{ConfigError, DurationError, FileError, Problem, Section};
use crate::kube::ConnectOptions;
pub use crate::kube::Seconds;

mod defaults {
    pub fn interval() -> super::Seconds {
        super::Seconds(60.0)
    }
    pub fn record_retention() -> super::Seconds {
        super::Seconds(24.0 * 3600.0)
    }
    pub fn notifier_timeout() -> super::Seconds {
        super::Seconds(10.0)
    }
    pub fn listen() -> std::net::SocketAddr {
        std::net::SocketAddr::from(([127, 0, 0, 1], 8080))
    }
}

/// A duration in the file: a number of seconds (`10`, `0.5`) or a string with a unit (`"10s"`,
/// `"5m"`, `"24h"`).
impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Seconds, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(f64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(n) => within_bounds(n, &format!("{n:?}")).map(Seconds).map_err(serde::de::Error::custom),
            Raw::Text(s) => parse_duration(&s).map(Seconds).map_err(serde::de::Error::custom),
        }
    }
}

/// The longest duration taken anywhere (ten years): every duration converts to a `Duration`.
pub const MAX_SECONDS: f64 = 10.0 * 365.0 * 86400.0;

/// A number of seconds that is finite, not negative and at most [`MAX_SECONDS`].
fn within_bounds(n: f64, shown: &str) -> Result<f64, DurationError> {
    if n.is_finite() && (0.0..=MAX_SECONDS).contains(&n) {
        Ok(n)
    } else {
        Err(DurationError::OutOfBounds { text: shown.to_string() })
    }
}

/// Seconds from `10`, `"10s"`, `"5m"`, `"24h"`, `"2d"` or `"500ms"`: finite, not negative, at
/// most ten years.
pub fn parse_duration(s: &str) -> Result<f64, DurationError> {
    let s = s.trim();
    let split = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let n: f64 = number.trim().parse().map_err(|_| DurationError::NotANumber { text: s.to_string() })?;
    let factor = match unit {
        "" | "s" => 1.0,
        "ms" => 0.001,
        "m" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        _ => return Err(DurationError::UnknownUnit { text: s.to_string() }),
    };
    within_bounds(n * factor, s)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Where the pages, the API and /metrics are served (loopback by default).
    #[serde(default = "defaults::listen")]
    pub listen: std::net::SocketAddr,
    /// Where the SQLite state lives (and the secret key, by default).
    pub state_dir: PathBuf,
    /// `[state]`: the state in PostgreSQL, shared by replicas; SQLite in `state_dir` without it.
    pub state: Option<StateConfig>,
    /// Protection of the pages, the API and /metrics (none by default).
    #[serde(default)]
    pub auth: AuthConfig,
    /// Without `[auth]`, the host names the pages answer to besides loopback names and IP
    /// addresses (a page of another name is refused, 421: DNS rebinding).
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    #[serde(default, rename = "cluster")]
    pub clusters: Vec<ClusterConfig>,
    /// The `[[notifier]]` sections as the file gives them: checked and named into
    /// [`Config::notifiers`] as the file is loaded, and read by nothing else.
    #[serde(default, rename = "notifier")]
    pub(crate) notifier_sections: Vec<NotifierConfig>,
    /// The notifiers, checked, each with its name and its language.
    #[serde(skip)]
    pub notifiers: Vec<NotifierSettings>,
    /// Standing ignore rules: silences with no end.
    #[serde(default, rename = "silence")]
    pub silences: Vec<SilenceConfig>,
    /// Maintenance windows: nothing of a cluster is told while one lasts.
    #[serde(default, rename = "maintenance")]
    pub maintenance: Vec<crate::silence::maintenance::Spec>,
    /// The built-in rules tuned: checked into the rules' own form where the rules are known
    /// (`rules::tune`), as the file is loaded by `serve` and `dumbmonit rules --config`.
    #[serde(default, rename = "rule")]
    pub rules: Vec<RuleConfig>,
    /// Serve over HTTPS (for agents that push across the internet).
    pub tls: Option<TlsConfig>,
    /// Watch only the clusters of this shard (`"INDEX/COUNT"`); `serve --shard` wins over it.
    pub shard: Option<Shard>,
    /// The key that seals the tokens of clusters added on the pages (made on first start, mode
    /// 0600, when absent); `STATE_DIR/secret.key` by default.
    pub secret_key_file: Option<PathBuf>,
    /// The language of the notifications' summaries and descriptions (`en` or `fr`); a
    /// `[[notifier]]`'s own `language` wins. The pages follow each reader's browser.
    #[serde(default)]
    pub language: crate::lang::Lang,
    /// Where people reach the pages (`https://dumbmonit.example.com`): the links of the
    /// notifications start there. `http://HOSTNAME:PORT` of `listen` by default (https with
    /// `[tls]`), as Alertmanager's `--web.external-url`.
    pub external_url: Option<String>,
    /// A team's own copy of the runbooks: each alert's `runbook_url` is this, then `#` and its
    /// alert name in lower case. The pages' `/runbooks` by default.
    pub runbook_base_url: Option<String>,
}

/// An http:// or https:// URL, without its trailing `/`; the field named when not.
fn base_url(field: &str, url: &str, file: &Path) -> Result<String, ConfigError> {
    let lower = url.to_ascii_lowercase();
    if (lower.starts_with("http://") || lower.starts_with("https://")) && url.parse::<http::Uri>().is_ok() {
        return Ok(url.trim_end_matches('/').to_string());
    }
    Err(FileError::Syntax {
        path: file.to_path_buf(),
        line: None,
        message: format!("field `{field}` must be an http:// or https:// URL"),
    }
    .into())
}

/// This machine's name, as the pages' default address takes it.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.'))
        .unwrap_or_else(|| "localhost".into())
}

/// A `[[silence]]`: matchers in Alertmanager's syntax over an alert's labels, all of which must
/// hold, and why.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SilenceConfig {
    pub matchers: Vec<String>,
    #[serde(default)]
    pub comment: String,
}

/// A `[[rule]]`: a built-in rule tuned, for the alerts its matchers match (all of them without
/// matchers). As written; `rules::tune` checks it.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleConfig {
    /// The rule, by its alert name.
    pub name: String,
    /// Its hold.
    #[serde(rename = "for", default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalate_after: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Added to its alerts.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub labels: std::collections::BTreeMap<String, String>,
    /// The alerts it applies to, in Alertmanager's matcher syntax.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matchers: Vec<String>,
}

/// The namespaces a cluster may be read in (`namespaces`): each is read apart, so each costs
/// a cycle about thirteen requests.
pub const MAX_NAMESPACES: usize = 100;

/// Who made what the file says, as the pages and the API name it.
pub const FROM_FILE: &str = "the configuration file";

/// The file's N-th `[[maintenance]]` as a window.
fn file_window(
    spec: &crate::silence::maintenance::Spec,
    n: usize,
) -> Result<crate::silence::Window, crate::silence::maintenance::WindowError> {
    use crate::silence::maintenance::FILE;
    crate::silence::Window::from_spec(format!("file-{n}"), spec, FILE, FROM_FILE.into(), true, None)
}

impl Config {
    /// The file's silences, checked at load (`file-1`, `file-2`… in the file's order).
    pub fn silences(&self) -> Vec<crate::silence::Silence> {
        self.silences
            .iter()
            .enumerate()
            .map(|(i, s)| crate::silence::Silence {
                id: format!("file-{}", i + 1),
                matchers: s.matchers.iter().filter_map(|m| crate::silence::Matcher::parse(m).ok()).collect(),
                starts_at: None,
                ends_at: None,
                updated_at: None,
                comment: s.comment.clone(),
                created_by: FROM_FILE.into(),
                from_file: true,
            })
            .collect()
    }

    /// The file's maintenance windows, checked at load (`file-1`, `file-2`… in the file's order).
    pub fn windows(&self) -> Vec<crate::silence::Window> {
        self.maintenance.iter().enumerate().filter_map(|(i, m)| file_window(m, i + 1).ok()).collect()
    }
}

/// One shard of the configured clusters: those whose stable hash of the name (64-bit FNV-1a),
/// modulo COUNT, is INDEX. Every instance with the same clusters and COUNT agrees on the split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

/// A shard that cannot be read (`text` as given).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("{text:?} is not INDEX/COUNT (for example \"0/3\": the first of three shards)")]
    NotIndexCount { text: String },
    #[error("{text:?}: INDEX must be below COUNT (shards are numbered from 0)")]
    IndexNotBelowCount { text: String },
}

impl std::str::FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let bad = || ShardError::NotIndexCount { text: s.to_string() };
        let (i, c) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = c.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(ShardError::IndexNotBelowCount { text: s.to_string() });
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl<'de> Deserialize<'de> for Shard {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Shard, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

impl Shard {
    /// Whether the cluster named `name` is this shard's.
    pub fn owns(&self, name: &str) -> bool {
        let mut h: u64 = 0xcbf29ce484222325;
        for b in name.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
        h % self.count as u64 == self.index as u64
    }
}

/// `[state]`: where replicas keep one shared state, PostgreSQL. As written; [`StateConfig::check`]
/// checks it as the file loads.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateConfig {
    /// `postgres://USER@HOST:PORT/DATABASE`, without a password.
    pub url: String,
    /// The file holding the user's password (a Kubernetes Secret's key, mounted).
    pub password_file: Option<PathBuf>,
    /// As libpq spells it: `disable`, `prefer` (the default, as libpq's), `require`, `verify-ca`
    /// or `verify-full`.
    #[serde(default)]
    pub sslmode: SslMode,
    /// The certificate authorities (PEM) the server's certificate is checked against; the
    /// system's without it.
    pub ca_file: Option<PathBuf>,
    /// How many connections each replica keeps at most (8).
    pub pool: Option<u32>,
    /// How long a connection may take to open (5s).
    pub connect_timeout: Option<Seconds>,
    /// How long a statement may run (10s): PostgreSQL's `statement_timeout`.
    pub statement_timeout: Option<Seconds>,
    /// How long a replica's clusters stay its own without it renewing them (30s).
    pub lease: Option<Seconds>,
    /// This replica's name among the others (the machine's name by default: a pod's).
    pub replica: Option<String>,
}

/// libpq's `sslmode`, as DumbMonit applies it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SslMode {
    /// No TLS.
    Disable,
    /// TLS when the server offers it, its certificate not checked.
    #[default]
    Prefer,
    /// TLS always, its certificate not checked.
    Require,
    /// TLS, the certificate checked against the authorities, not the host name.
    VerifyCa,
    /// TLS, the certificate checked against the authorities and the host name.
    VerifyFull,
}

impl StateConfig {
    /// The lease, checked.
    pub fn lease(&self) -> Duration {
        self.lease.unwrap_or(Seconds(30.0)).duration()
    }

    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout.unwrap_or(Seconds(5.0)).duration()
    }

    pub fn statement_timeout(&self) -> Duration {
        self.statement_timeout.unwrap_or(Seconds(10.0)).duration()
    }

    pub fn pool(&self) -> u32 {
        self.pool.unwrap_or(8)
    }

    /// This replica's name.
    pub fn replica(&self) -> String {
        self.replica.clone().unwrap_or_else(hostname)
    }

    /// The URL, parsed: a `postgres://` URL that names a host and no password (it would be shown
    /// wherever the URL is), with no `sslmode` of its own (the field is the one).
    pub fn parsed(&self) -> Result<tokio_postgres::Config, Problem> {
        let unusable = |why: &str| Problem::Unusable { field: "url", why: why.to_string() };
        let lower = self.url.to_ascii_lowercase();
        if !(lower.starts_with("postgres://") || lower.starts_with("postgresql://")) {
            return Err(unusable("must be a postgres:// URL (postgres://USER@HOST:PORT/DATABASE)"));
        }
        if lower.contains("sslmode=") || lower.contains("password=") {
            return Err(unusable("sets sslmode or password itself: give them as `sslmode` and `password_file`"));
        }
        let parsed: tokio_postgres::Config =
            self.url.parse().map_err(|e| Problem::Unusable { field: "url", why: format!("does not parse: {e}") })?;
        if parsed.get_password().is_some() {
            return Err(unusable("carries a password: put it in the file `password_file` names"));
        }
        if parsed.get_hosts().is_empty() {
            return Err(unusable("names no host"));
        }
        if parsed.get_user().is_none() {
            return Err(unusable("names no user (postgres://USER@HOST/DATABASE)"));
        }
        Ok(parsed)
    }

    /// Checked as the file's `[state]` is, the field named.
    pub fn checked(&self) -> Result<(), Problem> {
        self.check()
    }

    fn check(&self) -> Result<(), Problem> {
        self.parsed()?;
        for (field, path) in [("password_file", &self.password_file), ("ca_file", &self.ca_file)] {
            if let Some(path) = path
                && let Err(source) = std::fs::File::open(path)
            {
                return Err(Problem::Unreadable { field, path: path.clone(), source });
            }
        }
        if self.ca_file.is_some() && matches!(self.sslmode, SslMode::Disable) {
            return Err(Problem::Unusable { field: "ca_file", why: "is of no use with sslmode = \"disable\"".into() });
        }
        if !(1..=100).contains(&self.pool()) {
            return Err(Problem::Unusable { field: "pool", why: format!("{} is not between 1 and 100", self.pool()) });
        }
        for (field, v) in [
            ("connect_timeout", self.connect_timeout),
            ("statement_timeout", self.statement_timeout),
            ("lease", self.lease),
        ] {
            if let Some(v) = v
                && !(v.0.is_finite() && v.0 >= 1.0)
            {
                return Err(Problem::Unusable { field, why: format!("{}s is shorter than a second", v.0) });
            }
        }
        if let Some(r) = &self.replica
            && (r.is_empty() || r.len() > 200 || r.chars().any(char::is_control))
        {
            return Err(Problem::Unusable { field: "replica", why: "must be a name of 1 to 200 characters".into() });
        }
        Ok(())
    }
}

/// `[tls]`: the certificate chain and private key (PEM) that `serve` presents.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
}

crate::flat::group! { $
    /// Credentials as a section of the file gives them: a bearer token or a file holding it, or a
    /// user name with a password. The pages' (`[auth]`, `[auth.admin]`) take the password as its
    /// bcrypt hash or a file holding it; a notifier's, which sends it, the password itself or a
    /// file holding it. Checked at load, and read into `auth::Credentials` by
    /// [`CredentialFields::credentials`].
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CredentialFields in config as credentials => credential_table {
        struct[] file[]
        bearer_token: Option<String>,
        struct[] file[]
        bearer_token_file: Option<PathBuf>,
        struct[] file[]
        username: Option<String>,
        /// A bcrypt hash, as `htpasswd -nbBC 10 USER PASSWORD` prints it after the colon (the
        /// pages' credentials).
        struct[] file[]
        password_hash: Option<String>,
        /// The password itself (a notifier's).
        struct[] file[]
        password: Option<String>,
        struct[] file[]
        password_file: Option<PathBuf>,
    }
}

/// What a section's credentials are for, which decides the keys that go together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// `[auth]`, `[auth.admin]`: what a request must present, the password kept as its bcrypt
    /// hash (or read from a file).
    Pages,
    /// A notifier's: what it presents, the password itself (or read from a file).
    Sending,
}

crate::config::credential_table! {
    /// `[auth]`: protection of the pages, the API and /metrics.
    #[derive(Clone, Debug, Default, PartialEq, Deserialize)]
    #[serde(from = "AuthTable")]
    pub struct AuthConfig {
        credentials.bearer_token,
        credentials.bearer_token_file,
        credentials.username,
        credentials.password_hash,
        credentials.password_file,
        skip credentials.password,
        /// Serve /metrics without credentials (for a Prometheus that scrapes it).
        #[serde(default)]
        pub open_metrics: bool,
        /// `[auth.admin]`: who may also add, edit and remove clusters on the pages. Without it the
        /// pages change nothing.
        pub admin: Option<AdminConfig>,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct AuthTable;
}

crate::config::credential_table! {
    /// `[auth.admin]`: the same credential keys as `[auth]`'s.
    #[derive(Clone, Debug, Default, PartialEq, Deserialize)]
    #[serde(from = "AdminTable")]
    pub struct AdminConfig {
        credentials.bearer_token,
        credentials.bearer_token_file,
        credentials.username,
        credentials.password_hash,
        credentials.password_file,
        skip credentials.password,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct AdminTable;
}

crate::kube::connect_table! {
    /// A cluster to watch: a `[[cluster]]` of the file, or one added on the pages.
    #[derive(Clone, Debug, PartialEq, Deserialize)]
    #[serde(from = "ClusterTable")]
    pub struct ClusterConfig {
        pub name: String,
        /// A cluster added on the pages (kept in the state directory), not in the file.
        #[serde(skip)]
        pub from_pages: bool,
        /// The agent token of a cluster added on the pages (the file's clusters name a file).
        #[serde(skip)]
        pub agent_token_value: Option<String>,
        connect.address,
        /// The cluster is read by a relay agent, which proves who it is with the token in this file.
        pub agent_token_file: Option<PathBuf>,
        connect.port,
        connect.token,
        connect.token_file,
        connect.ca,
        connect.ca_file,
        connect.insecure_skip_tls_verify,
        connect.kubeconfig,
        connect.context,
        connect.in_cluster,
        connect.timeout,
        #[serde(default = "defaults::interval")]
        pub interval: Seconds,
        connect.ignored_namespaces,
        connect.namespaces,
        /// Where to write each cycle as read (optional).
        pub record_dir: Option<PathBuf>,
        /// How long recorded cycles are kept.
        #[serde(default = "defaults::record_retention")]
        pub record_retention: Seconds,
        /// Follow the cluster by list-then-watch instead of listing it every interval.
        #[serde(default)]
        pub watch: bool,
        /// Labels of each alert's namespace copied onto the alert (`team`, `owner`), so that a
        /// notifier's matchers reach the team that owns it (reads `namespaces`, optional).
        #[serde(default)]
        pub namespace_labels: Vec<String>,
    }
    /// A `[[cluster]]` table as the file holds it: the cluster's keys and its connection settings
    /// on one level, in this order (the error of an unknown key lists them so).
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct ClusterTable;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NotifierKind {
    /// An HTTP POST of the Alertmanager webhook payload per transition.
    Webhook,
    /// The Alertmanager v2 API.
    Alertmanager,
    /// A Slack incoming webhook: Block Kit messages.
    Slack,
    /// A Microsoft Teams Workflows webhook: Adaptive Cards.
    Teams,
    /// Email, over SMTP.
    Email,
    /// PagerDuty's Events API v2.
    Pagerduty,
    /// A notifier that exists only in tests: it shows what adding a kind takes.
    #[cfg(test)]
    Echo,
}

impl NotifierKind {
    /// Every kind, in the order of the docs.
    pub const ALL: &[NotifierKind] = &[
        NotifierKind::Webhook,
        NotifierKind::Alertmanager,
        NotifierKind::Slack,
        NotifierKind::Teams,
        NotifierKind::Email,
        NotifierKind::Pagerduty,
        #[cfg(test)]
        NotifierKind::Echo,
    ];

    /// Its `type`: the default name of its notifier.
    pub fn as_str(self) -> &'static str {
        match self {
            NotifierKind::Webhook => "webhook",
            NotifierKind::Alertmanager => "alertmanager",
            NotifierKind::Slack => "slack",
            NotifierKind::Teams => "teams",
            NotifierKind::Email => "email",
            NotifierKind::Pagerduty => "pagerduty",
            #[cfg(test)]
            NotifierKind::Echo => "echo",
        }
    }

    /// It may send a heartbeat (`heartbeat`): a dead man's switch reads it. A chat channel or a
    /// pager told "alive" every minute would be noise.
    pub fn beats(self) -> bool {
        match self {
            NotifierKind::Webhook | NotifierKind::Alertmanager => true,
            NotifierKind::Slack | NotifierKind::Teams | NotifierKind::Email | NotifierKind::Pagerduty => false,
            #[cfg(test)]
            NotifierKind::Echo => true,
        }
    }

    /// It is told only what its `matchers` and `min_severity` let through, and what matches no
    /// other notifier's matchers when it has none. Alertmanager is told everything: it routes
    /// by its own `route`.
    pub fn routed(self) -> bool {
        !matches!(self, NotifierKind::Alertmanager)
    }

    /// It sends over HTTP, to `url` (email goes to an SMTP server: `host`).
    pub fn posts(self) -> bool {
        !matches!(self, NotifierKind::Email)
    }

    /// Where it sends when the section gives no `url`; None: `url` or `url_file` is needed.
    pub fn default_url(self) -> Option<&'static str> {
        match self {
            NotifierKind::Pagerduty => Some("https://events.pagerduty.com"),
            _ => None,
        }
    }

    /// Its heartbeat may go to a URL of its own (`heartbeat_url`): a dead man's switch beside
    /// a receiver that has none.
    pub fn heartbeat_elsewhere(self) -> bool {
        match self {
            NotifierKind::Webhook => true,
            NotifierKind::Alertmanager
            | NotifierKind::Slack
            | NotifierKind::Teams
            | NotifierKind::Email
            | NotifierKind::Pagerduty => false,
            #[cfg(test)]
            NotifierKind::Echo => false,
        }
    }
}

crate::config::credential_table! {
    /// A `[[notifier]]`: where notifications go, and how.
    #[derive(Clone, Debug, PartialEq, Deserialize)]
    #[serde(from = "NotifierTable")]
    pub struct NotifierConfig {
        #[serde(rename = "type")]
        pub kind: NotifierKind,
        /// Defaults to the type (`webhook`, `alertmanager`), numbered when there are several.
        pub name: Option<String>,
        /// Where it sends (for `pagerduty`, PagerDuty's own by default).
        pub url: Option<String>,
        /// A file holding `url` (a Slack webhook's URL is its secret), read at load.
        pub url_file: Option<PathBuf>,
        credentials.bearer_token,
        credentials.bearer_token_file,
        credentials.username,
        credentials.password,
        credentials.password_file,
        skip credentials.password_hash,
        #[serde(default = "defaults::notifier_timeout")]
        pub timeout: Seconds,
        /// Opt-in: an always-firing `DumbMonitWatchdog` sent this often, so that the silence
        /// of the monitor itself is noticed outside it (a dead man's switch).
        pub heartbeat: Option<Seconds>,
        /// A webhook's heartbeat goes there (a dead man's switch) instead of to `url`.
        pub heartbeat_url: Option<String>,
        /// The language of its summaries and descriptions; the file's `language` by default.
        pub language: Option<crate::lang::Lang>,
        /// `pagerduty`: a file holding the integration's routing key (a secret).
        pub routing_key_file: Option<PathBuf>,
        /// Told only alerts of this severity or above (`notice`, `warning`, `critical`).
        pub min_severity: Option<String>,
        /// Told only the alerts whose labels match all of these (Alertmanager's syntax); the
        /// alerts that match no notifier's matchers go to the notifiers without matchers.
        #[serde(default)]
        pub matchers: Vec<String>,
        /// The labels its alerts are grouped by, one message per group (Alertmanager's
        /// `group_by`; `["..."]`: every alert its own group); `["cluster"]` by default, and
        /// for a webhook no grouping unless given.
        pub group_by: Option<Vec<String>>,
        /// How long a new group waits for more alerts before its first message (30 s).
        pub group_wait: Option<Seconds>,
        /// How long a group waits after a message before telling what changed since (5 m).
        pub group_interval: Option<Seconds>,
        /// How long before what still fires is told again (4 h); `"0"`: never.
        pub repeat_interval: Option<Seconds>,
        /// `email`: the SMTP server.
        pub host: Option<String>,
        /// `email`: its port; 587 with STARTTLS, 465 with implicit TLS by default.
        pub port: Option<i64>,
        /// `email`: STARTTLS on a plain connection (true, the default), or TLS from the start
        /// (false, SMTPS). Either way the connection is encrypted before anything is sent.
        pub starttls: Option<bool>,
        /// `email`: the sender (`DumbMonit <alerts@example.com>`).
        pub from: Option<String>,
        /// `email`: the recipients.
        #[serde(default)]
        pub to: Vec<String>,
        /// `email`: a CA (PEM) that the SMTP server's certificate chains to, besides the system's.
        pub ca_file: Option<PathBuf>,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct NotifierTable;
}

/// How a notifier groups its alerts, checked (Alertmanager's meanings): one message per group
/// of alerts with the same `by` labels, the first `wait` after the group's first change, then
/// what changed at most every `interval`, and what still fires again every `repeat`.
#[derive(Clone, Debug, PartialEq)]
pub struct Grouping {
    pub by: GroupBy,
    pub wait: Duration,
    pub interval: Duration,
    /// None: no reminders (`repeat_interval = "0"`).
    pub repeat: Option<Duration>,
}

/// What a group's alerts share.
#[derive(Clone, Debug, PartialEq)]
pub enum GroupBy {
    /// These labels (an alert without one of them has it empty).
    Labels(Vec<String>),
    /// All of them (`["..."]`): each alert is its own group.
    Each,
}

impl NotifierConfig {
    /// Its grouping, checked; None for a notifier told each change alone: `alertmanager`
    /// (which groups itself), and a `webhook` without `group_by`.
    pub fn grouping(&self) -> Result<Option<Grouping>, Problem> {
        let unusable = |field, why: String| Problem::Unusable { field, why };
        if !self.kind.routed() || (self.kind == NotifierKind::Webhook && self.group_by.is_none()) {
            if self.kind == NotifierKind::Webhook {
                for (field, given) in [
                    ("group_wait", self.group_wait.is_some()),
                    ("group_interval", self.group_interval.is_some()),
                    ("repeat_interval", self.repeat_interval.is_some()),
                ] {
                    if given {
                        return Err(unusable(field, "a webhook groups only with `group_by`".into()));
                    }
                }
            }
            return Ok(None);
        }
        let by = match self.group_by.as_deref() {
            None => GroupBy::Labels(vec!["cluster".into()]),
            Some([all]) if all == "..." => GroupBy::Each,
            Some(labels) => {
                if let Some(bad) = labels.iter().find(|l| !crate::silence::is_label_name(l)) {
                    let why = if bad == "..." {
                        "\"...\" (every label) goes alone".to_string()
                    } else {
                        format!("{bad:?} is not a label name")
                    };
                    return Err(unusable("group_by", why));
                }
                let mut labels = labels.to_vec();
                labels.sort();
                labels.dedup();
                GroupBy::Labels(labels)
            }
        };
        let wait = self.group_wait.unwrap_or(Seconds(30.0)).duration();
        let interval = self.group_interval.unwrap_or(Seconds(300.0)).duration();
        if interval.is_zero() {
            return Err(Problem::NotPositive { field: "group_interval" });
        }
        if interval < wait {
            let why = format!("{}s is shorter than group_wait ({}s)", interval.as_secs_f64(), wait.as_secs_f64());
            return Err(unusable("group_interval", why));
        }
        let repeat = self.repeat_interval.unwrap_or(Seconds(4.0 * 3600.0)).duration();
        if !repeat.is_zero() && repeat < interval {
            let why = format!("{}s is shorter than group_interval ({}s)", repeat.as_secs_f64(), interval.as_secs_f64());
            return Err(unusable("repeat_interval", why));
        }
        Ok(Some(Grouping { by, wait, interval, repeat: (!repeat.is_zero()).then_some(repeat) }))
    }
}

/// The labels every alert carries besides its object's.
pub const OWN_LABELS: [&str; 3] = ["alertname", "severity", "cluster"];

/// A notifier as the rest of the house sees it: checked, named (its `name`, or its type,
/// numbered when there are several) and in its language (its own, or the file's).
#[derive(Clone, Debug, PartialEq)]
pub struct NotifierSettings {
    pub name: String,
    pub language: crate::lang::Lang,
    /// Where its alerts' runbooks are (`runbook_url` is this, `#`, the alert's name in lower
    /// case): `runbook_base_url`, else the pages' `/runbooks` in its language.
    pub runbooks: String,
    /// The pages' address (`external_url`), that a message links to.
    pub pages: String,
    /// Its section as the file gives it: type, URL, credentials, timeout, heartbeat.
    pub given: NotifierConfig,
}

impl NotifierConfig {
    /// The section, named and in `language` where it says none: what a configuration's check
    /// makes of it (and what tests make of a section alone).
    pub fn named(self, name: &str, language: crate::lang::Lang) -> NotifierSettings {
        let language = self.language.unwrap_or(language);
        let pages = "http://localhost:8080".to_string();
        let runbooks = runbooks_at(None, &pages, language);
        NotifierSettings { name: name.to_string(), language, runbooks, pages, given: self }
    }
}

/// Where the runbooks are for a reader of `lang`: a team's copy, else the pages' own.
pub fn runbooks_at(base: Option<&str>, pages: &str, lang: crate::lang::Lang) -> String {
    match (base, lang) {
        (Some(base), _) => base.to_string(),
        (None, crate::lang::Lang::Fr) => format!("{pages}/runbooks/fr"),
        (None, _) => format!("{pages}/runbooks/en"),
    }
}

/// An alert's runbook under `runbooks`: its section, named after it in lower case (the anchor
/// of its heading in docs/alerts.md, as GitHub and the pages make it).
pub fn runbook_url(runbooks: &str, alertname: &str) -> String {
    format!("{runbooks}#{}", alertname.to_ascii_lowercase())
}

impl Config {
    /// Where people reach the pages: `external_url`, else this machine's name and `listen`'s
    /// port.
    pub fn pages_url(&self) -> String {
        match &self.external_url {
            Some(u) => u.clone(),
            None => {
                let scheme = if self.tls.is_some() { "https" } else { "http" };
                format!("{scheme}://{}:{}", hostname(), self.listen.port())
            }
        }
    }

    /// Where the secret key is (`secret_key_file`, else `STATE_DIR/secret.key`).
    pub fn secret_key_path(&self) -> PathBuf {
        self.secret_key_file.clone().unwrap_or_else(|| self.state_dir.join("secret.key"))
    }

    /// The protection of the web side: `[auth]`, and the host names of `allowed_hosts`.
    pub fn protection(&self) -> Result<crate::auth::Protection, ConfigError> {
        Ok(self.auth.protection()?.with_allowed_hosts(self.allowed_hosts.clone()))
    }

    /// Reads and checks a configuration file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| FileError::ConfigFile { path: path.to_path_buf(), source })?;
        let mut config: Config = toml::from_str(&text).map_err(|e| FileError::Syntax {
            path: path.to_path_buf(),
            line: e.span().map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1),
            message: e.message().to_string(),
        })?;
        config.check(path)?;
        Ok(config)
    }

    fn check(&mut self, file: &Path) -> Result<(), ConfigError> {
        let err = |section: Section, problem: Problem| Err(ConfigError::in_file(file, section, problem));
        if let Some(state) = &self.state
            && let Err(problem) = state.check()
        {
            return err(Section::State, problem);
        }
        if let Some(u) = &self.external_url {
            self.external_url = Some(base_url("external_url", u, file)?);
        }
        if let Some(u) = &self.runbook_base_url {
            self.runbook_base_url = Some(base_url("runbook_base_url", u.trim_end_matches('#'), file)?);
        }
        let a = &self.auth;
        if let Err(e) = a.credentials.check(Purpose::Pages) {
            return err(Section::Auth, e);
        }
        if let Some(admin) = &a.admin {
            let f = &admin.credentials;
            if f.bearer_token.is_none() && f.bearer_token_file.is_none() && f.username.is_none() {
                return err(Section::AuthAdmin, Problem::NoCredentials);
            }
            if let Err(e) = f.check(Purpose::Pages) {
                return err(Section::AuthAdmin, e);
            }
        }
        let mut names = std::collections::HashSet::new();
        for c in &self.clusters {
            let at = || Section::Cluster(c.name.clone());
            if c.name.is_empty() || c.name.chars().any(|ch| ch.is_control() || ch == '/') {
                return err(at(), Problem::BadName);
            }
            if !names.insert(c.name.clone()) {
                return err(at(), Problem::NameTwice);
            }
            let k = &c.connect;
            if c.agent_token_file.is_some() {
                let direct = [
                    ("address", k.address.is_some()),
                    ("token", k.token.is_some()),
                    ("token_file", k.token_file.is_some()),
                    ("ca", k.ca.is_some()),
                    ("ca_file", k.ca_file.is_some()),
                    ("insecure_skip_tls_verify", k.insecure_skip_tls_verify),
                    ("kubeconfig", k.kubeconfig.is_some()),
                    ("context", k.context.is_some()),
                    ("in_cluster", k.in_cluster),
                    ("record_dir", c.record_dir.is_some()),
                    ("watch", c.watch),
                ];
                if let Some((field, _)) = direct.iter().find(|(_, set)| *set) {
                    return err(at(), Problem::NotWithAgent { field });
                }
            }
            if c.watch && c.record_dir.is_some() {
                return err(at(), Problem::RecordWithWatch);
            }
            for label in &c.namespace_labels {
                let why = if !crate::silence::is_label_name(label) {
                    "is not a label name (letters, digits and '_', not starting with a digit or \"__\")"
                } else if OWN_LABELS.contains(&label.as_str()) || label == "namespace" {
                    "is DumbMonit's own: alertname, severity, cluster and namespace are set by DumbMonit"
                } else {
                    continue;
                };
                return err(at(), Problem::Unusable { field: "namespace_labels", why: format!("{label:?} {why}") });
            }
            if k.namespaces.len() > MAX_NAMESPACES {
                return err(at(), Problem::TooManyNamespaces { count: k.namespaces.len(), most: MAX_NAMESPACES });
            }
            if let Some(value) = k.namespaces.iter().find(|n| crate::kube::check_name("", n).is_err()) {
                return err(at(), Problem::NotANamespace { value: value.clone() });
            }
            if !k.namespaces.is_empty() {
                let field = if k.namespaces.iter().all(|n| k.ignored_namespaces.contains(n)) {
                    Some(("`ignored_namespaces`", "every namespace it names is ignored: nothing would be read"))
                } else if c.watch {
                    Some((
                        "`watch = true`",
                        "watch mode follows the cluster-wide collections; namespaced access is read every interval",
                    ))
                } else if c.record_dir.is_some() {
                    Some(("`record_dir`", "a recording keeps the cluster-wide Lists as the API server returned them"))
                } else {
                    None
                };
                if let Some((field, why)) = field {
                    return err(at(), Problem::NamespacesWith { field, why });
                }
            }
            let modes = [
                k.address.is_some(),
                k.kubeconfig.is_some() || k.context.is_some(),
                k.in_cluster,
                c.agent_token_file.is_some(),
            ];
            if modes.iter().filter(|m| **m).count() != 1 {
                return err(at(), Problem::ConnectionModes);
            }
            for (field, v) in
                [("timeout", k.timeout), ("interval", c.interval), ("record_retention", c.record_retention)]
            {
                if !(v.0.is_finite() && v.0 > 0.0) {
                    return err(at(), Problem::NotPositive { field });
                }
            }
        }
        for (i, m) in self.maintenance.iter().enumerate() {
            if let Err(e) = file_window(m, i + 1) {
                return err(Section::Maintenance(i + 1), Problem::Window(Box::new(e)));
            }
        }
        if self.silences.len() > crate::silence::cost::MAX_SILENCES {
            let (count, most) = (self.silences.len(), crate::silence::cost::MAX_SILENCES);
            return err(Section::Silence(most + 1), Problem::TooManySilences { count, most });
        }
        // The file's silences together stay within the budget of all silences in force (they
        // are always in force), each expression counted once.
        // (The expressions are held until the end, so that one counted is not taken for another.)
        let (mut held, mut seen, mut total) = (Vec::new(), std::collections::HashSet::new(), 0);
        for (i, silence) in self.silences.iter().enumerate() {
            let at = Section::Silence(i + 1);
            if silence.matchers.is_empty() {
                return err(at, Problem::NoMatchers);
            }
            if silence.matchers.len() > crate::silence::cost::MAX_MATCHERS {
                let e = crate::silence::MatchersError::TooMany { count: silence.matchers.len() };
                return err(at, Problem::Matchers(e));
            }
            let mut matchers = Vec::with_capacity(silence.matchers.len());
            for m in &silence.matchers {
                match crate::silence::Matcher::parse(m) {
                    Ok(m) => matchers.push(m),
                    Err(e) => return err(at, Problem::Matcher(e)),
                }
            }
            if let Err(e) = crate::silence::within_budget(&matchers) {
                return err(at, Problem::Matchers(e));
            }
            for p in matchers.iter().filter_map(|m| m.pattern()) {
                if seen.insert(p.as_ref() as *const crate::silence::cost::Pattern) {
                    total += p.bytes;
                    held.push(p.clone());
                }
            }
            if total > crate::silence::cost::TOTAL_BUDGET {
                let most = crate::silence::cost::TOTAL_BUDGET;
                return err(at, Problem::SilencesTooCostly { most: crate::silence::cost::size(most) });
            }
        }
        let mut counts = std::collections::HashMap::new();
        for n in &self.notifier_sections {
            *counts.entry(n.kind).or_insert(0) += 1;
        }
        let mut seen = std::collections::HashMap::new();
        let mut notifier_names = std::collections::HashSet::new();
        let mut notifiers = Vec::new();
        for n in &self.notifier_sections {
            let kind = n.kind.as_str();
            let index = seen.entry(n.kind).or_insert(0);
            *index += 1;
            let name = n
                .name
                .clone()
                .unwrap_or_else(|| if counts[&n.kind] > 1 { format!("{kind}-{index}") } else { kind.into() });
            let at = || Section::Notifier(name.clone());
            if !notifier_names.insert(name.clone()) {
                return err(at(), Problem::NameTwice);
            }
            if n.kind.posts() {
                match (&n.url, &n.url_file) {
                    (Some(_), Some(_)) => return err(at(), Problem::Both { one: "url", other: "url_file" }),
                    (None, None) if n.kind.default_url().is_none() => return err(at(), Problem::NoUrl),
                    (Some(url), None) if !is_http_url(url) => return err(at(), Problem::NotHttpUrl),
                    _ => {}
                }
                let email_only = [
                    ("host", n.host.is_some()),
                    ("port", n.port.is_some()),
                    ("starttls", n.starttls.is_some()),
                    ("from", n.from.is_some()),
                    ("to", !n.to.is_empty()),
                    ("ca_file", n.ca_file.is_some()),
                ];
                if let Some((field, _)) = email_only.iter().find(|(_, given)| *given) {
                    return err(at(), Problem::NotWithKind { field, kind });
                }
            } else {
                for (field, given) in [("url", n.url.is_some()), ("url_file", n.url_file.is_some())] {
                    if given {
                        return err(at(), Problem::NotWithKind { field, kind });
                    }
                }
                if n.credentials.bearer_token.is_some() || n.credentials.bearer_token_file.is_some() {
                    return err(at(), Problem::NotWithKind { field: "bearer_token", kind });
                }
                if n.host.as_deref().is_none_or(|h| h.trim().is_empty()) {
                    return err(at(), Problem::Missing { field: "host" });
                }
                if n.port.is_some_and(|p| !(1..=65535).contains(&p)) {
                    return err(at(), Problem::PortRange);
                }
                if n.from.is_none() {
                    return err(at(), Problem::Missing { field: "from" });
                }
                if n.to.is_empty() {
                    return err(at(), Problem::NoRecipients);
                }
            }
            match (n.kind, &n.routing_key_file) {
                (NotifierKind::Pagerduty, None) => return err(at(), Problem::Missing { field: "routing_key_file" }),
                (NotifierKind::Pagerduty, Some(_)) | (_, None) => {}
                (_, Some(_)) => return err(at(), Problem::NotWithKind { field: "routing_key_file", kind }),
            }
            if n.heartbeat.is_some() && !n.kind.beats() {
                return err(at(), Problem::NotWithKind { field: "heartbeat", kind });
            }
            if !n.kind.routed() {
                if n.min_severity.is_some() {
                    return err(at(), Problem::NotWithKind { field: "min_severity", kind });
                }
                if !n.matchers.is_empty() {
                    return err(at(), Problem::NotWithKind { field: "matchers", kind });
                }
                let grouping = [
                    ("group_by", n.group_by.is_some()),
                    ("group_wait", n.group_wait.is_some()),
                    ("group_interval", n.group_interval.is_some()),
                    ("repeat_interval", n.repeat_interval.is_some()),
                ];
                if let Some((field, _)) = grouping.iter().find(|(_, given)| *given) {
                    return err(at(), Problem::NotWithKind { field, kind });
                }
            }
            if let Err(p) = n.grouping() {
                return err(at(), p);
            }
            if let Err(e) = n.credentials.check(Purpose::Sending) {
                return err(at(), e);
            }
            if !(n.timeout.0.is_finite() && n.timeout.0 > 0.0) {
                return err(at(), Problem::NotPositive { field: "timeout" });
            }
            if n.heartbeat.is_some_and(|h| !(h.0.is_finite() && h.0 > 0.0)) {
                return err(at(), Problem::NotPositive { field: "heartbeat" });
            }
            if let Some(u) = &n.heartbeat_url {
                if !n.kind.heartbeat_elsewhere() || n.heartbeat.is_none() {
                    return err(at(), Problem::HeartbeatUrlAlone);
                }
                if !is_http_url(u) {
                    return err(at(), Problem::NotHttpHeartbeatUrl);
                }
            }
            let language = n.language.unwrap_or(self.language);
            let pages = self.pages_url();
            let runbooks = runbooks_at(self.runbook_base_url.as_deref(), &pages, language);
            notifiers.push(NotifierSettings { name, language, runbooks, pages, given: n.clone() });
        }
        self.notifiers = notifiers;
        Ok(())
    }
}

/// An http:// or https:// URL that parses.
pub fn is_http_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    (lower.starts_with("http://") || lower.starts_with("https://")) && url.parse::<http::Uri>().is_ok()
}

impl CredentialFields {
    /// Whether the keys given go together for their purpose.
    fn check(&self, purpose: Purpose) -> Result<(), Problem> {
        let bearer = self.bearer_token.is_some() || self.bearer_token_file.is_some();
        let both_bearer = self.bearer_token.is_some() && self.bearer_token_file.is_some();
        let not_both_bearer = Problem::Both { one: "bearer_token", other: "bearer_token_file" };
        match purpose {
            Purpose::Pages => {
                let basic = self.username.is_some() || self.password_hash.is_some() || self.password_file.is_some();
                if bearer && basic {
                    return Err(Problem::BearerAndBasic);
                }
                if both_bearer {
                    return Err(not_both_bearer);
                }
                if basic && (self.username.is_none() || self.password_hash.is_some() == self.password_file.is_some()) {
                    return Err(Problem::BasicIncomplete);
                }
                if let Some(h) = &self.password_hash
                    && !(h.len() == 60 && (h.starts_with("$2a$") || h.starts_with("$2b$") || h.starts_with("$2y$")))
                {
                    return Err(Problem::NotBcrypt);
                }
            }
            Purpose::Sending => {
                if both_bearer {
                    return Err(not_both_bearer);
                }
                if self.password.is_some() && self.password_file.is_some() {
                    return Err(Problem::Both { one: "password", other: "password_file" });
                }
                let basic = self.username.is_some() || self.password.is_some() || self.password_file.is_some();
                if basic && bearer {
                    return Err(Problem::BearerAndPassword);
                }
                if basic && self.username.is_none() {
                    return Err(Problem::NoUsername);
                }
            }
        }
        Ok(())
    }

    /// The credentials given (checked at load), secrets read from their files and made known to
    /// the process (kept out of the log, a hash too: it is no one's business); None when the
    /// section gives none. An error names `section` and the field.
    pub fn credentials(&self, section: Section, purpose: Purpose) -> Result<Option<Credentials>, ConfigError> {
        let read = |path: &Path, field: &'static str| {
            std::fs::read_to_string(path).map_err(|source| {
                ConfigError::section(section.clone(), Problem::Unreadable { field, path: path.to_path_buf(), source })
            })
        };
        let credentials = if let Some(t) = &self.bearer_token {
            Some(Credentials::Bearer(t.clone()))
        } else if let Some(f) = &self.bearer_token_file {
            Some(Credentials::Bearer(read(f, "bearer_token_file")?.trim().to_string()))
        } else if let Some(username) = &self.username {
            let password = match (&self.password_hash, &self.password, &self.password_file) {
                (Some(h), ..) => Password::Bcrypt(h.clone()),
                (None, Some(p), _) => Password::Plain(p.clone()),
                (None, None, Some(f)) => {
                    let text = read(f, "password_file")?;
                    // The pages' password is the file's first line, spaces kept; a notifier's is
                    // trimmed.
                    Password::Plain(match purpose {
                        Purpose::Pages => text.trim_end_matches(['\n', '\r']).to_string(),
                        Purpose::Sending => text.trim().to_string(),
                    })
                }
                // A notifier may give a user name alone.
                (None, None, None) => Password::Plain(String::new()),
            };
            Some(Credentials::Basic { username: username.clone(), password })
        } else {
            None
        };
        if let Some(c) = &credentials {
            crate::redact::know_secret(c.secret());
        }
        Ok(credentials)
    }
}

impl AuthConfig {
    /// The protection of the web side, secrets read from their files.
    pub fn protection(&self) -> Result<crate::auth::Protection, ConfigError> {
        let viewers = self.credentials.credentials(Section::Auth, Purpose::Pages)?;
        let admins = match &self.admin {
            Some(a) => a.credentials.credentials(Section::AuthAdmin, Purpose::Pages)?,
            None => None,
        };
        Ok(crate::auth::Protection::new(viewers, self.open_metrics).with_admins(admins))
    }
}

/// The settings of a cluster added on the pages: how it is reached (for one read through its
/// agent, no address: its timeout and ignored namespaces alone apply) and how often. Its token
/// is sealed apart and never in here.
#[derive(Clone, Debug, PartialEq, serde::Serialize, Deserialize)]
#[serde(into = "StoredSettings", from = "StoredSettings")]
pub struct PageSettings {
    /// The address, port, CA (PEM or base64 of PEM, as pasted), certificate choice, timeout and
    /// ignored namespaces; no token.
    pub connect: ConnectOptions,
    pub interval: Seconds,
    /// Followed by list-then-watch (a cluster read directly only).
    pub watch: bool,
}

/// [`PageSettings`] as kept in the state directory (JSON): these keys only, so that nothing else
/// of the connection settings (a token) can be written with them.
#[derive(serde::Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredSettings {
    address: Option<String>,
    port: u16,
    ca: Option<String>,
    insecure_skip_tls_verify: bool,
    /// Seconds.
    timeout: f64,
    /// Seconds.
    interval: f64,
    ignored_namespaces: Vec<String>,
    /// Absent in what versions before watch mode stored, and left out when false: settings
    /// without watch are stored as those versions stored them, and read back by them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    watch: bool,
    /// Namespaced access; left out when empty, as `watch` is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    namespaces: Vec<String>,
}

impl From<PageSettings> for StoredSettings {
    fn from(s: PageSettings) -> StoredSettings {
        let c = s.connect;
        StoredSettings {
            address: c.address,
            port: c.port,
            ca: c.ca,
            insecure_skip_tls_verify: c.insecure_skip_tls_verify,
            timeout: c.timeout.0,
            interval: s.interval.0,
            ignored_namespaces: c.ignored_namespaces,
            watch: s.watch,
            namespaces: c.namespaces,
        }
    }
}

impl From<StoredSettings> for PageSettings {
    fn from(s: StoredSettings) -> PageSettings {
        PageSettings {
            connect: ConnectOptions {
                address: s.address,
                port: s.port,
                ca: s.ca,
                insecure_skip_tls_verify: s.insecure_skip_tls_verify,
                timeout: Seconds(s.timeout),
                ignored_namespaces: s.ignored_namespaces,
                namespaces: s.namespaces,
                ..ConnectOptions::default()
            },
            interval: Seconds(s.interval),
            watch: s.watch,
        }
    }
}

impl PageSettings {
    /// The cluster to watch, with its token (the service account's, or the agent's).
    pub fn to_cluster(&self, name: &str, token: String) -> ClusterConfig {
        let agent = self.connect.address.is_none();
        ClusterConfig {
            name: name.to_string(),
            from_pages: true,
            agent_token_value: agent.then(|| token.clone()),
            agent_token_file: None,
            connect: ConnectOptions { token: (!agent).then_some(token), ..self.connect.clone() },
            interval: self.interval,
            record_dir: None,
            record_retention: defaults::record_retention(),
            watch: self.watch && !agent,
            namespace_labels: Vec::new(),
        }
    }
}

impl ClusterConfig {
    /// Whether the cluster is read by a relay agent.
    pub fn is_agent(&self) -> bool {
        self.agent_token_file.is_some() || self.agent_token_value.is_some()
    }

    /// The agent's token (None for a cluster read directly), known to the process as a secret:
    /// kept out of the log.
    pub fn agent_token(&self) -> Option<Result<String, ConfigError>> {
        if let Some(t) = &self.agent_token_value {
            crate::redact::know_secret(t);
            return Some(Ok(t.clone()));
        }
        let path = self.agent_token_file.as_ref()?;
        let section = || Section::Cluster(self.name.clone());
        Some(
            std::fs::read_to_string(path)
                .map_err(|source| {
                    let problem = Problem::Unreadable { field: "agent_token_file", path: path.clone(), source };
                    ConfigError::section(section(), problem)
                })
                .and_then(|t| {
                    let t = t.trim().to_string();
                    crate::redact::know_secret(&t);
                    if t.len() < 16 { Err(ConfigError::section(section(), Problem::ShortAgentToken)) } else { Ok(t) }
                }),
        )
    }

    /// The connection settings, for a reader of its own.
    pub fn connect_options(&self) -> ConnectOptions {
        self.connect.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Config, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dumbmonit.toml");
        std::fs::write(&path, text).unwrap();
        Config::load(&path).map_err(|e| e.to_string().replace(&path.display().to_string(), "FILE"))
    }

    const GOOD: &str = r#"
state_dir = "/var/lib/dumbmonit"

[[cluster]]
name = "k3s-lab"
address = "https://k3s.lan:6443"
token_file = "/etc/dumbmonit/k3s-lab.token"
ca_file = "/etc/dumbmonit/k3s-lab-ca.crt"
ignored_namespaces = ["ci"]
interval = "30s"

[[notifier]]
type = "alertmanager"
url = "http://127.0.0.1:9093"
"#;

    #[test]
    fn runbooks_are_the_teams_copy_or_the_pages_in_each_notifiers_language() {
        let pages =
            load(&format!("external_url = \"https://dumbmonit.example.com/\"\n{GOOD}language = \"fr\"\n")).unwrap();
        assert_eq!(pages.notifiers[0].runbooks, "https://dumbmonit.example.com/runbooks/fr");
        assert_eq!(
            runbook_url(&pages.notifiers[0].runbooks, "KubernetesPodCrashLooping"),
            "https://dumbmonit.example.com/runbooks/fr#kubernetespodcrashlooping"
        );
        let own = load(&format!("runbook_base_url = \"https://wiki.example.com/ops/alerts#\"\n{GOOD}")).unwrap();
        assert_eq!(own.notifiers[0].runbooks, "https://wiki.example.com/ops/alerts");
        // Without external_url: this machine's name and the port of `listen`.
        let default = load(GOOD).unwrap();
        assert!(default.notifiers[0].runbooks.starts_with("http://"), "{}", default.notifiers[0].runbooks);
        assert!(default.notifiers[0].runbooks.ends_with(":8080/runbooks/en"), "{}", default.notifiers[0].runbooks);
        for field in ["external_url", "runbook_base_url"] {
            let e = load(&format!("{field} = \"ftp://x\"\n{GOOD}")).unwrap_err();
            assert_eq!(e, format!("FILE: field `{field}` must be an http:// or https:// URL"));
        }
    }

    #[test]
    fn the_notifiers_language_is_the_files_unless_they_say_their_own() {
        use crate::lang::Lang;
        assert_eq!(load(GOOD).unwrap().notifiers[0].language, Lang::En, "English by default");
        let french = load(&format!("language = \"fr\"\n{GOOD}")).unwrap();
        assert_eq!((french.language, french.notifiers[0].language), (Lang::Fr, Lang::Fr));
        let own = load(&format!("language = \"fr\"\n{GOOD}language = \"en\"\n")).unwrap();
        assert_eq!(own.notifiers[0].language, Lang::En, "a notifier's own wins");
        let wrong = load(&format!("language = \"de\"\n{GOOD}")).unwrap_err();
        assert!(wrong.contains("line 1") && wrong.contains("unknown variant `de`, expected `en` or `fr`"), "{wrong}");
    }

    #[test]
    fn a_good_file_with_defaults() {
        let c = load(GOOD).unwrap();
        assert_eq!(c.listen.to_string(), "127.0.0.1:8080", "loopback by default");
        assert_eq!(c.auth, AuthConfig::default());
        assert_eq!(c.clusters[0].interval, Seconds(30.0));
        assert_eq!(c.clusters[0].connect.timeout, Seconds(10.0));
        assert_eq!(c.clusters[0].connect.port, 6443);
        assert_eq!(c.notifiers[0].name, "alertmanager");
    }

    #[test]
    fn watch_is_for_clusters_read_directly_and_not_with_a_recording() {
        let c = load(&GOOD.replace("interval = \"30s\"", "interval = \"30s\"\nwatch = true")).unwrap();
        assert!(c.clusters[0].watch);
        assert!(!load(GOOD).unwrap().clusters[0].watch, "list mode by default");
        assert_eq!(
            load(&GOOD.replace("interval = \"30s\"", "watch = true\nrecord_dir = \"/tmp/r\"")).unwrap_err(),
            "FILE: cluster \"k3s-lab\": field `record_dir` does not go with `watch = true`: a recording keeps each \
             List as the API server returned it, and watch mode keeps compact records only"
        );
        let agent = "[[cluster]]\nname = \"edge\"\nagent_token_file = \"/etc/a\"\nwatch = true\n";
        assert!(
            load(&format!("{GOOD}\n{agent}"))
                .unwrap_err()
                .contains("field `watch` does not go with `agent_token_file`")
        );
    }

    #[test]
    fn namespace_labels_are_label_names_and_never_dumbmonits_own() {
        let with = |keys: &str| load(&GOOD.replace("interval = \"30s\"", &format!("interval = \"30s\"\n{keys}")));
        let c = with("namespace_labels = [\"team\", \"owner\"]").unwrap();
        assert_eq!(c.clusters[0].namespace_labels, ["team", "owner"]);
        assert!(load(GOOD).unwrap().clusters[0].namespace_labels.is_empty(), "none by default");
        assert_eq!(
            with("namespace_labels = [\"severity\"]").unwrap_err(),
            "FILE: cluster \"k3s-lab\": field `namespace_labels`: \"severity\" is DumbMonit's own: alertname, \
             severity, cluster and namespace are set by DumbMonit"
        );
        assert!(with("namespace_labels = [\"namespace\"]").unwrap_err().contains("is DumbMonit's own"));
        assert_eq!(
            with("namespace_labels = [\"example.com/team\"]").unwrap_err(),
            "FILE: cluster \"k3s-lab\": field `namespace_labels`: \"example.com/team\" is not a label name \
             (letters, digits and '_', not starting with a digit or \"__\")"
        );
    }

    #[test]
    fn namespaced_access_is_read_checked_and_refused_beside_watch_and_recording() {
        let with = |keys: &str| load(&GOOD.replace("interval = \"30s\"", &format!("interval = \"30s\"\n{keys}")));
        let c = with("namespaces = [\"team-a\", \"team-b\"]").unwrap();
        assert_eq!(c.clusters[0].connect.namespaces, ["team-a", "team-b"]);
        assert!(load(GOOD).unwrap().clusters[0].connect.namespaces.is_empty(), "the whole cluster by default");
        assert_eq!(
            with("namespaces = [\"Team A\"]").unwrap_err(),
            "FILE: cluster \"k3s-lab\": field `namespaces`: \"Team A\" is not a namespace name (lower-case letters, \
             digits and '-', at most 63, starting and ending with a letter or digit)"
        );
        assert_eq!(
            with("namespaces = [\"team-a\"]\nwatch = true").unwrap_err(),
            "FILE: cluster \"k3s-lab\": field `namespaces` does not go with `watch = true`: watch mode follows the \
             cluster-wide collections; namespaced access is read every interval"
        );
        assert!(
            with("namespaces = [\"team-a\"]\nrecord_dir = \"/tmp/r\"")
                .unwrap_err()
                .contains("does not go with `record_dir`")
        );
        // Stored on the pages: left out when empty, as before; kept when set.
        let mut page = PageSettings { interval: Seconds(60.0), watch: false, connect: ConnectOptions::default() };
        let stored = serde_json::to_string(&StoredSettings::from(page.clone())).unwrap();
        assert!(!stored.contains("\"namespaces\""), "{stored}");
        page.connect.namespaces = vec!["team-a".into()];
        let stored = serde_json::to_string(&StoredSettings::from(page.clone())).unwrap();
        let back = PageSettings::from(serde_json::from_str::<StoredSettings>(&stored).unwrap());
        assert_eq!(back.connect.namespaces, ["team-a"]);
    }

    #[test]
    fn the_files_silences_are_held_to_the_silences_bounds() {
        let silence = |matchers: &[String]| {
            let list: Vec<String> = matchers.iter().map(|m| format!("{m:?}")).collect();
            load(&format!("{GOOD}\n[[silence]]\nmatchers = [{}]\n", list.join(", ")))
        };
        let many: Vec<String> = (0..21).map(|i| format!("pod=\"api-{i}\"")).collect();
        assert_eq!(
            silence(&many).unwrap_err(),
            "FILE: silence 1: field `matchers`: 21 matchers; a silence has at most 20"
        );
        let heavy: Vec<String> = (0..8).map(|i| format!("pod=~\"api-\\w+-\\w{{5}}-{i}\"")).collect();
        assert!(silence(&heavy).unwrap_err().contains("take at most 2 MiB compiled together"));
        let costly = [r#"pod=~"\w{150}""#.to_string()];
        assert!(silence(&costly).unwrap_err().contains("the regular expression is too costly"));
        assert!(silence(&many[..20]).is_ok());
        let file: String = (0..=1000).map(|i| format!("\n[[silence]]\nmatchers = ['pod=\"api-{i}\"']\n")).collect();
        assert_eq!(
            load(&format!("{GOOD}{file}")).unwrap_err(),
            "FILE: silence 1001: 1001 silences in the file; at most 1000 are in force at once"
        );
        // Many namespaces read apart are refused too.
        let names: Vec<String> = (0..=MAX_NAMESPACES).map(|i| format!("\"team-{i}\"")).collect();
        let many =
            GOOD.replace("interval = \"30s\"", &format!("interval = \"30s\"\nnamespaces = [{}]", names.join(", ")));
        assert_eq!(
            load(&many).unwrap_err(),
            "FILE: cluster \"k3s-lab\": field `namespaces`: 101 namespaces; a cluster is read in at most 100 (read the whole cluster instead)"
        );
    }

    #[test]
    fn admins_are_configured_like_viewers_and_checked_alike() {
        let with = |admin: &str| load(&format!("{GOOD}\n[auth.admin]\n{admin}\n"));
        let c = with("bearer_token = \"adm-0123456789\"").unwrap();
        assert!(c.auth.protection().unwrap().has_admins());
        assert!(!load(GOOD).unwrap().auth.protection().unwrap().has_admins());
        assert_eq!(
            with("username = \"root\"").unwrap_err(),
            "FILE: auth.admin: basic auth needs `username` and one of `password_hash` or `password_file`"
        );
        assert_eq!(with("").unwrap_err(), "FILE: auth.admin: give `bearer_token`, `bearer_token_file` or `username`");
        assert!(with("passwd = \"x\"").unwrap_err().contains("unknown field `passwd`"));
        assert!(
            with("password_hash = \"x\"\nusername = \"r\"").unwrap_err().contains("auth.admin: field `password_hash`")
        );
        let top = load(&format!("secret_key_file = \"/etc/dumbmonit/secret.key\"\n{GOOD}")).unwrap();
        assert_eq!(top.secret_key_path(), PathBuf::from("/etc/dumbmonit/secret.key"));
        assert_eq!(load(GOOD).unwrap().secret_key_path(), PathBuf::from("/var/lib/dumbmonit/secret.key"));
    }

    #[test]
    fn unknown_keys_are_refused_naming_every_key_of_their_table_in_order() {
        assert_eq!(
            load(&GOOD.replace("interval = \"30s\"", "intervall = 30")).unwrap_err(),
            "FILE, line 10: unknown field `intervall`, expected one of `name`, `address`, `agent_token_file`, \
             `port`, `token`, `token_file`, `ca`, `ca_file`, `insecure_skip_tls_verify`, `kubeconfig`, `context`, \
             `in_cluster`, `timeout`, `interval`, `ignored_namespaces`, `namespaces`, `record_dir`, `record_retention`, \
             `watch`, `namespace_labels`"
        );
        assert_eq!(
            load(&GOOD.replace("interval = \"30s\"", "port = \"x\"")).unwrap_err(),
            "FILE, line 10: invalid type: string \"x\", expected u16"
        );
        assert_eq!(
            load(&format!("{GOOD}\n[auth]\npassword = \"x\"\n")).unwrap_err(),
            "FILE, line 17: unknown field `password`, expected one of `bearer_token`, `bearer_token_file`, \
             `username`, `password_hash`, `password_file`, `open_metrics`, `admin`"
        );
        assert_eq!(
            load(&format!("{GOOD}\n[auth.admin]\nopen_metrics = true\n")).unwrap_err(),
            "FILE, line 17: unknown field `open_metrics`, expected one of `bearer_token`, `bearer_token_file`, \
             `username`, `password_hash`, `password_file`"
        );
        assert_eq!(
            load(&format!("{GOOD}password_hash = \"x\"\n")).unwrap_err(),
            "FILE, line 15: unknown field `password_hash`, expected one of `type`, `name`, `url`, `url_file`, `bearer_token`, \
             `bearer_token_file`, `username`, `password`, `password_file`, `timeout`, `heartbeat`, `heartbeat_url`, `language`, \
             `routing_key_file`, `min_severity`, `matchers`, `group_by`, `group_wait`, `group_interval`, \
             `repeat_interval`, `host`, `port`, `starttls`, `from`, `to`, `ca_file`"
        );
    }

    #[test]
    fn page_settings_are_kept_with_their_keys_alone() {
        let json = r#"{"address":"https://k3s.lan:6443","port":6443,"ca":null,"insecure_skip_tls_verify":false,"timeout":2.5,"interval":60.0,"ignored_namespaces":["ci"]}"#;
        let s: PageSettings = serde_json::from_str(json).unwrap();
        assert_eq!(s.connect.timeout, Seconds(2.5));
        assert_eq!(serde_json::to_string(&s).unwrap(), json);
        let c = s.to_cluster("lab", "tok-0123456789".into());
        assert_eq!(c.connect.token.as_deref(), Some("tok-0123456789"));
        let mut with_token = s.clone();
        with_token.connect.token = Some("tok-0123456789".into());
        assert_eq!(serde_json::to_string(&with_token).unwrap(), json, "a token is never kept with the settings");
        assert!(serde_json::from_str::<PageSettings>(&json.replace("\"port\"", "\"token\":\"t\",\"port\"")).is_err());
        // Watch mode: kept, and given to the cluster read directly.
        assert!(!s.watch && !c.watch, "what versions before watch mode stored reads as no watch");
        let watched = PageSettings { watch: true, ..s.clone() };
        let stored = serde_json::to_string(&watched).unwrap();
        assert_eq!(stored, json.replace("]}", "],\"watch\":true}"));
        assert_eq!(serde_json::from_str::<PageSettings>(&stored).unwrap(), watched);
        assert!(watched.to_cluster("lab", "tok-0123456789".into()).watch);
        let agent = PageSettings { connect: ConnectOptions { address: None, ..watched.connect.clone() }, ..watched };
        assert!(!agent.to_cluster("lab", "agent-token-0123456789".into()).watch, "never for an agent's cluster");
    }

    #[test]
    fn shards_split_the_clusters_once_each() {
        let names: Vec<String> = (0..200).map(|i| format!("cluster-{i}")).collect();
        let shards: Vec<Shard> = (0..3).map(|index| Shard { index, count: 3 }).collect();
        for n in &names {
            assert_eq!(shards.iter().filter(|s| s.owns(n)).count(), 1, "{n}");
        }
        let sizes: Vec<usize> = shards.iter().map(|s| names.iter().filter(|n| s.owns(n)).count()).collect();
        assert!(sizes.iter().all(|&n| n > 40), "roughly even: {sizes:?}");
    }

    #[test]
    fn each_kind_of_notifier_is_refused_what_does_not_go_with_it() {
        let with = |n: &str| load(&format!("{GOOD}\n[[notifier]]\n{n}\n")).map(|c| c.notifiers.len());
        assert_eq!(with("type = \"slack\"\nurl_file = \"/run/slack.url\""), Ok(2));
        assert_eq!(
            with("type = \"pagerduty\"\nrouting_key_file = \"/run/pd.key\""),
            Ok(2),
            "PagerDuty's URL by default"
        );
        let email = "type = \"email\"\nhost = \"smtp.lan\"\nfrom = \"dm@lan\"\nto = [\"ops@lan\"]";
        assert_eq!(with(email), Ok(2));
        let refused: Vec<(String, &str)> = vec![
            ("type = \"slack\"".into(), "notifier \"slack\": give `url` or `url_file`"),
            (
                "type = \"slack\"\nurl = \"https://hooks.slack.com/x\"\nurl_file = \"/u\"".into(),
                "notifier \"slack\": give `url` or `url_file`, not both",
            ),
            (
                "type = \"slack\"\nurl = \"hooks.slack.com/x\"".into(),
                "notifier \"slack\": field `url` must be an http:// or https:// URL",
            ),
            ("type = \"pagerduty\"".into(), "notifier \"pagerduty\": field `routing_key_file` is missing"),
            (
                "type = \"webhook\"\nurl = \"http://h/\"\nrouting_key_file = \"/k\"".into(),
                "notifier \"webhook\": field `routing_key_file` does not go with type webhook",
            ),
            (
                "type = \"slack\"\nurl_file = \"/u\"\nheartbeat = \"1m\"".into(),
                "notifier \"slack\": field `heartbeat` does not go with type slack",
            ),
            (
                "type = \"alertmanager\"\nname = \"am2\"\nurl = \"http://am:9093\"\nmatchers = ['team=\"a\"']".into(),
                "notifier \"am2\": field `matchers` does not go with type alertmanager",
            ),
            (
                "type = \"alertmanager\"\nname = \"am2\"\nurl = \"http://am:9093\"\nmin_severity = \"warning\"".into(),
                "notifier \"am2\": field `min_severity` does not go with type alertmanager",
            ),
            (
                "type = \"alertmanager\"\nname = \"am2\"\nurl = \"http://am:9093\"\ngroup_wait = \"1m\"".into(),
                "notifier \"am2\": field `group_wait` does not go with type alertmanager",
            ),
            (format!("{email}\nport = 70000"), "notifier \"email\": field `port` must be from 1 to 65535"),
            (
                "type = \"email\"\nhost = \"smtp.lan\"\nfrom = \"dm@lan\"".into(),
                "notifier \"email\": field `to`: give at least one address",
            ),
            (
                "type = \"email\"\nfrom = \"dm@lan\"\nto = [\"a@lan\"]".into(),
                "notifier \"email\": field `host` is missing",
            ),
            (format!("{email}\nurl = \"http://h/\""), "notifier \"email\": field `url` does not go with type email"),
            (
                "type = \"webhook\"\nurl = \"http://h/\"\nto = [\"a@lan\"]".into(),
                "notifier \"webhook\": field `to` does not go with type webhook",
            ),
        ];
        for (section, said) in refused {
            assert_eq!(with(&section), Err(format!("FILE: {said}")), "{section}");
        }
    }

    #[test]
    fn errors_name_the_file_the_object_and_the_field() {
        assert_eq!(
            load(&GOOD.replace("interval = \"30s\"", "intervall = 30")).unwrap_err().split(": ").next().unwrap(),
            "FILE, line 10"
        );
        assert!(
            load(&GOOD.replace("interval = \"30s\"", "intervall = 30"))
                .unwrap_err()
                .contains("unknown field `intervall`")
        );
        assert_eq!(
            load(&GOOD.replace("interval = \"30s\"", "interval = 0")).unwrap_err(),
            "FILE: cluster \"k3s-lab\": field `interval` must be a duration above 0"
        );
        assert!(load(&GOOD.replace("\"30s\"", "\"30 parsecs\"")).unwrap_err().contains("unknown unit"));
        assert_eq!(
            load(&GOOD.replace("http://127.0.0.1:9093", "127.0.0.1:9093")).unwrap_err(),
            "FILE: notifier \"alertmanager\": field `url` must be an http:// or https:// URL"
        );
        assert!(
            load(&format!("{GOOD}\n[[cluster]]\nname = \"k3s-lab\"\nin_cluster = true\n"))
                .unwrap_err()
                .contains("used twice")
        );
        assert!(
            load(&GOOD.replace("address = ", "in_cluster = true\naddress = ")).unwrap_err().contains("exactly one of")
        );
        assert!(load("state_dir = \"/x\"\n").unwrap().clusters.is_empty(), "clusters may all come from the pages");
        assert_eq!(
            load(&GOOD.replace("ignored_namespaces", "agent_token_file = \"/a\"\nignored_namespaces")).unwrap_err(),
            "FILE: cluster \"k3s-lab\": field `address` does not go with `agent_token_file`: the agent reads the \
             cluster, with its own connection settings"
        );
        assert!(load(&format!("shard = \"3/3\"\n{GOOD}")).unwrap_err().contains("INDEX must be below COUNT"));
        assert!(load(&format!("shard = \"a/3\"\n{GOOD}")).unwrap_err().contains("is not INDEX/COUNT"));
        assert_eq!(load(&format!("shard = \"1/3\"\n{GOOD}")).unwrap().shard, Some(Shard { index: 1, count: 3 }));
        let agent = load(
            "state_dir = \"/x\"\n[[cluster]]\nname = \"edge\"\nagent_token_file = \"/a\"\ninterval = \"60s\"\n\
             [tls]\ncert_file = \"/c\"\nkey_file = \"/k\"\n",
        )
        .unwrap();
        assert_eq!(agent.clusters[0].agent_token_file.as_deref(), Some(Path::new("/a")));
        assert_eq!(agent.tls.unwrap().key_file, Path::new("/k"));
        assert!(load(&format!("{GOOD}type2 = 1\n")).unwrap_err().contains("unknown field `type2`"));
        let with_auth = |a: &str| load(&GOOD.replace("\n[[cluster]]", &format!("\n[auth]\n{a}\n\n[[cluster]]")));
        assert!(with_auth("bearer_token = \"t\"").is_ok());
        assert!(with_auth("bearer_token = \"t\"\nusername = \"u\"").unwrap_err().contains("not both"));
        assert!(with_auth("username = \"u\"").unwrap_err().contains("needs `username` and one of"));
        assert!(with_auth("username = \"u\"\npassword_hash = \"plain\"").unwrap_err().contains("bcrypt hash"));
        assert!(with_auth("passwd = \"x\"").unwrap_err().contains("unknown field `passwd`"));
    }
}
