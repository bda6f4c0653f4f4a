"""Incremental capture of one dataset (lancever/capture.h): what ``lancever watch`` runs
per table, from Python.

    >>> ds = lancever.dataset("/data/t.lance")
    >>> with ds.capture(flush_interval=1.0) as cap:
    ...     while running:
    ...         cap.poll()                 # new manifests read at once, records held
    ...         if cap.due:
    ...             cap.flush()            # held records written as a checkpoint
    ...         time.sleep(0.1)
    ... # leaving the block flushes (unless an exception is propagating), then closes

A version whose manifest vanished before it could be read is counted in ``missed`` and
noted (at the next flush) so that :meth:`Dataset.history` names the reason of its gap.
Calls go through the dataset's lock: one capture per Dataset, used from one thread.
"""

from __future__ import annotations

import ctypes
import weakref
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Optional, Union

from . import _check, _lib
from .errors import Error

if TYPE_CHECKING:
    from .dataset import Dataset

_FIELDS = ("captured", "missed", "requests", "errors", "flushes", "newest_version",
           "last_lag_ms", "held", "polls", "flushed_version")


@dataclass(frozen=True)
class CaptureStats:
    """Counters of a capture since it was opened (lancever/capture.h lv_capture_stats)."""

    captured: int         #: manifests read and held (or flushed)
    missed: int           #: versions whose manifest was gone before it could be read
    requests: int         #: storage requests made by the capture's polls and flushes
    errors: int           #: polls and flushes that failed
    flushes: int          #: flushes that wrote (or found) a checkpoint
    newest_version: int   #: the position: the newest version known
    last_lag_ms: int      #: read time - commit time of the newest manifest read (0: none yet)
    held: int             #: records read and not yet flushed
    polls: int            #: polls made (failed ones too)
    flushed_version: int  #: newest version the last successful flush made durable (0: none)

    @staticmethod
    def from_c(s: Any) -> "CaptureStats":
        return CaptureStats(**{k: getattr(s, k) for k in _FIELDS})


def _flush_ms(flush_interval: Union[float, int, timedelta, None]) -> int:
    if flush_interval is None:
        return 0
    if isinstance(flush_interval, timedelta):
        secs = flush_interval.total_seconds()
    elif isinstance(flush_interval, (int, float)) and not isinstance(flush_interval, bool):
        secs = float(flush_interval)
    else:
        raise TypeError(f"lancever: flush_interval wants seconds or a timedelta, "
                        f"not {type(flush_interval).__name__}")
    ms = int(round(secs * 1000))
    if secs <= 0 or ms <= 0:
        raise ValueError(f"lancever: flush_interval must be positive, got {flush_interval!r}")
    return _check.integer("flush_interval", ms, _check.POSITIVE_I64)


class Capture:
    """An incremental capture of one :class:`~lancever.Dataset` (made by
    :meth:`Dataset.capture`).  :meth:`close` does NOT flush (as ``lv_capture_free``);
    leaving a ``with`` block flushes first unless an exception is propagating."""

    def __init__(self, ds: "Dataset", flush_interval: Union[float, int, timedelta, None] = None):
        self._ds = ds
        self._ptr: Optional[int] = None
        lib = _lib.lib()
        opts = _lib.new(_lib.CaptureOptions, flush_ms=_flush_ms(flush_interval))
        out = ctypes.c_void_p()
        ds._call(lambda d, *a: lib.lv_capture_open(ctypes.byref(out), d, ctypes.byref(opts), *a))
        self._ptr = out.value
        self._finalizer = weakref.finalize(self, lib.lv_capture_free, self._ptr)

    def _live(self) -> int:
        if self._ptr is None:
            raise Error("lancever: the capture is closed")
        return self._ptr

    def poll(self) -> CaptureStats:
        """Reads every manifest newer than the capture's position and holds its record;
        returns the counters after the poll."""
        ptr = self._live()
        st = _lib.new(_lib.CaptureStats)
        fn = _lib.lib().lv_capture_poll
        self._ds._call(lambda d, *a: fn(ptr, ctypes.byref(st), *a))
        return CaptureStats.from_c(st)

    def flush(self) -> None:
        """Makes every held record durable as a checkpoint (read back and verified) and notes
        pending gaps; nothing to do when nothing is held.  On failure the records stay held."""
        ptr = self._live()
        fn = _lib.lib().lv_capture_flush
        self._ds._call(lambda d, *a: fn(ptr, *a))

    @property
    def due(self) -> bool:
        """True when held records (or gaps) are older than the flush interval."""
        lib = _lib.lib()
        return bool(lib.lv_capture_due(self._live(), lib.lv_capture_clock_ms()))

    def stats(self) -> CaptureStats:
        """The counters now."""
        st = _lib.new(_lib.CaptureStats)
        if _lib.lib().lv_capture_get_stats(self._live(), ctypes.byref(st)) != 0:
            raise Error("lancever: lv_capture_get_stats failed")
        return CaptureStats.from_c(st)

    def close(self) -> None:
        """Frees the capture without flushing (held records are dropped; a new capture reads
        their manifests again if they are still there)."""
        if self._ptr is not None:
            self._finalizer()
            self._ptr = None

    def __enter__(self) -> "Capture":
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        try:
            if exc_type is None and self._ptr is not None:
                self.flush()
        finally:
            self.close()

    def __repr__(self) -> str:
        return f"<lancever.Capture of {self._ds!r}>"
