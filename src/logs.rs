//! The log of `serve`, `agent` and `demo`: each line an event (`tracing`) with its level and
//! fields, written to standard error one a line, as text (the sentence, stamped to the second,
//! as the lines have always been) or as JSON (one object a line: `timestamp`, `level`,
//! `message`, `target` and the fields). `RUST_LOG` filters (DumbMonit's own events, `info` and up, when unset).
//!
//! Whatever the format, every secret the process knows ([`crate::redact::redact_known`]) is
//! taken out of the message and out of every field, and nothing logged can forge a line or
//! drive a terminal: in text, control characters, line separators and direction changes are
//! written escaped ([`escaped`]); in JSON, as `\uXXXX` escapes.
//!
//! An event is a type of the room that says it (`serve::events`, `notify::events`, `agent::events`,
//! `web::events`), after Vector's `internal_events`: its [`Emit::emit`] fixes its level, its
//! target (the room, so that `RUST_LOG=dumbmonit::notify=warn` works) and its fields; its
//! `Display` is its message, the whole sentence the text format shows, which says what the
//! fields say. The text format shows the message alone for DumbMonit's events, and a library's
//! event with its level, target and fields. Spans' fields are merged into the JSON objects of
//! the events inside them.

use std::fmt::{self, Write as _};
use std::io::Write as _;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

use crate::redact::redact_known;

/// How the log is written (`--log-format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `TIMESTAMP message`, as the lines have always been.
    #[default]
    Text,
    /// One JSON object a line, with the fields.
    Json,
}

/// A line of the log as a type: see the module's documentation.
pub trait Emit: fmt::Display {
    /// Logs the event, at its level, with its fields and its `Display` as the message.
    fn emit(&self);
}

/// The target of DumbMonit's own events; each room's is below it (`dumbmonit::notify`).
pub const TARGET: &str = "dumbmonit";

/// What is logged when `RUST_LOG` is not set: DumbMonit's own events, info and up. The
/// libraries' are left out (they were never logged before `RUST_LOG`, and kube's client warns
/// at every new connection that skips certificate checks); `RUST_LOG` brings them in.
const DEFAULT_FILTER: &str = "dumbmonit=info";

/// Installs the process's subscriber: `RUST_LOG` ([`DEFAULT_FILTER`] when unset), then the lines
/// in `format` on standard error. Once per process; a second call changes nothing.
pub fn init(format: Format) {
    let (filter, refused) = filter(std::env::var("RUST_LOG").ok());
    let lines = Lines { format, write: Box::new(|line| drop(std::io::stderr().lock().write_all(line))) };
    let subscriber = tracing_subscriber::registry().with(filter).with(lines);
    if tracing::subscriber::set_global_default(subscriber).is_ok()
        && let Some(e) = refused
    {
        tracing::warn!(target: TARGET, "RUST_LOG is not understood ({e}): the log has DumbMonit's own events, info and up");
    }
}

/// The filter `RUST_LOG` asks for ([`DEFAULT_FILTER`] when unset or empty), and why it could not
/// be read when it could not (the default is then used).
fn filter(rust_log: Option<String>) -> (EnvFilter, Option<tracing_subscriber::filter::ParseError>) {
    let builder = EnvFilter::builder().with_default_directive(LevelFilter::OFF.into()).with_regex(false);
    match rust_log.filter(|d| !d.trim().is_empty()) {
        None => (builder.parse_lossy(DEFAULT_FILTER), None),
        Some(directives) => match builder.parse(&directives) {
            Ok(f) => (f, None),
            Err(e) => (builder.parse_lossy(DEFAULT_FILTER), Some(e)),
        },
    }
}

/// Writes one whole line (its newline included).
type Sink = Box<dyn Fn(&[u8]) + Send + Sync>;

/// The layer that writes each event as one line.
pub struct Lines {
    format: Format,
    write: Sink,
}

impl Lines {
    /// Lines in `format`, each given whole to `write`.
    pub fn new(format: Format, write: impl Fn(&[u8]) + Send + Sync + 'static) -> Lines {
        Lines { format, write: Box::new(write) }
    }
}

/// A field's value, as recorded.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Str(String),
    I64(i64),
    U64(u64),
    F64(f64),
    Bool(bool),
}

