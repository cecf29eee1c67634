//! What the silences' regular expressions may cost, and the one place they are compiled.
//!
//! A regular expression is cheap to write and may be dear to compile: `\w{150}` is a few bytes
//! of text and megabytes of automaton. Every cost is therefore bounded, the whole and not only
//! each piece:
//!
//! | bound | value |
//! |---|---|
//! | one regular expression, compiled | [`PATTERN_LIMIT`] (1 MiB) |
//! | one silence's matchers | [`MAX_MATCHERS`] (20) |
//! | one silence's regular expressions together, compiled | [`SILENCE_BUDGET`] (2 MiB) |
//! | every silence in force together, compiled | [`TOTAL_BUDGET`] (32 MiB) |
//! | silences in force (pending or active) | [`MAX_SILENCES`] (1,000) |
//!
//! A compilation stops as soon as it passes what is left of its budget, so refusing a costly
//! expression costs no more than the budget. For scale: `dev-.*` compiles to about 3 KB,
//! `\w+` (Unicode word characters) to 56 KB, `api-\w+-\w{5}` to 330 KB; `\w{20}` passes 1 MiB
//! and `\w{150}` would take 8 MB. Each compiled expression is kept once, shared by
//! every matcher that has it, for as long as one does: a silence read again (Alertmanager's, at
//! each poll) compiles nothing. Expired silences are not compiled at all (they mute nothing).
//! Besides its compiled size, each thread that matches with an expression keeps scratch space
//! for it: its lazy automaton's cache at most [`CACHE_LIMIT`] (256 KiB: below it, the lazy
//! automaton of an expression such as `api-\w+-\w{5}` is not built and each match costs ten
//! times as much), the whole about half the expression's size in the cases measured (32 KB
//! for `\w+`, 175 KB for `api-\w+-\w{5}`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// The compiled size one regular expression may have.
pub const PATTERN_LIMIT: usize = 1024 * 1024;
/// The matchers a silence may have.
pub const MAX_MATCHERS: usize = 20;
/// What one silence's regular expressions may take together, compiled.
pub const SILENCE_BUDGET: usize = 2 * 1024 * 1024;
/// What every silence in force may take together, compiled.
pub const TOTAL_BUDGET: usize = 32 * 1024 * 1024;
/// The silences that may be in force (pending or active) at once.
pub const MAX_SILENCES: usize = 1000;
/// The lazy automaton's cache of one expression, per thread that matches with it.
pub const CACHE_LIMIT: usize = 256 * 1024;

/// A regular expression as a matcher uses it: anchored to the whole value, compiled.
pub struct Pattern {
    regex: regex_automata::meta::Regex,
    /// Its compiled size, in bytes.
    pub bytes: usize,
}

impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pattern({} bytes)", self.bytes)
    }
}

impl Pattern {
    pub fn is_match(&self, value: &str) -> bool {
        self.regex.is_match(value)
    }
}

/// Why a regular expression was not compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatternError {
    /// It does not compile: the parser's words.
    Syntax(String),
    /// Compiled, it would take more than `limit` bytes.
    TooCostly { limit: usize },
}

/// Kibibytes or mebibytes, as the limits are said.
pub fn size(bytes: usize) -> String {
    if bytes >= 1024 * 1024 && bytes.is_multiple_of(1024 * 1024) {
        format!("{} MiB", bytes / (1024 * 1024))
    } else if bytes >= 1024 * 1024 {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    } else {
        format!("{} KiB", bytes.div_ceil(1024))
    }
}

/// The compiled expressions of every matcher that still holds one, by their text.
fn kept() -> &'static Mutex<HashMap<String, Weak<Pattern>>> {
    static KEPT: OnceLock<Mutex<HashMap<String, Weak<Pattern>>>> = OnceLock::new();
    KEPT.get_or_init(Default::default)
}

/// The expressions refused as too costly lately, by their text and the limit they passed, so
/// that a silence read again is refused again without compiling.
fn refused() -> &'static Mutex<HashMap<(String, usize), PatternError>> {
    static REFUSED: OnceLock<Mutex<HashMap<(String, usize), PatternError>>> = OnceLock::new();
    REFUSED.get_or_init(Default::default)
}

/// The refusals remembered at most (then forgotten all at once).
const REFUSALS_KEPT: usize = 4096;

