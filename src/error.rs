//! Every way DumbMonit can fail, each with the sentence a user will search for.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::collection::Collection;

/// Exit status when the cluster could not be read, or the command line or configuration is
/// wrong (the monitoring-plugin convention's UNKNOWN). Here, below every command, so that each
/// can use it without importing the command line.
pub const EXIT_UNKNOWN: u8 = 3;

/// A failure before any request is sent: a flag, a file, a kubeconfig or the agent's settings
/// are wrong. Each source has its own type, which names what is wrong (the flag, the section and
/// its field, the file) and carries the detail; this says which source it came from.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(transparent)]
    File(#[from] FileError),
    #[error(transparent)]
    Flag(#[from] FlagError),
    #[error(transparent)]
    Connection(#[from] ConnectionError),
    #[error(transparent)]
    Agent(#[from] AgentConfigError),
}

impl From<AddressError> for ConfigError {
    fn from(e: AddressError) -> ConfigError {
        ConnectionError::Address(e).into()
    }
}

/// The configuration file cannot be used: read, parsed, or one of its sections.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The configuration file cannot be read.
    #[error("{}: {source}", .path.display())]
    ConfigFile { path: PathBuf, source: io::Error },
    /// The configuration file is not TOML of the expected shape (`line` when the parser says).
    #[error("{}{}: {message}", .path.display(), at_line(.line))]
    Syntax { path: PathBuf, line: Option<usize>, message: String },
    /// Something in a section of the configuration file is wrong; `file` when found at load.
    #[error("{}{section}: {problem}", in_file(.file))]
    Section { file: Option<PathBuf>, section: Section, problem: Problem },
}

/// A flag of the command line is wrong, or the file it names cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum FlagError {
    /// The file a flag names cannot be read.
    #[error("{flag} {}: {source}", .path.display())]
    FlagFile { flag: &'static str, path: PathBuf, source: io::Error },
    /// A flag's duration cannot be read.
    #[error("{flag}: {source}")]
    Duration { flag: &'static str, source: DurationError },
    /// A flag's size cannot be read.
    #[error("{flag}: {source}")]
    Size { flag: &'static str, source: SizeError },
    /// `--timeout` out of its range.
    #[error("--timeout {seconds}: give seconds between 0 and 3600")]
    Timeout { seconds: f64 },
    /// A namespace or object name that Kubernetes would refuse.
    #[error(
        "{flag} {value:?}: not a valid name (lower-case letters, digits and '-', at most 63, starting and ending with a letter or digit)"
    )]
    NotAName { flag: &'static str, value: String },
    /// `--cluster` of `manifests agent`.
    #[error("--cluster: give the cluster's name on the server (no '/' or control characters)")]
    ClusterName,
    /// `--image` of `manifests agent`.
    #[error("--image {image:?}: not an image reference")]
    Image { image: String },
    /// `top`'s WHAT, neither a word it knows nor an address given alone.
    #[error("invalid value '{value}' for '[WHAT]': give nodes or pods, or the API server's address alone")]
    TopWhat { value: String },
}

/// How to reach an API server is wrong: address, token, CA, kubeconfig, in-cluster account.
#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
    /// `--in-cluster` with other connection flags.
    #[error("--in-cluster uses the mounted service account: give no ADDRESS, token, CA or kubeconfig with it")]
    InClusterWithOthers,
    /// The mounted service account cannot be used.
    #[error("--in-cluster: {0}")]
    InCluster(::kube::config::InClusterError),
    /// An ADDRESS and a kubeconfig.
    #[error("Give either an ADDRESS (with --token-file and --ca-file) or --kubeconfig/--context, not both")]
    AddressAndKubeconfig,
    /// Token or CA flags with a kubeconfig.
    #[error(
        "--token, --token-file, --ca, --ca-file and --insecure-skip-tls-verify go with an ADDRESS; a kubeconfig \
         carries its own"
    )]
    DirectWithKubeconfig,
    /// Nothing says which cluster.
    #[error(
        "No cluster given: pass the API server's ADDRESS (with --token-file and --ca-file), --kubeconfig FILE, or \
         --in-cluster"
    )]
    NoCluster,
    /// `--ca` and `--ca-file`.
    #[error("Give the CA once: --ca or --ca-file, not both")]
    CaTwice,
    /// `--insecure-skip-tls-verify` with a CA.
    #[error("--insecure-skip-tls-verify skips every certificate check: it makes no sense with a CA")]
    InsecureWithCa,
    /// `--token` and `--token-file`.
    #[error("Give the token once: --token or --token-file, not both")]
    TokenTwice,
    /// No token anywhere (`env` is the environment variable that may carry it).
    #[error("No token: give --token-file FILE, --token TOKEN or the environment variable {env}")]
    NoToken { env: &'static str },
    /// The token is not one.
    #[error("The token holds spaces or control characters: is it the right file?")]
    TokenCharacters,
    /// The kubeconfig (`--kubeconfig PATH`, else the default one) cannot be used.
    #[error("{}: {source}", kubeconfig(.path))]
    Kubeconfig { path: Option<PathBuf>, source: ::kube::config::KubeconfigError },
    /// The address of the API server.
    #[error(transparent)]
    Address(#[from] AddressError),
    /// A CA (`given`: where it came from, `--ca` or `--ca-file PATH`).
    #[error("{given}: {problem}")]
    Ca { given: String, problem: CaProblem },
    /// The client of the API server cannot be set up.
    #[error("Cannot set up the connection to {address}: {source}")]
    Client { address: String, source: ::kube::Error },
}

/// The agent's settings are wrong: its token, its server's URL and CA.
#[derive(Debug, thiserror::Error)]
pub enum AgentConfigError {
    /// The agent token of `--agent-token-file` is too short or holds spaces.
    #[error("--agent-token-file {}: the token must be at least 16 characters, without spaces", .path.display())]
    WeakAgentToken { path: PathBuf },
    /// No random token could be made.
    #[error("cannot make a random token: the system's random source failed")]
    NoRandom,
    /// A new token could not be written.
    #[error("cannot write the new token to {}: {source}", .path.display())]
    WriteToken { path: PathBuf, source: io::Error },

    /// `--server` is not a URL.
    #[error("--server {url}: not a URL ({source})")]
    ServerNotUrl { url: String, source: http::uri::InvalidUri },
    /// `--server` names no host.
    #[error("--server {url}: no host")]
    ServerNoHost { url: String },
    /// `--server` is plain http:// to another machine.
    #[error(
        "--server {url}: plain http:// is refused except to a loopback address; the agent's token and the \
         cluster's state must not cross a network in clear"
    )]
    ServerPlainHttp { url: String },
    /// `--server` is neither https:// nor http://.
    #[error("--server {url}: give an https:// URL")]
    ServerNotHttps { url: String },
    /// `--server` carries credentials.
    #[error("--server: put no credentials in the URL; the agent token goes in --agent-token-file")]
    ServerCredentials,
    /// A certificate of `--server-ca-file` is refused.
    #[error("--server-ca-file {}: {source}", .path.display())]
    ServerCa { path: PathBuf, source: rustls::Error },
    /// The TLS client cannot be set up.
    #[error("{0}")]
    ClientTls(rustls::Error),
}

