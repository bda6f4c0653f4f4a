#!/usr/bin/env python3
"""The layering check (issue 26): the include-and-call graph of src/lib, src/cli and
include/lancever against the table of allowed edges in CONTRIBUTING.md.

    check_layers.py SOURCE_DIR [--cmake CMakeLists.txt] [--pending FILE]...

The tables are read from CONTRIBUTING.md ("## Layering"), so the doc and the check cannot drift:
  - the layer table (a Markdown table whose header is `| layer | files | may include |`): each
    row a layer, the path prefixes of its files, and the layers it may include directly.  A
    file may use its own layer and every layer reachable from it through the table; anything
    else is an upward (or sideways) edge.  The table itself must have no circle.
  - the core order (a table whose header is `| core rank | files |`): rank 1 at the top; a
    source of src/lib/core/ may use (call) sources of its own rank and below, never above.
    Every core source is in it.  (Core headers hold types and declarations for several
    ranks; the order is that of the calls.)

An edge A -> B is an `#include "..."` (or `<lancever/...>`) of B by A, or a source A naming a
function that B alone defines (a call or its address; names lv_*, lv__*, lvcli_*; what a header
names it declares, and is no edge).  From src/cli, a
name the public headers declare is an edge to include/lancever (the API), not to its
implementation.  The check fails on any edge the table does not allow, any file of the
graph that no row places, any circle of files and any circle of layers (folders).
--pending FILE: the upward edges out of FILE are listed but do not fail (a merge that
removes them is under way); FILE having no upward edge left fails, so the exemption cannot
outlive that merge.  With --cmake, also: LV_HOOK_SOURCES in CMakeLists.txt is exactly the files of src/lib that
mention LV_TEST_HOOKS (the files compiled twice, with and without the test hooks).
Python 3 standard library only.
"""
import os
import re
import sys

ROOTS = ("src/lib", "src/cli", "include/lancever")
INCLUDE_DIRS = ("src/lib", "include")
NAME = re.compile(r"\b(lv_[A-Za-z0-9_]+|lvcli_[A-Za-z0-9_]+)\b")
DEF = re.compile(r"^(?!static\b|extern\b|typedef\b|#|\s)[A-Za-z_][A-Za-z0-9_ \t\*]*?\b"
                 r"(lv_[A-Za-z0-9_]+|lvcli_[A-Za-z0-9_]+)\s*\([^;{}]*\)\s*\{", re.M)


def strip(text):
    """C text without comments, string and char literals (their bytes become spaces)."""
    out, i, n = [], 0, len(text)
    pat = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    for m in pat.finditer(text):
        out.append(text[i:m.start()])
        out.append(re.sub(r"[^\n]", " ", m.group(0)) if m.group(0).startswith("/*")
                   else (" " if m.group(0).startswith("//") else '""'))
        i = m.end()
    out.append(text[i:])
    return "".join(out)


def md_table(doc, header):
    """Rows (lists of cells) of the Markdown table whose first row is `header`."""
    lines = doc.splitlines()
    for k, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if [c.lower() for c in cells] == header:
            rows = []
            for row in lines[k + 2:]:
                if not row.strip().startswith("|"):
                    break
                rows.append([c.strip().strip("`") for c in row.strip().strip("|").split("|")])
            return rows
    return None


def words(cell):
    return [w.strip("` ") for w in re.split(r"[,\s]+", cell) if w.strip("` ") not in ("", "-", "—")]


def sources(src):
    files = []
    for root in ROOTS:
        for d, _, names in os.walk(os.path.join(src, root)):
            files += [os.path.relpath(os.path.join(d, f), src) for f in names
                      if f.endswith((".c", ".h"))]
    return sorted(files)


def resolve(src, frm, inc, angle):
    cands = [] if angle else [os.path.join(os.path.dirname(frm), inc)]
    if angle and not inc.startswith("lancever/"):
        return None
    cands += [os.path.join(d, inc) for d in INCLUDE_DIRS]
    for c in cands:
        c = os.path.normpath(c)
        if os.path.isfile(os.path.join(src, c)):
            return c
    return None


