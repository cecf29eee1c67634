//! What keeps the notifiers quiet: silences (matchers over an alert's labels, in Alertmanager's
//! syntax and with its meaning, for a time) and maintenance windows (a cluster's alerts, for a
//! time or on a schedule). The alerts they match are still evaluated and shown, marked; the
//! notifiers are not told of them while they hold.
//!
//! - silences from serve's file (`[[silence]]`): standing ignore rules, with no end;
//! - silences made through the API or the pages ([`postable`]: Alertmanager's v2 body), with a
//!   start and an end, kept in the state database;
//! - [`maintenance`]: windows, one-off or recurring in a time zone.

pub mod cost;
pub mod maintenance;
pub mod postable;

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;

pub use maintenance::Window;

/// The longest comment of a silence or a window made through the API or the pages, in bytes.
pub const MAX_COMMENT: usize = 4096;
/// The longest `createdBy`, in bytes.
pub const MAX_CREATED_BY: usize = 256;
/// The maintenance windows that may be kept (made through the API or the pages).
pub const MAX_WINDOWS: usize = 1000;

/// The labels DumbMonit's alerts carry: a matcher on another could only ever match its absence,
/// which is a mistake more often than a wish, so it is refused.
pub const LABELS: &[&str] = &[
    "alertname",
    "severity",
    "cluster",
    "namespace",
    "pod",
    "workload",
    "node",
    "condition",
    "pvc",
    "kind",
    "job",
    "cronjob",
    "owner",
    "apiservice",
    "service",
    "hpa",
    "certificate",
    "component",
    "pdb",
    "resourcequota",
    "resource",
    "pv",
    "phase",
    "configuration",
    "webhook",
    "failure_policy",
];

/// How a matcher compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Equal,
    NotEqual,
    Regex,
    NotRegex,
}

impl Op {
    /// From Alertmanager's `isRegex` and `isEqual`.
    pub fn of(is_regex: bool, is_equal: bool) -> Op {
        match (is_regex, is_equal) {
            (false, true) => Op::Equal,
            (false, false) => Op::NotEqual,
            (true, true) => Op::Regex,
            (true, false) => Op::NotRegex,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Op::Equal => "=",
            Op::NotEqual => "!=",
            Op::Regex => "=~",
            Op::NotRegex => "!~",
        }
    }
}

/// One matcher: `name="value"`, `name!="value"`, `name=~"regex"`, `name!~"regex"`.
#[derive(Clone, Debug)]
pub struct Matcher {
    pub name: String,
    pub op: Op,
    pub value: String,
    /// The value anchored as Alertmanager anchors it (`^(?:value)$`), compiled; None for an
    /// equality, and for an expired silence's expression (never compiled: it mutes nothing).
    regex: Option<Arc<cost::Pattern>>,
}

impl PartialEq for Matcher {
    fn eq(&self, other: &Matcher) -> bool {
        (&self.name, self.op, &self.value) == (&other.name, other.op, &other.value)
    }
}

/// Why a matcher was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MatcherError {
    #[error("{text:?} is not a matcher (name=\"value\", name!=\"value\", name=~\"regex\" or name!~\"regex\")")]
    Syntax { text: String },
    #[error("{text:?}: no alert of DumbMonit has the label {name:?} (it has {})", LABELS.join(", "))]
    UnknownLabel { text: String, name: String },
    #[error("{text:?}: the regular expression does not compile: {detail}")]
    Regex { text: String, detail: String },
    #[error("{text:?}: the regular expression is too costly: compiled, it would take more than {}", cost::size(*limit))]
    TooCostly { text: String, limit: usize },
}

impl Matcher {
    /// Reads one matcher as Alertmanager writes it: the value in double quotes (with `\"`, `\\`
    /// and `\n` escapes), or bare when it has no quote, comma, brace or space.
    pub fn parse(text: &str) -> Result<Matcher, MatcherError> {
        Matcher::parse_with(text, Some(cost::PATTERN_LIMIT), true)
    }

    /// As [`Matcher::parse`], on any label name, not only those DumbMonit's rules give: what a
    /// notifier routes by, which may be a label a `[[rule]]` adds (`team`).
    pub fn parse_any_label(text: &str) -> Result<Matcher, MatcherError> {
        Matcher::parse_with(text, Some(cost::PATTERN_LIMIT), false)
    }

