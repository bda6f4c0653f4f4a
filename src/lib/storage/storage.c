/*
 * Storage front end: handles, path validation on every call, request/byte
 * counters, sub-handles and the properties a handle reports (remote or not,
 * credential source; a shim answers for its inner store).  Backends (local.c,
 * mem.c, fault.c, s3, azure, custom ones through lv_storage_new) only ever see
 * paths that passed lv__path_check() (util/path.c), already joined with the
 * sub-handle prefix, so none of them can be steered outside its root.  Once a handle
 * (or an ancestor of a sub-handle) is interrupted, no operation reaches a backend.  This
 * file knows no backend: backends register in open.c (backends.h).
 */
#include "storage/storage_int.h"
#include "storage/stamped.h"
#include "storage/subdirs.h"
#include "util/util.h"
#include "util/abi.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lv_storage {
	lv_storage_ops ops; /* a copy: the caller's table need not outlive the handle */
	void *impl;
	char *describe;
	char *prefix;       /* sub-handle: "tree/x" (no trailing '/'); NULL at a root */
	lv_storage *parent; /* sub-handle: borrowed; NULL at a root */
	lv_storage *inner;  /* a shim's inner store (borrowed; the shim's impl owns it), or NULL */
	int kind;           /* enum lv__storage_kind */
	const lv__notify_ops *notify; /* the backend's notification capability, or NULL */
	lv__list_subdirs_fn list_subdirs; /* the backend's listing of subdirectories, or NULL */
	lv__read_stamped_fn read_stamped; /* the backend's stamped ranged read, or NULL */
	bool owns_impl;     /* false for sub-handles, which share the root's backend */
	int interrupted;    /* lv_storage_interrupt(): atomic, read by every operation below */
	/* Counters, updated with relaxed atomics: they are statistics, not synchronisation. */
	uint64_t requests;
	uint64_t bytes_read;
	uint64_t bytes_written;
};

/* ---- counters ---- */

/*
 * A sub-handle counts its own requests and also adds them to every ancestor,
 * so the stats of a dataset root cover the branches read through sub-handles.
 */
static void count(lv_storage *st, uint64_t requests, uint64_t rd, uint64_t wr)
{
	for (lv_storage *s = st; s; s = s->parent) {
		if (requests)
			__atomic_fetch_add(&s->requests, requests, __ATOMIC_RELAXED);
		if (rd)
			__atomic_fetch_add(&s->bytes_read, rd, __ATOMIC_RELAXED);
		if (wr)
			__atomic_fetch_add(&s->bytes_written, wr, __ATOMIC_RELAXED);
	}
}

int lv_storage_stats_init(lv_storage_stats *s, int version)
{
	return lv__struct_init("lv_storage_stats", s, sizeof *s, NULL, version,
				       LV_STORAGE_STATS_VERSION, LV_STORAGE_STATS_VERSION);
}

int lv_storage_get_stats(const lv_storage *st, lv_storage_stats *out)
{
	if (!out || lv__struct_version("lv_storage_stats", out->version, LV_STORAGE_STATS_VERSION,
				       LV_STORAGE_STATS_VERSION, NULL))
		return LV_EINVALID;
	int v = out->version; /* version 1 has every field */
	memset(out, 0, sizeof *out);
	out->version = v;
	if (!st)
		return 0;
	out->requests = __atomic_load_n(&st->requests, __ATOMIC_RELAXED);
	out->bytes_read = __atomic_load_n(&st->bytes_read, __ATOMIC_RELAXED);
	out->bytes_written = __atomic_load_n(&st->bytes_written, __ATOMIC_RELAXED);
	return 0;
}

void lv_storage_reset_stats(lv_storage *st)
{
	if (!st)
		return;
	__atomic_store_n(&st->requests, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&st->bytes_read, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&st->bytes_written, 0, __ATOMIC_RELAXED);
}

/* ---- construction ---- */

int lv_storage_ops_init(lv_storage_ops *ops, int version)
{
	return lv__struct_init("lv_storage_ops", ops, sizeof *ops, NULL, version,
				       LV_STORAGE_OPS_VERSION, LV_STORAGE_OPS_VERSION);
}

