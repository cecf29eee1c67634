//! What an agent sends the server for each cycle: a `Report`, whose snapshot travels as the
//! difference from the last one that server acknowledged.
//!
//! Every list of the snapshot is sent as a set of items keyed by a 64-bit hash of the item's
//! own JSON: items the server already holds (same hash) are not sent again, items that are gone
//! are named by their hash. A healthy cluster that does not change costs a few hundred bytes a
//! cycle, whatever its size. Order is not sent: the snapshot's lists have one canonical order
//! (`Snapshot::canonical_order`), which the server restores.
//!
//! The base of a difference is named by its cycle time. A server that does not hold that base (it
//! restarted, say) answers 409, and the agent sends the whole snapshot.
//!
//! Per-pod usage of the Metrics API is not sent: the server shows node usage only, and per-pod
//! usage changes at every cycle (at 150,000 pods it would be most of each push). Whether it
//! could be read is sent.
//!
//! Not one of the collections: the protocol between `dumbmonit agent` and `serve`, over the
//! snapshot that `collect` makes.

use std::collections::HashMap;
use std::hash::Hasher;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::collect::optional::{Extras, Optional};
use crate::collect::{CollectionStat, Event, Node, Pod, Pvc, Snapshot, Workload};

/// The header in which an agent may name its cluster.
pub const CLUSTER_HEADER: &str = "dumbmonit-cluster";

/// The version of this format; a server refuses others with a message that says both.
pub const FORMAT: u32 = 1;

/// What the server tells its agent in every answer: the cluster's settings live on the server,
/// so that changing them needs no visit to the cluster.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub cluster: String,
    pub interval_seconds: f64,
    pub timeout_seconds: f64,
    pub ignored_namespaces: Vec<String>,
    /// Namespaced access; left out when empty, so that agents before it read the settings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<String>,
}

/// The server's answer to a report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// `taken`, `duplicate` (already held: dropped), `unknown_base` (send the whole snapshot),
    /// or `refused`.
    pub status: String,
    #[serde(default)]
    pub message: Option<String>,
    pub settings: Option<Settings>,
}

/// One cycle, as an agent reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    pub format: u32,
    /// When the cycle started, by the agent's clock: the rules' "now".
    pub time: Timestamp,
    /// When this report was sent, by the agent's clock: the server measures the skew with it.
    pub sent: Timestamp,
    pub duration_ms: u64,
    pub stats: Vec<Stat>,
    /// The API server the agent reads, as shown in messages.
    pub address: String,
    /// What the agent has to say about itself (its buffer cannot be written, say).
    #[serde(default)]
    pub note: Option<String>,
    pub outcome: Reported,
    /// Taken between two intervals on a change (`agent --watch`): not a point of the history.
    /// Absent when false, so that other reports stay what servers before watch mode read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub between: bool,
}

/// How one collection went.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stat {
    pub collection: String,
    pub ms: u64,
    pub ok: bool,
}

impl Stat {
    pub fn from_stats(stats: &[CollectionStat]) -> Vec<Stat> {
        stats
            .iter()
            .map(|s| Stat { collection: s.collection.name().into(), ms: s.duration.as_millis() as u64, ok: s.ok })
            .collect()
    }

