//! The Alertmanager notifier: the v2 API's postable alerts, one POST per cycle to
//! `url/api/v2/alerts`, the firing alerts re-sent as Alertmanager expects, and the home of
//! silences (`silences`). Alertmanager drops repeats by their labels, so replicas may all send.

pub mod silences;

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde_json::{Value, json};

use super::Sink;
use super::payload::{Voice, annotations, starts_at, watchdog_annotations, watchdog_labels};
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

    fn bodies(&self, _receiver: &str, transitions: &[Transition], voice: Voice<'_>) -> Vec<String> {
        cycle(transitions, voice).into_iter().collect()
    }

    /// Alertmanager is told the watchdog ends three heartbeats later, so that it resolves by
    /// itself when the monitor stops.
    fn heartbeat_body(&self, _receiver: &str, now: Timestamp, every: std::time::Duration, lang: Lang) -> String {
        watchdog(now, every * 3, lang)
    }

    fn resend(&self, firing: &mut dyn Iterator<Item = &Alert>, voice: Voice<'_>) -> Option<String> {
        let alerts: Vec<Value> =
            firing.map(|a| postable(&a.labels, a, a.escalated_at.unwrap_or(starts_at(a)), None, voice)).collect();
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
pub fn watchdog(now: Timestamp, lasts: std::time::Duration, lang: Lang) -> String {
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

fn postable(
    labels: &BTreeMap<String, String>,
    a: &Alert,
    starts: Timestamp,
    ends: Option<Timestamp>,
    voice: Voice<'_>,
) -> Value {
    let mut v = json!({
        "labels": labels,
        "annotations": annotations(a, voice),
        "startsAt": starts.to_string(),
        "generatorURL": "",
    });
    if let Some(e) = ends {
        v["endsAt"] = json!(e.to_string());
    }
    v
}

/// The Alertmanager v2 body for a cycle's transitions: firing alerts without an end, resolved
/// ones ended now; an escalation ends the alert under its old labels and starts it under the new.
pub fn cycle(transitions: &[Transition], voice: Voice<'_>) -> Option<String> {
    let mut alerts = Vec::new();
    for t in transitions {
        let a = &t.alert;
        match t.state {
            // Acknowledged: the same alert again, its annotations saying who is on it.
            TransitionState::Firing | TransitionState::Acknowledged => {
                alerts.push(postable(&a.labels, a, a.escalated_at.unwrap_or(starts_at(a)), None, voice))
            }
            TransitionState::Resolved => alerts.push(postable(&a.labels, a, starts_at(a), Some(t.time), voice)),
            TransitionState::Escalated => {
                if let Some(old) = &t.previous_labels {
                    alerts.push(postable(old, a, starts_at(a), Some(t.time), voice));
                }
                alerts.push(postable(&a.labels, a, a.escalated_at.unwrap_or(t.time), None, voice));
            }
        }
    }
    (!alerts.is_empty()).then(|| Value::Array(alerts).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const EN: Voice<'static> = Voice { lang: Lang::En, runbooks: "https://dumbmonit.example.com/runbooks/en" };
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
        let v: Value = serde_json::from_str(&cycle(&[t], EN).unwrap()).unwrap();
        assert_eq!(v[0]["labels"]["severity"], "notice");
        assert_eq!(v[0]["endsAt"], "2026-11-30T04:10:00Z");
        assert_eq!(v[1]["labels"]["severity"], "warning");
        assert!(v[1].get("endsAt").is_none());
        assert_eq!(cycle(&[], EN), None);
    }

    #[test]
    fn an_acknowledgement_is_told_as_the_same_alert_with_who_is_on_it() {
        let t = acknowledged();
        let am: Value = serde_json::from_str(&cycle(std::slice::from_ref(&t), EN).unwrap()).unwrap();
        assert_eq!(am[0]["startsAt"], "2026-11-30T03:10:00Z", "the same alert");
        assert_eq!(am[0]["annotations"]["acknowledged_by"], "admin token");
        assert!(am[0].get("endsAt").is_none());
    }

    #[test]
    fn its_other_paths_are_beside_its_alerts() {
        assert_eq!(Alertmanager.endpoint("http://am:9093/p"), "http://am:9093/p/api/v2/alerts");
        assert_eq!(Alertmanager.base("http://am:9093/p/api/v2/alerts"), "http://am:9093/p");
    }
}
