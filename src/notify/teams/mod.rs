//! The Microsoft Teams notifier: a Teams Workflows webhook (`url_file`, or `url`: the URL is the
//! secret; the retired Office 365 connectors' MessageCard is not used), one Adaptive Card a
//! cycle's transitions of a cluster, version 1.4 (what Teams renders), in a `message` attachment:
//! the cluster and the one sentence, a part per alert (what changed, its severity, summary, why
//! and runbook), and a button to the cluster's page.
//!
//! What comes from the cluster is written in `TextRun`s, which Teams shows as they are (a
//! `TextBlock` would read them as Markdown, and a pod's name could become a link). A message is
//! kept under Teams' 28 KB: descriptions are cut, and past [`ALERTS_MOST`] alerts the rest are
//! counted.

use std::time::Duration;

use serde_json::{Value, json};

use super::Sink;
use super::payload::{Voice, changed, cluster_page, headline};
use crate::config::NotifierKind;
use crate::rules::Transition;

/// The Teams notifier (`type = "teams"`).
pub struct Teams;

/// The alerts a card shows, the characters of an alert's why, and the bytes of its alerts'
/// parts together (Teams refuses a message over 28 KB).
const ALERTS_MOST: usize = 25;
const WHY_MOST: usize = 600;
const PARTS_MOST: usize = 22_000;

impl Sink for Teams {
    fn kind(&self) -> NotifierKind {
        NotifierKind::Teams
    }

    fn bodies(&self, _receiver: &str, transitions: &[Transition], _: Duration, voice: Voice<'_>) -> Vec<String> {
        message(transitions, voice).map(|m| m.to_string()).into_iter().collect()
    }

    fn secret_url(&self) -> bool {
        true
    }

    fn deduplicates(&self) -> bool {
        false
    }
}

/// Plain text, shown as it is: a `RichTextBlock` of one `TextRun`.
fn plain(text: &str, style: Value) -> Value {
    let mut run = json!({"type": "TextRun", "text": text});
    if let (Some(run), Some(style)) = (run.as_object_mut(), style.as_object()) {
        run.extend(style.clone());
    }
    json!({"type": "RichTextBlock", "inlines": [run]})
}

/// The message for transitions of one cluster; None when there are none.
pub fn message(transitions: &[Transition], voice: Voice<'_>) -> Option<Value> {
    let (cluster, title) = headline(transitions, voice.lang)?;
    let lang = voice.lang;
    let mut body = vec![plain(&title, json!({"weight": "Bolder", "size": "Medium"}))];
    let (mut shown, mut used) = (0, 0);
    for t in transitions.iter().take(ALERTS_MOST) {
        let part = part(t, voice);
        used += part.iter().map(|b| b.to_string().len()).sum::<usize>();
        if used > PARTS_MOST {
            break;
        }
        body.extend(part);
        shown += 1;
    }
    let left = transitions.len() - shown;
    if left > 0 {
        body.push(plain(
            &lang.tr("notify-more", &[("summary", "…".into()), ("count", (left as i64).into())]),
            json!({}),
        ));
    }
    let mut card = json!({
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "msteams": {"width": "Full"},
        "body": body,
    });
    if !cluster.is_empty() {
        card["actions"] = json!([{
            "type": "Action.OpenUrl",
            "title": lang.tr("notify-pages", &[("cluster", cluster.into())]),
            "url": cluster_page(voice.pages, cluster),
        }]);
    }
    Some(json!({
        "type": "message",
        "attachments": [{"contentType": "application/vnd.microsoft.card.adaptive", "contentUrl": null, "content": card}],
    }))
}

/// One alert's part of the card: what changed and its severity, in bold, under a line; its
/// summary; its why; the acknowledgement's comment; its runbook.
fn part(t: &Transition, voice: Voice<'_>) -> Vec<Value> {
    let a = &t.alert;
    let lang = voice.lang;
    let severity = lang.t(&format!("severity-{}", a.severity.as_str()));
    let mut head = plain(&format!("{} · {severity}", changed(t, lang)), json!({"weight": "Bolder"}));
    head["separator"] = json!(true);
    head["spacing"] = json!("Medium");
    let why: String = a.description_in(lang).chars().take(WHY_MOST).collect();
    let mut part = vec![head, plain(&a.summary_in(lang), json!({})), plain(&why, json!({"isSubtle": true}))];
    if let Some(ack) = a.acknowledged.as_ref().filter(|ack| !ack.comment.is_empty()) {
        part.push(plain(&ack.comment, json!({"italic": true})));
    }
    let runbook = crate::config::runbook_url(voice.runbooks, &a.alertname);
    part.push(json!({
        "type": "RichTextBlock",
        "inlines": [{
            "type": "TextRun",
            "text": lang.t("notify-runbook"),
            "selectAction": {"type": "Action.OpenUrl", "url": runbook},
        }],
    }));
    part
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::payload::tests::{EN, alert};
    use crate::rules::TransitionState;

    #[test]
    fn an_adaptive_card_in_a_message_the_clusters_words_in_text_runs() {
        let mut a = alert();
        a.labels.insert("cluster".into(), "lab".into());
        a.description = "see [here](http://evil.example) **now**".into();
        let t = Transition { time: a.active_at, state: TransitionState::Firing, alert: a, previous_labels: None };
        let m = message(&[t.clone(), t], EN).unwrap();
        assert_eq!(m["type"], "message");
        let card = &m["attachments"][0]["content"];
        assert_eq!((card["type"].as_str(), card["version"].as_str()), (Some("AdaptiveCard"), Some("1.4")));
        assert_eq!(card["body"][0]["inlines"][0]["text"], "lab: Pod shop/x is crash-looping, and 1 more");
        assert_eq!(card["body"][1]["inlines"][0]["text"], "Firing · warning");
        assert_eq!(card["body"][3]["inlines"][0]["text"], "see [here](http://evil.example) **now**");
        assert!(card["body"].as_array().unwrap().iter().all(|b| b["type"] == "RichTextBlock"), "no Markdown anywhere");
        assert_eq!(
            card["body"][4]["inlines"][0]["selectAction"]["url"],
            "https://dumbmonit.example.com/runbooks/en#kubernetespodcrashlooping"
        );
        assert_eq!(card["actions"][0]["url"], "https://dm.example.com/clusters/lab");
    }

    #[test]
    fn a_card_stays_small_whatever_the_cluster_says() {
        let mut a = alert();
        a.description = "x".repeat(100_000);
        let t = Transition { time: a.active_at, state: TransitionState::Firing, alert: a, previous_labels: None };
        let many: Vec<Transition> = (0..200).map(|_| t.clone()).collect();
        let m = message(&many, EN).unwrap();
        assert!(m.to_string().len() < 28_000, "{}", m.to_string().len());
        let body = m["attachments"][0]["content"]["body"].as_array().unwrap();
        let more = body.last().unwrap()["inlines"][0]["text"].as_str().unwrap();
        assert!(more.starts_with("…, and 1") && more.ends_with(" more"), "{more}");
    }
}
