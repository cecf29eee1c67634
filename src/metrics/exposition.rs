//! The Prometheus text exposition format (version 0.0.4), written by hand so that metric names
//! stay exactly as specified (no `_total` appended) and every label value is escaped.

use std::fmt::Write;

/// A family's `# TYPE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricType {
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
    pub kind: MetricType,
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
    pub kind: MetricType,
    /// The sample lines, each ending in a line feed.
    pub samples: String,
}

/// Renders each family's samples. Families without samples are left out.
pub fn prerender(families: &[Family]) -> Vec<Rendered> {
    prerender_led(families, None)
}

/// [`prerender`] with one label pair written first on every sample (`serve`'s `cluster`):
/// written as the text is, rather than put into each sample's labels (at 150,000 pods, about
/// 150,000 label lists grown by one and as many copies of the name, every cycle).
pub fn prerender_led(families: &[Family], lead: Option<(&str, &str)>) -> Vec<Rendered> {
    let lead = lead.map(|(k, v)| {
        let mut l = format!("{k}=\"");
        push_label_value(&mut l, v);
        l.push('"');
        l
    });
    families
        .iter()
        .filter(|f| !f.samples.is_empty())
        .map(|f| {
            let per_sample = 96 + lead.as_ref().map_or(0, |l| l.len() + 1);
            let mut out = String::with_capacity(f.samples.len() * per_sample);
            for s in &f.samples {
                out.push_str(&f.name);
                if lead.is_some() || !s.labels.is_empty() {
                    out.push('{');
                    if let Some(l) = &lead {
                        out.push_str(l);
                    }
                    for (i, (k, v)) in s.labels.iter().enumerate() {
                        if i > 0 || lead.is_some() {
                            out.push(',');
                        }
                        out.push_str(k);
                        out.push_str("=\"");
                        push_label_value(&mut out, v);
                        out.push('"');
                    }
                    out.push('}');
                }
                out.push(' ');
                push_value(&mut out, s.value);
                out.push('\n');
            }
            Rendered { name: f.name.clone(), help: f.help, kind: f.kind, samples: out }
        })
        .collect()
}

/// [`merge`] of one source whose families each have their own name, giving up each family's
/// text once it is written: the exposition is not held twice (at the envelope, 12 MB).
pub fn join(rendered: Vec<Rendered>) -> String {
    let mut names: Vec<&str> = rendered.iter().map(|f| f.name.as_str()).collect();
    names.sort_unstable();
    if names.windows(2).any(|w| w[0] == w[1]) {
        return merge(&[&rendered]);
    }
    let size: usize = rendered.iter().map(|f| f.name.len() * 2 + f.help.len() * 2 + 32 + f.samples.len()).sum();
    let mut out = String::with_capacity(size);
    for f in rendered {
        if f.samples.is_empty() {
            continue;
        }
        let kind = match f.kind {
            MetricType::Gauge => "gauge",
            MetricType::Counter => "counter",
        };
        let _ = writeln!(out, "# HELP {} {}", f.name, escape_help(f.help));
        let _ = writeln!(out, "# TYPE {} {kind}", f.name);
        out.push_str(&f.samples);
    }
    out
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
    // Each family's HELP and TYPE lines first, so that the text is allocated once, at its size:
    // at the envelope it is over 10 MB, and growing it by doubling held twice that.
    let heads: Vec<(&str, String)> = order
        .iter()
        .filter_map(|name| {
            let first = sources.iter().flat_map(|s| s.iter()).find(|f| f.name == *name)?;
            let kind = match first.kind {
                MetricType::Gauge => "gauge",
                MetricType::Counter => "counter",
            };
            Some((*name, format!("# HELP {name} {}\n# TYPE {name} {kind}\n", escape_help(first.help))))
        })
        .collect();
    let size = heads.iter().map(|(_, h)| h.len()).sum::<usize>()
        + sources.iter().flat_map(|s| s.iter()).map(|f| f.samples.len()).sum::<usize>();
    let mut out = String::with_capacity(size);
    for (name, head) in heads {
        out.push_str(&head);
        for f in sources.iter().flat_map(|s| s.iter()).filter(|f| f.name == name) {
            out.push_str(&f.samples);
        }
    }
    debug_assert_eq!(out.len(), size, "the text's size is known before it is written");
    out
}

