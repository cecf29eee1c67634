//! Who may read the pages and the API: the configured credentials, checked in constant time.
//! Below the configuration and the web side, which both use it.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Credentials, as read from the configuration file: those that protect the pages and the API
/// (`[auth]`, `[auth.admin]`), and those a notifier presents.
#[derive(Debug)]
pub enum Credentials {
    Bearer(String),
    Basic { username: String, password: Password },
}

impl Credentials {
    /// The Authorization header that presents them; None for a bcrypt hash, which can only be
    /// checked against.
    pub fn authorization(&self) -> Option<String> {
        use base64::Engine;
        match self {
            Credentials::Bearer(t) => Some(format!("Bearer {t}")),
            Credentials::Basic { username, password: Password::Plain(p) } => {
                Some(format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{username}:{p}"))))
            }
            Credentials::Basic { password: Password::Bcrypt(_), .. } => None,
        }
    }

    /// The secret in them (the token, the password or its hash), to keep out of every text.
    pub fn secret(&self) -> &str {
        match self {
            Credentials::Bearer(t) => t,
            Credentials::Basic { password: Password::Plain(p) | Password::Bcrypt(p), .. } => p,
        }
    }
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
    /// What bcrypt (slow by design) already said of a Basic-auth header, with the credentials
    /// it was checked against: a verified header costs nothing the second time, nor a refused
    /// one sent again.
    verified: Mutex<Remembered>,
    /// Failed password checks by client, which slow that client down (and no one else).
    failures: Mutex<HashMap<IpAddr, Failures>>,
    /// At most this many password checks run at once, off the request threads.
    checks: Option<Arc<tokio::sync::Semaphore>>,
    /// The password checks waiting or running, by account: bounded per account and in all.
    pending: Arc<Mutex<HashMap<Who, usize>>>,
}

/// A password check counted as pending until it ends (it may outlive its request).
struct Pending {
    counts: Arc<Mutex<HashMap<Who, usize>>>,
    who: Who,
}

impl Drop for Pending {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().expect("pending lock");
        if let Some(n) = counts.get_mut(&self.who) {
            *n = n.saturating_sub(1);
        }
    }
}

/// Headers bcrypt verified, and headers it refused, each set bounded.
#[derive(Debug, Default)]
struct Remembered {
    good: HashSet<(Who, [u8; 32])>,
    bad: HashSet<(Who, [u8; 32])>,
}

#[derive(Clone, Copy, Debug)]
struct Failures {
    count: u32,
    last: Instant,
}

/// Failed password checks a client may make before it waits: then 1 s after its last failure,
/// then 2, 4 … up to a minute.
const FREE_FAILURES: u32 = 5;
const MAX_WAIT: Duration = Duration::from_secs(60);
/// Password checks at once (each one a core's worth of bcrypt for tens of milliseconds).
const CHECKS_AT_ONCE: usize = 2;
/// Password checks waiting or running for one account, and for all: past either, a header not
/// checked before is answered "wait" (429) at once instead of queued, so that a flood of
/// wrong passwords from many addresses cannot make a valid login wait behind it for seconds.
/// A client that failed a check lately gets a smaller share: the others pass ahead of it.
const PENDING_PER_ACCOUNT: usize = 3;
const PENDING_AT_ONCE: usize = 4;
const SUSPECT_PER_ACCOUNT: usize = 1;
const SUSPECT_AT_ONCE: usize = 2;
/// How long a client is asked to wait when the password checks are all taken.
const BUSY_WAIT: Duration = Duration::from_secs(1);
/// Headers remembered (each set), and clients whose failures are counted.
const REMEMBERED: usize = 1024;

/// The outcome of a request's credentials.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// What the credentials may do (None: nothing, 401).
    Role(Option<Role>),
    /// This client failed too many password checks lately: it waits this long before its next.
    Wait(Duration),
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

/// What a header says of one set of credentials without bcrypt, or the bcrypt check it needs.
enum Cheap {
    Yes,
    No,
    Bcrypt { password: String, hash: String },
}

