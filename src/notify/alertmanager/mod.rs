//! The Alertmanager notifier: the v2 API's postable alerts, one POST per cycle to
//! `url/api/v2/alerts`, the firing alerts re-sent as Alertmanager expects, and the home of
//! silences (`silences`). Alertmanager drops repeats by their labels, so replicas may all send.

pub mod silences;

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde_json::{Value, json};

use std::time::Duration;

use super::payload::{Voice, annotations, starts_at, watchdog_annotations, watchdog_labels};
use super::{Sink, holds_until};
use crate::config::NotifierKind;
use crate::lang::Lang;
use crate::rules::{Alert, Transition, TransitionState};

/// Where alerts are posted, under the configured URL.
const ALERTS: &str = "/api/v2/alerts";

/// The Alertmanager notifier (`type = "alertmanager"`).
pub struct Alertmanager;

impl Sink for Alertmanager {
    fn kind(&self) -> NotifierKind {
        NotifierKind::Alertmanager
    }

    fn endpoint(&self, url: &str) -> String {
        format!("{url}{ALERTS}")
    }

    fn base<'a>(&self, endpoint: &'a str) -> &'a str {
        endpoint.strip_suffix(ALERTS).unwrap_or(endpoint)
    }

    fn bodies(
        &self,
        _receiver: &str,
        transitions: &[Transition],
        resent_every: Duration,
        voice: Voice<'_>,
    ) -> Vec<String> {
        cycle(transitions, resent_every, voice).into_iter().collect()
    }

    /// Alertmanager is told the watchdog ends three heartbeats later, so that it resolves by
    /// itself when the monitor stops.
    fn heartbeat_body(&self, _receiver: &str, now: Timestamp, every: Duration, lang: Lang) -> Option<String> {
        Some(watchdog(now, every * 3, lang))
    }

    fn resend(&self, firing: &mut dyn Iterator<Item = (&Alert, Timestamp)>, voice: Voice<'_>) -> Option<String> {
        let alerts: Vec<Value> = firing
            .map(|(a, ends)| postable(&a.labels, a, a.escalated_at.unwrap_or(starts_at(a)), ends, voice))
            .collect();
        (!alerts.is_empty()).then(|| Value::Array(alerts).to_string())
    }

    fn deduplicates(&self) -> bool {
        true
    }

    fn keeps_silences(&self) -> bool {
        true
    }
}

/// The heartbeat for Alertmanager: the watchdog alert, ending `lasts` from now unless sent again.
pub fn watchdog(now: Timestamp, lasts: Duration, lang: Lang) -> String {
    let ends = jiff::SignedDuration::try_from(lasts).ok().and_then(|d| now.checked_add(d).ok()).unwrap_or(now);
    json!([{
        "labels": watchdog_labels(),
        "annotations": watchdog_annotations(lang),
        "startsAt": now.to_string(),
        "endsAt": ends.to_string(),
        "generatorURL": "",
    }])
    .to_string()
}

/// One alert as the v2 API takes it. `endsAt` is always given: Alertmanager, given none, ends a
/// firing alert `resolve_timeout` after its own now, and refuses it outright (400, "start time
/// must be before end time") when the sender's clock is further ahead than that.
fn postable(
    labels: &BTreeMap<String, String>,
    a: &Alert,
    starts: Timestamp,
    ends: Timestamp,
    voice: Voice<'_>,
) -> Value {
    json!({
        "labels": labels,
        "annotations": annotations(a, voice),
        "startsAt": starts.to_string(),
        "endsAt": ends.to_string(),
        "generatorURL": "",
    })
}

