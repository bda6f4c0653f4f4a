"""Arrow C Stream plumbing: PyCapsules for the Arrow PyCapsule protocol, and a
reader that turns a stream from the C export into Python columns.

The library exports results as ``struct ArrowArrayStream`` (lancever/arrow.h).
:func:`stream_capsule` hands one to any Arrow consumer as a PyCapsule named
``"arrow_array_stream"`` (``__arrow_c_stream__``); :func:`read_columns` reads
one here, without pyarrow, to build the list-of-dicts results.  Both follow the
C Stream Interface's ownership rules: whoever holds the struct calls its
``release`` once; a consumer that moves the stream out of the capsule leaves
``release`` NULL, and the capsule's destructor then only frees the struct.
"""

from __future__ import annotations

import ctypes
from itertools import chain
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _lib
from .errors import Error

# libc's allocator: the capsule's struct must outlive any Python object.
_libc = ctypes.CDLL(None)
_libc.malloc.restype = ctypes.c_void_p
_libc.malloc.argtypes = [ctypes.c_size_t]
_libc.free.restype = None
_libc.free.argtypes = [ctypes.c_void_p]

CAPSULE_NAME = b"arrow_array_stream"

#: Formats of 64-bit integer columns: UInt64, Int64, and timestamp_millis's timestamp[ms, tz=UTC]
#: (int64 milliseconds, read here as the int it is stored as).
INT64_FORMATS = {"L": "Q", "l": "q", "tsm:UTC": "q"}

# Private prototypes of the C API functions used: ctypes.pythonapi's attributes are shared
# objects whose argtypes any other module may change.
_api = ctypes.pythonapi
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                                 ctypes.c_void_p)(("PyCapsule_New", _api))
_capsule_get = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))

# The destructor gets the capsule as a raw pointer: it runs while the capsule is being
# deallocated, so it must not become a Python reference.  Everything it uses is bound as a
# default argument, so it still works while the interpreter shuts down.
_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _destroy(capsule: int, _get=_capsule_get, _name=CAPSULE_NAME,
             _stream=_lib.ArrowArrayStream, _free=_libc.free, _byref=ctypes.byref) -> None:
    ptr = _get(capsule, _name)
    if not ptr:
        return
    s = _stream.from_address(ptr)
    if s.release:
        s.release(_byref(s))
    _free(ptr)


_destroy_c = _DESTRUCTOR(_destroy)


def stream_capsule(fill: Callable[[ctypes.c_void_p], None]) -> Any:
    """A new PyCapsule "arrow_array_stream" holding the stream that ``fill(ptr)`` exports
    into a fresh struct (``fill`` raises on failure; the struct is then freed)."""
    size = ctypes.sizeof(_lib.ArrowArrayStream)
    ptr = _libc.malloc(size)
    if not ptr:
        raise MemoryError("lancever: out of memory for an ArrowArrayStream")
    ctypes.memset(ptr, 0, size)
    try:
        fill(ptr)
        return _capsule_new(ptr, CAPSULE_NAME, ctypes.cast(_destroy_c, ctypes.c_void_p))
    except BaseException:
        s = _lib.ArrowArrayStream.from_address(ptr)
        if s.release:
            s.release(ctypes.byref(s))
        _libc.free(ptr)
        raise


def stream_from_capsule(capsule: Any) -> "ctypes._Pointer[_lib.ArrowArrayStream]":
    """The ArrowArrayStream inside a capsule (still owned by the capsule)."""
    ptr = _capsule_get(id(capsule), CAPSULE_NAME)
    return ctypes.cast(ptr, ctypes.POINTER(_lib.ArrowArrayStream))


# ---- reading a stream into Python columns ----

class Columns:
    """A whole stream read into Python lists: one list per column, None for nulls."""

    def __init__(self) -> None:
        self.names: List[str] = []
        self.formats: List[str] = []
        self.nullable: List[bool] = []
        self.metadata: Dict[str, str] = {}
        self.data: List[List[Any]] = []
        self.num_rows = 0
        self.num_batches = 0

    def column(self, name: str) -> List[Any]:
        return self.data[self.names.index(name)]


