#!/usr/bin/env bash
# Supply-chain check: `cargo deny check` (advisories, bans, licenses, sources), offline, with the
# RustSec advisory database copied from ../shared/advisory-db. cargo-deny reads a database as a
# git repository under its db-path, in a folder named after the database's URL, and takes the
# date of its HEAD: the copy is made a repository with one commit at the snapshot's date.
# cargo-deny comes from crates.io when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
shared="../shared/advisory-db"
[ -d "$shared" ] || { echo "scripts/deny.sh: no advisory database at $shared" >&2; exit 1; }
command -v cargo-deny >/dev/null 2>&1 || cargo install --locked cargo-deny

export DUMBMONIT_ADVISORY_DBS="$PWD/target/advisory-dbs"
db="$DUMBMONIT_ADVISORY_DBS/advisory-db-3157b0e258782691"
commit="$(grep -o '[0-9a-f]\{40\}' "$shared/SNAPSHOT.md" | head -1)"
date="$(grep -o '([0-9]\{4\}-[0-9]\{2\}-[0-9]\{2\})' "$shared/SNAPSHOT.md" | head -1 | tr -d '()')"
if [ "$(cat "$db/.snapshot" 2>/dev/null)" != "$commit" ]; then
  rm -rf "$db"
  mkdir -p "$db"
  cp -R "$shared/crates" "$shared/rust" "$shared/README.md" "$shared/LICENSE.txt" "$db/"
  (
    cd "$db"
    git init -q
    git add -A
    GIT_AUTHOR_DATE="${date}T00:00:00Z" GIT_COMMITTER_DATE="${date}T00:00:00Z" \
      git -c user.name=dumbmonit -c user.email=ci@dumbmonit.invalid commit -q -m "RustSec advisory database $commit"
  )
  echo "$commit" >"$db/.snapshot"
fi
echo "cargo deny: RustSec advisory database of $date (commit $commit)"
cargo fetch --locked >/dev/null
cargo deny --offline check --hide-inclusion-graph
