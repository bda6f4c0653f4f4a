#!/usr/bin/env bash
# versions() on a dataset never cleaned up whose older rows were sealed into archive segments
# (issue 30 §2): 10,000 live versions, a head of the newest 1,000 and 10 segments of 1,000.
# versions reads those segments (no manifest), and answers exactly what the manifests say:
# the same versions, times, counters, transactions and paths as a copy with no checkpoint
# (which reads every manifest).  Before, it read the 9,000 manifests the head lacks.
#   test_versions_archive.sh BUILD_DIR
set -euo pipefail
build=$1
lv=$build/lancever
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/gen_dataset" "$tmp/d.lance" --versions 10000 --fragments 1 2>/dev/null >/dev/null
cp -r "$tmp/d.lance" "$tmp/plain.lance"
"$lv" -q checkpoint "$tmp/d.lance" --max-entries 1000 >/dev/null
ls "$tmp/d.lance/_checkpoints/archive" | grep -q '^0*1-0*1000\.lance$' || { echo "FAIL: no segment"; exit 1; }
"$lv" versions "$tmp/d.lance" --json --stats >"$tmp/new.json" 2>"$tmp/stats"
cat "$tmp/stats"
grep -q 'manifests read 0, segments read 10,' "$tmp/stats" || { echo "FAIL: versions read manifests the archive holds"; exit 1; }
"$lv" versions "$tmp/plain.lance" --json >"$tmp/truth.json"
python3 - "$tmp/new.json" "$tmp/truth.json" <<'PY'
import json, sys
new, truth = (json.load(open(p)) for p in sys.argv[1:3])
keys = ("version", "timestamp_millis", "total_fragments", "total_data_files", "total_files_size",
        "total_deletion_files", "total_data_file_rows", "total_deletion_file_rows", "total_rows",
        "is_tagged", "is_cleaned_up", "transaction_uuid", "read_version", "operation_type",
        "transaction_properties", "manifest_path")
assert len(new) == len(truth) == 10000, (len(new), len(truth))
for a, b in zip(new, truth):
    for k in keys:
        assert a[k] == b[k], (a["version"], k, a[k], b[k])
print("ok: 10,000 live versions from 10 segments and the head, equal to the manifests'")
PY