/// A rendered family kept compressed, so that `serve` holds thousands of clusters' series in a
/// twentieth of their text and answers a gzip /metrics by copying, not compressing: its sample
/// lines as a raw deflate fragment that starts afresh (no reference to what precedes it) and ends
/// byte-aligned (a sync flush, not a final block), so fragments written one after another form
/// one deflate stream; with the lines' CRC-32 and length the gzip trailer is computed without the
/// text.
#[derive(Clone, Debug)]
pub struct Packed {
    pub name: String,
    pub help: &'static str,
    pub kind: MetricType,
    /// Shared by the board's copy and what the cluster keeps for its next cycle.
    deflated: std::sync::Arc<[u8]>,
    crc: crc32fast::Hasher,
}

/// Compresses rendered families (once, in the task that rendered them).
pub fn pack(rendered: Vec<Rendered>) -> Vec<Packed> {
    rendered
        .into_iter()
        .map(|f| Packed {
            deflated: deflate_fragment(f.samples.as_bytes()).into(),
            crc: crc_of(f.samples.as_bytes()),
            name: f.name,
            help: f.help,
            kind: f.kind,
        })
        .collect()
}

/// [`pack`], keeping each family's fragment from one call to the next: a family whose text is
/// the same as the last call's is not compressed again (a cluster's nodes, workloads and claims
/// when only pods changed, or nothing at all between two quiet cycles). The text is told by its
/// length and a keyed hash (SipHash with keys of this process: a cluster cannot choose text that
/// collides), so what is kept is a fragment and 16 bytes a family, not the text.
#[derive(Default)]
pub struct Packer {
    keys: std::hash::RandomState,
    last: std::collections::HashMap<String, (usize, u64, Packed)>,
    /// The last exposition's, while this one is made.
    previous: std::collections::HashMap<String, (usize, u64, Packed)>,
    /// Families compressed and taken again by the last call, for the tests and benchmarks.
    pub compressed: usize,
    pub kept: usize,
}

impl Packer {
    /// Compresses the families of one whole exposition: [`Packer::start`], [`Packer::pack`],
    /// [`Packer::finish`] in one.
    pub fn pack_all(&mut self, rendered: Vec<Rendered>) -> Vec<Packed> {
        self.start();
        let packed = self.pack(rendered);
        self.finish();
        packed
    }

    /// Starts an exposition, whose families then come in one or more calls to
    /// [`Packer::pack`].
    pub fn start(&mut self) {
        self.previous = std::mem::take(&mut self.last);
        (self.compressed, self.kept) = (0, 0);
    }

    /// Ends it: the families not given since the start are forgotten.
    pub fn finish(&mut self) {
        self.previous = Default::default();
    }

    /// Some families of the exposition started.
    pub fn pack(&mut self, rendered: Vec<Rendered>) -> Vec<Packed> {
        use std::hash::BuildHasher;
        let mut packed = Vec::with_capacity(rendered.len());
        for f in rendered {
            let (len, hash) = (f.samples.len(), self.keys.hash_one(f.samples.as_bytes()));
            let same = self
                .previous
                .remove(&f.name)
                .filter(|(l, h, p)| (*l, *h) == (len, hash) && p.help == f.help && p.kind == f.kind);
            let p = match same {
                Some((_, _, p)) => {
                    self.kept += 1;
                    p
                }
                None => {
                    self.compressed += 1;
                    pack(vec![f]).pop().expect("one family")
                }
            };
            self.last.insert(p.name.clone(), (len, hash, p.clone()));
            packed.push(p);
        }
        packed
    }
}

impl Packed {
    /// The compressed size, in bytes.
    pub fn size(&self) -> usize {
        self.deflated.len()
    }
}

fn crc_of(bytes: &[u8]) -> crc32fast::Hasher {
    let mut h = crc32fast::Hasher::new();
    h.update(bytes);
    h
}

/// `input` as raw deflate data ending in a sync flush.
fn deflate_fragment(input: &[u8]) -> Vec<u8> {
    use flate2::{Compress, Compression, FlushCompress};
    // A few compressors kept for the next fragments, reset for each: a new one allocates and
    // zeroes its tables (about 300 KB), which cost more than compressing a small family. A few,
    // not one a thread: at 5,000 clusters, many threads of the blocking pool compress.
    const KEPT: usize = 4;
    static SPARE: std::sync::Mutex<Vec<Compress>> = std::sync::Mutex::new(Vec::new());
    let spare = || SPARE.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = spare().pop().unwrap_or_else(|| Compress::new(Compression::fast(), false));
    c.reset();
    let mut out = Vec::with_capacity(input.len() / 8 + 64);
    loop {
        let consumed = c.total_in() as usize;
        c.compress_vec(&input[consumed..], &mut out, FlushCompress::Sync).expect("deflating into memory");
        // The flush is complete once every byte is taken and the output was not filled up.
        if c.total_in() as usize == input.len() && out.len() < out.capacity() {
            break;
        }
        out.reserve(out.capacity().max(64));
    }
    let mut kept = spare();
    if kept.len() < KEPT {
        kept.push(c);
    }
    out
}

