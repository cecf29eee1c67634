//! Every way DumbMonit can fail, each with the sentence a user will search for.

use std::fmt;
use std::time::Duration;

use crate::collection::Collection;

/// Exit status when the cluster could not be read, or the command line or configuration is
/// wrong (the monitoring-plugin convention's UNKNOWN). Here, below every command, so that each
/// can use it without importing the command line.
pub const EXIT_UNKNOWN: u8 = 3;

/// A failure before any request is sent: a flag, a file or a kubeconfig is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

impl ConfigError {
    pub fn new(message: impl Into<String>) -> ConfigError {
        ConfigError(message.into())
    }
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

/// Removes secrets from text that is about to leave the process.
#[derive(Clone, Debug, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    pub fn add(&mut self, secret: &str) {
        // Short strings would redact ordinary words; a bearer token is never that short.
        if secret.len() >= 8 {
            self.secrets.push(secret.to_string());
        }
    }

    pub fn secrets(&self) -> impl Iterator<Item = &str> {
        self.secrets.iter().map(String::as_str)
    }

    pub fn clean(&self, text: &str) -> String {
        self.clean_owned(text.to_string())
    }

    /// [`Self::clean`] of a text the caller gives up: copied only when a secret is in it (at the
    /// envelope, `check --output prometheus` writes 12 MB, and copies of it were the peak).
    pub fn clean_owned(&self, mut text: String) -> String {
        for s in &self.secrets {
            if text.contains(s.as_str()) {
                text = text.replace(s.as_str(), "[redacted]");
            }
        }
        text
    }
}