    /// Back to the monitor's own records; unknown collections are left out.
    pub fn to_stats(stats: &[Stat]) -> Vec<CollectionStat> {
        stats
            .iter()
            .filter_map(|s| {
                let collection = crate::collect::kinds::named(&s.collection)?;
                Some(CollectionStat { collection, duration: Duration::from_millis(s.ms), ok: s.ok })
            })
            .collect()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Reported {
    /// The cycle read the cluster.
    Snapshot(Box<Delta>),
    /// The agent could not read the API server: its message.
    Error(String),
}

/// The snapshot's lists that travel as differences, each named once (its field in
/// [`Snapshot`], its record): the report's [`Delta`], what the agent knows the server holds
/// ([`Acknowledged`]) and what the server holds ([`Held`]) are made from this one list.
macro_rules! lists {
    ($($field:ident: $record:ty),* $(,)?) => {
        /// A snapshot, whole (`base` None) or as the difference from the snapshot of cycle
        /// `base`.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct Delta {
            pub base: Option<Timestamp>,
            pub version: String,
            $(pub $field: ListDelta<$record>,)*
            pub extras: Extras,
            /// When the agent's connection's certificates end (left out when not known, so
            /// that a report without them reads as before).
            #[serde(default, skip_serializing_if = "is_unknown")]
            pub certificates: crate::collect::Certificates,
        }

        /// What a server holds of a snapshot, as the agent remembers it: the hashes of each
        /// list.
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct Acknowledged {
            pub time: Option<Timestamp>,
            $($field: Tally,)*
        }

        /// What the server holds of the last snapshot it took from an agent.
        #[derive(Clone, Debug, Default)]
        pub struct Held {
            pub time: Option<Timestamp>,
            $($field: HashMap<u64, ($record, u32)>,)*
        }

        /// The whole snapshot, each item with its hash (per-pod usage left out).
        pub fn whole(snapshot: Snapshot) -> Delta {
            let mut extras = snapshot.extras;
            if let Optional::Read(usage) = &mut extras.pod_metrics {
                usage.clear();
            }
            Delta {
                base: None,
                version: snapshot.version,
                $($field: whole_list(snapshot.$field),)*
                extras,
                certificates: snapshot.certificates,
            }
        }

        impl Delta {
            /// What the server holds once it has taken this whole snapshot of cycle `time`.
            pub fn held(&self, time: Timestamp) -> Acknowledged {
                debug_assert!(self.base.is_none(), "only a whole snapshot says all that is held");
                Acknowledged { time: Some(time), $($field: counts_of(&self.$field.put),)* }
            }

            /// This whole snapshot as the difference from what the server holds (unchanged
            /// when it holds nothing).
            pub fn narrowed(self, base: &Acknowledged) -> Delta {
                let Some(time) = base.time else { return self };
                Delta {
                    base: Some(time),
                    version: self.version,
                    $($field: self.$field.narrowed(&base.$field),)*
                    extras: self.extras,
                    certificates: self.certificates,
                }
            }
        }

        impl Held {
            /// Applies a report's delta and returns the snapshot of cycle `time`, which is then
            /// what is held. A delta from a base not held is refused before anything changes.
            pub fn apply(&mut self, time: Timestamp, delta: Delta) -> Result<Snapshot, ReportError> {
                match delta.base {
                    None => *self = Held::default(),
                    Some(b) if self.time == Some(b) => {}
                    Some(base) => return Err(ReportError::UnknownBase { base }),
                }
                self.time = Some(time);
                $(apply_list(&mut self.$field, delta.$field);)*
                let mut snapshot = Snapshot {
                    time,
                    version: delta.version,
                    $($field: expand(&self.$field),)*
                    extras: delta.extras,
                    certificates: delta.certificates,
                };
                snapshot.canonical_order();
                Ok(snapshot)
            }
        }
    };
}

lists!(nodes: Arc<Node>, pods: Arc<Pod>, workloads: Arc<Workload>, pvcs: Arc<Pvc>, events: Arc<Event>);

fn is_unknown(c: &crate::collect::Certificates) -> bool {
    *c == crate::collect::Certificates::default()
}

/// Items to put (each with its hash; an item held n times is sent n times) and hashes of items
/// gone. A hash that is put replaces whatever the base held under it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(bound = "T: Serialize + DeserializeOwned")]
pub struct ListDelta<T> {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub put: Vec<(u64, T)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gone: Vec<u64>,
}

/// The hashes of one list, with how many items share each.
pub type Tally = HashMap<u64, u32>;

/// The stable 64-bit hash of an item's JSON (SipHash with fixed keys).
fn hash_of<T: Serialize>(item: &T) -> u64 {
    let json = serde_json::to_vec(item).expect("a compact record serializes");
    #[allow(deprecated)]
    let mut h = std::hash::SipHasher::new_with_keys(0x6475_6d62_6d6f_6e69, 0x7420_7769_7265_0001);
    h.write(&json);
    h.finish()
}

fn whole_list<T: Serialize>(items: Vec<T>) -> ListDelta<T> {
    ListDelta { put: items.into_iter().map(|i| (hash_of(&i), i)).collect(), gone: Vec::new() }
}

fn counts_of<T>(put: &[(u64, T)]) -> Tally {
    let mut c = Tally::with_capacity(put.len());
    for (h, _) in put {
        *c.entry(*h).or_default() += 1;
    }
    c
}

impl<T> ListDelta<T> {
    /// A whole list narrowed to what differs from `base`.
    fn narrowed(self, base: &Tally) -> ListDelta<T> {
        let now = counts_of(&self.put);
        let put = self.put.into_iter().filter(|(h, _)| base.get(h) != now.get(h)).collect();
        let mut gone: Vec<u64> = base.keys().filter(|h| !now.contains_key(h)).copied().collect();
        gone.sort_unstable();
        ListDelta { put, gone }
    }
}

/// The snapshot as sent given what the server holds, and what it holds once it takes it.
pub fn encode(snapshot: &Snapshot, base: &Acknowledged) -> (Delta, Acknowledged) {
    let w = whole(snapshot.clone());
    let held = w.held(snapshot.time);
    (w.narrowed(base), held)
}

/// What is wrong with an agent's report: it cannot be read, or its difference cannot be
/// applied. The server answers each with its own status (`web::agent`). A `detail` is serde's or
/// flate2's words, at most 200 bytes of them: they may quote an agent's value, which may be
/// hundreds of megabytes.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ReportError {
    /// The source failed before the report could be read.
    #[error("not readable: {detail}")]
    Unreadable { detail: String },
    /// More than `limit` bytes of JSON once inflated.
    #[error("larger than {} MiB once inflated", .limit / (1024 * 1024))]
    TooLarge { limit: u64 },
    /// Compressed, but not valid gzip.
    #[error("not valid gzip: {detail}")]
    NotGzip { detail: String },
    /// Not JSON.
    #[error("not a cycle report: {detail}")]
    NotJson { detail: String },
    /// JSON, but not a report.
    #[error("not a cycle report: {detail}")]
    NotReport { detail: String },
    /// A report in another version of the format.
    #[error("report format {format} is not {FORMAT}: agent and server versions differ")]
    Format { format: u32 },
    /// The difference from a cycle this server does not hold (it restarted, say).
    #[error("the report is the difference from the cycle of {base}, which this server does not hold")]
    UnknownBase { base: Timestamp },
}

