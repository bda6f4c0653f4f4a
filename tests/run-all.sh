#!/usr/bin/env bash
# Installs what the tests need (Debian packages when run as root, the pinned
# LanceDB peers from npm) and runs the whole test suite:
#   1. build/        RelWithDebInfo: every CTest test (unit, fuzz-replay, interop)
#      build-release/ Release: compiled, then the performance gate (bench/gate.sh)
#   2. build-asan/   ASan+UBSan (-DLV_SANITIZE=ON): every test except interop, then the
#                    Python interop tests (the package over the ASan library, both peers)
#   3. build-fuzz/   clang-14 libFuzzer targets, each run briefly on its corpus
# Exits non-zero on the first failure.  Environment knobs:
#   LV_JOBS (build parallelism, default nproc), LV_FUZZ_RUNS (inputs per target,
#   default 100000; 0 skips stage 3), LV_FUZZ_SEED (default 1), LV_SKIP_ASAN=1
#   (local use only), LV_VALGRIND=1 (adds tests/valgrind.sh on build/: every
#   unit test, corpus replay and CLI command under memcheck; about 6.5 min on
#   2 cores, over the CI budget, so it is opt-in).  The fuzz stage uses a fixed seed and a fixed number of
#   runs, so it is reproducible: what passes here passes in CI.  Open-ended
#   campaigns are run by hand (-max_total_time).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
jobs=${LV_JOBS:-$(nproc)}
fuzz_runs=${LV_FUZZ_RUNS:-100000}
fuzz_seed=${LV_FUZZ_SEED:-1}
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
stage() { printf '\n==== %s ====\n' "$*"; }
start=$(date +%s)

stage "Debian packages (tests/install-deps.sh --test, from tests/debian-packages.txt)"
bash "$src/tests/install-deps.sh" --test

stage "npm peers: LanceDB 0.31.0 + 0.39.0, s3rver (tests/interop/setup.sh)"
"$src/tests/interop/setup.sh"

stage "build/ (RelWithDebInfo)"
cmake -S "$src" -B "$src/build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$src/build" -j "$jobs"
ctest --test-dir "$src/build" --output-on-failure -j2

stage "build-release/ (Release -O3: compile only, so -Werror holds for the bench/ build too)"
cmake -S "$src" -B "$src/build-release" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DLV_BUILD_TESTS=OFF
cmake --build "$src/build-release" -j "$jobs"

stage "performance gate (bench/gate.sh build-release: callgrind instruction counts vs bench/gate/baseline.tsv)"
bash "$src/bench/gate.sh" "$src/build-release"

if [ "${LV_VALGRIND:-0}" = 1 ]; then
  stage "valgrind (tests/valgrind.sh on build/)"
  "$src/tests/valgrind.sh" "$src/build"
fi

if [ "${LV_SKIP_ASAN:-0}" != 1 ]; then
  stage "build-asan/ (ASan+UBSan, no interop)"
  cmake -S "$src" -B "$src/build-asan" "${gen[@]}" -DCMAKE_BUILD_TYPE=Debug -DLV_SANITIZE=ON
  cmake --build "$src/build-asan" -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$src/build-asan" --output-on-failure -j2 -LE interop
  # The Python package over the ASan library on LanceDB-written data (both peers): how the
  # as-of use-after-free of issue 15's session was found; the Node interop suites stay out
  # (minutes under ASan, and the C paths they drive are the unit tests' too).
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$src/build-asan" --output-on-failure -R '^interop/.*/python$'
fi

shopt -s nullglob
fuzzers=("$src"/fuzz/*_fuzz.c)
if [ "$fuzz_runs" != 0 ] && [ ${#fuzzers[@]} -gt 0 ]; then
  stage "build-fuzz/ (libFuzzer, ${fuzz_runs} runs per target, seed ${fuzz_seed})"
  clang=$(command -v clang-14 || command -v clang)
  # The whole library gets coverage instrumentation, so the fuzzer is not blind.
  CC=$clang cmake -S "$src" -B "$src/build-fuzz" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DLV_BUILD_FUZZERS=ON -DLV_BUILD_TESTS=OFF -DLV_SANITIZE=ON -DLV_WERROR=OFF \
    -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link
  cmake --build "$src/build-fuzz" -j "$jobs"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  for f in "${fuzzers[@]}"; do
    name=$(basename "$f" .c)
    corpus=${name%_fuzz}
    mkdir -p "$work/$corpus"
    seeds=()
    [ -d "$src/fuzz/corpora/$corpus" ] && seeds=("$src/fuzz/corpora/$corpus")
    echo "-- $name (${fuzz_runs} runs)"
    # New inputs go to the scratch corpus (first dir); the checked-in seeds are read only.
    (cd "$work" && ASAN_OPTIONS=detect_leaks=1 "$src/build-fuzz/fuzz/$name" \
      -runs="$fuzz_runs" -seed="$fuzz_seed" -print_final_stats=1 -artifact_prefix="$src/fuzz/" "$work/$corpus" "${seeds[@]}")
  done
fi

stage "all tests passed in $(( $(date +%s) - start )) s"
