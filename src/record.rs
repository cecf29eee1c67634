//! Recorded cycles: one JSON file per cycle (optionally gzip-compressed, `.json.gz`).
//!
//! `{"time": RFC 3339, "version": <the /version body>, "nodes": <NodeList>, "pods": <PodList>,
//!   "deployments": …, "statefulsets": …, "daemonsets": …, "persistentvolumeclaims": …,
//!   "events": <EventList of the Warning events>, "apiservices": …, "node_metrics": …,
//!   "pod_metrics": …, then each kind of the registry under its collection's name ("hpas": …,
//!   "jobs": …, "cronjobs": …), "certificates": {"serving": RFC 3339, "client": RFC 3339}}`,
//!   the Lists as the API server returned them (pages joined), or
//! `{"time": …, "error": "<message>"}` for a failed cycle. An optional read that was not granted
//! is recorded as `{"not_granted": true}`, one that failed as `{"error": "<message>"}`, one that
//! was not asked for (the Metrics API while its APIService is down) is left out.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jiff::Timestamp;
use serde::Deserialize;

use crate::collect::optional::{ApiService, Extras, Optional, Usage};
pub use crate::collect::raw::{OptionalList, RawList, Recording};
use crate::collect::{
    Api, Certificates, Event, FromApi, Lists, Node, Pod, Pvc, nullable, unwrap_api, version, workloads,
};

fn render_list(out: &mut String, list: &RawList) {
    let (kind, api_version) = list.collection.list_kind();
    out.push_str(&format!(
        ",\"{}\":{{\"kind\":\"{kind}\",\"apiVersion\":\"{api_version}\",\"metadata\":{{\"resourceVersion\":{}}},\"items\":[",
        list.collection.name(),
        serde_json::to_string(&list.resource_version).expect("a string serializes")
    ));
    for (i, item) in list.items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(item.get());
    }
    out.push_str("]}");
}

/// The text of a recorded cycle: its Lists, or the error of a failed cycle.
pub fn render(time: Timestamp, outcome: Result<&Recording, &str>) -> String {
    let time = serde_json::to_string(&time.to_string()).expect("a string serializes");
    match outcome {
        Err(message) => {
            format!("{{\"time\":{time},\"error\":{}}}\n", serde_json::to_string(message).expect("a string serializes"))
        }
        Ok(rec) => {
            let size: usize = rec.lists.iter().flat_map(|l| &l.items).map(|i| i.get().len() + 1).sum();
            let mut out = String::with_capacity(size + 1024);
            out.push_str(&format!("{{\"time\":{time},\"version\":{}", rec.version.get()));
            for list in &rec.lists {
                render_list(&mut out, list);
            }
            for (c, o) in &rec.optional {
                match o {
                    OptionalList::Read(list) => render_list(&mut out, list),
                    OptionalList::NotGranted => out.push_str(&format!(",\"{}\":{{\"not_granted\":true}}", c.name())),
                    OptionalList::Failed(m) => out.push_str(&format!(
                        ",\"{}\":{{\"error\":{}}}",
                        c.name(),
                        serde_json::to_string(m).expect("a string serializes")
                    )),
                }
            }
            if rec.certificates != Certificates::default() {
                out.push_str(",\"certificates\":");
                out.push_str(&serde_json::to_string(&rec.certificates).expect("timestamps serialize"));
            }
            out.push_str("}\n");
            out
        }
    }
}

/// Where a file is written before it is renamed into place.
fn partial(path: &Path) -> std::path::PathBuf {
    path.with_file_name(format!(
        ".{}.partial",
        path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    ))
}

