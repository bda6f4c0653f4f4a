"""lancever: fast, durable version history for Lance datasets, from Python.

A pure-Python package over the C library liblancever (ctypes, standard library
only), usable beside pylance 14: ``lancever.dataset(uri_or_lance_dataset)`` opens a
dataset, ``versions()`` returns exactly what pylance's ``LanceDataset.versions()``
returns, and ``history()`` every version ever recorded (what LanceDB's
``listVersions()`` reports, plus versions a cleanup removed) with every column.
Results are lists of dicts and Arrow streams (``__arrow_c_stream__``) that pyarrow,
polars and DuckDB read without copying.

    >>> import lancever
    >>> ds = lancever.dataset("/data/t.lance")
    >>> [v["version"] for v in ds.history() if v["is_cleaned_up"]]
    [1, 2, 3]

The library is found next to this package (where ``cmake --install`` puts a
copy), else through ``$LANCEVER_LIBRARY``, else on the system's library path.
"""

from .capture import Capture, CaptureStats
from .dataset import DEFAULT_OLDER_THAN, Dataset, VersionRef, dataset
from .errors import (ConflictError, CorruptError, Error, ExistsError, InvalidArgumentError,
                     LanceverWarning, LibraryNotFoundError, LimitError, NotFoundError,
                     OutOfMemoryError, StorageError, TaggedVersionsError, UnsupportedError)
from .results import (ArrowStream, ArrowView, CandidateFile, CheckpointResult,
                      CleanupExplanation,
                      CleanupStats, DatasetWarning, HistoryReport, Tags, VersionList)

__all__ = [
    "dataset", "Dataset", "Capture", "CaptureStats", "VersionList", "ArrowStream", "ArrowView", "HistoryReport", "DatasetWarning", "Tags",
    "CheckpointResult", "CleanupStats", "CleanupExplanation", "CandidateFile",
    "Error", "NotFoundError", "CorruptError", "ExistsError", "StorageError",
    "OutOfMemoryError", "InvalidArgumentError", "UnsupportedError", "LimitError",
    "ConflictError", "TaggedVersionsError", "LibraryNotFoundError", "LanceverWarning",
    "DEFAULT_OLDER_THAN", "library_version", "library_path",
]

def __getattr__(name):
    # __version__ is the loaded library's: one number, CMakeLists.txt's project(VERSION)
    if name == "__version__":
        return library_version()
    raise AttributeError(f"module 'lancever' has no attribute {name!r}")


def library_version() -> str:
    """The version of the loaded liblancever, e.g. "1.0.0" (CMakeLists.txt's project(VERSION))."""
    from . import _lib
    return _lib.lib().lv_version().decode()


def library_path() -> str:
    """The file liblancever was loaded from."""
    from . import _lib
    return _lib.library_path()
