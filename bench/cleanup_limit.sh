#!/bin/bash
# Cleanup against the deletion limit (issue 30 §3), on one prepared dataset.
#
#   bash bench/cleanup_limit.sh PREP [BUILD] [ROUNDS]
#
# PREP: a dataset with a checkpoint (the issue's state: bench_scale's 1M-version dataset
# (`node bench/bench_scale.mjs --sizes 1000000 --keep`), checkpointed, +100 versions from
# bench/gen_dataset --start, checkpointed again).  BUILD: a Release build dir (default
# build-release).  Each round, on fresh hard-linked copies (cp -al) after a sync and a 12 s
# pause: `lancever cleanup --older-than 0s --retain-versions 16` with its phases (wall, user
# and system CPU, cores, from --progress json and /proc), then bench/unlink_limit removing the
# same files (the copy's files before less those after) from a second copy.  Prints one line per run; the copies are removed.
set -eu
prep=$1 build=${2:-build-release} rounds=${3:-3}
work=$(mktemp -d "$(dirname "$prep")/cleanup-limit.XXXXXX")
trap 'rm -rf "$work"' EXIT
phases=$(dirname "$0")/cleanup_phases.py
files() { (cd "$1" && find . -type f | sed 's|^\./||' | LC_ALL=C sort); }
for r in $(seq "$rounds"); do
  rm -rf "$work/W"; cp -al "$prep" "$work/W"; files "$work/W" > "$work/before"; sync; sleep 12
  python3 "$phases" "$build/lancever" cleanup "$work/W" --older-than 0s \
    --retain-versions 16 --json --progress json
  files "$work/W" | LC_ALL=C comm -23 "$work/before" - > "$work/removed.txt"
  rm -rf "$work/W"; cp -al "$prep" "$work/W"; sync; sleep 12
  echo "limit $("$build/unlink_limit" "$work/W" "$work/removed.txt")"
done
