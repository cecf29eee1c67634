//! The webhook notifier: an HTTP POST of the Alertmanager webhook payload (version 4) per
//! transition, to `url`, or with `group_by` one per group's message (`notify::group`); its heartbeat may go to a dead man's switch of its own
//! (`heartbeat_url`). A webhook does not drop repeats: a replica's notification is its own.

use jiff::Timestamp;
use serde_json::json;

use super::Sink;
use super::payload::{
    Voice, WATCHDOG, ZERO_TIME, annotations, fingerprint, starts_at, watchdog_annotations, watchdog_labels,
};
use crate::config::NotifierKind;
use crate::lang::Lang;
use crate::rules::{Transition, TransitionState};

/// The webhook notifier (`type = "webhook"`).
pub struct Webhook;

impl Sink for Webhook {
    fn kind(&self) -> NotifierKind {
        NotifierKind::Webhook
    }

    fn bodies(
        &self,
        receiver: &str,
        transitions: &[Transition],
        _: std::time::Duration,
        voice: Voice<'_>,
    ) -> Vec<String> {
        transitions.iter().map(|t| payload(receiver, t, voice)).collect()
    }

    /// With `group_by`: one payload per group's message, as Alertmanager's webhook sends.
    fn group_bodies(
        &self,
        receiver: &str,
        g: &super::group::Told<'_>,
        _: std::time::Duration,
        voice: Voice<'_>,
    ) -> Vec<String> {
        grouped(receiver, g, voice).into_iter().collect()
    }

    fn heartbeat_body(
        &self,
        receiver: &str,
        now: Timestamp,
        _every: std::time::Duration,
        lang: Lang,
    ) -> Option<String> {
        Some(watchdog(receiver, now, lang))
    }

    fn deduplicates(&self) -> bool {
        false
    }
}

/// The heartbeat for a webhook: a payload like any other, with the firing watchdog alert.
pub fn watchdog(receiver: &str, now: Timestamp, lang: Lang) -> String {
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

/// One webhook payload for one transition.
pub fn payload(receiver: &str, t: &Transition, voice: Voice<'_>) -> String {
    let a = &t.alert;
    json!({
        "version": "4",
        "groupKey": format!("{{}}:{{alertname={:?}}}", a.alertname),
        "truncatedAlerts": 0,
        "status": status(t).0,
        "receiver": receiver,
        "groupLabels": {"alertname": a.alertname},
        "commonLabels": a.labels,
        "commonAnnotations": annotations(a, voice),
        "externalURL": "",
        "alerts": [posted(t, voice)],
    })
    .to_string()
}

/// The status and `endsAt` of a transition's alert.
fn status(t: &Transition) -> (&'static str, String) {
    match t.state {
        TransitionState::Firing
        | TransitionState::Escalated
        | TransitionState::Acknowledged
        | TransitionState::Reminder => ("firing", ZERO_TIME.to_string()),
        TransitionState::Resolved => ("resolved", t.time.to_string()),
    }
}

/// One alert of a payload's `alerts`.
fn posted(t: &Transition, voice: Voice<'_>) -> serde_json::Value {
    let a = &t.alert;
    let (status, ends_at) = status(t);
    json!({
        "status": status,
        "labels": a.labels,
        "annotations": annotations(a, voice),
        "startsAt": starts_at(a).to_string(),
        "endsAt": ends_at,
        "generatorURL": "",
        "fingerprint": fingerprint(&a.labels),
    })
}

/// The payload of a group's message: its key and labels, the labels and annotations all its
/// alerts share, `firing` while one of them fires.
pub fn grouped(receiver: &str, g: &super::group::Told<'_>, voice: Voice<'_>) -> Option<String> {
    let first = g.transitions.first()?;
    let mut common = first.alert.labels.clone();
    let mut common_annotations = annotations(&first.alert, voice);
    for t in &g.transitions[1..] {
        common.retain(|k, v| t.alert.labels.get(k) == Some(v));
        let theirs = annotations(&t.alert, voice);
        if let Some(mine) = common_annotations.as_object_mut() {
            mine.retain(|k, v| theirs.get(k) == Some(v));
        }
    }
    let firing = g.transitions.iter().any(|t| status(t).0 == "firing");
    Some(
        json!({
            "version": "4",
            "groupKey": g.key,
            "truncatedAlerts": 0,
            "status": if firing { "firing" } else { "resolved" },
            "receiver": receiver,
            "groupLabels": g.labels,
            "commonLabels": common,
            "commonAnnotations": common_annotations,
            "externalURL": voice.pages,
            "alerts": g.transitions.iter().map(|t| posted(t, voice)).collect::<Vec<_>>(),
        })
        .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const EN: Voice<'static> = Voice {
        lang: Lang::En,
        runbooks: "https://dumbmonit.example.com/runbooks/en",
        pages: "https://dumbmonit.example.com",
    };
    use crate::notify::payload::tests::{acknowledged, alert};
    use serde_json::Value;

    #[test]
    fn the_webhook_payload_is_alertmanagers() {
        let t = Transition {
            time: "2026-11-30T03:20:00Z".parse().unwrap(),
            state: TransitionState::Resolved,
            alert: alert(),
            previous_labels: None,
        };
        let v: Value = serde_json::from_str(&payload("hook", &t, EN)).unwrap();
        assert_eq!(v["version"], "4");
        assert_eq!(v["status"], "resolved");
        assert_eq!(v["receiver"], "hook");
        assert_eq!(v["alerts"][0]["startsAt"], "2026-11-30T03:10:00Z");
        assert_eq!(v["alerts"][0]["endsAt"], "2026-11-30T03:20:00Z");
        assert_eq!(v["alerts"][0]["labels"]["pod"], "x\"<script>", "JSON-escaped, intact");
        assert_eq!(v["alerts"][0]["annotations"]["description"], "app: \"quoted\" </script>");
        assert_eq!(v["alerts"][0]["fingerprint"].as_str().unwrap().len(), 16);
        assert_eq!(
            v["alerts"][0]["annotations"]["runbook_url"],
            "https://dumbmonit.example.com/runbooks/en#kubernetespodcrashlooping"
        );
    }

    #[test]
    fn an_acknowledgement_is_told_as_a_firing_alert_with_who_is_on_it() {
        let t = acknowledged();
        let hook: Value = serde_json::from_str(&payload("hook", &t, EN)).unwrap();
        assert_eq!(hook["status"], "firing");
        assert_eq!(hook["alerts"][0]["annotations"]["acknowledged_by"], "admin token");
        assert_eq!(hook["alerts"][0]["annotations"]["acknowledged_comment"], "on it");
    }
}
