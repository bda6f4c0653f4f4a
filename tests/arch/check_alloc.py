#!/usr/bin/env python3
"""The allocator rule (CONTRIBUTING.md "Errors and memory"), checked by a machine (CTest
arch/alloc): no source of src/lib calls malloc, calloc, realloc, strdup, strndup,
aligned_alloc, (v)asprintf, open_memstream or free directly; they go through util's
allocator (lv__malloc ... lv__free), so the allocation-failure hook reaches every
allocation and every large block goes back to the block cache (util/blocks.c).  Only
util/alloc.c and util/blocks.c, which implement the allocator, call the C library's.

    python3 tests/arch/check_alloc.py SRC_DIR [FILE...]

FILE arguments (for the can-fail test) are checked instead of src/lib.  Comments and
string literals are ignored.  Exit 1 and one line per call when any is found."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_layers import strip  # noqa: E402  (comments and literals blanked, lines kept)

CALL = re.compile(r"(?<![\w.>])(malloc|calloc|realloc|strn?dup|aligned_alloc|v?asprintf|"
                  r"open_memstream|free)\s*\(")
ALLOWED = {"src/lib/util/alloc.c", "src/lib/util/blocks.c"}

def check(path, rel):
    text = strip(path.read_text(encoding="utf-8"))
    bad = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in CALL.finditer(line):
            bad.append(f"{rel}:{n}: calls {m.group(1)}() directly: use util's allocator (lv__{m.group(1)})")
    return bad


def main(argv):
    src = Path(argv[1])
    if len(argv) > 2:
        files = [(Path(f), f) for f in argv[2:]]
    else:
        files = [(p, p.relative_to(src).as_posix()) for p in sorted((src / "src/lib").rglob("*.[ch]"))]
        files = [(p, r) for p, r in files if r not in ALLOWED]
    bad = [line for p, r in files for line in check(p, r)]
    for line in bad:
        print(line)
    print(f"arch/alloc: {len(files)} files, {len(bad)} direct calls")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
