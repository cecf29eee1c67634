//! HTML pieces: escaping (every string from a cluster is untrusted), the page layout, times,
//! and who reads: the language of the request being answered.

use jiff::Timestamp;
use maud::{DOCTYPE, Markup, html};

use crate::lang::{Arg, Lang};

/// Who reads the page being made: the language chosen for the request (its `dumbmonit_lang`
/// cookie, else its `Accept-Language`) and where it is (for the footer's language links).
/// Set once per request by the pages' middleware, read by whatever makes the page.
#[derive(Clone, Debug)]
pub struct Visitor {
    pub lang: Lang,
    /// The request's path and query.
    pub here: String,
}

impl Default for Visitor {
    fn default() -> Visitor {
        Visitor { lang: Lang::En, here: "/".into() }
    }
}

tokio::task_local! {
    static READER: Visitor;
}

impl Visitor {
    /// Runs `f` (a request's handling) with this reader as the one pages are made for.
    pub async fn scope<F: std::future::Future>(self, f: F) -> F::Output {
        READER.scope(self, f).await
    }

    /// The reader of the request being answered; English outside a request (unit tests).
    pub fn current() -> Visitor {
        READER.try_with(Visitor::clone).unwrap_or_default()
    }
}

/// The current reader's language.
pub fn lang() -> Lang {
    READER.try_with(|r| r.lang).unwrap_or_default()
}

/// A message of the pages in the current reader's language.
pub fn t(id: &str) -> String {
    lang().t(id)
}

/// A message with arguments in the current reader's language.
pub fn tr(id: &str, args: &[(&str, Arg)]) -> String {
    lang().tr(id, args)
}

/// Escapes a path segment for an href (cluster names are ours, but may hold anything).
pub fn path_segment(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>().replace('+', "%20")
}

/// `12:03:04 UTC`
pub fn clock(t: Timestamp) -> String {
    t.strftime("%H:%M:%S UTC").to_string()
}

/// `12 s ago`, `4 min ago`, `3 h ago`, `2 days ago` (`il y a 3 h`).
pub fn ago(t: Timestamp, now: Timestamp) -> String {
    let s = now.as_second() - t.as_second();
    let (unit, n) = match s {
        s if s < 0 => ("now", 0),
        s if s < 90 => ("s", s),
        s if s < 90 * 60 => ("min", s / 60),
        s if s < 48 * 3600 => ("h", s / 3600),
        s => ("days", s / 86400),
    };
    tr("ago", &[("unit", unit.into()), ("n", n.into())])
}

/// A whole page: title, the banner (the demo's "simulated" notice) and the body. Everything
/// interpolated into markup is escaped by `maud`; only markup built by `maud` is taken as is.
pub fn page(title: &str, banner: Option<&str>, body: Markup) -> String {
    layout(title, banner, body, true)
}

/// A page that never reloads itself: the forms (a reload would lose what was typed) and the
/// answer that shows an agent's token once.
pub fn still_page(title: &str, banner: Option<&str>, body: Markup) -> String {
    layout(title, banner, body, false)
}

fn layout(title: &str, banner: Option<&str>, body: Markup, refresh: bool) -> String {
    let reader = Visitor::current();
    html! {
        (DOCTYPE)
        html lang=(reader.lang.code()) {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                @if refresh {
                    meta http-equiv="refresh" content="30";
                }
                title { (title) }
                link rel="stylesheet" href="/static/dumbmonit.css";
            }
            body {
                @if let Some(b) = banner {
                    p.banner { (reader.lang.t(b)) }
                }
                header { a href="/" { "DumbMonit" } }
                main { (body) }
                (language_links(&reader))
            }
        }
    }
    .into_string()
}

/// The footer's « English · Français »: each sets the `dumbmonit_lang` cookie and comes back here.
pub fn language_links(reader: &Visitor) -> Markup {
    let back = form_urlencoded::byte_serialize(reader.here.as_bytes()).collect::<String>();
    html! {
        footer.languages {
            a href={ "/language/en?back=" (back) } lang="en" hreflang="en" aria-current=[(reader.lang == Lang::En).then_some("true")] { "English" }
            " · "
            a href={ "/language/fr?back=" (back) } lang="fr" hreflang="fr" aria-current=[(reader.lang == Lang::Fr).then_some("true")] { "Français" }
        }
    }
}