    /// As [`Matcher::parse`], its expression's syntax checked but not compiled (see
    /// [`Matcher::inert`]): what a form reads before the silence is made off its thread.
    pub fn parse_inert(text: &str) -> Result<Matcher, MatcherError> {
        Matcher::parse_with(text, None, true)
    }

    fn parse_with(text: &str, limit: Option<usize>, known_labels: bool) -> Result<Matcher, MatcherError> {
        let syntax = || MatcherError::Syntax { text: text.to_string() };
        let t = text.trim();
        let at = t.find(['=', '!']).ok_or_else(syntax)?;
        let name = t[..at].trim();
        let rest = &t[at..];
        let (op, value) = if let Some(v) = rest.strip_prefix("=~") {
            (Op::Regex, v)
        } else if let Some(v) = rest.strip_prefix("!~") {
            (Op::NotRegex, v)
        } else if let Some(v) = rest.strip_prefix("!=") {
            (Op::NotEqual, v)
        } else if let Some(v) = rest.strip_prefix('=') {
            (Op::Equal, v)
        } else {
            return Err(syntax());
        };
        let valid_name = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !valid_name {
            return Err(syntax());
        }
        let value = unquoted(value.trim()).ok_or_else(syntax)?;
        Matcher::checked(text, name, op, value, limit, known_labels)
    }

    /// A matcher from its parts, as Alertmanager's API gives them (`name`, `value`, `isRegex`,
    /// `isEqual`), checked as [`Matcher::parse`] checks it.
    pub fn new(name: &str, op: Op, value: &str) -> Result<Matcher, MatcherError> {
        Matcher::within(name, op, value, cost::PATTERN_LIMIT)
    }

    /// As [`Matcher::new`], its regular expression compiled in at most `limit` bytes (what is
    /// left of its silence's budget).
    pub fn within(name: &str, op: Op, value: &str, limit: usize) -> Result<Matcher, MatcherError> {
        let text = Matcher::text_of(name, op, value)?;
        Matcher::checked(&text, name, op, value.to_string(), Some(limit), true)
    }

    /// A matcher of an expired silence: checked (its expression's syntax too, which costs
    /// little), its expression never compiled (an expired silence mutes nothing, and is only
    /// listed).
    pub fn inert(name: &str, op: Op, value: &str) -> Result<Matcher, MatcherError> {
        let text = Matcher::text_of(name, op, value)?;
        Matcher::checked(&text, name, op, value.to_string(), None, true)
    }

    fn text_of(name: &str, op: Op, value: &str) -> Result<String, MatcherError> {
        let valid_name = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        let text = format!("{name}{}{}", op.as_str(), serde_json::to_string(value).unwrap_or_default());
        if !valid_name {
            return Err(MatcherError::Syntax { text });
        }
        Ok(text)
    }

    /// Its regular expression checked (compiled within `limit` when given), its label one of
    /// DumbMonit's when `known_labels`.
    fn checked(
        text: &str,
        name: &str,
        op: Op,
        value: String,
        limit: Option<usize>,
        known_labels: bool,
    ) -> Result<Matcher, MatcherError> {
        if known_labels && !LABELS.contains(&name) {
            return Err(MatcherError::UnknownLabel { text: text.to_string(), name: name.to_string() });
        }
        let refused = |e| match e {
            cost::PatternError::Syntax(detail) => {
                MatcherError::Regex { text: text.to_string(), detail: one_line(&detail) }
            }
            cost::PatternError::TooCostly { limit } => MatcherError::TooCostly { text: text.to_string(), limit },
        };
        let regex = match (op, limit) {
            (Op::Regex | Op::NotRegex, Some(limit)) => Some(cost::compile(&value, limit).map_err(refused)?),
            (Op::Regex | Op::NotRegex, None) => {
                cost::check_syntax(&value).map_err(refused)?;
                None
            }
            _ => None,
        };
        Ok(Matcher { name: name.to_string(), op, value, regex })
    }

