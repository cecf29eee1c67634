//! The benchmarks' own reading and checking of figures (benches/common), which `cargo test` does
//! not otherwise run: the benchmarks have no test harness.

#[path = "../benches/common/mod.rs"]
mod common;