/// Applies a list's difference in place: gone hashes leave, put hashes replace what was held.
fn apply_list<T>(held: &mut HashMap<u64, (T, u32)>, delta: ListDelta<T>) {
    for h in &delta.gone {
        held.remove(h);
    }
    let mut put: HashMap<u64, (T, u32)> = HashMap::with_capacity(delta.put.len());
    for (h, item) in delta.put {
        put.entry(h).and_modify(|(_, n)| *n += 1).or_insert((item, 1));
    }
    held.extend(put);
}

fn expand<T: Clone>(held: &HashMap<u64, (T, u32)>) -> Vec<T> {
    held.values().flat_map(|(item, n)| std::iter::repeat_n(item.clone(), *n as usize)).collect()
}

impl Report {
    /// The report's JSON, gzip-compressed.
    pub fn to_gzip(&self) -> Vec<u8> {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        serde_json::to_writer(&mut gz, self).expect("a report serializes");
        gz.write_all(b"\n").expect("writing to memory");
        gz.finish().expect("writing to memory")
    }

    /// A report from its JSON, gzip-compressed or not, inflating at most `limit` bytes.
    pub fn parse(bytes: &[u8], limit: u64) -> Result<Report, ReportError> {
        Self::read(bytes, limit)
    }

    /// A report read from `source` (JSON, gzip-compressed or not), inflated as a stream into
    /// the parser, which stops at `limit` bytes of JSON: a small body that inflates to much
    /// more is refused without being held. Every string the agent says of itself is cut at
    /// [`MAX_STRING`] bytes, and says so.
    pub fn read(source: impl std::io::Read, limit: u64) -> Result<Report, ReportError> {
        use std::io::BufRead;
        let mut source = std::io::BufReader::new(source);
        let gzip = source
            .fill_buf()
            .map_err(|e| ReportError::Unreadable { detail: at_most(&e, 200) })?
            .starts_with(&[0x1f, 0x8b]);
        let over = std::rc::Rc::new(std::cell::Cell::new(false));
        // Each string is cut as it is read (past LONGEST_READ bytes the rest is dropped, never
        // held): the peak follows what is kept, not what an agent inflated.
        let parsed: Result<Report, serde_json::Error> = if gzip {
            let inflated = flate2::bufread::MultiGzDecoder::new(source);
            serde_json::from_reader(std::io::BufReader::new(CutStrings::new(AtMost {
                inner: inflated,
                left: limit,
                over: over.clone(),
            })))
        } else {
            serde_json::from_reader(std::io::BufReader::new(CutStrings::new(AtMost {
                inner: source,
                left: limit,
                over: over.clone(),
            })))
        };
        let mut report = match parsed {
            Ok(r) => r,
            Err(_) if over.get() => return Err(ReportError::TooLarge { limit }),
            Err(e) if e.is_io() && gzip => return Err(ReportError::NotGzip { detail: at_most(&e, 200) }),
            Err(e) if e.is_data() => return Err(ReportError::NotReport { detail: at_most(&e, 200) }),
            Err(e) => return Err(ReportError::NotJson { detail: at_most(&e, 200) }),
        };
        if report.format != FORMAT {
            return Err(ReportError::Format { format: report.format });
        }
        report.cap_strings();
        Ok(report)
    }

