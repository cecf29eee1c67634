//! Silences: matchers over an alert's labels, in Alertmanager's syntax and with its meaning,
//! that keep the notifiers from being told of the alerts they match while they are active. The
//! alerts are still evaluated and shown, marked silenced. From serve's file (`[[silence]]`):
//! standing ignore rules, with no end.

use std::collections::BTreeMap;

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
    fn as_str(self) -> &'static str {
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
    /// The value anchored as Alertmanager anchors it: `^(?:value)$`.
    regex: Option<regex::Regex>,
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
}

impl Matcher {
    /// Reads one matcher as Alertmanager writes it: the value in double quotes (with `\"`, `\\`
    /// and `\n` escapes), or bare when it has no quote, comma, brace or space.
    pub fn parse(text: &str) -> Result<Matcher, MatcherError> {
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
        if !LABELS.contains(&name) {
            return Err(MatcherError::UnknownLabel { text: text.to_string(), name: name.to_string() });
        }
        let regex = match op {
            Op::Regex | Op::NotRegex => Some(
                regex::Regex::new(&format!("^(?:{value})$"))
                    .map_err(|e| MatcherError::Regex { text: text.to_string(), detail: one_line(&e.to_string()) })?,
            ),
            _ => None,
        };
        Ok(Matcher { name: name.to_string(), op, value, regex })
    }

    /// Whether the labels match; a label an alert does not have is the empty string, as in
    /// Alertmanager (`pod=""` matches an alert without a pod).
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let v = labels.get(&self.name).map_or("", String::as_str);
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

/// A silence: every matcher must hold.
#[derive(Clone, Debug, PartialEq)]
pub struct Silence {
    /// `file-N` for the file's N-th `[[silence]]`.
    pub id: String,
    pub matchers: Vec<Matcher>,
    pub comment: String,
    pub created_by: String,
    /// From serve's file: no end, read-only on the pages.
    pub from_file: bool,
}

impl Silence {
    /// Whether it mutes an alert with these labels.
    pub fn mutes(&self, labels: &BTreeMap<String, String>) -> bool {
        !self.matchers.is_empty() && self.matchers.iter().all(|m| m.matches(labels))
    }
}

/// The ids of the silences that mute an alert with these labels.
pub fn muting<'a>(silences: &'a [Silence], labels: &BTreeMap<String, String>) -> Vec<&'a str> {
    silences.iter().filter(|s| s.mutes(labels)).map(|s| s.id.as_str()).collect()
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
        let s = Silence {
            id: "file-1".into(),
            matchers: vec![
                Matcher::parse(r#"alertname="A""#).unwrap(),
                Matcher::parse(r#"namespace=~"dev-.*""#).unwrap(),
            ],
            comment: String::new(),
            created_by: String::new(),
            from_file: true,
        };
        assert!(s.mutes(&labels(&[("alertname", "A"), ("namespace", "dev-1")])));
        assert!(!s.mutes(&labels(&[("alertname", "A"), ("namespace", "prod")])));
        assert!(!Silence { matchers: vec![], ..s.clone() }.mutes(&labels(&[])), "no matcher mutes nothing");
        assert_eq!(muting(&[s], &labels(&[("alertname", "A"), ("namespace", "dev-2")])), ["file-1"]);
    }
}
