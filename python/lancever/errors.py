"""Exceptions and warnings of the lancever package.

Every failing C call raises a subclass of :class:`Error` chosen by its status
code, with the library's message (which names the file involved and never
contains credentials).  ``err.code`` is the negative ``LV_E*`` value and
``err.status`` its name (``"LV_ENOTFOUND"``).
"""

from __future__ import annotations

from typing import Dict, Optional, Type


class Error(Exception):
    """Base class of every lancever error."""

    code: int = 0
    status: str = ""

    def __init__(self, message: str, code: Optional[int] = None, status: Optional[str] = None):
        super().__init__(message)
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status


class NotFoundError(Error, LookupError):
    """A dataset, file, version or tag does not exist (LV_ENOTFOUND)."""

    code, status = -1, "LV_ENOTFOUND"


class CorruptError(Error):
    """Bytes do not parse as what they claim to be (LV_ECORRUPT)."""

    code, status = -2, "LV_ECORRUPT"


class ExistsError(Error):
    """An object that must be created is already there (LV_EEXISTS)."""

    code, status = -3, "LV_EEXISTS"


class StorageError(Error, OSError):
    """The storage backend failed (LV_EIO)."""

    code, status = -4, "LV_EIO"


class OutOfMemoryError(Error, MemoryError):
    """An allocation failed (LV_ENOMEM)."""

    code, status = -5, "LV_ENOMEM"


class InvalidArgumentError(Error, ValueError):
    """A bad argument or configuration value (LV_EINVALID)."""

    code, status = -6, "LV_EINVALID"


class UnsupportedError(Error):
    """A feature (flag, encoding, scheme, option) lancever does not implement (LV_EUNSUPPORTED)."""

    code, status = -7, "LV_EUNSUPPORTED"


class LimitError(Error):
    """An input exceeds a hard safety limit (LV_ELIMIT)."""

    code, status = -8, "LV_ELIMIT"


class ConflictError(Error):
    """A concurrent writer produced different content (LV_ECONFLICT)."""

    code, status = -9, "LV_ECONFLICT"


class TaggedVersionsError(Error):
    """Cleanup refused: the policy selects tagged versions (LV_ETAGGED)."""

    code, status = -10, "LV_ETAGGED"


class LibraryNotFoundError(Error, ImportError):
    """liblancever.so could not be loaded; the message lists every place looked at."""


_BY_CODE: Dict[int, Type[Error]] = {
    cls.code: cls
    for cls in (NotFoundError, CorruptError, ExistsError, StorageError, OutOfMemoryError,
                InvalidArgumentError, UnsupportedError, LimitError, ConflictError,
                TaggedVersionsError)
}


def error_for(code: int, message: str) -> Error:
    """The exception for a C status code (an unknown code gives a plain :class:`Error`)."""
    cls = _BY_CODE.get(code)
    if cls is None:
        return Error(message, code, f"status {code}")
    return cls(message)


class LanceverWarning(UserWarning):
    """Something the library skipped or could not account for (see :class:`DatasetWarning`).

    Issued through :func:`warnings.warn`; the same records are on the result's
    ``warnings`` attribute.
    """
