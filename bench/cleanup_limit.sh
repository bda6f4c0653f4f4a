#!/bin/bash
# Cleanup against the deletion limit (issue 30 §3), on one prepared dataset.
#
#   bash bench/cleanup_limit.sh PREP [BUILD] [ROUNDS]
#
# PREP: a dataset with a checkpoint (the issue's state: bench_scale's 1M-version dataset
# (`node bench/bench_scale.mjs --sizes 1000000 --keep`, or `gen_dataset PREP --versions 1000000
# --fragments 1`), checkpointed, +100 versions from bench/gen_dataset --start, checkpointed
# again).  With `gen_dataset --dated` (both calls), each transaction file is as old as its
# version, so the cleanup removes them too (a table written at that pace); without it they are
# newer than every version and the age cutoff keeps them all.  BUILD: a Release build dir
# (default build-release).  Each round, on fresh hard-linked copies (cp -al), each warmed by a
# dry run twice (the manifests, directory entries and inodes in the kernel's caches, for both
# sides alike), after a sync and a 5 s pause: `lancever cleanup --older-than 0s --retain-versions 16`
# with its phases (wall, user and system CPU, cores, from --progress json and /proc), then
# bench/unlink_limit removing the same files (the copy's files before less those after) from a
# second copy.  Prints one line per run; the copies are removed.
set -eu
prep=$1 build=${2:-build-release} rounds=${3:-3}
work=$(mktemp -d "$(dirname "$prep")/cleanup-limit.XXXXXX")
trap 'rm -rf "$work"' EXIT
phases=$(dirname "$0")/cleanup_phases.py
files() { (cd "$1" && find . -type f | sed 's|^\./||' | LC_ALL=C sort); }
# A fresh copy, warmed by two dry runs of the same cleanup (each reads every manifest and looks
# up every file it judges), synced.  Two: on this VM the first pass over a copy's names builds
# the kernel's entries for them (~11 s for 1M manifests), the second still reads 1.4x slower
# than the third and later ones, which agree.
fresh() {
  rm -rf "$work/W"; cp -al "$prep" "$work/W"
  for _ in 1 2; do
    "$build/lancever" cleanup "$work/W" --older-than 0s --retain-versions 16 --dry-run --json >/dev/null
  done
  sync; sleep 5
}
for r in $(seq "$rounds"); do
  fresh; files "$work/W" > "$work/before"
  python3 "$phases" "$build/lancever" cleanup "$work/W" --older-than 0s \
    --retain-versions 16 --json --progress json
  files "$work/W" | LC_ALL=C comm -23 "$work/before" - > "$work/removed.txt"
  fresh
  echo "limit $("$build/unlink_limit" "$work/W" "$work/removed.txt")"
done