/// The Alertmanager v2 body for a cycle's transitions: firing alerts ending four re-send periods
/// later ([`holds_until`]) unless sent again, resolved ones ended at their resolution; an
/// escalation ends the alert under its old labels and starts it under the new.
pub fn cycle(transitions: &[Transition], resent_every: Duration, voice: Voice<'_>) -> Option<String> {
    let mut alerts = Vec::new();
    for t in transitions {
        let a = &t.alert;
        let holds = holds_until(t.time, resent_every);
        match t.state {
            // Acknowledged: the same alert again, its annotations saying who is on it.
            TransitionState::Firing | TransitionState::Acknowledged | TransitionState::Reminder => {
                alerts.push(postable(&a.labels, a, a.escalated_at.unwrap_or(starts_at(a)), holds, voice))
            }
            TransitionState::Resolved => alerts.push(postable(&a.labels, a, starts_at(a), t.time, voice)),
            TransitionState::Escalated => {
                if let Some(old) = &t.previous_labels {
                    alerts.push(postable(old, a, starts_at(a), t.time, voice));
                }
                alerts.push(postable(&a.labels, a, a.escalated_at.unwrap_or(t.time), holds, voice));
            }
        }
    }
    (!alerts.is_empty()).then(|| Value::Array(alerts).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const EN: Voice<'static> = Voice {
        lang: Lang::En,
        runbooks: "https://dumbmonit.example.com/runbooks/en",
        pages: "https://dumbmonit.example.com",
    };
    const MINUTE: Duration = Duration::from_secs(60);
    use crate::notify::payload::tests::{acknowledged, alert};

    #[test]
    fn an_escalation_ends_the_old_labels_and_starts_the_new() {
        let mut a = alert();
        let old = a.labels.clone();
        a.labels.insert("severity".into(), "warning".into());
        a.escalated_at = Some("2026-11-30T04:10:00Z".parse().unwrap());
        let mut old_notice = old.clone();
        old_notice.insert("severity".into(), "notice".into());
        let t = Transition {
            time: "2026-11-30T04:10:00Z".parse().unwrap(),
            state: TransitionState::Escalated,
            alert: a,
            previous_labels: Some(old_notice),
        };
        let v: Value = serde_json::from_str(&cycle(&[t], MINUTE, EN).unwrap()).unwrap();
        assert_eq!(v[0]["labels"]["severity"], "notice");
        assert_eq!(v[0]["endsAt"], "2026-11-30T04:10:00Z");
        assert_eq!(v[1]["labels"]["severity"], "warning");
        assert_eq!(v[1]["startsAt"], "2026-11-30T04:10:00Z");
        assert_eq!(v[1]["endsAt"], "2026-11-30T04:14:00Z", "four re-send periods on");
        assert_eq!(cycle(&[], MINUTE, EN), None);
    }

    #[test]
    fn an_acknowledgement_is_told_as_the_same_alert_with_who_is_on_it() {
        let t = acknowledged();
        let am: Value = serde_json::from_str(&cycle(std::slice::from_ref(&t), MINUTE, EN).unwrap()).unwrap();
        assert_eq!(am[0]["startsAt"], "2026-11-30T03:10:00Z", "the same alert");
        assert_eq!(am[0]["annotations"]["acknowledged_by"], "admin token");
        let told: Timestamp = t.time;
        assert_eq!(am[0]["endsAt"], (told + jiff::SignedDuration::from_mins(4)).to_string());
    }

    #[test]
    fn a_firing_alert_ends_after_the_start_whatever_the_clocks() {
        // An acknowledgement (told firing again) and a resolution of an alert that started at
        // 03:10, re-sent every 30 s: each ends after it starts, so a receiver whose clock is
        // hours behind takes them all.
        let firing = acknowledged();
        let mut resolved = firing.clone();
        resolved.state = TransitionState::Resolved;
        let v: Value = serde_json::from_str(&cycle(&[firing, resolved], Duration::from_secs(30), EN).unwrap()).unwrap();
        for a in v.as_array().unwrap() {
            let starts: Timestamp = a["startsAt"].as_str().unwrap().parse().unwrap();
            let ends: Timestamp = a["endsAt"].as_str().unwrap().parse().unwrap();
            assert!(starts < ends, "{a}");
        }
        let resent: Value = serde_json::from_str(
            &Alertmanager.resend(&mut [(&alert(), "2026-11-30T05:00:00Z".parse().unwrap())].into_iter(), EN).unwrap(),
        )
        .unwrap();
        assert_eq!(resent[0]["endsAt"], "2026-11-30T05:00:00Z");
        let at: Timestamp = "2026-11-30T05:00:00Z".parse().unwrap();
        assert_eq!(holds_until(at, Duration::from_secs(30)).to_string(), "2026-11-30T05:04:00Z", "a minute at least");
        assert_eq!(holds_until(at, Duration::from_secs(300)).to_string(), "2026-11-30T05:20:00Z");
        assert_eq!(holds_until(Timestamp::MAX, MINUTE), Timestamp::MAX);
    }

    #[test]
    fn its_other_paths_are_beside_its_alerts() {
        assert_eq!(Alertmanager.endpoint("http://am:9093/p"), "http://am:9093/p/api/v2/alerts");
        assert_eq!(Alertmanager.base("http://am:9093/p/api/v2/alerts"), "http://am:9093/p");
    }
}
