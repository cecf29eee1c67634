//! The Slack notifier: an incoming webhook (`url_file`, or `url`: the URL is the secret), one
//! Block Kit message per cycle's transitions of a cluster: a header with the cluster and the one
//! sentence, a section per alert (what changed, its summary, its why and its runbook), and a
//! context line linking to the cluster's page. A webhook cannot update a message it posted, so a
//! resolution is a message of its own saying how long the alert lasted.
//!
//! Everything from the cluster is escaped for Slack's mrkdwn (`&`, `<`, `>`), and every text is
//! cut to Slack's limits (a header's 150 characters, a section's 3,000, 50 blocks a message).

use std::time::Duration;

use serde_json::{Value, json};

use super::Sink;
use super::payload::{Voice, changed, cluster_page, headline};
use crate::config::NotifierKind;
use crate::rules::Transition;

/// The Slack notifier (`type = "slack"`).
pub struct Slack;

/// Slack's limits: a header's text, a section's text, the blocks of a message (two are the
/// header and the context line).
const HEADER_MOST: usize = 150;
const SECTION_MOST: usize = 3000;
const SECTIONS_MOST: usize = 47;

impl Sink for Slack {
    fn kind(&self) -> NotifierKind {
        NotifierKind::Slack
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

/// The message for transitions of one cluster; None when there are none.
pub fn message(transitions: &[Transition], voice: Voice<'_>) -> Option<Value> {
    let (cluster, title) = headline(transitions, voice.lang)?;
    let lang = voice.lang;
    let mut blocks = vec![json!({
        "type": "header",
        "text": {"type": "plain_text", "text": cut(&title, HEADER_MOST), "emoji": false},
    })];
    for t in transitions.iter().take(SECTIONS_MOST) {
        blocks.push(json!({
            "type": "section",
            "text": {"type": "mrkdwn", "text": cut(&section(t, voice), SECTION_MOST)},
        }));
    }
    let left = transitions.len().saturating_sub(SECTIONS_MOST);
    let mut context = Vec::new();
    if left > 0 {
        context.push(json!({"type": "mrkdwn", "text": lang.tr("notify-more", &[("summary", "…".into()), ("count", (left as i64).into())])}));
    }
    if !cluster.is_empty() {
        let page = cluster_page(voice.pages, cluster);
        let words = lang.tr("notify-pages", &[("cluster", cluster.into())]);
        context.push(json!({"type": "mrkdwn", "text": format!("<{}|{}>", link(&page), escape(&words))}));
    }
    if !context.is_empty() {
        blocks.push(json!({"type": "context", "elements": context}));
    }
    Some(json!({"text": cut(&title, SECTION_MOST), "blocks": blocks}))
}

/// One alert's section: what changed, in bold; its summary; its why; its runbook.
fn section(t: &Transition, voice: Voice<'_>) -> String {
    let a = &t.alert;
    let lang = voice.lang;
    let changed = changed(t, lang);
    let severity = lang.t(&format!("severity-{}", a.severity.as_str()));
    let runbook = crate::config::runbook_url(voice.runbooks, &a.alertname);
    let mut text = format!(
        "*{}* · {}\n*{}*\n{}",
        escape(&changed),
        escape(&severity),
        escape(&a.summary_in(lang)),
        escape(&a.description_in(lang))
    );
    if let Some(ack) = a.acknowledged.as_ref().filter(|ack| !ack.comment.is_empty()) {
        text.push_str(&format!("\n> {}", escape(&ack.comment)));
    }
    // The link last, whole: the text before it is cut first.
    let link = format!("\n<{}|{}>", link(&runbook), escape(&lang.t("notify-runbook")));
    let room = SECTION_MOST.saturating_sub(link.chars().count());
    let mut text = cut(&text, room);
    text.push_str(&link);
    text
}

/// Text for Slack's mrkdwn: its three control characters escaped, as Slack documents.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A URL inside `<…|…>`: what would end it escaped.
fn link(url: &str) -> String {
    escape(url).replace('|', "%7C")
}

/// At most `most` characters, an ellipsis where it was cut (never inside an escape).
fn cut(text: &str, most: usize) -> String {
    if text.chars().count() <= most {
        return text.to_string();
    }
    let mut kept: String = text.chars().take(most.saturating_sub(1)).collect();
    // An escape (`&amp;`) cut in half would show as garbage: drop the half.
    if let Some(amp) = kept.rfind('&')
        && !kept[amp..].contains(';')
    {
        kept.truncate(amp);
    }
    kept.push('…');
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;
    use crate::notify::payload::tests::{EN, acknowledged, alert};
    use crate::rules::TransitionState;

    fn firing(pod: &str) -> Transition {
        let mut a = alert();
        a.labels.insert("cluster".into(), "lab".into());
        a.labels.insert("pod".into(), pod.into());
        Transition {
            time: "2026-11-30T03:10:00Z".parse().unwrap(),
            state: TransitionState::Firing,
            alert: a,
            previous_labels: None,
        }
    }

    #[test]
    fn one_message_a_cycle_a_section_an_alert_everything_escaped() {
        let mut resolved = firing("y");
        resolved.state = TransitionState::Resolved;
        resolved.time = "2026-11-30T03:22:00Z".parse().unwrap();
        let m = message(&[firing("x"), resolved], EN).unwrap();
        let blocks = m["blocks"].as_array().unwrap();
        assert_eq!(blocks.len(), 4, "{m}");
        assert_eq!(blocks[0]["text"]["text"], "lab: Pod shop/x is crash-looping, and 1 more");
        let first = blocks[1]["text"]["text"].as_str().unwrap();
        assert!(first.starts_with("*Firing* · warning\n*Pod shop/x is crash-looping*\n"), "{first}");
        assert!(first.contains("app: \"quoted\" &lt;/script&gt;") && !first.contains("</script>"), "{first}");
        assert!(first.ends_with("\n<https://dumbmonit.example.com/runbooks/en#kubernetespodcrashlooping|Runbook>"));
        assert!(
            blocks[2]["text"]["text"].as_str().unwrap().starts_with("*Resolved after 12 min*"),
            "from its firing at 03:10"
        );
        assert_eq!(blocks[3]["elements"][0]["text"], "<https://dm.example.com/clusters/lab|lab on DumbMonit>");
        assert_eq!(message(&[], EN), None);
    }

    #[test]
    fn an_acknowledgement_says_who_and_why_and_french_is_french() {
        let mut t = acknowledged();
        t.alert.labels.insert("cluster".into(), "lab".into());
        let fr = Voice { lang: Lang::Fr, ..EN };
        let m = message(&[t], fr).unwrap();
        let text = m["blocks"][1]["text"]["text"].as_str().unwrap();
        assert!(text.starts_with("*Prise en charge par admin token* · Avertissement\n"), "{text}");
        assert!(text.contains("\n> on it\n"), "{text}");
        assert!(text.ends_with("|Procédure>"), "{text}");
    }

    #[test]
    fn limits_are_kept_whatever_the_cluster_says() {
        let mut t = firing("p");
        t.alert.description = format!("{}&", "<".repeat(5000));
        t.alert.said_description = None;
        let many: Vec<Transition> = (0..80).map(|_| t.clone()).collect();
        let m = message(&many, EN).unwrap();
        let blocks = m["blocks"].as_array().unwrap();
        assert_eq!(blocks.len(), 49, "a header, 47 sections, the context");
        for b in &blocks[1..48] {
            let text = b["text"]["text"].as_str().unwrap();
            assert!(text.chars().count() <= SECTION_MOST, "{}", text.len());
            assert!(text.ends_with("|Runbook>") && !text.contains("&l…"), "{text}");
        }
        assert_eq!(blocks[48]["elements"][0]["text"], "…, and 33 more");
        assert!(m["text"].as_str().unwrap().chars().count() <= SECTION_MOST);
        assert_eq!(cut("a &amp; b", 5), "a …");
    }
}
