//! What keeps the notifiers quiet, as the board holds it: the file's silences and windows (put
//! in force at start and at each reload) beside those made through the API or the pages (kept in
//! the state database, each change audited). The cycles read it whole ([`Quieting::quiet`]); the
//! clusters' tasks are told of each change, so that an alert a change unmutes is told at once.

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};

use super::TARGET;
use super::views::Views;
use crate::clock::Clock;
use crate::logs::shortened;
use crate::notify::worker::NotifierSet;
use crate::rules::Transition;
use crate::silence::cost::{MAX_SILENCES, TOTAL_BUDGET, bytes_of, size};
use crate::silence::maintenance::{API, WindowError};
use crate::silence::postable::{
    PostableSilence, PostableWindow, SilenceError, silence_json, stored_silence, stored_silence_within, stored_window,
    window_json,
};
use crate::silence::{MAX_COMMENT, MAX_CREATED_BY, MAX_WINDOWS, Quiet, Silence, SilenceState, Window};
use crate::state::Store;
use crate::state::{AuditEntry, Kept, QuietKind, StateError};

/// The parts, and what the cycles read: all of them together.
#[derive(Default)]
pub(super) struct Parts {
    file_silences: Vec<Silence>,
    file_windows: Vec<Window>,
    kept_silences: Vec<Silence>,
    kept_windows: Vec<Window>,
    /// Alertmanager's silences over DumbMonit's labels, as last read, when it is their home.
    home_silences: Vec<Silence>,
    /// Why Alertmanager's silences could not be read the last time (the last read are kept).
    home_problem: Option<String>,
    /// Alertmanager's silences over DumbMonit's labels that are not applied, and why.
    home_refused: Vec<NotApplied>,
    /// Those refused at the last read, by id and update, with the room there was for them.
    home_memo: Memo,
    all: Arc<Quiet>,
}

/// A silence of Alertmanager's refused at a read: refused again without being compiled while
/// it is unchanged and there is no more room for it (`alone`: too costly whatever the room).
#[derive(Clone, Debug)]
struct Refusal {
    not_applied: NotApplied,
    alone: bool,
    room: usize,
    count: usize,
}

type Memo = std::collections::HashMap<String, Refusal>;

/// The longest text of a silence not applied that is shown (its matchers, its author, why).
const SHOWN: usize = 512;

/// One of Alertmanager's silences that is not applied: too costly to compile, alone or with the
/// silences in force.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotApplied {
    pub id: String,
    /// Its matchers as Alertmanager writes them (never compiled).
    pub matchers: String,
    pub created_by: String,
    /// Why, in one sentence.
    pub why: String,
}

impl Parts {
    fn join(&mut self) {
        let silences =
            self.file_silences.iter().chain(&self.kept_silences).chain(&self.home_silences).cloned().collect();
        let windows = self.file_windows.iter().chain(&self.kept_windows).cloned().collect();
        self.all = Arc::new(Quiet { silences, windows });
    }
}

