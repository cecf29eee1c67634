//! The runbooks, served by the pages themselves: `/runbooks` in the reader's language,
//! `/runbooks/en` and `/runbooks/fr` in one (where the notifications' `runbook_url` point,
//! in the notifier's language). Each rule's section has its alert name in lower case as its
//! anchor, as GitHub makes it of the same heading in docs/alerts.md.

use maud::{PreEscaped, html};
use pulldown_cmark::{Event, Options, Parser};

use super::html::t;
use crate::board::Board;
use crate::lang::Lang;

/// The English runbooks: docs/alerts.md from its `## Runbooks` heading.
const EN: &str = include_str!("../../docs/alerts.md");
/// The French ones: docs/alertes.md.
const FR: &str = include_str!("../../docs/alertes.md");

/// The runbooks' Markdown in `lang`, each rule's heading given its anchor.
fn markdown(lang: Lang) -> String {
    let text = match lang {
        Lang::Fr => FR,
        _ => EN.find("\n## Runbooks\n").map_or(EN, |at| &EN[at + 1..]),
    };
    text.lines()
        .map(|line| match line.strip_prefix("### ") {
            Some(name) if name.starts_with("Kubernetes") && !name.contains(' ') => {
                format!("### {name} {{#{}}}", name.to_ascii_lowercase())
            }
            _ => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The runbooks as HTML.
pub fn html(lang: Lang) -> String {
    render(&markdown(lang))
}

/// Markdown as HTML. The documents are ours, but raw HTML in them is shown as text, never
/// passed through.
fn render(text: &str) -> String {
    let parser = Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_HEADING_ATTRIBUTES).map(|e| match e {
        Event::Html(s) | Event::InlineHtml(s) => Event::Text(s),
        e => e,
    });
    let mut out = String::with_capacity(text.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut out, parser);
    out
}

/// `/runbooks`, `/runbooks/en`, `/runbooks/fr`: in `lang`, or the reader's.
pub fn page(board: &Board, lang: Option<Lang>) -> String {
    let lang = lang.unwrap_or_else(super::html::lang);
    let body = html! {
        div.runbooks lang=(lang.code()) { (PreEscaped(html(lang))) }
    };
    super::pages::page_of(&format!("{} · DumbMonit", t("runbooks-title")), board, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_its_anchor_in_both_languages_and_raw_html_is_text() {
        for lang in [Lang::En, Lang::Fr] {
            let page = html(lang);
            for r in crate::rules::RULES {
                let anchor = format!("id=\"{}\"", r.alertname.to_ascii_lowercase());
                assert!(page.contains(&anchor), "{}: no {anchor} in {}", r.alertname, lang.code());
            }
            assert!(!page.contains("<script"), "{}", lang.code());
        }
        assert!(!html(Lang::En).contains("Tuning the rules"), "the runbooks only");
        let escaped = render("a <b>bold</b> and\n\n<script>alert(1)</script>\n");
        assert!(escaped.contains("&lt;b&gt;") && escaped.contains("&lt;script&gt;"), "{escaped}");
    }
}