int lv__storage_new_kind(lv_storage **out, const lv_storage_ops *ops, void *impl,
			 const char *describe, int kind, lv_error *err)
{
	if (!out)
		return lv__err(err, LV_EINVALID, "storage: NULL output");
	*out = NULL;
	if (!ops)
		return lv__err(err, LV_EINVALID, "storage: NULL ops table");
	LV_TRY(lv__struct_version("lv_storage_ops", ops->version, LV_STORAGE_OPS_VERSION,
				  LV_STORAGE_OPS_VERSION, err));
	if (!ops->list || !ops->read || !ops->read_range || !ops->head || !ops->write ||
	    !ops->create || !ops->del)
		return lv__err(err, LV_EINVALID, "storage: ops table has a NULL operation");
	lv_storage *st = lv__calloc(1, sizeof *st);
	if (!st)
		return lv__err(err, LV_ENOMEM, "storage: out of memory");
	st->ops = *ops;
	st->impl = impl;
	st->kind = kind;
	st->owns_impl = true;
	st->describe = lv__strdup(describe ? describe : "custom://");
	if (!st->describe) {
		lv__free(st);
		return lv__err(err, LV_ENOMEM, "storage: out of memory");
	}
	*out = st;
	return 0;
}

int lv_storage_new(lv_storage **out, const lv_storage_ops *ops, void *impl, const char *describe,
		   lv_error *err)
{
	return lv__storage_new_kind(out, ops, impl, describe, LV__STORAGE_CUSTOM, err);
}

void *lv__storage_impl(const lv_storage *st, int kind, const char **prefix_out)
{
	if (prefix_out)
		*prefix_out = NULL;
	if (!st || st->kind != kind)
		return NULL;
	if (prefix_out)
		*prefix_out = st->prefix;
	return st->impl;
}

void lv__storage_set_inner(lv_storage *st, lv_storage *inner)
{
	if (st)
		st->inner = inner;
}

void lv__storage_set_list_subdirs(lv_storage *st, lv__list_subdirs_fn fn)
{
	if (st)
		st->list_subdirs = fn;
}

void lv__storage_set_read_stamped(lv_storage *st, lv__read_stamped_fn fn)
{
	if (st)
		st->read_stamped = fn;
}

void lv__storage_set_notify(lv_storage *st, const lv__notify_ops *ops)
{
	if (st)
		st->notify = ops;
}

const lv__notify_ops *lv__storage_notify_ops(const lv_storage *st, void **impl,
					     const char **prefix)
{
	*impl = NULL;
	*prefix = NULL;
	if (!st || !st->notify || st->inner)
		return NULL;
	*impl = st->impl;
	*prefix = st->prefix;
	return st->notify;
}

lv_storage *lv__storage_inner(const lv_storage *st, const char **prefix_out)
{
	if (prefix_out)
		*prefix_out = NULL;
	if (!st || !st->inner)
		return NULL;
	if (prefix_out)
		*prefix_out = st->prefix;
	return st->inner;
}

bool lv_storage_is_remote(const lv_storage *st)
{
	while (st && st->inner)
		st = st->inner;
	return st && (st->ops.flags & LV_STORAGE_FLAG_REMOTE);
}

int lv_storage_credential_source(const lv_storage *st, char *buf, size_t cap)
{
	if (!st || !buf || !cap)
		return LV_EINVALID;
	while (st->inner)
		st = st->inner;
	snprintf(buf, cap, "none");
	if (st->ops.credential_source)
		st->ops.credential_source(st->impl, buf, cap);
	buf[cap - 1] = 0;
	return 0;
}

int lv_storage_sub(lv_storage **out, lv_storage *parent, const char *subdir, lv_error *err)
{
	if (!out)
		return lv__err(err, LV_EINVALID, "sub: NULL output");
	*out = NULL;
	if (!parent)
		return lv__err(err, LV_EINVALID, "sub: NULL parent");
	LV_TRY(lv__path_check(subdir, false, "sub", err));
	char full[LV__PATH_MAX + 1];
	LV_TRY(lv__path_join(full, parent->prefix, subdir, "sub", err));

	lv_storage *st = lv__calloc(1, sizeof *st);
	if (!st)
		return lv__err(err, LV_ENOMEM, "sub %s: out of memory", subdir);
	st->ops = parent->ops;
	st->impl = parent->impl;
	st->inner = parent->inner;
	st->kind = parent->kind;
	st->notify = parent->notify;
	st->list_subdirs = parent->list_subdirs;
	st->read_stamped = parent->read_stamped;
	st->owns_impl = false;
	st->parent = parent;
	size_t dl = strlen(parent->describe);
	bool slash = dl && parent->describe[dl - 1] == '/';
	st->prefix = lv__strdup(full);
	st->describe = lv__sprintf("%s%s%s", parent->describe, slash ? "" : "/", subdir);
	if (!st->prefix || !st->describe) {
		lv_storage_free(st);
		return lv__err(err, LV_ENOMEM, "sub %s: out of memory", subdir);
	}
	*out = st;
	return 0;
}