/// The stylesheet: one file, no external resources.
pub const CSS: &str = r#"
:root { --ok: #1a7f37; --notice: #9a6700; --critical: #cf222e; --muted: #57606a; --line: #d0d7de; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; background: #fff; }
header { padding: .6rem 1rem; border-bottom: 1px solid var(--line); font-weight: 600; }
header a { color: inherit; text-decoration: none; }
main { padding: 1rem; max-width: 1200px; }
h1 { font-size: 1.4rem; margin: .2rem 0 .4rem; }
h2 { font-size: 1.1rem; margin: 1.6rem 0 .5rem; }
.banner { margin: 0; padding: .5rem 1rem; background: #fff8c5; border-bottom: 1px solid #d4a72c; font-weight: 600; }
.persistence { margin: 0; padding: .5rem 1rem; background: #ffebe9; border-bottom: 1px solid #ff8182; font-weight: 600; }
.sentence { font-size: 1.15rem; font-weight: 600; margin: .3rem 0; }
.ok { color: var(--ok); } .notice { color: var(--notice); } .critical, .unreachable { color: var(--critical); }
.muted, .counters { color: var(--muted); }
.error { border: 1px solid var(--critical); background: #ffebe9; padding: .6rem .8rem; border-radius: 6px; margin: .6rem 0; }
.stale { border: 1px dashed var(--muted); padding: .4rem .8rem; border-radius: 6px; color: var(--muted); }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; margin: .3rem 0; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .8rem; text-transform: uppercase; color: var(--muted); white-space: nowrap; }
td.why { font-size: .9rem; word-break: break-word; }
td.why div + div { margin-top: .2rem; }
.more { color: var(--muted); font-style: italic; }
.statuses a { text-decoration: none; }
.statuses a[aria-current] { font-weight: bold; text-decoration: underline; }
form.filter { margin: .4rem 0; }
nav.pages { margin: .4rem 0; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 480px), 1fr)); gap: .8rem 1.6rem; }
figure { margin: 0; }
figcaption { font-size: .85rem; color: var(--muted); }
svg { max-width: 100%; height: auto; }
.legend span { margin-right: .8rem; font-size: .8rem; }
.sw-ready { color: #1a7f37; } .sw-total { color: #8c959f; } .sw-pending { color: #9a6700; } .sw-failed { color: #cf222e; } .sw-running { color: #0969da; }
nav.range a { margin-right: .6rem; }
form.cluster, form.silence, form.ack { display: grid; gap: .6rem; max-width: 560px; margin: .8rem 0 1.2rem; }
form.cluster label, form.silence label, form.ack label { display: grid; gap: .2rem; font-weight: 600; }
form.cluster label.check, form.silence label.check { display: block; font-weight: 400; }
form.cluster input[type=text], form.cluster input[type=number], form.cluster input[type=password], form.cluster textarea,
form.silence input[type=text], form.silence textarea, form.ack input[type=text] { font: inherit; font-weight: 400; padding: .35rem .5rem; border: 1px solid var(--line); border-radius: 6px; }
form.cluster textarea, form.silence textarea { font-family: ui-monospace, monospace; font-size: 12px; }
form.inline { display: inline; }
button { font: inherit; padding: .35rem .9rem; border: 1px solid var(--line); border-radius: 6px; background: #f6f8fa; cursor: pointer; }
form.remove button { color: var(--critical); }
.tested { border-left: 4px solid var(--ok); padding: .4rem .8rem; margin: .6rem 0; background: #f0fff4; }
.help { border-left: 4px solid var(--notice); padding: .4rem .8rem; margin: .6rem 0; background: #fff8c5; }
pre.command { white-space: pre-wrap; word-break: break-all; background: #f6f8fa; padding: .6rem; border-radius: 6px; }
p.actions { margin: .8rem 0; }
footer.languages { padding: .6rem 1rem; border-top: 1px solid var(--line); color: var(--muted); font-size: .85rem; }
footer.languages a[aria-current] { font-weight: 600; color: inherit; text-decoration: none; }
"#;

/// A page with the characters that could turn its text around or hide some of it (direction
/// embeddings, overrides and isolates, line and paragraph separators, control characters other
/// than the newline and the tab) shown as visible escapes (`\u{202e}`), as the log shows them: an agent's
/// address or a cluster's message of anyone's making cannot reverse a heading. The pages' own
/// text has none of them, so the whole page is seen to once, whatever put them in it.
pub fn visible(page: bytes::Bytes) -> bytes::Bytes {
    // The marks U+200E and U+200F only orient the characters beside them (right-to-left text
    // needs them): they are kept; embeddings, overrides and isolates are not.
    let hides = |c: char| crate::logs::forges(c) && !matches!(c, '\n' | '\t' | '\r' | '\u{200e}' | '\u{200f}');
    let Ok(text) = std::str::from_utf8(&page) else { return page };
    if !text.chars().any(hides) {
        return page;
    }
    let mut out = String::with_capacity(text.len() + 64);
    for c in text.chars() {
        if hides(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_makes_markup_inert() {
        let evil = "<script>alert(\"x\")</script> & 'q'";
        let page = page(evil, Some("demo-banner"), html! { p title=(evil) { (evil) } });
        assert!(!page.contains("<script"), "{page}");
        assert!(page.contains("<title>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; 'q'</title>"), "{page}");
        assert!(page.contains("<p title=\"&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; 'q'\">"), "{page}");
        assert_eq!(path_segment("a b/c"), "a%20b%2Fc");
    }

    #[test]
    fn ages_read_naturally() {
        let now: Timestamp = "2026-11-30T12:00:00Z".parse().unwrap();
        assert_eq!(ago("2026-11-30T11:59:30Z".parse().unwrap(), now), "30 s ago");
        assert_eq!(ago("2026-11-30T11:53:00Z".parse().unwrap(), now), "7 min ago");
        assert_eq!(ago("2026-11-29T12:00:00Z".parse().unwrap(), now), "24 h ago");
        assert_eq!(clock(now), "12:00:00 UTC");
    }
}
