/* lancever._rows: pylance 14's versions() rows built in C, an optional accelerator of the
 * ctypes package (python/lancever/results.py falls back to building them in Python when this
 * module is missing or declines).
 *
 *   pylance_rows(entries, stride, offsets, covered) -> list of dicts, or None
 *
 *   entries  a buffer of N entries of `stride` bytes each: the library's lv_version_info
 *            array as ctypes exposes it (N = len(entries) / stride).
 *   offsets  11 byte offsets inside an entry, in this order: version (u64), timestamp_millis
 *            (i64), has_manifest_details (bool, 1 byte), timestamp_nanos (i64), then the seven
 *            summary counters (u64) in the order of COUNTER_KEYS.  They come from the library's
 *            own layout table at run time (the package copies no layout).
 *   covered  the newest version the checkpoint in use covers: a row newer than it that has
 *            manifest details takes its time from the ns, any other row from the ms.
 *
 * Each row is {"version": int, "timestamp": naive local datetime, "metadata": {counter: str}},
 * equal with == to pylance's.  None means "not here": a time this module does not convert
 * exactly (a year outside 2..9998, a value near the int64 limits, localtime failing); the
 * caller then builds the rows in Python, which raises what pylance raises.
 *
 * Invariants:
 *  - Before any read: the buffer is C-contiguous, its length a whole number of entries,
 *    every offset plus its field's width within the stride.  Fields are read with memcpy
 *    (no alignment assumed).
 *  - A row's time is what pylance computes: us = floor(double(ns)) floor-divided by 1000 (or
 *    ms * 1000), the local broken-down time of floor(us / 10^6) seconds (localtime_r, as
 *    CPython's datetime.fromtimestamp), us mod 10^6 as the microsecond, fold 0 (pylance adds
 *    a timedelta, and datetime arithmetic yields fold 0).
 *  - Objects are new except counter strings, reused from the previous row of the same column
 *    when the value is equal (str is immutable; == is unaffected).
 *  - On an error every object made so far is released and an exception is set; a signal
 *    handler that raises (Ctrl-C's KeyboardInterrupt) is run every 65,536 rows.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <datetime.h>

#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define NCOUNTERS 7
#define NOFFSETS (4 + NCOUNTERS)

static const char *const COUNTER_KEYS[NCOUNTERS] = {
	"total_fragments", "total_data_files", "total_files_size", "total_deletion_files",
	"total_data_file_rows", "total_deletion_file_rows", "total_rows",
};

/* Interned keys, made once at import: a row's three in pylance's order, then the counters. */
static PyObject *k_row[3];
static PyObject *k_counters[NCOUNTERS];

/* What one call keeps between rows: the last string made for each counter column (reused
 * while the value repeats) and the two dict templates the rows are copies of (keys hashed
 * and laid out once; a copy's values are replaced, never inserted). */
struct state {
	uint64_t value[NCOUNTERS];
	PyObject *str[NCOUNTERS];
	PyObject *meta_tmpl; /* {counter: None, ...} */
	PyObject *row_tmpl;  /* {"version": None, "timestamp": None, "metadata": None} */
};

static uint64_t get_u64(const char *entry, Py_ssize_t off)
{
	uint64_t v;
	memcpy(&v, entry + off, sizeof v);
	return v;
}