    /// Cuts what the agent says of itself (its note, its address, its error, the names of its
    /// stats) at [`MAX_STRING`] bytes, saying so; its note, address and error cleaned of every
    /// secret the process knows first (they are shown on the pages, in the API and in
    /// notifications).
    fn cap_strings(&mut self) {
        // Cleaned of every secret the server knows before the cut, so that no part of one is
        // left at its end.
        let clean = |s: &mut String| {
            if let std::borrow::Cow::Owned(cleaned) = crate::redact::redact_known(s) {
                *s = cleaned;
            }
            cap(s);
        };
        clean(&mut self.address);
        if let Some(n) = &mut self.note {
            clean(n);
        }
        if let Reported::Error(e) = &mut self.outcome {
            clean(e);
        }
        for s in &mut self.stats {
            cap(&mut s.collection);
        }
    }
}

/// The longest string an agent may say of itself (a note, an address, an error, a stat's name).
pub const MAX_STRING: usize = 4096;

fn cap(s: &mut String) {
    // A string cut while it was read ends with NUL and the length it had (see CutStrings).
    let mut sent = s.len();
    if let Some(at) = s.rfind('\0')
        && let Ok(n) = s[at + 1..].parse::<usize>()
    {
        s.truncate(at);
        sent = n;
    }
    if s.len() <= MAX_STRING && sent == s.len() {
        return;
    }
    let mut end = MAX_STRING.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s.push_str(&format!("… (cut at 4 KB: the agent sent {sent} bytes)"));
}

/// The longest string of a report read whole, in bytes as sent (escapes included).
const LONGEST_READ: u64 = 64 * 1024;

