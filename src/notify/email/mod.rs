//! The email notifier: SMTP to `host` (STARTTLS by default, or TLS from the start), as `from`
//! to each of `to`, authenticated by `username` and `password_file` when given. One message per
//! group's message ([`super::group`]), text and HTML (everything from the cluster escaped in the
//! HTML), its `Message-ID` made of the group's labels and start, and every later message of the
//! group `In-Reply-To` its first, so that mail clients thread them. An acknowledgement, told at
//! once and alone, is `In-Reply-To` the alert's own firing id. SMTP and MIME are lettre's.
//!
//! What is queued is the message's parts (subject, text, HTML, its ids' left-hand sides); the
//! message itself is made as it is sent, with the notifier's addresses.

use std::time::Duration;

use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use serde::{Deserialize, Serialize};

use super::Sink;
use super::group::Told;
use super::payload::{Voice, changed, cluster_page, fingerprint, headline, starts_at};
use crate::config::NotifierKind;
use crate::error::Problem;
use crate::rules::{Transition, TransitionState};

/// The email notifier (`type = "email"`).
pub struct Email;

impl Sink for Email {
    fn kind(&self) -> NotifierKind {
        NotifierKind::Email
    }

    fn bodies(&self, _receiver: &str, transitions: &[Transition], _: Duration, voice: Voice<'_>) -> Vec<String> {
        transitions.iter().map(|t| serde_json::to_string(&letter(t, voice)).expect("a letter serializes")).collect()
    }

    fn group_bodies(&self, _receiver: &str, g: &Told<'_>, _: Duration, voice: Voice<'_>) -> Vec<String> {
        group_letter(g, voice).map(|l| serde_json::to_string(&l).expect("a letter serializes")).into_iter().collect()
    }

    fn deduplicates(&self) -> bool {
        false
    }
}

/// A message as it is queued: its parts, and the left-hand sides of its ids (the sender's
/// domain is added as it is sent).
#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub struct Letter {
    pub subject: String,
    pub text: String,
    pub html: String,
    pub id: String,
    /// The firing's id, for a message that follows it.
    pub replies_to: Option<String>,
}

/// The message of one transition.
pub fn letter(t: &Transition, voice: Voice<'_>) -> Letter {
    let a = &t.alert;
    let lang = voice.lang;
    let cluster = a.labels.get("cluster").map(String::as_str).unwrap_or_default();
    let prefix = if cluster.is_empty() { String::new() } else { format!("[{cluster}] ") };
    let subject = one_line(&format!("{prefix}{}: {}", changed(t, lang), a.summary_in(lang)));
    let (mut text, mut html) = told(t, voice);
    pages_link(cluster, voice, &mut text, &mut html);
    // The firing's id names the alert and its start; what follows it names what changed too.
    let print = fingerprint(&a.labels);
    let started = starts_at(a).as_second();
    let firing = format!("{print}.{started}.firing");
    let (id, replies_to) = match t.state {
        TransitionState::Firing => (firing, None),
        TransitionState::Resolved => (format!("{print}.{started}.resolved"), Some(firing)),
        TransitionState::Escalated => (format!("{print}.{started}.escalated"), Some(firing)),
        TransitionState::Acknowledged => {
            (format!("{print}.{started}.acknowledged.{}", t.time.as_second()), Some(firing))
        }
        TransitionState::Reminder => (format!("{print}.{started}.reminder.{}", t.time.as_second()), Some(firing)),
    };
    Letter { subject, text, html, id, replies_to }
}

