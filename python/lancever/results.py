"""Result types of the lancever package: version lists (list of dicts that are
also Arrow streams), reports, warnings, tags, checkpoint and cleanup results."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import re
import weakref
from itertools import repeat
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Iterator, List, Optional, Tuple

from . import _accel, _arrow, _check, _lib
from .errors import Error, InvalidArgumentError, NotFoundError, error_for

UTC = timezone.utc
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

#: Lance's seven summary counters: the keys of a row's "metadata" dict (as strings, like pylance).
SUMMARY_KEYS = ("total_fragments", "total_data_files", "total_files_size", "total_deletion_files",
                "total_data_file_rows", "total_deletion_file_rows", "total_rows")

_RUNGS = {0: "manifests", 1: "newest_checkpoint", 2: "older_checkpoint"}
_WARNING_KINDS = {1: "checkpoint_rejected", 2: "checkpoint_damaged", 3: "manifest_vanished",
                  4: "tag_unreadable", 5: "branch_unreadable", 6: "history_gap",
                  7: "answer_uncertain", 8: "segment_missing", 9: "segment_stray"}


def ms_to_datetime(ms: int) -> datetime:
    """Milliseconds since the epoch as an aware UTC datetime (exact, no float rounding)."""
    return EPOCH + timedelta(milliseconds=ms)


@dataclass(frozen=True)
class DatasetWarning:
    """One warning the library recorded during a call (lancever/dataset.h lv_warning)."""

    kind: str            #: "checkpoint_rejected", "manifest_vanished", "history_gap", ...
    path: Optional[str]  #: the file, relative to the dataset root, if any
    first: int           #: version range (history_gap, answer_uncertain), else 0
    last: int
    message: str         #: one line naming the file or the range


@dataclass(frozen=True)
class HistoryReport:
    """How a history call was answered (lancever/dataset.h lv_history_report)."""

    rung: str                  #: "newest_checkpoint", "older_checkpoint" or "manifests"
    checkpoint_version: int    #: newest version the checkpoint used covers (0 = none)
    checkpoints_rejected: int
    manifests_read: int
    manifests_vanished: int
    identity_bytes: int
    requests: int
    bytes_read: int
    note: str
    unrecorded_versions: int   #: versions in gaps (no record anywhere readable)

    @staticmethod
    def from_c(r: _lib.HistoryReport) -> "HistoryReport":
        return HistoryReport(_RUNGS.get(r.rung, str(r.rung)), r.checkpoint_version,
                             r.checkpoints_rejected, r.manifests_read, r.manifests_vanished,
                             r.identity_bytes, r.requests, r.bytes_read,
                             r.note.decode("utf-8", "replace"), r.unrecorded_versions)


def warning_from_c(w: _lib.Warning_) -> DatasetWarning:
    return DatasetWarning(_WARNING_KINDS.get(w.kind, str(w.kind)),
                          w.path.decode("utf-8", "replace") if w.path else None, w.first, w.last,
                          (w.message or b"").decode("utf-8", "replace"))


class ListHandle:
    """Owns an lv_version_list; freed when the last result using it goes away."""

    def __init__(self, ptr: int):
        self.ptr = ptr
        weakref.finalize(self, _lib.lib().lv_version_list_free, ptr)


def export_list(handle: ListHandle, kind: str, batch_rows: int = 0) -> Any:
    """An "arrow_array_stream" PyCapsule over the list (the stream copies the rows)."""
    def fill(ptr: int) -> None:
        err = _lib.LvError()
        opts = _lib.new(_lib.ArrowOptions, batch_rows=batch_rows, batch_bytes=0)
        rc = _lib.lib().lv_version_list_arrow_stream(
            ctypes.cast(ptr, ctypes.POINTER(_lib.ArrowArrayStream)), handle.ptr, kind.encode(),
            ctypes.byref(opts), ctypes.byref(err))
        if rc < 0:
            raise error_for(rc, err.message.decode("utf-8", "replace"))
    return _arrow.stream_capsule(fill)


def read_list_columns(handle: ListHandle, kind: str) -> "_arrow.Columns":
    cap = export_list(handle, kind)
    return _arrow.read_columns(_arrow.stream_from_capsule(cap))


def _props(text: Optional[str]) -> Any:
    if text == "{}":
        return {}
    return json.loads(text) if text is not None else None


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """The cyclic collector paused while a result's row dicts are built, as bulk loaders do.
    The rows are acyclic (dicts of ints, strings, datetimes and lists/dicts of those): the
    collector has nothing to free in them, yet allocating tens of thousands of dicts triggers
    its passes over every tracked object, young and old (3 of 19 ms of versions() at 10,000
    versions, bench_python).  Reference counting still frees everything at once; the
    collector is re-enabled on the way out (also on an exception or Ctrl-C) only if it was
    enabled on the way in, so a program that runs with gc.disable() keeps it off."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def rows_from_columns(cols: "_arrow.Columns") -> List[Dict[str, Any]]:
    """Row dicts: pylance's "version", "timestamp", "metadata", then every Arrow column by
    name (transaction_properties parsed from its JSON text)."""
    names = cols.names
    data = dict(zip(names, cols.data))
    with _gc_paused():
        timestamps = [EPOCH + timedelta(milliseconds=m) for m in data["timestamp_millis"]]
        text = [list(map(str, data[k])) for k in SUMMARY_KEYS]
        metadata = list(map(dict, map(zip, repeat(SUMMARY_KEYS), zip(*text))))
        data["transaction_properties"] = [_props(p) for p in data["transaction_properties"]]
        keys = ["version", "timestamp", "metadata"] + [n for n in names if n != "version"]
        columns = [data["version"], timestamps, metadata] + [data[n] for n in names if n != "version"]
        return list(map(dict, map(zip, repeat(keys), zip(*columns))))


