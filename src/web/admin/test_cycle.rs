//! The Test button: one cycle with what was entered, through the chain every read takes
//! (`collect::reader::connect`, then a read), nothing kept; what it found, and the setup guide's
//! help beside each error people meet.

use maud::{Markup, html};

use crate::collect::CycleOptions;
use crate::collect::reader::{self, SetUpError};
use crate::config::PageSettings;
use crate::error::ReadErrorKind;
use crate::lang::Arg;
use crate::redact::Redactor;
use crate::web::html::{lang, t, tr};

/// What a test cycle found.
pub(super) enum Tested {
    Healthy { summary: String, counters: String },
    Failed { message: String, help: Option<Markup> },
}

/// The guide's help beside each error people meet, in the reader's language (the French in the
/// words of the guide's « Dépannage »). The error itself stays as it is: the guide quotes it in
/// English.
fn help(kind: &ReadErrorKind) -> Option<Markup> {
    let one = |s: &str| vec![s.to_string()];
    Some(match kind {
        ReadErrorKind::Unauthorized => with_code(
            "help-unauthorized",
            &[
                ("create", one("kubectl create token")),
                ("rbac", one("dumbmonit rbac")),
                (
                    "get",
                    one("kubectl -n kube-system get secret dumbmonit-token -o jsonpath='{.data.token}' | base64 -d"),
                ),
            ],
        ),
        ReadErrorKind::Forbidden { .. } => with_code(
            "help-forbidden",
            &[("apply", one("dumbmonit rbac | kubectl apply -f -")), ("optional", one("dumbmonit rbac --optional"))],
        ),
        ReadErrorKind::UnknownAuthority => with_code(
            "help-unknown-authority",
            &[
                ("file", one("ca.crt")),
                ("get", one("kubectl -n kube-system get secret dumbmonit-token -o jsonpath='{.data.ca\\.crt}'")),
                ("k3s", one("/var/lib/rancher/k3s/server/tls/server-ca.crt")),
            ],
        ),
        ReadErrorKind::WrongName { host, names } => with_code(
            "help-wrong-name",
            &[
                ("host", one(host)),
                ("names", names.clone()),
                ("san", one(&format!("--tls-san {host}"))),
                ("flag", one("--tls-san")),
                ("config", one("/etc/rancher/k3s/config.yaml")),
                ("yaml", one(&format!("tls-san: [{host}]"))),
            ],
        ),
        ReadErrorKind::CertificateExpired => with_code("help-certificate-expired", &[]),
        ReadErrorKind::Refused | ReadErrorKind::ConnectTimeout | ReadErrorKind::Dns { .. } => {
            with_code("help-unreachable", &[])
        }
        _ => return None,
    })
}

/// Marks an argument's place in a said message, out of any text's way (Unicode's private use).
const OPEN: char = '\u{E000}';
const CLOSE: char = '\u{E001}';

/// A paragraph of help: the message in the reader's language, each argument (a command, a path,
/// a name) in `<code>`, a list one `<code>` per item joined by ", ". Everything is escaped by
/// maud: the message's text and the arguments alike.
fn with_code(id: &str, codes: &[(&str, Vec<String>)]) -> Markup {
    let marks: Vec<(&str, Arg)> =
        codes.iter().enumerate().map(|(i, (k, _))| (*k, format!("{OPEN}{i}{CLOSE}").into())).collect();
    let said = tr(id, &marks);
    let mut pieces = said.split(OPEN);
    let first = pieces.next().unwrap_or("");
    html! {
        p.help {
            (first)
            @for piece in pieces {
                @let (index, rest) = piece.split_once(CLOSE).unwrap_or(("", piece));
                @if let Some((_, items)) = index.parse::<usize>().ok().and_then(|i| codes.get(i)) {
                    @for (n, item) in items.iter().enumerate() {
                        @if n > 0 { ", " }
                        code { (item) }
                    }
                }
                (rest)
            }
        }
    }
}

/// One cycle with what was entered; nothing is kept.
pub(super) async fn test_cycle(name: &str, settings: &PageSettings, token: String) -> Tested {
    let mut redactor = Redactor::default();
    redactor.add(&token);
    let cluster = settings.to_cluster(name, token);
    let failed = |message: String, help: Option<Markup>| Tested::Failed { message: redactor.clean(&message), help };
    let connected = match reader::connect(&cluster.connect).await {
        Ok(c) => c,
        Err(SetUpError::Settings(e)) => {
            return failed(
                e.to_string(),
                Some(
                    html! { p.help { "The cluster CA must be PEM (-----BEGIN CERTIFICATE-----), or the base64 of it." } },
                ),
            );
        }
        Err(SetUpError::Client { error, .. }) => return failed(error.to_string(), None),
    };
    let cycle_options = CycleOptions::of(&settings.connect);
    let cycle = connected.read(&cycle_options, jiff::Timestamp::now()).await;
    match cycle.result {
        Ok(snapshot) => {
            let h = crate::health::assess(snapshot);
            Tested::Healthy { summary: h.summary_in(lang()), counters: h.counters_in(lang()) }
        }
        Err(e) => failed(e.to_string(), help(&e.kind)),
    }
}

/// What the test found, as the form shows it above itself.
pub(super) fn outcome_of(tested: &Tested) -> Markup {
    match tested {
        Tested::Healthy { summary, counters } => html! {
            div.tested {
                p { strong { (t("tested-read")) } " " (summary) }
                p.counters { (counters) }
                p.muted { (t("tested-nothing-saved")) }
            }
        },
        Tested::Failed { message, help } => html! {
            div.error { strong { (t("tested-failed")) } " " (message) }
            @if let Some(h) = help { (h) }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_puts_each_argument_in_code_and_escapes_everything() {
        let names = vec!["kubernetes".to_string(), "<b>node-1</b>".to_string()];
        let kind = ReadErrorKind::WrongName { host: "k3s.lan\"><script>".into(), names };
        let html = help(&kind).unwrap().into_string();
        assert!(
            html.starts_with("<p class=\"help\">The address <code>k3s.lan&quot;&gt;&lt;script&gt;</code> is not among"),
            "{html}"
        );
        assert!(
            html.contains("which lists <code>kubernetes</code>, <code>&lt;b&gt;node-1&lt;/b&gt;</code>. Use"),
            "{html}"
        );
        assert!(
            html.ends_with("start the server with <code>--tls-san k3s.lan&quot;&gt;&lt;script&gt;</code>.</p>"),
            "{html}"
        );
        assert!(!html.contains('\u{E000}') && !html.contains('\u{E001}'));
    }
}