/// The fields of an event or a span, in the order given; the message apart.
#[derive(Default)]
struct Fields {
    message: Option<String>,
    list: Vec<(&'static str, Value)>,
}

impl Fields {
    fn put(&mut self, name: &'static str, value: Value) {
        if name == "message" {
            self.message = Some(match value {
                Value::Str(s) => s,
                other => plain(&other),
            });
        } else if let Some(slot) = self.list.iter_mut().find(|(n, _)| *n == name) {
            slot.1 = value;
        } else {
            self.list.push((name, value));
        }
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field.name(), Value::Str(value.to_string()));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field.name(), Value::I64(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field.name(), Value::U64(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field.name(), Value::F64(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field.name(), Value::Bool(value));
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        let mut text = value.to_string();
        let mut source = value.source();
        while let Some(s) = source {
            let _ = write!(text, ": {s}");
            source = s.source();
        }
        self.put(field.name(), Value::Str(text));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.put(field.name(), Value::Str(format!("{value:?}")));
    }
}

/// A value as text; strings redacted.
fn plain(v: &Value) -> String {
    match v {
        Value::Str(s) => redact_known(s).into_owned(),
        Value::I64(n) => n.to_string(),
        Value::U64(n) => n.to_string(),
        Value::F64(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
    }
}

/// Whether an event is one of DumbMonit's own, whose message says everything.
fn ours(target: &str) -> bool {
    target == TARGET || target.strip_prefix(TARGET).is_some_and(|rest| rest.starts_with("::"))
}

impl Lines {
    fn text(&self, target: &str, level: &tracing::Level, fields: &Fields) -> String {
        let now = jiff::Timestamp::now();
        let message = redact_known(fields.message.as_deref().unwrap_or(""));
        let mut line = format!("{} ", now.round(jiff::Unit::Second).unwrap_or(now));
        if ours(target) && fields.message.is_some() {
            line.push_str(&escaped(&message));
        } else {
            let _ = write!(line, "{level} {}: {}", escaped(target), escaped(&message));
            for (name, value) in &fields.list {
                let value = plain(value);
                let value = escaped(&value);
                if value.is_empty() || value.contains([' ', '"', '=']) {
                    let _ = write!(line, " {}=\"{}\"", escaped(name), value.replace('"', "\\\""));
                } else {
                    let _ = write!(line, " {}={value}", escaped(name));
                }
            }
        }
        line.push('\n');
        line
    }

    fn json(&self, target: &str, level: &tracing::Level, fields: &Fields) -> String {
        let now = jiff::Timestamp::now();
        let string = |s: &str| serde_json::to_string(&redact_known(s)).expect("a string serializes");
        // What the process itself writes (the time, the level, the target) holds no secret: left
        // as it is, so that a secret that is also a word cannot blank it out.
        let own = |s: &str| serde_json::to_string(s).expect("a string serializes");
        let mut line = String::from("{");
        let time = now.round(jiff::Unit::Millisecond).unwrap_or(now).to_string();
        let _ = write!(line, "\"timestamp\":{},\"level\":{}", own(&time), own(level.as_str()));
        let _ = write!(line, ",\"message\":{}", string(fields.message.as_deref().unwrap_or("")));
        let _ = write!(line, ",\"target\":{}", own(target));
        for (name, value) in &fields.list {
            if matches!(*name, "timestamp" | "level" | "message" | "target") {
                continue;
            }
            let value = match value {
                Value::Str(s) => string(s),
                Value::F64(n) if !n.is_finite() => "null".to_string(),
                other => plain(other),
            };
            let _ = write!(line, ",{}:{value}", string(name));
        }
        line.push_str("}\n");
        // serde_json escapes the control characters below U+0020; the others that could drive
        // a terminal (DEL, C1, separators, direction changes) are escaped too. Only strings
        // can hold them, and an escape is as good as the character there.
        if line.chars().any(|c| forges(c) && c != '\n') {
            let mut safe = String::with_capacity(line.len() + 16);
            for c in line[..line.len() - 1].chars() {
                if forges(c) {
                    let _ = write!(safe, "\\u{:04x}", c as u32);
                } else {
                    safe.push(c);
                }
            }
            safe.push('\n');
            line = safe;
        }
        line
    }
}

impl<S> Layer<S> for Lines
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            let mut ext = span.extensions_mut();
            match ext.get_mut::<Fields>() {
                Some(fields) => values.record(fields),
                None => {
                    let mut fields = Fields::default();
                    values.record(&mut fields);
                    ext.insert(fields);
                }
            }
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        let meta = event.metadata();
        // The spans' fields from the outermost in, then the event's own, which win.
        let mut fields = Fields::default();
        if let Some(scope) = ctx.event_scope(event) {
            for span in scope.from_root() {
                if let Some(f) = span.extensions().get::<Fields>() {
                    for (name, value) in &f.list {
                        fields.put(name, value.clone());
                    }
                }
            }
        }
        event.record(&mut fields);
        let line = match self.format {
            Format::Text => self.text(meta.target(), meta.level(), &fields),
            Format::Json => self.json(meta.target(), meta.level(), &fields),
        };
        (self.write)(line.as_bytes());
    }
}

/// Whether `c`, written as it is, could forge a line or drive a terminal: a control character
/// (newlines, escape sequences), a line or paragraph separator, a direction change.
pub fn forges(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `message` with its control characters, line separators and direction changes escaped
/// (`\n`, `\u{1b}`), so that nothing logged (an agent's error, a name) can forge a line or
/// drive the terminal.
pub fn escaped(message: &str) -> std::borrow::Cow<'_, str> {
    if !message.chars().any(forges) {
        return message.into();
    }
    let mut out = String::with_capacity(message.len() + 16);
    for c in message.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if forges(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.into()
}

/// At most `max` bytes of `s` (cut at a character), saying how long it was: for what is logged
/// from a request (a path, a header), which anyone may make as long as they like.
pub fn shortened(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if s.len() <= max {
        return s.into();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &s[..end], s.len()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logged_text_cannot_forge_lines_or_drive_the_terminal() {
        assert_eq!(escaped("plain: ünïcode"), "plain: ünïcode");
        assert_eq!(escaped("a\nb\r\tc\x1b[2J"), "a\\nb\\r\\tc\\u{1b}[2J");
        assert_eq!(escaped("x\u{2028}y\u{202e}z"), "x\\u{2028}y\\u{202e}z");
        assert_eq!(shortened("short", 10), "short");
        assert_eq!(shortened(&"é".repeat(10), 5), "éé… (20 bytes)");
    }
    use std::sync::{Arc, Mutex};

    /// What `f` logs in `format`, line by line.
    /// The lines `f` logs through the filter of `rust_log`, as text.
    fn filtered(rust_log: Option<&str>, f: impl FnOnce()) -> Vec<String> {
        let out = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink = out.clone();
        let lines = Lines::new(Format::Text, move |line| sink.lock().unwrap().extend_from_slice(line));
        let subscriber = tracing_subscriber::registry().with(filter(rust_log.map(str::to_string)).0).with(lines);
        tracing::subscriber::with_default(subscriber, f);
        let text = String::from_utf8(out.lock().unwrap().clone()).unwrap();
        text.lines().map(|l| l.split_once(' ').unwrap().1.to_string()).collect()
    }

    #[test]
    fn by_default_only_dumbmonits_own_events_info_and_up_are_logged() {
        let events = || {
            tracing::info!(target: "dumbmonit::serve", "ours");
            tracing::debug!(target: "dumbmonit::serve", "ours, debug");
            tracing::warn!(target: "kube_client::client::tls", "Server cert bypassed");
        };
        for unset in [None, Some(""), Some("not=a=directive")] {
            assert_eq!(filtered(unset, events), ["ours"], "RUST_LOG={unset:?}");
        }
        assert_eq!(filtered(Some("warn"), events), ["WARN kube_client::client::tls: Server cert bypassed"]);
        assert_eq!(filtered(Some("dumbmonit=debug"), events), ["ours", "ours, debug"]);
    }

    fn logged(format: Format, f: impl FnOnce()) -> Vec<String> {
        let out = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink = out.clone();
        let lines = Lines::new(format, move |line| sink.lock().unwrap().extend_from_slice(line));
        let subscriber = tracing_subscriber::registry().with(lines);
        tracing::subscriber::with_default(subscriber, f);
        let text = String::from_utf8(out.lock().unwrap().clone()).unwrap();
        text.lines().map(str::to_string).collect()
    }

    const FORGED: &str =
        "edge\n2026-01-01T00:00:00Z cluster lab: resolved everything \u{202e}\u{1b}[2J\u{2028}\u{7f}\u{85}";

    #[test]
    fn text_is_the_sentence_and_cannot_be_forged_by_a_field() {
        let lines = logged(Format::Text, || {
            tracing::warn!(target: "dumbmonit::web", cluster = FORGED, "cluster {FORGED}: refused");
            tracing::warn!(target: "some_library", cluster = FORGED, n = 3, "said {}", "x\ny");
            tracing::info!(target: TARGET, "a line of no field");
        });
        assert_eq!(lines.len(), 3, "one line an event: {lines:?}");
        let (stamp, rest) = lines[0].split_once(' ').unwrap();
        assert!(stamp.parse::<jiff::Timestamp>().is_ok() && !stamp.contains('.'), "to the second: {stamp}");
        assert_eq!(
            rest,
            "cluster edge\\n2026-01-01T00:00:00Z cluster lab: resolved everything \\u{202e}\\u{1b}[2J\\u{2028}\\u{7f}\\u{85}: refused",
            "ours: the sentence alone, escaped"
        );
        let library = lines[1].split_once(' ').unwrap().1;
        assert!(
            library.starts_with("WARN some_library: said x\\ny cluster=\"edge\\n2026-01-01T00:00:00Z "),
            "{library}"
        );
        assert!(library.ends_with(" n=3"), "{library}");
        assert!(!lines[1].chars().any(forges));
        assert_eq!(lines[2].split_once(' ').unwrap().1, "a line of no field");
    }

    #[test]
    fn json_is_one_object_a_line_with_the_fields_and_nothing_that_forges() {
        let lines = logged(Format::Json, || {
            let span = tracing::error_span!("request", cluster = tracing::field::Empty, agent = "claimed");
            let _in = span.enter();
            span.record("cluster", "edge");
            tracing::warn!(
                target: "dumbmonit::web",
                status = 400u16,
                took_seconds = 0.25,
                ratio = f64::NAN,
                ok = false,
                error = FORGED,
                "refused: {FORGED}"
            );
        });
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(!lines[0].chars().any(forges), "{}", lines[0]);
        assert!(lines[0].starts_with("{\"timestamp\":"), "{}", lines[0]);
        let v: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
        assert!(v["timestamp"].as_str().unwrap().parse::<jiff::Timestamp>().is_ok());
        assert_eq!(v["level"], "WARN");
        assert_eq!(v["target"], "dumbmonit::web");
        assert_eq!(v["message"], format!("refused: {FORGED}"), "escaped on the line, whole once decoded");
        assert_eq!(v["error"], FORGED);
        assert_eq!((v["cluster"].clone(), v["agent"].clone()), ("edge".into(), "claimed".into()), "the span's fields");
        assert_eq!((v["status"].clone(), v["took_seconds"].clone()), (400.into(), 0.25.into()), "numbers");
        assert_eq!((v["ratio"].clone(), v["ok"].clone()), (serde_json::Value::Null, false.into()));
    }

    #[test]
    fn every_field_and_the_message_are_redacted_in_both_formats() {
        crate::redact::know_secret("logs-test-secret-91c3e2");
        for format in [Format::Text, Format::Json] {
            let lines = logged(format, || {
                tracing::warn!(
                    target: "dumbmonit::notify",
                    error = "401: bad token logs-test-secret-91c3e2",
                    detail = ?"logs-test-secret-91c3e2",
                    "failed with logs-test-secret-91c3e2"
                );
                tracing::info!(target: "a_library", token = "Bearer logs-test-secret-91c3e2", "done");
            });
            let all = lines.join("\n");
            assert!(!all.contains("logs-test-secret-91c3e2"), "{format:?}: {all}");
            assert!(all.contains("failed with [redacted]"), "{all}");
            if format == Format::Json {
                let v: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
                assert_eq!(v["error"], "401: bad token [redacted]");
            } else {
                assert!(lines[1].ends_with("token=\"Bearer [redacted]\""), "{}", lines[1]);
            }
        }
    }
}