def graph(src, files):
    """{file: {target: why}} from includes and from names another file alone defines."""
    text = {f: strip(open(os.path.join(src, f), encoding="utf-8", errors="replace").read())
            for f in files}
    raw = {f: open(os.path.join(src, f), encoding="utf-8", errors="replace").read() for f in files}
    edges = {f: {} for f in files}
    for f in files:
        for m in re.finditer(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', raw[f], re.M):
            t = resolve(src, f, m.group(2), m.group(1) == "<")
            if t and t != f and t in edges:
                edges[f].setdefault(t, "#include " + m.group(2))
    defined = {}
    for f in files:
        if f.endswith(".c"):
            for m in DEF.finditer(text[f]):
                defined.setdefault(m.group(1), set()).add(f)
    public = set()
    for f in files:
        if f.startswith("include/"):
            public |= set(re.findall(r"LV_EXTERN[^;(]*?\b(lv_[A-Za-z0-9_]+)\s*\(", text[f]))
    api = "include/lancever/lancever.h"
    for f in files:
        if not f.endswith(".c"):  # a header declares: what it names is no use
            continue
        for name in set(NAME.findall(text[f])):
            where = defined.get(name, ())
            if len(where) != 1:
                continue
            (t,) = where
            if t == f:
                continue
            if f.startswith("src/cli/") and name in public:
                t = api if api in edges else t
            edges[f].setdefault(t, "uses " + name)
    return edges


def layer_of(path, rows):
    best = None
    for name, prefixes, _ in rows:
        for p in prefixes:
            if (path == p or path.startswith(p.rstrip("/") + "/")) and \
                    (best is None or len(p) > len(best[1])):
                best = (name, p)
    return best[0] if best else None


def sccs(nodes, edges):
    """Tarjan's strongly connected components with more than one node."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main(argv):
    src = argv[1] if len(argv) > 1 else "."
    doc = open(os.path.join(src, "CONTRIBUTING.md"), encoding="utf-8").read()
    problems = []
    table = md_table(doc, ["layer", "files", "may include"])
    if not table:
        print("CONTRIBUTING.md has no table '| layer | files | may include |'")
        return 1
    rows = [(r[0], words(r[1]), words(r[2])) for r in table]
    names = {r[0] for r in rows}
    may = {r[0]: set(r[2]) for r in rows}
    for n, deps in may.items():
        for d in deps - names:
            problems.append(f"layer table: {n} may include '{d}', which is no layer")
    for c in sccs(names, may):
        problems.append("layer table: the allowed edges run in a circle: " + " -> ".join(c))
    reach = {}
    for n in names:  # every layer reachable from n through the table (n included)
        seen, todo = {n}, [n]
        while todo:
            for d in may.get(todo.pop(), ()):
                if d in names and d not in seen:
                    seen.add(d)
                    todo.append(d)
        reach[n] = seen

    files = sources(src)
    edges = graph(src, files)
    nedges = sum(len(v) for v in edges.values())
    pending = {argv[i + 1] for i, a in enumerate(argv) if a == "--pending"}
    upward, folder, waiting = [], {}, []
    for f in files:
        lf = layer_of(f, rows)
        if lf is None:
            problems.append(f"{f}: no row of the layer table places it")
            continue
        for t, why in sorted(edges[f].items()):
            lt = layer_of(t, rows)
            if lt is None:
                continue
            if lt not in reach[lf] and f in pending:
                waiting.append(f"{f} -> {t} ({why}): {lf} may not use {lt}")
                continue
            if lt != lf:
                folder.setdefault(lf, set()).add(lt)
            if lt not in reach[lf]:
                upward.append(f"{f} -> {t} ({why}): {lf} may not use {lt}")
    problems += ["upward edge: " + u for u in upward]
    for f in sorted(pending):
        if not any(w.startswith(f + " ") for w in waiting):
            problems.append(f"--pending {f}: it has no upward edge left; delete the exemption")
    for c in sccs(files, edges):
        problems.append("circle of files: " + " -> ".join(c))
    for c in sccs(names, folder):
        problems.append("circle of layers (folders): " + " -> ".join(c))

    core = md_table(doc, ["core rank", "files"])
    ncore = 0
    if core is None:
        problems.append("CONTRIBUTING.md has no table '| core rank | files |'")
    else:
        rank = {}
        for r in core:
            for w in words(r[1]):
                rank["src/lib/core/" + w] = int(r[0])
        for f in files:
            if not (f.startswith("src/lib/core/") and f.endswith(".c")):
                continue
            rk = rank.get(f)
            if rk is None:
                problems.append(f"{f}: not in the core order table")
                continue
            for t, why in sorted(edges[f].items()):
                if not (t.startswith("src/lib/core/") and t.endswith(".c")):
                    continue
                ncore += 1
                tr = rank.get(t)
                if tr is not None and tr < rk:
                    problems.append(f"upward call in core: {f} (rank {rk}) -> {t} (rank {tr}, {why})")
        for f in sorted(set(rank) - set(files)):
            problems.append(f"core order table: {f} does not exist")

    if "--cmake" in argv:
        cm = argv[argv.index("--cmake") + 1]
        body = open(cm, encoding="utf-8").read()
        m = re.search(r"set\(LV_HOOK_SOURCES(.*?)\)", body, re.S)
        listed = set(re.findall(r"src/lib/[\w/]+\.c", m.group(1))) if m else set()
        hooked = {f for f in files if f.startswith("src/lib/") and f.endswith(".c")
                  and "LV_TEST_HOOKS" in open(os.path.join(src, f), encoding="utf-8").read()}
        for f in sorted(hooked - listed):
            problems.append(f"{f} mentions LV_TEST_HOOKS but is not in LV_HOOK_SOURCES ({cm})")
        for f in sorted(listed - hooked):
            problems.append(f"{f} is in LV_HOOK_SOURCES but does not mention LV_TEST_HOOKS")

    for w in waiting:
        print("PENDING (exempted by --pending, until the merge that removes it):", w)
    for p in problems:
        print("FAIL:", p)
    print(f"check_layers: {len(files)} files, {nedges} edges ({ncore} calls inside core), "
          f"{len(rows)} layers; {len(upward)} upward edge(s), {len(waiting)} pending, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