void lv_storage_free(lv_storage *st)
{
	if (!st)
		return;
	if (st->owns_impl && st->ops.close)
		st->ops.close(st->impl);
	lv__free(st->describe);
	lv__free(st->prefix);
	lv__free(st);
}

const char *lv_storage_describe(const lv_storage *st)
{
	return st ? st->describe : "(null)";
}

/* ---- interruption ---- */

void lv_storage_interrupt(lv_storage *st, bool on)
{
	if (st)
		__atomic_store_n(&st->interrupted, on ? 1 : 0, __ATOMIC_SEQ_CST);
}

/*
 * Every operation starts here: once the handle or one of its ancestors is interrupted, it
 * fails before reaching the backend, so nothing more is read, written or deleted.  A
 * caller sees what a storage failure at that point gives (the file left as it was).
 */
static int check_interrupted(const lv_storage *st, const char *what, const char *path,
			     lv_error *err)
{
	for (const lv_storage *s = st; s; s = s->parent)
		if (__atomic_load_n(&s->interrupted, __ATOMIC_SEQ_CST))
			return lv__err(err, LV_EIO, "%s %s: interrupted (lv_storage_interrupt)", what,
				       path && *path ? path : "/");
	return 0;
}

/* ---- operations ---- */

typedef struct list_tramp {
	lv_list_cb cb;
	void *payload;
	const char *prefix; /* sub-handle prefix or NULL */
	size_t strip;       /* strlen(prefix) + 1, or 0 */
} list_tramp;

/* Turns backend-root paths back into paths relative to the sub-handle. */
static int list_tramp_cb(const lv_list_entry *e, void *payload)
{
	list_tramp *t = payload;
	if (!t->strip)
		return t->cb(e, t->payload);
	size_t n = strlen(e->path);
	if (n <= t->strip || memcmp(e->path, t->prefix, t->strip - 1) != 0 ||
	    e->path[t->strip - 1] != '/')
		return 0; /* not below the prefix: a misbehaving backend, skip it */
	lv_list_entry sub = *e;
	sub.path = e->path + t->strip;
	return t->cb(&sub, t->payload);
}

/* Both listings: one front end; names_only uses the backend's cheap listing if it has one. */
static int list_common(lv_storage *st, const char *dir, bool recursive, bool names_only,
		       lv_list_cb cb, void *payload, lv_error *err)
{
	if (!st || !cb)
		return lv__err(err, LV_EINVALID, "list: NULL argument");
	LV_TRY(lv__path_check(dir, true, "list", err));
	char full[LV__PATH_MAX + 1];
	LV_TRY(lv__path_join(full, st->prefix, dir, "list", err));
	list_tramp t = { cb, payload, st->prefix, st->prefix ? strlen(st->prefix) + 1 : 0 };
	LV_TRY(check_interrupted(st, "list", dir, err));
	count(st, 1, 0, 0);
	if (names_only && st->ops.list_names)
		return st->ops.list_names(st->impl, full, list_tramp_cb, &t, err);
	return st->ops.list(st->impl, full, recursive, list_tramp_cb, &t, err);
}

int lv_storage_list(lv_storage *st, const char *dir, bool recursive, lv_list_cb cb, void *payload,
		    lv_error *err)
{
	return list_common(st, dir, recursive, false, cb, payload, err);
}

int lv_storage_list_names(lv_storage *st, const char *dir, lv_list_cb cb, void *payload,
			  lv_error *err)
{
	return list_common(st, dir, false, true, cb, payload, err);
}

/* ---- several subdirectories at once (subdirs.h) ---- */

typedef struct subdirs_job {
	lv_storage *st;
	const char *parent;
	const char *const *subs;
	lv_list_cb cb;
	void *const *payloads;
	int *rcs;
	lv_error *errs;
} subdirs_job;

static void subdir_one(size_t i, void *arg)
{
	subdirs_job *j = arg;
	char dir[LV__PATH_MAX + 1];
	j->rcs[i] = lv__path_join(dir, j->parent, j->subs[i], "list", &j->errs[i]);
	if (j->rcs[i] == 0)
		j->rcs[i] = list_common(j->st, dir, false, false, j->cb, j->payloads[i], &j->errs[i]);
}

