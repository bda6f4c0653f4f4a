"""Writes a dataset of N versions with pylance 14 (the Lance 14 peer's venv): one
create, then N - 1 single-row appends, each a new version and a new fragment.

    python bench/gen_pylance.py DIR N

Run by bench/bench_python.mjs (cached in bench/out/datasets/ next to gen_dataset's).
"""

import sys

import lance
import pyarrow as pa


def main() -> None:
    path, n = sys.argv[1], int(sys.argv[2])
    lance.write_dataset(pa.table({"id": [0]}), path, mode="create")
    for i in range(1, n):
        lance.write_dataset(pa.table({"id": [i]}), path, mode="append")
    print(len(lance.dataset(path).versions()))


if __name__ == "__main__":
    main()
