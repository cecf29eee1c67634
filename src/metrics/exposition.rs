//! The Prometheus text exposition format (version 0.0.4), written by hand so that metric names
//! stay exactly as specified (no `_total` appended) and every label value is escaped.

use std::fmt::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Gauge,
    Counter,
}

/// One sample: its label pairs and value.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub labels: Vec<(&'static str, String)>,
    pub value: f64,
}

impl Sample {
    pub fn new(labels: Vec<(&'static str, String)>, value: f64) -> Sample {
        Sample { labels, value }
    }
}

/// A metric family: name, help, type and samples.
#[derive(Clone, Debug, PartialEq)]
pub struct Family {
    pub name: String,
    pub help: &'static str,
    pub kind: Kind,
    pub samples: Vec<Sample>,
}

/// The content type of the text format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Renders families in the text format. Families without samples are left out.
pub fn encode(families: &[Family]) -> String {
    let mut out = String::with_capacity(families.iter().map(|f| 64 + f.samples.len() * 96).sum());
    for f in families.iter().filter(|f| !f.samples.is_empty()) {
        let kind = match f.kind {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
        };
        let _ = writeln!(out, "# HELP {} {}", f.name, escape_help(f.help));
        let _ = writeln!(out, "# TYPE {} {kind}", f.name);
        for s in &f.samples {
            out.push_str(&f.name);
            if !s.labels.is_empty() {
                out.push('{');
                for (i, (k, v)) in s.labels.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{k}=\"{}\"", escape_label(v));
                }
                out.push('}');
            }
            out.push(' ');
            out.push_str(&format_value(s.value));
            out.push('\n');
        }
    }
    out
}

/// Label values escape `\`, `"` and line feeds.
pub fn escape_label(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Help text escapes `\` and line feeds.
fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

pub fn format_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf".into() } else { "-Inf".into() }
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_label_values_and_formats_numbers() {
        let f = Family {
            name: "x".into(),
            help: "a \\ help\nline",
            kind: Kind::Gauge,
            samples: vec![
                Sample::new(vec![("a", "q\"uo\\te\nnl".into())], 1.0),
                Sample::new(vec![], 0.25),
                Sample::new(vec![("b", "<script>".into())], f64::NAN),
            ],
        };
        assert_eq!(
            encode(&[f]),
            "# HELP x a \\\\ help\\nline\n# TYPE x gauge\nx{a=\"q\\\"uo\\\\te\\nnl\"} 1\nx 0.25\nx{b=\"<script>\"} NaN\n"
        );
    }

    #[test]
    fn empty_families_are_left_out() {
        let f = Family { name: "x".into(), help: "h", kind: Kind::Counter, samples: vec![] };
        assert_eq!(encode(&[f]), "");
    }
}
