//! What is sent: the Alertmanager webhook payload (version 4) and the Alertmanager v2 API's
//! postable alerts.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::lang::Lang;
use crate::rules::{Alert, Transition, TransitionState};

/// Alertmanager's zero time, for an alert that has not ended.
const ZERO_TIME: &str = "0001-01-01T00:00:00Z";

/// The heartbeat's alert: always firing, severity `none`, never silenced.
pub const WATCHDOG: &str = "DumbMonitWatchdog";

fn watchdog_labels() -> BTreeMap<String, String> {
    BTreeMap::from([("alertname".to_string(), WATCHDOG.to_string()), ("severity".to_string(), "none".to_string())])
}

fn watchdog_annotations(lang: Lang) -> Value {
    json!({
        "summary": lang.t("watchdog.summary"),
        "description": lang.t("watchdog.description"),
    })
}

/// The heartbeat for a webhook: a payload like any other, with the firing watchdog alert.
pub fn watchdog_webhook(receiver: &str, now: Timestamp, lang: Lang) -> String {
    let labels = watchdog_labels();
    json!({
        "version": "4",
        "groupKey": format!("{{}}:{{alertname={WATCHDOG:?}}}"),
        "truncatedAlerts": 0,
        "status": "firing",
        "receiver": receiver,
        "groupLabels": {"alertname": WATCHDOG},
        "commonLabels": labels,
        "commonAnnotations": watchdog_annotations(lang),
        "externalURL": "",
        "alerts": [{
            "status": "firing",
            "labels": labels,
            "annotations": watchdog_annotations(lang),
            "startsAt": now.to_string(),
            "endsAt": ZERO_TIME,
            "generatorURL": "",
            "fingerprint": fingerprint(&labels),
        }],
    })
    .to_string()
}

