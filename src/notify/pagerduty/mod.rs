//! The PagerDuty notifier: Events API v2 (`url/v2/enqueue`, PagerDuty's own by default). An
//! alert is one incident: `trigger` when it fires, `acknowledge` when someone acknowledges it in
//! DumbMonit, `resolve` when it resolves, all with `dedup_key` = the alert's fingerprint. An
//! escalation changes the alert's `severity` label, so its fingerprint: the incident of the old
//! severity is resolved and one of the new triggered, as Alertmanager ends and starts them.
//!
//! The routing key (`routing_key_file`) is the integration's secret: it is never queued, and
//! goes into each event as it is sent.

use std::time::Duration;

use serde_json::{Value, json};

use super::Sink;
use super::payload::{Voice, cluster_page, fingerprint};
use crate::config::NotifierKind;
use crate::rules::{Alert, Severity, Transition, TransitionState};

/// The PagerDuty notifier (`type = "pagerduty"`).
pub struct Pagerduty;

/// Where events go, under the configured URL.
const ENQUEUE: &str = "/v2/enqueue";

/// PagerDuty's limit on `payload.summary`.
const SUMMARY_MOST: usize = 1024;

impl Sink for Pagerduty {
    fn kind(&self) -> NotifierKind {
        NotifierKind::Pagerduty
    }

    fn endpoint(&self, url: &str) -> String {
        format!("{url}{ENQUEUE}")
    }

    fn base<'a>(&self, endpoint: &'a str) -> &'a str {
        endpoint.strip_suffix(ENQUEUE).unwrap_or(endpoint)
    }

    fn bodies(&self, _receiver: &str, transitions: &[Transition], _: Duration, voice: Voice<'_>) -> Vec<String> {
        transitions.iter().flat_map(|t| events(t, voice)).map(|e| e.to_string()).collect()
    }

    fn sent_as(&self, body: &str, key: Option<&str>) -> String {
        match (serde_json::from_str::<Value>(body), key) {
            (Ok(Value::Object(mut event)), Some(key)) => {
                event.insert("routing_key".into(), json!(key));
                Value::Object(event).to_string()
            }
            _ => body.to_string(),
        }
    }

    fn deduplicates(&self) -> bool {
        // By `dedup_key`: a replica's trigger of an open incident changes nothing.
        true
    }
}

/// The events of one transition, in the order they are to be sent.
pub fn events(t: &Transition, voice: Voice<'_>) -> Vec<Value> {
    let a = &t.alert;
    let key = fingerprint(&a.labels);
    match t.state {
        TransitionState::Firing | TransitionState::Reminder => vec![trigger(a, &key, t, voice)],
        TransitionState::Acknowledged => vec![json!({"event_action": "acknowledge", "dedup_key": key})],
        TransitionState::Resolved => vec![json!({"event_action": "resolve", "dedup_key": key})],
        TransitionState::Escalated => {
            let mut out = Vec::new();
            if let Some(old) = &t.previous_labels {
                out.push(json!({"event_action": "resolve", "dedup_key": fingerprint(old)}));
            }
            out.push(trigger(a, &key, t, voice));
            out
        }
    }
}

/// PagerDuty's severity for ours.
fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Critical => "critical",
        Severity::Warning => "warning",
        Severity::Notice => "info",
    }
}

fn trigger(a: &Alert, key: &str, t: &Transition, voice: Voice<'_>) -> Value {
    let label = |name: &str| a.labels.get(name).cloned();
    let cluster = label("cluster").unwrap_or_else(|| "dumbmonit".into());
    let runbook = crate::config::runbook_url(voice.runbooks, &a.alertname);
    let summary: String = a.summary_in(voice.lang).chars().take(SUMMARY_MOST).collect();
    let mut payload = json!({
        "summary": summary,
        "source": cluster,
        "severity": severity(a.severity),
        "timestamp": t.time.to_string(),
        "class": a.alertname,
        "custom_details": {
            "labels": a.labels,
            "why": a.description_in(voice.lang),
            "runbook_url": runbook,
        },
    });
    // What the alert is about, and where, when its labels say.
    if let Some(object) = ["pod", "node", "workload", "pvc", "hpa", "pdb", "webhook"].iter().find_map(|l| label(l)) {
        payload["component"] = json!(object);
    }
    if let Some(namespace) = label("namespace") {
        payload["group"] = json!(namespace);
    }
    let page = cluster_page(voice.pages, &cluster);
    json!({
        "event_action": "trigger",
        "dedup_key": key,
        "payload": payload,
        "client": "DumbMonit",
        "client_url": page,
        "links": [
            {"href": runbook, "text": voice.lang.t("notify-runbook")},
            {"href": page, "text": voice.lang.tr("notify-pages", &[("cluster", cluster.as_str().into())])},
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::payload::tests::{EN, acknowledged, alert};

    #[test]
    fn trigger_acknowledge_resolve_with_one_key() {
        let mut ack = acknowledged();
        ack.alert.labels.insert("cluster".into(), "lab".into());
        let fired = Transition { state: TransitionState::Firing, ..ack.clone() };
        let resolved = Transition { state: TransitionState::Resolved, ..ack.clone() };
        let told: Vec<Value> = [&fired, &ack, &resolved].iter().flat_map(|t| events(t, EN)).collect();
        let actions: Vec<&str> = told.iter().map(|e| e["event_action"].as_str().unwrap()).collect();
        assert_eq!(actions, ["trigger", "acknowledge", "resolve"]);
        let key = fingerprint(&ack.alert.labels);
        assert!(told.iter().all(|e| e["dedup_key"] == key.as_str()));
        let p = &told[0]["payload"];
        assert_eq!((p["severity"].as_str(), p["source"].as_str()), (Some("warning"), Some("lab")));
        assert_eq!(p["component"], "x\"<script>");
        assert_eq!(
            p["custom_details"]["runbook_url"],
            "https://dumbmonit.example.com/runbooks/en#kubernetespodcrashlooping"
        );
        assert_eq!(told[0]["client_url"], "https://dm.example.com/clusters/lab");
        assert!(told.iter().all(|e| e.get("routing_key").is_none()), "never queued with the key");
    }

    #[test]
    fn an_escalation_resolves_the_old_incident_and_triggers_the_new() {
        let mut a = alert();
        a.severity = Severity::Critical;
        a.labels.insert("severity".into(), "critical".into());
        let mut old = a.labels.clone();
        old.insert("severity".into(), "notice".into());
        let t = Transition {
            time: "2026-11-30T04:10:00Z".parse().unwrap(),
            state: TransitionState::Escalated,
            alert: a.clone(),
            previous_labels: Some(old.clone()),
        };
        let told = events(&t, EN);
        assert_eq!(told[0], json!({"event_action": "resolve", "dedup_key": fingerprint(&old)}));
        assert_eq!(told[1]["payload"]["severity"], "critical");
        assert_eq!(told[1]["dedup_key"], fingerprint(&a.labels));
        assert_eq!(severity(Severity::Notice), "info");
    }

    #[test]
    fn the_key_goes_in_as_it_is_sent() {
        let sent: Value =
            serde_json::from_str(&Pagerduty.sent_as(r#"{"event_action":"resolve"}"#, Some("R0UT1NG"))).unwrap();
        assert_eq!(sent, json!({"event_action": "resolve", "routing_key": "R0UT1NG"}));
        assert_eq!(Pagerduty.endpoint("https://events.pagerduty.com"), "https://events.pagerduty.com/v2/enqueue");
    }
}