impl Protection {
    pub fn new(credentials: Option<Credentials>, open_metrics: bool) -> Protection {
        Protection {
            credentials,
            admins: None,
            open_metrics,
            allowed_hosts: Vec::new(),
            verified: Mutex::default(),
            failures: Mutex::default(),
            checks: Some(Arc::new(tokio::sync::Semaphore::new(CHECKS_AT_ONCE))),
            pending: Arc::default(),
        }
    }

    pub fn with_admins(mut self, admins: Option<Credentials>) -> Protection {
        self.admins = admins;
        self
    }

    pub fn with_allowed_hosts(mut self, hosts: Vec<String>) -> Protection {
        self.allowed_hosts = hosts;
        self
    }

    /// What the request's Authorization header may do: admin credentials open every page too;
    /// without `[auth]`, everyone is a viewer. Bearer tokens and plain passwords are compared
    /// in constant time; a user name that is no account's costs nothing; a bcrypt check runs
    /// off the request threads, at most [`CHECKS_AT_ONCE`] at a time, and only for a header
    /// not checked before and a client that has not failed too often lately.
    pub async fn check(&self, authorization: Option<&str>, client: IpAddr) -> Verdict {
        let Some(given) = authorization else {
            return Verdict::Role(self.credentials.is_none().then_some(Role::Viewer));
        };
        let admin_name = || match &self.admins {
            Some(Credentials::Bearer(_)) => "admin token".to_string(),
            Some(Credentials::Basic { username, .. }) => username.clone(),
            None => String::new(),
        };
        let sets = [(Who::Admins, self.admins.as_ref()), (Who::Viewers, self.credentials.as_ref())];
        for (who, credentials) in sets {
            let Some(credentials) = credentials else { continue };
            let yes = match self.cheap(credentials, who, given) {
                Cheap::Yes => true,
                Cheap::No => false,
                Cheap::Bcrypt { password, hash } => {
                    if let Some(wait) = self.waits(client) {
                        return Verdict::Wait(wait);
                    }
                    let suspect = self
                        .failures
                        .lock()
                        .expect("failures lock")
                        .get(&client)
                        .is_some_and(|f| f.last.elapsed() < MAX_WAIT);
                    let Some(pending) = self.pending(who, suspect) else { return Verdict::Wait(BUSY_WAIT) };
                    // Counted before it runs: a client that hangs up during the check (the
                    // check goes on without it) has failed all the same; success clears it.
                    self.failed(client);
                    let ok = self.bcrypt(password, hash, pending).await;
                    self.remember(who, given, ok);
                    ok
                }
            };
            if yes {
                self.failures.lock().expect("failures lock").remove(&client);
                return Verdict::Role(Some(match who {
                    Who::Admins => Role::Admin(admin_name()),
                    Who::Viewers => Role::Viewer,
                }));
            }
        }
        Verdict::Role(self.credentials.is_none().then_some(Role::Viewer))
    }

    fn cheap(&self, credentials: &Credentials, who: Who, given: &str) -> Cheap {
        let yes_if = |b: bool| if b { Cheap::Yes } else { Cheap::No };
        match credentials {
            Credentials::Bearer(token) => {
                yes_if(given.strip_prefix("Bearer ").is_some_and(|t| constant_time_eq(t.as_bytes(), token.as_bytes())))
            }
            Credentials::Basic { username, password } => {
                use base64::Engine;
                let Some(encoded) = given.strip_prefix("Basic ") else { return Cheap::No };
                let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(encoded.trim()) else {
                    return Cheap::No;
                };
                let decoded = String::from_utf8_lossy(&decoded);
                let Some((user, pass)) = decoded.split_once(':') else { return Cheap::No };
                // The user names are not secret: one that is no account's costs nothing.
                if !constant_time_eq(user.as_bytes(), username.as_bytes()) {
                    return Cheap::No;
                }
                match password {
                    Password::Plain(p) => yes_if(constant_time_eq(pass.as_bytes(), p.as_bytes())),
                    Password::Bcrypt(hash) => {
                        let key = (who, fingerprint(given));
                        let remembered = self.verified.lock().expect("verified lock");
                        if remembered.good.contains(&key) {
                            Cheap::Yes
                        } else if remembered.bad.contains(&key) {
                            Cheap::No
                        } else {
                            Cheap::Bcrypt { password: pass.to_string(), hash: hash.clone() }
                        }
                    }
                }
            }
        }
    }

