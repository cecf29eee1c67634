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
    /// Who may read (`[auth]`); None: everyone.
    pub credentials: Option<Credentials>,
    /// Who may also change (`[auth.admin]`); None: nobody.
    pub admins: Option<Credentials>,
    /// `/metrics` answers without credentials.
    pub open_metrics: bool,
    /// Without `[auth]`: the host names the pages answer to besides loopback names and IP
    /// addresses (`allowed_hosts`).
    pub allowed_hosts: Vec<String>,
    /// Basic-auth headers already verified against a bcrypt hash (bcrypt is slow by design),
    /// with the credentials they were verified against.
    verified: Mutex<HashSet<(Who, String)>>,
}

/// What a request may do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    Viewer,
    /// With the name the audit list gives it: the user name, or "admin token".
    Admin(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Who {
    Viewers,
    Admins,
}

impl Protection {
    pub fn new(credentials: Option<Credentials>, open_metrics: bool) -> Protection {
        Protection {
            credentials,
            admins: None,
            open_metrics,
            allowed_hosts: Vec::new(),
            verified: Mutex::new(HashSet::new()),
        }
    }

    pub fn with_allowed_hosts(mut self, hosts: Vec<String>) -> Protection {
        self.allowed_hosts = hosts;
        self
    }

    pub fn with_admins(mut self, admins: Option<Credentials>) -> Protection {
        self.admins = admins;
        self
    }

    /// Whether the request's Authorization header is acceptable. Comparisons take the same time
    /// whatever the first differing byte.
    pub fn allows(&self, authorization: Option<&str>) -> bool {
        self.role(authorization).is_some()
    }

    /// What the request's Authorization header may do: admin credentials open every page too;
    /// without `[auth]`, everyone is a viewer.
    pub fn role(&self, authorization: Option<&str>) -> Option<Role> {
        if let (Some(admins), Some(given)) = (&self.admins, authorization)
            && self.matches(admins, Who::Admins, given)
        {
            let name = match admins {
                Credentials::Bearer(_) => "admin token".to_string(),
                Credentials::Basic { username, .. } => username.clone(),
            };
            return Some(Role::Admin(name));
        }
        match (&self.credentials, authorization) {
            (None, _) => Some(Role::Viewer),
            (Some(c), Some(given)) if self.matches(c, Who::Viewers, given) => Some(Role::Viewer),
            _ => None,
        }
    }

    fn matches(&self, credentials: &Credentials, who: Who, given: &str) -> bool {
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
                        let key = (who, given.to_string());
                        if self.verified.lock().expect("verified lock").contains(&key) {
                            true
                        } else {
                            let ok = bcrypt::verify(pass, hash).unwrap_or(false);
                            if ok && user_ok {
                                let mut v = self.verified.lock().expect("verified lock");
                                if v.len() < 64 {
                                    v.insert(key);
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

    /// Whether anyone may change clusters on the pages.
    pub fn has_admins(&self) -> bool {
        self.admins.is_some()
    }

    pub fn challenge(&self) -> &'static str {
        match self.credentials.as_ref().or(self.admins.as_ref()) {
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
    fn admins_open_every_page_and_viewers_change_nothing() {
        use base64::Engine;
        let b64 = |s: &str| format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(s));
        let viewers = Credentials::Basic { username: "ops".into(), password: Password::Plain("view".into()) };
        let admins =
            Credentials::Basic { username: "root".into(), password: Password::Bcrypt(bcrypt::hash("adm", 4).unwrap()) };
        let p = Protection::new(Some(viewers), false).with_admins(Some(admins));
        assert_eq!(p.role(Some(&b64("ops:view"))), Some(Role::Viewer));
        assert_eq!(p.role(Some(&b64("root:adm"))), Some(Role::Admin("root".into())));
        assert_eq!(p.role(Some(&b64("root:adm"))), Some(Role::Admin("root".into())), "from the cache");
        assert_eq!(p.role(Some(&b64("ops:adm"))), None);
        assert_eq!(p.role(None), None);
        assert!(p.has_admins());
        // Without [auth], everyone reads; only the admin token changes.
        let p = Protection::new(None, false).with_admins(Some(Credentials::Bearer("adm-token".into())));
        assert_eq!(p.role(None), Some(Role::Viewer));
        assert_eq!(p.role(Some("Bearer adm-token")), Some(Role::Admin("admin token".into())));
        assert_eq!(p.role(Some("Bearer other")), Some(Role::Viewer));
        assert!(!Protection::default().has_admins());
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
