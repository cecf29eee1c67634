//! Who may read the pages and the API: the configured credentials, checked in constant time.
//! Below the configuration and the web side, which both use it.

use std::collections::HashSet;
use std::sync::Mutex;

/// The credentials that protect the pages and the API.
#[derive(Debug)]
pub enum Credentials {
    Bearer(String),
    Basic { username: String, password: Password },
}

#[derive(Debug)]
pub enum Password {
    Plain(String),
    /// A bcrypt hash, as `htpasswd -nbBC 10 USER PASSWORD` prints it.
    Bcrypt(String),
}

/// The protection of the web side.
#[derive(Debug, Default)]
pub struct Protection {
    pub credentials: Option<Credentials>,
    /// `/metrics` answers without credentials.
    pub open_metrics: bool,
    /// Basic-auth headers already verified against a bcrypt hash (bcrypt is slow by design).
    verified: Mutex<HashSet<String>>,
}

impl Protection {
    pub fn new(credentials: Option<Credentials>, open_metrics: bool) -> Protection {
        Protection { credentials, open_metrics, verified: Mutex::new(HashSet::new()) }
    }

    /// Whether the request's Authorization header is acceptable. Comparisons take the same time
    /// whatever the first differing byte.
    pub fn allows(&self, authorization: Option<&str>) -> bool {
        let Some(credentials) = &self.credentials else { return true };
        let Some(given) = authorization else { return false };
        match credentials {
            Credentials::Bearer(token) => {
                given.strip_prefix("Bearer ").is_some_and(|t| constant_time_eq(t.as_bytes(), token.as_bytes()))
            }
            Credentials::Basic { username, password } => {
                use base64::Engine;
                let Some(encoded) = given.strip_prefix("Basic ") else { return false };
                let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(encoded.trim()) else {
                    return false;
                };
                let decoded = String::from_utf8_lossy(&decoded);
                let Some((user, pass)) = decoded.split_once(':') else { return false };
                let user_ok = constant_time_eq(user.as_bytes(), username.as_bytes());
                let pass_ok = match password {
                    Password::Plain(p) => constant_time_eq(pass.as_bytes(), p.as_bytes()),
                    Password::Bcrypt(hash) => {
                        if self.verified.lock().expect("verified lock").contains(given) {
                            true
                        } else {
                            let ok = bcrypt::verify(pass, hash).unwrap_or(false);
                            if ok && user_ok {
                                let mut v = self.verified.lock().expect("verified lock");
                                if v.len() < 64 {
                                    v.insert(given.to_string());
                                }
                            }
                            ok
                        }
                    }
                };
                user_ok & pass_ok
            }
        }
    }

    pub fn challenge(&self) -> &'static str {
        match self.credentials {
            Some(Credentials::Basic { .. }) => "Basic realm=\"dumbmonit\", charset=\"UTF-8\"",
            _ => "Bearer realm=\"dumbmonit\"",
        }
    }
}

/// Equal bytes, compared in time that does not depend on where they differ (`subtle`; the
/// lengths are not secret).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    a.ct_eq(b).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials() {
        use base64::Engine;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let p = Protection::new(Some(Credentials::Bearer("tok-123".into())), false);
        assert!(p.allows(Some("Bearer tok-123")));
        assert!(!p.allows(Some("Bearer tok-124")));
        assert!(!p.allows(None));
        let hash = bcrypt::hash("pw", 4).unwrap();
        let p = Protection::new(
            Some(Credentials::Basic { username: "ops".into(), password: Password::Bcrypt(hash) }),
            false,
        );
        assert!(p.allows(Some(&format!("Basic {}", b64("ops:pw")))));
        assert!(p.allows(Some(&format!("Basic {}", b64("ops:pw")))), "again, from the cache");
        assert!(!p.allows(Some(&format!("Basic {}", b64("ops:pW")))));
        assert!(!p.allows(Some(&format!("Basic {}", b64("root:pw")))));
        assert!(!p.allows(Some("Basic !!!")));
        assert!(Protection::default().allows(None), "no credentials configured: open");
    }

    #[test]
    fn constant_time_comparison() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
        assert!(constant_time_eq(b"", b""));
    }
}
