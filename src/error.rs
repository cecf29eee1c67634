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

/// Secrets shorter than this are not redacted: they would redact ordinary words, and a bearer
/// token is never that short.
const SHORTEST_SECRET: usize = 8;

/// Removes secrets from text that is about to leave the process.
#[derive(Clone, Debug, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    /// Also makes the secret known to the whole process ([`know_secret`]): the log redacts it.
    pub fn add(&mut self, secret: &str) {
        if secret.len() >= SHORTEST_SECRET {
            self.secrets.push(secret.to_string());
            know_secret(secret);
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

/// Every secret the process has come to know, for what leaves it with no [`Redactor`] at hand:
/// the log, whose subscriber is process-wide too. Each [`Redactor::add`] lands here, and so do
/// the credentials read where no redactor is (the pages', the agents' tokens). A secret stays
/// known for the life of the process: one rotated away is still a secret.
///
/// Thousands of clusters mean thousands of tokens of a kilobyte or so: the secrets are indexed
/// by their last bytes, so that redacting a text costs one look-up per byte of it, whatever
/// their number (an automaton over them all would hold tens of megabytes).
#[derive(Default)]
struct Known {
    secrets: Vec<String>,
    /// The secrets' positions in `secrets`, by their last `SHORTEST_SECRET` bytes.
    by_tail: std::collections::HashMap<[u8; SHORTEST_SECRET], Vec<usize>>,
}

fn known() -> &'static std::sync::RwLock<Known> {
    static KNOWN: std::sync::OnceLock<std::sync::RwLock<Known>> = std::sync::OnceLock::new();
    KNOWN.get_or_init(Default::default)
}

fn tail(bytes: &[u8]) -> [u8; SHORTEST_SECRET] {
    bytes[bytes.len() - SHORTEST_SECRET..].try_into().expect("a tail of SHORTEST_SECRET bytes")
}

/// Makes `secret` known to the whole process: [`redact_known`] takes it out of every text from
/// now on. Secrets shorter than 8 bytes are not kept, as in [`Redactor::add`].
pub fn know_secret(secret: &str) {
    if secret.len() < SHORTEST_SECRET {
        return;
    }
    let key = tail(secret.as_bytes());
    let seen = |k: &Known| k.by_tail.get(&key).is_some_and(|ids| ids.iter().any(|&i| k.secrets[i] == secret));
    if seen(&known().read().expect("secrets lock")) {
        return;
    }
    let mut k = known().write().expect("secrets lock");
    if !seen(&k) {
        let id = k.secrets.len();
        k.secrets.push(secret.to_string());
        k.by_tail.entry(key).or_default().push(id);
    }
}

/// `text` with every secret the process knows ([`know_secret`]) replaced by `[redacted]`;
/// borrowed when it holds none.
pub fn redact_known(text: &str) -> std::borrow::Cow<'_, str> {
    let bytes = text.as_bytes();
    if bytes.len() < SHORTEST_SECRET {
        return text.into();
    }
    let k = known().read().expect("secrets lock");
    if k.secrets.is_empty() {
        return text.into();
    }
    // Every (start, end) where a secret ends, found by the bytes it ends with.
    let mut found: Vec<(usize, usize)> = Vec::new();
    for end in SHORTEST_SECRET..=bytes.len() {
        let Some(ids) = k.by_tail.get(&tail(&bytes[..end])) else { continue };
        for &i in ids {
            let s = k.secrets[i].as_bytes();
            if end >= s.len() && &bytes[end - s.len()..end] == s {
                found.push((end - s.len(), end));
            }
        }
    }
    drop(k);
    if found.is_empty() {
        return text.into();
    }
    // Overlapping secrets are redacted as one. A secret is whole UTF-8, so every start and end
    // is a character boundary.
    found.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut i = 0;
    while i < found.len() {
        let (start, mut end) = found[i];
        while i + 1 < found.len() && found[i + 1].0 < end {
            i += 1;
            end = end.max(found[i].1);
        }
        out.push_str(&text[at..start]);
        out.push_str("[redacted]");
        at = end;
        i += 1;
    }
    out.push_str(&text[at..]);
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_secrets_are_redacted_wherever_they_are_whatever_their_number() {
        assert_eq!(redact_known("nothing secret here"), "nothing secret here");
        know_secret("short");
        assert_eq!(redact_known("a short word"), "a short word", "shorter than 8 bytes: not a secret");
        know_secret("eyJhbGciOi-token-one-4f1e");
        know_secret("eyJhbGciOi-token-two-77b0");
        know_secret("eyJhbGciOi-token-one-4f1e");
        assert_eq!(
            redact_known("Bearer eyJhbGciOi-token-one-4f1e, then eyJhbGciOi-token-two-77b0."),
            "Bearer [redacted], then [redacted]."
        );
        assert_eq!(redact_known("eyJhbGciOi-token-one-4f1"), "eyJhbGciOi-token-one-4f1", "a part is not the secret");
        // Overlapping secrets, one inside another, one at each end of the text, and text around
        // them that is not ASCII.
        know_secret("overlap-AAAA-BBBB");
        know_secret("BBBB-overlap-CCCC");
        know_secret("inner-secret");
        assert_eq!(redact_known("é overlap-AAAA-BBBB-overlap-CCCC é"), "é [redacted] é");
        assert_eq!(redact_known("outer(inner-secret)outer"), "outer([redacted])outer");
        assert_eq!(redact_known("inner-secretinner-secret"), "[redacted][redacted]");
        // A Redactor's secrets are known to the whole process.
        let mut r = Redactor::default();
        r.add("added-to-a-redactor");
        assert_eq!(redact_known("said added-to-a-redactor"), "said [redacted]");
        // Thousands of secrets sharing their first bytes, as service-account tokens do.
        for i in 0..5000 {
            know_secret(&format!("eyJhbGciOiJSUzI1NiIsImtpZCI6-many-{i:05}"));
        }
        assert_eq!(redact_known("x eyJhbGciOiJSUzI1NiIsImtpZCI6-many-04321 y"), "x [redacted] y");
    }
}
