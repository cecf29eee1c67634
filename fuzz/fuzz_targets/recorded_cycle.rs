//! The recorded-cycle reader, then the whole derivation and exposition of what it read.
#![no_main]

use dumbmonit::collect::CycleOptions;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(recorded) = dumbmonit::record::parse(data, "fuzz") else { return };
    let Ok(lists) = recorded.outcome else { return };
    let snapshot = lists.into_snapshot(recorded.time, &CycleOptions::default());
    let health = dumbmonit::health::assess(snapshot);
    let _ = health.summary();
    let _ = dumbmonit::metrics::exposition::encode(&dumbmonit::metrics::cluster_families(&health));
});
