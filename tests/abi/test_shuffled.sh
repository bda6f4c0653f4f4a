#!/usr/bin/env bash
# The Python package copies no struct layout (issue 26): its unit suite passes against a
# library built with the fields of every struct the package uses in another order.
#
#   1. copy the source tree's CMakeLists.txt, cmake/, src/, include/, python/ to a scratch dir;
#   2. in that copy's public headers, reverse the field order of each struct the package
#      reads or writes (_lib.STRUCTS; `int version` stays first, as the struct rule wants);
#   3. build liblancever.so from it (same CMake options as this build, tests off);
#   4. check the shuffle moved fields (the two libraries' lv_struct_field offsets differ for
#      most of those structs, so a package that used fixed offsets would fail);
#   5. run python/tests (the unit/python selection) with LANCEVER_LIBRARY = that library.
# Fails, never skips, when a step cannot run.
#   test_shuffled.sh SOURCE_DIR BUILD_DIR PYTHON [CMAKE_ARGS...]
set -euo pipefail
src=${1:?usage: test_shuffled.sh SOURCE_DIR BUILD_DIR PYTHON [CMAKE_ARGS...]}
build=${2:?}
py=${3:?}
shift 3
work=$build/abi-shuffled
rm -rf "$work"
mkdir -p "$work/src/include"
cp -R "$src/CMakeLists.txt" "$src/cmake" "$src/src" "$src/python" "$work/src/"
cp -R "$src/include/lancever" "$work/src/include/"
structs=$(PYTHONPATH="$src/python" "$py" -c \
	'from lancever import _lib; print(" ".join(sorted(_lib.STRUCTS.values())))')

"$py" - "$work/src/include" $structs <<'EOF'
import pathlib, re, sys

inc, wanted = pathlib.Path(sys.argv[1]), set(sys.argv[2:])
done = set()
for h in sorted(inc.rglob("*.h")):
    text = h.read_text(encoding="utf-8")
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)  # a throwaway copy: comments go
    text = re.sub(r"//[^\n]*", "", text)

    def reorder(m):
        name = m.group(2)
        if name not in wanted:
            return m.group(0)
        decls = [d.strip() for d in m.group(3).split(";") if d.strip()]
        first = [d for d in decls if re.fullmatch(r"int\s+version", d)]
        rest = [d for d in decls if d not in first][::-1]
        assert rest, name
        done.add(name)  # a struct with one field besides version has nothing to reverse
        return "%s\n%s} %s;" % (m.group(1), "".join("\t%s;\n" % d for d in first + rest), name)

    text = re.sub(r"(typedef struct (lv_\w+) \{)(.*?)\}\s*(\2);", reorder, text, flags=re.S)
    h.write_text(text, encoding="utf-8")
missing = wanted - done
assert not missing, "structs not found in the headers: %s" % sorted(missing)
print("reversed the fields of %d structs: %s" % (len(done), " ".join(sorted(done))))
EOF

cmake -S "$work/src" -B "$work/build" -G Ninja -DLV_BUILD_TESTS=OFF -DLV_BUILD_BENCH=OFF \
	-DLV_INSTALL_PYTHON=OFF "$@" >"$work/configure.log" 2>&1 ||
	{ cat "$work/configure.log"; exit 1; }
# The Python accelerator too when this build has it (it reads the entries at the offsets the
# shuffled library reports, so the suite checks it against the reversed layout as well).
targets=(liblancever.so)
[ "${LANCEVER_EXPECT_ACCEL:-0}" = 1 ] && targets+=(lancever_pyrows)
cmake --build "$work/build" --target "${targets[@]}" >"$work/build.log" 2>&1 ||
	{ tail -50 "$work/build.log"; exit 1; }
lib=$work/build/liblancever.so

"$py" - "$build/liblancever.so" "$lib" $structs <<'EOF'
import ctypes, sys

def layout(path, name):
    dll = ctypes.CDLL(path)
    n = ctypes.c_size_t()
    assert dll.lv_struct_info(name.encode(), None, None, ctypes.byref(n)) == 0, (path, name)
    out = {}
    for i in range(n.value):
        f, off = ctypes.c_char_p(), ctypes.c_size_t()
        dll.lv_struct_field(name.encode(), ctypes.c_size_t(i), ctypes.byref(f), None,
                            ctypes.byref(off), None)
        out[f.value] = off.value
    return out

moved = [n for n in sys.argv[3:] if layout(sys.argv[1], n) != layout(sys.argv[2], n)]
print("structs whose offsets moved: %d of %d" % (len(moved), len(sys.argv[3:])))
assert len(moved) >= len(sys.argv[3:]) - 2, "the shuffle moved too little: %s" % moved
EOF

cd "$src/python"
LANCEVER_LIBRARY=$lib PYTHONPATH="$src/python" "$py" -m pytest -p no:cacheprovider -q -rf \
	tests -m "not interop and not hooks" --ignore=tests/test_props.py
