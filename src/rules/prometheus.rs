//! `dumbmonit rules`: the built-in rules as a Prometheus rule file over the `dumbmonit_k8s_`
//! metrics, for users whose Prometheus scrapes DumbMonit and whose Alertmanager routes alerts.

use super::tune::Tuning;
use super::{RULES, Rule, Warning};

use crate::lang::{Arg, Lang};

/// A Prometheus duration: `5m`, `1h`, `70m`.
pub fn duration(d: std::time::Duration) -> String {
    let s = d.as_secs();
    if s.is_multiple_of(3600) && s > 0 {
        format!("{}h", s / 3600)
    } else if s.is_multiple_of(60) {
        format!("{}m", s / 60)
    } else {
        format!("{s}s")
    }
}

/// A look-back window that leaves out a sample exactly one window old, on Prometheus 2.x
/// (whose range selectors include their start) as on 3.x (whose do not): one second less.
pub(super) fn window(d: std::time::Duration) -> String {
    let s = d.as_secs() - 1;
    format!("{}m{}s", s / 60, s % 60)
}

/// One rule of the file: a rule's export, or its Warning twin.
struct Export {
    rule: &'static Rule,
    expr: String,
    hold: std::time::Duration,
    severity: &'static str,
    /// The template of `$value` in the summary (`{{ $value | humanizeDuration }}`).
    value: &'static str,
    /// The attribute of the rule's messages that is its description: `prom-description`, or
    /// `prom-description-escalated` for the escalation; the summary is `prom-summary`. Their
    /// arguments are Prometheus' templates.
    description: &'static str,
    /// Labels a `[[rule]]` adds.
    labels: std::collections::BTreeMap<String, String>,
}

/// Every label a rule's message may name, as a Prometheus template of it: `cluster`, and each
/// rule's object labels.
pub(super) fn labels() -> Vec<&'static str> {
    let mut out = vec!["cluster"];
    for l in RULES.iter().flat_map(|r| r.labels) {
        if !out.contains(l) {
            out.push(l);
        }
    }
    out
}

/// A rule's annotation in `lang`: its message, each argument the template of its label.
fn annotation(lang: Lang, e: &Export, attribute: &str) -> String {
    let templates: Vec<(&str, String)> = labels().into_iter().map(|l| (l, format!("{{{{ $labels.{l} }}}}"))).collect();
    let mut args: Vec<(&str, Arg)> = templates.iter().map(|(l, t)| (*l, Arg::from(t))).collect();
    args.push(("value", e.value.into()));
    lang.tr(&format!("{}.{attribute}", e.rule.words), &args)
}

