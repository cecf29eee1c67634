//! The agent's kept cycles: every cycle is kept until each server has it, oldest first, up to
//! an age and a size. In `--buffer-dir` each cycle is one gzip file (`cycle-<time>.json.gz`)
//! and each server's progress one small file (`delivered-<hash of its URL>`), so a restarted
//! agent goes on where it stopped; without it, or when the directory cannot be written, they
//! are kept in memory and the agent says so.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};

use crate::logs::Emit;

/// One kept cycle: the whole report, gzip-compressed.
#[derive(Clone, Debug)]
pub struct Kept {
    pub time: Timestamp,
    /// When it was made, by the wall clock: how long it waited is added to its `sent` time.
    pub made: Timestamp,
    pub size: u64,
    place: Place,
}

#[derive(Clone, Debug)]
enum Place {
    Memory(Arc<Vec<u8>>),
    Disk(PathBuf),
}

impl Kept {
    pub fn bytes(&self) -> std::io::Result<Vec<u8>> {
        match &self.place {
            Place::Memory(b) => Ok(b.as_ref().clone()),
            Place::Disk(p) => std::fs::read(p),
        }
    }
}

pub struct Buffer {
    dir: Option<PathBuf>,
    entries: VecDeque<Kept>,
    max_age: SignedDuration,
    max_bytes: u64,
    /// The last cycle each server has, by server.
    delivered: Vec<Option<Timestamp>>,
    servers: Vec<String>,
    /// Why the directory is not used, when it is not.
    pub problem: Option<String>,
}

/// The file name of a server's progress: stable for its URL.
fn progress_file(server: &str) -> String {
    use std::hash::Hasher;
    #[allow(deprecated)]
    let mut h = std::hash::SipHasher::new_with_keys(1, 2);
    h.write(server.as_bytes());
    format!("delivered-{:016x}", h.finish())
}

fn stamp(t: Timestamp) -> String {
    format!("cycle-{}-{:09}.json.gz", t.as_second(), t.subsec_nanosecond())
}

fn time_of(name: &str) -> Option<Timestamp> {
    let rest = name.strip_prefix("cycle-")?.strip_suffix(".json.gz")?;
    let (s, ns) = rest.split_once('-')?;
    Timestamp::new(s.parse().ok()?, ns.parse().ok()?).ok()
}

impl Buffer {
    /// Opens the buffer; what `dir` already holds (from an agent that stopped) is taken up.
    pub fn open(dir: Option<&Path>, servers: &[String], max_age: SignedDuration, max_bytes: u64) -> Buffer {
        let mut b = Buffer {
            dir: dir.map(Path::to_path_buf),
            entries: VecDeque::new(),
            max_age,
            max_bytes,
            delivered: vec![None; servers.len()],
            servers: servers.to_vec(),
            problem: None,
        };
        let Some(dir) = dir else { return b };
        if let Err(e) = std::fs::create_dir_all(dir).and_then(|_| probe(dir)) {
            b.cannot_write(&e);
            return b;
        }
        let mut found: Vec<Kept> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let time = time_of(&e.file_name().to_string_lossy())?;
                let meta = e.metadata().ok()?;
                let made = meta.modified().ok().and_then(|m| Timestamp::try_from(m).ok()).unwrap_or(time);
                Some(Kept { time, made, size: meta.len(), place: Place::Disk(e.path()) })
            })
            .collect();
        found.sort_by_key(|k| k.time);
        b.entries = found.into();
        for (i, s) in servers.iter().enumerate() {
            b.delivered[i] =
                std::fs::read_to_string(dir.join(progress_file(s))).ok().and_then(|t| t.trim().parse().ok());
        }
        b.prune();
        b
    }

    fn cannot_write(&mut self, e: &std::io::Error) {
        let dir = self.dir.take().map(|d| d.display().to_string()).unwrap_or_default();
        let event = super::events::BufferUnwritable { dir: &dir, error: e };
        event.emit();
        self.problem = Some(event.to_string());
    }

    /// Keeps a cycle; on disk when it can, else in memory.
    pub fn keep(&mut self, time: Timestamp, gz: Vec<u8>) {
        let size = gz.len() as u64;
        let made = Timestamp::now();
        let place = match &self.dir {
            Some(dir) => {
                let path = dir.join(stamp(time));
                match crate::record::write_bytes(&path, &gz) {
                    Ok(()) => Place::Disk(path),
                    Err(e) => {
                        self.cannot_write(&e);
                        Place::Memory(Arc::new(gz))
                    }
                }
            }
            None => Place::Memory(Arc::new(gz)),
        };
        self.entries.push_back(Kept { time, made, size, place });
        self.prune();
    }

    /// The oldest cycle server `i` does not have.
    pub fn next_for(&self, i: usize) -> Option<Kept> {
        let after = self.delivered[i];
        self.entries.iter().find(|k| after.is_none_or(|d| k.time > d)).cloned()
    }

    /// Server `i` has the cycle of `time`.
    pub fn delivered(&mut self, i: usize, time: Timestamp) {
        self.delivered[i] = Some(time);
        if let Some(dir) = &self.dir {
            let path = dir.join(progress_file(&self.servers[i]));
            if let Err(e) = crate::record::write_bytes(&path, time.to_string().as_bytes()) {
                self.cannot_write(&e);
            }
        }
        self.prune();
    }

    /// How many cycles server `i` does not have yet.
    pub fn pending(&self, i: usize) -> usize {
        let after = self.delivered[i];
        self.entries.iter().filter(|k| after.is_none_or(|d| k.time > d)).count()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn bytes(&self) -> u64 {
        self.entries.iter().map(|k| k.size).sum()
    }

    /// Drops what every server has, then what is too old or past the size, oldest first.
    fn prune(&mut self) {
        let everywhere = self.delivered.iter().copied().min().flatten();
        let newest = self.entries.back().map(|k| k.time);
        let mut total = self.bytes();
        let mut dropped = 0;
        while let Some(first) = self.entries.front() {
            let delivered = everywhere.is_some_and(|d| first.time <= d);
            let too_old = newest.is_some_and(|n| n.duration_since(first.time) > self.max_age);
            let too_big = total > self.max_bytes && self.entries.len() > 1;
            if !(delivered || too_old || too_big) {
                break;
            }
            if !delivered {
                dropped += 1;
            }
            total -= first.size;
            if let Place::Disk(p) = &first.place {
                let _ = std::fs::remove_file(p);
            }
            self.entries.pop_front();
        }
        if dropped > 0 {
            super::events::KeptCyclesDropped { dropped }.emit();
        }
    }
}

