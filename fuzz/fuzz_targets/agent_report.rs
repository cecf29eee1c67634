//! An agent's report as the server takes it from the network: parsed (gzip or not, bounded),
//! its difference applied to a snapshot held, then derived and exposed as any cycle.
#![no_main]

use dumbmonit::wire::{Held, Report, Reported};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(report) = Report::parse(data, 16 * 1024 * 1024) else { return };
    let Reported::Snapshot(delta) = report.outcome else { return };
    let Ok(snapshot) = Held::default().apply(report.time, *delta) else { return };
    let health = dumbmonit::health::assess(snapshot);
    let _ = health.summary();
    let _ = dumbmonit::metrics::exposition::encode(&dumbmonit::metrics::cluster_families(&health));
});
