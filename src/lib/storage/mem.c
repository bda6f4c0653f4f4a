/*
 * In-memory backend: a sorted array of objects behind one mutex.  Listing
 * semantics match the local backend (direct-child files, or everything below
 * when recursive; sorted by name; a missing directory is empty).  Unlike a
 * filesystem, "a" and "a/b" may both exist, as in an object store.
 * lv_storage_mem_set_mtime (lancever/sys/testing.h) is a test hook, compiled only
 * with LV_TEST_HOOKS (the test library).
 */
#include "storage/backends.h"
#include "storage/storage_int.h"
#include "util/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mobj {
	char *path;
	uint8_t *data; /* size + 1 bytes, NUL-terminated like read results */
	size_t size;
	int64_t mtime_ms;
} mobj;

typedef struct mem {
	pthread_mutex_t mu;
	mobj *v; /* sorted by strcmp(path) */
	size_t n, cap;
} mem;

/* Index of the first object whose path is >= key. */
static size_t lower_bound(const mem *m, const char *key)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(m->v[mid].path, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The object at `path` or NULL.  Caller holds the lock. */
static mobj *find(mem *m, const char *path)
{
	size_t i = lower_bound(m, path);
	return i < m->n && strcmp(m->v[i].path, path) == 0 ? &m->v[i] : NULL;
}

/* ---- list ---- */

typedef struct snap {
	char *path;
	uint64_t size;
	int64_t mtime_ms;
} snap;

static int mem_list(void *impl, const char *dir, bool recursive, lv_list_cb cb, void *payload,
		    lv_error *err)
{
	mem *m = impl;
	int rc = 0;
	snap *s = NULL;
	size_t ns = 0;
	char *prefix = dir[0] ? lv__sprintf("%s/", dir) : lv__strdup("");
	if (!prefix)
		return lv__err(err, LV_ENOMEM, "list %s: out of memory", dir);
	size_t pl = strlen(prefix);

	/*
	 * Snapshot under the lock, call back without it: a callback may well use
	 * the same store (read what it just listed) and must not deadlock.
	 */
	pthread_mutex_lock(&m->mu);
	size_t first = lower_bound(m, prefix), last = first;
	while (last < m->n && strncmp(m->v[last].path, prefix, pl) == 0)
		last++;
	if (last > first) {
		s = lv__calloc(last - first, sizeof *s);
		if (!s)
			rc = lv__err(err, LV_ENOMEM, "list %s: out of memory", dir);
	}
	for (size_t i = first; rc == 0 && i < last; i++) {
		const mobj *o = &m->v[i];
		if (!recursive && strchr(o->path + pl, '/'))
			continue;
		s[ns].path = lv__strdup(o->path);
		if (!s[ns].path) {
			rc = lv__err(err, LV_ENOMEM, "list %s: out of memory", dir);
			break;
		}
		s[ns].size = o->size;
		s[ns].mtime_ms = o->mtime_ms;
		ns++;
	}
	pthread_mutex_unlock(&m->mu);

	for (size_t i = 0; rc == 0 && i < ns; i++) {
		lv_list_entry e = { s[i].path, s[i].size, s[i].mtime_ms };
		rc = cb(&e, payload);
	}
	for (size_t i = 0; i < ns; i++)
		lv__free(s[i].path);
	lv__free(s);
	lv__free(prefix);
	return rc;
}

/* ---- reads ---- */

static int mem_read_range(void *impl, const char *path, uint64_t offset, uint64_t len,
			  lv_buf *out, lv_error *err)
{
	mem *m = impl;
	int rc = 0;
	pthread_mutex_lock(&m->mu);
	mobj *o = find(m, path);
	if (!o) {
		rc = lv__err(err, LV_ENOTFOUND, "read %s: no such object", path);
		goto out;
	}
	uint64_t n = offset >= o->size ? 0 : o->size - offset;
	if (n > len)
		n = len;
	out->ptr = lv__memdupz(n ? o->data + offset : o->data, (size_t)n);
	if (!out->ptr) {
		rc = lv__err(err, LV_ENOMEM, "read %s: out of memory", path);
		goto out;
	}
	out->size = (size_t)n;
out:
	pthread_mutex_unlock(&m->mu);
	return rc;
}

static int mem_read(void *impl, const char *path, lv_buf *out, lv_error *err)
{
	return mem_read_range(impl, path, 0, UINT64_MAX, out, err);
}

static int mem_head(void *impl, const char *path, uint64_t *size, int64_t *mtime_ms,
		    lv_error *err)
{
	mem *m = impl;
	int rc = 0;
	pthread_mutex_lock(&m->mu);
	mobj *o = find(m, path);
	if (o) {
		*size = o->size;
		*mtime_ms = o->mtime_ms;
	} else {
		rc = lv__err(err, LV_ENOTFOUND, "head %s: no such object", path);
	}
	pthread_mutex_unlock(&m->mu);
	return rc;
}

/* ---- writes ---- */

static int mem_put(void *impl, const char *path, const void *data, size_t size, bool create,
		   lv_error *err)
{
	mem *m = impl;
	const char *what = create ? "create" : "write";
	int rc = 0;
	/* Copy outside the lock; the swap under it is what makes the write atomic. */
	uint8_t *bytes = lv__memdupz(data, size);
	char *key = lv__strdup(path);
	if (!bytes || !key) {
		lv__free(bytes);
		lv__free(key);
		return lv__err(err, LV_ENOMEM, "%s %s: out of memory", what, path);
	}
	pthread_mutex_lock(&m->mu);
	size_t i = lower_bound(m, path);
	if (i < m->n && strcmp(m->v[i].path, path) == 0) {
		if (create) {
			rc = lv__err(err, LV_EEXISTS, "%s %s: already exists", what, path);
			goto out;
		}
		lv__free(m->v[i].data);
		m->v[i].data = bytes;
		m->v[i].size = size;
		m->v[i].mtime_ms = lv__now_ms();
		bytes = NULL;
		goto out;
	}
	if (m->n == m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 64;
		mobj *nv = lv__reallocarray(m->v, nc, sizeof *nv);
		if (!nv) {
			rc = lv__err(err, LV_ENOMEM, "%s %s: out of memory", what, path);
			goto out;
		}
		m->v = nv;
		m->cap = nc;
	}
	memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof *m->v);
	m->v[i] = (mobj){ key, bytes, size, lv__now_ms() };
	m->n++;
	key = NULL;
	bytes = NULL;
out:
	pthread_mutex_unlock(&m->mu);
	lv__free(bytes);
	lv__free(key);
	return rc;
}

