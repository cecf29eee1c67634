//! What the benchmarks share: an HTTP answer read the way a client reads it, and the checks that
//! keep a figure that was not measured out of the tables. A benchmark that cannot measure a
//! figure stops with an error naming it (exit status 1): it never prints a NaN, an empty sample
//! or a zero that stands for "could not read".
//!
//! The tests below run under `cargo test` (tests/bench_figures.rs includes this file).

// Each benchmark uses its part.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::Value;

pub mod plane;

/// What a benchmark could not measure.
pub type Measured<T> = Result<T, String>;

/// Runs a benchmark's body; on an error, names it and exits with status 1 (after the body's
/// guards have stopped the processes it started).
pub fn run(bench: &str, body: impl FnOnce() -> Measured<()>) {
    if let Err(e) = body() {
        eprintln!("{bench} benchmark: {e}");
        std::process::exit(1);
    }
}

/// A child process, killed when dropped (also when a benchmark stops on an error).
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An HTTP/1 answer, read to its end.
pub struct Answer {
    pub status: u16,
    headers: Vec<(String, String)>,
    /// The body as it came over the wire: compressed, if the server compressed it.
    pub wire: Vec<u8>,
}

impl Answer {
    pub fn parse(raw: &[u8]) -> Measured<Answer> {
        let end = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or("the answer has no end of headers")?;
        let head = std::str::from_utf8(&raw[..end]).map_err(|_| "the answer's headers are not text")?;
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap_or("");
        let status = status_line
            .strip_prefix("HTTP/1.")
            .and_then(|rest| rest.split(' ').nth(1))
            .and_then(|code| code.parse().ok())
            .ok_or_else(|| format!("not an HTTP status line: {status_line:?}"))?;
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
            .collect();
        let answer = Answer { status, headers, wire: raw[end + 4..].to_vec() };
        if answer.header("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
            return Err("the answer is chunked (asked as HTTP/1.0, it should not be)".into());
        }
        if let Some(length) = answer.header("content-length") {
            let length: usize = length.parse().map_err(|_| format!("Content-Length {length:?}"))?;
            if length != answer.wire.len() {
                return Err(format!("the body is {} bytes, Content-Length says {length}", answer.wire.len()));
            }
        }
        Ok(answer)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn gzipped(&self) -> bool {
        self.header("content-encoding").is_some_and(|e| e.eq_ignore_ascii_case("gzip"))
    }

    /// The body as a client sees it: decompressed when the answer says `Content-Encoding: gzip`.
    pub fn body(&self) -> Measured<Vec<u8>> {
        match self.header("content-encoding") {
            None => Ok(self.wire.clone()),
            Some(e) if e.eq_ignore_ascii_case("identity") => Ok(self.wire.clone()),
            Some(e) if e.eq_ignore_ascii_case("gzip") => {
                let mut body = Vec::new();
                flate2::read::MultiGzDecoder::new(&self.wire[..])
                    .read_to_end(&mut body)
                    .map_err(|err| format!("the gzip body does not decompress: {err}"))?;
                Ok(body)
            }
            Some(e) => Err(format!("Content-Encoding {e} is not one a client of this benchmark reads")),
        }
    }

    pub fn json(&self) -> Measured<Value> {
        let body = self.body()?;
        serde_json::from_slice(&body).map_err(|e| {
            let start = String::from_utf8_lossy(&body[..body.len().min(80)]).into_owned();
            format!("the body is not JSON ({e}): {start:?}")
        })
    }
}

/// A GET over HTTP/1.0 on `addr` (`host:port`), read to its end, that must answer 200: the
/// answer and how long it took. With `gzip`, it asks `Accept-Encoding: gzip`, as Prometheus does.
pub fn get(addr: &str, path: &str, gzip: bool) -> Measured<(Answer, Duration)> {
    let started = Instant::now();
    let fail = |what: String| format!("GET {path} on {addr}: {what}");
    let mut s = std::net::TcpStream::connect(addr).map_err(|e| fail(format!("no connection ({e})")))?;
    s.set_read_timeout(Some(Duration::from_secs(60))).map_err(|e| fail(e.to_string()))?;
    let accept = if gzip { "Accept-Encoding: gzip\r\n" } else { "" };
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n{accept}\r\n").map_err(|e| fail(format!("not sent ({e})")))?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(|e| fail(format!("not read to its end ({e})")))?;
    let took = started.elapsed();
    let answer = Answer::parse(&raw).map_err(fail)?;
    if answer.status != 200 {
        let start = String::from_utf8_lossy(&answer.wire[..answer.wire.len().min(200)]).into_owned();
        return Err(fail(format!("answered {}: {start:?}", answer.status)));
    }
    Ok((answer, took))
}

/// The number at `pointer` in `doc` (from `source`), finite and not negative.
pub fn number(source: &str, doc: &Value, pointer: &str) -> Measured<f64> {
    let v = doc.pointer(pointer).unwrap_or(&Value::Null);
    v.as_f64().ok_or_else(|| format!("{source}: {pointer} is not a number ({v})")).and_then(|n| figure(pointer, n))
}

/// A figure for the table: finite and not negative.
pub fn figure(what: &str, v: f64) -> Measured<f64> {
    if v.is_finite() && v >= 0.0 { Ok(v) } else { Err(format!("{what} was not measured ({v})")) }
}

/// A figure that is zero only when nothing was measured (a size, a peak, a count out of a known
/// number): finite and above zero.
pub fn above_zero(what: &str, v: f64) -> Measured<f64> {
    if v.is_finite() && v > 0.0 { Ok(v) } else { Err(format!("{what} was not measured ({v})")) }
}

/// The p95 of a sample of durations, refused when nothing was sampled.
pub fn p95(what: &str, mut v: Vec<Duration>) -> Measured<Duration> {
    if v.is_empty() {
        return Err(format!("{what}: no sample"));
    }
    v.sort();
    Ok(v[((v.len() - 1) as f64 * 0.95).round() as usize])
}

/// The `q` quantile (0 to 1) of a sample of durations, the nearest rank; refused when nothing was
/// sampled.
pub fn quantile(what: &str, mut v: Vec<Duration>, q: f64) -> Measured<Duration> {
    if v.is_empty() {
        return Err(format!("{what}: no sample"));
    }
    v.sort();
    Ok(v[((v.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize])
}

/// The busy CPU time of the whole machine so far (every core; idle and I/O wait left out), in
/// seconds, from /proc/stat.
pub fn machine_busy_seconds() -> Measured<f64> {
    let stat =
        std::fs::read_to_string("/proc/stat").map_err(|e| format!("the machine's CPU time: /proc/stat ({e})"))?;
    let line =
        stat.lines().find(|l| l.starts_with("cpu ")).ok_or("the machine's CPU time: /proc/stat has no cpu line")?;
    let n: Vec<u64> = line.split_whitespace().skip(1).map(|f| f.parse().unwrap_or(u64::MAX)).collect();
    if n.len() < 8 || n.contains(&u64::MAX) {
        return Err(format!("the machine's CPU time was not measured: {line:?}"));
    }
    // user nice system idle iowait irq softirq steal: all but idle and iowait.
    Ok((n[0] + n[1] + n[2] + n[5] + n[6] + n[7]) as f64 / clock_ticks()?)
}

fn clock_ticks() -> Measured<f64> {
    // SAFETY: sysconf only reads a configuration value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 { Ok(hz as f64) } else { Err("the clock tick (sysconf _SC_CLK_TCK) was not read".into()) }
}

/// One sample of a metric in the Prometheus text format: its labels and its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

impl Sample {
    /// The label's value; a label that is absent is empty, as Prometheus takes it.
    pub fn label(&self, name: &str) -> &str {
        self.labels.iter().find(|(n, _)| n == name).map_or("", |(_, v)| v.as_str())
    }
}

/// Every sample of the metric `name` (exactly that name: `x_sum` is not `x`) in a Prometheus
/// text exposition. A line of that name that does not parse is an error naming it.
pub fn samples(text: &str, name: &str) -> Measured<Vec<Sample>> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(name) else { continue };
        let (labels, value) = if let Some(inner) = rest.strip_prefix('{') {
            let (labels, after) =
                parse_labels(inner).ok_or_else(|| format!("{name}: a line that does not parse: {line:?}"))?;
            (labels, after)
        } else if rest.starts_with(' ') {
            (Vec::new(), rest)
        } else {
            // Another metric whose name starts with this one.
            continue;
        };
        let value = value.split_whitespace().next().and_then(|v| v.parse::<f64>().ok());
        let value = value.ok_or_else(|| format!("{name}: a line without a value: {line:?}"))?;
        out.push(Sample { labels, value });
    }
    Ok(out)
}

/// `a="x",b="y\"z"} rest` into the labels and what follows the closing brace.
fn parse_labels(mut s: &str) -> Option<(Vec<(String, String)>, &str)> {
    let mut labels = Vec::new();
    loop {
        s = s.trim_start_matches([',', ' ']);
        if let Some(rest) = s.strip_prefix('}') {
            return Some((labels, rest));
        }
        let (name, rest) = s.split_once("=\"")?;
        let mut value = String::new();
        let mut chars = rest.char_indices();
        let end = loop {
            match chars.next()? {
                (i, '"') => break i,
                (_, '\\') => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    c => value.push(c),
                },
                (_, c) => value.push(c),
            }
        };
        labels.push((name.trim().to_string(), value));
        s = &rest[end + 1..];
    }
}

