"""python -m lancever versions|history DATASET [--json]: a small entry point (the C
`lancever` command is the full CLI).

A closed pipe (``python -m lancever history d | head``) ends it quietly with status 141
(128 + SIGPIPE, what git and the C CLI report), as the CPython documentation recommends
for BrokenPipeError: stdout is pointed at /dev/null so that the interpreter's own flush at
exit cannot fail again.  Ctrl-C ends it with status 130 and no traceback."""

import json
import os
import sys

from . import Dataset, Error


def main(argv: list) -> int:
    if len(argv) < 2 or argv[0] not in ("versions", "history") or \
            any(a not in ("--json",) for a in argv[2:]):
        print("usage: python -m lancever versions|history DATASET [--json]", file=sys.stderr)
        return 2
    try:
        ds = Dataset(argv[1])
        # the live versions' rich record (versions() itself has pylance's three keys only)
        rows = ds._list("lv_versions", "versions") if argv[0] == "versions" else ds.history()
    except Error as e:
        print(f"lancever: {e}", file=sys.stderr)
        return 1
    if "--json" in argv:
        print(json.dumps(rows, default=str, indent=None))
        return 0
    print(f"{'VERSION':>8}  {'TIMESTAMP (UTC)':<26}  {'OPERATION':<16}  {'ROWS':>9}  CLEANED_UP")
    for r in rows:
        ts = r["timestamp"].isoformat(timespec="milliseconds")
        print(f"{r['version']:>8}  {ts:<26}  {r['operation_type'] or '-':<16}  "
              f"{r['total_rows']:>9}  {'yes' if r['is_cleaned_up'] else ''}")
    return 0


def _run(argv: list) -> int:
    try:
        rc = main(argv)
        sys.stdout.flush()  # a closed pipe shows here at the latest, inside the try
        return rc
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(_run(sys.argv[1:]))