/// The heartbeat for Alertmanager: the watchdog alert, ending `lasts` from now unless sent again.
pub fn watchdog_alertmanager(now: Timestamp, lasts: std::time::Duration, lang: Lang) -> String {
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

/// The FNV-1a fingerprint of a label set, as Prometheus computes it (hex, 16 digits).
pub fn fingerprint(labels: &BTreeMap<String, String>) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for (k, v) in labels {
        for b in k.bytes().chain([0xff]).chain(v.bytes()).chain([0xff]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    format!("{h:016x}")
}

/// The summary (in the notifier's language) and the description; for an acknowledged alert,
/// who acknowledged it, when and why (`acknowledged_by`, `acknowledged_at`,
/// `acknowledged_comment`).
fn annotations(a: &Alert, lang: Lang) -> Value {
    let mut v = json!({"summary": a.summary_in(lang), "description": a.description_in(lang)});
    if let Some(ack) = &a.acknowledged {
        v["acknowledged_by"] = json!(ack.by);
        v["acknowledged_at"] = json!(ack.at.to_string());
        v["acknowledged_comment"] = json!(ack.comment);
    }
    v
}

fn starts_at(a: &Alert) -> Timestamp {
    a.fired_at.unwrap_or(a.active_at)
}

/// One webhook payload for one transition.
pub fn webhook(receiver: &str, t: &Transition, lang: Lang) -> String {
    let a = &t.alert;
    let (status, ends_at) = match t.state {
        TransitionState::Firing | TransitionState::Escalated | TransitionState::Acknowledged => {
            ("firing", ZERO_TIME.to_string())
        }
        TransitionState::Resolved => ("resolved", t.time.to_string()),
    };
    json!({
        "version": "4",
        "groupKey": format!("{{}}:{{alertname={:?}}}", a.alertname),
        "truncatedAlerts": 0,
        "status": status,
        "receiver": receiver,
        "groupLabels": {"alertname": a.alertname},
        "commonLabels": a.labels,
        "commonAnnotations": annotations(a, lang),
        "externalURL": "",
        "alerts": [{
            "status": status,
            "labels": a.labels,
            "annotations": annotations(a, lang),
            "startsAt": starts_at(a).to_string(),
            "endsAt": ends_at,
            "generatorURL": "",
            "fingerprint": fingerprint(&a.labels),
        }],
    })
    .to_string()
}

fn postable(
    labels: &BTreeMap<String, String>,
    a: &Alert,
    starts: Timestamp,
    ends: Option<Timestamp>,
    lang: Lang,
) -> Value {
    let mut v = json!({
        "labels": labels,
        "annotations": annotations(a, lang),
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
pub fn alertmanager(transitions: &[Transition], lang: Lang) -> Option<String> {
    let mut alerts = Vec::new();
    for t in transitions {
        let a = &t.alert;
        match t.state {
            // Acknowledged: the same alert again, its annotations saying who is on it.
            TransitionState::Firing | TransitionState::Acknowledged => {
                alerts.push(postable(&a.labels, a, a.escalated_at.unwrap_or(starts_at(a)), None, lang))
            }
            TransitionState::Resolved => alerts.push(postable(&a.labels, a, starts_at(a), Some(t.time), lang)),
            TransitionState::Escalated => {
                if let Some(old) = &t.previous_labels {
                    alerts.push(postable(old, a, starts_at(a), Some(t.time), lang));
                }
                alerts.push(postable(&a.labels, a, a.escalated_at.unwrap_or(t.time), None, lang));
            }
        }
    }
    (!alerts.is_empty()).then(|| Value::Array(alerts).to_string())
}

/// The firing alerts again, as Alertmanager expects active alerts to be re-sent.
pub fn alertmanager_resend<'a>(firing: impl Iterator<Item = &'a Alert>, lang: Lang) -> Option<String> {
    let alerts: Vec<Value> =
        firing.map(|a| postable(&a.labels, a, a.escalated_at.unwrap_or(starts_at(a)), None, lang)).collect();
    (!alerts.is_empty()).then(|| Value::Array(alerts).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Severity;

    fn alert() -> Alert {
        Alert {
            alertname: "KubernetesPodCrashLooping".into(),
            severity: Severity::Warning,
            labels: BTreeMap::from([
                ("alertname".into(), "KubernetesPodCrashLooping".into()),
                ("severity".into(), "warning".into()),
                ("pod".into(), "x\"<script>".into()),
            ]),
            summary: "Pod shop/x is crash-looping".into(),
            description: "app: \"quoted\" </script>".into(),
            active_at: "2026-11-30T03:00:00Z".parse().unwrap(),
            fired_at: Some("2026-11-30T03:10:00Z".parse().unwrap()),
            escalated_at: None,
            untold: false,
            acknowledged: None,
            told_labels: None,
            said: None,
            said_description: None,
        }
    }

    #[test]
    fn the_webhook_payload_is_alertmanagers() {
        let t = Transition {
            time: "2026-11-30T03:20:00Z".parse().unwrap(),
            state: TransitionState::Resolved,
            alert: alert(),
            previous_labels: None,
        };
        let v: Value = serde_json::from_str(&webhook("hook", &t, Lang::En)).unwrap();
        assert_eq!(v["version"], "4");
        assert_eq!(v["status"], "resolved");
        assert_eq!(v["receiver"], "hook");
        assert_eq!(v["alerts"][0]["startsAt"], "2026-11-30T03:10:00Z");
        assert_eq!(v["alerts"][0]["endsAt"], "2026-11-30T03:20:00Z");
        assert_eq!(v["alerts"][0]["labels"]["pod"], "x\"<script>", "JSON-escaped, intact");
        assert_eq!(v["alerts"][0]["annotations"]["description"], "app: \"quoted\" </script>");
        assert_eq!(v["alerts"][0]["fingerprint"].as_str().unwrap().len(), 16);
    }

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
        let v: Value = serde_json::from_str(&alertmanager(&[t], Lang::En).unwrap()).unwrap();
        assert_eq!(v[0]["labels"]["severity"], "notice");
        assert_eq!(v[0]["endsAt"], "2026-11-30T04:10:00Z");
        assert_eq!(v[1]["labels"]["severity"], "warning");
        assert!(v[1].get("endsAt").is_none());
        assert_eq!(alertmanager(&[], Lang::En), None);
    }

    #[test]
    fn an_acknowledgement_is_told_as_the_same_alert_with_who_is_on_it() {
        let mut a = alert();
        a.acknowledged = Some(crate::rules::Acknowledgement {
            by: "admin token".into(),
            at: "2026-11-30T03:15:00Z".parse().unwrap(),
            comment: "on it".into(),
        });
        let t = Transition {
            time: "2026-11-30T03:15:00Z".parse().unwrap(),
            state: TransitionState::Acknowledged,
            alert: a,
            previous_labels: None,
        };
        let hook: Value = serde_json::from_str(&webhook("hook", &t, Lang::En)).unwrap();
        assert_eq!(hook["status"], "firing");
        assert_eq!(hook["alerts"][0]["annotations"]["acknowledged_by"], "admin token");
        assert_eq!(hook["alerts"][0]["annotations"]["acknowledged_comment"], "on it");
        let am: Value = serde_json::from_str(&alertmanager(std::slice::from_ref(&t), Lang::En).unwrap()).unwrap();
        assert_eq!(am[0]["startsAt"], "2026-11-30T03:10:00Z", "the same alert");
        assert_eq!(am[0]["annotations"]["acknowledged_by"], "admin token");
        assert!(am[0].get("endsAt").is_none());
    }
}