/// [`merge`] of packed families, as one gzip member: the families' HELP and TYPE lines are
/// compressed here, their samples copied as they are.
pub fn merge_gzip(sources: &[&[Packed]]) -> Vec<u8> {
    // Every source lists its families in the same order (the generators'), so the family after
    // the last one found is nearly always the next one: no hashing of 175,000 names.
    let mut groups: Vec<(&str, Vec<&Packed>)> = Vec::new();
    for source in sources {
        let mut at = 0;
        for f in source.iter() {
            let found = (at..groups.len()).chain(0..at.min(groups.len())).find(|&i| groups[i].0 == f.name);
            at = match found {
                Some(i) => i,
                None => {
                    groups.push((&f.name, Vec::with_capacity(sources.len())));
                    groups.len() - 1
                }
            };
            groups[at].1.push(f);
        }
    }
    let size = groups.iter().flat_map(|(_, g)| g).map(|f| f.deflated.len()).sum::<usize>() + groups.len() * 96 + 32;
    // RFC 1952: magic, deflate, no flags, no time, no extra flags, unknown OS.
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
    let mut crc = crc32fast::Hasher::new();
    for (name, parts) in &groups {
        let kind = match parts[0].kind {
            MetricType::Gauge => "gauge",
            MetricType::Counter => "counter",
        };
        let header = format!("# HELP {name} {}\n# TYPE {name} {kind}\n", escape_help(parts[0].help));
        out.extend_from_slice(&deflate_fragment(header.as_bytes()));
        crc.update(header.as_bytes());
        for f in parts {
            out.extend_from_slice(&f.deflated);
            crc.combine(&f.crc);
        }
    }
    // The last block: stored, final, empty (RFC 1951); then CRC-32 and length modulo 2^32.
    out.extend_from_slice(&[0x01, 0x00, 0x00, 0xff, 0xff]);
    let length = crc.total_len() as u32;
    out.extend_from_slice(&crc.finalize().to_le_bytes());
    out.extend_from_slice(&length.to_le_bytes());
    out
}

/// Renders families in the text format. Families without samples are left out.
pub fn encode(families: &[Family]) -> String {
    merge(&[&prerender(families)])
}

/// Writes a label value escaped (`\`, `"` and line feeds) onto `out`: straight onto the text,
/// with no string of its own (a cycle at 150,000 pods writes about 300,000 label values).
fn push_label_value(out: &mut String, v: &str) {
    if !v.contains(['\\', '"', '\n']) {
        out.push_str(v);
        return;
    }
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// Help text escapes `\` and line feeds.
fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

/// Writes a sample's value onto `out`: integers without a fraction, `NaN`, `+Inf`, `-Inf`.
fn push_value(out: &mut String, v: f64) {
    if v.is_nan() {
        out.push_str("NaN");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "+Inf" } else { "-Inf" });
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        let _ = write!(out, "{}", v as i64);
    } else {
        let _ = write!(out, "{v}");
    }
}

#[cfg(test)]
mod tests {
    /// A packer compresses again only the families whose text changed, and its fragments join
    /// into the very body that compressing everything gives.
    #[test]
    fn a_packer_keeps_the_fragments_of_families_that_did_not_change() {
        let family = |name: &str, value: f64| Family {
            name: name.into(),
            help: "h",
            kind: MetricType::Gauge,
            samples: vec![Sample::new(vec![("node", "n1".into())], value)],
        };
        let mut packer = Packer::default();
        let first = [family("a", 1.0), family("b", 2.0)];
        let packed = packer.pack_all(prerender(&first));
        assert_eq!((packer.compressed, packer.kept), (2, 0));
        assert_eq!(merge_gzip(&[&packed]), merge_gzip(&[&pack(prerender(&first))]));
        let second = [family("a", 1.0), family("b", 3.0)];
        let packed = packer.pack_all(prerender(&second));
        assert_eq!((packer.compressed, packer.kept), (1, 1));
        assert_eq!(merge_gzip(&[&packed]), merge_gzip(&[&pack(prerender(&second))]));
        // A family gone is forgotten: back, it is compressed again.
        packer.pack_all(prerender(&second[..1]));
        packer.pack_all(prerender(&second));
        assert_eq!((packer.compressed, packer.kept), (1, 1));
    }

    use super::*;

