//! Prometheus "for" semantics per object: an alert is pending from the first evaluation where
//! its condition holds (activeAt), fires at the first evaluation where now − activeAt ≥ for,
//! resolves at the first evaluation where the condition no longer holds.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use super::tune::{Override, Tuning};
use super::{Observation, RULES, Rule, Severity};
use crate::lang::{Lang, Message};

/// An active alert: pending (not yet fired) or firing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alert {
    pub alertname: String,
    pub severity: Severity,
    /// Every label: `alertname`, `severity`, `cluster` and the object's.
    pub labels: BTreeMap<String, String>,
    pub summary: String,
    pub description: String,
    pub active_at: Timestamp,
    pub fired_at: Option<Timestamp>,
    pub escalated_at: Option<Timestamp>,
    /// It fired while a silence muted it: the notifiers were not told, and are told when it
    /// is no longer muted (its resolution never, if it resolves first). Left out when false, so
    /// that stored alerts read as before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub untold: bool,
    /// An admin is on it: it neither escalates nor is re-told; it ends with the alert (a new
    /// firing is a new problem). Left out when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acknowledged: Option<Acknowledgement>,
    /// The labels the notifiers last heard, when its escalation went untold (a silence or a
    /// window began after its firing was told): what Alertmanager is re-sent meanwhile, and what
    /// the escalation ends once it is told. Left out when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub told_labels: Option<BTreeMap<String, String>>,
    /// The message `summary` was said from, to say it again in another language (pages,
    /// notifiers). Left out when absent (alerts stored before; `summary` is then said as is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub said: Option<Message>,
    /// The message `description` was said from, when it is ours (not the cluster's words, which
    /// are the same in every language). Left out when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub said_description: Option<Message>,
}

/// Who acknowledged a firing alert, when, and why (Checkmk's meaning: the problem is known and
/// someone is on it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Acknowledgement {
    pub by: String,
    pub at: Timestamp,
    #[serde(default)]
    pub comment: String,
}

impl Alert {
    /// The one-line summary in `lang`: the English one as it was made, or the same message said
    /// in French.
    pub fn summary_in(&self, lang: Lang) -> String {
        match (&self.said, lang) {
            (Some(m), Lang::Fr) => lang.say(m),
            _ => self.summary.clone(),
        }
    }

    /// The description in `lang`.
    pub fn description_in(&self, lang: Lang) -> String {
        match (&self.said_description, lang) {
            (Some(m), Lang::Fr) => lang.say(m),
            _ => self.description.clone(),
        }
    }

    pub fn firing(&self) -> bool {
        self.fired_at.is_some()
    }

    /// The alert as the notifiers know it: with the labels they last heard.
    pub fn as_told(&self) -> Alert {
        match &self.told_labels {
            None => self.clone(),
            Some(labels) => Alert {
                labels: labels.clone(),
                severity: labels.get("severity").and_then(|s| Severity::named(s)).unwrap_or(Severity::Notice),
                escalated_at: None,
                ..self.clone()
            },
        }
    }

    /// Raises the alert to Warning at `now`, its `severity` label with it (a Critical alert
    /// stays Critical: only its `escalated_at` says it was urgent).
    pub fn escalate(&mut self, now: Timestamp) {
        self.escalated_at = Some(now);
        self.severity = self.severity.max(Severity::Warning);
        self.labels.insert("severity".into(), self.severity.as_str().into());
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransitionState {
    Firing,
    Escalated,
    Resolved,
    /// An admin acknowledged the firing alert: told once, so that the receivers know.
    Acknowledged,
    /// Still firing, told again (`repeat_interval`): made by the notifiers' groups, never by
    /// the rules.
    Reminder,
}

/// A change worth telling: an alert fired, escalated or resolved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Transition {
    pub time: Timestamp,
    pub state: TransitionState,
    /// The alert as it is after the change (for an escalation, with its new severity).
    pub alert: Alert,
    /// For an escalation, the labels it had before (the alert that Alertmanager must end).
    pub previous_labels: Option<BTreeMap<String, String>>,
}

/// What the rules remember of a pod between cycles.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PodMemory {
    /// `pod_restarts` at the last cycle.
    pub restarts: i64,
    /// Increases of `pod_restarts` within the restart window: (when seen, by how much).
    pub increases: Vec<(Timestamp, i64)>,
    /// The last look that saw the pod crash-looping; while `crashlooping`, when the loop under
    /// way was first seen.
    pub crashloop_seen: Option<Timestamp>,
    /// Whether the last look saw the pod crash-looping: the loop counts as seen at every look
    /// since `crashloop_seen`, and when a look no longer sees it, `crashloop_seen` becomes the
    /// look before. So a crash-looping pod's memory (and its row in the state) changes when the
    /// loop begins and ends, not at every cycle. Absent from rows written before it: false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub crashlooping: bool,
}

