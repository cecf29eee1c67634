#!/usr/bin/env bash
# Writes the chart's files that come from the binary (deploy/helm/dumbmonit/files/): the RBAC
# rules of `dumbmonit rbac` with each combination of --optional and --watch, and of --namespace and --optional, and the
# Prometheus rules of `dumbmonit rules`. Run it after a change to either; tests/helm.rs fails
# until the files are what the binary prints.
#
#   scripts/chart-files.sh [DUMBMONIT]     (default: target/debug/dumbmonit, built when absent)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/target/debug/dumbmonit}"
[ -x "$bin" ] || (cd "$root" && cargo build --quiet --bin dumbmonit)
files="$root/deploy/helm/dumbmonit/files"
mkdir -p "$files/rbac"

# The rules of the first (Cluster)Role that `dumbmonit rbac FLAGS` prints.
rules() {
  "$bin" rbac "$@" | awk '/^kind: (Cluster)?Role$/ {role = 1} role && /^rules:/ {on = 1; next} on && /^---/ {exit} on {sub(/^  /, ""); print}'
}
for optional in "" "-optional"; do
  for watch in "" "-watch"; do
    flags=()
    [ -n "$optional" ] && flags+=(--optional)
    [ -n "$watch" ] && flags+=(--watch)
    rules "${flags[@]}" >"$files/rbac/cluster$optional$watch.yaml"
  done
  # Namespaced access is never watched (`rbac --namespace` refuses --watch).
  rules --namespace dumbmonit ${optional:+--optional} >"$files/rbac/namespace$optional.yaml"
done
"$bin" rules >"$files/prometheus-rules.yaml"