/// Why a silence or a window was not made, changed or ended.
#[derive(Debug, thiserror::Error)]
pub enum QuietError {
    #[error(transparent)]
    Silence(#[from] SilenceError),
    #[error(transparent)]
    Window(#[from] WindowError),
    #[error("no silence {id:?}")]
    NoSilence { id: String },
    #[error("no maintenance window {id:?}")]
    NoWindow { id: String },
    #[error("{what} {id:?} is from the configuration file: change it there")]
    FromFile { what: &'static str, id: String },
    #[error("{0}")]
    NotKept(#[from] StateError),
    #[error("field `matchers`: {MAX_SILENCES} silences are in force already, the most there may be: expire some first")]
    TooManySilences,
    #[error("{MAX_WINDOWS} maintenance windows are kept already, the most there may be: end some first")]
    TooManyWindows,
    #[error(
        "field `matchers`: the regular expressions of every silence in force would take more than {} compiled together: expire some first",
        size(TOTAL_BUDGET)
    )]
    OverTotal,
}

/// The silences kept at most, expired ones included (those in force are at most
/// [`MAX_SILENCES`]).
const MAX_KEPT: usize = 2 * MAX_SILENCES;

/// How long an expired silence is still listed (Alertmanager's default retention).
const EXPIRED_KEPT: SignedDuration = SignedDuration::from_hours(5 * 24);

/// A random UUID (version 4), as Alertmanager names its silences.
fn uuid() -> String {
    use ring::rand::SecureRandom;
    let mut b = [0u8; 16];
    ring::rand::SystemRandom::new().fill(&mut b).expect("the system's random source works");
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

/// Whether a matcher over `alertname` holds of one of DumbMonit's alerts.
fn ours(m: &crate::silence::Matcher) -> bool {
    crate::rules::RULES
        .iter()
        .map(|r| r.alertname)
        .chain([crate::notify::payload::WATCHDOG])
        .any(|name| m.matches(&std::collections::BTreeMap::from([("alertname".to_string(), name.to_string())])))
}

/// Whether a silence was refused for its cost (rather than for what it says).
fn costly(e: &crate::silence::MatchersError) -> bool {
    use crate::silence::{MatcherError, MatchersError};
    matches!(
        e,
        MatchersError::TooMany { .. }
            | MatchersError::OverBudget { .. }
            | MatchersError::Matcher { source: MatcherError::TooCostly { .. }, .. }
    )
}

/// A listed silence's matchers as Alertmanager writes them, from its JSON alone.
fn matchers_text_of(v: &serde_json::Value) -> String {
    let one = |m: &serde_json::Value| {
        let op =
            crate::silence::Op::of(m["isRegex"].as_bool().unwrap_or(false), m["isEqual"].as_bool().unwrap_or(true));
        let value = serde_json::to_string(m["value"].as_str().unwrap_or("")).unwrap_or_default();
        format!("{}{}{value}", m["name"].as_str().unwrap_or(""), op.as_str())
    };
    let all: Vec<String> = v["matchers"].as_array().map(|ms| ms.iter().map(one).collect()).unwrap_or_default();
    format!("{{{}}}", all.join(", "))
}

/// Whether a silence may be put in force beside those in force now (`quiet`, the one it
/// changes left out): within the count of silences and the budget of them all.
fn in_force_with(quiet: &Quiet, s: &Silence, now: Timestamp) -> Result<(), QuietError> {
    let others: Vec<&Silence> =
        quiet.silences.iter().filter(|o| o.id != s.id && o.state(now) != SilenceState::Expired).collect();
    if others.len() >= MAX_SILENCES {
        return Err(QuietError::TooManySilences);
    }
    let patterns = others.iter().chain([&s]).flat_map(|o| o.matchers.iter().filter_map(|m| m.pattern()));
    if bytes_of(patterns) > TOTAL_BUDGET {
        return Err(QuietError::OverTotal);
    }
    Ok(())
}

/// The cluster a silence is about, for the audit list: its `cluster="…"` matcher's.
pub fn cluster_of(s: &Silence) -> String {
    s.matchers
        .iter()
        .find(|m| m.name == "cluster" && m.op == crate::silence::Op::Equal)
        .map(|m| m.value.clone())
        .unwrap_or_default()
}

/// What keeps the notifiers quiet, and the acknowledgements waiting for their cycles.
pub struct Quieting {
    /// The file's silences and windows and those made through the API or the pages.
    parts: std::sync::RwLock<Parts>,
    /// Counts the changes of what is quiet, so that the clusters' tasks see them at once.
    told: tokio::sync::watch::Sender<u64>,
    /// The cycles' clock (the stepped one in tests): the time of the API's changes.
    clock: std::sync::OnceLock<Clock>,
    /// Acknowledgements not yet taken by their cluster's cycle (`acks`).
    pub(super) acks: std::sync::Mutex<super::acks::Pending>,
    /// Where silences, windows and acknowledgements are kept and audited.
    pub(super) store: Arc<std::sync::Mutex<Store>>,
    /// The notifiers: Alertmanager's silences' home, and who hears of an acknowledgement.
    notifiers: NotifierSet,
    /// The views: shown at once, and the latest cycle's time on the stepped clock.
    pub(super) views: Arc<Views>,
}

impl Quieting {
    pub(super) fn new(store: Arc<std::sync::Mutex<Store>>, notifiers: NotifierSet, views: Arc<Views>) -> Quieting {
        Quieting {
            parts: std::sync::RwLock::new(Parts::default()),
            told: tokio::sync::watch::Sender::new(0),
            clock: std::sync::OnceLock::new(),
            acks: std::sync::Mutex::default(),
            store,
            notifiers,
            views,
        }
    }

    /// The cycles' clock: set once, by `serve`, before the first cycle.
    pub fn set_clock(&self, clock: Clock) {
        let _ = self.clock.set(clock);
    }

    /// Now, on the cycles' clock: on the stepped test clock, the latest cycle's time, so that
    /// a silence made or ended through the API is measured in the cycles' time.
    pub fn now(&self) -> Timestamp {
        match self.clock.get().copied().unwrap_or(Clock::Wall) {
            Clock::Wall => Timestamp::now(),
            Clock::Stepped { start, .. } => self.views.latest_cycle().unwrap_or(start),
        }
    }

    /// The (notifier, body) of each notification the transitions make, for every notifier;
    /// their firing alerts are sent again every `resent_every`.
    pub(super) fn notification_bodies(
        &self,
        transitions: &[Transition],
        resent_every: std::time::Duration,
    ) -> Vec<(String, String)> {
        let notifiers = self.notifiers.read().expect("notifiers lock").clone();
        crate::notify::bodies(&notifiers, transitions, resent_every)
    }

    /// What keeps the notifiers quiet now.
    pub fn quiet(&self) -> Arc<Quiet> {
        self.parts.read().expect("quiet lock").all.clone()
    }

    /// Told each time what is quiet changes (a silence made, changed or expired; a window made
    /// or ended; the file reloaded).
    pub fn quiet_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.told.subscribe()
    }

    fn changed(&self, change: impl FnOnce(&mut Parts)) {
        {
            let mut parts = self.parts.write().expect("quiet lock");
            change(&mut parts);
            parts.join();
        }
        self.views.bump();
        self.told.send_modify(|n| *n += 1);
    }

    /// Puts the file's silences and windows in force (at start and at each reload). Without an
    /// Alertmanager notifier any more, Alertmanager's silences are no longer in force.
    pub fn set_file_quiet(&self, silences: Vec<Silence>, windows: Vec<Window>) {
        let home = self.silence_home().is_some();
        self.changed(|p| {
            p.file_silences = silences;
            p.file_windows = windows;
            if !home {
                p.home_silences.clear();
                p.home_problem = None;
            }
        });
    }

    /// Reads the silences and windows kept in the state database (at start). One that cannot be
    /// read back is left out, and said; silences expired long ago are forgotten.
    pub fn load_kept_quiet(&self) {
        let now = self.now();
        let mut store = self.store.lock().expect("store lock");
        let mut read = |kind| {
            store.kept(kind).unwrap_or_else(|e| {
                tracing::error!(target: TARGET, error = %e, "the silences and maintenance windows kept cannot be read: {e}");
                Vec::new()
            })
        };
        let (silences, windows) = (read(QuietKind::Silence), read(QuietKind::Window));
        let unreadable = |kind: &str, id: &str, e: &str| {
            tracing::error!(target: TARGET, id, error = e, "the {kind} {id} kept cannot be read: {e}");
        };
        let silences: Vec<Silence> = silences
            .iter()
            .filter_map(|k| stored_silence(&k.body, now).map_err(|e| unreadable("silence", &k.id, &e.to_string())).ok())
            .collect();
        let windows: Vec<Window> = windows
            .iter()
            .filter_map(|k| {
                stored_window(&k.body).map_err(|e| unreadable("maintenance window", &k.id, &e.to_string())).ok()
            })
            .collect();
        let forgotten: Vec<String> = silences
            .iter()
            .filter(|s| s.ends_at.is_some_and(|end| now.duration_since(end) > EXPIRED_KEPT))
            .map(|s| s.id.clone())
            .collect();
        let _ = store.forget(QuietKind::Silence, &forgotten);
        drop(store);
        self.changed(|p| {
            p.kept_silences = silences.into_iter().filter(|s| !forgotten.contains(&s.id)).collect();
            p.kept_windows = windows;
        });
    }

    fn entry(&self, who: &str, action: String, cluster: String) -> AuditEntry {
        AuditEntry { time: self.now().as_second(), who: who.to_string(), action, cluster }
    }

    /// Keeps a silence made or changed (`admit`: checked beside those in force, under the
    /// store's lock, so that two made at once cannot both pass the bounds), or expired.
    fn keep_silence(&self, s: Silence, entry: &AuditEntry, admit: bool) -> Result<(), QuietError> {
        let now = self.now();
        let body = silence_json(&s, now).to_string();
        let mut store = self.store.lock().expect("store lock");
        if admit {
            in_force_with(&self.quiet(), &s, now)?;
        }
        store.keep(QuietKind::Silence, &Kept { id: s.id.clone(), body }, entry)?;
        // Expired silences are listed five days, but never more than MAX_KEPT of them all: the
        // ones that ended first are forgotten first.
        let forgotten: Vec<String> = {
            let parts = self.parts.read().expect("quiet lock");
            let added = usize::from(!parts.kept_silences.iter().any(|k| k.id == s.id));
            let over = (parts.kept_silences.len() + added).saturating_sub(MAX_KEPT);
            let mut expired: Vec<&Silence> =
                parts.kept_silences.iter().filter(|k| k.id != s.id && k.state(now) == SilenceState::Expired).collect();
            expired.sort_by_key(|k| k.ends_at);
            expired.iter().take(over).map(|k| k.id.clone()).collect()
        };
        if !forgotten.is_empty() {
            let _ = store.forget(QuietKind::Silence, &forgotten);
        }
        drop(store);
        self.changed(|p| {
            p.kept_silences.retain(|k| !forgotten.contains(&k.id));
            match p.kept_silences.iter_mut().find(|k| k.id == s.id) {
                Some(k) => *k = s,
                None => p.kept_silences.push(s),
            }
            // Those that have expired meanwhile let their compiled expressions go.
            for k in &mut p.kept_silences {
                if k.state(now) == SilenceState::Expired && k.matchers.iter().any(|m| m.pattern().is_some()) {
                    *k = k.without_patterns();
                }
            }
        });
        Ok(())
    }

    /// Makes a silence (or, with the `id` of an unexpired one, changes it) from Alertmanager's
    /// body; gives its id. `everything` confirms a silence of every alert.
    pub fn post_silence(&self, body: &PostableSilence, who: &str, everything: bool) -> Result<String, QuietError> {
        let now = self.now();
        let quiet = self.quiet();
        let changing = match body.id.as_deref().filter(|id| !id.is_empty()) {
            None => None,
            Some(id) => match quiet.silence(id) {
                None => return Err(QuietError::NoSilence { id: id.to_string() }),
                Some(s) if s.from_file => return Err(QuietError::FromFile { what: "silence", id: id.to_string() }),
                // An expired silence is not changed: a new one is made, as Alertmanager does.
                Some(s) if s.state(now) == SilenceState::Expired => None,
                Some(s) => Some(s.id.clone()),
            },
        };
        let id = changing.clone().unwrap_or_else(uuid);
        // A change keeps the silence's start unless it gives another, as Alertmanager does.
        let kept_start = changing.as_ref().and_then(|id| quiet.silence(id)).and_then(|s| s.starts_at);
        let body = match (&body.starts_at, kept_start) {
            (None, Some(start)) => &PostableSilence { starts_at: Some(start.to_string()), ..body.clone() },
            _ => body,
        };
        let s = body.silence(id.clone(), who, now, everything)?;
        let verb = if changing.is_some() { "changed" } else { "created" };
        let until = s.ends_at.map(|e| e.to_string()).unwrap_or_default();
        let action = format!("silence {id} {verb}: {} until {until}", s.matchers_text());
        let entry = self.entry(who, action, cluster_of(&s));
        self.keep_silence(s, &entry, true)?;
        Ok(id)
    }

    /// Expires a silence now (one not started yet ends before it starts).
    pub fn expire_silence(&self, id: &str, who: &str) -> Result<(), QuietError> {
        let now = self.now();
        let Some(mut s) = self.quiet().silence(id).cloned() else {
            return Err(QuietError::NoSilence { id: id.to_string() });
        };
        if s.from_file {
            return Err(QuietError::FromFile { what: "silence", id: id.to_string() });
        }
        if s.state(now) == SilenceState::Expired {
            return Ok(());
        }
        s.starts_at = s.starts_at.map(|start| start.min(now));
        s.ends_at = Some(now);
        s.updated_at = Some(now);
        let entry = self.entry(who, format!("silence {id} expired: {}", s.matchers_text()), cluster_of(&s));
        // Expired, it mutes nothing: its compiled expressions are let go.
        self.keep_silence(s.without_patterns(), &entry, false)
    }

    /// The Alertmanager notifier that is the home of silences (the first configured), if any:
    /// the notifiers, and its place among them.
    pub fn silence_home(&self) -> Option<(Arc<Vec<crate::notify::Notifier>>, usize)> {
        let set = self.notifiers.read().expect("notifiers lock").clone();
        let at = set.iter().position(|n| n.sink.keeps_silences())?;
        Some((set, at))
    }

    /// What Alertmanager's silences are now (`Ok`: as listed by its API), or why they could not
    /// be read (the last read are kept, rather than notifying everything). Each is compiled
    /// under the silences' budgets (nothing is compiled again for a silence read before); one
    /// that passes them is not applied, and listed as such. It compiles: call it off the
    /// request threads.
    pub fn set_home_silences(&self, listed: Result<Vec<serde_json::Value>, String>) {
        let now = self.now();
        let changed = match listed {
            Ok(list) => {
                let (home, refused, memo) = self.home_of(&list, now);
                let mut parts = self.parts.write().expect("quiet lock");
                parts.home_memo = memo;
                let same = parts.home_silences == home && parts.home_refused == refused && parts.home_problem.is_none();
                drop(parts);
                (!same).then_some(move |p: &mut Parts| {
                    p.home_silences = home;
                    p.home_refused = refused;
                    p.home_problem = None;
                })
            }
            Err(why) => {
                self.parts.write().expect("quiet lock").home_problem = Some(why);
                None
            }
        };
        if let Some(change) = changed {
            self.changed(change);
        }
    }

    /// Alertmanager's silences that are for DumbMonit's alerts: those applied, and those too
    /// costly to be.
    fn home_of(&self, list: &[serde_json::Value], now: Timestamp) -> (Vec<Silence>, Vec<NotApplied>, Memo) {
        let (mut home, mut refused, mut memo) = (Vec::new(), Vec::new(), Memo::new());
        // What the file's and the kept silences in force take already, and what was refused at
        // the last read.
        let (mut count, mut seen, mut total, before, _held) = {
            let parts = self.parts.read().expect("quiet lock");
            let ours: Vec<&Silence> = parts
                .file_silences
                .iter()
                .chain(&parts.kept_silences)
                .filter(|s| s.state(now) != SilenceState::Expired)
                .collect();
            // Held until the end, so that an expression counted is not taken for another.
            let held: Vec<Arc<crate::silence::cost::Pattern>> =
                ours.iter().flat_map(|s| s.matchers.iter().filter_map(|m| m.pattern().cloned())).collect();
            let mut seen = std::collections::HashSet::new();
            let mut total = 0;
            for p in &held {
                if seen.insert(Arc::as_ptr(p)) {
                    total += p.bytes;
                }
            }
            (ours.len(), seen, total, parts.home_memo.clone(), held)
        };
        let over_total = || {
            format!(
                "the regular expressions of every silence in force would take more than {} compiled together",
                size(TOTAL_BUDGET)
            )
        };
        for v in list {
            // Silences over labels no alert of DumbMonit has are not for its alerts.
            let names = v["matchers"]
                .as_array()
                .map(|ms| ms.iter().map(|m| m["name"].as_str().unwrap_or("")).collect::<Vec<_>>());
            if !names.is_some_and(|n| !n.is_empty() && n.iter().all(|n| crate::silence::LABELS.contains(n))) {
                continue;
            }
            let not_applied = |why: String| NotApplied {
                id: shortened(v["id"].as_str().unwrap_or(""), SHOWN).into_owned(),
                matchers: shortened(&matchers_text_of(v), SHOWN).into_owned(),
                created_by: shortened(v["createdBy"].as_str().unwrap_or(""), SHOWN).into_owned(),
                why: shortened(&why, SHOWN).into_owned(),
            };
            // A silence refused at the last read, unchanged since, and with no more room for it
            // now, is refused again without being compiled.
            let key = format!("{}@{}", v["id"].as_str().unwrap_or(""), v["updatedAt"].as_str().unwrap_or(""));
            let room = TOTAL_BUDGET.saturating_sub(total);
            let in_force = v["endsAt"].as_str().and_then(|t| t.parse::<Timestamp>().ok()).is_none_or(|end| end > now);
            if in_force {
                if let Some(r) = before.get(&key).filter(|r| r.alone || (room <= r.room && count >= r.count)) {
                    refused.push(r.not_applied.clone());
                    memo.insert(key, r.clone());
                    continue;
                }
                if count >= MAX_SILENCES {
                    let r = Refusal {
                        not_applied: not_applied(format!(
                            "{MAX_SILENCES} silences are in force already, the most there may be"
                        )),
                        alone: false,
                        room,
                        count,
                    };
                    refused.push(r.not_applied.clone());
                    memo.insert(key, r);
                    continue;
                }
            }
            let s = match stored_silence_within(&v.to_string(), now, room) {
                Ok(s) => s,
                Err(crate::silence::postable::StoredError::Matchers(e)) if costly(&e) => {
                    // Too costly alone, or only beside the silences in force.
                    let alone = room >= crate::silence::cost::SILENCE_BUDGET
                        || matches!(e, crate::silence::MatchersError::TooMany { .. })
                        || matches!(
                            e,
                            crate::silence::MatchersError::Matcher {
                                source: crate::silence::MatcherError::TooCostly {
                                    limit: crate::silence::cost::PATTERN_LIMIT,
                                    ..
                                },
                                ..
                            }
                        );
                    let why = if alone { e.to_string() } else { over_total() };
                    let r = Refusal { not_applied: not_applied(why), alone, room, count };
                    refused.push(r.not_applied.clone());
                    memo.insert(key, r);
                    continue;
                }
                Err(_) => continue,
            };
            // Nor are silences over the alertname of none of its rules (Prometheus's own).
            let expired = s.state(now) == SilenceState::Expired;
            if !s.matchers.iter().filter(|m| m.name == "alertname" && (!expired || !m.is_regex())).all(ours) {
                continue;
            }
            if expired {
                if now.duration_since(s.ends_at.unwrap_or(now)) <= EXPIRED_KEPT {
                    home.push(s);
                }
                continue;
            }
            let new: Vec<&Arc<crate::silence::cost::Pattern>> =
                s.matchers.iter().filter_map(|m| m.pattern()).filter(|p| !seen.contains(&Arc::as_ptr(p))).collect();
            let added = bytes_of(new.iter().copied());
            if total + added > TOTAL_BUDGET {
                let r = Refusal { not_applied: not_applied(over_total()), alone: false, room, count };
                refused.push(r.not_applied.clone());
                memo.insert(key, r);
                continue;
            }
            count += 1;
            total += added;
            seen.extend(new.iter().map(|p| Arc::as_ptr(p)));
            home.push(s);
        }
        (home, refused, memo)
    }

    /// Alertmanager's silences that are not applied, and why.
    pub fn home_refused(&self) -> Vec<NotApplied> {
        self.parts.read().expect("quiet lock").home_refused.clone()
    }

    /// Why Alertmanager's silences could not be read the last time, if they could not.
    pub fn home_problem(&self) -> Option<String> {
        self.parts.read().expect("quiet lock").home_problem.clone()
    }

    /// Whether a silence is Alertmanager's.
    pub fn is_home_silence(&self, id: &str) -> bool {
        self.parts.read().expect("quiet lock").home_silences.iter().any(|s| s.id == id)
    }

    /// A silence checked as [`Quieting::post_silence`] checks it, to be made in Alertmanager: its
    /// `id` is the one it changes (empty for a new one).
    pub fn check_home_silence(
        &self,
        body: &PostableSilence,
        who: &str,
        everything: bool,
    ) -> Result<Silence, QuietError> {
        let id = match body.id.as_deref().filter(|id| !id.is_empty()) {
            Some(id) if !self.is_home_silence(id) => {
                return Err(match self.quiet().silence(id) {
                    Some(s) if s.from_file => QuietError::FromFile { what: "silence", id: id.to_string() },
                    _ => QuietError::NoSilence { id: id.to_string() },
                });
            }
            Some(id) => id.to_string(),
            None => String::new(),
        };
        let now = self.now();
        let s = body.silence(id, who, now, everything)?;
        in_force_with(&self.quiet(), &s, now)?;
        Ok(s)
    }

    /// A change made in Alertmanager, in the audit list.
    pub fn audit_change(&self, who: &str, action: String, cluster: String) -> Result<(), StateError> {
        let entry = self.entry(who, action, cluster);
        self.store.lock().expect("store lock").queue_with(&[], &entry)
    }

    /// The silences, as Alertmanager lists them: the file's, then the others by start.
    pub fn silences_json(&self) -> Vec<serde_json::Value> {
        let now = self.now();
        let quiet = self.quiet();
        let mut list: Vec<&Silence> = quiet.silences.iter().collect();
        list.sort_by_key(|s| (!s.from_file, s.starts_at));
        list.into_iter().map(|s| silence_json(s, now)).collect()
    }

    /// Makes a maintenance window (or, with the `id` of one made so, changes it); gives its id.
    pub fn post_window(&self, body: &PostableWindow, who: &str) -> Result<String, QuietError> {
        let now = self.now();
        let quiet = self.quiet();
        let changing = match body.id.as_deref().filter(|id| !id.is_empty()) {
            None => None,
            Some(id) => match quiet.windows.iter().find(|w| w.id == id) {
                None => return Err(QuietError::NoWindow { id: id.to_string() }),
                Some(w) if w.from_file => {
                    return Err(QuietError::FromFile { what: "maintenance window", id: id.to_string() });
                }
                Some(w) => Some(w.id.clone()),
            },
        };
        if changing.is_none() && quiet.windows.iter().filter(|w| !w.from_file).count() >= MAX_WINDOWS {
            return Err(QuietError::TooManyWindows);
        }
        for (field, text, most) in [
            ("comment", body.comment.as_str(), MAX_COMMENT),
            ("createdBy", body.created_by.as_deref().unwrap_or(""), MAX_CREATED_BY),
        ] {
            if text.len() > most {
                return Err(WindowError::TextTooLong { field, len: text.len(), most }.into());
            }
        }
        let id = changing.clone().unwrap_or_else(uuid);
        let created_by = body.created_by.as_deref().map(str::trim).filter(|s| !s.is_empty()).unwrap_or(who);
        let w = Window::from_spec(id.clone(), &body.spec(), API, created_by.to_string(), false, Some(now))?;
        let verb = if changing.is_some() { "changed" } else { "created" };
        let entry = self.entry(who, format!("maintenance window {id} {verb}"), w.clusters.to_string());
        let body = window_json(&w, now).to_string();
        self.store.lock().expect("store lock").keep(QuietKind::Window, &Kept { id: id.clone(), body }, &entry)?;
        self.changed(|p| match p.kept_windows.iter_mut().find(|k| k.id == w.id) {
            Some(k) => *k = w,
            None => p.kept_windows.push(w),
        });
        Ok(id)
    }

    /// Ends a maintenance window: it is removed (the audit list keeps that it was).
    pub fn end_window(&self, id: &str, who: &str) -> Result<(), QuietError> {
        let quiet = self.quiet();
        let Some(w) = quiet.windows.iter().find(|w| w.id == id) else {
            return Err(QuietError::NoWindow { id: id.to_string() });
        };
        if w.from_file {
            return Err(QuietError::FromFile { what: "maintenance window", id: id.to_string() });
        }
        let entry = self.entry(who, format!("maintenance window {id} ended"), w.clusters.to_string());
        self.store.lock().expect("store lock").unkeep(QuietKind::Window, id, &entry)?;
        self.changed(|p| p.kept_windows.retain(|k| k.id != id));
        Ok(())
    }

    /// The maintenance windows, as the API lists them: the file's, then the others.
    pub fn windows_json(&self) -> Vec<serde_json::Value> {
        let now = self.now();
        let quiet = self.quiet();
        let mut list: Vec<&Window> = quiet.windows.iter().filter(|w| !w.over(now) || w.from_file).collect();
        list.sort_by_key(|w| !w.from_file);
        list.into_iter().map(|w| window_json(w, now)).collect()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn silence_ids_are_uuids() {
        let id = super::uuid();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
        assert_ne!(id, super::uuid());
    }
}