int lv__storage_list_subdirs(lv_storage *st, const char *parent, const char *const *subs,
			     size_t n, int threads, lv_list_cb cb, void *const *payloads, int *rcs,
			     lv_error *errs, lv_error *err)
{
	if (!st || !cb || (n && (!subs || !payloads || !rcs || !errs)) || n > 64)
		return lv__err(err, LV_EINVALID, "list: bad argument");
	LV_TRY(lv__path_check(parent, false, "list", err));
	for (size_t i = 0; i < n; i++) {
		LV_TRY(lv__path_check(subs[i], false, "list", err));
		if (strchr(subs[i], '/'))
			return lv__err(err, LV_EINVALID, "list %s: not one path segment", subs[i]);
		rcs[i] = 0;
	}
	/* every subdirectory's full path within the limit (list_common's check), else each is
	 * listed as lv_storage_list lists it, with its own error */
	size_t fl = (st->prefix ? strlen(st->prefix) + 1 : 0) + strlen(parent);
	bool fits = true;
	for (size_t i = 0; i < n; i++)
		fits &= fl + 1 + strlen(subs[i]) <= LV__PATH_MAX;
	subdirs_job j = { st, parent, subs, cb, payloads, rcs, errs };
	if (!st->list_subdirs || st->inner || !fits) {
		lv__parallel_for(n, threads > 1 ? (int)n : 1, subdir_one, &j);
		return 0;
	}
	char full[LV__PATH_MAX + 1];
	LV_TRY(lv__path_join(full, st->prefix, parent, "list", err));
	list_tramp t[64];
	void *tp[64];
	for (size_t i = 0; i < n; i++) {
		t[i] = (list_tramp){ cb, payloads[i], st->prefix, st->prefix ? strlen(st->prefix) + 1 : 0 };
		tp[i] = &t[i];
	}
	LV_TRY(check_interrupted(st, "list", parent, err));
	count(st, n, 0, 0); /* one listing each, as the stores that list them one by one */
	return st->list_subdirs(st->impl, full, subs, n, list_tramp_cb, tp, rcs, errs);
}

