//! Grouping and reminders, with Alertmanager's meanings, for the notifiers that group (every
//! kind but `alertmanager`, which groups itself; a `webhook` only with `group_by`).
//!
//! A cycle's changes join their group (the alerts with the same `group_by` labels). A new group
//! is told `group_wait` after its first change, with every change that came meanwhile in one
//! message; after a message, what changes is told at most every `group_interval`; and when
//! nothing changed for `repeat_interval`, the alerts that still fire are told again, except
//! those acknowledged or muted. Acknowledgements are told at once, alone.
//!
//! The timers are a cluster's, kept in its rules' state ([`NoticeGroup`]) and read at its cycles:
//! what is due goes at the first cycle from then on (a second early still counts), so a timer
//! ends at most one interval late. A group never spans two clusters.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use super::Notifier;
use crate::config::{GroupBy, Grouping};
use crate::rules::{Alert, NoticeGroup, NoticeGroups, Transition, TransitionState};
use crate::silence::Quiet;

/// How early a cycle may come and still be the one a timer is due at.
const JITTER: Duration = Duration::from_secs(1);

/// One message's worth of a group, as a notifier's kind makes its bodies of it.
#[derive(Clone, Copy, Debug)]
pub struct Told<'a> {
    /// The group's key (Alertmanager's `groupKey`).
    pub key: &'a str,
    /// The labels its alerts share.
    pub labels: &'a BTreeMap<String, String>,
    /// When its first change came (an email thread's start).
    pub since: Timestamp,
    /// Its first message.
    pub first: bool,
    /// Now.
    pub at: Timestamp,
    /// What it tells, one transition per alert, in the order the changes came.
    pub transitions: &'a [Transition],
}

/// The labels that group `labels` and the group's key: `{}:{cluster="lab"}`, as Alertmanager
/// writes its keys.
pub fn group_of(by: &GroupBy, labels: &BTreeMap<String, String>) -> (String, BTreeMap<String, String>) {
    let shared: BTreeMap<String, String> = match by {
        GroupBy::Each => labels.clone(),
        GroupBy::Labels(names) => names.iter().filter_map(|n| labels.get(n).map(|v| (n.clone(), v.clone()))).collect(),
    };
    let inner: Vec<String> = shared.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    (format!("{{}}:{{{}}}", inner.join(",")), shared)
}

/// What a cycle's transitions (already told of silences and windows) make for every notifier:
/// those that group see them join their groups, and are sent what their groups' timers let go
/// at `now`; the others are sent each change as before. `alerts` are the cluster's, `quiet`
/// what mutes them now, `period` the cluster's interval (its firing alerts are re-sent that
/// often, and timers are read that often).
pub fn bodies(
    notifiers: &[Notifier],
    groups: &mut NoticeGroups,
    told: &[Transition],
    alerts: &BTreeMap<String, std::sync::Arc<Alert>>,
    quiet: &Quiet,
    now: Timestamp,
    period: Duration,
) -> Vec<(String, String)> {
    groups.retain(|name, _| notifiers.iter().any(|n| &n.name == name && n.grouping.is_some()));
    let routed = super::route(notifiers, told);
    // The alerts the notifiers were told and that still fire, each with whether a routed
    // notifier's matchers claim it: what reminders are made of.
    let still: Vec<(&Alert, bool)> = alerts
        .values()
        .filter(|a| a.firing() && !a.untold)
        .map(|a| (&**a, super::claimed(notifiers, &a.labels)))
        .collect();
    let mut out = Vec::new();
    for (n, mine) in notifiers.iter().zip(routed) {
        let Some(g) = &n.grouping else {
            if !mine.is_empty() {
                let mine: Vec<Transition> = mine.into_iter().cloned().collect();
                out.extend(n.bodies(&mine, period).into_iter().map(|b| (n.name.clone(), b)));
            }
            continue;
        };
        let (acks, changes): (Vec<&Transition>, Vec<&Transition>) =
            mine.into_iter().partition(|t| t.state == TransitionState::Acknowledged);
        if !acks.is_empty() {
            let acks: Vec<Transition> = acks.into_iter().cloned().collect();
            out.extend(n.bodies(&acks, period).into_iter().map(|b| (n.name.clone(), b)));
        }
        let firing: Vec<&Alert> = still.iter().filter(|(a, claimed)| n.tells(a, *claimed)).map(|(a, _)| *a).collect();
        let groups = groups.entry(n.name.clone()).or_default();
        for body in step(g, groups, &changes, &firing, quiet, now, period)
            .iter()
            .flat_map(|m| n.sink.group_bodies(&n.name, &m.told(), period, n.voice()))
        {
            out.push((n.name.clone(), body));
        }
    }
    groups.retain(|_, g| !g.is_empty());
    out
}