    /// Its compiled regular expression, if it has one.
    pub fn pattern(&self) -> Option<&Arc<cost::Pattern>> {
        self.regex.as_ref()
    }

    /// The same matcher without its compiled expression: for a silence that has expired, which
    /// mutes nothing and is only listed.
    pub fn without_pattern(&self) -> Matcher {
        Matcher { regex: None, ..self.clone() }
    }

    /// Whether it is a regular expression (`=~`, `!~`), as Alertmanager's `isRegex`.
    pub fn is_regex(&self) -> bool {
        matches!(self.op, Op::Regex | Op::NotRegex)
    }

    /// Whether it asks for a match (`=`, `=~`), as Alertmanager's `isEqual`.
    pub fn is_equal(&self) -> bool {
        matches!(self.op, Op::Equal | Op::Regex)
    }

    /// Whether it holds of any value at all, absent included (`namespace=~".*"`): tried on
    /// values of every shape an alert's label takes.
    /// Every alert has `alertname`, `severity` and `cluster`: for them the absent value is no
    /// value to try (`cluster=~".+"` holds of every alert).
    pub fn matches_anything(&self) -> bool {
        const PROBES: &[&str] = &[
            "",
            "a",
            "KubernetesPodCrashLooping",
            "warning",
            "notice",
            "kube-system",
            "api-7c9696d669-8tpp6",
            "10.0.0.1:6443",
        ];
        let always = ["alertname", "severity", "cluster"].contains(&self.name.as_str());
        PROBES.iter().filter(|v| !(always && v.is_empty())).all(|v| self.matches_value(v))
    }

    /// Whether the labels match; a label an alert does not have is the empty string, as in
    /// Alertmanager (`pod=""` matches an alert without a pod).
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.matches_value(labels.get(&self.name).map_or("", String::as_str))
    }

    fn matches_value(&self, v: &str) -> bool {
        match (self.op, &self.regex) {
            (Op::Equal, _) => v == self.value,
            (Op::NotEqual, _) => v != self.value,
            (Op::Regex, Some(r)) => r.is_match(v),
            (Op::NotRegex, Some(r)) => !r.is_match(v),
            (_, None) => false,
        }
    }
}

impl std::fmt::Display for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}{}{}",
            self.name,
            self.op.as_str(),
            serde_json::to_string(&self.value).map_err(|_| std::fmt::Error)?
        )
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A value in double quotes, its escapes undone; or a bare word.
fn unquoted(v: &str) -> Option<String> {
    let Some(inner) = v.strip_prefix('"') else {
        let bare = !v.is_empty() && !v.contains(['"', ',', '{', '}', ' ', '\t']);
        return bare.then(|| v.to_string());
    };
    let inner = inner.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                other => {
                    out.push('\\');
                    out.push(other);
                }
            },
            '"' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// Why a silence's matchers were refused as a whole.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MatchersError {
    #[error("{count} matchers; a silence has at most {}", cost::MAX_MATCHERS)]
    TooMany { count: usize },
    #[error("matcher {}: {source}", index + 1)]
    Matcher { index: usize, source: MatcherError },
    #[error(
        "matcher {}: the regular expressions of one silence take at most {} compiled together, and with this one they would take more",
        index + 1,
        cost::size(cost::SILENCE_BUDGET)
    )]
    OverBudget { index: usize },
}

/// A Prometheus label name that is not reserved (`__…`).
pub fn is_label_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with("__")
}

/// A silence's matchers from their parts (name, how it compares, value), under the silence's
/// budget: at most [`cost::MAX_MATCHERS`], counted before anything is compiled, and their
/// regular expressions compiled in what is left of [`cost::SILENCE_BUDGET`] (an expression two
/// matchers share counted once). `compiled` false reads them, as many as they are, without
/// compiling (an expired silence's).
pub fn budgeted<'a>(
    parts: impl ExactSizeIterator<Item = (&'a str, Op, &'a str)>,
    compiled: bool,
) -> Result<Vec<Matcher>, MatchersError> {
    budgeted_within(parts, compiled, cost::SILENCE_BUDGET)
}

