//! The built-in rules tuned without forking them: each `[[rule]]` of serve's file checked into
//! an [`Override`] (its rule, its hold, severity and escalation, the labels it adds, whether the
//! rule is on, and the alerts its matchers match), and the [`Tuning`] the engine applies to each
//! observation: the first override of the observation's rule whose matchers all hold, as
//! Alertmanager's routes are taken, the rule as built when none does.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::{RULES, Rule, Severity};
use crate::config::RuleConfig;
use crate::error::{ConfigError, Problem, Section};
use crate::silence::Matcher;

pub use crate::config::OWN_LABELS;

/// One `[[rule]]`, checked.
#[derive(Clone, Debug)]
pub struct Override {
    pub rule: &'static Rule,
    pub hold: Option<Duration>,
    pub severity: Option<Severity>,
    pub escalate_after: Option<Duration>,
    /// False: the rule raises none of the alerts this override applies to.
    pub enabled: bool,
    /// Added to its alerts.
    pub labels: BTreeMap<String, String>,
    /// The alerts it applies to (all of its rule's without any).
    pub matchers: Vec<Matcher>,
    /// As the file writes it, for the pages and the API.
    pub written: RuleConfig,
}

impl Override {
    /// The hold of the alerts it applies to.
    pub fn hold(&self) -> Duration {
        self.hold.unwrap_or(self.rule.hold)
    }

    /// Where they escalate.
    pub fn escalate_after(&self) -> Option<Duration> {
        self.escalate_after.or(self.rule.escalate_after)
    }

    /// Their severity.
    pub fn severity(&self) -> Severity {
        self.severity.unwrap_or(self.rule.severity)
    }

    /// It applies to an alert with these labels (its object's, its `alertname` and `cluster`).
    pub fn applies(&self, labels: &BTreeMap<String, String>) -> bool {
        self.matchers.iter().all(|m| m.matches(labels))
    }
}

/// Every `[[rule]]` of the file, in its order.
#[derive(Clone, Debug, Default)]
pub struct Tuning {
    overrides: Vec<Override>,
}

/// Two tunings are the same when the file writes the same entries in the same order: each is
/// checked from what it writes alone.
impl PartialEq for Tuning {
    fn eq(&self, other: &Tuning) -> bool {
        self.overrides.len() == other.overrides.len()
            && self.overrides.iter().zip(&other.overrides).all(|(a, b)| a.written == b.written)
    }
}

/// The rules as built.
pub static AS_BUILT: Tuning = Tuning { overrides: Vec::new() };

impl Tuning {
    /// Checks the file's `[[rule]]` entries (`file`, when given, is named in the errors).
    pub fn check(sections: &[RuleConfig], file: Option<&Path>) -> Result<Tuning, ConfigError> {
        let mut overrides = Vec::with_capacity(sections.len());
        for (i, written) in sections.iter().enumerate() {
            let section = Section::Rule(i + 1, written.name.as_str().into());
            let refused = |problem: Problem| match file {
                Some(f) => ConfigError::in_file(f, section.clone(), problem),
                None => ConfigError::section(section.clone(), problem),
            };
            overrides.push(checked(written).map_err(refused)?);
        }
        Ok(Tuning { overrides })
    }

    pub fn overrides(&self) -> &[Override] {
        &self.overrides
    }

    pub fn is_empty(&self) -> bool {
        self.overrides.is_empty()
    }

    /// The overrides of `rule`, in the file's order.
    pub fn of<'a>(&'a self, rule: &Rule) -> impl Iterator<Item = &'a Override> + 'a {
        let alertname = rule.alertname;
        self.overrides.iter().filter(move |o| o.rule.alertname == alertname)
    }

    /// The override an alert of `rule` with these labels takes: the first of its rule whose
    /// matchers all hold.
    pub fn applying(&self, rule: &Rule, labels: &BTreeMap<String, String>) -> Option<&Override> {
        self.of(rule).find(|o| o.applies(labels))
    }
}

fn duration(field: &'static str, text: &Option<String>) -> Result<Option<Duration>, Problem> {
    text.as_deref()
        .map(|t| {
            crate::config::parse_duration(t)
                .map(Duration::from_secs_f64)
                .map_err(|source| Problem::RuleDuration { field, source })
        })
        .transpose()
}