/// A message a group's timers let go, its transitions owned.
#[derive(Debug)]
struct Message {
    key: String,
    labels: BTreeMap<String, String>,
    since: Timestamp,
    first: bool,
    at: Timestamp,
    transitions: Vec<Transition>,
}

impl Message {
    fn told(&self) -> Told<'_> {
        Told {
            key: &self.key,
            labels: &self.labels,
            since: self.since,
            first: self.first,
            at: self.at,
            transitions: &self.transitions,
        }
    }
}

/// One notifier's groups at a cycle: the changes join them, and what is due goes. `firing` are
/// the alerts it was told and that still fire. Pure: the cycle's time is `now`.
fn step(
    g: &Grouping,
    groups: &mut BTreeMap<String, NoticeGroup>,
    changes: &[&Transition],
    firing: &[&Alert],
    quiet: &Quiet,
    now: Timestamp,
    period: Duration,
) -> Vec<Message> {
    for t in changes {
        let (key, labels) = group_of(&g.by, &t.alert.labels);
        let group = groups.entry(key).or_insert_with(|| NoticeGroup {
            labels,
            since: now,
            due: now + g.wait,
            told_at: None,
            pending: Vec::new(),
        });
        group.pending.push((*t).clone());
    }
    // A cycle a hair early (a ticker's jitter) still counts.
    let soon = now + SignedDuration::try_from(JITTER.min(period / 2)).unwrap_or(SignedDuration::ZERO);
    let mut still: BTreeMap<String, Vec<&Alert>> = BTreeMap::new();
    for a in firing {
        still.entry(group_of(&g.by, &a.as_told().labels).0).or_default().push(a);
    }
    let mut out = Vec::new();
    for (key, group) in groups.iter_mut() {
        if !group.pending.is_empty() && group.due <= soon {
            out.push(Message {
                key: key.clone(),
                labels: group.labels.clone(),
                since: group.since,
                first: group.told_at.is_none(),
                at: now,
                transitions: last_of_each(std::mem::take(&mut group.pending)),
            });
            group.told_at = Some(now);
            group.due = now + g.interval;
        } else if let (Some(repeat), Some(told_at), true) = (g.repeat, group.told_at, group.pending.is_empty())
            && told_at + repeat <= soon
        {
            // What still fires, but what someone is on or what is muted now.
            let reminded: Vec<Transition> = still
                .get(key)
                .into_iter()
                .flatten()
                .filter(|a| a.acknowledged.is_none() && !quiet.mutes(now, &a.labels))
                .map(|a| Transition {
                    time: now,
                    state: TransitionState::Reminder,
                    alert: a.as_told(),
                    previous_labels: None,
                })
                .collect();
            if !reminded.is_empty() {
                out.push(Message {
                    key: key.clone(),
                    labels: group.labels.clone(),
                    since: group.since,
                    first: false,
                    at: now,
                    transitions: reminded,
                });
            }
            // Told or not, the next reminder is a whole `repeat_interval` away: an alert whose
            // silence ends is told then by its group, not twice.
            group.told_at = Some(now);
        }
    }
    // A group whose alerts all resolved, and that has nothing left to tell, ends.
    groups.retain(|key, group| !group.pending.is_empty() || still.contains_key(key));
    out
}