/// As [`budgeted`], in at most `budget` bytes (what is left of the budget of all silences, when
/// that is less than a silence's).
pub fn budgeted_within<'a>(
    parts: impl ExactSizeIterator<Item = (&'a str, Op, &'a str)>,
    compiled: bool,
    budget: usize,
) -> Result<Vec<Matcher>, MatchersError> {
    let count = parts.len();
    if compiled && count > cost::MAX_MATCHERS {
        return Err(MatchersError::TooMany { count });
    }
    let mut left = budget.min(cost::SILENCE_BUDGET);
    let mut out: Vec<Matcher> = Vec::with_capacity(count);
    for (index, (name, op, value)) in parts.enumerate() {
        // An expression an earlier matcher has is shared, and charged once.
        let held = out.iter().any(|o| o.value == value && o.pattern().is_some());
        let limit = if held { cost::PATTERN_LIMIT } else { left };
        let made = if compiled { Matcher::within(name, op, value, limit) } else { Matcher::inert(name, op, value) };
        let m = made.map_err(|source| match source {
            MatcherError::TooCostly { limit, .. } if limit < cost::PATTERN_LIMIT => MatchersError::OverBudget { index },
            source => MatchersError::Matcher { index, source },
        })?;
        if let Some(p) = m.pattern()
            && !out.iter().any(|o| o.pattern().is_some_and(|q| Arc::ptr_eq(p, q)))
        {
            left = left.saturating_sub(p.bytes);
        }
        out.push(m);
    }
    Ok(out)
}

/// Whether matchers already compiled (the file's, each under [`cost::PATTERN_LIMIT`]) keep to
/// a silence's budget.
pub fn within_budget(matchers: &[Matcher]) -> Result<(), MatchersError> {
    if matchers.len() > cost::MAX_MATCHERS {
        return Err(MatchersError::TooMany { count: matchers.len() });
    }
    for index in 0..matchers.len() {
        if cost::bytes_of(matchers[..=index].iter().filter_map(Matcher::pattern)) > cost::SILENCE_BUDGET {
            return Err(MatchersError::OverBudget { index });
        }
    }
    Ok(())
}

/// A silence: every matcher must hold, between its start and its end.
#[derive(Clone, Debug, PartialEq)]
pub struct Silence {
    /// `file-N` for the file's N-th `[[silence]]`; a random UUID for one made through the API.
    pub id: String,
    pub matchers: Vec<Matcher>,
    /// None for the file's: from the start, with no end.
    pub starts_at: Option<Timestamp>,
    pub ends_at: Option<Timestamp>,
    pub updated_at: Option<Timestamp>,
    pub comment: String,
    pub created_by: String,
    /// From serve's file: no end, read-only on the pages and through the API.
    pub from_file: bool,
}

/// Where a silence stands, as Alertmanager says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SilenceState {
    Pending,
    Active,
    Expired,
}

impl SilenceState {
    pub fn as_str(self) -> &'static str {
        match self {
            SilenceState::Pending => "pending",
            SilenceState::Active => "active",
            SilenceState::Expired => "expired",
        }
    }
}

impl Silence {
    /// Pending before its start, active from its start, expired from its end.
    pub fn state(&self, now: Timestamp) -> SilenceState {
        if self.ends_at.is_some_and(|e| e <= now) {
            SilenceState::Expired
        } else if self.starts_at.is_some_and(|s| s > now) {
            SilenceState::Pending
        } else {
            SilenceState::Active
        }
    }

    /// Whether its matchers match these labels, whatever the time.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        !self.matchers.is_empty() && self.matchers.iter().all(|m| m.matches(labels))
    }

    /// The same silence with its compiled expressions let go (an expired one's).
    pub fn without_patterns(&self) -> Silence {
        Silence { matchers: self.matchers.iter().map(Matcher::without_pattern).collect(), ..self.clone() }
    }

    /// Whether it mutes an alert with these labels at `now`.
    pub fn mutes(&self, now: Timestamp, labels: &BTreeMap<String, String>) -> bool {
        self.state(now) == SilenceState::Active && self.matches(labels)
    }

    /// Its matchers as Alertmanager writes them: `{alertname="A", namespace=~"dev-.*"}`.
    pub fn matchers_text(&self) -> String {
        format!("{{{}}}", self.matchers.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))
    }
}