fn checked(w: &RuleConfig) -> Result<Override, Problem> {
    let Some(rule) = RULES.iter().copied().find(|r| r.alertname == w.name) else {
        let known = RULES.iter().map(|r| r.alertname).collect();
        return Err(Problem::UnknownRule { name: w.name.as_str().into(), known });
    };
    let severity = match w.severity.as_deref() {
        None => None,
        Some(s) => Some(Severity::named(s).ok_or_else(|| Problem::UnknownSeverity { value: s.into() })?),
    };
    let hold = duration("for", &w.hold)?;
    let escalate_after = duration("escalate_after", &w.escalate_after)?;
    for label in w.labels.keys() {
        let why = if !crate::silence::is_label_name(label) {
            Some("is not a label name (letters, digits and '_', not starting with a digit or \"__\")")
        } else if OWN_LABELS.contains(&label.as_str()) {
            Some("is the alert's own: alertname, severity and cluster are set by DumbMonit (set `severity` itself)")
        } else if rule.labels.contains(&label.as_str()) {
            Some("names the alert's object: it cannot be changed")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(Problem::RuleLabel { label: label.as_str().into(), why });
        }
    }
    let mut matchers = Vec::with_capacity(w.matchers.len());
    for text in &w.matchers {
        let m = Matcher::parse(text)?;
        if !OWN_LABELS.contains(&m.name.as_str()) && !rule.labels.contains(&m.name.as_str()) {
            let carried = OWN_LABELS.iter().chain(rule.labels).copied().collect();
            return Err(Problem::LabelNeverCarried { label: m.name.as_str().into(), rule: rule.alertname, carried });
        }
        matchers.push(m);
    }
    crate::silence::within_budget(&matchers).map_err(Problem::Matchers)?;
    Ok(Override {
        rule,
        hold,
        severity,
        escalate_after,
        enabled: w.enabled.unwrap_or(true),
        labels: w.labels.clone(),
        matchers,
        written: w.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> RuleConfig {
        RuleConfig { name: name.into(), ..Default::default() }
    }

    fn refused(w: RuleConfig) -> String {
        Tuning::check(&[entry("KubernetesNodeNotReady"), w], None).unwrap_err().to_string()
    }

    #[test]
    fn each_bad_entry_is_refused_naming_its_field() {
        let said = refused(entry("KubernetesPodCrashloop"));
        assert!(
            said.starts_with(
                "rule 2 (\"KubernetesPodCrashloop\"): field `name`: no built-in rule is called \"KubernetesPodCrashloop\"; the rules are KubernetesNodeNotReady, KubernetesNodePressure, "
            ),
            "{said}"
        );
        let w = |f: fn(&mut RuleConfig)| {
            let mut w = entry("KubernetesPodCrashLooping");
            f(&mut w);
            refused(w)
        };
        assert_eq!(
            w(|w| w.severity = Some("page".into())),
            "rule 2 (\"KubernetesPodCrashLooping\"): field `severity`: \"page\" is not a severity (notice, warning or critical)"
        );
        assert!(
            w(|w| w.hold = Some("20 minutes".into()))
                .starts_with("rule 2 (\"KubernetesPodCrashLooping\"): field `for`: ")
        );
        assert!(w(|w| w.escalate_after = Some("soon".into())).contains("field `escalate_after`: "));
        assert!(w(|w| w.matchers = vec!["namespace=~\"prod-.*".into()]).contains("field `matchers`: "));
        assert_eq!(
            w(|w| w.matchers = vec!["node=\"n1\"".into()]),
            "rule 2 (\"KubernetesPodCrashLooping\"): field `matchers`: KubernetesPodCrashLooping's alerts never carry the label `node` (they carry alertname, severity, cluster, namespace, pod, workload)"
        );
        assert!(
            w(|w| w.labels = [("severity".into(), "page".into())].into())
                .contains("field `labels`: \"severity\" is the alert's own")
        );
        assert!(w(|w| w.labels = [("pod".into(), "x".into())].into()).contains("names the alert's object"));
        assert!(w(|w| w.labels = [("team-name".into(), "x".into())].into()).contains("is not a label name"));
    }

    #[test]
    fn the_first_override_whose_matchers_hold_applies() {
        let mut prod = entry("KubernetesPodCrashLooping");
        prod.matchers = vec!["namespace=~\"prod-.*\"".into()];
        prod.hold = Some("20m".into());
        prod.severity = Some("critical".into());
        let mut all = entry("KubernetesPodCrashLooping");
        all.enabled = Some(false);
        let t = Tuning::check(&[prod, all], None).unwrap();
        let rule = &crate::rules::POD_CRASH_LOOPING;
        let labels = |ns: &str| BTreeMap::from([("namespace".to_string(), ns.to_string())]);
        let in_prod = t.applying(rule, &labels("prod-eu")).unwrap();
        assert_eq!(
            (in_prod.hold(), in_prod.severity(), in_prod.enabled),
            (Duration::from_secs(1200), Severity::Critical, true)
        );
        assert!(!t.applying(rule, &labels("dev")).unwrap().enabled, "the second, for the others");
        assert!(t.applying(&crate::rules::POD_PENDING, &labels("prod-eu")).is_none(), "another rule is as built");
    }
}