/// A report's JSON as it is read, each string past [`LONGEST_READ`] bytes cut there: the rest
/// of it is read and dropped, and the string ends with `\u0000` and the number of bytes it
/// had, which [`cap`] turns into its sentence (a string that is not the agent's word about
/// itself keeps them: only an agent that sends such strings sees them). A cut is made where
/// the string can end: never inside an escape, a surrogate pair or a UTF-8 character.
struct CutStrings<R> {
    inner: R,
    /// What was read from `inner`, and how far it was looked at.
    read: Vec<u8>,
    at: usize,
    /// Bytes to give before any more of `read` (a cut string's ending).
    ending: Vec<u8>,
    lex: Lex,
}

#[derive(Default)]
struct Lex {
    in_string: bool,
    /// After a backslash.
    escaped: bool,
    /// Hex digits of a `\uXXXX` still to come, and its value so far.
    hex_left: u8,
    hex: u32,
    /// The last escape was the first half of a surrogate pair.
    high_surrogate: bool,
    /// The current string's bytes so far.
    len: u64,
    dropping: bool,
}

impl Lex {
    /// Follows one byte of a string (not its closing quote) through escapes.
    fn follow(&mut self, b: u8) {
        if self.escaped {
            self.escaped = false;
            if b == b'u' {
                (self.hex_left, self.hex) = (4, 0);
            } else {
                self.high_surrogate = false;
            }
        } else if self.hex_left > 0 {
            self.hex = self.hex * 16 + (b as char).to_digit(16).unwrap_or(0);
            self.hex_left -= 1;
            if self.hex_left == 0 {
                self.high_surrogate = (0xD800..=0xDBFF).contains(&self.hex);
            }
        } else if b == b'\\' {
            self.escaped = true;
        } else {
            self.high_surrogate = false;
        }
        self.len += 1;
    }

    /// Whether the string may be cut before byte `b`.
    fn may_cut_before(&self, b: u8) -> bool {
        !self.escaped && self.hex_left == 0 && !self.high_surrogate && b & 0xC0 != 0x80
    }

    /// Whether `b` closes the current string.
    fn closes(&self, b: u8) -> bool {
        b == b'"' && !self.escaped && self.hex_left == 0
    }
}

impl<R: std::io::Read> CutStrings<R> {
    fn new(inner: R) -> CutStrings<R> {
        CutStrings { inner, read: Vec::new(), at: 0, ending: Vec::new(), lex: Lex::default() }
    }
}

impl<R: std::io::Read> std::io::Read for CutStrings<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let mut n = 0;
        while n < out.len() {
            if !self.ending.is_empty() {
                let k = self.ending.len().min(out.len() - n);
                out[n..n + k].copy_from_slice(&self.ending[..k]);
                self.ending.drain(..k);
                n += k;
                continue;
            }
            if self.at == self.read.len() {
                if n > 0 {
                    break;
                }
                self.read.resize(64 * 1024, 0);
                self.at = 0;
                let got = match self.inner.read(&mut self.read) {
                    Ok(got) => got,
                    Err(e) => {
                        // Nothing of a read that failed is looked at again.
                        self.read.clear();
                        return Err(e);
                    }
                };
                self.read.truncate(got);
                if got == 0 {
                    break;
                }
            }
            let b = self.read[self.at];
            self.at += 1;
            let lex = &mut self.lex;
            if !lex.in_string {
                if b == b'"' {
                    *lex = Lex { in_string: true, ..Lex::default() };
                }
                out[n] = b;
                n += 1;
                continue;
            }
            if lex.closes(b) {
                if lex.dropping {
                    self.ending = format!("\\u0000{}\"", lex.len).into_bytes();
                } else {
                    out[n] = b;
                    n += 1;
                }
                lex.in_string = false;
                continue;
            }
            if !lex.dropping && lex.len >= LONGEST_READ && lex.may_cut_before(b) {
                lex.dropping = true;
            }
            lex.follow(b);
            if !lex.dropping {
                out[n] = b;
                n += 1;
            }
        }
        Ok(n)
    }
}