/// The rules' memory of each pod, by (namespace, pod). A cycle finds each pod's by [`PodRef`],
/// without making its key again (hashbrown's `Equivalent`; std's `HashMap` looks a tuple of
/// `String`s up only by another), and keys stay hashed with std's randomly keyed SipHash:
/// pods' names come from the cluster.
pub type PodMemories = hashbrown::HashMap<(String, String), PodMemory, std::hash::RandomState>;

/// A pod's (namespace, name) borrowed: looks up a [`PodMemories`] key. Hashes as the key's
/// tuple of `String`s does (each part as a `str`, in order), as `Equivalent` requires.
#[derive(Clone, Copy, Debug)]
pub struct PodRef<'a>(pub &'a str, pub &'a str);

impl std::hash::Hash for PodRef<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
        self.1.hash(state);
    }
}

impl hashbrown::Equivalent<(String, String)> for PodRef<'_> {
    fn equivalent(&self, key: &(String, String)) -> bool {
        self.0 == key.0 && self.1 == key.1
    }
}

/// Everything the rules of one cluster carry from cycle to cycle.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RuleState {
    /// Active alerts by key (alertname and object labels). Shared with the store's copy of what
    /// it wrote and the pages' list, and changed by copy (`Arc::make_mut`): an alert that is the
    /// very one they hold is unchanged, without comparing it (three walks of every alert a
    /// cycle, at 150,000 pods a tenth of a cycle on a change).
    pub alerts: BTreeMap<String, Arc<Alert>>,
    /// By (namespace, pod).
    pub pods: PodMemories,
    /// Failed cycles in a row.
    pub failures: u32,
    /// The last cycle evaluated, successful or not.
    pub last_cycle: Option<Timestamp>,
    /// The last look at the pods (a cycle that read the cluster). Not stored: in a state read
    /// from its store, the last cycle stands for it.
    pub pods_looked: Option<Timestamp>,
    /// What the derivation remembers of the cluster between cycles, kept beside the rules' state
    /// so that both move, are checkpointed and are restored together: handed to
    /// `health::assess_with` before the rules see the health.
    pub memory: crate::health::Memory,
    /// The notifiers' groups of this cluster's alerts, by notifier and group key: kept with
    /// the alerts, so that a restart neither tells a group twice nor forgets to tell it.
    pub groups: NoticeGroups,
    /// The pods whose memory the rules' last look at the pods changed, for the store.
    pub pods_changed: PodsChanged,
    /// Whether every alert's words were said by this process.
    pub worded: Worded,
}

/// Whether every active alert's summary and description were said by this process from the
/// messages it holds: an evaluation then says again only those a new observation words
/// otherwise. A state read from its store is said again once in full, at the first evaluation
/// that sees all its alerts (this version may word them otherwise).
///
/// Bookkeeping, not state: two `Worded` are always equal.
#[derive(Clone, Copy, Debug, Default)]
pub struct Worded(pub bool);

