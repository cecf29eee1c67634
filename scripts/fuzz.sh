#!/usr/bin/env bash
# Runs each fuzz target for a bounded time (FUZZ_SECONDS, 20 by default) from the committed
# corpus in fuzz/corpus/TARGET. New inputs go to a scratch directory, so the committed corpus
# only changes by hand (`cargo fuzz cmin`). A crash fails the run and leaves its input in
# fuzz/artifacts/TARGET/: add it to a unit test, fix, and commit both.
#
# cargo-fuzz drives libFuzzer through flags that stable rustc accepts only with
# RUSTC_BOOTSTRAP=1; no sanitizer is used (-s none): Rust is memory-safe here, and what is
# looked for is panics, hangs and runaway memory.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds="${FUZZ_SECONDS:-20}"
export RUSTC_BOOTSTRAP=1
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked --version 0.13.2
cargo fuzz build -s none
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
for target in address ca list_page recorded_cycle agent_report; do
  mkdir -p "$scratch/$target"
  echo "fuzz: $target for ${seconds} s"
  status=0
  cargo fuzz run -s none "$target" "$scratch/$target" "corpus/$target" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 >"$scratch/$target.log" 2>&1 \
    || status=$?
  grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^#[0-9]+ +DONE' "$scratch/$target.log" || true
  if [ "$status" != 0 ]; then
    # The input that fails is in fuzz/artifacts/TARGET/.
    grep -E 'panicked|ERROR|SUMMARY|Test unit written' "$scratch/$target.log" >&2 || tail -30 "$scratch/$target.log" >&2
    echo "fuzz: $target failed" >&2
    exit 1
  fi
done