fn at_line(line: &Option<usize>) -> String {
    line.map(|l| format!(", line {l}")).unwrap_or_default()
}

fn in_file(file: &Option<PathBuf>) -> String {
    file.as_ref().map(|f| format!("{}: ", f.display())).unwrap_or_default()
}

fn kubeconfig(path: &Option<PathBuf>) -> String {
    match path {
        Some(p) => format!("--kubeconfig {}", p.display()),
        None => "kubeconfig".into(),
    }
}

/// A section of the configuration file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Section {
    /// `[auth]`.
    Auth,
    /// `[auth.admin]`.
    AuthAdmin,
    /// A `[[cluster]]`, by its name.
    Cluster(String),
    /// A `[[notifier]]`, by its name (given, or made from its type).
    Notifier(String),
    /// The N-th `[[silence]]` (from 1).
    Silence(usize),
    Maintenance(usize),
    /// The N-th `[[rule]]` (from 1), with the rule it names.
    Rule(usize, Box<str>),
    /// `[state]`.
    State,
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Section::Auth => f.write_str("auth"),
            Section::AuthAdmin => f.write_str("auth.admin"),
            Section::Cluster(name) => write!(f, "cluster {name:?}"),
            Section::Notifier(name) => write!(f, "notifier {name:?}"),
            Section::Silence(n) => write!(f, "silence {n}"),
            Section::Maintenance(n) => write!(f, "maintenance {n}"),
            Section::Rule(n, name) => write!(f, "rule {n} ({name:?})"),
            Section::State => f.write_str("state"),
        }
    }
}