/// A reader that fails once more than `left` bytes were read from it, and says so in `over`.
struct AtMost<R> {
    inner: R,
    left: u64,
    over: std::rc::Rc<std::cell::Cell<bool>>,
}

impl<R: std::io::Read> std::io::Read for AtMost<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n as u64 > self.left {
            self.over.set(true);
            return Err(std::io::Error::other("the limit is reached"));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// An error's words, at most `max` bytes of them, and without ever writing them all: serde
/// quotes the offending value whole, and an agent's value may be hundreds of megabytes.
fn at_most(e: &dyn std::fmt::Display, max: usize) -> String {
    struct Cut {
        text: String,
        max: usize,
    }
    impl std::fmt::Write for Cut {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            let room = self.max - self.text.len();
            if s.len() <= room {
                self.text.push_str(s);
                return Ok(());
            }
            let mut end = room;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            self.text.push_str(&s[..end]);
            Err(std::fmt::Error)
        }
    }
    let mut cut = Cut { text: String::new(), max };
    if std::fmt::write(&mut cut, format_args!("{e}")).is_err() {
        cut.text.push('…');
    }
    cut.text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::WorkloadKind;

    fn node(name: &str, ready: &str) -> Node {
        Node {
            allocatable_pods: None,
            taints: vec![],
            name: name.into(),
            ready: Some(ready.into()),
            ready_detail: None,
            conditions: vec![],
            unschedulable: false,
            kubelet_version: "v1.33.4".into(),
            allocatable_cpu: Some(2000),
            allocatable_memory: None,
        }
    }

    fn workload(name: &str, ready: i64) -> Workload {
        Workload {
            generation_lag: 0,
            misscheduled: 0,
            kind: WorkloadKind::Deployment,
            namespace: "web".into(),
            name: name.into(),
            desired: 3,
            ready,
            available: ready,
            updated: ready,
            updating: ready < 3,
            deadline_exceeded: None,
        }
    }

    fn event(reason: &str) -> Event {
        Event {
            namespace: "web".into(),
            kind: "Pod".into(),
            object_namespace: Some("web".into()),
            object_name: "api-1".into(),
            reason: reason.into(),
            message: "Back-off".into(),
            event_type: "Warning".into(),
            last_seen: None,
            count: 3,
        }
    }

    fn snapshot(t: &str, nodes: Vec<Node>, workloads: Vec<Workload>, events: Vec<Event>) -> Snapshot {
        let mut s = Snapshot {
            time: t.parse().unwrap(),
            version: "v1.33.4+k3s1".into(),
            nodes: nodes.into_iter().map(Arc::new).collect(),
            workloads: workloads.into_iter().map(Arc::new).collect(),
            events: events.into_iter().map(Arc::new).collect(),
            ..Default::default()
        };
        s.canonical_order();
        s
    }

    fn round_trip(report: &Delta) -> Delta {
        serde_json::from_str(&serde_json::to_string(report).unwrap()).unwrap()
    }

