"""The `lancever` command of a pip-installed package (pyproject.toml's console entry).

The wheel ships the C command inside the package (``lancever/_bin/lancever``, built with the
library by the project's CMake); this entry replaces the Python process with it
(``os.execv``), so its output, exit status, Ctrl-C and closed-pipe behaviour are the C
tool's own, and every argument is passed on unchanged.  A package installed without the
binary (``cmake --install``, which puts the command in <prefix>/bin) says so and exits 127,
as a shell does for a missing command."""

import os
import sys


def binary_path() -> str:
    """Where the bundled C command is (it may be absent outside a wheel install)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "lancever")


def main() -> int:
    path = binary_path()
    if not os.access(path, os.X_OK):
        print(f"lancever: the C command is not part of this installation ({path} is missing);"
              " install the package with `pip install .` from the repository, or use the"
              " `lancever` that `cmake --install` puts in <prefix>/bin", file=sys.stderr)
        return 127
    os.execv(path, ["lancever", *sys.argv[1:]])
    return 127  # not reached: execv returns only by raising OSError