/// Writes `bytes` to `path`; the file appears whole or not at all (written aside, synced, then
/// renamed).
pub fn write_bytes(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = partial(path);
    let mut file = std::fs::File::create(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// Writes a recorded cycle to `path`, gzip-compressed when it ends in `.gz`. The file appears
/// whole or not at all (written aside, then renamed).
pub fn write(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = partial(path);
    {
        let file = std::fs::File::create(&tmp)?;
        if path.extension().is_some_and(|e| e == "gz") {
            let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
            gz.write_all(text.as_bytes())?;
            gz.finish()?.sync_all()?;
        } else {
            let mut file = file;
            file.write_all(text.as_bytes())?;
            file.sync_all()?;
        }
    }
    std::fs::rename(&tmp, path)
}

#[derive(Deserialize)]
#[serde(bound = "T: FromApi")]
struct Items<T> {
    #[serde(default, deserialize_with = "nullable")]
    items: Vec<Api<T>>,
}

impl<T> Items<T> {
    fn into_vec(self) -> Vec<T> {
        unwrap_api(self.items)
    }
}

macro_rules! file {
    ($($(#[$m:meta])* $field:ident: $ty:ty),* $(,)?) => {
        /// A recorded cycle as written: the core Lists, the Metrics API's group, then each kind
        /// of the registry (`collect::kinds`) under its collection's name.
        #[derive(Deserialize)]
        struct File {
            time: Timestamp,
            error: Option<String>,
            version: Option<version::Version>,
            nodes: Option<Items<Arc<Node>>>,
            pods: Option<Items<Arc<Pod>>>,
            deployments: Option<Items<workloads::DeploymentRecord>>,
            statefulsets: Option<Items<workloads::StatefulSetRecord>>,
            daemonsets: Option<Items<workloads::DaemonSetRecord>>,
            persistentvolumeclaims: Option<Items<Arc<Pvc>>>,
            events: Option<Items<Arc<Event>>>,
            apiservices: Option<OptionalItems<ApiService>>,
            node_metrics: Option<OptionalItems<Usage>>,
            pod_metrics: Option<OptionalItems<Usage>>,
            $( $(#[$m])* $field: Option<OptionalItems<$ty>>, )*
            #[serde(default)]
            certificates: Certificates,
        }

        impl File {
            /// What the optional reads found, as recorded.
            fn extras(&mut self) -> Extras {
                Extras {
                    apiservices: optional(self.apiservices.take()),
                    node_metrics: optional(self.node_metrics.take()),
                    pod_metrics: optional(self.pod_metrics.take()),
                    $( $(#[$m])* $field: optional(self.$field.take()), )*
                    // Read in a few namespaces, not recorded: a replay does not judge backends.
                    services: Optional::Skipped,
                    endpointslices: Optional::Skipped,
                    // A dependent read of Normal events, not recorded: a replay says no more
                    // of a Pending claim than its Warning events.
                    claim_events: Vec::new(),
                    watch_not_granted: Vec::new(),
                    namespaced: None,
                }
            }
        }
    };
}
crate::collect::kinds::registry!(file);

/// A recorded optional read.
#[derive(Deserialize)]
#[serde(untagged, bound = "T: FromApi")]
enum OptionalItems<T> {
    Failed { error: String },
    NotGranted { not_granted: bool },
    Read(Items<T>),
}

fn optional<T>(recorded: Option<OptionalItems<T>>) -> Optional<Vec<T>> {
    match recorded {
        None => Optional::Skipped,
        Some(OptionalItems::Failed { error }) => Optional::Failed(error),
        Some(OptionalItems::NotGranted { not_granted: true }) => Optional::NotGranted,
        Some(OptionalItems::NotGranted { not_granted: false }) => Optional::Skipped,
        Some(OptionalItems::Read(items)) => Optional::Read(items.into_vec()),
    }
}

/// A recorded cycle, read back.
#[derive(Debug)]
pub struct Recorded {
    pub time: Timestamp,
    pub outcome: Result<Lists, String>,
}

/// A recorded cycle cannot be read; `name` is the file's (as given to [`parse`]).
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{}: {source}", .path.display())]
    Unreadable { path: PathBuf, source: std::io::Error },
    #[error("{name}: not valid gzip: {source}")]
    NotGzip { name: String, source: std::io::Error },
    #[error("{name}: not a recorded cycle: {source}")]
    NotRecorded { name: String, source: serde_json::Error },
    /// A successful cycle without one of its lists.
    #[error("{name}: not a recorded cycle: \"{field}\" is missing")]
    Missing { name: String, field: &'static str },
}

/// Reads a recorded cycle; the error names what is wrong with the file.
pub fn read(path: &Path) -> Result<Recorded, RecordError> {
    let bytes = std::fs::read(path).map_err(|source| RecordError::Unreadable { path: path.to_path_buf(), source })?;
    parse(&bytes, &path.display().to_string())
}

/// Reads a recorded cycle from its bytes (gzip-compressed or not); errors start with `name`.
pub fn parse(bytes: &[u8], name: &str) -> Result<Recorded, RecordError> {
    let inflated;
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes)
            .read_to_end(&mut out)
            .map_err(|source| RecordError::NotGzip { name: name.to_string(), source })?;
        inflated = out;
        inflated.as_slice()
    } else {
        bytes
    };
    let mut f: File =
        serde_json::from_slice(bytes).map_err(|source| RecordError::NotRecorded { name: name.to_string(), source })?;
    if let Some(error) = f.error.take() {
        return Ok(Recorded { time: f.time, outcome: Err(error) });
    }
    let extras = f.extras();
    let missing = |field: &'static str| RecordError::Missing { name: name.to_string(), field };
    let lists = Lists {
        version: f.version.ok_or_else(|| missing("version"))?,
        nodes: f.nodes.ok_or_else(|| missing("nodes"))?.into_vec(),
        pods: f.pods.ok_or_else(|| missing("pods"))?.into_vec(),
        deployments: f.deployments.ok_or_else(|| missing("deployments"))?.into_vec(),
        statefulsets: f.statefulsets.ok_or_else(|| missing("statefulsets"))?.into_vec(),
        daemonsets: f.daemonsets.ok_or_else(|| missing("daemonsets"))?.into_vec(),
        pvcs: f.persistentvolumeclaims.ok_or_else(|| missing("persistentvolumeclaims"))?.into_vec(),
        events: f.events.ok_or_else(|| missing("events"))?.into_vec(),
        extras,
        certificates: f.certificates,
        // Recorded as the server gave them: checked, and put in order where they are not.
        in_order: Default::default(),
        pods_put_at: None,
        as_left: Default::default(),
    };
    Ok(Recorded { time: f.time, outcome: Ok(lists) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::Collection;
    use crate::collect::kinds::{Kind, hpa::Hpa};
    use serde_json::value::RawValue;

    #[test]
    fn a_failed_cycle_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json.gz");
        let t: Timestamp = "2026-11-30T03:00:00Z".parse().unwrap();
        write(&path, &render(t, Err("No answer from https://x:6443 while reading pods within 10 s"))).unwrap();
        let r = read(&path).unwrap();
        assert_eq!(r.time, t);
        assert_eq!(r.outcome.unwrap_err(), "No answer from https://x:6443 while reading pods within 10 s");
        assert!(!dir.path().join(".c.json.gz.partial").exists());
    }

    #[test]
    fn a_successful_cycle_round_trips() {
        let raw = |s: &str| RawValue::from_string(s.to_string()).unwrap();
        let rec = Recording {
            version: raw(r#"{"gitVersion":"v1.33.4+k3s1"}"#),
            lists: Collection::ALL[1..]
                .iter()
                .map(|&c| RawList {
                    collection: c,
                    resource_version: "42".into(),
                    items: if c == Collection::NODES { vec![raw(r#"{"metadata":{"name":"n1"}}"#)] } else { vec![] },
                })
                .collect(),
            optional: vec![
                (Collection::APISERVICES, OptionalList::NotGranted),
                (Hpa::COLLECTION, OptionalList::Failed("The API server answered 500".into())),
            ],
            certificates: Certificates { serving: Some("2026-12-05T03:00:00Z".parse().unwrap()), client: None },
        };
        let t: Timestamp = "2026-11-30T03:00:00Z".parse().unwrap();
        let text = render(t, Ok(&rec));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["nodes"]["kind"], "NodeList");
        assert_eq!(v["deployments"]["apiVersion"], "apps/v1");
        assert_eq!(v["nodes"]["metadata"]["resourceVersion"], "42");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        write(&path, &text).unwrap();
        let lists = read(&path).unwrap().outcome.unwrap();
        assert_eq!(lists.version.git_version, "v1.33.4+k3s1");
        assert_eq!(lists.nodes[0].name, "n1");
        assert_eq!(lists.extras.apiservices, Optional::NotGranted);
        assert_eq!(lists.extras.hpas, Optional::Failed("The API server answered 500".into()));
        assert_eq!(lists.extras.node_metrics, Optional::Skipped, "not recorded: not asked for");
        assert_eq!(lists.certificates.serving, Some("2026-12-05T03:00:00Z".parse().unwrap()));
    }

    #[test]
    fn broken_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.json");
        std::fs::write(&path, r#"{"time":"2026-11-30T03:00:00Z","version":{}}"#).unwrap();
        assert!(read(&path).unwrap_err().to_string().ends_with("not a recorded cycle: \"nodes\" is missing"));
        std::fs::write(&path, "nope").unwrap();
        assert!(read(&path).unwrap_err().to_string().contains("not a recorded cycle"));
    }
}
