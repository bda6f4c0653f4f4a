"""Loading liblancever and declaring its C API for ctypes.

The structures below mirror the public headers in include/lancever/ field by
field; ``tests/test_abi.py`` compares every size and offset with what the C
compiler says (a helper built from the same headers), so a header change that
is not mirrored here fails the tests instead of corrupting memory.

Calls go through ``ctypes.CDLL``, which releases the GIL for the duration of
every foreign call: long reads (history, cleanup) let other Python threads run.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from typing import List, Optional

from ._check import CArg
from .errors import LibraryNotFoundError

c_char_p = ctypes.c_char_p
c_int = ctypes.c_int
c_bool = ctypes.c_bool
c_size_t = ctypes.c_size_t
c_u64 = ctypes.c_uint64
c_i64 = ctypes.c_int64
c_void_p = ctypes.c_void_p
POINTER = ctypes.POINTER

ERROR_MESSAGE_MAX = 512
KIND_COUNT = 6
KIND_NAMES = ("manifest", "data", "deletion", "index", "transaction", "temp")


class LvError(ctypes.Structure):
    _fields_ = [("code", c_int), ("message", ctypes.c_char * ERROR_MESSAGE_MAX)]


# lancever/dataset.h: version 2 holds the storage options as a pointer to the library's opaque
# bag (lancever/storage.h: lv_storage_options_new/_set/_free), which this package fills by key.
OPEN_OPTIONS_VERSION = 2


class OpenOptions(ctypes.Structure):
    _fields_ = [
        ("version", c_int),
        ("threads", c_int),
        ("branch", c_char_p),
        ("storage", c_void_p),
    ]


class HistoryReport(ctypes.Structure):
    _fields_ = [
        ("rung", c_int),
        ("checkpoint_version", c_u64),
        ("checkpoints_rejected", c_u64),
        ("manifests_read", c_u64),
        ("manifests_vanished", c_u64),
        ("identity_bytes", c_u64),
        ("requests", c_u64),
        ("bytes_read", c_u64),
        ("note", ctypes.c_char * 256),
        ("unrecorded_versions", c_u64),
        ("warnings", c_u64),
        ("segments_read", c_u64),
    ]


class VersionInfo(ctypes.Structure):
    _fields_ = [
        ("version", c_u64),
        ("timestamp_millis", c_i64),
        ("total_fragments", c_u64),
        ("total_data_files", c_u64),
        ("total_files_size", c_u64),
        ("total_deletion_files", c_u64),
        ("total_data_file_rows", c_u64),
        ("total_deletion_file_rows", c_u64),
        ("total_rows", c_u64),
        ("is_tagged", c_bool),
        ("is_cleaned_up", c_bool),
        ("transaction_uuid", c_char_p),
        ("has_read_version", c_bool),
        ("read_version", c_u64),
        ("operation_type", c_char_p),
        ("transaction_properties", c_char_p),
        ("has_manifest_details", c_bool),
        ("timestamp_nanos", c_i64),
        ("manifest_path", c_char_p),
        ("manifest_size", c_u64),
        ("writer_library", c_char_p),
        ("writer_version", c_char_p),
        ("data_format", c_char_p),
        ("transaction_file", c_char_p),
        ("transaction_inline", c_bool),
        ("reader_feature_flags", c_u64),
        ("writer_feature_flags", c_u64),
        ("branch", c_char_p),
        ("num_indices", c_size_t),
        ("num_config", c_size_t),
        ("config_keys", POINTER(c_char_p)),
        ("config_values", POINTER(c_char_p)),
    ]


class Warning_(ctypes.Structure):
    _fields_ = [
        ("kind", c_int),
        ("path", c_char_p),
        ("first", c_u64),
        ("last", c_u64),
        ("message", c_char_p),
    ]


class Tag(ctypes.Structure):
    _fields_ = [
        ("name", c_char_p),
        ("branch", c_char_p),
        ("version", c_u64),
        ("manifest_size", c_u64),
        ("created_at", c_char_p),
        ("updated_at", c_char_p),
        ("metadata", c_char_p),  # JSON object text (appended, issue 27)
    ]


class Branch(ctypes.Structure):
    _fields_ = [
        ("name", c_char_p),
        ("parent_branch", c_char_p),
        ("parent_version", c_u64),
        ("create_at", c_i64),
        ("manifest_size", c_u64),
    ]


CHECKPOINT_CONFIG_VERSION = 2


class CheckpointConfig(ctypes.Structure):
    _fields_ = [
        ("version", c_int),
        ("enabled", c_int),
        ("max_entries", c_i64),
        ("max_checkpoint_files", c_i64),
        ("archive", c_int),
        ("archive_segment_rows", c_i64),
    ]


class CheckpointResult(ctypes.Structure):
    _fields_ = [
        ("written", c_bool),
        ("already_present", c_bool),
        ("latest_version", c_u64),
        ("entries", c_u64),
        ("new_entries", c_u64),
        ("file_size", c_u64),
        ("files_pruned", c_u64),
        ("path", ctypes.c_char * 64),
        ("report", HistoryReport),
        ("files_quarantined", c_u64),
        ("unrecorded_versions", c_u64),
        ("segments_written", c_u64),
        ("segment_bytes", c_u64),
        ("archived_through", c_u64),
        ("recorded_versions", c_u64),
    ]


CLEANUP_FILE_CB = ctypes.CFUNCTYPE(None, c_char_p, c_int, c_u64, c_char_p, c_void_p)
CLEANUP_PROGRESS_CB = ctypes.CFUNCTYPE(None, c_char_p, c_u64, c_u64, c_void_p)
CLEANUP_POLICY_VERSION = 5


class CleanupCandidate(ctypes.Structure):
    _fields_ = [
        ("path", c_char_p),
        ("kind", c_int),
        ("size", c_u64),
        ("reason", c_char_p),
        ("unverified", c_bool),
        ("version", c_u64),
    ]


CLEANUP_CANDIDATE_CB = ctypes.CFUNCTYPE(None, ctypes.POINTER(CleanupCandidate), c_void_p)
CLEANUP_BRANCH_CB = ctypes.CFUNCTYPE(None, c_char_p, c_u64, c_bool, c_void_p)
CLEANUP_PLAN_CB = ctypes.CFUNCTYPE(None, c_u64, c_u64, c_u64, c_void_p)


class CleanupPolicy(ctypes.Structure):
    _fields_ = [
        ("version", c_int),
        ("older_than_ms", c_i64),
        ("retain_versions", c_i64),
        ("before_version", c_u64),
        ("delete_unverified", c_bool),
        ("error_if_tagged_old_versions", c_bool),
        ("dry_run", c_bool),
        ("now_ms", c_i64),
        ("checkpoint", CheckpointConfig),
        ("on_file", CLEANUP_FILE_CB),
        ("on_progress", CLEANUP_PROGRESS_CB),
        ("payload", c_void_p),
        ("delete_rate_limit", ctypes.c_double),
        ("versions", ctypes.POINTER(c_u64)),
        ("nversions", c_size_t),
        ("on_candidate", CLEANUP_CANDIDATE_CB),
        ("on_referenced_branch", CLEANUP_BRANCH_CB),
        ("on_plan", CLEANUP_PLAN_CB),
        ("clean_referenced_branches", c_bool),
    ]


class CleanupStats(ctypes.Structure):
    _fields_ = [
        ("versions_total", c_u64),
        ("versions_removed", c_u64),
        ("versions_archived", c_u64),
        ("files_removed", c_u64 * KIND_COUNT),
        ("bytes_removed", c_u64 * KIND_COUNT),
        ("checkpoint_written", c_bool),
        ("checkpoint_path", ctypes.c_char * 64),
        ("failed_deletes", c_u64),  # written for policy version 5 (CLEANUP_POLICY_VERSION)
    ]


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

ARROW_OPTIONS_VERSION = 1


class ArrowOptions(ctypes.Structure):
    _fields_ = [("version", c_int), ("batch_rows", c_size_t), ("batch_bytes", c_size_t)]


class CleanupFile(ctypes.Structure):
    _fields_ = [("path", c_char_p), ("kind", c_int), ("size", c_u64), ("reason", c_char_p)]


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
    err = P(LvError)
    sigs = {
        "lv_version_string": (c_char_p, []),
        "lv_strerror": (c_char_p, [c_int]),
        "lv_parse_time": (c_int, [c_char_p, P(c_i64), err]),
        "lv_dataset_open": (c_int, [P(c_void_p), c_char_p, P(OpenOptions), err]),
        "lv_storage_options_new": (c_int, [P(c_void_p), err]),
        "lv_storage_options_set": (c_int, [c_void_p, c_char_p, c_char_p, err]),
        "lv_storage_options_free": (None, [c_void_p]),
        "lv_dataset_free": (None, [c_void_p]),
        "lv_versions": (c_int, [P(c_void_p), c_void_p, P(HistoryReport), err]),
        "lv_history": (c_int, [P(c_void_p), c_void_p, P(HistoryReport), err]),
        "lv_version_get": (c_int, [P(c_void_p), c_void_p, c_u64, err]),
        # show and diff (lancever/show.h, diff.h): the library finds and compares versions
        "lv_show": (c_int, [P(c_void_p), c_void_p, c_u64, P(c_int), err]),
        "lv_diff_versions": (c_int, [P(c_void_p), c_void_p, c_u64, c_u64, err]),
        "lv_diff_ms_between": (c_i64, [c_void_p]),
        "lv_diff_count": (c_size_t, [c_void_p]),
        "lv_diff_counter": (c_bool, [c_void_p, c_size_t, P(c_char_p), P(c_u64), P(c_u64),
                                     P(c_i64)]),
        "lv_diff_free": (None, [c_void_p]),
        "lv_version_as_of": (c_int, [P(c_void_p), c_void_p, c_i64, c_bool, P(HistoryReport), err]),
        "lv_version_list_count": (c_size_t, [c_void_p]),
        "lv_version_list_get": (P(VersionInfo), [c_void_p, c_size_t]),
        "lv_version_list_gap_count": (c_size_t, [c_void_p]),
        "lv_version_list_gap": (c_bool, [c_void_p, c_size_t, P(c_u64), P(c_u64)]),
        "lv_version_list_vanished_count": (c_size_t, [c_void_p]),
        "lv_version_list_vanished": (c_char_p, [c_void_p, c_size_t]),
        "lv_version_list_free": (None, [c_void_p]),
        "lv_dataset_warning_count": (c_size_t, [c_void_p]),
        "lv_dataset_warning": (P(Warning_), [c_void_p, c_size_t]),
        "lv_dataset_clear_warnings": (None, [c_void_p]),
        "lv_refs_load": (c_int, [P(c_void_p), c_void_p, err]),
        "lv_refs_tag_count": (c_size_t, [c_void_p]),
        "lv_refs_tag": (P(Tag), [c_void_p, c_size_t]),
        "lv_refs_branch_count": (c_size_t, [c_void_p]),
        "lv_refs_branch": (P(Branch), [c_void_p, c_size_t]),
        "lv_refs_free": (None, [c_void_p]),
        "lv_checkpoint_write": (c_int, [c_void_p, P(CheckpointConfig), P(c_u64), c_size_t,
                                        P(CheckpointResult), err]),
        "lv_cleanup": (c_int, [c_void_p, P(CleanupPolicy), P(CleanupStats), err]),
        "lv_file_kind_name": (c_char_p, [c_int]),
        "lv_versions_arrow_stream": (c_int, [P(ArrowArrayStream), c_void_p, P(ArrowOptions),
                                             P(HistoryReport), err]),
        "lv_history_arrow_stream": (c_int, [P(ArrowArrayStream), c_void_p, P(ArrowOptions),
                                            P(HistoryReport), err]),
        "lv_version_list_arrow_stream": (c_int, [P(ArrowArrayStream), c_void_p, c_char_p,
                                                 P(ArrowOptions), err]),
        "lv_refs_arrow_stream": (c_int, [P(ArrowArrayStream), c_void_p, P(ArrowOptions), err]),
        "lv_cleanup_files_arrow_stream": (c_int, [P(ArrowArrayStream), P(CleanupFile), c_size_t,
                                                  P(CleanupStats), c_bool, P(ArrowOptions), err]),
        "lv_dataset_storage": (c_void_p, [c_void_p]),
        "lv_storage_interrupt": (None, [c_void_p, c_bool]),
    }
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