impl PartialEq for Worded {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// The pods whose memory one look at the pods changed (added, changed or forgotten), and which
/// look that was: a store that wrote the memory as the look before left it writes these alone,
/// instead of comparing every pod's (see `state::Store::commit_cycle`).
///
/// Bookkeeping, not state: two `PodsChanged` are always equal, so that two rule states are
/// equal when their alerts and memories are.
#[derive(Clone, Debug, Default)]
pub struct PodsChanged {
    /// This look's mark (unique in the process), and the look's before it on this state.
    pub mark: Option<u64>,
    pub after: Option<u64>,
    /// By (namespace, pod).
    pub keys: Vec<(String, String)>,
}

impl PodsChanged {
    /// A new mark: for a look at the pods, or for a state as read from its store.
    pub fn new_mark() -> u64 {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// Starts a look at the pods: it follows the last one.
    pub fn start(&mut self) {
        self.after = self.mark;
        self.mark = Some(Self::new_mark());
        // Not cleared: a first look names every pod, and its room would be kept for good.
        self.keys = Vec::new();
    }
}

impl PartialEq for PodsChanged {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// A group of a notifier's alerts (its `group_by` labels) and its timers, as Alertmanager's:
/// what the notifier has not been told yet, when it may be, and when it was last told.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NoticeGroup {
    /// The group's labels (those of `group_by` the alerts carry).
    pub labels: BTreeMap<String, String>,
    /// When its first change came: its thread's start (email).
    pub since: Timestamp,
    /// What is not told yet goes at the first cycle from then on (`group_wait` after its first
    /// change, `group_interval` after each message).
    pub due: Timestamp,
    /// When its last message went (a reminder goes `repeat_interval` after it); None before
    /// the first.
    #[serde(default)]
    pub told_at: Option<Timestamp>,
    /// The changes not told yet, in order.
    #[serde(default)]
    pub pending: Vec<Transition>,
}

/// Each notifier's groups, by its name, then by group key.
pub type NoticeGroups = BTreeMap<String, BTreeMap<String, NoticeGroup>>;

/// `alertname{k="v",…}` over the object's labels: an alert's identity, whatever its severity.
pub fn alert_key(alertname: &str, object_labels: &BTreeMap<String, String>) -> String {
    let labels: Vec<String> = object_labels.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    format!("{alertname}{{{}}}", labels.join(","))
}

/// The key of an alert as held: its alertname and its object's labels (not those a `[[rule]]`
/// adds).
pub fn key_of(a: &Alert) -> String {
    let rule = rule_of(&a.alertname);
    let object: BTreeMap<String, String> = a
        .labels
        .iter()
        .filter(|(k, _)| rule.labels.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    alert_key(&a.alertname, &object)
}

fn rule_of(alertname: &str) -> &'static Rule {
    RULES.iter().find(|r| r.alertname == alertname).expect("alerts come from the built-in rules")
}

fn held(now: Timestamp, since: Timestamp, d: std::time::Duration) -> bool {
    now.duration_since(since) >= SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX)
}

/// What the clock does to an alert seen again: it fires once held long enough (urgent: as a
/// Warning), and a firing one escalates when its rule says so.
fn timers(
    alert: &mut Arc<Alert>,
    now: Timestamp,
    hold: std::time::Duration,
    escalate_after: Option<std::time::Duration>,
    urgent: bool,
    transitions: &mut Vec<Transition>,
) {
    if alert.fired_at.is_none() && held(now, alert.active_at, hold) {
        let alert = Arc::make_mut(alert);
        alert.fired_at = Some(now);
        if urgent && alert.severity < Severity::Warning {
            // Urgent when first told: it fires as a Warning.
            alert.escalate(now);
        }
        transitions.push(Transition {
            time: now,
            state: TransitionState::Firing,
            alert: alert.clone(),
            previous_labels: None,
        });
    } else if let (Some(fired), None, None) = (alert.fired_at, alert.escalated_at, &alert.acknowledged)
        && alert.severity < Severity::Warning
        && (urgent || escalate_after.is_some_and(|after| held(now, fired, after)))
    {
        let alert = Arc::make_mut(alert);
        let previous = alert.labels.clone();
        alert.escalate(now);
        transitions.push(Transition {
            time: now,
            state: TransitionState::Escalated,
            alert: alert.clone(),
            previous_labels: Some(previous),
        });
    }
}

/// What an evaluated observation made: its alert's key, and the timers its rule as tuned gives
/// the alert. The same observation made again (the same object, judged the same, the rules
/// tuned the same, the alert's words said by this process) would make the same alert with the
/// same words: evaluated again from this, only the clock moves it.
#[derive(Clone, Debug)]
pub struct Held {
    pub(super) key: String,
    hold: std::time::Duration,
    escalate_after: Option<std::time::Duration>,
    urgent: bool,
}

/// What a look at a cycle hands the evaluation.
pub(super) struct Looked<'h> {
    /// Made at this look.
    pub observations: Vec<Observation>,
    /// Observed again as they were: their alerts' keys and timers.
    pub held: Vec<&'h Held>,
    /// Filled with what each of `observations` makes, in their order (None: turned off).
    pub made: Option<&'h mut Vec<Option<Held>>>,
}