int lv_storage_delete_many(lv_storage *st, const char *const *paths, size_t n, int *rcs,
			   lv_error *err)
{
	if (!st || (n && !paths))
		return lv__err(err, LV_EINVALID, "delete: NULL argument");
	int *r = rcs ? rcs : lv__calloc(n ? n : 1, sizeof *r);
	char **full = lv__calloc(n ? n : 1, sizeof *full);
	int rc = 0;
	if (!r || !full) {
		rc = lv__err(err, LV_ENOMEM, "delete: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		char buf[LV__PATH_MAX + 1];
		if ((rc = lv__path_check(paths[i], false, "delete", err)) == 0 &&
		    (rc = lv__path_join(buf, st->prefix, paths[i], "delete", err)) == 0 &&
		    !(full[i] = lv__strdup(buf)))
			rc = lv__err(err, LV_ENOMEM, "delete: out of memory");
	}
	if (rc < 0 || (rc = check_interrupted(st, "delete", n ? paths[0] : "", err)) < 0)
		goto out;
	if (st->ops.del_many) {
		count(st, lv_storage_is_remote(st) ? (n + 999) / 1000 : n, 0, 0); /* local: a call each */
		rc = st->ops.del_many(st->impl, (const char *const *)full, n, r, err);
	} else {
		for (size_t i = 0; i < n; i++) {
			lv_error e = { 0 };
			count(st, 1, 0, 0);
			r[i] = st->ops.del(st->impl, full[i], &e);
			if (r[i] < 0 && r[i] != LV_ENOTFOUND && rc == 0) {
				rc = r[i];
				if (err)
					*err = e;
			}
		}
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		if (r[i] < 0 && r[i] != LV_ENOTFOUND)
			rc = lv__err(err, r[i], "delete %s: failed (%s)", paths[i], lv_strerror(r[i]));
out:
	for (size_t i = 0; full && i < n; i++)
		lv__free(full[i]);
	lv__free(full);
	if (r != rcs)
		lv__free(r);
	return rc;
}

/* A whole read (ranged false) or a range read, counted in the stats; with `size` set and a
 * backend that stamps reads (always ranged), *size and *mtime_ms are the opened file's (else
 * *mtime_ms is 0: not known). */
static int storage_read(lv_storage *st, const char *path, bool ranged, uint64_t offset, uint64_t len,
			lv_buf *out, uint64_t *size, int64_t *mtime_ms, lv_error *err)
{
	if (size) {
		*size = 0;
		*mtime_ms = 0;
	}
	if (out) {
		out->ptr = NULL;
		out->size = 0;
	}
	if (!st || !out)
		return lv__err(err, LV_EINVALID, "read: NULL argument");
	LV_TRY(lv__path_check(path, false, "read", err));
	char full[LV__PATH_MAX + 1];
	LV_TRY(lv__path_join(full, st->prefix, path, "read", err));
	LV_TRY(check_interrupted(st, "read", path, err));
	count(st, 1, 0, 0);
	int rc = size && st->read_stamped && !st->inner
			 ? st->read_stamped(st->impl, full, offset, len, out, size, mtime_ms, err)
		 : ranged ? st->ops.read_range(st->impl, full, offset, len, out, err)
			  : st->ops.read(st->impl, full, out, err);
	if (rc < 0) {
		lv_buf_dispose(out);
		return rc;
	}
	count(st, 0, out->size, 0);
	return 0;
}

int lv_storage_read(lv_storage *st, const char *path, lv_buf *out, lv_error *err)
{
	return storage_read(st, path, false, 0, 0, out, NULL, NULL, err);
}

int lv_storage_read_range(lv_storage *st, const char *path, uint64_t offset, uint64_t len,
			  lv_buf *out, lv_error *err)
{
	return storage_read(st, path, true, offset, len, out, NULL, NULL, err);
}

bool lv__storage_reads_stamped(const lv_storage *st)
{
	return st && st->read_stamped && !st->inner;
}

int lv__storage_read_range_stamped(lv_storage *st, const char *path, uint64_t offset, uint64_t len,
				   lv_buf *out, uint64_t *size, int64_t *mtime_ms, lv_error *err)
{
	uint64_t sz;
	int64_t mt;
	int rc = storage_read(st, path, true, offset, len, out, &sz, &mt, err);
	*size = rc == 0 ? sz : 0;
	*mtime_ms = rc == 0 ? mt : 0;
	return rc;
}

int lv_storage_head(lv_storage *st, const char *path, uint64_t *size_out, int64_t *mtime_ms_out,
		    lv_error *err)
{
	if (!st)
		return lv__err(err, LV_EINVALID, "head: NULL storage");
	LV_TRY(lv__path_check(path, false, "head", err));
	char full[LV__PATH_MAX + 1];
	LV_TRY(lv__path_join(full, st->prefix, path, "head", err));
	LV_TRY(check_interrupted(st, "head", path, err));
	uint64_t size = 0;
	int64_t mtime = 0;
	count(st, 1, 0, 0);
	int rc = st->ops.head(st->impl, full, &size, &mtime, err);
	if (rc < 0)
		return rc;
	if (size_out)
		*size_out = size;
	if (mtime_ms_out)
		*mtime_ms_out = mtime;
	return 0;
}

static int put(lv_storage *st, const char *path, const void *data, size_t size, bool create,
	       lv_error *err)
{
	const char *what = create ? "create" : "write";
	if (!st || (!data && size))
		return lv__err(err, LV_EINVALID, "%s: NULL argument", what);
	LV_TRY(lv__path_check(path, false, what, err));
	char full[LV__PATH_MAX + 1];
	LV_TRY(lv__path_join(full, st->prefix, path, what, err));
	static const uint8_t empty[1];
	if (!data)
		data = empty;
	LV_TRY(check_interrupted(st, what, path, err));
	count(st, 1, 0, 0);
	int rc = create ? st->ops.create(st->impl, full, data, size, err)
			: st->ops.write(st->impl, full, data, size, err);
	if (rc < 0)
		return rc;
	count(st, 0, 0, size);
	return 0;
}

int lv_storage_write(lv_storage *st, const char *path, const void *data, size_t size,
		     lv_error *err)
{
	return put(st, path, data, size, false, err);
}

int lv_storage_create(lv_storage *st, const char *path, const void *data, size_t size,
		      lv_error *err)
{
	return put(st, path, data, size, true, err);
}

int lv_storage_delete(lv_storage *st, const char *path, lv_error *err)
{
	if (!st)
		return lv__err(err, LV_EINVALID, "delete: NULL storage");
	LV_TRY(lv__path_check(path, false, "delete", err));
	char full[LV__PATH_MAX + 1];
	LV_TRY(lv__path_join(full, st->prefix, path, "delete", err));
	LV_TRY(check_interrupted(st, "delete", path, err));
	count(st, 1, 0, 0);
	return st->ops.del(st->impl, full, err);
}
