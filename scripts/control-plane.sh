#!/usr/bin/env bash
# The real Kubernetes control plane of the test suite (testenv/): etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler and fake kubelets, built from the Kubernetes
# project's Go modules at one release, on loopback, over TLS.
#
#   scripts/control-plane.sh build
#   scripts/control-plane.sh up DIR [--controllers LIST] [--no-kubelets] [--nodes N] [--while-pid PID]
#       starts it in the background, waits until it serves, and writes DIR/kubeconfig (admin),
#       DIR/address (https://k8s.test:PORT), DIR/ca.crt and DIR/admin.token; prints the address
#   scripts/control-plane.sh down DIR              stops it and everything it started
#   scripts/control-plane.sh apiserver DIR stop|start   an outage of the API server, and its return
#   scripts/control-plane.sh compact DIR           compacts etcd (older continue tokens get 410)
#   scripts/control-plane.sh load DIR FILE         creates a List's objects, then their statuses
#
# --controllers is kube-controller-manager's (default: all; "none" runs none); --no-kubelets
# leaves the fake kubelets and the scheduler out, for tests that write every status themselves.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${DUMBMONIT_TESTENV_BIN:-$root/target/testenv/dumbmonit-testenv}"
release=v1.37.2

build() {
  command -v go >/dev/null 2>&1 || { echo "control-plane.sh: Go is needed to build testenv/" >&2; exit 1; }
  mkdir -p "$(dirname "$bin")"
  local v=k8s.io/component-base/version c=k8s.io/client-go/pkg/version
  local flags="-X $v.gitVersion=$release -X $v.gitMajor=1 -X $v.gitMinor=37 -X $v.gitTreeState=clean"
  flags="$flags -X $c.gitVersion=$release -X $c.gitMajor=1 -X $c.gitMinor=37 -X $c.gitTreeState=clean"
  # One build at a time (tests start planes in parallel); Go leaves an up-to-date binary alone.
  (
    flock 9
    cd "$root/testenv" && go build -mod=readonly -o "$bin" -ldflags "$flags" .
  ) 9>"$bin.lock"
}

# Tests reach the API server as k8s.test, a name its certificate carries.
resolve_test_host() {
  # unlisted.k8s.test reaches the same server by a name its certificate lacks.
  if [ "$(getent hosts unlisted.k8s.test | awk '{print $1; exit}')" != 127.0.0.1 ] && [ -w /etc/hosts ]; then
    printf '127.0.0.1 unlisted.k8s.test\n' >>/etc/hosts
  fi
  if [ "$(getent hosts k8s.test | awk '{print $1; exit}')" != 127.0.0.1 ] && [ -w /etc/hosts ]; then
    printf '127.0.0.1 k8s.test\n' >>/etc/hosts
  fi
}

up() {
  local dir="$1"
  shift
  build
  resolve_test_host
  mkdir -p "$dir"
  rm -f "$dir/ready" "$dir/failed"
  nohup "$bin" up "$dir" "$@" >"$dir/testenv.log" 2>&1 </dev/null &
  local pid=$!
  for _ in $(seq 1 1800); do
    [ -f "$dir/ready" ] && { cat "$dir/address"; return 0; }
    if [ -f "$dir/failed" ] || ! kill -0 "$pid" 2>/dev/null; then
      break
    fi
    sleep 0.1
  done
  echo "control-plane.sh: the control plane did not start: $(cat "$dir/failed" 2>/dev/null || echo 'no answer in 180 s')" >&2
  tail -n 20 "$dir/testenv.log" "$dir"/logs/*.log >&2 2>/dev/null || true
  kill "$pid" 2>/dev/null || true
  exit 1
}

down() {
  local dir="$1" pid
  pid="$(cat "$dir/pid" 2>/dev/null || true)"
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

apiserver() {
  local dir="$1" want="$2" pid signal state
  pid="$(cat "$dir/pid")"
  case "$want" in
    stop) signal=USR1 state=stopped ;;
    start) signal=USR2 state=serving ;;
    *) echo "control-plane.sh: apiserver DIR stop|start" >&2; exit 2 ;;
  esac
  kill "-$signal" "$pid"
  for _ in $(seq 1 1200); do
    [ "$(cat "$dir/apiserver.state" 2>/dev/null)" = "$state" ] && return 0
    sleep 0.1
  done
  echo "control-plane.sh: the API server is not $state: $(cat "$dir/apiserver.state" 2>/dev/null)" >&2
  exit 1
}

case "${1:-}" in
  build) build ;;
  up) shift; [ $# -ge 1 ] || { echo "control-plane.sh: up DIR [...]" >&2; exit 2; }; up "$@" ;;
  down) [ $# -eq 2 ] || { echo "control-plane.sh: down DIR" >&2; exit 2; }; down "$2" ;;
  apiserver) [ $# -eq 3 ] || { echo "control-plane.sh: apiserver DIR stop|start" >&2; exit 2; }; apiserver "$2" "$3" ;;
  compact) [ $# -eq 2 ] || exit 2; "$bin" compact "$2" ;;
  load) [ $# -eq 3 ] || exit 2; "$bin" load "$2" "$3" ;;
  *) sed -n '2,17p' "$0" >&2; exit 2 ;;
esac