impl RuleState {
    /// Evaluates `observations` at `now`. Only alerts whose rule is `in_scope` can resolve:
    /// a failed cycle evaluates the unreachable rule alone and leaves the others as they are.
    pub fn evaluate(
        &mut self,
        now: Timestamp,
        cluster: &str,
        observations: Vec<Observation>,
        in_scope: impl Fn(&Rule) -> bool,
    ) -> Vec<Transition> {
        self.evaluate_where(now, cluster, observations, &super::tune::AS_BUILT, |_| true, in_scope)
    }

    /// [`RuleState::evaluate`], where only the alerts `may_resolve` holds of can resolve.
    pub fn evaluate_where(
        &mut self,
        now: Timestamp,
        cluster: &str,
        observations: Vec<Observation>,
        tuning: &Tuning,
        may_resolve: impl Fn(&Alert) -> bool,
        in_scope: impl Fn(&Rule) -> bool,
    ) -> Vec<Transition> {
        let looked = Looked { observations, held: Vec::new(), made: None };
        self.evaluate_looked(now, cluster, looked, tuning, may_resolve, in_scope)
    }

    /// [`RuleState::evaluate_where`], with the alerts of observations made again (`held`),
    /// and what each observation makes kept in `made` when asked.
    pub(super) fn evaluate_looked(
        &mut self,
        now: Timestamp,
        cluster: &str,
        looked: Looked,
        tuning: &Tuning,
        may_resolve: impl Fn(&Alert) -> bool,
        in_scope: impl Fn(&Rule) -> bool,
    ) -> Vec<Transition> {
        let Looked { observations, held, mut made } = looked;
        let mut transitions = Vec::new();
        let mut seen: HashSet<Cow<'_, str>> = HashSet::with_capacity(held.len());
        let worded = self.worded.0;
        // Observed as they were when these were made: the alert is there, its words the same
        // (see `Held`), and only the clock moves it.
        for h in held {
            if let Some(alert) = self.alerts.get_mut(h.key.as_str()) {
                timers(alert, now, h.hold, h.escalate_after, h.urgent, &mut transitions);
                seen.insert(Cow::Borrowed(h.key.as_str()));
            }
        }
        for mut obs in observations {
            // An empty label is no label, as in Prometheus: a bare pod's alert has no `workload`.
            obs.labels.retain(|_, v| !v.is_empty());
            let key = alert_key(obs.rule.alertname, &obs.labels);
            let urgent = obs.escalate;
            // The file's `[[rule]]` for this alert, if one applies: an alert it turns off is not
            // seen (and so resolves); its hold, severity, escalation and labels replace the rule's.
            // The object's own severity, where the rule raises it by object.
            let own = obs.severity.unwrap_or(obs.rule.severity);
            let tuned = (!tuning.is_empty())
                .then(|| {
                    let mut labels = obs.labels.clone();
                    labels.insert("alertname".into(), obs.rule.alertname.into());
                    labels.insert("severity".into(), own.as_str().into());
                    labels.insert("cluster".into(), cluster.into());
                    tuning.applying(obs.rule, &labels)
                })
                .flatten();
            if tuned.is_some_and(|o| !o.enabled) {
                if let Some(made) = made.as_deref_mut() {
                    made.push(None);
                }
                continue;
            }
            let hold = tuned.map_or(obs.rule.hold, Override::hold);
            let severity = tuned.and_then(|o| o.severity).unwrap_or(own);
            let escalate_after = tuned.map_or(obs.rule.escalate_after, Override::escalate_after);
            if let Some(made) = made.as_deref_mut() {
                made.push(Some(Held { key: key.clone(), hold, escalate_after, urgent }));
            }
            let added = tuned.map(|o| &o.labels);
            let labelled = |severity: Severity| {
                let mut labels = obs.labels.clone();
                labels.extend(added.into_iter().flatten().map(|(k, v)| (k.clone(), v.clone())));
                labels.insert("alertname".into(), obs.rule.alertname.into());
                labels.insert("severity".into(), severity.as_str().into());
                labels.insert("cluster".into(), cluster.into());
                labels
            };
            // Pending: as the file says now, its start kept (also once the file no longer tunes
            // it: its severity or extra labels are the sign; untuned, nothing to redo).
            let retune =
                |a: &Alert| !tuning.is_empty() || a.severity != severity || a.labels.len() != obs.labels.len() + 3;
            if let Some(a) = self.alerts.get_mut(&key).filter(|a| !a.firing() && retune(a)) {
                let labels = labelled(severity);
                if a.severity != severity || a.labels != labels {
                    let a = Arc::make_mut(a);
                    a.severity = severity;
                    a.labels = labels;
                }
            }
            let alert = self.alerts.entry(key.clone()).or_insert_with(|| {
                let labels = labelled(severity);
                Arc::new(Alert {
                    alertname: obs.rule.alertname.into(),
                    severity,
                    labels,
                    summary: String::new(),
                    description: String::new(),
                    active_at: now,
                    fired_at: None,
                    escalated_at: None,
                    untold: false,
                    acknowledged: None,
                    told_labels: None,
                    said: None,
                    said_description: None,
                })
            });
            // Said again only when the words differ from those it holds (saying them is most
            // of an evaluation's cost while nothing changes).
            if !(worded && alert.said.as_ref().is_some_and(|m| m.is(obs.rule.words, ".summary", &obs.summary))) {
                let summary = Message::new(&format!("{}.summary", obs.rule.words), &obs.summary);
                let said = Lang::En.say(&summary);
                if alert.summary != said || alert.said.as_ref() != Some(&summary) {
                    let alert = Arc::make_mut(alert);
                    alert.summary = said;
                    alert.said = Some(summary);
                }
            }
            let same_description = if obs.description.is_verbatim() {
                alert.said_description.is_none() && Some(alert.description.as_str()) == obs.description.text()
            } else {
                alert.said_description.as_ref() == Some(&obs.description)
            };
            if !(worded && same_description) {
                let description = Lang::En.say(&obs.description);
                let said = (!obs.description.is_verbatim()).then_some(obs.description);
                if !description.is_empty() && (alert.description != description || alert.said_description != said) {
                    let alert = Arc::make_mut(alert);
                    alert.description = description;
                    alert.said_description = said;
                }
            }
            timers(alert, now, hold, escalate_after, urgent, &mut transitions);
            seen.insert(Cow::Owned(key));
        }
        let gone: Vec<String> = self
            .alerts
            .iter()
            .filter(|(k, a)| !seen.contains(k.as_str()) && in_scope(rule_of(&a.alertname)) && may_resolve(a))
            .map(|(k, _)| k.clone())
            .collect();
        for key in gone {
            let alert = self.alerts.remove(&key).expect("listed above");
            if alert.firing() {
                transitions.push(Transition {
                    time: now,
                    state: TransitionState::Resolved,
                    alert: Arc::unwrap_or_clone(alert),
                    previous_labels: None,
                });
            }
        }
        // Every alert left was seen, and so said, by this process.
        if self.alerts.len() == seen.len() {
            self.worded = Worded(true);
        }
        self.last_cycle = Some(now);
        transitions.sort_by(|a, b| {
            (a.state, &a.alert.alertname, &a.alert.labels).cmp(&(b.state, &b.alert.alertname, &b.alert.labels))
        });
        transitions
    }
}
