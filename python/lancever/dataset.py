"""lancever.Dataset: a Lance dataset's version history, through liblancever."""

from __future__ import annotations

import ctypes
import os
import threading
import warnings as _warnings
import weakref
from datetime import datetime, timedelta, timezone
from typing import (TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple,
                    Union)

from . import _arrow, _check, _lib

if TYPE_CHECKING:
    from .capture import Capture
from ._interrupt import Guard
from .errors import (Error, InvalidArgumentError, LanceverWarning, NotFoundError,
                     error_for)
from .results import (EPOCH, ArrowStream, CandidateFile, CheckpointResult,
                      CleanupExplanation, CleanupStats, DatasetWarning, HistoryReport, ListHandle,
                      Tags, VersionList, pylance_rows, read_list_columns, rows_from_columns,
                      warning_from_c)

PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
TimeLike = Union[datetime, str, int]
#: A version as pylance names one: a number (on this dataset's branch), a tag name, or
#: ``(branch, version)`` (branch None or "main" = main; version None = that branch's latest).
VersionRef = Union[int, str, Tuple[Optional[str], Optional[int]]]

#: pylance's default when cleanup_old_versions is given no policy.
DEFAULT_OLDER_THAN = timedelta(days=14)

# Datasets alive in this process, so that a fork()ed child gets fresh locks (a lock held by
# another thread at fork time would otherwise stay held in the child forever).
_LIVE: "weakref.WeakSet[Dataset]" = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for ds in list(_LIVE):
        ds._lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _to_bool(key: str, v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.lower() in ("true", "false", "1", "0"):
        return v.lower() in ("true", "1")
    raise InvalidArgumentError(f"lancever: storage option {key!r} wants true or false, got {v!r}")


class _StorageOptions:
    """LanceDB-style storage_options as the library's bag (lv_storage_options_new/_set/_free):
    every key/value pair handed over as text, in the mapping's order (the library knows
    LanceDB's and Lance's option names, refuses an unknown one by name, and ignores those that
    say where an object store is for a local path, as Lance does).  Values are never put into
    messages.  A context manager: the bag is freed on exit (the library copied what it needs)."""

    def __init__(self, opts: Optional[Mapping[str, Any]]):
        if opts is not None and not isinstance(opts, Mapping):
            raise TypeError(f"lancever: storage_options wants a mapping, not {type(opts).__name__}")
        pairs = []
        for key, value in (opts or {}).items():
            if not isinstance(key, str):
                raise TypeError(f"lancever: storage option keys are str, not {type(key).__name__}")
            kb = _check.text(f"storage option key {key!r}" if "\0" not in key else "a storage option key",
                             key, empty=False)
            if key in ("allow_http", "aws_allow_http"):
                value = _to_bool(key, value)
            if isinstance(value, bool):
                value = "true" if value else "false"
            elif isinstance(value, int):
                value = str(value)
            pairs.append((kb, _check.text(f"the value of storage option {key!r}", value)))
        self.ptr: Optional[int] = None
        if not pairs:
            return
        lib, out, err = _lib.lib(), ctypes.c_void_p(), _lib.LvError()
        self._fail(lib.lv_storage_options_new(ctypes.byref(out), ctypes.byref(err)), err)
        self.ptr = out.value
        for kb, vb in pairs:
            self._fail(lib.lv_storage_options_set(self.ptr, kb, vb, ctypes.byref(err)), err)

    def _fail(self, rc: int, err: "_lib.LvError") -> None:
        if rc < 0:
            self.close()
            raise error_for(rc, err.message.decode("utf-8", "replace"))

    def close(self) -> None:
        if self.ptr:
            _lib.lib().lv_storage_options_free(self.ptr)
            self.ptr = None

    def __enter__(self) -> "_StorageOptions":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _ms(when: TimeLike) -> int:
    """A point in time as ms since the epoch: an int (ms), an ISO 8601 string (no zone =
    UTC, lancever's rule) or a datetime (aware; naive means local time, as in Python's
    datetime.timestamp() and pylance)."""
    if isinstance(when, datetime):
        aware = when if when.tzinfo else when.astimezone()
        return _check.integer("when", (aware - EPOCH) // timedelta(milliseconds=1), _check.I64)
    if isinstance(when, str):
        b = _check.text("when", when, empty=False)
        if b.isdigit():  # ASCII digits only: ms since the epoch, as the CLI reads them
            return _check.integer("when", int(b), _check.I64)
        out = ctypes.c_int64()
        err = _lib.LvError()
        rc = _lib.lib().lv_parse_time(b, ctypes.byref(out), ctypes.byref(err))
        if rc < 0:
            raise error_for(rc, err.message.decode("utf-8", "replace"))
        return out.value
    if isinstance(when, bool) or not hasattr(type(when), "__index__"):
        raise TypeError(f"lancever: when wants a datetime, ISO 8601 string or ms, "
                        f"not {type(when).__name__}")
    return _check.integer("when", when, _check.I64)


class Dataset:
    """A Lance dataset's version history, read by liblancever.

    ``Dataset(uri, *, branch=None, storage_options=None)`` opens the dataset at ``uri``
    (a path, ``file://``, or ``s3://bucket/path``) on ``branch`` (None = main).  Nothing
    is read until a method is called.

    :func:`lancever.dataset` opens one as ``lance.dataset`` does (also from a
    ``lance.LanceDataset``).  Methods that overlap pylance 14's ``LanceDataset`` have its
    names, signatures and answers: :meth:`versions` (``==`` pylance's), :attr:`tags`,
    :attr:`version`, :attr:`latest_version`, :meth:`checkout_version`,
    :meth:`cleanup_old_versions`, :meth:`explain_cleanup_old_versions`; a version is an
    int, a tag name or ``(branch, version)`` wherever one is taken.  lancever adds
    :meth:`history` (every version ever recorded, cleaned-up ones included, the richer
    record), :meth:`version_as_of`, :meth:`show`, :meth:`diff` and :meth:`checkpoint`.

    Time zones: :meth:`versions` gives pylance's naive local-time datetimes;
    :meth:`history` and :meth:`show` give *aware* UTC ones.

    Threads and processes: each call releases the GIL while the library works, so
    several threads can read several datasets in parallel.  Calls on one Dataset are
    serialized by a lock (the handle is not re-entrant): use one Dataset per thread for
    parallelism.  After ``fork()`` the child may keep using the Datasets it inherited
    (their locks are re-created) or open new ones; libcurl and libcrypto are loaded on
    the first ``s3://`` use in each process, never at import.  Every warning the library
    records (a rejected checkpoint, a vanished manifest, a gap in history) is issued as
    a :class:`LanceverWarning` and kept on the result's ``warnings``.
    """

    def __init__(self, uri: PathLike, *, branch: Optional[str] = None,
                 storage_options: Optional[Mapping[str, Any]] = None,
                 threads: Optional[int] = None, version: Optional[int] = None):
        self._ptr: Optional[int] = None
        self._checked_out = _check.optional_integer("version", version, _check.POSITIVE_U64)
        self._threads = threads
        self._lock = threading.Lock()
        self._uri, uri_bytes = _check.path("uri", uri)
        b = None if branch is None else _check.text("branch", branch) or None
        self._branch = branch or None
        nthreads = _check.optional_integer("threads", threads, (1, 256))
        self._storage_options = dict(storage_options or {})
        lib = _lib.lib()
        out = ctypes.c_void_p()
        err = _lib.LvError()
        with _StorageOptions(storage_options) as storage:
            opts = _lib.new(_lib.OpenOptions, threads=nthreads or 0, branch=b,
                                 storage=storage.ptr)
            rc = lib.lv_dataset_open(ctypes.byref(out), uri_bytes, ctypes.byref(opts),
                                     ctypes.byref(err))
        if rc < 0:
            raise error_for(rc, err.message.decode("utf-8", "replace"))
        self._ptr = out.value
        self._storage = lib.lv_dataset_storage(self._ptr)
        self._finalizer = weakref.finalize(self, lib.lv_dataset_free, self._ptr)
        _LIVE.add(self)

    # ---- plumbing ----

    @property
    def uri(self) -> str:
        """The URI the dataset was opened with."""
        return self._uri

    @property
    def branch(self) -> Optional[str]:
        """The branch (None = main)."""
        return self._branch

    @property
    def latest_version(self) -> int:
        """The newest live version of this branch (pylance's ``latest_version``)."""
        rows = self._list("lv_versions", "versions")
        if not rows:
            raise NotFoundError(f"lancever: {self._uri} has no live version")
        return rows[-1]["version"]

    @property
    def version(self) -> int:
        """The checked-out version (pylance's ``version``): the one given to
        :func:`dataset` / :meth:`checkout_version`, else the latest."""
        return self._checked_out if self._checked_out is not None else self.latest_version

    def close(self) -> None:
        """Releases the C handle now (results already returned stay valid)."""
        with self._lock:
            if self._ptr is not None:
                self._finalizer()
                self._ptr = None

    def __enter__(self) -> "Dataset":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        br = f", branch={self._branch!r}" if self._branch else ""
        return f"lancever.Dataset({self._uri!r}{br})"

    def _call(self, fn: Callable[..., int], *args: Any) -> List[DatasetWarning]:
        """Runs one C call (GIL released) under the lock; raises its error; issues and
        returns the warnings it recorded."""
        lib = _lib.lib()
        err = _lib.LvError()
        with self._lock:
            if self._ptr is None:
                raise Error("lancever: the dataset is closed")
            lib.lv_dataset_clear_warnings(self._ptr)
            try:
                with Guard(self._storage):  # Ctrl-C: stop at the next storage operation
                    rc = fn(self._ptr, *args, ctypes.byref(err))
            except KeyboardInterrupt:
                lib.lv_dataset_clear_warnings(self._ptr)  # the interruption's, not the data's
                raise
            found = [warning_from_c(_lib.Warning_.from_address(lib.lv_dataset_warning(self._ptr, i)))
                     for i in range(lib.lv_dataset_warning_count(self._ptr))]
        for w in found:
            _warnings.warn(LanceverWarning(w.message), stacklevel=3)
        if rc < 0:
            e = error_for(rc, err.message.decode("utf-8", "replace"))
            e.warnings = found  # type: ignore[attr-defined]
            raise e
        return found

    def _list(self, fn_name: str, kind: str) -> VersionList:
        lib = _lib.lib()
        out = ctypes.c_void_p()
        rep = _lib.new(_lib.HistoryReport)
        fn = getattr(lib, fn_name)
        found = self._call(lambda ds, *a: fn(ctypes.byref(out), ds, ctypes.byref(rep), *a))
        return self._wrap(out.value, kind, HistoryReport.from_c(rep), found)

    @staticmethod
    def _wrap(ptr: int, kind: str, report: Optional[HistoryReport],
              found: List[DatasetWarning]) -> VersionList:
        return Dataset._wrap_handle(ListHandle(ptr), kind, report, found, None)

    @staticmethod
    def _wrap_handle(handle: ListHandle, kind: str, report: Optional[HistoryReport],
                     found: List[DatasetWarning],
                     rows: Optional[List[Dict[str, Any]]]) -> VersionList:
        lib = _lib.lib()
        ptr = handle.ptr
        gaps = []
        for i in range(lib.lv_version_list_gap_count(ptr)):
            a, b = ctypes.c_uint64(), ctypes.c_uint64()
            if lib.lv_version_list_gap(ptr, i, ctypes.byref(a), ctypes.byref(b)):
                gaps.append((a.value, b.value))
        vanished = tuple(lib.lv_version_list_vanished(ptr, i).decode()
                         for i in range(lib.lv_version_list_vanished_count(ptr)))
        if rows is None:
            rows = rows_from_columns(read_list_columns(handle, kind))
        return VersionList(rows, kind=kind, handle=handle, report=report, gaps=tuple(gaps),
                           vanished=vanished, warnings=tuple(found))

    def _stream(self, fn_name: str, batch_rows: int) -> ArrowStream:
        lib = _lib.lib()
        rep = _lib.new(_lib.HistoryReport)
        found: List[DatasetWarning] = []
        opts = _lib.new(_lib.ArrowOptions, batch_rows=_check.integer("batch_rows", batch_rows, _check.SIZE),
                             batch_bytes=0)

        def fill(ptr: int) -> None:
            fn = getattr(lib, fn_name)
            s = ctypes.cast(ptr, ctypes.POINTER(_lib.ArrowArrayStream))
            found.extend(self._call(lambda ds, *a: fn(s, ds, ctypes.byref(opts), ctypes.byref(rep), *a)))
        cap = _arrow.stream_capsule(fill)
        return ArrowStream(cap, HistoryReport.from_c(rep), tuple(found))

    # ---- history ----

    def versions(self) -> VersionList:
        """Every live version (one readable manifest in ``_versions/``), sorted, exactly as
        pylance 14's ``LanceDataset.versions()`` returns them: dicts ``{"version": int,
        "timestamp": naive local-time datetime, "metadata": {counter: str}}``, equal with
        ``==``.  Answered from the newest checkpoint plus the manifests newer than it when
        there is one; a version the checkpoint answers for has its time to the millisecond
        (the checkpoint keeps ms), a manifest read now to the microsecond, as pylance.
        :meth:`history` has the richer record (aware UTC times, every column); the result
        is also an Arrow source of those columns through ``.arrow()`` (``pyarrow.table(ds.versions().arrow())``:
        pyarrow, polars and DuckDB take a list as rows before they look for a stream)."""
        lib = _lib.lib()
        out = ctypes.c_void_p()
        rep = _lib.new(_lib.HistoryReport)
        found = self._call(lambda ds, *a: lib.lv_versions(ctypes.byref(out), ds,
                                                          ctypes.byref(rep), *a))
        handle = ListHandle(out.value)
        report = HistoryReport.from_c(rep)
        rows = pylance_rows(handle, report.checkpoint_version)
        return self._wrap_handle(handle, "versions", report, found, rows)

    def history(self) -> VersionList:
        """Every version ever recorded: checkpoint rows plus live manifests, with
        ``is_cleaned_up`` set for versions whose manifests a cleanup removed (their
        manifest columns are None).  ``gaps`` lists ranges nothing recorded."""
        return self._list("lv_history", "history")

    def versions_stream(self, *, batch_rows: int = 0) -> ArrowStream:
        """:meth:`versions` as a one-shot Arrow stream, straight from the C export (no
        Python objects per row): ``pyarrow.table(ds.versions_stream())``."""
        return self._stream("lv_versions_arrow_stream", batch_rows)

    def history_stream(self, *, batch_rows: int = 0) -> ArrowStream:
        """:meth:`history` as a one-shot Arrow stream, straight from the C export."""
        return self._stream("lv_history_arrow_stream", batch_rows)

    def version_as_of(self, when: TimeLike, strict: bool = False) -> Dict[str, Any]:
        """The newest version committed at or before ``when`` (strictly before with
        ``strict=True``, what pylance's ``asof`` does), as a row dict; exact even when
        timestamps go backwards.  ``when``: an aware datetime, a naive one (local time), an
        ISO 8601 string (no zone = UTC) or ms since the epoch.  A result with
        ``is_cleaned_up`` can no longer be checked out.  NotFoundError if none qualifies."""
        ms = _ms(when)
        strict = _check.flag("strict", strict)
        out = ctypes.c_void_p()
        rep = _lib.new(_lib.HistoryReport)
        fn = _lib.lib().lv_version_as_of
        found = self._call(lambda ds, *a: fn(ctypes.byref(out), ds, ms, strict, ctypes.byref(rep), *a))
        rows = self._wrap(out.value, "history", HistoryReport.from_c(rep), found)
        row = dict(rows[0])
        row["checkout_possible"] = not row["is_cleaned_up"]
        return row

    def _resolve(self, name: str, ref: Any) -> Tuple[Optional[str], Optional[int]]:
        """A :data:`VersionRef` as (branch, version or None = latest), as pylance reads
        one: an int is a version of this dataset's branch, a str a tag name (NotFoundError
        if no such tag), a 2-tuple ``(branch, version)`` ("main" and None = main)."""
        if isinstance(ref, str):
            _check.text(name, ref, empty=False)
            tags = self.tags
            if ref not in tags:
                raise NotFoundError(f"lancever: {name}: no tag named {ref!r}")
            t = tags.list()[ref]
            return t["branch"], t["version"]
        if isinstance(ref, tuple):
            if len(ref) != 2:
                raise TypeError(f"lancever: {name} wants (branch, version), "
                                f"not a {len(ref)}-tuple")
            br, v = ref
            if br is not None:
                br = None if _check.text(f"{name}'s branch", br) in (b"", b"main") else br
            return br, _check.optional_integer(f"{name}'s version", v, _check.VERSION)
        if isinstance(ref, bool) or not hasattr(type(ref), "__index__"):
            raise TypeError(f"lancever: {name} wants an int, a tag name or (branch, version), "
                            f"not {type(ref).__name__}")
        return self._branch, _check.integer(name, ref, _check.VERSION)

    def _on(self, branch: Optional[str], version: Optional[int] = None) -> "Dataset":
        """A Dataset on `branch` of the same dataset (self when it is this one)."""
        if branch == self._branch and version == self._checked_out:
            return self
        return Dataset(self._uri, branch=branch, storage_options=self._storage_options,
                       threads=self._threads, version=version)

    def checkout_version(self, version: VersionRef) -> "Dataset":
        """A Dataset checked out at ``version`` (an int, a tag name or ``(branch,
        version)``, as pylance's ``checkout_version``); NotFoundError if it is not live."""
        branch, v = self._resolve("version", version)
        ds = self._on(branch, None)
        if v is None:
            v = ds.latest_version
        elif not any(r["version"] == v for r in ds._list("lv_versions", "versions")):
            raise NotFoundError(f"lancever: version {v} is not a live version"
                                + (f" of branch {branch!r}" if branch else ""))
        return ds._on(branch, v)

    def show(self, version: VersionRef) -> Dict[str, Any]:
        """One version's record: from its manifest when it is live (with the manifest's
        ``config``, ``transaction_file``, feature flags and ``timestamp_nanos``), else from
        the checkpoint history (``source`` says which).  ``version``: an int, a tag name
        (``show("indexed")``) or ``(branch, version)``, as pylance takes them.
        NotFoundError if neither has it."""
        branch, version = self._resolve("version", version)
        if branch != self._branch or version is None:
            other = self._on(branch)
            return other.show(other.latest_version if version is None else version)
        lib = _lib.lib()
        out = ctypes.c_void_p()
        source = ctypes.c_int()
        found = self._call(lambda ds, *a: lib.lv_show(ctypes.byref(out), ds, version,
                                                      ctypes.byref(source), *a))
        if source.value != _lib.SHOW_MANIFEST:  # the row the history records
            return dict(self._wrap(out.value, "history", None, found)[0], source="checkpoint")
        rows = self._wrap(out.value, "versions", None, found)
        row = dict(rows[0], source="manifest")
        v = _lib.VersionInfo.from_address(lib.lv_version_list_get(out.value, 0))
        n = v.num_config
        keys = (ctypes.c_char_p * n).from_address(v.config_keys) if n else ()
        vals = (ctypes.c_char_p * n).from_address(v.config_values) if n else ()
        row["config"] = {keys[i].decode(): vals[i].decode() for i in range(n)}
        row["transaction_file"] = v.transaction_file.decode() if v.transaction_file else None
        row["reader_feature_flags"] = v.reader_feature_flags
        row["writer_feature_flags"] = v.writer_feature_flags
        row["timestamp_nanos"] = v.timestamp_nanos
        return row

    def diff(self, a: VersionRef, b: VersionRef) -> Dict[str, Any]:
        """What changed between versions ``a`` and ``b`` (both recorded in this branch's
        history; each an int, a tag name or ``(branch, version)`` of this branch): the
        summary counters ``{"from", "to", "delta"}`` each, and ``ms_between``."""
        refs = []
        for name, ref in (("a", a), ("b", b)):
            br, v = self._resolve(name, ref)
            if br != self._branch:
                raise InvalidArgumentError(f"lancever: {name} names a version of branch "
                                           f"{br or 'main'!r}; diff compares one branch")
            refs.append(self.latest_version if v is None else v)
        a, b = refs
        lib = _lib.lib()
        d = ctypes.c_void_p()
        self._call(lambda ds, *e: lib.lv_diff_versions(ctypes.byref(d), ds, a, b, *e))
        try:
            out: Dict[str, Any] = {"from": a, "to": b, "ms_between": lib.lv_diff_ms_between(d)}
            name, x, y, delta = ctypes.c_char_p(), ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_int64()
            for i in range(lib.lv_diff_count(d)):
                lib.lv_diff_counter(d, i, ctypes.byref(name), ctypes.byref(x), ctypes.byref(y),
                                    ctypes.byref(delta))
                out[name.value.decode()] = {"from": x.value, "to": y.value, "delta": delta.value}
            return out
        finally:
            lib.lv_diff_free(d)

    @property
    def tags(self) -> Tags:
        """Tags (and branches), read now: ``ds.tags.list()`` as in pylance."""
        out = ctypes.c_void_p()
        found = self._call(lambda ds, *a: _lib.lib().lv_refs_load(ctypes.byref(out), ds, *a))
        return Tags(out.value, found)

    # ---- writing: capture, checkpoint and cleanup ----

    def capture(self, flush_interval: Union[float, int, timedelta, None] = None) -> "Capture":
        """An incremental capture of this dataset (:class:`lancever.Capture`): ``poll()``
        reads new manifests at once and holds their records, ``flush()`` writes them as a
        checkpoint, so versions a later cleanup removes stay in :meth:`history`.
        ``flush_interval`` (seconds or a timedelta; None = 1 s) is when ``due`` turns true."""
        from .capture import Capture
        return Capture(self, flush_interval)

    def checkpoint(self, max_entries: Optional[int] = None, *, max_files: Optional[int] = None,
                   enabled: Optional[bool] = None) -> CheckpointResult:
        """Writes a checkpoint of the current history (never a new dataset version).
        ``max_entries`` / ``max_files`` / ``enabled`` override the dataset's
        ``lance.version_checkpoint.*`` config (defaults 10000, 2, true)."""
        enabled = _check.optional_flag("enabled", enabled)
        max_entries = _check.optional_integer("max_entries", max_entries, _check.POSITIVE_I64)
        max_files = _check.optional_integer("max_files", max_files, _check.POSITIVE_I64)
        cfg = _lib.new(_lib.CheckpointConfig, enabled=-1 if enabled is None else int(enabled),
                            max_entries=-1 if max_entries is None else max_entries,
                            max_checkpoint_files=-1 if max_files is None else max_files)
        rep = _lib.new(_lib.HistoryReport)
        res = _lib.new(_lib.CheckpointResult, report=rep)
        fn = _lib.lib().lv_checkpoint_write
        found = self._call(lambda ds, *a: fn(ds, ctypes.byref(cfg), None, 0, ctypes.byref(res), *a))
        return CheckpointResult(res.written, res.already_present,
                                res.path.decode() if res.written else None, res.latest_version,
                                res.entries, res.new_entries, res.file_size, res.files_pruned,
                                res.files_quarantined, res.unrecorded_versions,
                                HistoryReport.from_c(rep), found)

    def _cleanup(self, older_than: Optional[timedelta], retain_versions: Optional[int],
                 delete_unverified: bool, error_if_tagged_old_versions: bool, dry_run: bool,
                 before_version: Optional[int], checkpoint: bool,
                 progress: Optional[Callable[[str, int, int], None]],
                 on_file: Optional[Callable[[str, str, int, str], None]],
                 versions: Optional[Sequence[int]] = None,
                 clean_referenced_branches: bool = False,
                 on_branch: Optional[Callable[[str, int, bool], None]] = None,
                 rate_limit: Optional[int] = None,
                 on_candidate: Optional[Callable[[CandidateFile], None]] = None,
                 on_plan: Optional[Callable[[int], None]] = None) -> CleanupStats:
        if older_than is not None and not isinstance(older_than, timedelta):
            raise TypeError("lancever: older_than wants a datetime.timedelta")
        older_ms = None if older_than is None else _check.integer(
            "older_than (in ms)", older_than // timedelta(milliseconds=1), _check.NON_NEGATIVE_I64)
        retain_versions = _check.optional_integer("retain_versions", retain_versions,
                                                  _check.POSITIVE_I64)
        before_version = _check.optional_integer("before_version", before_version,
                                                 _check.POSITIVE_U64)
        for name, v in (("delete_unverified", delete_unverified),
                        ("error_if_tagged_old_versions", error_if_tagged_old_versions),
                        ("dry_run", dry_run), ("checkpoint", checkpoint),
                        ("clean_referenced_branches", clean_referenced_branches)):
            _check.flag(name, v)
        _check.callback("progress", progress)
        vs: Optional[List[int]] = None
        if versions is not None:
            if isinstance(versions, (str, bytes)) or not hasattr(versions, "__iter__"):
                raise TypeError(f"lancever: versions wants a sequence of ints, "
                                f"not {type(versions).__name__}")
            vs = [_check.integer(f"versions[{i}]", v, _check.POSITIVE_U64)
                  for i, v in enumerate(versions)]
            if not vs:
                raise InvalidArgumentError("lancever: versions must not be empty when specified")
        # pylance's rule: the default age applies only when no condition is given, and an
        # exact version list is one (found by the Lance 14 twin test)
        if older_ms is None and retain_versions is None and before_version is None and vs is None:
            older_ms = DEFAULT_OLDER_THAN // timedelta(milliseconds=1)
        pol = _lib.new(
            _lib.CleanupPolicy, older_than_ms=-1 if older_ms is None else older_ms,
            retain_versions=-1 if retain_versions is None else retain_versions,
            before_version=before_version or 0, delete_unverified=delete_unverified,
            error_if_tagged_old_versions=error_if_tagged_old_versions, dry_run=dry_run,
            checkpoint=_lib.new(_lib.CheckpointConfig, enabled=-1 if checkpoint else 0),
            clean_referenced_branches=clean_referenced_branches,
            delete_rate_limit=float(rate_limit or 0))
        if vs is not None:
            varr = (_lib.c_u64 * len(vs))(*vs)
            pol.versions = varr
            _check.assign(pol, "nversions", len(vs))
        raised: List[BaseException] = []

        def branch_cb(name: bytes, version: int, cascade: bool, _p: Any) -> None:
            try:
                if on_branch is not None:
                    on_branch(name.decode("utf-8", "replace"), version, bool(cascade))
            except BaseException as e:
                raised.append(e)

        def file_cb(path: bytes, kind: int, size: int, reason: bytes, _p: Any) -> None:
            try:
                if on_file is not None:
                    on_file(path.decode("utf-8", "replace"), _lib.KIND_NAMES[kind], size,
                            (reason or b"").decode("utf-8", "replace"))
            except BaseException as e:  # a callback cannot unwind through C
                raised.append(e)

        def progress_cb(phase: bytes, done: int, total: int, _p: Any) -> None:
            try:
                if progress is not None:
                    progress(phase.decode(), done, total)
            except BaseException as e:
                raised.append(e)
        def candidate_cb(c: Any, _p: Any) -> None:
            try:
                if on_candidate is not None:
                    f = _lib.CleanupCandidate.from_address(c)
                    on_candidate(CandidateFile(f.path.decode("utf-8", "replace"),
                                               _lib.KIND_NAMES[f.kind], f.size,
                                               (f.reason or b"").decode("utf-8", "replace"),
                                               bool(f.unverified)))
            except BaseException as e:
                raised.append(e)

        def plan_cb(read_version: int, _total: int, _selected: int, _p: Any) -> None:
            try:
                if on_plan is not None:
                    on_plan(read_version)
            except BaseException as e:
                raised.append(e)
        pol.on_candidate = _lib.CLEANUP_CANDIDATE_CB(candidate_cb)
        pol.on_plan = _lib.CLEANUP_PLAN_CB(plan_cb)
        pol.on_file = _lib.CLEANUP_FILE_CB(file_cb)
        pol.on_progress = _lib.CLEANUP_PROGRESS_CB(progress_cb)
        pol.on_referenced_branch = _lib.CLEANUP_BRANCH_CB(branch_cb)
        stats = _lib.new(_lib.CleanupStats)
        fn = _lib.lib().lv_cleanup
        found = self._call(lambda ds, *a: fn(ds, ctypes.byref(pol), ctypes.byref(stats), *a))
        if raised:
            raise raised[0]
        return CleanupStats.from_c(stats, dry_run, found)

    def cleanup_old_versions(self, older_than: Optional[timedelta] = None,
                             retain_versions: Optional[int] = None, *,
                             delete_unverified: bool = False,
                             error_if_tagged_old_versions: bool = True,
                             delete_rate_limit: Optional[int] = None,
                             versions: Optional[List[int]] = None,
                             delete_concurrency: Optional[int] = None,
                             dry_run: bool = False, before_version: Optional[int] = None,
                             checkpoint: bool = True,
                             progress: Optional[Callable[[str, int, int], None]] = None,
                             clean_referenced_branches: bool = False) -> CleanupStats:
        """Removes old versions with Lance's rules, after recording them in a checkpoint
        (``is_cleaned_up``), so :meth:`history` keeps them.  pylance 14's signature (every
        argument up to ``delete_concurrency``), then lancever's own keywords.

        A version goes when every condition given holds: committed before now -
        ``older_than``, older than the newest ``retain_versions``, below
        ``before_version``.  With none given, ``older_than`` is 14 days (pylance's default;
        the ``lancever cleanup`` CLI uses LanceDB optimize()'s 7).  The latest version,
        tagged versions and branch bases are never removed; a tagged version the policy
        selects raises :class:`TaggedVersionsError` unless
        ``error_if_tagged_old_versions=False``.  ``delete_unverified`` also removes
        unreferenced files younger than 7 days (only when no writer is active).
        ``delete_rate_limit``: at most that many deletes per second (a positive int, as in
        pylance).  ``versions`` is Lance's exact version list (only these are candidates;
        every other condition given must hold too; an empty list is refused).
        ``delete_concurrency`` (a positive int, as pylance checks it) is accepted for
        compatibility; lancever deletes with the dataset's storage concurrency.

        lancever's own: ``dry_run`` changes nothing.  ``checkpoint=False`` skips the
        checkpoint (history of the removed versions is then lost).
        ``progress(phase, done, total)`` is called as the cleanup advances (possibly from a
        library thread, with the GIL held).  ``clean_referenced_branches`` first cleans
        each branch made from a selected version with its own ``lance.auto_cleanup.*``
        policy when that is due (see docs/operations.md, Cleanup).
        Returns a :class:`CleanupStats` (Lance's field names plus lancever's)."""
        rate = _check.optional_integer("delete_rate_limit", delete_rate_limit,
                                       _check.POSITIVE_U64)
        _check.optional_integer("delete_concurrency", delete_concurrency, (1, 2**61 - 1))
        return self._cleanup(older_than, retain_versions, delete_unverified,
                             error_if_tagged_old_versions, dry_run, before_version, checkpoint,
                             progress, None, versions, clean_referenced_branches,
                             rate_limit=rate)

    def explain_cleanup_old_versions(self, older_than: Optional[timedelta] = None,
                                     retain_versions: Optional[int] = None, *,
                                     delete_unverified: bool = False,
                                     error_if_tagged_old_versions: bool = True,
                                     delete_rate_limit: Optional[int] = None,
                                     versions: Optional[List[int]] = None,
                                     include_files: bool = False, max_files: int = 1000,
                                     before_version: Optional[int] = None,
                                     clean_referenced_branches: bool = False
                                     ) -> CleanupExplanation:
        """What :meth:`cleanup_old_versions` with the same policy would remove, from a dry
        run (nothing changes).  pylance 14's signature (up to ``max_files``), then
        lancever's ``before_version`` and ``clean_referenced_branches``.

        Returns a :class:`CleanupExplanation` with pylance's fields: ``read_version`` (the
        latest version the plan was made against), ``stats``, and with
        ``include_files=True`` up to ``max_files`` (positive; ``None`` = all, lancever's
        extension) candidate files (path relative to the dataset root, kind, size,
        Lance's ``unverified`` flag as the library computes it, plus lancever's reason);
        ``candidate_files_truncated`` when there were more; ``candidate_file_limit`` is
        ``max_files`` whether or not files were asked for, as in pylance.  ``referenced_branches``: the
        branches made from a version the policy selects (or whose base is gone), as Lance
        lists them.  ``delete_rate_limit`` is checked (a non-negative int) and ignored, as
        pylance ignores it here."""
        _check.flag("include_files", include_files)
        max_files = _check.optional_integer("max_files", max_files, _check.POSITIVE_I64)
        _check.optional_integer("delete_rate_limit", delete_rate_limit, _check.U64)
        files: List[CandidateFile] = []
        total = [0]
        read_version = [0]

        def on_candidate(f: CandidateFile) -> None:
            total[0] += 1
            if include_files and (max_files is None or len(files) < max_files):
                files.append(f)
        branches: List[str] = []
        stats = self._cleanup(older_than, retain_versions, delete_unverified,
                              error_if_tagged_old_versions, True, before_version, True, None,
                              None, versions, clean_referenced_branches,
                              lambda name, _v, _c: branches.append(name),
                              on_candidate=on_candidate,
                              on_plan=lambda rv: read_version.__setitem__(0, rv))
        truncated = include_files and len(files) < total[0]
        messages = ([f"candidate_files truncated to {max_files} entries"] if truncated else [])
        messages += [w.message for w in stats.warnings]
        return CleanupExplanation(stats, files, truncated, max_files, branches, messages,
                                  read_version[0], list(stats.warnings))


def _lance_storage_options(obj: Any) -> Optional[Dict[str, Any]]:
    """The storage options a ``lance.LanceDataset`` was opened with (pylance 14:
    ``initial_storage_options``, a property; else ``latest_storage_options()``)."""
    for name in ("initial_storage_options", "latest_storage_options", "storage_options"):
        got = getattr(obj, name, None)
        if callable(got):
            got = got()
        if got is not None:
            if not isinstance(got, Mapping):
                raise TypeError(f"lancever: the dataset's {name} is a "
                                f"{type(got).__name__}, not a mapping")
            return dict(got)
    return None


def dataset(uri: Any, *, version: Optional[VersionRef] = None,
            storage_options: Optional[Mapping[str, Any]] = None) -> Dataset:
    """Opens a dataset as ``lance.dataset(uri, version=..., storage_options=...)`` does.

    ``uri``: a path, ``file://`` or ``s3://`` URI, or a ``lance.LanceDataset`` (anything
    with a ``uri`` attribute that is not a path), whose URI and storage options are reused
    (``storage_options`` given here override its keys); not its checked-out version or
    branch (pylance 14 does not expose the branch: pass ``version=(branch, v)``).
    ``version``: None (the latest),
    an int, a tag name, or ``(branch, version)`` (lancever also takes the tuple, which
    pylance's ``checkout_version`` takes); a version that is not live raises
    :class:`NotFoundError` now, as pylance does.  Returns a :class:`Dataset`, whose
    ``version`` is the one checked out."""
    opts: Dict[str, Any] = {}
    if not isinstance(uri, (str, bytes, os.PathLike)) and hasattr(uri, "uri"):
        opts.update(_lance_storage_options(uri) or {})
        uri = uri.uri
    if storage_options is not None:
        if not isinstance(storage_options, Mapping):
            raise TypeError(f"lancever: storage_options wants a mapping, "
                            f"not {type(storage_options).__name__}")
        opts.update(storage_options)
    ds = Dataset(uri, storage_options=opts or None)
    return ds if version is None else ds.checkout_version(version)
