#!/usr/bin/env bash
# Builds the container image (default tag dumbmonit:dev): one static binary for `agent`,
# `serve`, `check` and the rest, in an image FROM scratch (nothing to download: no base image),
# running as 65532:65532 with no shell, and the system's CA roots for public endpoints.
#
#   scripts/image.sh [TAG]
#
# The binary is linked statically against glibc. Names are resolved by glibc's built-in files
# and dns lookups (/etc/hosts, then /etc/resolv.conf, as kubelet mounts them); the test suite
# checks that in the image.
set -euo pipefail
cd "$(dirname "$0")/.."
tag="${1:-dumbmonit:dev}"
target="$(rustc -vV | sed -n 's/^host: //p')"
command -v docker >/dev/null 2>&1 || { echo "scripts/image.sh: docker is needed (Debian package docker.io)" >&2; exit 1; }

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/image}"
# Stripped: the image carries no debug information (the binary is a quarter of the size).
RUSTFLAGS="-C target-feature=+crt-static" CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_STRIP=symbols \
  cargo build --release --locked --target "$target" --bin dumbmonit

context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
cp "$CARGO_TARGET_DIR/$target/release/dumbmonit" "$context/dumbmonit"
cp /etc/ssl/certs/ca-certificates.crt "$context/ca-certificates.crt"
cat > "$context/Dockerfile" <<'DOCKERFILE'
FROM scratch
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY dumbmonit /dumbmonit
USER 65532:65532
ENTRYPOINT ["/dumbmonit"]
DOCKERFILE
docker build --quiet --tag "$tag" "$context" >/dev/null
echo "built $tag ($(du -h "$context/dumbmonit" | cut -f1) binary)"
