#!/usr/bin/env bash
# Builds lancever in Release (build-bench/) and benchmarks `lancever versions`
# against LanceDB 0.31.0 listVersions() on the same datasets in one run.
#   bench/run.sh [--keep] [--runs N] [--only 200|2000] [--out DIR]
# --keep keeps the LanceDB-built datasets in bench/out/ (reused by the next run);
# without it they are deleted afterwards.  Building them takes ~15-20 s.
#
#   bench/run.sh --checkpoint [--quick|--full] [--runs N] [--no-lancedb] [...]
# runs the version-checkpoint benchmark instead (bench/bench_checkpoint.mjs: the
# proposal's versions x fragments table with generated datasets cached in
# bench/out/checkpoint/, 10,000 versions from a checkpoint, as-of lookups); it also
# builds bench/gen_dataset and bench/time_versions.
#
#   bench/run.sh --s3 [--delay MS] [--runs N] [--versions 32,128] [--fragments F]
#   bench/run.sh --cleanup [--runs N] [--shapes 512x10000,64x10000,512x1000] [--strays K] [...]
# runs the cleanup benchmark (bench/bench_cleanup.mjs: `lancever cleanup` vs LanceDB's
# optimize() cleanup on twin copies of generated datasets cached in bench/out/cleanup/).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${LV_BENCH_BUILD_DIR:-$src/build-bench}
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
mode=versions
if [ "${1:-}" = "--checkpoint" ]; then mode=checkpoint; shift; fi
if [ "${1:-}" = "--cleanup" ]; then mode=cleanup; shift; fi
if [ "${1:-}" = "--s3" ]; then mode=s3; shift; fi
"$src/tests/interop/setup.sh"
cmake -S "$src" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DLV_BUILD_TESTS=OFF \
  >/dev/null
if [ "$mode" = checkpoint ]; then
  cmake --build "$build" -j "${LV_JOBS:-$(nproc)}" --target lancever_cli gen_dataset time_versions
  LANCEVER_BIN="$build/lancever" LANCEVER_BUILD_DIR="$build" \
    exec node "$src/bench/bench_checkpoint.mjs" "$@"
fi
if [ "$mode" = cleanup ]; then
  cmake --build "$build" -j "${LV_JOBS:-$(nproc)}" --target lancever_cli gen_dataset
  LANCEVER_BIN="$build/lancever" LANCEVER_BUILD_DIR="$build" \
    exec node "$src/bench/bench_cleanup.mjs" "$@"
fi
if [ "$mode" = s3 ]; then
  cmake --build "$build" -j "${LV_JOBS:-$(nproc)}" --target lancever_cli gen_dataset s3_upload
  LANCEVER_BIN="$build/lancever" LANCEVER_BUILD_DIR="$build" \
    exec node "$src/bench/bench_s3.mjs" "$@"
fi
cmake --build "$build" -j "${LV_JOBS:-$(nproc)}" --target lancever_cli
LANCEVER_BIN="$build/lancever" exec node "$src/bench/bench_versions.mjs" "$@"