def parse_metadata(ptr: Optional[int]) -> Dict[str, str]:
    """A C Data Interface metadata blob (int32 count, then length-prefixed pairs)."""
    if not ptr:
        return {}
    out: Dict[str, str] = {}
    (n,) = ctypes.cast(ptr, ctypes.POINTER(ctypes.c_int32))[:1]
    at = ptr + 4
    for _ in range(n):
        kv = []
        for _ in range(2):
            (length,) = ctypes.cast(at, ctypes.POINTER(ctypes.c_int32))[:1]
            kv.append(ctypes.string_at(at + 4, length).decode("utf-8", "replace"))
            at += 4 + length
        out[kv[0]] = kv[1]
    return out


# Byte -> its 8 bits, least significant first (Arrow bitmaps are LSB-first).
_BITS = [tuple(bool((x >> i) & 1) for i in range(8)) for x in range(256)]


def _bits(addr: int, start: int, n: int) -> List[bool]:
    first = start >> 3
    raw = ctypes.string_at(addr + first, ((start + n + 7) >> 3) - first)
    skip = start & 7
    return list(chain.from_iterable(map(_BITS.__getitem__, raw)))[skip:skip + n]


def _view(addr: int, nbytes: int, code: str) -> memoryview:
    return memoryview((ctypes.c_char * nbytes).from_address(addr)).cast("B").cast(code)


def _strings(bufs: Any, start: int, n: int) -> List[str]:
    offsets = _view(bufs[1], 4 * (start + n + 1), "i")[start:start + n + 1].tolist()
    base = offsets[0]
    data = ctypes.string_at(bufs[2] + base, offsets[-1] - base) if offsets[-1] > base else b""
    if base:
        offsets = [o - base for o in offsets]
    if data.isascii():  # byte offsets are character offsets: decode once, then slice
        return list(map(data.decode("ascii").__getitem__, map(slice, offsets, offsets[1:])))
    return [b.decode("utf-8", "replace") for b in map(data.__getitem__, map(slice, offsets, offsets[1:]))]


def _column(arr: _lib.ArrowArray, fmt: str, start: int, n: int) -> List[Any]:
    """Cells [start, start + n) of one column array (start includes every offset)."""
    bufs = arr.buffers
    if n == 0:
        return []
    if fmt in INT64_FORMATS:
        values: List[Any] = _view(bufs[1], 8 * (start + n), INT64_FORMATS[fmt])[start:start + n].tolist()
    elif fmt == "b":
        values = _bits(bufs[1], start, n)
    elif fmt == "u":
        values = _strings(bufs, start, n)
    else:
        raise Error(f"lancever: unexpected Arrow format {fmt!r}")
    if bufs[0] and arr.null_count != 0:
        valid = _bits(bufs[0], start, n)
        if not any(valid):
            return [None] * n
        values = [v if ok else None for v, ok in zip(values, valid)]
    return values


def _check(rc: int, stream: Any, what: str) -> None:
    if rc != 0:
        msg = stream.contents.get_last_error(stream)
        raise Error(f"lancever: Arrow stream {what} failed ({rc}): "
                    f"{msg.decode('utf-8', 'replace') if msg else 'no message'}")


def _consume(stream: Any, on_schema: Any, on_batch: Any) -> None:
    """Reads a stream (a pointer to ArrowArrayStream) to its end and releases it:
    on_schema(schema) once, then on_batch(batch) for every batch; each is released after
    its callback, also when the callback raises."""
    try:
        schema = _lib.ArrowSchema()
        _check(stream.contents.get_schema(stream, ctypes.byref(schema)), stream, "get_schema")
        try:
            on_schema(schema)
        finally:
            schema.release(ctypes.byref(schema))
        while True:
            batch = _lib.ArrowArray()
            _check(stream.contents.get_next(stream, ctypes.byref(batch)), stream, "get_next")
            if not batch.release:
                return
            try:
                on_batch(batch)
            finally:
                batch.release(ctypes.byref(batch))
    finally:
        if stream.contents.release:
            stream.contents.release(stream)