/// What is wrong in a section of the configuration file.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    /// The file a field names cannot be read.
    #[error("field `{field}` {}: {source}", .path.display())]
    Unreadable { field: &'static str, path: PathBuf, source: io::Error },
    /// Of two fields that say the same, both are given.
    #[error("give `{one}` or `{other}`, not both")]
    Both { one: &'static str, other: &'static str },
    /// `[auth]` or `[auth.admin]` with a bearer token and basic auth.
    #[error("give a bearer token or basic auth (`username` with `password_hash` or `password_file`), not both")]
    BearerAndBasic,
    /// A notifier with a bearer token and basic auth.
    #[error("give a bearer token or basic auth (`username`, `password`), not both")]
    BearerAndPassword,
    /// Basic auth without its user or with not exactly one password.
    #[error("basic auth needs `username` and one of `password_hash` or `password_file`")]
    BasicIncomplete,
    /// A notifier's password without its user.
    #[error("field `username` is missing for basic auth")]
    NoUsername,
    /// `password_hash` is not a bcrypt hash.
    #[error("field `password_hash` must be a bcrypt hash ($2y$…, as htpasswd -nbBC 10 prints)")]
    NotBcrypt,
    /// `[auth.admin]` without credentials.
    #[error("give `bearer_token`, `bearer_token_file` or `username`")]
    NoCredentials,
    /// A name that cannot be one.
    #[error("field `name` must be non-empty, without '/' or control characters")]
    BadName,
    /// A name that another of its kind has.
    #[error("field `name` is used twice")]
    NameTwice,
    /// A connection field on a cluster read by an agent.
    #[error(
        "field `{field}` does not go with `agent_token_file`: the agent reads the cluster, with its own connection settings"
    )]
    NotWithAgent { field: &'static str },
    /// A recording asked of a cluster followed by watch.
    #[error(
        "field `record_dir` does not go with `watch = true`: a recording keeps each List as the API server returned it, and watch mode keeps compact records only"
    )]
    RecordWithWatch,
    /// A `[[silence]]` without a matcher (it would mute nothing, or be read as muting all).
    #[error("field `matchers`: give at least one matcher, such as 'alertname=\"KubernetesPodBlocked\"'")]
    NoMatchers,
    /// A matcher of a `[[silence]]` that cannot be one.
    #[error("field `matchers`: {0}")]
    Matcher(#[from] crate::silence::MatcherError),
    /// More `[[silence]]` entries than silences may be in force.
    #[error("{count} silences in the file; at most {most} are in force at once")]
    TooManySilences { count: usize, most: usize },
    /// The file's silences together cost too much.
    #[error(
        "field `matchers`: with this one, the regular expressions of the file's silences would take more than {most} compiled together"
    )]
    SilencesTooCostly { most: String },
    /// The matchers of a `[[silence]]` together cost too much.
    #[error("field `matchers`: {0}")]
    Matchers(crate::silence::MatchersError),
    /// A `[[maintenance]]` that cannot be one (boxed: it is the largest of the problems).
    #[error("{0}")]
    Window(Box<crate::silence::maintenance::WindowError>),
    /// `namespaces` beside a setting it does not go with.
    #[error("field `namespaces` does not go with {field}: {why}")]
    NamespacesWith { field: &'static str, why: &'static str },
    /// More namespaces than a cluster is read in.
    #[error(
        "field `namespaces`: {count} namespaces; a cluster is read in at most {most} (read the whole cluster instead)"
    )]
    TooManyNamespaces { count: usize, most: usize },
    /// A namespace that cannot be one.
    #[error(
        "field `namespaces`: {value:?} is not a namespace name (lower-case letters, digits and '-', at most 63, starting and ending with a letter or digit)"
    )]
    NotANamespace { value: String },
    /// Not exactly one way to reach the cluster.
    #[error("give exactly one of `address`, `kubeconfig`/`context`, `in_cluster = true` or `agent_token_file`")]
    ConnectionModes,
    /// A duration that must be above 0.
    #[error("field `{field}` must be a duration above 0")]
    NotPositive { field: &'static str },
    /// An email notifier's port that is none.
    #[error("field `port` must be from 1 to 65535")]
    PortRange,
    /// An email notifier without recipients.
    #[error("field `to`: give at least one address")]
    NoRecipients,
    /// A notifier without anywhere to send.
    #[error("give `url` or `url_file`")]
    NoUrl,
    /// A field its kind needs.
    #[error("field `{field}` is missing")]
    Missing { field: &'static str },
    /// A field its kind does not take.
    #[error("field `{field}` does not go with type {kind}")]
    NotWithKind { field: &'static str, kind: &'static str },
    /// A notifier's `url_file` that holds no http:// or https:// URL.
    #[error("field `url_file`: the file must hold an http:// or https:// URL")]
    NotHttpUrlFile,
    /// A file that holds nothing.
    #[error("field `{field}`: the file is empty")]
    EmptyFile { field: &'static str },
    /// A notifier's field that cannot be used (`matchers`, `min_severity`, an email address,
    /// `ca_file`, `host`), and why.
    #[error("field `{field}`: {why}")]
    Unusable { field: &'static str, why: String },
    /// A notifier's URL that is not http:// or https://.
    #[error("field `url` must be an http:// or https:// URL")]
    NotHttpUrl,
    /// A notifier's URL that cannot be used.
    #[error("field `url`: {0}")]
    Url(http::uri::InvalidUri),
    /// A webhook's `heartbeat_url` that is not an http:// or https:// URL.
    #[error("field `heartbeat_url` must be an http:// or https:// URL")]
    NotHttpHeartbeatUrl,
    /// `heartbeat_url` where it means nothing.
    #[error("field `heartbeat_url` goes with a webhook and `heartbeat` (Alertmanager's heartbeat is its own alert)")]
    HeartbeatUrlAlone,
    /// Credentials that cannot go in a header.
    #[error("the credentials hold invalid characters")]
    CredentialCharacters,
    /// An agent token too short to be one.
    #[error("field `agent_token_file`: the token must be at least 16 characters")]
    ShortAgentToken,
    /// A `[[rule]]` that names no built-in rule (`known`: the rules' names).
    #[error("field `name`: no built-in rule is called {name:?}; the rules are {}", .known.join(", "))]
    UnknownRule { name: Box<str>, known: Vec<&'static str> },
    /// A severity that is not one.
    #[error("field `severity`: {value:?} is not a severity (notice, warning or critical)")]
    UnknownSeverity { value: Box<str> },
    /// A `[[rule]]`'s duration that is not one.
    #[error("field `{field}`: {source}")]
    RuleDuration { field: &'static str, source: DurationError },
    /// A matcher on a label the rule's alerts never carry: it could only ever match its absence.
    #[error("field `matchers`: {rule}'s alerts never carry the label `{label}` (they carry {})", .carried.join(", "))]
    LabelNeverCarried { label: Box<str>, rule: &'static str, carried: Vec<&'static str> },
    /// A label a `[[rule]]` cannot add.
    #[error("field `labels`: {label:?} {why}")]
    RuleLabel { label: Box<str>, why: &'static str },
}

impl ConfigError {
    /// A problem of a section, said after load (the file is not named).
    pub fn section(section: Section, problem: Problem) -> ConfigError {
        FileError::Section { file: None, section, problem }.into()
    }

    /// A problem of a section of `file`, found at load.
    pub fn in_file(file: &Path, section: Section, problem: Problem) -> ConfigError {
        FileError::Section { file: Some(file.to_path_buf()), section, problem }.into()
    }
}

/// The address of an API server cannot be used (`text`: as given).
#[derive(Debug, thiserror::Error)]
pub enum AddressError {
    #[error("The address of the API server is empty")]
    Empty,
    #[error(
        "Not an address: {text:?} (spaces, control characters and non-ASCII text cannot be in it; an \
         internationalized name is written in its xn-- form)"
    )]
    Characters { text: String },
    #[error("Plain http:// is refused ({text}): the API server speaks HTTPS; use https://HOST:6443 or just HOST")]
    PlainHttp { text: String },
    #[error("Unsupported scheme {scheme}:// in {text}: use https://")]
    Scheme { scheme: String, text: String },
    #[error("Not an address: {text} (a path needs https:// in front)")]
    PathWithoutScheme { text: String },
    #[error("Not an address: {text} (an API server's address has no ? or #)")]
    QueryOrFragment { text: String },
    #[error("Port 0 is not a port: {text}")]
    PortZero { text: String },
    #[error("Not a valid address: {text} ({source})")]
    Invalid { text: String, source: http::uri::InvalidUri },
    #[error("Not a port number: {port} in {text}")]
    NotAPort { port: String, text: String },
    #[error("Unclosed [ in address {text}")]
    Unclosed { text: String },
    #[error("Not an IPv6 address: [{host}] in {text}")]
    NotIpv6 { host: String, text: String },
    #[error("Unexpected text after ] in {text}")]
    AfterBracket { text: String },
    #[error("Not an address: {text} (write IPv6 with a port as [ADDR]:PORT)")]
    BareIpv6WithPort { text: String },
    #[error("Not a host name: {text}")]
    NotAHost { text: String },
}

/// What is wrong with a CA.
#[derive(Debug, thiserror::Error)]
pub enum CaProblem {
    #[error("the CA is empty")]
    Empty,
    #[error("not a CA certificate (neither PEM nor base64 of one)")]
    Neither,
    #[error("the CA certificate cannot be read ({0})")]
    Unreadable(rustls::Error),
    #[error("a PEM certificate starts but never ends (-----END CERTIFICATE----- is missing)")]
    Unterminated,
    #[error("the PEM certificate's body is not valid base64")]
    NotBase64,
    #[error("no certificate found")]
    NoCertificate,
}

/// A duration that cannot be read (`text` as given).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DurationError {
    #[error("not a duration: {text:?} (write 10, \"10s\", \"5m\" or \"24h\")")]
    NotANumber { text: String },
    #[error("unknown unit in {text:?} (use ms, s, m, h or d)")]
    UnknownUnit { text: String },
    #[error("not a duration: {text:?} (from 0 to ten years)")]
    OutOfBounds { text: String },
}

/// A size that cannot be read (`text` as given).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SizeError {
    #[error("not a size: {text:?} (write 256MiB, 1GiB or bytes)")]
    NotASize { text: String },
    #[error("unknown unit in {text:?} (use B, KB, MB, GB, KiB, MiB or GiB)")]
    UnknownUnit { text: String },
}

/// `[tls]` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// `cert_file` or `key_file` cannot be read as PEM.
    #[error("tls: field `{field}` {}: {source}", .path.display())]
    File { field: &'static str, path: PathBuf, source: rustls_pki_types::pem::Error },
    #[error("tls: field `cert_file` {}: no certificate in it", .path.display())]
    NoCertificate { path: PathBuf },
    #[error("tls: {0}")]
    Protocols(rustls::Error),
    #[error("tls: the certificate and key of `cert_file` and `key_file` do not go together: {0}")]
    Mismatch(rustls::Error),
}

/// The pages, the API, /metrics and the agents' door cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum PagesError {
    #[error(transparent)]
    Tls(#[from] TlsError),
    #[error("Cannot listen on {address}: {source}")]
    Listen { address: SocketAddr, source: io::Error },
    /// The address listened on cannot be known.
    #[error("{0}")]
    Address(io::Error),
    #[error("Cannot serve the pages: {0}")]
    Runtime(io::Error),
}

/// A collection could not be read from the API server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    /// The API server, as given (`https://k3s.lan:6443`).
    pub address: String,
    pub collection: Collection,
    pub kind: ReadErrorKind,
}

/// What went wrong, decoded from the transport or the API server's `Status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadErrorKind {
    /// 401.
    Unauthorized,
    /// 403, with the API server's own message.
    Forbidden { message: String },
    /// The certificate chain does not lead to a trusted CA.
    UnknownAuthority,
    /// The certificate does not name the address used.
    WrongName { host: String, names: Vec<String> },
    /// The certificate is expired or not yet valid.
    CertificateExpired,
    /// Any other TLS failure.
    Tls { detail: String },
    /// No complete answer within the deadline.
    Timeout { after: Duration },
    /// The connection (TCP and TLS) was not set up within the deadline.
    ConnectTimeout,
    /// Nothing listens at the address.
    Refused,
    /// The host name does not resolve.
    Dns { host: String },
    /// The server closed the HTTP/2 connection under the request (GOAWAY; a request cut so
    /// before its answer is sent again once, on a new connection, and this is what is left
    /// when that is cut too). kube-apiserver closes so a connection that carried a request it
    /// would not authenticate: a 401 of the same cycle is then the cause.
    GoneAway,
    /// The connection failed or broke for another reason.
    Connection { detail: String },
    /// Another HTTP status, with the API server's message when it sent a `Status`.
    Status { code: u16, message: String },
    /// The answer was not the JSON expected.
    Unreadable { detail: String },
    /// The server returned the continue token it was asked with.
    RepeatedContinue,
    /// The list went on past this many pages.
    EndlessPages { pages: usize },
    /// An answer larger than this many bytes.
    TooLarge { limit: usize },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = format!("{} while reading {}", self.address, self.collection.name());
        match &self.kind {
            ReadErrorKind::Unauthorized => write!(
                f,
                "The API server refused the token (401) at {at}. A token made by `kubectl create token` expires \
                 (after one hour by default): use the long-lived token of a kubernetes.io/service-account-token \
                 Secret (`dumbmonit rbac` prints one)"
            ),
            ReadErrorKind::Forbidden { message } => {
                write!(f, "The service account may not read {} (403): {message}", self.collection.resource())
            }
            ReadErrorKind::UnknownAuthority => write!(
                f,
                "The certificate of the API server could not be verified: it is signed by an unknown authority. \
                 Paste the cluster CA with --ca or --ca-file (the ca.crt of the service account's token Secret) ({at})"
            ),
            ReadErrorKind::WrongName { host, names } => {
                let lists = if names.is_empty() { String::new() } else { format!(" (it lists {})", names.join(", ")) };
                write!(
                    f,
                    "The certificate of the API server could not be verified: the address {host} is not one of the \
                     names in the certificate{lists}. Use a name or IP it lists, or add one with --tls-san on k3s ({at})"
                )
            }
            ReadErrorKind::CertificateExpired => write!(
                f,
                "The certificate of the API server could not be verified: it has expired or is not yet valid \
                 (check this machine's clock, or renew the API server's certificate) ({at})"
            ),
            ReadErrorKind::Tls { detail } => write!(f, "TLS with the API server failed: {detail} ({at})"),
            ReadErrorKind::Timeout { after } => write!(f, "No answer from {at} within {}", seconds(*after)),
            ReadErrorKind::ConnectTimeout => write!(f, "No connection to {at} within the deadline"),
            ReadErrorKind::Refused => {
                write!(f, "Connection refused by {at}: is the API server running, and is the port right?")
            }
            ReadErrorKind::Dns { host } => write!(f, "The host name {host} could not be resolved ({at})"),
            ReadErrorKind::GoneAway => {
                write!(f, "The connection to {at} was closed by the API server before its answer (HTTP/2 GOAWAY)")
            }
            ReadErrorKind::Connection { detail } => write!(f, "The connection to {at} failed: {detail}"),
            ReadErrorKind::Status { code, message } => {
                let reason = http::StatusCode::from_u16(*code).ok().and_then(|c| c.canonical_reason()).unwrap_or("");
                write!(f, "The API server answered {code} {reason} at {at}")?;
                if !message.is_empty() {
                    write!(f, ": {message}")?;
                }
                Ok(())
            }
            ReadErrorKind::Unreadable { detail } => write!(f, "Unreadable answer from {at}: {detail}"),
            ReadErrorKind::RepeatedContinue => {
                write!(f, "The API server returned the same continue token twice at {at}: the list never ends")
            }
            ReadErrorKind::EndlessPages { pages } => {
                write!(f, "The list at {at} went on past {pages} pages of 500: the list never ends")
            }
            ReadErrorKind::TooLarge { limit } => write!(
                f,
                "An answer from {at} was larger than {} MiB: no API server sends that; is something else answering?",
                limit / (1024 * 1024)
            ),
        }
    }
}

impl std::error::Error for ReadError {}

fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 { format!("{s:.0} s") } else { format!("{s} s") }
}