def pylance_timestamp(nanos: int) -> datetime:
    """A commit time in ns as pylance 14's ``versions()`` gives it: a *naive local-time*
    datetime at microsecond precision, computed as pylance computes it (float arithmetic
    included), so the two compare equal with ``==``."""
    return datetime.fromtimestamp(nanos // 1e9) + timedelta(microseconds=(nanos % 1e9) // 1e3)


def _local_from_ms(ms: int) -> datetime:
    """A commit time known only to the millisecond (a checkpoint row), as a naive local time."""
    return datetime.fromtimestamp(ms // 1000) + timedelta(milliseconds=ms % 1000)


def _entry_bytes(handle: ListHandle) -> Optional[Tuple[memoryview, int]]:
    """The list's entry array as one read-only view of bytes and the size of an entry, or None
    for an empty list (lancever/dataset.h: the entries are one array, entry i at
    lv_version_list_get(list, 0) + i)."""
    lib = _lib.lib()
    n = lib.lv_version_list_count(handle.ptr)
    if n == 0:
        return None
    size = ctypes.sizeof(_lib.VersionInfo)
    base = lib.lv_version_list_get(handle.ptr, 0)
    return memoryview((ctypes.c_char * (n * size)).from_address(base)).toreadonly(), size


def list_columns(handle: ListHandle, names: Tuple[str, ...]) -> Dict[str, List[Any]]:
    """Columns ``names`` (integer or bool fields of lv_version_info) of every entry, read in
    one pass over the list's entry array (lancever/dataset.h: the entries are one array, entry
    i at lv_version_list_get(list, 0) + i): a strided memoryview per field, no per-row call."""
    entries = _entry_bytes(handle)
    if entries is None:
        return {name: [] for name in names}
    raw, size = entries[0].cast("B"), entries[1]
    views = {"Q": raw.cast("Q"), "q": raw.cast("q"), "?": raw}
    out: Dict[str, List[Any]] = {}
    for name in names:
        ctype, off, _size = _lib.VersionInfo._lv_fields[name]
        if ctype is ctypes.c_bool:
            out[name] = raw[off::size].tolist()  # 0 / 1
        else:
            code = "q" if ctype is ctypes.c_int64 else "Q"
            out[name] = views[code][off // 8::size // 8].tolist()
    return out


_PYLANCE_FIELDS = ("version", "timestamp_millis", "has_manifest_details", "timestamp_nanos") + SUMMARY_KEYS
_PYLANCE_WIDTHS = {ctypes.c_uint64: 8, ctypes.c_int64: 8, ctypes.c_bool: 1}
_pylance_offsets: Optional[Tuple[int, ...]] = None


def _c_offsets() -> Optional[Tuple[int, ...]]:
    """The byte offsets of _PYLANCE_FIELDS in the library's entry, for lancever._rows (which
    checks them against the stride), or () when a field's type is not the one it reads."""
    global _pylance_offsets
    if _pylance_offsets is None:
        fields = _lib.VersionInfo._lv_fields
        want = (ctypes.c_uint64, ctypes.c_int64, ctypes.c_bool, ctypes.c_int64) + (ctypes.c_uint64,) * 7
        ok = all(fields[n][0] is t and fields[n][2] == _PYLANCE_WIDTHS[t]
                 for n, t in zip(_PYLANCE_FIELDS, want))
        _pylance_offsets = tuple(fields[n][1] for n in _PYLANCE_FIELDS) if ok else ()
    return _pylance_offsets


def _c_pylance_rows(handle: ListHandle, covered: int) -> Optional[List[Dict[str, Any]]]:
    """pylance_rows built by the C accelerator (lancever._rows) straight from the entry
    array, or None when there is no accelerator or it declines (a time it does not convert
    exactly): the caller then builds them in Python, with the same values."""
    mod = _accel.rows()
    offsets = _c_offsets() if mod is not None else None
    if not offsets:
        return None
    entries = _entry_bytes(handle)
    if entries is None:
        return []
    with _gc_paused():
        return mod.pylance_rows(entries[0], entries[1], offsets, covered)


# |seconds| below 2**33 (years 1698-2242): a float of microseconds / 1e6 rounds back to the
# exact microsecond (half an ulp < 0.5 us), so datetime.fromtimestamp takes it as one float.
_FLOAT_EXACT_US = 2 ** 33 * 10 ** 6


def _pylance_micros(ns: int) -> int:
    """A commit time in ns as the microseconds pylance 14 makes of it: it computes
    ``fromtimestamp(ns // 1e9) + timedelta(microseconds=(ns % 1e9) // 1e3)``, in floats, so
    the ns are first rounded to a float (F); the floor divisions of the integer-valued F are
    exact, which makes the result F's microseconds, floored."""
    return int(float(ns)) // 1000


def _local_times(micros: List[int]) -> List[datetime]:
    """Naive local-time datetimes of microseconds since the epoch, equal to what
    ``datetime.fromtimestamp(seconds) + timedelta(microseconds=us)`` gives."""
    fromts = datetime.fromtimestamp
    if micros and -_FLOAT_EXACT_US < min(micros) and max(micros) < _FLOAT_EXACT_US:
        return list(map(fromts, [us / 1e6 for us in micros]))
    return [fromts(us // 1000000) + timedelta(microseconds=us % 1000000) for us in micros]


def pylance_rows(handle: ListHandle, covered: int = 0) -> List[Dict[str, Any]]:
    """pylance 14's ``versions()`` rows -- exactly ``{"version", "timestamp", "metadata"}``:
    a naive local-time datetime (from the manifest's nanoseconds when this call read the
    manifest, else from the checkpoint's milliseconds) and the seven counters as strings.
    ``covered``: the newest version the checkpoint used covers (its rows' times are its ms).
    The time is computed as pylance computes it (:func:`_pylance_micros`), so the two compare
    equal with ``==``.  Reads only the fields those rows need, straight from the C list
    (:func:`list_columns`); the dicts are displays with constant keys (the fastest to build)."""
    fast = _c_pylance_rows(handle, covered)
    if fast is not None:
        return fast
    data = list_columns(handle, _PYLANCE_FIELDS)
    versions = data["version"]
    micros = [int(float(ns)) // 1000 if v > covered and has else ms * 1000  # _pylance_micros
              for v, ms, has, ns in zip(versions, data["timestamp_millis"],
                                         data["has_manifest_details"], data["timestamp_nanos"])]
    with _gc_paused():
        text = [list(map(str, data[k])) for k in SUMMARY_KEYS]
        return [{"version": v, "timestamp": t,
                 "metadata": {"total_fragments": a, "total_data_files": b, "total_files_size": c,
                              "total_deletion_files": d, "total_data_file_rows": e,
                              "total_deletion_file_rows": f, "total_rows": g}}
                for v, t, a, b, c, d, e, f, g in zip(versions, _local_times(micros), *text)]


class VersionList(list):
    """The answer of :meth:`Dataset.versions` / :meth:`Dataset.history`: a list of dicts,
    one per version, sorted by version, that is also an Arrow stream.

    ``versions()``: each dict is exactly pylance 14's ``{"version", "timestamp",
    "metadata"}`` (a naive local-time datetime, the counters as strings), equal with
    ``==`` to what ``lance.LanceDataset.versions()`` returns.

    ``history()``: each dict has pylance's keys -- ``"version"`` (int), ``"timestamp"`` (an *aware* UTC
    :class:`datetime.datetime`; pylance returns a naive local-time one) and ``"metadata"``
    (Lance's seven summary counters as strings) -- plus every column of the Arrow export
    under its name: ``timestamp_millis``, the seven counters as ints, ``is_tagged``,
    ``is_cleaned_up``, ``transaction_uuid``, ``read_version``, ``operation_type``,
    ``transaction_properties`` (a dict), and the manifest details ``manifest_path``,
    ``manifest_size``, ``writer_library``, ``writer_version``, ``data_format``, ``branch``
    (None on main) and ``num_indices``: None unless the call read that version's manifest,
    except ``manifest_path`` of every live version (and ``manifest_size`` when the listing
    gives it) -- as in the CLI's --json.

    Attributes: ``kind`` ("versions" / "history"), ``report`` (:class:`HistoryReport`),
    ``gaps`` (version ranges no readable record accounts for), ``vanished`` (manifests
    skipped because a concurrent cleanup removed them), ``warnings``
    (:class:`DatasetWarning` records, also issued as :class:`LanceverWarning`).

    Being a list, it is taken as a list by the consumers that test for one before they look
    for ``__arrow_c_stream__`` (``pyarrow.table``, ``polars.DataFrame``, DuckDB's replacement
    scan): hand them :meth:`arrow` (``pa.table(h.arrow())``, ``pl.DataFrame(h.arrow())``,
    ``duckdb.sql("from v")`` with ``v = h.arrow()``); ``pa.RecordBatchReader.from_stream(h)``
    takes the list itself.  The Arrow columns keep the C export's types (timestamp_millis is
    ``timestamp[ms, tz=UTC]``, counters ``uint64``).  :meth:`to_pandas` needs pandas.
    A pickled copy is a plain list of the same dicts (the C data stays in the process).
    """

    def __init__(self, rows: List[Dict[str, Any]], *, kind: str, handle: Optional[ListHandle],
                 report: Optional[HistoryReport] = None, gaps: Tuple[Tuple[int, int], ...] = (),
                 vanished: Tuple[str, ...] = (), warnings: Tuple[DatasetWarning, ...] = ()):
        super().__init__(rows)
        self.kind = kind
        self.report = report
        self.gaps = list(gaps)
        self.vanished = list(vanished)
        self.warnings = list(warnings)
        self._handle = handle

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The rows as an Arrow C stream in a PyCapsule named "arrow_array_stream".

        The schema is lancever's (22 columns, see lancever/arrow.h); a requested schema
        is ignored, as the PyCapsule protocol allows."""
        if self._handle is None:
            raise Error("lancever: this list has no C data (an unpickled copy?): "
                        "call versions()/history() in this process")
        return export_list(self._handle, self.kind)

    def arrow(self) -> "ArrowView":
        """The rows as an object that is only an Arrow stream source (not a list), which
        every consumer reads through ``__arrow_c_stream__``, as often as it likes."""
        if self._handle is None:
            raise Error("lancever: this list has no C data (an unpickled copy?): "
                        "call versions()/history() in this process")
        handle, kind = self._handle, self.kind
        return ArrowView(lambda: export_list(handle, kind), f"{kind}: {len(self)} versions")

    def to_pandas(self) -> Any:
        """A pandas DataFrame with one column per Arrow column plus ``timestamp``
        (a UTC datetime64; ``timestamp_millis`` stays int64 milliseconds); nullable integer
        columns use pandas' ``UInt64``.  Built from
        the C export's buffers (numpy), not from the dicts."""
        import numpy as np
        import pandas as pd  # optional dependency (Debian: python3-pandas)
        if self._handle is None:
            return pd.DataFrame(list(self))
        cap = export_list(self._handle, self.kind)
        names, formats, nullable, cols = _arrow.read_numpy_columns(_arrow.stream_from_capsule(cap))
        frame: Dict[str, Any] = {}
        for name, fmt, null, (vals, valid) in zip(names, formats, nullable, cols):
            if fmt == "u":
                if valid is not None:
                    vals = [v if ok else None for v, ok in zip(vals, valid)]
                frame[name] = pd.array(vals, dtype="object")
            elif null and fmt in _arrow.INT64_FORMATS:
                mask = ~valid if valid is not None else np.zeros(len(vals), bool)
                frame[name] = pd.arrays.IntegerArray(vals.copy(), mask)
            elif null:
                mask = ~valid if valid is not None else np.zeros(len(vals), bool)
                frame[name] = pd.arrays.BooleanArray(vals.copy(), mask)
            else:
                frame[name] = vals.copy()
            if name == "version":
                ms = cols[names.index("timestamp_millis")][0]
                frame["timestamp"] = pd.to_datetime(ms, unit="ms", utc=True)
        return pd.DataFrame(frame)

    def __reduce__(self) -> Any:
        return (list, (list(self),))

    def __repr__(self) -> str:
        return f"<lancever.VersionList {self.kind}: {len(self)} versions>"


class ArrowView:
    """An Arrow C stream source over a result already read (:meth:`VersionList.arrow`):
    each ``__arrow_c_stream__`` call exports a fresh stream, so it may be read many times and
    by consumers that ask twice (DuckDB reads the schema, then the data)."""

    def __init__(self, export: Any, what: str):
        self._export = export
        self._what = what

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """A new PyCapsule "arrow_array_stream" (a requested schema is ignored, as the
        PyCapsule protocol allows)."""
        return self._export()

    def __repr__(self) -> str:
        return f"<lancever.ArrowView {self._what}>"


class ArrowStream:
    """A one-shot Arrow C stream from the library (``Dataset.history_stream()`` and
    friends): hand it to ``pyarrow.table()`` or ``polars.DataFrame()`` once.  DuckDB asks
    for a stream twice (schema, then data): give it :meth:`VersionList.arrow` instead."""

    def __init__(self, capsule: Any, report: Optional[HistoryReport],
                 warnings: Tuple[DatasetWarning, ...]):
        self._capsule = capsule
        self.report = report
        self.warnings = list(warnings)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        if self._capsule is None:
            raise Error("lancever: this ArrowStream was already consumed")
        cap, self._capsule = self._capsule, None
        return cap


@dataclass(frozen=True)
class CheckpointResult:
    """What :meth:`Dataset.checkpoint` did (lancever/checkpoint.h lv_checkpoint_result)."""

    written: bool
    already_present: bool
    path: Optional[str]
    latest_version: int
    entries: int
    new_entries: int
    file_size: int
    files_pruned: int
    files_quarantined: int     #: damaged checkpoints moved aside (never deleted)
    unrecorded_versions: int   #: versions in the covered range the file has no row for
    previous: HistoryReport
    warnings: List[DatasetWarning] = field(default_factory=list)


@dataclass(frozen=True)
class CleanupStats:
    """What a cleanup removed (or, in a dry run, would remove).

    Lance's fields first (``bytes_removed`` counts every removed file, manifests
    included, as Lance does; ``old_versions`` the removed versions), then lancever's.
    """

    bytes_removed: int
    old_versions: int
    data_files_removed: int
    transaction_files_removed: int
    index_files_removed: int
    deletion_files_removed: int
    # lancever's own
    dry_run: bool
    versions_total: int           #: manifests listed
    versions_archived: int        #: rows of the checkpoint written before deleting
    checkpoint_written: bool
    checkpoint_path: Optional[str]
    manifests_removed: int
    temp_files_removed: int
    files_removed: int            #: every kind
    files_removed_by_kind: Dict[str, int]
    bytes_removed_by_kind: Dict[str, int]
    warnings: List[DatasetWarning] = field(default_factory=list)
    failed_deletes: int = 0       #: files the store refused to delete (Lance 14's field)

    @property
    def versions_removed(self) -> int:
        """The removed versions under lancever's one name (C ``lv_cleanup_stats``, the CLI's
        JSON, the Arrow metadata); ``old_versions`` is pylance's name of the same count."""
        return self.old_versions

    @staticmethod
    def from_c(s: _lib.CleanupStats, dry_run: bool, warnings: List[DatasetWarning]) -> "CleanupStats":
        files = {k: s.files_removed[i] for i, k in enumerate(_lib.KIND_NAMES)}
        nbytes = {k: s.bytes_removed[i] for i, k in enumerate(_lib.KIND_NAMES)}
        return CleanupStats(
            bytes_removed=sum(nbytes.values()), old_versions=s.versions_removed,
            data_files_removed=files["data"], transaction_files_removed=files["transaction"],
            index_files_removed=files["index"], deletion_files_removed=files["deletion"],
            dry_run=dry_run, versions_total=s.versions_total,
            versions_archived=s.versions_archived, checkpoint_written=s.checkpoint_written,
            checkpoint_path=s.checkpoint_path.decode() if s.checkpoint_written else None,
            manifests_removed=files["manifest"], temp_files_removed=files["temp"],
            files_removed=sum(files.values()), files_removed_by_kind=files,
            bytes_removed_by_kind=nbytes, warnings=warnings, failed_deletes=s.failed_deletes)


@dataclass(frozen=True)
class CandidateFile:
    """A file a cleanup would remove (Lance's CleanupExplanation candidate, plus the reason)."""

    path: str
    kind: str          #: "manifest", "data", "deletion", "index", "transaction", "temp"
    size_bytes: int
    reason: str        #: why it goes, e.g. "referenced only by removed versions"
    unverified: bool   #: Lance's flag, from the library: no removed manifest vouches for it


@dataclass
class CleanupExplanation:
    """What :meth:`Dataset.cleanup_old_versions` would do, from a dry run (shaped like
    Lance's ``CleanupExplanation``: pylance 14's fields, then lancever's
    ``dataset_warnings``).  Also an Arrow stream of the candidate files."""

    stats: CleanupStats
    candidate_files: List[CandidateFile]
    candidate_files_truncated: bool
    candidate_file_limit: Optional[int]
    referenced_branches: List[str]
    warnings: List[str]     #: as pylance: "candidate_files truncated to N entries", then the
                            #: messages of the warnings the library recorded
    read_version: int = 0   #: the latest version the plan was made against (Lance's field)
    dataset_warnings: List[DatasetWarning] = field(default_factory=list)  #: the records

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        files = (_lib.CleanupFile * max(1, len(self.candidate_files)))()
        kinds = {k: i for i, k in enumerate(_lib.KIND_NAMES)}
        keep = []
        for i, f in enumerate(self.candidate_files):
            p = _check.text(f"candidate_files[{i}].path", f.path)
            r = _check.text(f"candidate_files[{i}].reason", f.reason)
            if f.kind not in kinds:
                raise InvalidArgumentError(f"lancever: candidate_files[{i}].kind is not one of "
                                           f"{', '.join(_lib.KIND_NAMES)}")
            keep += [p, r]
            files[i] = _lib.new(_lib.CleanupFile, path=p, kind=kinds[f.kind],
                                     size=_check.integer(f"candidate_files[{i}].size_bytes",
                                                         f.size_bytes, _check.U64),
                                     reason=r)
        st = self.stats
        stats = _lib.new(_lib.CleanupStats, versions_total=st.versions_total,
                              versions_removed=st.old_versions,
                              versions_archived=st.versions_archived)
        for i, k in enumerate(_lib.KIND_NAMES):
            stats.files_removed[i] = _check.integer("files_removed", st.files_removed_by_kind[k],
                                                    _check.U64)
            stats.bytes_removed[i] = _check.integer("bytes_removed", st.bytes_removed_by_kind[k],
                                                    _check.U64)

        def fill(ptr: int) -> None:
            err = _lib.LvError()
            rc = _lib.lib().lv_cleanup_files_arrow_stream(
                ctypes.cast(ptr, ctypes.POINTER(_lib.ArrowArrayStream)), files,
                len(self.candidate_files), ctypes.byref(stats), True, None, ctypes.byref(err))
            if rc < 0:
                    raise error_for(rc, err.message.decode("utf-8", "replace"))
        return _arrow.stream_capsule(fill)


def rfc3339(text: Optional[bytes]) -> Optional[datetime]:
    """A tag's RFC 3339 time ("2026-12-04T23:02:57.586718934Z") as an aware datetime, the
    fraction cut to microseconds as pylance cuts it; None when absent or unparsable."""
    if not text:
        return None
    t = text.decode("utf-8", "replace").replace("Z", "+00:00").replace("z", "+00:00")
    m = re.fullmatch(r"([^.+]*)(?:\.(\d+))?([+-]\d\d:\d\d)?", t)
    if m is None:
        return None
    frac = (m.group(2) or "")[:6].ljust(6, "0")
    try:
        d = datetime.fromisoformat(f"{m.group(1)}.{frac}{m.group(3) or '+00:00'}")
    except ValueError:
        return None
    return d.astimezone(UTC)


class Tags:
    """The dataset's tags (``Dataset.tags``), shaped like pylance's ``Tags`` (read-only).

    ``list()`` gives pylance 14's ``{name: {"branch", "version", "created_at",
    "updated_at", "manifest_size", "metadata"}}`` (times as aware UTC datetimes,
    ``metadata`` the tag's dict of strings); the object is also an Arrow stream of tags and branches
    (columns kind, name, version, branch, manifest_size, created_at)."""

    def __init__(self, refs_ptr: int, warnings: List[DatasetWarning]):
        self._ptr = refs_ptr
        self.warnings = warnings
        weakref.finalize(self, _lib.lib().lv_refs_free, refs_ptr)
        lib = _lib.lib()
        self._tags: Dict[str, Dict[str, Any]] = {}
        for i in range(lib.lv_refs_tag_count(refs_ptr)):
            t = _lib.Tag.from_address(lib.lv_refs_tag(refs_ptr, i))
            self._tags[t.name.decode()] = {
                "branch": t.branch.decode() if t.branch else None, "version": t.version,
                "created_at": rfc3339(t.created_at), "updated_at": rfc3339(t.updated_at),
                "manifest_size": t.manifest_size or None,
                "metadata": json.loads(t.metadata) if t.metadata else {}}
        self._branches: Dict[str, Dict[str, Any]] = {}
        for i in range(lib.lv_refs_branch_count(refs_ptr)):
            b = _lib.Branch.from_address(lib.lv_refs_branch(refs_ptr, i))
            self._branches[b.name.decode()] = {
                "parent_branch": b.parent_branch.decode() if b.parent_branch else None,
                "parent_version": b.parent_version,
                "create_at": datetime.fromtimestamp(b.create_at, UTC) if b.create_at else None,
                "manifest_size": b.manifest_size or None}

    def list(self) -> Dict[str, Dict[str, Any]]:
        """Every tag, as pylance 14's ``Tags.list()``: {name: {branch, version, created_at,
        updated_at, manifest_size, metadata}}."""
        return {k: dict(v) for k, v in self._tags.items()}

    def get_version(self, tag: str) -> int:
        """The version `tag` points at (NotFoundError if there is no such tag)."""
        if not isinstance(tag, str):
            raise TypeError(f"lancever: tag wants a str, not {type(tag).__name__}")
        if tag not in self._tags:
            raise NotFoundError(f"lancever: no tag named {tag!r}")
        return self._tags[tag]["version"]

    def branches(self) -> Dict[str, Dict[str, Any]]:
        """Every branch: {name: {parent_branch, parent_version, create_at, manifest_size}}."""
        return {k: dict(v) for k, v in self._branches.items()}

    def __len__(self) -> int:
        return len(self._tags)

    def __iter__(self) -> Iterator[str]:
        return iter(self._tags)

    def __contains__(self, name: object) -> bool:
        return name in self._tags

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        def fill(ptr: int) -> None:
            err = _lib.LvError()
            rc = _lib.lib().lv_refs_arrow_stream(
                ctypes.cast(ptr, ctypes.POINTER(_lib.ArrowArrayStream)), self._ptr, None,
                ctypes.byref(err))
            if rc < 0:
                    raise error_for(rc, err.message.decode("utf-8", "replace"))
        return _arrow.stream_capsule(fill)

    def __repr__(self) -> str:
        return f"<lancever.Tags {sorted(self._tags)}>"
