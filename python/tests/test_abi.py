"""Every C struct the package mirrors with ctypes has the size and field offsets the C
compiler gives it from the public headers (lv_python_abi, built from the same headers),
and the option-struct versions match: a header change not mirrored in _lib.py fails here."""

import ctypes
import json
import os
import subprocess

from lancever import _lib

MIRRORS = {
    "lv_error": _lib.LvError,
    "lv_open_options": _lib.OpenOptions, "lv_history_report": _lib.HistoryReport,
    "lv_version_info": _lib.VersionInfo, "lv_warning": _lib.Warning_, "lv_tag": _lib.Tag,
    "lv_branch": _lib.Branch, "lv_checkpoint_config": _lib.CheckpointConfig,
    "lv_checkpoint_result": _lib.CheckpointResult, "lv_cleanup_policy": _lib.CleanupPolicy,
    "lv_cleanup_stats": _lib.CleanupStats, "lv_arrow_options": _lib.ArrowOptions,
    "lv_cleanup_file": _lib.CleanupFile, "lv_cleanup_candidate": _lib.CleanupCandidate, "struct ArrowSchema": _lib.ArrowSchema,
    "struct ArrowArray": _lib.ArrowArray, "struct ArrowArrayStream": _lib.ArrowArrayStream,
}


def c_layout():
    out = subprocess.run([os.environ["LANCEVER_ABI_DUMP"]], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def test_every_struct_matches_the_headers():
    c = c_layout()
    assert set(c["structs"]) == set(MIRRORS)
    for name, cls in MIRRORS.items():
        want = c["structs"][name]
        got_fields = {f[0]: getattr(cls, f[0]).offset for f in cls._fields_}
        assert list(got_fields) == list(want["fields"]), f"{name}: field names/order"
        assert got_fields == want["fields"], f"{name}: offsets"
        assert ctypes.sizeof(cls) == want["size"], f"{name}: size"


def test_option_struct_versions_match_the_headers():
    c = c_layout()
    assert c["open_options_version"] == _lib.OPEN_OPTIONS_VERSION
    assert c["cleanup_policy_version"] == _lib.CLEANUP_POLICY_VERSION
    assert c["checkpoint_config_version"] == _lib.CHECKPOINT_CONFIG_VERSION
    assert c["arrow_options_version"] == _lib.ARROW_OPTIONS_VERSION
