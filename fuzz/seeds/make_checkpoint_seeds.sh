#!/usr/bin/env bash
# Rebuilds the real seeds of fuzz/corpora/checkpoint/ (the files not named by a SHA-1):
# checkpoints that `lancever checkpoint` / `lancever cleanup` write on copies of the LanceDB
# fixture tests/fixtures/lance8/t.lance and of demo/demo.lance, each prefixed with the control
# byte checkpoint_fuzz.c reads (bits 0-5: versions whose manifests are removed; bit 6: name
# the file for the version it covers; bit 7: deep mode).
#   bash fuzz/seeds/make_checkpoint_seeds.sh [path/to/lancever] [OUT_DIR]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
L=${1:-$src/build/lancever}
out=${2:-$src/fuzz/corpora/checkpoint}
F=$src/tests/fixtures/lance8/t.lance
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$out"
cp -r "$F" "$t/full" && "$L" checkpoint "$t/full" >/dev/null
cp -r "$F" "$t/max3" && "$L" checkpoint "$t/max3" --max-entries 3 >/dev/null
cp -r "$F" "$t/clean" && "$L" cleanup "$t/clean" --retain-versions 2 --older-than 0s \
  --no-error-if-tagged-old-versions >/dev/null                         # removes v1, v2, v4
cp -r "$F" "$t/upto4"
rm -f "$t"/upto4/_versions/18446744073709551609.manifest "$t"/upto4/_versions/18446744073709551610.manifest
"$L" checkpoint "$t/upto4" >/dev/null
cp -r "$F" "$t/upto2" && rm "$t"/upto2/_versions/184467440737095516{09,10,11,12,13}.manifest
"$L" checkpoint "$t/upto2" >/dev/null
cp -r "$src/demo/demo.lance" "$t/demo" && "$L" checkpoint "$t/demo" >/dev/null
mk() { printf "\\x$1" >"$out/$2"; cat "$3" >>"$out/$2"; }
cp6() { echo "$t/$1/_checkpoints/0000000000000000000$2.lance"; }
mk 00 full_all_live "$(cp6 full 6)"
mk 0b cleanup_retain2_v1v2v4_gone "$(cp6 clean 6)"
mk 00 max_entries3 "$(cp6 max3 6)"
mk 40 upto4_named4_tail56 "$(cp6 upto4 4)"
mk 41 upto2_named1_v1gone "$(cp6 upto2 1)"
demo=$(ls "$t"/demo/_checkpoints/*.lance | tail -1)
mk 00 other_dataset_demo "$demo"
mk 40 other_dataset_named12 "$demo"
mk c0 deep_other_dataset "$demo"
mk 80 deep_full "$(cp6 full 6)"
mk cb deep_cleanup_named "$(cp6 clean 6)"
mk 3f all_manifests_gone "$(cp6 clean 6)"
head -c 2500 "$(cp6 full 6)" >"$t/half" && mk 00 truncated_half "$t/half"
ls -l "$out" | head -20