/// Whether files can be written in `dir`.
fn probe(dir: &Path) -> std::io::Result<()> {
    let p = dir.join(".probe");
    std::fs::write(&p, b"")?;
    std::fs::remove_file(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + s).unwrap()
    }

    #[test]
    fn each_server_gets_every_cycle_in_order_and_a_restart_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let servers = vec!["https://a".to_string(), "https://b".to_string()];
        let mut b = Buffer::open(Some(dir.path()), &servers, SignedDuration::from_hours(24), 1 << 30);
        for s in 0..3 {
            b.keep(t(s * 60), vec![s as u8; 10]);
        }
        assert_eq!(b.next_for(0).unwrap().time, t(0));
        b.delivered(0, t(0));
        b.delivered(0, t(60));
        assert_eq!(b.next_for(0).unwrap().time, t(120));
        assert_eq!(b.next_for(1).unwrap().time, t(0), "server b has its own progress");
        assert_eq!(b.len(), 3, "kept until every server has it");
        b.delivered(1, t(0));
        assert_eq!(b.len(), 2);

        let again = Buffer::open(Some(dir.path()), &servers, SignedDuration::from_hours(24), 1 << 30);
        assert_eq!(again.len(), 2);
        assert_eq!(again.next_for(0).unwrap().time, t(120));
        assert_eq!(again.next_for(1).unwrap().time, t(60));
        assert_eq!(again.next_for(1).unwrap().bytes().unwrap(), vec![1u8; 10]);
    }

    #[test]
    fn age_and_size_bound_what_is_kept() {
        let servers = vec!["https://a".to_string()];
        let mut b = Buffer::open(None, &servers, SignedDuration::from_mins(2), 25);
        for s in 0..5 {
            b.keep(t(s * 60), vec![0; 10]);
        }
        assert_eq!(b.len(), 2, "25 bytes hold two cycles of 10");
        assert_eq!(b.next_for(0).unwrap().time, t(180));
        let mut aged = Buffer::open(None, &servers, SignedDuration::from_mins(2), 1 << 30);
        for s in 0..5 {
            aged.keep(t(s * 60), vec![0; 10]);
        }
        assert_eq!(aged.next_for(0).unwrap().time, t(120), "older than two minutes before the newest: gone");
    }

    #[test]
    fn a_directory_that_cannot_be_written_leaves_the_cycles_in_memory() {
        let servers = vec!["https://a".to_string()];
        let mut b =
            Buffer::open(Some(Path::new("/proc/dumbmonit-buffer")), &servers, SignedDuration::from_hours(1), 1 << 20);
        assert!(b.problem.as_deref().unwrap().contains("cannot be written"));
        b.keep(t(0), vec![7; 3]);
        assert_eq!(b.next_for(0).unwrap().bytes().unwrap(), vec![7; 3]);
    }
}
