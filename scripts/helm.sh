#!/usr/bin/env bash
# The test suite's Helm: v4, built from its Go module (testenv/helm/) with the machine's Go, as
# test infrastructure (never part of the product). Go's module and build caches keep it.
#
#   scripts/helm.sh build       builds target/testenv/helm
#   scripts/helm.sh ARGS...     builds it if needed, then runs helm ARGS
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${DUMBMONIT_HELM:-$root/target/testenv/helm}"
release=v4.3.2

build() {
  command -v go >/dev/null 2>&1 || { echo "helm.sh: Go is needed to build Helm (testenv/helm/)" >&2; exit 1; }
  mkdir -p "$(dirname "$bin")"
  (
    flock 9
    cd "$root/testenv/helm" &&
      go build -mod=readonly -o "$bin" -ldflags "-X helm.sh/helm/v4/internal/version.version=$release" helm.sh/helm/v4/cmd/helm
  ) 9>"$bin.lock"
}

if [ "${1:-}" = build ]; then
  build
else
  [ -x "$bin" ] || build
  exec "$bin" "$@"
fi