/// The message of a group ([`super::group`]): each of its alerts in turn, the subject the
/// first's with how many more; its id names the group and its start, and every message after
/// the group's first is `In-Reply-To` it, so that a group is one thread.
pub fn group_letter(g: &Told<'_>, voice: Voice<'_>) -> Option<Letter> {
    let first = g.transitions.first()?;
    let mut letter = letter(first, voice);
    if g.transitions.len() > 1 {
        let lang = voice.lang;
        let (cluster, _) = headline(g.transitions, lang)?;
        let more = (g.transitions.len() - 1) as i64;
        let sentence = format!("{}: {}", changed(first, lang), first.alert.summary_in(lang));
        let sentence = lang.tr("notify-more", &[("summary", sentence.into()), ("count", more.into())]);
        let prefix = if cluster.is_empty() { String::new() } else { format!("[{cluster}] ") };
        letter.subject = one_line(&format!("{prefix}{sentence}"));
        let (mut text, mut html) = (String::new(), String::new());
        for (i, t) in g.transitions.iter().enumerate() {
            let (t_text, t_html) = told(t, voice);
            if i > 0 {
                text.push_str("\n----\n\n");
                html.push_str("<hr>");
            }
            text.push_str(&t_text);
            html.push_str(&t_html);
        }
        pages_link(cluster, voice, &mut text, &mut html);
        (letter.text, letter.html) = (text, html);
    }
    let thread = format!("{}.{}.group", fingerprint(g.labels), g.since.as_second());
    (letter.id, letter.replies_to) = match g.first {
        true => (thread, None),
        false => (format!("{thread}.{}", g.at.as_second()), Some(thread)),
    };
    Some(letter)
}

/// One alert's part of a message, as text and as HTML (everything from the cluster escaped):
/// what changed, its summary and why, who is on it, its runbook and its labels.
fn told(t: &Transition, voice: Voice<'_>) -> (String, String) {
    let a = &t.alert;
    let lang = voice.lang;
    let changed = changed(t, lang);
    let summary = a.summary_in(lang);
    let why = a.description_in(lang);
    let severity = lang.t(&format!("severity-{}", a.severity.as_str()));
    let runbook = crate::config::runbook_url(voice.runbooks, &a.alertname);
    let comment = a.acknowledged.as_ref().map(|ack| ack.comment.as_str()).filter(|c| !c.is_empty());
    let labels: Vec<String> = a.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut text = format!("{changed} · {severity}\n\n{summary}\n\n{why}\n");
    if let Some(c) = comment {
        text.push_str(&format!("\n> {c}\n"));
    }
    text.push_str(&format!("\n{}\n{runbook}\n", lang.t("notify-runbook")));
    text.push_str(&format!("\n{}\n", labels.join("\n")));
    let html = maud::html! {
        p { strong { (changed) } " · " (severity) }
        p { strong { (summary) } }
        p { (why) }
        @if let Some(c) = comment { blockquote { (c) } }
        p { a href=(runbook) { (lang.t("notify-runbook")) } }
        ul style="color:#555;font-family:monospace" { @for l in &labels { li { (l) } } }
    }
    .into_string();
    (text, html)
}

/// The link to the cluster's page, at the end of a message.
fn pages_link(cluster: &str, voice: Voice<'_>, text: &mut String, html: &mut String) {
    if cluster.is_empty() {
        return;
    }
    let page = cluster_page(voice.pages, cluster);
    let words = voice.lang.tr("notify-pages", &[("cluster", cluster.into())]);
    text.push_str(&format!("\n{words}\n{page}\n"));
    html.push_str(&maud::html! { p { a href=(page) { (words) } } }.into_string());
}