/// Fails if the child has ended: `what` said, and the end of its log if there is one.
pub fn alive(child: &mut Child, what: &str, log: Option<&Path>) -> Measured<()> {
    match child.try_wait() {
        Ok(None) => Ok(()),
        Ok(Some(status)) => Err(format!("{what} ended ({status}){}", log_tail(log))),
        Err(e) => Err(format!("{what}: {e}")),
    }
}

fn log_tail(log: Option<&Path>) -> String {
    let text = log.and_then(|p| std::fs::read_to_string(p).ok()).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(10)..].join("\n");
    if tail.is_empty() { String::new() } else { format!("; its log ends:\n{tail}") }
}

/// A live process's memory from /proc, in MB: (peak, resident now). Fails when the process has
/// ended (a zombie has no memory lines).
pub fn memory_mb(pid: u32) -> Measured<(f64, f64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("process {pid}: /proc/{pid}/status ({e})"))?;
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
            .ok_or_else(|| format!("process {pid} has no {name} (it has ended)"))
    };
    Ok((field("VmHWM:")?, field("VmRSS:")?))
}

/// How many threads process `pid` has now.
pub fn threads(pid: u32) -> Measured<usize> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("process {pid}: /proc/{pid}/status ({e})"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("process {pid} has no thread count (it has ended)"))
}

