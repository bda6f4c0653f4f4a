"""Loading liblancever and declaring its C API for ctypes.

The public structs are not mirrored here: their classes are built at run time from the
library's own description of them (lv_struct_info / lv_struct_field: size, version, and
each field's name, type and offset), and options, policies and results are initialised
by the library's lv_X_init functions (:func:`new`), so a library whose structs changed
needs no change here.  ``tests/test_abi.py`` checks that the package declares no
ctypes.Structure for a lancever struct, and the suite runs against a library built with
the structs' fields in another order (tests/abi/test_shuffled.sh).  What remains declared
by hand: the Arrow C Data / C Stream Interface (an ABI fixed by the Arrow specification),
checked against the header.  Storage options are the library's opaque bag
(lv_storage_options_new/_set/_free): no layout at all.

Calls go through ``ctypes.CDLL``, which releases the GIL for the duration of
every foreign call: long reads (history, cleanup) let other Python threads run.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from typing import List, Optional

from ._check import CArg, assign
from .errors import LibraryNotFoundError

c_char_p = ctypes.c_char_p
c_int = ctypes.c_int
c_bool = ctypes.c_bool
c_size_t = ctypes.c_size_t
c_u64 = ctypes.c_uint64
c_i64 = ctypes.c_int64
c_void_p = ctypes.c_void_p
POINTER = ctypes.POINTER

KIND_NAMES = ("manifest", "data", "deletion", "index", "transaction", "temp")


# ---- the public structs, as the library describes them (lancever/common.h) ----
#
# No layout is copied here: lv_struct_info / lv_struct_field give each struct's size,
# version and fields (name, type, offset), and the classes below are built from that when
# first used.  Each is a ctypes char array of the library's size (so ctypes.byref, arrays
# of it and from_address work) with one property per field that reads and writes at the
# library's offset.  Options, policies, configs and results are made with new(), which
# calls the struct's lv_X_init with the library's own version.

_FIELD_TYPES = {1: ctypes.c_int, 2: ctypes.c_bool, 3: ctypes.c_int64, 4: ctypes.c_uint64,
                5: ctypes.c_size_t, 6: ctypes.c_double, 7: ctypes.c_char_p, 8: ctypes.c_void_p,
                9: "chars", 10: "u64s", 11: ctypes.c_uint}

# Python name -> C struct (lancever/*.h).
STRUCTS = {
    "LvError": "lv_error", "OpenOptions": "lv_open_options", "HistoryReport": "lv_history_report",
    "VersionInfo": "lv_version_info", "Warning_": "lv_warning", "Tag": "lv_tag",
    "Branch": "lv_branch", "CheckpointConfig": "lv_checkpoint_config",
    "CheckpointResult": "lv_checkpoint_result", "CleanupCandidate": "lv_cleanup_candidate",
    "CleanupPolicy": "lv_cleanup_policy", "CleanupStats": "lv_cleanup_stats",
    "ArrowOptions": "lv_arrow_options", "CleanupFile": "lv_cleanup_file",
    "CaptureOptions": "lv_capture_options", "CaptureStats": "lv_capture_stats",
}


def _pointer_value(v: object, keep: list) -> Optional[int]:
    """A pointer field's value: None, an address, a ctypes function or pointer (its value) or
    any other ctypes object (its address); the object is kept alive with the struct."""
    if v is None or isinstance(v, int):
        return v
    keep.append(v)
    if isinstance(v, (ctypes._CFuncPtr, ctypes._Pointer)):  # type: ignore[attr-defined]
        return ctypes.cast(v, c_void_p).value
    return ctypes.addressof(v)  # type: ignore[arg-type]


def _field(name: str, ctype: object, off: int, size: int) -> property:
    if ctype == "chars":
        def get(self):  # type: ignore[no-untyped-def]
            return ctypes.string_at(ctypes.addressof(self) + off, size).split(b"\0", 1)[0]
        return property(get)
    if ctype == "u64s":
        arr = c_u64 * (size // 8)
        return property(lambda self: arr.from_buffer(self, off))
    ct = ctype

    def getter(self):  # type: ignore[no-untyped-def]
        return ct.from_buffer(self, off).value  # type: ignore[attr-defined]

    def setter(self, v):  # type: ignore[no-untyped-def]
        keep = self.__dict__.setdefault("_keep", {})
        if ct is c_void_p:
            v = _pointer_value(v, keep.setdefault(name, []))
        elif ct is c_char_p:
            keep[name] = v  # the bytes must outlive the struct's use
        ct.from_buffer(self, off).value = v  # type: ignore[attr-defined]
    return property(getter, setter)


def _build(pyname: str, cname: str, dll: ctypes.CDLL) -> type:
    size, version, n = c_size_t(), c_int(), c_size_t()
    if dll.lv_struct_info(cname.encode(), ctypes.byref(size), ctypes.byref(version),
                          ctypes.byref(n)) != 0:
        raise RuntimeError(f"lancever: the library does not describe {cname}")
    fields, props = {}, {}
    for i in range(n.value):
        fname, ftype, off, fsize = c_char_p(), c_int(), c_size_t(), c_size_t()
        dll.lv_struct_field(cname.encode(), i, ctypes.byref(fname), ctypes.byref(ftype),
                            ctypes.byref(off), ctypes.byref(fsize))
        key = fname.value.decode()
        ct = _FIELD_TYPES[ftype.value]
        fields[key] = (ct, off.value, fsize.value)
        props[key] = _field(key, ct, off.value, fsize.value)
    cls = type(pyname, (ctypes.c_char * size.value,), dict(
        props, _lv_name=cname, _lv_version=version.value, _lv_fields=fields,
        __repr__=lambda self: f"<{cname}>"))
    return cls


def _init_fn(cname: str) -> str:
    return cname + "_init"


def new(cls: type, **fields: object) -> object:
    """A struct of the library's current version with its defaults (its lv_X_init), then
    `fields` set, each checked against its C type (_check.assign)."""
    obj = cls()
    if cls._lv_version:  # type: ignore[attr-defined]
        fn = getattr(lib(), _init_fn(cls._lv_name))  # type: ignore[attr-defined]
        if fn(ctypes.byref(obj), cls._lv_version) != 0:  # type: ignore[attr-defined]
            raise RuntimeError(f"lancever: {cls._lv_name} init failed")  # type: ignore[attr-defined]
    for k, v in fields.items():
        assign(obj, k, v)
    return obj


_classes: dict = {}


def __getattr__(name: str) -> type:
    """The struct classes (HistoryReport, VersionInfo, ...), built on first use."""
    cname = STRUCTS.get(name)
    if cname is None:
        raise AttributeError(name)
    cls = _classes.get(name)
    if cls is None:
        cls = _classes[name] = _build(name, cname, lib())
    return cls


CLEANUP_FILE_CB = ctypes.CFUNCTYPE(None, c_char_p, c_int, c_u64, c_char_p, c_void_p)
CLEANUP_PROGRESS_CB = ctypes.CFUNCTYPE(None, c_char_p, c_u64, c_u64, c_void_p)
# (the candidate arrives as an address: read it with CleanupCandidate.from_address)
CLEANUP_CANDIDATE_CB = ctypes.CFUNCTYPE(None, c_void_p, c_void_p)
CLEANUP_BRANCH_CB = ctypes.CFUNCTYPE(None, c_char_p, c_u64, c_bool, c_void_p)
CLEANUP_PLAN_CB = ctypes.CFUNCTYPE(None, c_u64, c_u64, c_u64, c_void_p)


# ---- lancever/arrow.h: the Arrow C Data / C Stream Interface structs ----

class ArrowSchema(ctypes.Structure):
    pass


ArrowSchema._fields_ = [
    ("format", c_char_p),
    ("name", c_char_p),
    ("metadata", c_void_p),
    ("flags", c_i64),
    ("n_children", c_i64),
    ("children", POINTER(POINTER(ArrowSchema))),
    ("dictionary", POINTER(ArrowSchema)),
    ("release", ctypes.CFUNCTYPE(None, POINTER(ArrowSchema))),
    ("private_data", c_void_p),
]


class ArrowArray(ctypes.Structure):
    pass


ArrowArray._fields_ = [
    ("length", c_i64),
    ("null_count", c_i64),
    ("offset", c_i64),
    ("n_buffers", c_i64),
    ("n_children", c_i64),
    ("buffers", POINTER(c_void_p)),
    ("children", POINTER(POINTER(ArrowArray))),
    ("dictionary", POINTER(ArrowArray)),
    ("release", ctypes.CFUNCTYPE(None, POINTER(ArrowArray))),
    ("private_data", c_void_p),
]


class ArrowArrayStream(ctypes.Structure):
    pass


ArrowArrayStream._fields_ = [
    ("get_schema", ctypes.CFUNCTYPE(c_int, POINTER(ArrowArrayStream), POINTER(ArrowSchema))),
    ("get_next", ctypes.CFUNCTYPE(c_int, POINTER(ArrowArrayStream), POINTER(ArrowArray))),
    ("get_last_error", ctypes.CFUNCTYPE(c_char_p, POINTER(ArrowArrayStream))),
    ("release", ctypes.CFUNCTYPE(None, POINTER(ArrowArrayStream))),
    ("private_data", c_void_p),
]

# ---- finding the library ----

LIBRARY_ENV = "LANCEVER_LIBRARY"
_NAMES = ("liblancever.so", "liblancever.so.0")


def _candidates() -> List[str]:
    """Where the library is looked for, in order (for loading and for the error message):
    the package's own directory (where `pip install .` and `cmake --install` put it), then
    $LANCEVER_LIBRARY (the test suites' build tree), then the system's library path."""
    here = os.path.dirname(os.path.abspath(__file__))
    out = [os.path.join(here, n) for n in _NAMES]
    env = os.environ.get(LIBRARY_ENV)
    if env:
        out.append(env)
    found = ctypes.util.find_library("lancever")
    out.extend([found] if found else [])
    out.extend(_NAMES)  # the dynamic loader's own search path (LD_LIBRARY_PATH, ld.so.cache)
    return out


def _load() -> ctypes.CDLL:
    tried = []
    here = os.path.dirname(os.path.abspath(__file__))
    for path in _candidates():
        is_file = os.path.sep in path
        if is_file and not os.path.exists(path):
            tried.append(f"{path} (no such file)")
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
    if not os.environ.get(LIBRARY_ENV):
        tried.insert(len(_NAMES), f"${LIBRARY_ENV} (not set)")
    raise LibraryNotFoundError(
        "lancever: cannot load the C library liblancever.so. Looked for, in order:\n  "
        + "\n  ".join(tried)
        + f"\nThis installation has no library next to {here} (`pip install ./python` installs"
        " the Python files alone). Install the whole package with `pip install .` from the"
        " repository's root (the library and the lancever command inside it), or with"
        f" cmake --install; or set {LIBRARY_ENV}=/path/to/liblancever.so."
    )


#: enum lv_show_source (lancever/show.h): lv_show read the version's live manifest.
SHOW_MANIFEST = 1


def _declare(lib: ctypes.CDLL) -> None:
    P = POINTER
    S = c_void_p  # a pointer to a public struct (ctypes.byref of one of the classes above)
    err = S
    sigs = {
        "lv_version_string": (c_char_p, []),
        "lv_version": (c_char_p, []),
        "lv_struct_info": (c_int, [c_char_p, P(c_size_t), P(c_int), P(c_size_t)]),
        "lv_struct_field": (c_int, [c_char_p, c_size_t, P(c_char_p), P(c_int), P(c_size_t),
                                    P(c_size_t)]),
        "lv_strerror": (c_char_p, [c_int]),
        "lv_parse_time": (c_int, [c_char_p, P(c_i64), err]),
        "lv_dataset_open": (c_int, [P(c_void_p), c_char_p, S, err]),
        "lv_storage_options_new": (c_int, [P(c_void_p), err]),
        "lv_storage_options_set": (c_int, [c_void_p, c_char_p, c_char_p, err]),
        "lv_storage_options_free": (None, [c_void_p]),
        "lv_dataset_free": (None, [c_void_p]),
        "lv_versions": (c_int, [P(c_void_p), c_void_p, S, err]),
        "lv_history": (c_int, [P(c_void_p), c_void_p, S, err]),
        "lv_version_get": (c_int, [P(c_void_p), c_void_p, c_u64, err]),
        # show and diff (lancever/show.h, diff.h): the library finds and compares versions
        "lv_show": (c_int, [P(c_void_p), c_void_p, c_u64, P(c_int), err]),
        "lv_diff_versions": (c_int, [P(c_void_p), c_void_p, c_u64, c_u64, err]),
        "lv_diff_ms_between": (c_i64, [c_void_p]),
        "lv_diff_count": (c_size_t, [c_void_p]),
        "lv_diff_counter": (c_bool, [c_void_p, c_size_t, P(c_char_p), P(c_u64), P(c_u64),
                                     P(c_i64)]),
        "lv_diff_free": (None, [c_void_p]),
        "lv_version_as_of": (c_int, [P(c_void_p), c_void_p, c_i64, c_bool, S, err]),
        "lv_version_list_count": (c_size_t, [c_void_p]),
        "lv_version_list_get": (c_void_p, [c_void_p, c_size_t]),
        "lv_version_list_gap_count": (c_size_t, [c_void_p]),
        "lv_version_list_gap": (c_bool, [c_void_p, c_size_t, P(c_u64), P(c_u64)]),
        "lv_version_list_vanished_count": (c_size_t, [c_void_p]),
        "lv_version_list_vanished": (c_char_p, [c_void_p, c_size_t]),
        "lv_version_list_free": (None, [c_void_p]),
        "lv_dataset_warning_count": (c_size_t, [c_void_p]),
        "lv_dataset_warning": (c_void_p, [c_void_p, c_size_t]),
        "lv_dataset_clear_warnings": (None, [c_void_p]),
        "lv_refs_load": (c_int, [P(c_void_p), c_void_p, err]),
        "lv_refs_tag_count": (c_size_t, [c_void_p]),
        "lv_refs_tag": (c_void_p, [c_void_p, c_size_t]),
        "lv_refs_branch_count": (c_size_t, [c_void_p]),
        "lv_refs_branch": (c_void_p, [c_void_p, c_size_t]),
        "lv_refs_free": (None, [c_void_p]),
        "lv_checkpoint_write": (c_int, [c_void_p, S, P(c_u64), c_size_t, S, err]),
        "lv_cleanup": (c_int, [c_void_p, S, S, err]),
        "lv_file_kind_name": (c_char_p, [c_int]),
        "lv_versions_arrow_stream": (c_int, [P(ArrowArrayStream), c_void_p, S, S, err]),
        "lv_history_arrow_stream": (c_int, [P(ArrowArrayStream), c_void_p, S, S, err]),
        "lv_version_list_arrow_stream": (c_int, [P(ArrowArrayStream), c_void_p, c_char_p, S, err]),
        "lv_refs_arrow_stream": (c_int, [P(ArrowArrayStream), c_void_p, S, err]),
        "lv_cleanup_files_arrow_stream": (c_int, [P(ArrowArrayStream), S, c_size_t, S, c_bool, S,
                                                  err]),
        "lv_dataset_storage": (c_void_p, [c_void_p]),
        # incremental capture (lancever/capture.h)
        "lv_capture_open": (c_int, [P(c_void_p), c_void_p, S, err]),
        "lv_capture_poll": (c_int, [c_void_p, S, err]),
        "lv_capture_flush": (c_int, [c_void_p, err]),
        "lv_capture_due": (c_bool, [c_void_p, c_i64]),
        "lv_capture_clock_ms": (c_i64, []),
        "lv_capture_get_stats": (c_int, [c_void_p, S]),
        "lv_capture_free": (None, [c_void_p]),
        "lv_storage_interrupt": (None, [c_void_p, c_bool]),
    }
    for cname in STRUCTS.values():  # the init functions of the versioned structs
        if hasattr(lib, _init_fn(cname)):
            sigs[_init_fn(cname)] = (c_int, [S, c_int])
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        # Integers, bools and strings are checked against the C type before ctypes converts
        # them (_check.CArg): ctypes alone wraps 2**64 + 3 to 3 and cuts b"a\0b" to b"a".
        fn.argtypes = [CArg(a) if a in _CHECKED else a for a in args]


_CHECKED = (c_int, c_bool, c_size_t, c_u64, c_i64, c_char_p)


_lib: Optional[ctypes.CDLL] = None


def lib() -> ctypes.CDLL:
    """The loaded library (loaded on first use; LibraryNotFoundError names what was tried)."""
    global _lib
    if _lib is None:
        loaded = _load()
        _declare(loaded)
        _lib = loaded
    return _lib


def library_path() -> str:
    """The file the library was loaded from."""
    return lib()._name