/// A header's text on one line: control characters (a line break from the cluster) as spaces.
fn one_line(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// Where an email notifier sends, checked at load.
pub struct Smtp {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    to: Vec<Mailbox>,
    /// The right-hand side of the messages' ids: the sender's domain.
    domain: String,
}

impl Smtp {
    /// From a `[[notifier]]` of type email (its fields checked by the configuration): the
    /// addresses parsed, the CA read; `password` is the password read from its file.
    pub fn from_config(
        c: &crate::config::NotifierConfig,
        password: Option<&str>,
        timeout: Duration,
    ) -> Result<Smtp, Problem> {
        let host = c.host.clone().unwrap_or_default();
        let address = |field: &'static str, text: &str| -> Result<Mailbox, Problem> {
            text.parse::<Mailbox>().map_err(|e| Problem::Unusable { field, why: format!("{text:?}: {e}") })
        };
        let from = address("from", c.from.as_deref().unwrap_or_default())?;
        let to = c.to.iter().map(|t| address("to", t)).collect::<Result<Vec<_>, _>>()?;
        let mut tls = TlsParameters::builder(host.clone());
        if let Some(path) = &c.ca_file {
            let pem = std::fs::read(path).map_err(|source| Problem::Unreadable {
                field: "ca_file",
                path: path.clone(),
                source,
            })?;
            let ca = Certificate::from_pem(&pem)
                .map_err(|e| Problem::Unusable { field: "ca_file", why: format!("not a PEM certificate: {e}") })?;
            tls = tls.add_root_certificate(ca);
        }
        let tls = tls.build_rustls().map_err(|e| Problem::Unusable { field: "host", why: e.to_string() })?;
        let starttls = c.starttls.unwrap_or(true);
        let port = c.port.map(|p| p as u16).unwrap_or(if starttls { 587 } else { 465 });
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host)
            .port(port)
            .tls(if starttls { Tls::Required(tls) } else { Tls::Wrapper(tls) })
            .timeout(Some(timeout));
        if let Some(user) = &c.credentials.username {
            builder = builder.credentials(Credentials::new(user.clone(), password.unwrap_or_default().to_string()));
        }
        let domain = from.email.domain().to_string();
        Ok(Smtp { transport: builder.build(), from, to, domain })
    }

    /// Sends a queued letter: what the server answered; an answer that retrying cannot change
    /// (5xx) is permanent.
    pub async fn send(&self, queued: &str) -> Result<String, MailError> {
        let letter: Letter = serde_json::from_str(queued)
            .map_err(|e| MailError { detail: format!("not a queued message: {e}"), permanent: true })?;
        let id = |left: &str| format!("<{left}@{}>", self.domain);
        let mut message =
            Message::builder().from(self.from.clone()).subject(letter.subject).message_id(Some(id(&letter.id)));
        for to in &self.to {
            message = message.to(to.clone());
        }
        if let Some(first) = &letter.replies_to {
            message = message.in_reply_to(id(first)).references(id(first));
        }
        let message = message
            .multipart(MultiPart::alternative_plain_html(letter.text, letter.html))
            .map_err(|e| MailError { detail: e.to_string(), permanent: true })?;
        let answer = self
            .transport
            .send(message)
            .await
            .map_err(|e| MailError { permanent: e.is_permanent(), detail: super::describe(&e) })?;
        let said: Vec<&str> = answer.message().collect();
        Ok(format!("{} {}", answer.code(), said.join(" ")))
    }
}

/// Why a message was not sent.
#[derive(Debug)]
pub struct MailError {
    pub detail: String,
    /// The server refused it for good (5xx), or it cannot be made.
    pub permanent: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::payload::tests::{EN, acknowledged, alert};

    #[test]
    fn a_resolution_follows_its_firing_and_the_html_escapes_the_cluster() {
        let mut a = alert();
        a.labels.insert("cluster".into(), "lab".into());
        a.summary = "Pod shop/x\r\nBcc: all@example.com is crash-looping".into();
        let fired =
            Transition { time: a.active_at, state: TransitionState::Firing, alert: a.clone(), previous_labels: None };
        let resolved = Transition {
            state: TransitionState::Resolved,
            time: "2026-11-30T03:40:00Z".parse().unwrap(),
            ..fired.clone()
        };
        let (f, r) = (letter(&fired, EN), letter(&resolved, EN));
        assert_eq!(r.replies_to.as_deref(), Some(f.id.as_str()));
        assert_eq!(f.replies_to, None);
        assert!(f.id.ends_with(".firing") && r.id.ends_with(".resolved") && f.id != r.id);
        assert_eq!(f.subject, "[lab] Firing: Pod shop/x  Bcc: all@example.com is crash-looping", "one line");
        assert!(r.subject.starts_with("[lab] Resolved after 30 min: "), "{}", r.subject);
        assert!(
            f.html.contains("app: &quot;quoted&quot; &lt;/script&gt;") && !f.html.contains("</script>"),
            "{}",
            f.html
        );
        assert!(f.text.contains("app: \"quoted\" </script>"), "the text part as it is");
        assert!(f.html.contains(r#"<a href="https://dm.example.com/clusters/lab">lab on DumbMonit</a>"#), "{}", f.html);
        let ack = letter(&acknowledged(), EN);
        assert!(ack.replies_to.is_some() && ack.text.contains("\n> on it\n"), "{ack:?}");
    }
}