    #[test]
    fn a_chain_of_differences_rebuilds_every_snapshot() {
        let one = snapshot(
            "2026-11-30T03:00:00Z",
            vec![node("a", "True"), node("b", "True")],
            vec![workload("api", 3)],
            vec![event("BackOff"), event("BackOff")],
        );
        let two = snapshot(
            "2026-11-30T03:01:00Z",
            vec![node("a", "True"), node("b", "False"), node("c", "True")],
            vec![workload("api", 3)],
            vec![event("BackOff")],
        );
        let three = snapshot("2026-11-30T03:02:00Z", vec![node("a", "True")], vec![], vec![]);

        let (d1, ack1) = encode(&one, &Acknowledged::default());
        assert_eq!(d1.base, None);
        assert_eq!(d1.nodes.put.len(), 2);
        assert_eq!(d1.events.put.len(), 2, "an item held twice is sent twice");
        let mut held = Held::default();
        let s1 = held.apply(one.time, round_trip(&d1)).unwrap();
        let held1 = held.clone();
        assert_eq!(s1, one);

        let (d2, ack2) = encode(&two, &ack1);
        assert_eq!(d2.base, Some(one.time));
        assert_eq!(d2.nodes.put.iter().map(|(_, n)| n.name.as_str()).collect::<Vec<_>>(), ["b", "c"]);
        assert_eq!(d2.nodes.gone.len(), 1, "the old node b");
        assert!(d2.workloads.put.is_empty() && d2.workloads.gone.is_empty(), "unchanged: nothing sent");
        assert_eq!(d2.events.put.len(), 1, "the count changed from two to one");
        let s2 = held.apply(two.time, round_trip(&d2)).unwrap();
        assert_eq!(s2, two);

        let (d3, _) = encode(&three, &ack2);
        let s3 = held.apply(three.time, round_trip(&d3)).unwrap();
        assert_eq!(s3, three);

        // A server that holds another base refuses the difference; the whole snapshot goes.
        let mut other = held1.clone();
        assert_eq!(other.apply(three.time, d3.clone()).unwrap_err(), ReportError::UnknownBase { base: two.time });
        assert_eq!(other.time, held1.time, "a refused delta changes nothing held");
        let (whole, _) = encode(&three, &Acknowledged::default());
        assert_eq!(whole.base, None);
        assert_eq!(other.apply(three.time, whole).unwrap(), three);
    }