    /// bcrypt on the blocking threads, behind the semaphore: the request threads and the
    /// probes never wait for it. The slot goes with the check, not with the request, so a
    /// client that hangs up does not free it while its check still runs.
    async fn bcrypt(&self, password: String, hash: String, pending: Pending) -> bool {
        let slot = match &self.checks {
            Some(s) => s.clone().acquire_owned().await.ok(),
            None => None,
        };
        tokio::task::spawn_blocking(move || {
            let _slot = (slot, pending);
            bcrypt::verify(password, &hash).unwrap_or(false)
        })
        .await
        .unwrap_or(false)
    }

    /// A place among the pending password checks of `who`'s account, if one is free (within
    /// [`PENDING_PER_ACCOUNT`] and [`PENDING_AT_ONCE`]; for a `suspect` client, one that
    /// failed lately, within [`SUSPECT_PER_ACCOUNT`] and [`SUSPECT_AT_ONCE`]).
    fn pending(&self, who: Who, suspect: bool) -> Option<Pending> {
        let (per_account, at_once) =
            if suspect { (SUSPECT_PER_ACCOUNT, SUSPECT_AT_ONCE) } else { (PENDING_PER_ACCOUNT, PENDING_AT_ONCE) };
        let mut counts = self.pending.lock().expect("pending lock");
        let all: usize = counts.values().sum();
        let mine = counts.entry(who).or_default();
        if *mine >= per_account || all >= at_once {
            return None;
        }
        *mine += 1;
        Some(Pending { counts: self.pending.clone(), who })
    }

    fn remember(&self, who: Who, given: &str, ok: bool) {
        let mut r = self.verified.lock().expect("verified lock");
        let set = if ok { &mut r.good } else { &mut r.bad };
        if set.len() >= REMEMBERED {
            set.clear();
        }
        set.insert((who, fingerprint(given)));
    }

    /// How long `client` waits before its next password check, if it must.
    fn waits(&self, client: IpAddr) -> Option<Duration> {
        let f = *self.failures.lock().expect("failures lock").get(&client)?;
        let over = f.count.checked_sub(FREE_FAILURES)?;
        let wait = Duration::from_secs(1u64 << over.min(6)).min(MAX_WAIT);
        wait.checked_sub(f.last.elapsed()).filter(|w| !w.is_zero())
    }

    fn failed(&self, client: IpAddr) {
        let mut failures = self.failures.lock().expect("failures lock");
        if failures.len() >= REMEMBERED && !failures.contains_key(&client) {
            failures.retain(|_, f| f.last.elapsed() < MAX_WAIT);
            if failures.len() >= REMEMBERED {
                failures.clear();
            }
        }
        let f = failures.entry(client).or_insert(Failures { count: 0, last: Instant::now() });
        f.count += 1;
        f.last = Instant::now();
    }

