#!/usr/bin/env bash
# Installs the pinned test peers from the npm registry, each exactly as locked:
#   peers/lance8/   @lancedb/lancedb 0.31.0 (Lance 8.0.0)  + apache-arrow 18.1.0
#   peers/lance12/  @lancedb/lancedb 0.39.0 (Lance 12.0.0) + apache-arrow 18.1.0
#   .  (this dir)   s3rver 3.7.1 for the S3 tests
# One directory per peer: each LanceDB needs its own apache-arrow instance (its
# instanceof checks), and the two cannot share one node_modules.
#
# Why `npm install` from the lockfile and not `npm ci`: @lancedb/lancedb 0.39.0 lists
# optional per-platform packages (darwin-arm64, win32-*, linux-arm64-*) that the registry
# does not serve for that version, so no lockfile can contain them and `npm ci` refuses
# every lockfile ("Missing: @lancedb/lancedb-darwin-arm64@ from lock file").  `npm install`
# takes every version and integrity hash from the committed lockfile and skips the
# unpublished optional packages; the lockfiles were generated on linux-x64 (the CI
# platform), so they hold the linux-x64-gnu binary package with its hash.  To make the
# install as strict as `npm ci`, the lockfile must come out with the same packages at the
# same versions and integrity hashes (a change means the registry resolved something other
# than what is locked; lockcmp.mjs; fields npm versions write differently, such as npm 10's
# "libc" that Debian 12's npm 9 drops, do not count) and the installed versions are checked.  LV_PEERS (default "lance8 lance12") limits which are installed.
set -euo pipefail
cd "$(dirname "$0")"
peers=${LV_PEERS:-lance8 lance12}
want_version() { case $1 in lance8) echo 0.31.0 ;; lance12) echo 0.39.0 ;; *) return 1 ;; esac; }
has() { [ -f "$1/node_modules/$2/package.json" ] && grep -q "\"version\": \"$3\"" "$1/node_modules/$2/package.json"; }
locked_install() {
  local dir=$1 before
  before=$(mktemp)
  cp "$dir/package-lock.json" "$before"
  (cd "$dir" && npm install --no-audit --no-fund --no-update-notifier --loglevel=error)
  local same=0
  node "$PWD/lockcmp.mjs" "$before" "$dir/package-lock.json" || same=$?
  cp "$before" "$dir/package-lock.json" # the committed lockfile stays as committed
  rm -f "$before"
  if [ $same != 0 ]; then
    echo "setup.sh: npm changed $dir/package-lock.json: the registry no longer serves what is locked" >&2
    exit 1
  fi
}
if ! has . s3rver 3.7.1; then locked_install .; fi
for p in $peers; do
  v=$(want_version "$p") || { echo "setup.sh: unknown peer '$p'" >&2; exit 1; }
  d=peers/$p
  if ! { has "$d" @lancedb/lancedb "$v" && has "$d" @lancedb/lancedb-linux-x64-gnu "$v" &&
         has "$d" apache-arrow 18.1.0; }; then
    locked_install "$d"
  fi
  for pkg in "@lancedb/lancedb $v" "@lancedb/lancedb-linux-x64-gnu $v" "apache-arrow 18.1.0"; do
    # shellcheck disable=SC2086
    has "$d" $pkg || { echo "setup.sh: $d: $pkg not installed" >&2; exit 1; }
  done
  echo "setup.sh: peer $p = @lancedb/lancedb $v"
done
# Azurite 3.35.0 (Azure Storage emulator, for the az:// tests): its own package in azurite/, pinned there.
(cd azurite && { [ -f node_modules/azurite/package.json ] && grep -q '"version": "3.35.0"' node_modules/azurite/package.json || npm ci --no-audit --no-fund; })