    #[test]
    fn per_pod_usage_stays_behind_but_its_outcome_travels() {
        let mut s = snapshot("2026-11-30T03:00:00Z", vec![], vec![], vec![]);
        s.extras.pod_metrics = Optional::Read(vec![
            crate::collect::from_api(r#"{"metadata":{"name":"p","namespace":"n"},"containers":[]}"#).unwrap(),
        ]);
        let (d, _) = encode(&s, &Acknowledged::default());
        assert_eq!(d.extras.pod_metrics, Optional::Read(vec![]));
    }

    #[test]
    fn reports_refuse_other_formats_and_bombs() {
        let s = snapshot("2026-11-30T03:00:00Z", vec![node("a", "True")], vec![], vec![]);
        let (delta, _) = encode(&s, &Acknowledged::default());
        let mut r = Report {
            format: FORMAT,
            time: s.time,
            sent: s.time,
            duration_ms: 12,
            stats: vec![],
            address: "https://10.43.0.1:443".into(),
            note: None,
            outcome: Reported::Snapshot(Box::new(delta)),
            between: false,
        };
        let gz = r.to_gzip();
        assert_eq!(Report::parse(&gz, 1 << 20).unwrap(), r);
        assert!(Report::parse(&gz, 10).unwrap_err().to_string().contains("larger than"));
        r.format = 7;
        let text = serde_json::to_vec(&r).unwrap();
        assert_eq!(
            Report::parse(&text, 1 << 20).unwrap_err().to_string(),
            "report format 7 is not 1: agent and server versions differ"
        );
        assert!(Report::parse(b"{}", 1 << 20).unwrap_err().to_string().starts_with("not a cycle report"));
        // What the agent says of itself is cut at 4 KB, and says so.
        r.format = FORMAT;
        r.note = Some("n".repeat(50_000));
        r.outcome = Reported::Error("é".repeat(5_000));
        let read = Report::parse(&r.to_gzip(), 1 << 20).unwrap();
        let note = read.note.unwrap();
        assert!(note.len() < MAX_STRING + 100 && note.ends_with("(cut at 4 KB: the agent sent 50000 bytes)"), "{note}");
        let Reported::Error(e) = read.outcome else { panic!("an error") };
        assert!(e.len() < MAX_STRING + 100 && e.ends_with("the agent sent 10000 bytes)"));
    }

    #[test]
    fn long_strings_are_cut_as_they_are_read_and_say_how_long_they_were() {
        let s = snapshot("2026-11-30T03:00:00Z", vec![node("a", "True")], vec![], vec![]);
        let (delta, _) = encode(&s, &Acknowledged::default());
        // Escapes, a surrogate pair when escaped, and characters of 2 and 4 bytes around the cut.
        let note = format!("{}{}", "é".repeat(40_000), "\"\\😀\u{1}".repeat(100_000));
        let sent = serde_json::to_string(&note).unwrap().len() - 2;
        let r = Report {
            format: FORMAT,
            time: s.time,
            sent: s.time,
            duration_ms: 12,
            stats: vec![],
            address: "a".repeat(70_000),
            note: Some(note),
            outcome: Reported::Snapshot(Box::new(delta)),
            between: false,
        };
        let read = Report::parse(&r.to_gzip(), 1 << 30).unwrap();
        let note = read.note.unwrap();
        assert!(note.len() < MAX_STRING + 100, "{} bytes", note.len());
        assert!(note.ends_with(&format!("(cut at 4 KB: the agent sent {sent} bytes)")), "{note}");
        assert!(read.address.ends_with("(cut at 4 KB: the agent sent 70000 bytes)"), "{}", read.address);
        // Cut at any length, the JSON stays JSON.
        for extra in 0..8 {
            let text = format!(
                "{{\"a\": \"{}{}\\u00e9\\ud83d\\ude00\\\\\\\"x\", \"b\": 1}}",
                "x".repeat(LONGEST_READ as usize - 12),
                "y".repeat(extra)
            );
            let mut back = String::new();
            std::io::Read::read_to_string(&mut CutStrings::new(text.as_bytes()), &mut back).unwrap();
            let v: serde_json::Value = serde_json::from_str(&back).unwrap_or_else(|e| panic!("{extra}: {e}"));
            assert_eq!(v["b"], 1);
            assert!(v["a"].as_str().unwrap().len() <= LONGEST_READ as usize + 16);
        }
    }

    #[test]
    fn each_refusal_is_its_own_variant() {
        let parse = |b: &[u8]| Report::parse(b, 1 << 20).unwrap_err();
        assert!(matches!(parse(b"nope"), ReportError::NotJson { .. }));
        assert!(matches!(parse(b"{\"format\": 1"), ReportError::NotJson { .. }), "cut short");
        assert!(matches!(parse(b"{}"), ReportError::NotReport { .. }));
        assert!(matches!(parse(&[0x1f, 0x8b, 0, 1, 2]), ReportError::NotGzip { .. }));
        let mut huge = b"{\"format\": 1, \"note\": \"".to_vec();
        huge.extend(std::iter::repeat_n(b'n', 2 << 20));
        assert_eq!(parse(&huge), ReportError::TooLarge { limit: 1 << 20 });
        let s = snapshot("2026-11-30T03:00:00Z", vec![], vec![], vec![]);
        let r = Report {
            format: 2,
            time: s.time,
            sent: s.time,
            duration_ms: 1,
            stats: vec![],
            address: "https://10.43.0.1:443".into(),
            note: None,
            outcome: Reported::Error("e".into()),
            between: false,
        };
        assert_eq!(parse(&r.to_gzip()), ReportError::Format { format: 2 });
    }

    #[test]
    fn an_error_quoting_a_huge_value_is_cut() {
        let huge = format!("{{\"format\": \"{}\"}}", "x".repeat(1 << 20));
        let e = serde_json::from_str::<Report>(&huge).unwrap_err();
        let said = at_most(&e, 200);
        assert!(said.len() <= 200 + '…'.len_utf8(), "{}", said.len());
        assert!(said.starts_with("invalid type: string \"xxx"), "{said}");
        assert_eq!(at_most(&"short", 200), "short");
    }
}