static int64_t get_i64(const char *entry, Py_ssize_t off)
{
	int64_t v;
	memcpy(&v, entry + off, sizeof v);
	return v;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* A row's time in microseconds since the epoch, as pylance computes it; 0 when it is outside
 * what is converted here (the caller answers None). */
static int row_micros(int64_t ms, int64_t ns, int from_ns, int64_t *us)
{
	if (from_ns) {
		double f = (double)ns; /* int -> double rounds to nearest, as Python's float(int) */
		if (!(f > -9.2e18 && f < 9.2e18))
			return 0;
		*us = floor_div((int64_t)f, 1000);
		return 1;
	}
	if (ms > INT64_MAX / 1000 || ms < INT64_MIN / 1000)
		return 0;
	*us = ms * 1000;
	return 1;
}

/* A naive local datetime of `us`; NULL with no exception set when it is out of range here. */
static PyObject *local_datetime(int64_t us)
{
	int64_t sec = floor_div(us, 1000000);
	int micro = (int)(us - sec * 1000000);
	time_t t = (time_t)sec;
	struct tm tm;
	if ((int64_t)t != sec || !localtime_r(&t, &tm))
		return NULL;
	int year = tm.tm_year + 1900;
	if (year < 2 || year > 9998)
		return NULL;
	int second = tm.tm_sec > 59 ? 59 : tm.tm_sec; /* a leap second, as CPython clamps it */
	return PyDateTime_FromDateAndTimeAndFold(year, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
						 tm.tm_min, second, micro, 0);
}

/* The decimal text of v as a str (ASCII, so one byte per character). */
static PyObject *u64_str(uint64_t v)
{
	char buf[24];
	int n = 0;
	do {
		buf[sizeof buf - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	PyObject *s = PyUnicode_New(n, 127);
	if (s)
		memcpy(PyUnicode_1BYTE_DATA(s), buf + sizeof buf - n, (size_t)n);
	return s;
}

static PyObject *counter_str(struct state *c, int i, uint64_t v)
{
	if (!c->str[i] || c->value[i] != v) {
		PyObject *s = u64_str(v);
		if (!s)
			return NULL;
		Py_XDECREF(c->str[i]);
		c->str[i] = s;
		c->value[i] = v;
	}
	Py_INCREF(c->str[i]);
	return c->str[i];
}

/* Sets d[key] = value and releases value (a new reference); -1 on failure. */
static int put(PyObject *d, PyObject *key, PyObject *value)
{
	if (!value)
		return -1;
	int rc = PyDict_SetItem(d, key, value);
	Py_DECREF(value);
	return rc;
}

/* {key: None for key in keys}: a template the rows copy. */
static PyObject *template(PyObject *const *keys, int n)
{
	PyObject *d = PyDict_New();
	for (int i = 0; d && i < n; i++)
		if (PyDict_SetItem(d, keys[i], Py_None) < 0)
			Py_CLEAR(d);
	return d;
}

/* The row's metadata: a copy of the template with its values replaced. */
static PyObject *metadata(const char *e, const Py_ssize_t *off, struct state *c)
{
	PyObject *m = PyDict_Copy(c->meta_tmpl);
	for (int i = 0; m && i < NCOUNTERS; i++)
		if (put(m, k_counters[i], counter_str(c, i, get_u64(e, off[4 + i]))) < 0)
			Py_CLEAR(m);
	return m;
}

/* One row, or NULL: with an exception set on failure, without one when the time is out of
 * range here (*declined set). */
static PyObject *row(const char *e, const Py_ssize_t *off, uint64_t covered,
		     struct state *c, int *declined)
{
	uint64_t version = get_u64(e, off[0]);
	int from_ns = version > covered && e[off[2]] != 0;
	int64_t us;
	if (!row_micros(get_i64(e, off[1]), get_i64(e, off[3]), from_ns, &us)) {
		*declined = 1;
		return NULL;
	}
	PyObject *ts = local_datetime(us);
	if (!ts) {
		*declined = !PyErr_Occurred();
		return NULL;
	}
	PyObject *d = PyDict_Copy(c->row_tmpl);
	if (!d || put(d, k_row[0], PyLong_FromUnsignedLongLong(version)) < 0) {
		Py_DECREF(ts);
		Py_XDECREF(d);
		return NULL;
	}
	if (put(d, k_row[1], ts) < 0 || put(d, k_row[2], metadata(e, off, c)) < 0)
		Py_CLEAR(d);
	return d;
}

/* The offsets tuple as 11 checked byte offsets; -1 with an exception if one is unusable. */
static int read_offsets(PyObject *tuple, Py_ssize_t stride, Py_ssize_t *off)
{
	if (!PyTuple_Check(tuple) || PyTuple_GET_SIZE(tuple) != NOFFSETS) {
		PyErr_SetString(PyExc_ValueError, "offsets: a tuple of 11 ints");
		return -1;
	}
	for (Py_ssize_t i = 0; i < NOFFSETS; i++) {
		off[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(tuple, i));
		if (off[i] == -1 && PyErr_Occurred())
			return -1;
		Py_ssize_t width = i == 2 ? 1 : 8;
		if (off[i] < 0 || off[i] > stride - width) {
			PyErr_Format(PyExc_ValueError, "offset %zd of field %zd outside an entry of %zd bytes",
				     off[i], i, stride);
			return -1;
		}
	}
	return 0;
}

static PyObject *build(const char *base, Py_ssize_t n, Py_ssize_t stride, const Py_ssize_t *off,
		       uint64_t covered)
{
	struct state st = {{0}, {NULL}, template(k_counters, NCOUNTERS), template(k_row, 3)};
	PyObject *list = st.meta_tmpl && st.row_tmpl ? PyList_New(n) : NULL;
	int declined = 0;
	for (Py_ssize_t i = 0; list && i < n; i++) {
		if ((i & 0xffff) == 0xffff && PyErr_CheckSignals() < 0) { /* Ctrl-C on a long list */
			Py_CLEAR(list);
			break;
		}
		PyObject *r = row(base + i * stride, off, covered, &st, &declined);
		if (!r)
			Py_CLEAR(list);
		else
			PyList_SET_ITEM(list, i, r);
	}
	for (int i = 0; i < NCOUNTERS; i++)
		Py_XDECREF(st.str[i]);
	Py_XDECREF(st.meta_tmpl);
	Py_XDECREF(st.row_tmpl);
	if (!list && declined && !PyErr_Occurred())
		Py_RETURN_NONE;
	return list;
}

static PyObject *pylance_rows(PyObject *self, PyObject *args)
{
	(void)self;
	Py_buffer buf;
	Py_ssize_t stride;
	PyObject *offsets;
	PyObject *covered_obj;
	if (!PyArg_ParseTuple(args, "y*nO!O!", &buf, &stride, &PyTuple_Type, &offsets,
			      &PyLong_Type, &covered_obj))
		return NULL;
	unsigned long long covered = PyLong_AsUnsignedLongLong(covered_obj); /* checked: no wrap */
	if (covered == (unsigned long long)-1 && PyErr_Occurred()) {
		PyBuffer_Release(&buf);
		return NULL;
	}
	PyObject *out = NULL;
	Py_ssize_t off[NOFFSETS];
	if (stride <= 0 || buf.len % stride != 0)
		PyErr_Format(PyExc_ValueError, "entries: %zd bytes are not whole entries of %zd",
			     buf.len, stride);
	else if (read_offsets(offsets, stride, off) == 0)
		out = build(buf.buf, buf.len / stride, stride, off, covered);
	PyBuffer_Release(&buf);
	return out;
}

static PyMethodDef methods[] = {
	{"pylance_rows", pylance_rows, METH_VARARGS,
	 "pylance_rows(entries, stride, offsets, covered) -> list | None\n\n"
	 "pylance 14's versions() rows from the library's entry array (see the module's source)."},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "lancever._rows",
	"pylance-shaped rows built in C (an optional accelerator of lancever.Dataset.versions).",
	-1, methods, NULL, NULL, NULL, NULL,
};

static PyObject *intern(const char *s)
{
	return PyUnicode_InternFromString(s);
}

PyMODINIT_FUNC PyInit__rows(void);
PyMODINIT_FUNC PyInit__rows(void)
{
	PyDateTime_IMPORT;
	if (!PyDateTimeAPI)
		return NULL;
	static const char *const row_keys[3] = {"version", "timestamp", "metadata"};
	for (int i = 0; i < 3; i++)
		if (!(k_row[i] = intern(row_keys[i])))
			return NULL;
	for (int i = 0; i < NCOUNTERS; i++)
		if (!(k_counters[i] = intern(COUNTER_KEYS[i])))
			return NULL;
	return PyModule_Create(&module);
}
