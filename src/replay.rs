//! `dumbmonit replay DIR`: recorded cycles through the built-in rules, in time order, exactly
//! as live; one JSON line per transition.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::collect::CycleOptions;
use crate::health;
use crate::record;
use crate::rules::{RuleState, Severity, Transition, TransitionState};

/// One line of replay output.
#[derive(Serialize)]
pub struct Line<'a> {
    pub time: String,
    pub alertname: &'a str,
    pub severity: Severity,
    pub state: TransitionState,
    pub labels: &'a std::collections::BTreeMap<String, String>,
    pub summary: &'a str,
    /// The why, as the notification carries it.
    pub description: &'a str,
}

pub fn line(t: &Transition) -> String {
    serde_json::to_string(&Line {
        time: t.time.to_string(),
        alertname: &t.alert.alertname,
        severity: t.alert.severity,
        state: t.state,
        labels: &t.alert.labels,
        summary: &t.alert.summary,
        description: &t.alert.description,
    })
    .expect("a line serializes")
}

/// The recorded cycles of a directory cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("{}: {source}", .dir.display())]
    Dir { dir: PathBuf, source: std::io::Error },
    #[error("{}: no recorded cycles (*.json, *.json.gz)", .dir.display())]
    Empty { dir: PathBuf },
    #[error(transparent)]
    Record(#[from] record::RecordError),
}

/// The recorded cycles of `dir` (`*.json`, `*.json.gz`), read and sorted by their `time`.
pub fn read_dir(dir: &Path) -> Result<Vec<record::Recorded>, ReplayError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ReplayError::Dir { dir: dir.to_path_buf(), source })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            !name.starts_with('.') && (name.ends_with(".json") || name.ends_with(".json.gz"))
        })
        .collect();
    paths.sort();
    let mut cycles = paths.iter().map(|p| record::read(p)).collect::<Result<Vec<_>, _>>()?;
    if cycles.is_empty() {
        return Err(ReplayError::Empty { dir: dir.to_path_buf() });
    }
    cycles.sort_by_key(|c| c.time);
    Ok(cycles)
}

/// Evaluates the rules over the cycles; returns every transition in order.
pub fn replay(cycles: Vec<record::Recorded>, cluster: &str, options: &CycleOptions) -> Vec<Transition> {
    let mut state = RuleState::default();
    let mut out = Vec::new();
    for cycle in cycles {
        let transitions = match cycle.outcome {
            Ok(lists) => {
                let snapshot = lists.into_snapshot(cycle.time, options);
                let h = health::assess_with(snapshot, cycle.time, &mut state.memory);
                state.observe(cycle.time, cluster, &h)
            }
            Err(message) => state.observe_failure(cycle.time, cluster, &message),
        };
        out.extend(transitions);
    }
    out
}