/// Everything that keeps the notifiers quiet now: the silences (the file's, then those made
/// through the API) and the maintenance windows.
#[derive(Clone, Debug, Default)]
pub struct Quiet {
    pub silences: Vec<Silence>,
    pub windows: Vec<Window>,
}

impl Quiet {
    /// The silences that mute an alert with these labels at `now`.
    pub fn silencing<'a>(&'a self, now: Timestamp, labels: &BTreeMap<String, String>) -> Vec<&'a Silence> {
        self.silences.iter().filter(|s| s.mutes(now, labels)).collect()
    }

    /// The window a cluster is in at `now`, and when it ends (the latest end of those it is in).
    pub fn maintenance(&self, now: Timestamp, cluster: &str) -> Option<(&Window, Timestamp)> {
        self.windows.iter().filter_map(|w| w.until(now, cluster).map(|end| (w, end))).max_by_key(|(_, end)| *end)
    }

    /// Whether the notifiers are told nothing of an alert with these labels at `now`: a silence
    /// mutes it, or its cluster is in maintenance.
    pub fn mutes(&self, now: Timestamp, labels: &BTreeMap<String, String>) -> bool {
        self.silences.iter().any(|s| s.mutes(now, labels))
            || labels.get("cluster").is_some_and(|c| self.maintenance(now, c).is_some())
    }

    /// A silence by its id.
    pub fn silence(&self, id: &str) -> Option<&Silence> {
        self.silences.iter().find(|s| s.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn matchers_read_and_match_as_alertmanager_s() {
        let blocked = labels(&[("alertname", "KubernetesPodBlocked"), ("namespace", "dev-7"), ("pod", "api-0")]);
        for (text, expected) in [
            (r#"alertname="KubernetesPodBlocked""#, true),
            (r#"namespace=~"dev-.*""#, true),
            (r#"namespace=~"dev""#, false), // anchored: the whole value
            (r#"namespace!~"dev-.*""#, false),
            (r#"namespace != "prod""#, true),
            (r#"node="""#, true), // an absent label is the empty string
            (r#"node=~".+""#, false),
            ("pod=api-0", true),
            (r#"namespace=~"dev-7|prod""#, true),
        ] {
            let m = Matcher::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(m.matches(&blocked), expected, "{text}");
        }
        let quoted = Matcher::parse(r#"pod="a \"b\" \\ c""#).unwrap();
        assert_eq!(quoted.value, r#"a "b" \ c"#);
        assert_eq!(quoted.to_string(), r#"pod="a \"b\" \\ c""#);
    }

    #[test]
    fn an_expression_two_matchers_share_is_charged_once() {
        // About 840 KB and 780 KB compiled: the first again fits only if it is not charged twice.
        let parts = [("pod", Op::Regex, r"\w{15}"), ("node", Op::Regex, r"\w{14}"), ("workload", Op::Regex, r"\w{15}")];
        let matchers = budgeted(parts.iter().copied(), true).unwrap();
        assert!(Arc::ptr_eq(matchers[0].pattern().unwrap(), matchers[2].pattern().unwrap()));
        assert!(within_budget(&matchers).is_ok());
        // A third expression of its own passes the silence's budget.
        let parts = [("pod", Op::Regex, r"\w{15}"), ("node", Op::Regex, r"\w{14}"), ("workload", Op::Regex, r"\w{13}")];
        assert_eq!(budgeted(parts.iter().copied(), true).unwrap_err(), MatchersError::OverBudget { index: 2 });
        // Expired, any number of them is read, none compiled.
        let many: Vec<(&str, Op, &str)> = (0..40).map(|_| ("pod", Op::Regex, r"\w{150}")).collect();
        let inert = budgeted(many.iter().copied(), false).unwrap();
        assert!(inert.iter().all(|m| m.pattern().is_none()) && inert.len() == 40);
    }

    #[test]
    fn bad_matchers_are_refused_saying_why() {
        assert!(matches!(Matcher::parse("alertname"), Err(MatcherError::Syntax { .. })));
        assert!(matches!(Matcher::parse(r#"alertname=="x""#), Err(MatcherError::Syntax { .. })));
        assert!(matches!(Matcher::parse(r#"="x""#), Err(MatcherError::Syntax { .. })));
        assert!(matches!(Matcher::parse(r#"pod="x"#), Err(MatcherError::Syntax { .. })));
        assert!(matches!(Matcher::parse("pod=a b"), Err(MatcherError::Syntax { .. })));
        let unknown = Matcher::parse(r#"team="a""#).unwrap_err();
        assert!(
            unknown.to_string().starts_with(r#""team=\"a\"": no alert of DumbMonit has the label "team""#),
            "{unknown}"
        );
        let regex = Matcher::parse(r#"pod=~"(""#).unwrap_err();
        assert!(matches!(regex, MatcherError::Regex { .. }), "{regex}");
    }

    #[test]
    fn a_silence_needs_every_matcher() {
        let now: Timestamp = "2026-12-01T06:00:00Z".parse().unwrap();
        let s = Silence {
            id: "file-1".into(),
            matchers: vec![
                Matcher::parse(r#"alertname="A""#).unwrap(),
                Matcher::parse(r#"namespace=~"dev-.*""#).unwrap(),
            ],
            starts_at: None,
            ends_at: None,
            updated_at: None,
            comment: String::new(),
            created_by: String::new(),
            from_file: true,
        };
        assert!(s.mutes(now, &labels(&[("alertname", "A"), ("namespace", "dev-1")])));
        assert!(!s.mutes(now, &labels(&[("alertname", "A"), ("namespace", "prod")])));
        assert!(!Silence { matchers: vec![], ..s.clone() }.mutes(now, &labels(&[])), "no matcher mutes nothing");
        let quiet = Quiet { silences: vec![s.clone()], windows: vec![] };
        let ids: Vec<&str> = quiet
            .silencing(now, &labels(&[("alertname", "A"), ("namespace", "dev-2")]))
            .iter()
            .map(|s| s.id.as_str())
            .collect();
        assert_eq!(ids, ["file-1"]);
        assert_eq!(s.matchers_text(), r#"{alertname="A", namespace=~"dev-.*"}"#);
    }

    #[test]
    fn a_silence_holds_from_its_start_to_its_end() {
        let t = |s: &str| -> Timestamp { s.parse().unwrap() };
        let s = Silence {
            id: "x".into(),
            matchers: vec![Matcher::parse(r#"alertname="A""#).unwrap()],
            starts_at: Some(t("2026-12-01T06:00:00Z")),
            ends_at: Some(t("2026-12-01T08:00:00Z")),
            updated_at: None,
            comment: String::new(),
            created_by: String::new(),
            from_file: false,
        };
        let a = labels(&[("alertname", "A")]);
        assert_eq!(s.state(t("2026-12-01T05:59:59Z")), SilenceState::Pending);
        assert!(!s.mutes(t("2026-12-01T05:59:59Z"), &a));
        assert_eq!(s.state(t("2026-12-01T06:00:00Z")), SilenceState::Active);
        assert!(s.mutes(t("2026-12-01T07:59:59Z"), &a));
        assert_eq!(s.state(t("2026-12-01T08:00:00Z")), SilenceState::Expired, "the end is not in it");
        assert!(!s.mutes(t("2026-12-01T08:00:00Z"), &a));
    }

    #[test]
    fn matchers_of_anything_are_told_apart() {
        for (text, anything) in [
            (r#"namespace=~".*""#, true),
            (r#"namespace!="""#, false),
            (r#"namespace=~".+""#, false),
            (r#"pod!~"api-.*""#, false),
            (r#"pod!="no-such-pod-name-at-all""#, true),
            (r#"cluster="edge-1""#, false),
            (r#"cluster=~".+""#, true),
            (r#"alertname!="""#, true),
            (r#"severity=~"warning|critical""#, false),
        ] {
            assert_eq!(Matcher::parse(text).unwrap().matches_anything(), anything, "{text}");
        }
        let m = Matcher::new("namespace", Op::of(true, false), "dev-.*").unwrap();
        assert_eq!(m.to_string(), r#"namespace!~"dev-.*""#);
        assert!(m.is_regex() && !m.is_equal());
        assert!(matches!(Matcher::new("9x", Op::Equal, "a"), Err(MatcherError::Syntax { .. })));
    }
}
