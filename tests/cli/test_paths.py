#!/usr/bin/env python3
"""Every file a doc or a comment names exists, and nothing cites a file outside the repository.

    test_paths.py SOURCE_DIR

Reads the Markdown docs (*.md at the root and under docs/, bench/, python/) whole, and the
comments of the code (C, headers, Python, JavaScript, shell, CMake, Perl) under src/, include/,
tests/, python/, bench/, fuzz/, cmake/, demo/, .ci/.  In that text:

 1. A path with a folder ("core/checkpoint/verify.c", "tests/cli/", "docs/format.md#x") whose
    first folder is a source folder of this repository must name a tracked file or folder:
    it may be written from any folder down ("storage/path.c" for src/lib/storage/path.c).
 2. A bare file name of a source kind ("verify.c", "test_tree.sh", "format.md") must be the
    name of some tracked file.
 3. Nothing points outside the repository: no "../shared", no "shared/reference", no "/work/",
    no upper-case reference file names (FOO-BAR.md) that are not in the tree.

Placeholders in prose ("foo.c", "test_*.c", "cmd_NAME.c") are skipped: a name with a glob, a
brace, a capitalised placeholder word, or in IGNORE below.  The test lists every miss with the
file and line that names it and fails if there is one.
"""
import os
import re
import subprocess
import sys

CODE_KINDS = {'.c': 'c', '.h': 'c', '.mjs': 'c', '.js': 'c', '.py': 'hash', '.sh': 'hash', '.pl': 'hash',
              '.cmake': 'hash', '.toml': 'hash', '.txt': 'hash'}
CODE_DIRS = ('src/', 'include/', 'tests/', 'python/', 'bench/', 'fuzz/', 'cmake/', 'demo/', '.ci/')
DOC_DIRS = ('', 'docs/', 'bench/', 'python/')
# names that prose uses as examples or that other programs own (not files of this tree)
IGNORE = {
    'foo.c', 'foo.h', 'bar.c', 'x.c', 'a.c', 'b.c', 'new.c', 'CMakeLists.txt',
    'setup.py', 'conftest.py', '__init__.py', '__main__.py', 'requirements.txt',
    'lancever.pc', 'ld.so', 'libc.so',
}
PATH_RE = re.compile(r'(?<![\w./:@-])((?:\.{1,2}/)?[A-Za-z0-9_.+-]+(?:/[A-Za-z0-9_.+-]+)+/?)(?![\w(*<{\[])')
# what a build, a benchmark or the wheel makes: named in comments, never tracked
GENERATED = ('bench/out/', 'build', 'lancever/_bin/', 'lancever/lib', 'lancever/version.h')
PATH_EXT = ('.c', '.h', '.py', '.mjs', '.sh', '.md', '.cmake', '.pl', '.toml', '.txt')
NAME_RE = re.compile(r'(?<![\w./*-])([A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*\.(?:c|h|py|mjs|sh|md|cmake|pl))\b(?![\w/(-])')
OUTSIDE_RE = re.compile(r'\.\./shared|shared/reference|/work/|\b[A-Z][A-Z0-9]+(?:-[A-Z0-9]+)+\.(?:md|txt)\b')


SKIP_DIRS = ('.git', 'node_modules', '__pycache__', '.pytest_cache', '.hypothesis')


def tracked(src):
    """The tracked files (git ls-files), or, without git, the tree minus build output."""
    try:
        out = subprocess.run(['git', '-C', src, 'ls-files', '-z'], capture_output=True, check=True).stdout
        return [p for p in out.decode().split('\0') if p and os.path.exists(os.path.join(src, p))]
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for root, ds, fs in os.walk(src):
        rel = os.path.relpath(root, src)
        rel = '' if rel == '.' else rel + '/'
        ds[:] = [d for d in ds if d not in SKIP_DIRS and not (rel == '' and d.startswith('build'))
                 and not (rel + d).startswith(('bench/out', 'python/build', 'python/venv'))]
        files += [rel + f for f in fs]
    return files


def is_data(path):
    parts = path.split('/')
    return any(p.endswith('.lance') or p.startswith('_') for p in parts) or path.startswith('fuzz/corpora/')


def index(files):
    """suffixes: every tail of a tracked path (files and folders); dirs: source folder names."""
    suffixes, dirs, names = set(), set(), set()
    for f in files:
        names.add(os.path.basename(f))
        parts = f.split('/')
        for i in range(len(parts)):
            tail = '/'.join(parts[i:])
            suffixes.add(tail)
            for j in range(i + 1, len(parts)):
                suffixes.add('/'.join(parts[i:j]))
        if not is_data(f):
            for d in parts[:-1]:
                dirs.add(d)
    return suffixes, dirs, names


def comments(text, kind):
    """(line number, comment text) pairs of a source file."""
    if kind == 'c':
        for m in re.finditer(r'/\*.*?\*/|//[^\n]*', text, re.S):
            yield text.count('\n', 0, m.start()) + 1, m.group(0)
    else:
        for i, line in enumerate(text.split('\n'), 1):
            k = line.find('#')
            if k >= 0 and not line[:k].rstrip().endswith(('$', '{')):
                yield i, line[k:]


def texts(src, files):
    for f in files:
        if is_data(f):
            continue
        ext = os.path.splitext(f)[1]
        if ext == '.md' and (os.path.dirname(f) + '/').lstrip('/') in DOC_DIRS or (ext == '.md' and '/' not in f):
            with open(os.path.join(src, f), encoding='utf-8', errors='replace') as fh:
                for i, line in enumerate(fh, 1):
                    yield f, i, line
        elif f.startswith(CODE_DIRS) and ext in CODE_KINDS:
            with open(os.path.join(src, f), encoding='utf-8', errors='replace') as fh:
                text = fh.read()
            for i, c in comments(text, CODE_KINDS[ext]):
                for k, line in enumerate(c.split('\n')):
                    yield f, i + k, line


def placeholder(tok):
    return any(ch in tok for ch in '*{}<>$%') or re.search(r'(^|[/_.])[A-Z]{3,}([/_.]|$)', tok) \
        or tok.startswith(('http', 'www.'))


def check(src):
    files = tracked(src)
    suffixes, dirs, names = index(files)
    misses = []
    for f, ln, line in texts(src, files):
        for m in OUTSIDE_RE.finditer(line):
            if os.path.basename(m.group(0)) not in names:
                misses.append(f'{f}:{ln}: cites {m.group(0)!r}, outside the repository')
        for m in PATH_RE.finditer(line):
            tok = m.group(1).split('#')[0].rstrip('.,:;)').lstrip('./')
            if not tok or placeholder(tok) or '/' not in tok or tok.startswith(GENERATED):
                continue
            # a file must be a source kind; a folder must be written with its slash (an
            # extensionless name without one is a program, a CTest name or a module path)
            if not (tok.endswith('/') or tok.endswith(PATH_EXT)):
                continue
            first = tok.split('/')[0]
            if first not in dirs or first in ('lib',):
                continue
            if tok.rstrip('/') not in suffixes:
                misses.append(f'{f}:{ln}: names {tok}, which is not in the tree')
        for m in NAME_RE.finditer(line):
            name = m.group(1)
            if name in IGNORE or placeholder(name) or name in names:
                continue
            misses.append(f'{f}:{ln}: names {name}, which no tracked file is called')
    return misses


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else '.'
    misses = check(src)
    for m in misses:
        print('FAIL:', m)
    print(f'{len(misses)} missing')
    return 1 if misses else 0


if __name__ == '__main__':
    sys.exit(main())
