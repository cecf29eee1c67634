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

/// A family already rendered: its sample lines as text, headers still to write. Rendering once
/// and merging text lets `serve` answer /metrics without formatting a sample per request.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    pub name: String,
    pub help: &'static str,
    pub kind: Kind,
    /// The sample lines, each ending in a line feed.
    pub samples: String,
}

/// Renders each family's samples. Families without samples are left out.
pub fn prerender(families: &[Family]) -> Vec<Rendered> {
    families
        .iter()
        .filter(|f| !f.samples.is_empty())
        .map(|f| {
            let mut out = String::with_capacity(f.samples.len() * 96);
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
            Rendered { name: f.name.clone(), help: f.help, kind: f.kind, samples: out }
        })
        .collect()
}

/// Writes rendered families from several sources as one exposition: a family's HELP and TYPE
/// once, then its samples from every source, families in the order they first appear.
pub fn merge(sources: &[&[Rendered]]) -> String {
    let mut order: Vec<&str> = Vec::new();
    for f in sources.iter().flat_map(|s| s.iter()) {
        if !order.contains(&f.name.as_str()) {
            order.push(&f.name);
        }
    }
    let size = sources.iter().flat_map(|s| s.iter()).map(|f| f.samples.len() + 64).sum();
    let mut out = String::with_capacity(size);
    for name in order {
        let mut parts = sources.iter().flat_map(|s| s.iter()).filter(|f| f.name == name).peekable();
        let Some(first) = parts.peek() else { continue };
        let kind = match first.kind {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
        };
        let _ = writeln!(out, "# HELP {name} {}", escape_help(first.help));
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for f in parts {
            out.push_str(&f.samples);
        }
    }
    out
}

/// Renders families in the text format. Families without samples are left out.
pub fn encode(families: &[Family]) -> String {
    merge(&[&prerender(families)])
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

    #[test]
    fn merging_writes_each_family_once_with_every_source_samples() {
        let family = |name: &str, cluster: &str, v: f64| Family {
            name: name.into(),
            help: "h",
            kind: Kind::Gauge,
            samples: vec![Sample::new(vec![("cluster", cluster.into())], v)],
        };
        let a = prerender(&[family("x", "a", 1.0), family("y", "a", 2.0)]);
        let b = prerender(&[family("y", "b", 3.0), family("z", "b", 4.0)]);
        assert_eq!(
            merge(&[&a, &b]),
            "# HELP x h\n# TYPE x gauge\nx{cluster=\"a\"} 1\n\
             # HELP y h\n# TYPE y gauge\ny{cluster=\"a\"} 2\ny{cluster=\"b\"} 3\n\
             # HELP z h\n# TYPE z gauge\nz{cluster=\"b\"} 4\n"
        );
    }
}
