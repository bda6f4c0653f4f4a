"""The package's version, read where it is written once: project(VERSION) in CMakeLists.txt.

Used at build time by python/pyproject.toml (setuptools, the no-network route) from a source
tree.  At run time `lancever.__version__` is the loaded library's own version (the wheel and
`cmake --install` ship the package with the library built from the same tree, so they agree;
tests/cli/test_version.sh checks every place that shows it).
"""
import os
import re


def from_cmake(root=None):
    """project(lancever VERSION x.y.z) of the CMakeLists.txt two folders up (or in root)."""
    root = root or os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir)
    with open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(\s*lancever\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)", f.read())
    if not m:
        raise RuntimeError("CMakeLists.txt has no project(lancever VERSION x.y.z)")
    return m.group(1)


def __getattr__(name):
    if name == "version":
        return from_cmake()
    raise AttributeError(name)
