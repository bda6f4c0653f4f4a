"""The package copies no struct layout of the library (issue 26).

* test_no_layout_copy: no module of the package declares a ctypes.Structure (or Union) for a
  lancever struct: the only ones left are the Arrow C Data / C Stream Interface (an ABI the
  Arrow specification fixes, checked here against the header); storage options are the
  library's opaque bag.  Every other struct class is built at run time from the library's
  description (lv_struct_info / lv_struct_field).
* the built classes agree with the library (sizes, versions, every field) and with what the
  C compiler gives for the few declared ones (lv_python_abi, built from the same headers).
* tests/abi/test_shuffled.sh runs this suite against a library whose structs' fields were
  put in another order: nothing in the package depends on a field's place.
"""

import ast
import ctypes
import json
import os
import pathlib
import subprocess

from lancever import _lib

PACKAGE = pathlib.Path(_lib.__file__).parent
# The hand-declared structs that remain, and why (see the module docstring).
DECLARED = {"ArrowSchema": "struct ArrowSchema", "ArrowArray": "struct ArrowArray",
            "ArrowArrayStream": "struct ArrowArrayStream"}


def _declared_structures():
    """(module, class name) of every class of the package that subclasses a ctypes
    Structure or Union, whatever the spelling (ctypes.Structure, Structure, LittleEndian...)."""
    out = []
    for py in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(py.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for base in node.bases:
                    text = ast.unparse(base)
                    if "Structure" in text or "Union" in text:
                        out.append((py.name, node.name))
    return out


def test_no_layout_copy():
    found = _declared_structures()
    assert {name for _, name in found} == set(DECLARED), found
    assert all(mod == "_lib.py" for mod, _ in found), found


def test_no_struct_constant_is_kept():
    """No version constant of a lancever struct is written in the package (the library's own
    version, from its description, is the one used)."""
    consts = [n for n in dir(_lib) if n.endswith("_VERSION") and n.isupper()]
    assert consts == [], consts


def test_classes_follow_the_library():
    lib = _lib.lib()
    for pyname, cname in _lib.STRUCTS.items():
        cls = getattr(_lib, pyname)
        size, version, n = ctypes.c_size_t(), ctypes.c_int(), ctypes.c_size_t()
        assert lib.lv_struct_info(cname.encode(), ctypes.byref(size), ctypes.byref(version),
                                  ctypes.byref(n)) == 0
        assert ctypes.sizeof(cls) == size.value, cname
        assert cls._lv_version == version.value, cname
        assert len(cls._lv_fields) == n.value, cname
        end = 0  # the fields tile the struct: no overlap, gaps only alignment padding
        for fname, (_t, off, fsize) in sorted(cls._lv_fields.items(), key=lambda f: f[1][1]):
            assert end <= off < end + 8, f"{cname}.{fname}: at {off}, the field before ends at {end}"
            end = off + fsize
        assert end <= size.value < end + 8, cname
    assert lib.lv_struct_info(b"lv_no_such_struct", None, None, None) == -1  # LV_ENOTFOUND


def test_new_calls_the_init_function():
    """A versioned struct made by the package carries the library's version and defaults."""
    pol = _lib.new(_lib.CleanupPolicy)
    assert pol.version == _lib.CleanupPolicy._lv_version > 0
    assert pol.older_than_ms == -1 and pol.retain_versions == -1
    assert pol.error_if_tagged_old_versions is True
    assert pol.checkpoint is None
    cfg = _lib.new(_lib.CheckpointConfig, max_entries=5)
    assert (cfg.enabled, cfg.max_entries, cfg.archive) == (-1, 5, -1)
    rep = _lib.new(_lib.HistoryReport)
    assert rep.version == _lib.HistoryReport._lv_version and rep.note == b""


def test_declared_structs_match_the_headers():
    out = subprocess.run([os.environ["LANCEVER_ABI_DUMP"]], check=True, capture_output=True,
                         text=True)
    c = json.loads(out.stdout)
    assert set(c["structs"]) == set(DECLARED.values())
    for pyname, cname in DECLARED.items():
        cls = getattr(_lib, pyname)
        want = c["structs"][cname]
        got = {f[0]: getattr(cls, f[0]).offset for f in cls._fields_}
        assert list(got) == list(want["fields"]), f"{cname}: field names/order"
        assert got == want["fields"], f"{cname}: offsets"
        assert ctypes.sizeof(cls) == want["size"], f"{cname}: size"
