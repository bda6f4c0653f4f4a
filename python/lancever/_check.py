"""The one argument checker: every value a public method hands to the C library goes through
here first, with the CLI's rules (src/cli/args.c).

* An integer must be a real integer: an ``int`` or a type with ``__index__`` (a numpy
  integer), never a ``bool`` and never a float or a string of digits -> ``TypeError``.
* It must fit the C field it goes into *and* the range the CLI accepts for the same option
  (a version is 0..2**64-1, ``retain_versions`` 1..2**63-1, a time in ms -2**63..2**63-1,
  ...) -> else :class:`InvalidArgumentError` naming the argument.  Nothing is wrapped,
  truncated or clamped.
* A string (a name, a tag, a storage option key or value) must be a ``str`` -> else
  ``TypeError``; it must not contain NUL (C would cut it there) and must encode to UTF-8 ->
  else :class:`InvalidArgumentError`.  A path may also be ``bytes`` or ``os.PathLike``.
* A flag must be a ``bool`` (``TypeError`` otherwise: ``1`` is not taken as ``True``).

Below the public layer, the ctypes declarations (_lib.py) check again: every integer and
string argument of a C function goes through :class:`CArg` and every field of a structure
this package fills through :func:`struct`, with the C type's own range, so a value that
escaped a public check is refused instead of wrapped.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any, Optional, Tuple

from .errors import InvalidArgumentError

U64 = (0, 2**64 - 1)
I64 = (-(2**63), 2**63 - 1)
I32 = (-(2**31), 2**31 - 1)
SIZE = (0, 2 ** (8 * ctypes.sizeof(ctypes.c_size_t)) - 1)
VERSION = (0, U64[1])          # a version number (show, diff)
POSITIVE_U64 = (1, U64[1])     # before_version, an entry of versions=[...]
POSITIVE_I64 = (1, I64[1])     # retain_versions, max_entries, max_files
NON_NEGATIVE_I64 = (0, I64[1])  # older_than in ms


def _type_name(v: Any) -> str:
    return type(v).__name__


def integer(name: str, v: Any, bounds: Tuple[int, int]) -> int:
    """``v`` as an int in ``bounds`` (inclusive): TypeError for a bool or a non-integer,
    InvalidArgumentError naming ``name`` for a value out of range."""
    if isinstance(v, bool) or type(v).__name__ in ("bool_", "bool"):
        raise TypeError(f"lancever: {name} wants an integer, not a bool ({v!r})")
    if isinstance(v, int):
        n = int(v)
    elif hasattr(type(v), "__index__"):
        try:
            n = int(v.__index__())
        except TypeError:
            raise TypeError(f"lancever: {name} wants an integer, not {_type_name(v)}") from None
    else:
        raise TypeError(f"lancever: {name} wants an integer, not {_type_name(v)}")
    lo, hi = bounds
    if not lo <= n <= hi:
        raise InvalidArgumentError(f"lancever: {name} wants an integer in {lo}..{hi}, got {n}")
    return n


def optional_integer(name: str, v: Any, bounds: Tuple[int, int]) -> Optional[int]:
    return None if v is None else integer(name, v, bounds)


def flag(name: str, v: Any) -> bool:
    """``v`` must be a bool (1, "yes" and None are not)."""
    if not isinstance(v, bool):
        raise TypeError(f"lancever: {name} wants True or False, not {_type_name(v)}")
    return v


def optional_flag(name: str, v: Any) -> Optional[bool]:
    return None if v is None else flag(name, v)


def _no_nul(name: str, b: bytes) -> bytes:
    if b"\0" in b:
        raise InvalidArgumentError(f"lancever: {name} contains a NUL character")
    return b


def text(name: str, v: Any, *, empty: bool = True) -> bytes:
    """A str argument as the UTF-8 bytes C gets: TypeError for anything but str;
    InvalidArgumentError for NUL, an unencodable character (a lone surrogate), or ''
    when ``empty`` is False.  The value itself is never put into the message (it may be
    a secret)."""
    if not isinstance(v, str):
        raise TypeError(f"lancever: {name} wants a str, not {_type_name(v)}")
    try:
        b = v.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgumentError(f"lancever: {name} is not encodable as UTF-8") from None
    if not empty and not b:
        raise InvalidArgumentError(f"lancever: {name} must not be empty")
    return _no_nul(name, b)


def path(name: str, v: Any) -> Tuple[str, bytes]:
    """A path or URI: str, bytes or os.PathLike (of either).  Returns (the str form, the
    bytes C gets); bytes go through os.fsdecode/os.fsencode, so a non-UTF-8 file name
    round-trips.  TypeError for another type; InvalidArgumentError for NUL or ''."""
    if not isinstance(v, (str, bytes)):
        if not isinstance(v, os.PathLike):
            raise TypeError(f"lancever: {name} wants a str, bytes or os.PathLike, "
                            f"not {_type_name(v)}")
        v = os.fspath(v)
        if not isinstance(v, (str, bytes)):
            raise TypeError(f"lancever: {name}: __fspath__ returned {_type_name(v)}")
    try:
        b = os.fsencode(v)
    except UnicodeEncodeError:
        raise InvalidArgumentError(f"lancever: {name} is not encodable") from None
    if not b:
        raise InvalidArgumentError(f"lancever: {name} must not be empty")
    _no_nul(name, b)
    return os.fsdecode(b), b


def callback(name: str, v: Any) -> Any:
    if v is not None and not callable(v):
        raise TypeError(f"lancever: {name} wants a callable or None, not {_type_name(v)}")
    return v


# ---- the ctypes layer: the C type's own range, whatever the public layer checked ----

_RANGES = {
    ctypes.c_uint64: U64, ctypes.c_int64: I64, ctypes.c_int: I32, ctypes.c_int32: I32,
    ctypes.c_size_t: SIZE, ctypes.c_uint32: (0, 2**32 - 1),
}


def _c_value(ctype: Any, what: str, v: Any) -> Any:
    if ctype is ctypes.c_bool:
        return flag(what, v)
    if ctype is ctypes.c_char_p:
        if v is None:
            return None
        if not isinstance(v, bytes):
            raise TypeError(f"lancever: {what} wants bytes, not {_type_name(v)}")
        return _no_nul(what, v)
    bounds = _RANGES.get(ctype)
    if bounds is not None:
        return integer(what, v, bounds)
    return v


class CArg:
    """An argtypes entry that checks before ctypes converts (ctypes would wrap an int
    modulo 2**64 and cut a bytes at its first NUL)."""

    def __init__(self, ctype: Any):
        self.ctype = ctype

    def from_param(self, v: Any) -> Any:
        return self.ctype.from_param(_c_value(self.ctype, f"C argument ({self.ctype.__name__})", v))


def _types(cls: Any) -> Any:
    """Field name -> C type: a lancever struct's from the library's description
    (_lib.new's classes: ``_lv_fields``), a ctypes.Structure's from its ``_fields_``."""
    lv = getattr(cls, "_lv_fields", None)
    if lv is not None:
        return {k: t for k, (t, _off, _size) in lv.items()}
    return dict(cls._fields_)


def assign(obj: Any, field: str, v: Any) -> None:
    """``obj.field = v``, v checked against the field's C type (integers in range, bools,
    strings without NUL; a nested structure or a pointer is taken as is)."""
    name = getattr(type(obj), "_lv_name", type(obj).__name__)
    setattr(obj, field, _c_value(_types(type(obj))[field], f"{name}.{field}", v))
