//! What leaves the process without its secrets: a [`Redactor`] for the secrets of one
//! connection or notifier, and the process-wide registry of every secret the process has come
//! to know ([`know_secret`], [`redact_known`]), which the log, the pages, the API and the
//! notifications all go through.

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
    /// Its own secrets first, then every other secret the process knows ([`redact_known`]): a
    /// cluster's error that quotes another cluster's token, or the admin password, is cleaned
    /// of it as the log is.
    pub fn clean_owned(&self, mut text: String) -> String {
        for s in &self.secrets {
            if text.contains(s.as_str()) {
                text = text.replace(s.as_str(), "[redacted]");
            }
        }
        match redact_known(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(cleaned) => cleaned,
        }
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