/// Every rule's export, in the table's order, each escalation right after its rule; as the
/// first `[[rule]]` of each without matchers tunes it (one with matchers is serve's alone).
fn exports(tuning: &Tuning) -> Vec<Export> {
    let mut out = Vec::new();
    for rule in RULES {
        let whole = tuning.of(rule).find(|o| o.matchers.is_empty());
        if whole.is_some_and(|o| !o.enabled) {
            continue;
        }
        let e = &rule.export;
        let hold = whole.and_then(|o| o.hold).or(e.hold).unwrap_or(rule.hold);
        let severity = whole.and_then(|o| o.severity).unwrap_or(rule.severity);
        let labels = whole.map(|o| o.labels.clone()).unwrap_or_default();
        let expr = (e.expr)();
        let first = Export {
            rule,
            expr: expr.clone(),
            hold,
            severity: severity.as_str(),
            value: e.value,
            description: "prom-description",
            labels: labels.clone(),
        };
        out.push(first);
        // An escalation is a second rule at Warning: the same expression held for the delay
        // too, or another expression. A rule at Warning or above does not escalate.
        let escalate_after = whole.and_then(|o| o.escalate_after).or(rule.escalate_after);
        if let Warning::Also(other, expr) = e.warning {
            let severity = whole.and_then(|o| o.severity).unwrap_or(other);
            out.push(Export {
                rule,
                expr: expr(),
                hold,
                severity: severity.as_str(),
                value: e.value,
                description: "prom-description",
                labels,
            });
        } else if severity >= super::Severity::Warning {
        } else if let Some(after) = escalate_after {
            out.push(Export {
                rule,
                expr,
                hold: hold + after,
                severity: "warning",
                value: e.value,
                description: "prom-description-escalated",
                labels,
            });
        } else if let Warning::When(expr) = e.warning {
            out.push(Export {
                rule,
                expr: expr(),
                hold,
                severity: "warning",
                value: e.value,
                description: "prom-description",
                labels,
            });
        }
    }
    out
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The rule file, its annotations in `lang` (the rest is the same in every language).
pub fn rule_file(lang: Lang) -> String {
    rule_file_tuned(lang, &super::tune::AS_BUILT, None)
}

/// The rule file as the file's `[[rule]]` entries tune the rules (`dumbmonit rules --config`),
/// each alert with its `runbook_url` under `runbooks` when the file says where they are.
pub fn rule_file_tuned(lang: Lang, tuning: &Tuning, runbooks: Option<&str>) -> String {
    let mut out = String::from(
        "# The built-in rules of DumbMonit over its dumbmonit_k8s_ metrics (`dumbmonit rules`).\n\
         # Check: promtool check rules FILE. Differences from the built-in evaluation:\n\
         # - per-pod series cover at most 500 pods, those with problems first;\n\
         # - increase() extrapolates at the window's edges, the built-in rule counts the increases seen;\n\
         # - the escalation is a second rule at severity warning (inhibit the notice one in Alertmanager);\n\
         # - KubernetesJobFailed is not resolved by a newer successful run of the CronJob (the built-in rule is);\n\
         # - KubernetesCronJobMissed needs a lastScheduleTime (the built-in rule counts from creation otherwise).\n",
    );
    for (i, o) in tuning.overrides().iter().enumerate().filter(|(_, o)| !o.matchers.is_empty()) {
        out.push_str(&format!(
            "# - [[rule]] {} ({}, matchers {}) is applied by serve only: route those alerts in Alertmanager;\n",
            i + 1,
            o.rule.alertname,
            o.written.matchers.join(", ")
        ));
    }
    out.push_str("groups:\n  - name: dumbmonit\n    rules:\n");
    for e in exports(tuning) {
        out.push_str(&format!("      - alert: {}\n        expr: {}\n", e.rule.alertname, quote(&e.expr)));
        if !e.hold.is_zero() {
            out.push_str(&format!("        for: {}\n", duration(e.hold)));
        }
        out.push_str(&format!("        labels:\n          severity: {}\n", e.severity));
        for (k, v) in &e.labels {
            out.push_str(&format!("          {k}: {}\n", quote(v)));
        }
        out.push_str(&format!(
            "        annotations:\n          summary: {}\n          description: {}\n",
            quote(&annotation(lang, &e, "prom-summary")),
            quote(&annotation(lang, &e, e.description))
        ));
        if let Some(base) = runbooks {
            out.push_str(&format!(
                "          runbook_url: {}\n",
                quote(&crate::config::runbook_url(base, e.rule.alertname))
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_windows() {
        assert_eq!(duration(std::time::Duration::from_secs(300)), "5m");
        assert_eq!(duration(std::time::Duration::from_secs(3600)), "1h");
        assert_eq!(duration(std::time::Duration::from_secs(4200)), "70m");
        assert_eq!(window(super::super::CRASHLOOP_WINDOW), "9m59s");
    }

    #[test]
    fn every_rule_is_exported() {
        let file = rule_file(Lang::En);
        for r in super::super::RULES {
            assert!(file.contains(&format!("- alert: {}\n", r.alertname)), "{}", r.alertname);
        }
    }
}