    /// What the admin credentials are, for a signature over them (never shown): a changed
    /// password or token gives another.
    pub fn admin_fingerprint(&self) -> String {
        match &self.admins {
            Some(Credentials::Bearer(t)) => format!("bearer {t}"),
            Some(Credentials::Basic { username, password: Password::Plain(p) }) => format!("plain {username} {p}"),
            Some(Credentials::Basic { username, password: Password::Bcrypt(h) }) => format!("bcrypt {username} {h}"),
            None => String::new(),
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

/// A header as remembered: its SHA-256, so that no password is kept and a long header costs
/// no more than a short one.
fn fingerprint(header: &str) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(header.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HERE: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

    fn role(p: &Protection, authorization: Option<&str>) -> Option<Role> {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        match runtime.block_on(p.check(authorization, HERE)) {
            Verdict::Role(r) => r,
            Verdict::Wait(w) => panic!("waits {w:?}"),
        }
    }

    fn allows(p: &Protection, authorization: Option<&str>) -> bool {
        role(p, authorization).is_some()
    }

    #[test]
    fn credentials() {
        use base64::Engine;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let p = Protection::new(Some(Credentials::Bearer("tok-123".into())), false);
        assert!(allows(&p, Some("Bearer tok-123")));
        assert!(!allows(&p, Some("Bearer tok-124")));
        assert!(!allows(&p, None));
        let hash = bcrypt::hash("pw", 4).unwrap();
        let p = Protection::new(
            Some(Credentials::Basic { username: "ops".into(), password: Password::Bcrypt(hash) }),
            false,
        );
        assert!(allows(&p, Some(&format!("Basic {}", b64("ops:pw")))));
        assert!(allows(&p, Some(&format!("Basic {}", b64("ops:pw")))), "again, from the cache");
        assert!(!allows(&p, Some(&format!("Basic {}", b64("ops:pW")))));
        assert!(!allows(&p, Some(&format!("Basic {}", b64("root:pw")))));
        assert!(!allows(&p, Some("Basic !!!")));
        assert!(allows(&Protection::default(), None), "no credentials configured: open");
    }

    #[test]
    fn failed_password_checks_make_that_client_wait() {
        use base64::Engine;
        let b64 = |s: &str| format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(s));
        let hash = bcrypt::hash("pw", 4).unwrap();
        let p = Protection::new(
            Some(Credentials::Basic { username: "ops".into(), password: Password::Bcrypt(hash) }),
            false,
        );
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let there = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 7));
        for i in 0..FREE_FAILURES {
            let v = runtime.block_on(p.check(Some(&b64(&format!("ops:wrong-{i}"))), there));
            assert_eq!(v, Verdict::Role(None), "failure {i} is checked");
        }
        assert!(matches!(runtime.block_on(p.check(Some(&b64("ops:pw")), there)), Verdict::Wait(_)));
        // A header refused before is refused again without a check, and other clients go on.
        assert_eq!(runtime.block_on(p.check(Some(&b64("ops:wrong-0")), there)), Verdict::Role(None));
        assert_eq!(runtime.block_on(p.check(Some(&b64("ops:pw")), HERE)), Verdict::Role(Some(Role::Viewer)));
        // A user name that is no account's is refused at once, even while waiting.
        assert_eq!(runtime.block_on(p.check(Some(&b64("x:y")), there)), Verdict::Role(None));
    }

    #[test]
    fn admins_open_every_page_and_viewers_change_nothing() {
        use base64::Engine;
        let b64 = |s: &str| format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(s));
        let viewers = Credentials::Basic { username: "ops".into(), password: Password::Plain("view".into()) };
        let admins =
            Credentials::Basic { username: "root".into(), password: Password::Bcrypt(bcrypt::hash("adm", 4).unwrap()) };
        let p = Protection::new(Some(viewers), false).with_admins(Some(admins));
        assert_eq!(role(&p, Some(&b64("ops:view"))), Some(Role::Viewer));
        assert_eq!(role(&p, Some(&b64("root:adm"))), Some(Role::Admin("root".into())));
        assert_eq!(role(&p, Some(&b64("root:adm"))), Some(Role::Admin("root".into())), "from the cache");
        assert_eq!(role(&p, Some(&b64("ops:adm"))), None);
        assert_eq!(role(&p, None), None);
        assert!(p.has_admins());
        // Without [auth], everyone reads; only the admin token changes.
        let p = Protection::new(None, false).with_admins(Some(Credentials::Bearer("adm-token".into())));
        assert_eq!(role(&p, None), Some(Role::Viewer));
        assert_eq!(role(&p, Some("Bearer adm-token")), Some(Role::Admin("admin token".into())));
        assert_eq!(role(&p, Some("Bearer other")), Some(Role::Viewer));
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
