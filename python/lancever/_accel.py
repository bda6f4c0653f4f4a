"""The optional C accelerator, ``lancever._rows`` (python/ext/rows.c): pylance-shaped
``versions()`` rows built in C.  The package works without it, building the same rows in
Python (results.pylance_rows); ``accelerated()`` says which one a process uses.

Where it is looked for, in order: inside the package (``pip install .`` and ``cmake
--install`` put it there when the build found Python's headers), then next to
``$LANCEVER_LIBRARY`` (a build tree: the test suites and the benchmarks).  Invariants: it is
imported at most once per process; a module that fails to import is treated as absent (the
rows are then built in Python, with the same values)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
from types import ModuleType
from typing import Optional

_UNSET = object()
_module: object = _UNSET


def _from_build_tree() -> Optional[ModuleType]:
    lib = os.environ.get("LANCEVER_LIBRARY")
    if not lib:
        return None
    here = os.path.dirname(os.path.abspath(lib))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(here, "_rows" + suffix)
        if os.path.isfile(path):
            spec = importlib.util.spec_from_file_location("lancever._rows", path)
            if spec is None or spec.loader is None:
                return None
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            return mod
    return None


def rows() -> Optional[ModuleType]:
    """The ``_rows`` module, or None when this installation has none."""
    global _module
    if _module is _UNSET:
        try:
            from . import _rows  # type: ignore[attr-defined]
            _module = _rows
        except ImportError:
            try:
                _module = _from_build_tree()
            except ImportError:
                _module = None
    return _module  # type: ignore[return-value]


def accelerated() -> bool:
    """True when ``versions()`` rows are built in C in this process."""
    return rows() is not None
