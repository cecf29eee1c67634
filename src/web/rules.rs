//! The rules as they are applied: `/rules` and `GET /api/v1/rules`. Every built-in rule, its
//! hold, severity, escalation and read, and the file's `[[rule]]` entries in force for it.

use maud::html;
use serde_json::{Value, json};

use super::html::{t, tr};
use crate::board::Board;
use crate::rules::tune::{Override, Tuning};
use crate::rules::{RULES, Rule, prometheus::duration};

fn seconds(d: Option<std::time::Duration>) -> Value {
    d.map_or(Value::Null, |d| json!(d.as_secs()))
}

fn override_json(o: &Override) -> Value {
    json!({
        "written": o.written,
        "enabled": o.enabled,
        "for_seconds": o.hold().as_secs(),
        "severity": o.severity(),
        "escalate_after_seconds": seconds(o.escalate_after()),
        "labels": o.labels,
        "matchers": o.written.matchers,
    })
}

fn rule_json(r: &Rule, tuning: &Tuning) -> Value {
    json!({
        "alertname": r.alertname,
        "severity": r.severity,
        "for_seconds": r.hold.as_secs(),
        "escalate_after_seconds": seconds(r.escalate_after),
        "reads": r.reads.name(),
        "labels": r.labels,
        "overrides": tuning.of(r).map(override_json).collect::<Vec<_>>(),
    })
}

/// `GET /api/v1/rules`: every rule in the order of `dumbmonit rules`, with its overrides.
pub fn api(board: &Board) -> String {
    let tuning = board.tuning_now();
    Value::Array(RULES.iter().map(|r| rule_json(r, &tuning)).collect()).to_string()
}

/// What an override changes, in words.
fn changes(o: &Override) -> String {
    let w = &o.written;
    let mut said = Vec::new();
    if !o.enabled {
        said.push(t("rules-off"));
    }
    if let Some(hold) = o.hold {
        said.push(tr("rules-for", &[("for", duration(hold).into())]));
    }
    if let Some(s) = o.severity {
        said.push(t(&format!("severity-{}", s.as_str())));
    }
    if let Some(after) = o.escalate_after {
        said.push(tr("rules-escalate", &[("after", duration(after).into())]));
    }
    for (k, v) in &o.labels {
        said.push(format!("{k}={v:?}"));
    }
    let on = if w.matchers.is_empty() { t("rules-every-alert") } else { w.matchers.join(", ") };
    format!("{}: {}", on, said.join(", "))
}

/// `/rules`.
pub fn page(board: &Board) -> String {
    let tuning = board.tuning_now();
    let body = html! {
        h1 { (t("rules-title")) }
        p.muted { (t("rules-intro")) }
        div.scroll {
            table {
                thead { tr {
                    th { (t("col-alert")) } th { (t("col-severity")) } th { (t("rules-col-for")) }
                    th { (t("rules-col-reads")) } th { (t("rules-col-overrides")) }
                } }
                tbody {
                    @for r in RULES {
                        tr {
                            td {
                                a href=(format!("/runbooks#{}", r.alertname.to_ascii_lowercase())) { code { (r.alertname) } }
                                br; span.muted { (t(&format!("{}.title", r.words))) }
                            }
                            td { (t(&format!("severity-{}", r.severity.as_str())))
                                @if let Some(after) = r.escalate_after { " " (tr("rules-escalate", &[("after", duration(after).into())])) } }
                            td { @if r.hold.is_zero() { (t("rules-at-once")) } @else { (duration(r.hold)) } }
                            td { (r.reads.name()) }
                            td { @for o in tuning.of(r) { div { (changes(o)) } } }
                        }
                    }
                }
            }
        }
    };
    super::pages::page_of(&format!("{} · DumbMonit", t("rules-title")), board, body)
}