    #[test]
    fn escapes_label_values_and_formats_numbers() {
        let f = Family {
            name: "x".into(),
            help: "a \\ help\nline",
            kind: MetricType::Gauge,
            samples: vec![
                Sample::new(vec![("a", "q\"uo\\te\nnl".into())], 1.0),
                Sample::new(vec![], 0.25),
                Sample::new(vec![("b", "<script>".into())], f64::NAN),
                Sample::new(vec![("c", "\\".into())], -3.0),
                Sample::new(vec![], f64::INFINITY),
                Sample::new(vec![], f64::NEG_INFINITY),
            ],
        };
        assert_eq!(
            encode(&[f]),
            "# HELP x a \\\\ help\\nline\n# TYPE x gauge\nx{a=\"q\\\"uo\\\\te\\nnl\"} 1\nx 0.25\nx{b=\"<script>\"} NaN\n\
             x{c=\"\\\\\"} -3\nx +Inf\nx -Inf\n"
        );
    }

    #[test]
    fn a_leading_label_is_written_first_on_every_sample_and_escaped() {
        let f = Family {
            name: "x".into(),
            help: "h",
            kind: MetricType::Gauge,
            samples: vec![Sample::new(vec![], 1.0), Sample::new(vec![("pod", "a".into()), ("n", "b".into())], 2.0)],
        };
        let led = prerender_led(std::slice::from_ref(&f), Some(("cluster", "e\"dge\n")));
        assert_eq!(led[0].samples, "x{cluster=\"e\\\"dge\\n\"} 1\nx{cluster=\"e\\\"dge\\n\",pod=\"a\",n=\"b\"} 2\n");
        // Without one, the text is prerender's.
        assert_eq!(prerender_led(std::slice::from_ref(&f), None), prerender(&[f]));
    }

    #[test]
    fn empty_families_are_left_out() {
        let f = Family { name: "x".into(), help: "h", kind: MetricType::Counter, samples: vec![] };
        assert_eq!(encode(&[f]), "");
    }

    #[test]
    fn merging_writes_each_family_once_with_every_source_samples() {
        let family = |name: &str, cluster: &str, v: f64| Family {
            name: name.into(),
            help: "h",
            kind: MetricType::Gauge,
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

    fn gunzip(bytes: &[u8]) -> String {
        use std::io::Read;
        let mut text = String::new();
        flate2::read::GzDecoder::new(bytes).read_to_string(&mut text).expect("one valid gzip member");
        text
    }

    #[test]
    fn joining_one_source_writes_what_merging_writes() {
        let family = |name: &str, help: &'static str, n: usize| Family {
            name: name.into(),
            help,
            kind: if n.is_multiple_of(2) { MetricType::Gauge } else { MetricType::Counter },
            samples: (0..n).map(|i| Sample::new(vec![("pod", format!("p\"{i}"))], i as f64)).collect(),
        };
        let families = vec![family("a", "A \\ help\nwith a line", 3), family("b", "B", 0), family("c", "C", 2)];
        let rendered = prerender(&families);
        let merged = merge(&[&rendered]);
        assert!(merged.contains("# TYPE c gauge") && !merged.contains("# HELP b"), "{merged}");
        assert_eq!(join(rendered), merged);
        // A name twice in one source is merged under one HELP, as `merge` does.
        let twice = prerender(&[family("a", "A", 1), family("a", "A", 2)]);
        let merged = merge(&[&twice]);
        assert_eq!(merged.matches("# HELP a").count(), 1);
        assert_eq!(join(twice), merged);
    }

    #[test]
    fn packed_families_merge_into_one_gzip_member_of_the_same_text() {
        // Sources of every size: empty samples, one line, and more than a deflate block holds.
        let family = |name: &str, cluster: &str, lines: usize| Family {
            name: name.into(),
            help: "help \\ with\nescapes",
            kind: if name == "c" { MetricType::Counter } else { MetricType::Gauge },
            samples: (0..lines)
                .map(|i| {
                    Sample::new(
                        vec![("cluster", cluster.into()), ("pod", format!("p-{i}-{}", i * 7919 % 1013))],
                        i as f64,
                    )
                })
                .collect(),
        };
        let a = prerender(&[family("x", "a", 1), family("y", "a", 40_000), family("c", "a", 3)]);
        let b = prerender(&[family("y", "b", 2), family("z", "b", 0), family("x", "b", 700)]);
        let c = prerender(&[]);
        let plain = merge(&[&a, &b, &c]);
        let gz = merge_gzip(&[&pack(a), &pack(b), &pack(c)]);
        assert_eq!(gunzip(&gz), plain);
        assert!(gz.len() * 5 < plain.len(), "{} bytes for {} of text", gz.len(), plain.len());
        assert_eq!(gunzip(&merge_gzip(&[])), "");
    }
}
