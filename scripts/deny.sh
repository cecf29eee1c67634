#!/usr/bin/env bash
# Supply-chain check: `cargo deny check` (advisories, bans, licenses, sources). The RustSec
# advisory database is the snapshot at ../shared/advisory-db when there is one beside the
# repository (then offline): cargo-deny reads a database as a git repository under its db-path,
# in a folder named after the database's URL, and takes the date of its HEAD, so the copy is
# made a repository with one commit at the snapshot's date. Without it, cargo-deny fetches the
# database from github.com/rustsec/advisory-db, as it does by default. It says which it used.
# cargo-deny comes from crates.io when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
shared="${DUMBMONIT_ADVISORY_DB:-../shared/advisory-db}"
command -v cargo-deny >/dev/null 2>&1 || cargo install --locked cargo-deny

export DUMBMONIT_ADVISORY_DBS="$PWD/target/advisory-dbs"
db="$DUMBMONIT_ADVISORY_DBS/advisory-db-3157b0e258782691"
offline=()
if [ -f "$shared/SNAPSHOT.md" ]; then
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
  echo "cargo deny: the RustSec advisory database snapshot at $shared, of $date (commit $commit)"
  offline=(--offline)
else
  # A snapshot copied before is not reused: it would silently age.
  [ -f "$db/.snapshot" ] && rm -rf "$db"
  echo "cargo deny: no advisory database snapshot at $shared: fetching RustSec's from github.com/rustsec/advisory-db"
  if ! cargo deny fetch db; then
    echo "scripts/deny.sh: no RustSec advisory database: there is no snapshot at $shared and github.com/rustsec/advisory-db could not be fetched. Either run where github.com is reachable, or put a copy of that repository at $shared (or name one with DUMBMONIT_ADVISORY_DB=DIR) with a SNAPSHOT.md that names its commit and date, then run the tests again." >&2
    exit 1
  fi
  offline=(--offline)
fi
cargo fetch --locked >/dev/null
cargo deny "${offline[@]}" check --hide-inclusion-graph
