#!/usr/bin/env bash
# The benchmark harness: builds lancever in Release (build-bench/) and runs the benchmarks against
# LanceDB 0.31.0 (Lance 8.0.0) in the same run.  One command reproduces every figure we publish:
#
#   bash bench/run.sh --all [--quick]
#       every benchmark below, then bench/report.mjs: bench/RESULTS.md (tables, the issue's
#       acceptance ratios, the machine) and bench/charts/*.png (gnuplot).  The full run takes
#       about an hour on 2 cores and needs ~25 GB of free disk for its datasets (cached in
#       bench/out/datasets/); --quick is a ~15-25-minute subset (no 100K-fragment column,
#       100,000 instead of 1,000,000 live versions, a smaller S3 grid).  Every repeatable
#       lancever figure is also taken under the issue 30 GLIBC_TUNABLES (bench/lib.mjs) and
#       RESULTS.md reports default / tuned for each.  LV_BENCH_NOTE: a paragraph for the
#       machine section (e.g. that the machine was shared).
#
# Single benchmarks (each writes bench/out/<name>/results.json; run --report afterwards):
#   bash bench/run.sh --grid [--backend local|s3] [--versions 2,4,..] [--fragments 1000,..] [--big 10000x1000]
#                            [--runs N] [--budget-ms B] [--delay MS] [--no-lancedb] [--lance12]  (bench_grid.mjs)
#   bash bench/run.sh --history [--sizes 10000,1000000] [--keep]                        (bench_history.mjs)
#   bash bench/run.sh --cleanup [--shapes 512x10000,..] [--runs N] [--strays K]         (bench_cleanup.mjs)
#   bash bench/run.sh --versions [--only 200|2000] [--keep]                             (bench_versions.mjs)
#   bash bench/run.sh --lancefile [ROWS] [RUNS]                                         (lancefile_bench)
#   bash bench/run.sh --python [--sizes 10000] [--written 1000] [--runs N]              (bench_python.mjs:
#                            lancever's Python against pylance 14 in the Lance 14 peer's venv)
#   bash bench/run.sh --cloud [--versions 64] [--fragments 1000] [--delay 20] [--runs 7]  (bench_cloud.mjs:
#                            versions() from a checkpoint on Azurite vs s3rver, same dataset and latency)
#   bash bench/run.sh --scale [--sizes 1000000,10000000] [--live 1000000] [--no-limit] (bench_scale.mjs)
#   bash bench/run.sh --watch [--rates 10,100] [--tables 1,100] [--stores local,s3] [--seconds 5]
#                            [--idle 1000] [--idle-s3 20] [--idle-seconds 30]    (bench_watch.mjs: capture
#                            lag of `lancever watch` beside LanceDB 0.31, idle CPU/RSS, S3 requests)
#   bash bench/run.sh --report                                                          (report.mjs)
# Run it on a quiet machine: the figures are wall-clock times.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${LV_BENCH_BUILD_DIR:-$src/build-bench}
out=$src/bench/out
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
mode=${1:---versions}
[ $# -gt 0 ] && shift

# Debian packages (the build's, node, gnuplot for the charts) from tests/debian-packages.txt.
bash "$src/tests/install-deps.sh" --bench
"$src/tests/interop/setup.sh"
cmake -S "$src" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DLV_BUILD_TESTS=OFF >/dev/null
# Everything (tests are off): the CLI, the bench tools and liblancever.so (bench_python.mjs); the
# shared library's target name, lancever, is also the CLI's file name, which Ninja would build instead.
cmake --build "$build" -j "${LV_JOBS:-$(nproc)}" >/dev/null
export LANCEVER_BIN="$build/lancever" LANCEVER_BUILD_DIR="$build"

node_bench() { node "$src/bench/$1" "${@:2}"; }
# The Lance file bench twice: the default environment, then the issue 30 GLIBC_TUNABLES (report.mjs
# puts the ratios beside every other default-vs-tuned pair).
lancefile() {
  mkdir -p "$out/lancefile"
  "$build/lancefile_bench" "$@" | tee "$out/lancefile/results.md"
  GLIBC_TUNABLES=glibc.malloc.trim_threshold=1000000000:glibc.malloc.mmap_threshold=1000000000 \
    "$build/lancefile_bench" "$@" | tee "$out/lancefile/results-tuned.md"
}
python_venv() {  # the Lance 14 peer's venv (pylance 14, pyarrow, polars): bench_python.mjs's Python
  bash "$src/tests/python-venv.sh" "$build/venv-lance14" "$src/tests/interop/peers/lance14/requirements.txt" \
    lance,pyarrow,pytest,polars,duckdb,pandas
}

case "$mode" in
  --grid) node_bench bench_grid.mjs "$@" ;;
  --history) node_bench bench_history.mjs "$@" ;;
  --cleanup) node_bench bench_cleanup.mjs "$@" ;;
  --versions) node_bench bench_versions.mjs "$@" ;;
  --lancefile) lancefile "$@" ;;
  --python) python_venv; node_bench bench_python.mjs "$@" ;;
  --cloud) node_bench bench_cloud.mjs "$@" ;;
  --scale) node_bench bench_scale.mjs "$@" ;;
  --watch) node_bench bench_watch.mjs "$@" ;;
  --report) node_bench report.mjs "$@" ;;
  --all)
    quick=0
    [ "${1:-}" = --quick ] && quick=1
    start=$(date +%s)
    rm -rf "$out/grid-local" "$out/grid-s3" "$out/history" "$out/cleanup/results.json" "$out/versions" "$out/lancefile" \
      "$out/scale" "$out/cloud" "$out/python"
    if [ $quick = 1 ]; then
      node_bench bench_versions.mjs --only 200
      node_bench bench_grid.mjs --backend local --fragments 1000,10000 --big 10000x1000 --lance12
      node_bench bench_grid.mjs --backend s3 --versions 2,8,32,128 --fragments 1000
      node_bench bench_history.mjs --sizes 10000,100000
      node_bench bench_cleanup.mjs --shapes 64x10000,512x1000
      node_bench bench_scale.mjs --sizes 100000,1000000 --live 100000
      node_bench bench_cloud.mjs --runs 5
      python_venv
      node_bench bench_python.mjs --sizes 10000 --written 1000 --runs 3
      lancefile 100000 5
      node_bench report.mjs --command "bash bench/run.sh --all --quick"
    else
      node_bench bench_versions.mjs
      node_bench bench_grid.mjs --backend local --big 10000x1000,10000x10000 --lance12
      node_bench bench_grid.mjs --backend s3
      node_bench bench_history.mjs --sizes 10000,1000000
      node_bench bench_cleanup.mjs
      node_bench bench_scale.mjs
      node_bench bench_cloud.mjs
      python_venv
      node_bench bench_python.mjs --sizes 10000 --written 1000
      lancefile 100000 7
      node_bench report.mjs --command "bash bench/run.sh --all"
    fi
    echo "bench: --all finished in $(( $(date +%s) - start )) s" >&2
    ;;
  *) echo "usage: bash bench/run.sh --all [--quick] | --grid | --history | --cleanup | --versions | --lancefile | --python | --cloud | --scale | --watch | --report [ARGS]" >&2
     exit 2 ;;
esac