/// CPU time (user + system) a process has used so far, from /proc/PID/stat.
pub fn cpu_seconds(pid: u32) -> Measured<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_err(|e| format!("process {pid}: /proc/{pid}/stat ({e})"))?;
    // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).ok_or_else(|| format!("process {pid}: unreadable stat"))?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks =
        |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).ok_or_else(|| format!("process {pid}: stat field {i}"));
    // SAFETY: sysconf only reads a system constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Ok((ticks(11)? + ticks(12)?) / hz)
}

/// Bytes as the tables write them: MB, KB or B.
pub fn size(bytes: f64) -> String {
    if bytes >= 1e6 {
        format!("{:.2} MB", bytes / 1e6)
    } else if bytes >= 1e3 {
        format!("{:.1} KB", bytes / 1e3)
    } else {
        format!("{bytes:.0} B")
    }
}

/// A duration as the tables write it: seconds from 10 s, else milliseconds.
pub fn ms(d: Duration) -> String {
    if d >= Duration::from_secs(10) {
        format!("{:.1} s", d.as_secs_f64())
    } else {
        format!("{:.0} ms", d.as_secs_f64() * 1000.0)
    }
}

/// What the cluster list said at one poll: the pods counted and the last good cycle.
pub struct Seen {
    pub at: Instant,
    pub pods: Option<u64>,
    pub cycle: Option<String>,
}

/// Each timed change's delay: from just before it was written to the first poll that counts
/// the pods it made or deleted, before the next timed change is written (6 s later). None for a
/// change not shown by then, or whose count could not be told apart (the one before it not
/// shown either).
pub struct Delays {
    pub shown: Vec<Duration>,
    pub timed: usize,
}