/// `value` compiled as a matcher's regular expression (anchored: `^(?:value)$`), in at most
/// `limit` bytes (and never more than [`PATTERN_LIMIT`]); the one already compiled when a
/// matcher holds it.
pub fn compile(value: &str, limit: usize) -> Result<Arc<Pattern>, PatternError> {
    let limit = limit.min(PATTERN_LIMIT);
    if let Some(p) = kept().lock().expect("patterns lock").get(value).and_then(Weak::upgrade) {
        return if p.bytes <= limit { Ok(p) } else { Err(PatternError::TooCostly { limit }) };
    }
    let key = (value.to_string(), limit);
    if let Some(e) = refused().lock().expect("patterns lock").get(&key) {
        return Err(e.clone());
    }
    // The syntax first: its errors are the parser's, and parsing costs little.
    check_syntax(value)?;
    let anchored = format!("^(?:{value})$");
    let built = regex_automata::meta::Regex::builder()
        .configure(
            regex_automata::meta::Regex::config()
                .nfa_size_limit(Some(limit))
                .onepass_size_limit(Some(limit))
                .dfa_size_limit(Some(limit))
                .hybrid_cache_capacity(CACHE_LIMIT),
        )
        .build(&anchored);
    let outcome = match built {
        Ok(regex) if regex.memory_usage() <= limit => {
            let p = Arc::new(Pattern { bytes: regex.memory_usage(), regex });
            let mut kept = kept().lock().expect("patterns lock");
            // Expressions no matcher holds any more are forgotten now and then: when the
            // table has doubled since it was last swept.
            static SWEEP_AT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1024);
            if kept.len() >= SWEEP_AT.load(std::sync::atomic::Ordering::Relaxed) {
                kept.retain(|_, w| w.strong_count() > 0);
                SWEEP_AT.store((2 * kept.len()).max(1024), std::sync::atomic::Ordering::Relaxed);
            }
            kept.insert(value.to_string(), Arc::downgrade(&p));
            return Ok(p);
        }
        Ok(_) => PatternError::TooCostly { limit },
        Err(e) if e.size_limit().is_some() => PatternError::TooCostly { limit },
        Err(e) => PatternError::Syntax(e.to_string()),
    };
    let mut refused = refused().lock().expect("patterns lock");
    if refused.len() >= REFUSALS_KEPT {
        refused.clear();
    }
    refused.insert(key, outcome.clone());
    Err(outcome)
}

/// Whether `value` is a regular expression, without compiling it (which costs little).
pub fn check_syntax(value: &str) -> Result<(), PatternError> {
    regex_syntax::Parser::new()
        .parse(&format!("^(?:{value})$"))
        .map(drop)
        .map_err(|e| PatternError::Syntax(e.to_string()))
}

/// The compiled size of these patterns, each counted once.
pub fn bytes_of<'a>(patterns: impl IntoIterator<Item = &'a Arc<Pattern>>) -> usize {
    let mut seen = std::collections::HashSet::new();
    patterns.into_iter().filter(|p| seen.insert(Arc::as_ptr(p))).map(|p| p.bytes).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costly_expressions_are_refused_within_their_budget_and_cheap_ones_shared() {
        let started = std::time::Instant::now();
        assert_eq!(compile(r"\w{150}", PATTERN_LIMIT).unwrap_err(), PatternError::TooCostly { limit: PATTERN_LIMIT });
        let refused_in = started.elapsed();
        assert!(refused_in < std::time::Duration::from_secs(1), "refused in {refused_in:?}");
        let a = compile("dev-.*", PATTERN_LIMIT).unwrap();
        let b = compile("dev-.*", PATTERN_LIMIT).unwrap();
        assert!(Arc::ptr_eq(&a, &b), "compiled once while held");
        assert_eq!(bytes_of([&a, &b]), a.bytes);
        assert!(a.is_match("dev-7") && !a.is_match("prod-dev-7"), "anchored");
        // Ordinary expressions fit.
        for p in [r"[a-z0-9-]+", r"api-\w+-\w{5}", r"kube-system|monitoring|ingress-nginx", r".*", r"\pL{10}"] {
            let c = compile(p, PATTERN_LIMIT).unwrap_or_else(|e| panic!("{p}: {e:?}"));
            println!("{p}: {} bytes", c.bytes);
        }
        // A smaller budget is a smaller limit, and a compiled expression too large for it is refused.
        let w = compile(r"\w+", PATTERN_LIMIT).unwrap();
        assert_eq!(compile(r"\w+", w.bytes - 1).unwrap_err(), PatternError::TooCostly { limit: w.bytes - 1 });
        assert!(matches!(compile("(", PATTERN_LIMIT), Err(PatternError::Syntax(_))));
        assert_eq!(compile(r"\w{20}", PATTERN_LIMIT).unwrap_err(), PatternError::TooCostly { limit: PATTERN_LIMIT });
        // Refused again without compiling: the refusal is remembered.
        assert!(refused().lock().unwrap().contains_key(&(r"\w{150}".to_string(), PATTERN_LIMIT)));
        println!("\\w{{150}} refused in {refused_in:?}");
    }
}
