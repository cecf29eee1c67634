//! What every notifier says of an alert: its fingerprint, its annotations, when it started, and
//! the heartbeat's watchdog alert. Each notifier's own payload is in its folder.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::lang::Lang;
use crate::rules::{Alert, Transition, TransitionState};

/// How a notifier speaks: its language, and where its alerts' runbooks are.
#[derive(Clone, Copy, Debug)]
pub struct Voice<'a> {
    pub lang: Lang,
    /// `runbook_url` is this, `#`, the alert's name in lower case (`config::runbook_url`).
    pub runbooks: &'a str,
    /// The pages' address (`external_url`), that a message links to.
    pub pages: &'a str,
}

/// Alertmanager's zero time, for an alert that has not ended.
pub(super) const ZERO_TIME: &str = "0001-01-01T00:00:00Z";

/// The heartbeat's alert: always firing, severity `none`, never silenced.
pub const WATCHDOG: &str = "DumbMonitWatchdog";

pub(super) fn watchdog_labels() -> BTreeMap<String, String> {
    BTreeMap::from([("alertname".to_string(), WATCHDOG.to_string()), ("severity".to_string(), "none".to_string())])
}

pub(super) fn watchdog_annotations(lang: Lang) -> Value {
    json!({
        "summary": lang.t("watchdog.summary"),
        "description": lang.t("watchdog.description"),
    })
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

/// The summary (in the notifier's language), the description and the runbook's URL; for an
/// acknowledged alert, who acknowledged it, when and why (`acknowledged_by`, `acknowledged_at`,
/// `acknowledged_comment`).
pub(super) fn annotations(a: &Alert, voice: Voice<'_>) -> Value {
    let mut v = json!({
        "summary": a.summary_in(voice.lang),
        "description": a.description_in(voice.lang),
        "runbook_url": crate::config::runbook_url(voice.runbooks, &a.alertname),
    });
    if let Some(ack) = &a.acknowledged {
        v["acknowledged_by"] = json!(ack.by);
        v["acknowledged_at"] = json!(ack.at.to_string());
        v["acknowledged_comment"] = json!(ack.comment);
    }
    v
}

pub(super) fn starts_at(a: &Alert) -> Timestamp {
    a.fired_at.unwrap_or(a.active_at)
}

/// The cluster of a cycle's transitions and the one sentence a message about them starts
/// with: `lab: Pod shop/x is crash-looping`, `…, and 4 more`; None when there are none.
pub(super) fn headline(transitions: &[Transition], lang: Lang) -> Option<(&str, String)> {
    let first = transitions.first()?;
    let cluster = first.alert.labels.get("cluster").map(String::as_str).unwrap_or_default();
    let summary = first.alert.summary_in(lang);
    let sentence = match transitions.len() {
        1 => summary,
        n => lang.tr("notify-more", &[("summary", summary.into()), ("count", ((n - 1) as i64).into())]),
    };
    let title = if cluster.is_empty() { sentence } else { format!("{cluster}: {sentence}") };
    Some((cluster, title))
}

/// What changed, in a word or two: firing, resolved after how long, escalated to what,
/// acknowledged by whom.
pub(super) fn changed(t: &Transition, lang: Lang) -> String {
    let a = &t.alert;
    match t.state {
        TransitionState::Firing => lang.t("notify-firing"),
        TransitionState::Resolved => {
            let lasted = t.time.duration_since(starts_at(a));
            lang.tr("notify-resolved", &[("duration", crate::clock::words(lasted).into())])
        }
        TransitionState::Escalated => {
            let severity = lang.t(&format!("severity-{}", a.severity.as_str()));
            lang.tr("notify-escalated", &[("severity", severity.into())])
        }
        TransitionState::Reminder => {
            let lasted = t.time.duration_since(starts_at(a));
            lang.tr("notify-reminder", &[("duration", crate::clock::words(lasted).into())])
        }
        TransitionState::Acknowledged => {
            let who = a.acknowledged.as_ref().map(|ack| ack.by.as_str()).unwrap_or_default();
            lang.tr("notify-acknowledged", &[("who", who.into())])
        }
    }
}

/// The cluster's page on the pages at `pages`.
pub(super) fn cluster_page(pages: &str, cluster: &str) -> String {
    let segment = percent_encoding::utf8_percent_encode(cluster, percent_encoding::NON_ALPHANUMERIC);
    format!("{}/clusters/{segment}", pages.trim_end_matches('/'))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::rules::Severity;

    /// An English voice, its runbooks and pages at example addresses.
    pub const EN: Voice<'static> = Voice {
        lang: Lang::En,
        runbooks: "https://dumbmonit.example.com/runbooks/en",
        pages: "https://dm.example.com",
    };

    /// A firing alert whose label and description need escaping.
    pub fn alert() -> Alert {
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

    /// The alert of [`alert`], acknowledged by an admin: the transition that tells it.
    pub fn acknowledged() -> crate::rules::Transition {
        let mut a = alert();
        a.acknowledged = Some(crate::rules::Acknowledgement {
            by: "admin token".into(),
            at: "2026-11-30T03:15:00Z".parse().unwrap(),
            comment: "on it".into(),
        });
        crate::rules::Transition {
            time: "2026-11-30T03:15:00Z".parse().unwrap(),
            state: crate::rules::TransitionState::Acknowledged,
            alert: a,
            previous_labels: None,
        }
    }
}
