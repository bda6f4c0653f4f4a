#!/usr/bin/env python3
"""Two benchmark runs side by side, cell by cell: is any of lancever's figures slower?

    python3 bench/compare.py BEFORE/RESULTS.md AFTER/RESULTS.md [--label-before X] [--label-after Y]

Both files are bench/report.mjs output of `bash bench/run.sh --all --quick` (or --all) run back
to back on one machine.  Every number of every table is a cell, keyed by (section, row, column,
position within the cell: "64.2 / 11.2" is two).  Cells are classed by their column header:
  peer      LanceDB's, the proposal's or the limit baseline's figures: the same program in both
            runs, so their after/before ratios are the run-to-run noise;
  ratio     derived figures (a value ending in "x", "speedup", "vs ..."): left out;
  lancever  everything else.
Time-like cells (ms, ns, RSS, bytes) are lower-is-better; MB/s higher-is-better, compared inverted.
The report gives each class's median and range of after/before, and lists every lancever cell
slower than the noise bound: the larger of 1.25 and the peers' 95th-percentile ratio.
Exit status 0 always: it is a measurement, judged by a person (no timed assertion in a test).
"""
import re
import statistics
import sys

NUM = re.compile(r'-?\d[\d,]*(?:\.\d+)?')


def tables(path):
    """(section, header cells, rows of cells) for every Markdown table in the file."""
    section, header, rows, out = '', None, [], []
    for line in open(path, encoding='utf-8'):
        line = line.rstrip('\n')
        if line.startswith('#'):
            section = line.lstrip('#').strip()
        if line.startswith('|'):
            cells = [c.strip() for c in line.strip('|').split('|')]
            if header is None:
                header = cells
            elif not all(set(c) <= set('-:') for c in cells):
                rows.append(cells)
        elif header is not None:
            out.append((section, header, rows))
            header, rows = None, []
    if header is not None:
        out.append((section, header, rows))
    return out


def kind(head, text, k):
    h = head.lower()
    if text.endswith('x') or 'speedup' in h or h.startswith('vs ') or 'same files' in h:
        return 'ratio'
    parts = [p.strip() for p in h.split('/')]
    if len(parts) > 1 and k < len(parts):
        h = parts[k]
    if 'lancedb' in h and 'lancever' not in h or 'proposal' in h or 'limit' in h or 'pylance' in h:
        return 'peer'
    return 'lancever'


# columns that name a row rather than measure it (part of the row's key, never compared)
DIMS = ('versions', 'fragments', 'format', 'rows', 'case', 'manifest kb', 'file bytes', 'bytes/row',
        'dataset mb', 'versions × fragments', 'manifests mib (largest kb)', 'bytes per version')


def cells(path):
    out = {}
    for section, header, rows in tables(path):
        if section in ('Machine',) or section.startswith('Acceptance'):
            continue
        dims = [j for j, h in enumerate(header) if j == 0 or h.lower() in DIMS]
        for row in rows:
            name = ' / '.join(row[j] for j in dims if j < len(row))
            for j, text in enumerate(row):
                if j in dims or j >= len(header):
                    continue
                for k, m in enumerate(NUM.finditer(text)):
                    v = float(m.group(0).replace(',', ''))
                    key = (section, name, header[j], k)
                    out[key] = (v, kind(header[j], text, k), 'mb/s' in header[j].lower())
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    if len(args) != 2:
        sys.exit(__doc__)
    a, b = cells(args[0]), cells(args[1])
    ratios = {'peer': [], 'lancever': []}
    rows = []
    for key in a:
        if key not in b:
            continue
        (va, cls, higher_better), (vb, _, _) = a[key], b[key]
        if cls == 'ratio' or va <= 0 or vb <= 0:
            continue
        r = (va / vb) if higher_better else (vb / va)
        ratios[cls].append(r)
        rows.append((key, va, vb, r, cls))
    peer = sorted(ratios['peer'])
    bound = max(1.25, peer[int(0.95 * (len(peer) - 1))] if peer else 1.25)
    print(f'cells compared: {len(rows)} ({len(ratios["lancever"])} lancever, {len(peer)} peer)')
    for cls, rs in ratios.items():
        if rs:
            print(f'{cls}: after/before median {statistics.median(rs):.2f}, range {min(rs):.2f}-{max(rs):.2f}')
    print(f'noise bound: {bound:.2f} (max of 1.25 and the peers\' 95th percentile)')
    slow = [r for r in rows if r[4] == 'lancever' and r[3] > bound]
    print(f'lancever cells slower than the bound: {len(slow)}')
    print('\n| section | row | column | before | after | after/before |\n|---|---|---|---:|---:|---:|')
    for (sec, row, col, k), va, vb, r, cls in sorted(rows, key=lambda x: -x[3]):
        if cls != 'lancever':
            continue
        mark = ' **slower**' if r > bound else ''
        print(f'| {sec} | {row} | {col}{" #" + str(k + 1) if k else ""} | {va:g} | {vb:g} | {r:.2f}{mark} |')


if __name__ == '__main__':
    main()
