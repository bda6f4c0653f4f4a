#!/usr/bin/env bash
# Builds lancever in Release (build-bench/) and benchmarks `lancever versions`
# against LanceDB 0.31.0 listVersions() on the same datasets in one run.
#   bench/run.sh [--keep] [--runs N] [--only 200|2000] [--out DIR]
# --keep keeps the LanceDB-built datasets in bench/out/ (reused by the next run);
# without it they are deleted afterwards.  Building them takes ~15-20 s.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${LV_BENCH_BUILD_DIR:-$src/build-bench}
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
"$src/tests/interop/setup.sh"
cmake -S "$src" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DLV_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j "${LV_JOBS:-$(nproc)}" --target lancever_cli
LANCEVER_BIN="$build/lancever" exec node "$src/bench/bench_versions.mjs" "$@"