static int mem_write(void *impl, const char *path, const void *data, size_t size, lv_error *err)
{
	return mem_put(impl, path, data, size, false, err);
}

static int mem_create(void *impl, const char *path, const void *data, size_t size, lv_error *err)
{
	return mem_put(impl, path, data, size, true, err);
}

static int mem_del(void *impl, const char *path, lv_error *err)
{
	mem *m = impl;
	int rc = 0;
	char *freed_path = NULL;
	uint8_t *freed_data = NULL;
	pthread_mutex_lock(&m->mu);
	size_t i = lower_bound(m, path);
	if (i < m->n && strcmp(m->v[i].path, path) == 0) {
		freed_path = m->v[i].path;
		freed_data = m->v[i].data;
		memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof *m->v);
		m->n--;
	} else {
		rc = lv__err(err, LV_ENOTFOUND, "delete %s: no such object", path);
	}
	pthread_mutex_unlock(&m->mu);
	lv__free(freed_path);
	lv__free(freed_data);
	return rc;
}

static void mem_close(void *impl)
{
	mem *m = impl;
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		lv__free(m->v[i].path);
		lv__free(m->v[i].data);
	}
	lv__free(m->v);
	pthread_mutex_destroy(&m->mu);
	lv__free(m);
}

static const lv_storage_ops mem_ops = {
	.version = LV_STORAGE_OPS_VERSION,
	.list = mem_list,
	.read = mem_read,
	.read_range = mem_read_range,
	.head = mem_head,
	.write = mem_write,
	.create = mem_create,
	.del = mem_del,
	.close = mem_close,
};

static int mem_open(lv_storage **out, const char *describe, lv_error *err)
{
	*out = NULL;
	mem *m = lv__calloc(1, sizeof *m);
	if (!m)
		return lv__err(err, LV_ENOMEM, "mem: out of memory");
	if (pthread_mutex_init(&m->mu, NULL) != 0) {
		lv__free(m);
		return lv__err(err, LV_ENOMEM, "mem: cannot create a mutex");
	}
	int rc = lv__storage_new_kind(out, &mem_ops, m, describe ? describe : "mem://",
				      LV__STORAGE_MEM, err);
	if (rc < 0)
		mem_close(m);
	return rc;
}

int lv_storage_mem_new(lv_storage **out, lv_error *err)
{
	if (!out)
		return lv__err(err, LV_EINVALID, "mem: NULL output");
	return mem_open(out, "mem://", err);
}

static int open_address(lv_storage **out, lv__address *a, lv_error *err)
{
	LV_TRY(lv__opt_none(&a->opts, "a mem:// store", err));
	return mem_open(out, a->uri, err);
}

const lv__backend lv__backend_mem = { "mem", LV__ADDR_NAME, "mem://", open_address };

#ifdef LV_TEST_HOOKS /* lancever/sys/testing.h: the test library only */
#include "lancever/sys/testing.h"

int lv_storage_mem_set_mtime(lv_storage *st, const char *path, int64_t mtime_ms, lv_error *err)
{
	LV_TRY(lv__path_check(path, false, "set_mtime", err));
	char full[LV__PATH_MAX + 1], tmp[LV__PATH_MAX + 1];
	const char *prefix = NULL;
	snprintf(full, sizeof full, "%s", path);
	/* Look through fault shims (and their sub-handles), so age-rule tests can inject faults. */
	lv_storage *inner;
	while (st && (inner = lv__storage_inner(st, &prefix)) != NULL) {
		LV_TRY(lv__path_join(tmp, prefix, full, "set_mtime", err));
		memcpy(full, tmp, sizeof full);
		st = inner;
	}
	mem *m = lv__storage_impl(st, LV__STORAGE_MEM, &prefix);
	if (!m)
		return lv__err(err, LV_EINVALID, "set_mtime %s: %s is not an in-memory store", path,
			       lv_storage_describe(st));
	LV_TRY(lv__path_join(tmp, prefix, full, "set_mtime", err));
	int rc = 0;
	pthread_mutex_lock(&m->mu);
	mobj *o = find(m, tmp);
	if (o)
		o->mtime_ms = mtime_ms;
	else
		rc = lv__err(err, LV_ENOTFOUND, "set_mtime %s: no such object", tmp);
	pthread_mutex_unlock(&m->mu);
	return rc;
}
#endif
