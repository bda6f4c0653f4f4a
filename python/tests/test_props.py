"""Property-based tests (hypothesis) over every argument of every public method: each call
either raises TypeError (a wrong type: a bool, a float, bytes for a name, ...) or
InvalidArgumentError naming the argument (a value outside the C field's range or the
CLI's, a string with NUL), or behaves exactly as the same in-range value does by an
independent reference (the history read once, or the C CLI for cleanup).  Never wraps.

Runs in the venv tests/python-venv.sh makes (CTest: unit/python-props, after
unit/python-venv), with the hashed pins of python/requirements-test.txt; unit/python
(Debian's interpreter, no hypothesis) ignores this file.  Without hypothesis the import
below fails the run: it never skips.  Examples are derandomized (the same in CI as here)
and few: the suite takes seconds."""

import json
import operator
import os
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lancever
from lancever import InvalidArgumentError
from conftest import SOURCE, run_cli

settings.register_profile(
    "lancever", max_examples=int(os.environ.get("LV_HYPOTHESIS_EXAMPLES", "40")),
    deadline=None, database=None, derandomize=True, print_blob=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
settings.load_profile("lancever")

U64 = (0, 2**64 - 1)
I64 = (-(2**63), 2**63 - 1)
SIZE = (0, 2**64 - 1)
POS_U64 = (1, 2**64 - 1)
POS_I64 = (1, 2**63 - 1)


class IntLike:
    """Not an int, but an integer all the same (numpy's integers are such): accepted."""

    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v

    def __repr__(self):
        return f"IntLike({self.v})"


EDGES = sorted({s * b + d for b in (0, 2**31, 2**32, 2**63, 2**64) for s in (1, -1)
                for d in range(-3, 4)})
INTS = st.one_of(st.sampled_from(EDGES), st.integers(-20, 20),
                 st.integers(-(2**66), 2**66))
NOT_INTS = st.one_of(st.booleans(), st.floats(), st.text(max_size=4), st.binary(max_size=4),
                     st.none(), st.lists(st.integers(0, 3), max_size=2))
ANY = st.one_of(INTS, INTS.map(IntLike), NOT_INTS)
NUL_TEXT = st.text(max_size=6).map(lambda s: s[:3] + "\x00" + s[3:])
TEXT = st.one_of(st.text(max_size=8), NUL_TEXT)


def as_int(v):
    """The integer v stands for, or None if the package must refuse its type."""
    if isinstance(v, bool) or not isinstance(v, (int, IntLike)):
        return None
    return operator.index(v)


def refused(call, v, bounds, name, *, none_ok=False):
    """True if call(v) had to be refused (and was, rightly); False if v is in range."""
    if v is None and none_ok:
        return False
    n = as_int(v)
    if n is None:
        with pytest.raises(TypeError):
            call(v)
        return True
    if not bounds[0] <= n <= bounds[1]:
        with pytest.raises(InvalidArgumentError) as e:
            call(v)
        assert name in str(e.value)
        return True
    return False


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A scratch copy of the demo (12 versions, 2 tags), read-only here."""
    dst = tmp_path_factory.mktemp("props") / "demo.lance"
    shutil.copytree(SOURCE / "demo" / "demo.lance", dst)
    return dst


@pytest.fixture(scope="module")
def ds(demo):
    return lancever.Dataset(demo)


@pytest.fixture(scope="module")
def rows(ds):
    return {r["version"]: r for r in ds.history()}


# ---- reading ----

@given(v=ANY)
def test_show(ds, rows, v):
    if isinstance(v, str):  # a tag name, as pylance reads a str (the demo's are longer)
        with pytest.raises((lancever.NotFoundError, InvalidArgumentError)):
            ds.show(v)
        return
    if refused(ds.show, v, U64, "version"):
        return
    n = as_int(v)
    if n in rows:
        assert ds.show(v)["version"] == n
    else:
        with pytest.raises(lancever.NotFoundError):
            ds.show(v)


@given(v=ANY, other=st.sampled_from([1, 12]), first=st.booleans())
def test_diff(ds, rows, v, other, first):
    call = (lambda x: ds.diff(x, other)) if first else (lambda x: ds.diff(other, x))
    if isinstance(v, str):  # a tag name, as pylance reads a str
        with pytest.raises((lancever.NotFoundError, InvalidArgumentError)):
            call(v)
        return
    if refused(call, v, U64, "a" if first else "b"):
        return
    n = as_int(v)
    if n in rows:
        d = call(v)
        assert (d["from"], d["to"]) == ((n, other) if first else (other, n))
    else:
        with pytest.raises(lancever.NotFoundError):
            call(v)


def newest_at(rows, ms, strict):
    ok = [v for v, r in rows.items() if (r["timestamp_millis"] < ms if strict
                                          else r["timestamp_millis"] <= ms)]
    return max(ok) if ok else None


@given(when=st.one_of(ANY, st.integers(1796232070000, 1796232080000), NUL_TEXT,
                      st.sampled_from(EDGES).map(str)),
       strict=st.one_of(st.booleans(), st.sampled_from([0, 1, None, "yes"])))
def test_version_as_of(ds, rows, when, strict):
    if not isinstance(strict, bool):
        with pytest.raises(TypeError):
            ds.version_as_of(1796232080000, strict=strict)
        return
    call = lambda w: ds.version_as_of(w, strict=strict)  # noqa: E731
    if isinstance(when, str):
        if "\x00" in when:
            with pytest.raises(InvalidArgumentError, match="when"):
                call(when)
            return
        if when.isascii() and when.isdigit():  # ms since the epoch, checked as that int
            when = int(when)
        else:  # a time string: parsed by the library (or refused as one)
            with pytest.raises(lancever.Error):
                call(when)
            return
    if refused(call, when, I64, "when"):
        return
    want = newest_at(rows, as_int(when), strict)
    if want is None:
        with pytest.raises(lancever.NotFoundError):
            call(when)
    else:
        assert call(when)["version"] == want


@given(batch_rows=ANY)
def test_streams(ds, batch_rows):
    from lancever import _arrow
    for method in (ds.versions_stream, ds.history_stream):
        if refused(lambda b: method(batch_rows=b), batch_rows, SIZE, "batch_rows"):
            return
        cap = method(batch_rows=batch_rows).__arrow_c_stream__()  # kept alive while read
        cols = _arrow.read_columns(_arrow.stream_from_capsule(cap))
        assert cols.column("version") == list(range(1, 13))


@given(tag=st.one_of(TEXT, NOT_INTS, INTS))
def test_tags_get_version(ds, tag):
    tags = ds.tags
    if not isinstance(tag, str):
        with pytest.raises(TypeError):
            tags.get_version(tag)
    elif tag in tags.list():
        assert tags.get_version(tag) == tags.list()[tag]["version"]
    else:
        with pytest.raises(lancever.NotFoundError):
            tags.get_version(tag)


# ---- opening ----

@given(form=st.sampled_from(["str", "bytes", "path", "nul-str", "nul-bytes", "int", "none",
                             "float", "list"]),
       threads=st.one_of(st.none(), st.integers(-3, 300), st.sampled_from(EDGES), NOT_INTS))
def test_open(demo, form, threads):
    uri = {"str": str(demo), "bytes": os.fsencode(demo), "path": Path(demo),
           "nul-str": str(demo) + "\x00x", "nul-bytes": os.fsencode(demo) + b"\x00",
           "int": 3, "none": None, "float": 1.0, "list": [str(demo)]}[form]
    if form in ("int", "none", "float", "list"):
        with pytest.raises(TypeError):
            lancever.Dataset(uri)
        return
    if form.startswith("nul"):
        with pytest.raises(InvalidArgumentError, match="uri"):
            lancever.Dataset(uri)
        return
    if refused(lambda t: lancever.Dataset(uri, threads=t), threads, (1, 256), "threads",
               none_ok=True):
        return
    d = lancever.Dataset(uri, threads=threads)
    assert d.uri == str(demo)
    assert [r["version"] for r in d.versions()] == list(range(1, 13))


@given(branch=st.one_of(TEXT, st.binary(max_size=3), st.integers(0, 3), st.booleans()))
def test_open_branch(demo, branch):
    if not isinstance(branch, str):
        with pytest.raises(TypeError):
            lancever.Dataset(demo, branch=branch)
        return
    if "\x00" in branch:
        with pytest.raises(InvalidArgumentError, match="branch"):
            lancever.Dataset(demo, branch=branch)
        return
    try:  # a name the library does not accept, or a branch that is not there: its errors
        lancever.Dataset(demo, branch=branch).versions()
    except lancever.Error:
        pass


@given(opts=st.dictionaries(st.one_of(st.sampled_from(["region", "endpoint", "allow_http",
                                                       "aws_access_key_id", "timeout"]),
                                      TEXT, st.binary(max_size=2), st.integers(0, 2)),
                            st.one_of(TEXT, st.booleans(), st.integers(0, 99), st.floats(),
                                      st.binary(max_size=2), st.none()), max_size=2))
def test_storage_options(demo, opts):
    bad_type = any(not isinstance(k, str) for k in opts) or any(
        not isinstance(v, (str, bool, int)) for k, v in opts.items()
        if k not in ("allow_http",))
    nul = any(isinstance(x, str) and "\x00" in x for kv in opts.items() for x in kv)
    try:
        lancever.Dataset(demo, storage_options=opts)
    except TypeError:
        assert bad_type or "allow_http" in opts
        return
    except InvalidArgumentError as e:
        # NUL, '' key, an allow_http that is not a boolean, or the library refusing a key
        for v in opts.values():
            if isinstance(v, str) and len(v) > 3 and not any(v in str(k) for k in opts):
                assert v not in str(e)  # never a value in the message
        return
    except lancever.Error:
        return
    assert not bad_type and not nul


# ---- writing: cleanup (dry runs, against the CLI) and checkpoint ----

ARG_FLAG = {"retain_versions": "--retain-versions", "before_version": "--before-version"}


def cli_dry_run(demo, kwargs):
    args = ["cleanup", demo, "--dry-run", "--json", "--older-than", "0s",
            "--no-error-if-tagged-old-versions"]
    for k, v in kwargs.items():
        if k == "versions":
            args += ["--versions", ",".join(str(int(x)) for x in v)]
        elif k != "older_than":
            args += [ARG_FLAG[k], str(operator.index(v))]
    return json.loads(run_cli(*args).stdout)


@given(name=st.sampled_from(["retain_versions", "before_version", "versions"]),
       v=st.one_of(ANY, st.integers(1, 14)))
def test_cleanup_dry_run(demo, ds, name, v):
    bounds = POS_I64 if name == "retain_versions" else POS_U64
    kwargs = {"older_than": timedelta(0)}

    def call(x):
        kw = dict(kwargs, **{name: [x] if name == "versions" else x})
        return ds.cleanup_old_versions(dry_run=True, error_if_tagged_old_versions=False, **kw)
    label = "versions[0]" if name == "versions" else name
    if refused(call, v, bounds, label, none_ok=name != "versions"):
        return
    got = call(v)
    want = cli_dry_run(demo, {} if v is None else {name: [v] if name == "versions" else v})
    assert (got.old_versions, got.files_removed, got.bytes_removed) == (
        want["versions_removed"], want["files_removed"], want["bytes_removed"])


@given(older=st.one_of(st.integers(-(2**40), 2**40).map(lambda ms: timedelta(milliseconds=ms)),
                       st.sampled_from([timedelta.max, timedelta.min, timedelta(0)]),
                       NOT_INTS, INTS))
def test_cleanup_older_than(ds, older):
    call = lambda o: ds.cleanup_old_versions(o, dry_run=True,  # noqa: E731
                                             error_if_tagged_old_versions=False)
    if older is None:
        call(older)
        return
    if not isinstance(older, timedelta):
        with pytest.raises(TypeError):
            call(older)
        return
    if older < timedelta(0):
        with pytest.raises(InvalidArgumentError, match="older_than"):
            call(older)
        return
    s = call(older)
    assert 0 <= s.old_versions <= 11


@given(flag=st.sampled_from(["delete_unverified", "error_if_tagged_old_versions", "checkpoint",
                             "clean_referenced_branches", "dry_run"]),
       v=st.one_of(st.booleans(), st.integers(0, 1), st.none(), st.text(max_size=1)))
def test_cleanup_flags(ds, flag, v):
    kw = {"retain_versions": 100, "dry_run": True, flag: v}
    if flag == "dry_run" and v is False:
        kw["retain_versions"] = 2**63 - 1  # a real run that selects nothing
    if not isinstance(v, bool):
        with pytest.raises(TypeError):
            ds.cleanup_old_versions(**kw)
        return
    assert ds.cleanup_old_versions(**kw).old_versions == 0


@given(include=st.one_of(st.booleans(), st.integers(0, 1)),
       max_files=st.one_of(st.none(), INTS, NOT_INTS))
def test_explain(ds, include, max_files):
    call = lambda m: ds.explain_cleanup_old_versions(  # noqa: E731
        timedelta(0), retain_versions=10, include_files=include, max_files=m,
        error_if_tagged_old_versions=False)
    if not isinstance(include, bool):
        with pytest.raises(TypeError):
            call(None)
        return
    if refused(call, max_files, (1, 2**63 - 1), "max_files", none_ok=True):  # pylance: positive
        return
    e = call(max_files)
    if include:
        assert len(e.candidate_files) <= (max_files if max_files is not None else 10**9)


@pytest.fixture(scope="module")
def writable(tmp_path_factory):
    dst = tmp_path_factory.mktemp("props-w") / "demo.lance"
    shutil.copytree(SOURCE / "demo" / "demo.lance", dst)
    return dst


@given(name=st.sampled_from(["max_entries", "max_files", "enabled"]),
       v=st.one_of(ANY, st.integers(1, 20)))
def test_checkpoint(writable, name, v):
    d = lancever.Dataset(writable)
    call = lambda x: d.checkpoint(**{name: x})  # noqa: E731
    if name == "enabled":
        if v is None or isinstance(v, bool):
            r = call(v)
            assert r.written or r.already_present or v is False
        else:
            with pytest.raises(TypeError):
                call(v)
        return
    if refused(call, v, POS_I64, name, none_ok=True):
        return
    r = call(v)
    if name == "max_entries" and v is not None and r.written:
        assert r.entries <= as_int(v)


def test_history_is_intact_after_the_checkpoints(writable):
    assert run_cli("check", writable).returncode == 0
    assert [r["version"] for r in lancever.Dataset(writable).history()] == list(range(1, 13))