impl Delays {
    /// p50 / p99 / max, and how many changes were timed by how many polls.
    pub fn row(&self, polls: usize) -> String {
        let missed = self.timed - self.shown.len();
        if self.shown.is_empty() {
            return format!("none of {} shown within 6 s ({polls} polls)", self.timed);
        }
        let mut v = self.shown.clone();
        v.sort();
        let at = |q: f64| v[((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1].as_secs_f64();
        let p99 = if missed * 100 > self.timed { "> 6".to_string() } else { format!("{:.2}", at(0.99)) };
        let max = if missed > 0 { "> 6".to_string() } else { format!("{:.2}", at(1.0)) };
        format!("{:.2} / {p99} / {max} s ({} timed, {missed} not within 6 s; {polls} polls)", at(0.5), self.timed)
    }
}

/// The delays of the changes `timed` (when each was written, and the pods it adds to the count)
/// as the polls `seen` (in time order) show them.
pub fn delays(seen: &[Seen], timed: &[(Instant, i64)]) -> Measured<Delays> {
    let mut shown = Vec::new();
    let mut expected: Option<u64> = None;
    for (i, (at, change)) in timed.iter().enumerate() {
        let until = timed.get(i + 1).map(|(next, _)| *next);
        let before = seen.iter().rev().find(|s| s.at < *at).and_then(|s| s.pods);
        let Some(before) = before else { return Err("no pods counted before a timed change".into()) };
        // The last timed change not shown yet: this one cannot be told apart, and the count is
        // taken afresh at the next.
        if expected.is_some_and(|e| e != before) {
            expected = None;
            continue;
        }
        let after = before.checked_add_signed(*change);
        expected = after;
        let first = seen
            .iter()
            .filter(|s| s.at > *at && until.is_none_or(|u| s.at < u))
            .find(|s| s.pods.is_some() && s.pods == after);
        if let Some(s) = first {
            shown.push(s.at - *at);
        }
    }
    Ok(Delays { shown, timed: timed.len() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    fn answer(headers: &str, body: &[u8]) -> Vec<u8> {
        let mut raw = format!("HTTP/1.1 200 OK\r\n{headers}\r\n").into_bytes();
        raw.extend_from_slice(body);
        raw
    }

    /// Timed changes against the polls of the cluster list: a pod made (+1) then deleted (-1),
    /// each shown after some polls; one never shown; one after it that cannot be told apart.
    #[test]
    fn a_timed_change_is_shown_at_the_first_poll_that_counts_it() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let poll = |at: u64, pods: u64| Seen { at: ms(at), pods: Some(pods), cycle: None };
        let seen = [
            poll(0, 100),
            // Made at 10: still 100 at 60, 101 from 110.
            poll(60, 100),
            poll(110, 101),
            poll(5_990, 101),
            // Deleted at 6,010: 100 from 6,500.
            poll(6_060, 101),
            poll(6_500, 100),
            poll(11_990, 100),
            // Made at 12,010: never counted before the next timed change.
            poll(12_060, 100),
            poll(17_990, 100),
            // Deleted at 18,010: the count still says 100, as if shown at once; not told apart.
            poll(18_060, 100),
            poll(23_990, 100),
        ];
        let timed = [(ms(10), 1), (ms(6_010), -1), (ms(12_010), 1), (ms(18_010), -1)];
        let d = delays(&seen, &timed).unwrap();
        assert_eq!(d.shown, [Duration::from_millis(100), Duration::from_millis(490)]);
        assert_eq!(d.timed, 4);
        assert_eq!(d.row(11), "0.10 / > 6 / > 6 s (4 timed, 2 not within 6 s; 11 polls)");
        // All shown: the p99 of a few is their largest.
        let d = delays(&seen[..7], &timed[..2]).unwrap();
        assert_eq!(d.row(7), "0.10 / 0.49 / 0.49 s (2 timed, 0 not within 6 s; 7 polls)");
        // No poll before a timed change: nothing to count it against.
        assert!(delays(&seen[1..], &timed[..1]).is_err());
    }

    #[test]
    fn a_gzip_answer_is_decompressed_before_it_is_read_as_json() {
        let json = br#"[{"name":"c00000","last_good_cycle":"2026-12-01T00:00:00Z"}]"#;
        let a = Answer::parse(&answer("content-type: application/json\r\nContent-Encoding: gzip\r\n", &gzip(json)))
            .unwrap();
        assert!(a.gzipped());
        assert_ne!(a.wire, json, "the body as sent is compressed");
        assert_eq!(a.json().unwrap()[0]["last_good_cycle"], "2026-12-01T00:00:00Z");
        // Read as it came, the same answer is not JSON: what the benchmark once did.
        assert!(serde_json::from_slice::<Value>(&a.wire).is_err());

        let plain = Answer::parse(&answer("Content-Length: 2\r\n", b"[]")).unwrap();
        assert!(!plain.gzipped());
        assert_eq!(plain.json().unwrap(), serde_json::json!([]));
    }

    #[test]
    fn an_answer_that_cannot_be_read_is_an_error_that_says_why() {
        let err = |raw: &[u8]| match Answer::parse(raw).and_then(|a| a.json()) {
            Ok(v) => panic!("read as {v}"),
            Err(e) => e,
        };
        let e = err(&answer("Content-Encoding: gzip\r\n", b"[1, 2]"));
        assert!(e.starts_with("the gzip body does not decompress"), "{e}");
        let e = err(&answer("Content-Encoding: br\r\n", b"[]"));
        assert!(e.contains("br"), "{e}");
        let e = err(&answer("", b"<html>"));
        assert!(e.starts_with("the body is not JSON") && e.contains("<html>"), "{e}");
        let e = err(&answer("Content-Length: 10\r\n", b"[]"));
        assert!(e.contains("Content-Length says 10"), "{e}");
        let e = err(&answer("Transfer-Encoding: chunked\r\n", b"2\r\n[]\r\n0\r\n\r\n"));
        assert!(e.contains("chunked"), "{e}");
        assert!(err(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain").contains("no end of headers"));
        assert!(err(b"SSH-2.0\r\n\r\n").contains("not an HTTP status line"));
    }

    /// A server on loopback that answers every request with `raw` and closes.
    fn serving(raw: Vec<u8>) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            for mut s in listener.incoming().flatten() {
                // The whole request read before the answer, so that closing sends no reset.
                let (mut request, mut buf) = (Vec::new(), [0; 1024]);
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = s.write_all(&raw);
            }
        });
        addr
    }

    #[test]
    fn a_get_from_a_server_that_answers_gzip_reads_its_json() {
        let addr = serving(answer("Content-Encoding: gzip\r\n", &gzip(br#"{"commit_seconds":{"p50":0.0005}}"#)));
        let (a, took) = get(&addr, "/api/v1/monitor", true).unwrap();
        assert!(took > Duration::ZERO);
        assert_eq!(number("/api/v1/monitor", &a.json().unwrap(), "/commit_seconds/p50").unwrap(), 0.0005);

        let addr = serving(b"HTTP/1.1 503 Service Unavailable\r\n\r\nnot ready".to_vec());
        let e = get(&addr, "/api/v1/monitor", true).err().unwrap();
        assert_eq!(e, format!("GET /api/v1/monitor on {addr}: answered 503: \"not ready\""));
        // A port held bound but not listening: connecting is refused. (A listener bound and
        // dropped freed its port, which a server of a test running beside this one could get.)
        let held = tokio::net::TcpSocket::new_v4().unwrap();
        held.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let closed = held.local_addr().unwrap().to_string();
        let e = get(&closed, "/metrics", true).err().unwrap();
        assert!(e.starts_with(&format!("GET /metrics on {closed}: no connection")), "{e}");
    }

    #[test]
    fn a_figure_that_was_not_measured_is_refused_by_name() {
        let monitor = serde_json::json!({"cycle_start_lag_seconds": null, "commit_seconds": {"p50": 0.0007}});
        let e = number("/api/v1/monitor", &monitor, "/cycle_start_lag_seconds/p50").err().unwrap();
        assert_eq!(e, "/api/v1/monitor: /cycle_start_lag_seconds/p50 is not a number (null)");
        assert_eq!(number("/api/v1/monitor", &monitor, "/commit_seconds/p50"), Ok(0.0007));
        assert_eq!(figure("start lag p99", f64::NAN), Err("start lag p99 was not measured (NaN)".into()));
        assert!(figure("commit p50", -1.0).is_err());
        assert!(figure("commit p50", f64::INFINITY).is_err());
        assert_eq!(figure("start lag p50", 0.0), Ok(0.0));
        assert_eq!(
            above_zero("clusters read in the first interval", 0.0),
            Err("clusters read in the first interval was not measured (0)".into())
        );
        assert_eq!(above_zero("RSS peak", 1698.0), Ok(1698.0));
        assert_eq!(p95("overview", Vec::new()), Err("overview: no sample".into()));
        let ms = |n: u64| Duration::from_millis(n);
        assert_eq!(p95("overview", (1..=100).map(ms).collect()), Ok(ms(95)));
    }

    #[test]
    fn the_samples_of_a_metric_are_read_with_their_labels() {
        let text = r#"# HELP apiserver_response_sizes Response size distribution in bytes.
# TYPE apiserver_response_sizes histogram
apiserver_response_sizes_bucket{component="apiserver",group="",resource="pods",verb="LIST",le="1000"} 0
apiserver_response_sizes_sum{component="apiserver",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 1.2345e+07
apiserver_response_sizes_sum{group="apps",resource="deployments",verb="GET"} 512
apiserver_response_sizes_summary 3
apiserver_watch_events_sizes_sum{group="",resource="pods",version="v1"} 4096
odd_total{path="/a\"b\\c\nd",x="1"} 2
plain_total 7
"#;
        let s = samples(text, "apiserver_response_sizes_sum").unwrap();
        assert_eq!(s.len(), 2, "the _bucket, _summary and the other metric left out: {s:?}");
        assert_eq!((s[0].label("resource"), s[0].label("verb"), s[0].value), ("pods", "LIST", 12_345_000.0));
        assert_eq!((s[0].label("group"), s[0].label("absent")), ("", ""));
        assert_eq!((s[1].label("group"), s[1].value), ("apps", 512.0));
        let odd = samples(text, "odd_total").unwrap();
        assert_eq!((odd[0].label("path"), odd[0].label("x")), ("/a\"b\\c\nd", "1"));
        assert_eq!(samples(text, "plain_total").unwrap(), vec![Sample { labels: vec![], value: 7.0 }]);
        assert_eq!(samples(text, "missing_total").unwrap(), vec![]);
        let e = samples("broken_total{a=\"1\" 3\n", "broken_total").err().unwrap();
        assert!(e.starts_with("broken_total: a line that does not parse"), "{e}");
        let e = samples("broken_total{a=\"1\"} x\n", "broken_total").err().unwrap();
        assert!(e.starts_with("broken_total: a line without a value"), "{e}");
    }

    #[test]
    fn cpu_time_is_read_of_a_live_process_only() {
        let mine = cpu_seconds(std::process::id()).unwrap();
        let spin = Instant::now();
        while spin.elapsed() < Duration::from_millis(300) {
            std::hint::black_box(0u64);
        }
        let later = cpu_seconds(std::process::id()).unwrap();
        assert!(later >= mine + 0.1, "{mine} then {later}");
        let busy = machine_busy_seconds().unwrap();
        assert!(busy >= later - mine, "{busy}");
        let mut child = std::process::Command::new("sh").args(["-c", "exit 0"]).spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let e = cpu_seconds(pid).err().unwrap();
        assert!(e.contains(&format!("process {pid}")), "{e}");
        let ms = |n: u64| Duration::from_millis(n);
        assert_eq!(quantile("delay", (1..=100).map(ms).collect(), 0.5), Ok(ms(51)));
        assert_eq!(quantile("delay", (1..=100).map(ms).collect(), 0.99), Ok(ms(99)));
        assert_eq!(quantile("delay", vec![ms(7)], 0.99), Ok(ms(7)));
        assert_eq!(quantile("delay", Vec::new(), 0.5), Err("delay: no sample".into()));
    }

    #[test]
    fn a_process_that_ended_is_reported_with_its_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("serve.log");
        std::fs::write(&log, "starting\nerror: address already in use\n").unwrap();
        let mut child = std::process::Command::new("sh").args(["-c", "exit 3"]).spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let e = alive(&mut child, "serve", Some(&log)).err().unwrap();
        assert!(e.starts_with("serve ended (exit status: 3)"), "{e}");
        assert!(e.ends_with("its log ends:\nstarting\nerror: address already in use"), "{e}");
        assert!(memory_mb(pid).is_err());

        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        assert_eq!(alive(&mut child, "serve", None), Ok(()));
        let (peak, now) = memory_mb(child.id()).unwrap();
        assert!(peak > 0.0 && now > 0.0 && peak >= now, "{peak} {now}");
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