/// The last change of each alert (a firing and its resolution in one message is its
/// resolution), in the order the alerts first changed.
fn last_of_each(pending: Vec<Transition>) -> Vec<Transition> {
    let mut order: Vec<String> = Vec::new();
    let mut last: BTreeMap<String, Transition> = BTreeMap::new();
    for t in pending {
        let key = crate::rules::engine::key_of(&t.alert);
        if !last.contains_key(&key) {
            order.push(key.clone());
        }
        last.insert(key, t);
    }
    order.into_iter().filter_map(|k| last.remove(&k)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::payload::tests::alert;

    const PERIOD: Duration = Duration::from_secs(30);

    fn grouping(repeat: Option<u64>) -> Grouping {
        Grouping {
            by: GroupBy::Labels(vec!["cluster".into()]),
            wait: Duration::from_secs(30),
            interval: Duration::from_secs(300),
            repeat: repeat.map(Duration::from_secs),
        }
    }

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + s).unwrap()
    }

    fn pod(name: &str, cluster: &str) -> Alert {
        let mut a = alert();
        a.labels.insert("pod".into(), name.into());
        a.labels.insert("cluster".into(), cluster.into());
        a.summary = format!("Pod shop/{name} is crash-looping");
        a
    }

    fn change(state: TransitionState, a: &Alert, s: i64) -> Transition {
        Transition { time: at(s), state, alert: a.clone(), previous_labels: None }
    }

    /// The notifier's groups stepped at `s` with these changes and these alerts still firing:
    /// each message's (group key, [what changed, pod]).
    fn step_at(
        g: &Grouping,
        groups: &mut BTreeMap<String, NoticeGroup>,
        changes: &[Transition],
        firing: &[Alert],
        quiet: &Quiet,
        s: i64,
    ) -> Vec<(String, Vec<(TransitionState, String)>)> {
        let changes: Vec<&Transition> = changes.iter().collect();
        let firing: Vec<&Alert> = firing.iter().collect();
        step(g, groups, &changes, &firing, quiet, at(s), PERIOD)
            .into_iter()
            .map(|m| (m.key, m.transitions.iter().map(|t| (t.state, t.alert.labels["pod"].clone())).collect()))
            .collect()
    }

    #[test]
    fn five_alerts_of_one_cycle_are_one_message_after_group_wait() {
        let g = grouping(None);
        let mut groups = BTreeMap::new();
        let pods: Vec<Alert> = (1..=5).map(|i| pod(&format!("api-{i}"), "lab")).collect();
        let fired: Vec<Transition> = pods.iter().map(|a| change(TransitionState::Firing, a, 0)).collect();
        let q = Quiet::default();
        assert!(step_at(&g, &mut groups, &fired, &pods, &q, 0).is_empty(), "group_wait holds the first message");
        let sent = step_at(&g, &mut groups, &[], &pods, &q, 30);
        assert_eq!(sent.len(), 1, "{sent:?}");
        assert_eq!(sent[0].0, r#"{}:{cluster="lab"}"#);
        assert_eq!(sent[0].1.len(), 5);
        assert!(sent[0].1.iter().all(|(s, _)| *s == TransitionState::Firing));
        // A sixth alert 30 s later waits for group_interval after that message.
        let sixth = pod("api-6", "lab");
        let now_firing: Vec<Alert> = pods.iter().cloned().chain([sixth.clone()]).collect();
        let fired = [change(TransitionState::Firing, &sixth, 60)];
        assert!(step_at(&g, &mut groups, &fired, &now_firing, &q, 60).is_empty());
        assert!(step_at(&g, &mut groups, &[], &now_firing, &q, 300).is_empty(), "group_interval not past");
        assert_eq!(
            step_at(&g, &mut groups, &[], &now_firing, &q, 330),
            [(r#"{}:{cluster="lab"}"#.to_string(), vec![(TransitionState::Firing, "api-6".to_string())])]
        );
    }

    #[test]
    fn a_firing_and_its_resolution_in_one_wait_are_its_resolution_and_the_group_ends_when_all_resolve() {
        let g = grouping(Some(4 * 3600));
        let mut groups = BTreeMap::new();
        let (a, b) = (pod("a", "lab"), pod("b", "lab"));
        let q = Quiet::default();
        step_at(&g, &mut groups, &[change(TransitionState::Firing, &a, 0)], std::slice::from_ref(&a), &q, 0);
        let sent = step_at(&g, &mut groups, &[change(TransitionState::Resolved, &a, 10)], &[], &q, 10);
        assert!(sent.is_empty());
        let sent =
            step_at(&g, &mut groups, &[change(TransitionState::Firing, &b, 20)], std::slice::from_ref(&b), &q, 20);
        assert!(sent.is_empty());
        let sent = step_at(&g, &mut groups, &[], std::slice::from_ref(&b), &q, 30);
        assert_eq!(sent[0].1, [(TransitionState::Resolved, "a".into()), (TransitionState::Firing, "b".into())]);
        assert_eq!(groups.len(), 1);
        let sent = step_at(&g, &mut groups, &[change(TransitionState::Resolved, &b, 330)], &[], &q, 330);
        assert_eq!(sent[0].1, [(TransitionState::Resolved, "b".into())]);
        assert!(groups.is_empty(), "nothing fires, nothing to tell: the group ends");
    }

    #[test]
    fn what_still_fires_is_told_again_after_repeat_interval_but_not_when_acknowledged_or_silenced() {
        let g = grouping(Some(3600));
        let mut groups = BTreeMap::new();
        let (a, mut b) = (pod("a", "lab"), pod("b", "lab"));
        let q = Quiet::default();
        let fired = [change(TransitionState::Firing, &a, 0), change(TransitionState::Firing, &b, 0)];
        step_at(&g, &mut groups, &fired, &[a.clone(), b.clone()], &q, 0);
        assert_eq!(step_at(&g, &mut groups, &[], &[a.clone(), b.clone()], &q, 30).len(), 1);
        assert!(step_at(&g, &mut groups, &[], &[a.clone(), b.clone()], &q, 3600).is_empty(), "not yet");
        // b is acknowledged: a alone is told again, an hour after the message.
        b.acknowledged =
            Some(crate::rules::Acknowledgement { by: "admin".into(), at: at(100), comment: String::new() });
        let firing = [a.clone(), b.clone()];
        assert_eq!(
            step_at(&g, &mut groups, &[], &firing, &q, 3630),
            [(r#"{}:{cluster="lab"}"#.to_string(), vec![(TransitionState::Reminder, "a".to_string())])]
        );
        // Then a is silenced: nothing is told, and the next reminder is an hour later still.
        let silence = crate::silence::Silence {
            id: "s".into(),
            matchers: vec![crate::silence::Matcher::parse(r#"pod="a""#).unwrap()],
            starts_at: None,
            ends_at: Some(at(7300)),
            updated_at: None,
            comment: String::new(),
            created_by: String::new(),
            from_file: false,
        };
        let quiet = Quiet { silences: vec![silence], windows: Vec::new() };
        assert!(step_at(&g, &mut groups, &[], &firing, &quiet, 7230).is_empty());
        assert!(step_at(&g, &mut groups, &[], &firing, &q, 7260).is_empty(), "the silence's end is not told twice");
        assert_eq!(step_at(&g, &mut groups, &[], &firing, &q, 10830).len(), 1);
    }

    #[test]
    fn groups_are_made_of_group_by_labels_and_three_dots_make_one_per_alert() {
        let a = pod("a", "lab");
        let by_ns = GroupBy::Labels(vec!["cluster".into(), "namespace".into()]);
        let (key, labels) = group_of(&by_ns, &a.labels);
        assert_eq!(key, r#"{}:{cluster="lab"}"#, "a label the alert lacks is left out");
        assert_eq!(labels.len(), 1);
        let (each_a, _) = group_of(&GroupBy::Each, &a.labels);
        let (each_b, _) = group_of(&GroupBy::Each, &pod("b", "lab").labels);
        assert_ne!(each_a, each_b);
    }
}