def _fields(schema: Any) -> "List[Tuple[str, str, bool]]":
    """(name, format, nullable) of each column of a schema."""
    out = []
    for i in range(schema.n_children):
        child = schema.children[i].contents
        out.append((child.name.decode(), child.format.decode(), bool(child.flags & 2)))
    return out


def read_columns(stream: Any) -> Columns:
    """Reads a stream (a pointer to ArrowArrayStream) to its end and releases it."""
    out = Columns()

    def on_schema(schema: Any) -> None:
        for name, fmt, nullable in _fields(schema):
            out.names.append(name)
            out.formats.append(fmt)
            out.nullable.append(nullable)
        out.metadata = parse_metadata(schema.metadata)
        out.data = [[] for _ in out.names]

    def on_batch(batch: Any) -> None:
        for c, fmt in enumerate(out.formats):
            child = batch.children[c].contents
            out.data[c].extend(_column(child, fmt, child.offset + batch.offset, batch.length))
        out.num_rows += batch.length
        out.num_batches += 1
    _consume(stream, on_schema, on_batch)
    return out


def walk_batches(stream: Any) -> Tuple[int, int]:
    """Consumes a stream batch by batch without decoding cells: (rows, batches)."""
    count = [0, 0]

    def on_batch(batch: Any) -> None:
        count[0] += batch.length
        count[1] += 1
    _consume(stream, lambda schema: None, on_batch)
    return count[0], count[1]


def read_numpy_columns(stream: Any) -> "Tuple[List[str], List[str], List[bool], List[Tuple[Any, Any]]]":
    """Reads a stream (releasing it) into numpy: per column (values, valid) where values is
    a numpy array (uint64, int64 -- timestamps too, as milliseconds --, bool) or a list of str, and valid a bool array or None
    when the column has no nulls.  Needs numpy (pandas' dependency)."""
    import numpy as np
    names: List[str] = []
    formats: List[str] = []
    nullable: List[bool] = []
    parts: List[List[Tuple[Any, Any]]] = []

    def bits(addr: int, start: int, n: int) -> Any:
        first = start >> 3
        raw = np.frombuffer(ctypes.string_at(addr + first, ((start + n + 7) >> 3) - first), np.uint8)
        return np.unpackbits(raw, bitorder="little")[(start & 7):(start & 7) + n].astype(bool)

    def on_schema(schema: Any) -> None:
        for name, fmt, null in _fields(schema):
            names.append(name)
            formats.append(fmt)
            nullable.append(null)
        parts.extend([] for _ in names)

    def on_batch(batch: Any) -> None:
        n = batch.length
        for c, fmt in enumerate(formats):
            arr = batch.children[c].contents
            start, b = arr.offset + batch.offset, arr.buffers
            if fmt in INT64_FORMATS:
                dt = np.uint64 if fmt == "L" else np.int64
                vals: Any = np.frombuffer(ctypes.string_at(b[1] + 8 * start, 8 * n), dt)
            elif fmt == "b":
                vals = bits(b[1], start, n)
            else:
                vals = _strings(b, start, n)
            valid = bits(b[0], start, n) if b[0] and arr.null_count != 0 else None
            parts[c].append((vals, valid))
    _consume(stream, on_schema, on_batch)
    cols: List[Tuple[Any, Any]] = []
    for fmt, chunks in zip(formats, parts):
        if fmt == "u":
            vals = [v for ch, _ in chunks for v in ch]
        else:
            empty = np.zeros(0, np.uint64 if fmt == "L" else np.int64 if fmt in INT64_FORMATS else bool)
            vals = np.concatenate([ch for ch, _ in chunks]) if chunks else empty
        if any(valid is not None for _, valid in chunks):
            valid = np.concatenate([v if v is not None else np.ones(len(ch), bool) for ch, v in chunks])
        else:
            valid = None
        cols.append((vals, valid))
    return names, formats, nullable, cols
