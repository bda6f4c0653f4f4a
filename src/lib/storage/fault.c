/*
 * Fault-injecting shim over any storage handle, for tests and fuzzers.
 *
 * Calls whose op is in spec->ops (and whose path contains spec->path_substring,
 * if set) are counted; the nth counted call triggers, and with `persistent`
 * every later one too.  FAIL makes the call return LV_EIO without reaching the
 * inner storage (so a failed write/create/delete has no effect and a failed
 * list makes no callback).  SHORT and CORRUPT change the bytes a read returns
 * (first half only / the byte at size/2 inverted); on calls that return no
 * bytes (list, head, write, create, delete) they are counted but change nothing.
 * The write path's lies (issue 24): DROP and TRUNCATE make a write or create
 * answer 0 having stored nothing / the first half; HIDE makes reads and heads
 * answer "not found" (the first nth counted calls: an object shown late, or
 * from the nth on with `persistent`); UNLISTED makes a listing omit the
 * entries whose path contains the substring (every list call is counted).
 * The shim is linked to its inner store (lv__storage_set_inner), so it reports
 * what that store reports (remote or not, credential source).
 *
 * A test hook: compiled only into the test library (LV_TEST_HOOKS, see CMakeLists.txt);
 * the production library has no fault shim.
 */
#ifdef LV_TEST_HOOKS
#include "lancever/sys/testing.h"
#include "storage/storage_int.h"
#include "util/util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct fault {
	lv_storage *inner; /* owned */
	pthread_mutex_t mu; /* guards everything below */
	unsigned ops;
	uint64_t nth;
	bool persistent;
	int kind;
	char *substr; /* NULL = every path */
	uint64_t calls;
} fault;

static int check_spec(const lv_fault_spec *spec, lv_error *err)
{
	if (!spec)
		return 0;
	if (spec->ops & ~(unsigned)LV_FAULT_ALL)
		return lv__err(err, LV_EINVALID, "fault: unknown op bits 0x%x in spec",
			       spec->ops & ~(unsigned)LV_FAULT_ALL);
	if (spec->nth && (spec->kind < LV_FAULT_FAIL || spec->kind > LV_FAULT_UNLISTED))
		return lv__err(err, LV_EINVALID, "fault: unknown fault kind %d", spec->kind);
	return 0;
}

/* Counts the call if it matches; returns the fault kind to apply, or 0. */
static int decide(fault *f, unsigned op, const char *path)
{
	int kind = 0;
	pthread_mutex_lock(&f->mu);
	bool unlisted = f->kind == LV_FAULT_UNLISTED; /* its substring picks entries, not calls */
	if ((f->ops & op) && (unlisted || !f->substr || strstr(path, f->substr))) {
		uint64_t c = ++f->calls;
		bool early = f->kind == LV_FAULT_HIDE && !f->persistent; /* the first nth calls */
		if (f->nth && (early ? c <= f->nth : c == f->nth || (f->persistent && c > f->nth)))
			kind = f->kind;
	}
	pthread_mutex_unlock(&f->mu);
	return kind;
}

static int hidden(lv_error *err, const char *path)
{
	return lv__err(err, LV_ENOTFOUND, "%s: not found (injected: not visible yet)", path);
}

/* A listing that omits the entries whose path contains `substr` (UNLISTED). */
typedef struct omit {
	const char *substr;
	lv_list_cb cb;
	void *payload;
} omit;

static int omit_cb(const lv_list_entry *e, void *payload)
{
	const omit *o = payload;
	if (!o->substr || strstr(e->path, o->substr))
		return 0;
	return o->cb(e, o->payload);
}

static int injected(lv_error *err, const char *what, const char *path)
{
	return lv__err(err, LV_EIO, "%s %s: injected fault", what, path[0] ? path : ".");
}

static int fault_list(void *impl, const char *dir, bool recursive, lv_list_cb cb, void *payload,
		      lv_error *err)
{
	fault *f = impl;
	int kind = decide(f, LV_FAULT_LIST, dir);
	if (kind == LV_FAULT_FAIL)
		return injected(err, "list", dir);
	if (kind == LV_FAULT_UNLISTED) {
		omit o = { f->substr, cb, payload }; /* the substring is only changed by a set */
		return lv_storage_list(f->inner, dir, recursive, omit_cb, &o, err);
	}
	return lv_storage_list(f->inner, dir, recursive, cb, payload, err);
}

static void damage(lv_buf *out, int kind)
{
	if (kind == LV_FAULT_SHORT) {
		out->size /= 2;
		if (out->ptr)
			out->ptr[out->size] = 0; /* keep the NUL-terminated convention */
	} else if (kind == LV_FAULT_CORRUPT && out->size) {
		out->ptr[out->size / 2] ^= 0xFF;
	}
}

static int fault_read(void *impl, const char *path, lv_buf *out, lv_error *err)
{
	fault *f = impl;
	int kind = decide(f, LV_FAULT_READ, path);
	if (kind == LV_FAULT_FAIL)
		return injected(err, "read", path);
	if (kind == LV_FAULT_HIDE)
		return hidden(err, path);
	LV_TRY(lv_storage_read(f->inner, path, out, err));
	damage(out, kind);
	return 0;
}

static int fault_read_range(void *impl, const char *path, uint64_t offset, uint64_t len,
			    lv_buf *out, lv_error *err)
{
	fault *f = impl;
	int kind = decide(f, LV_FAULT_READ, path);
	if (kind == LV_FAULT_FAIL)
		return injected(err, "read", path);
	if (kind == LV_FAULT_HIDE)
		return hidden(err, path);
	LV_TRY(lv_storage_read_range(f->inner, path, offset, len, out, err));
	damage(out, kind);
	return 0;
}

static int fault_head(void *impl, const char *path, uint64_t *size, int64_t *mtime_ms,
		      lv_error *err)
{
	fault *f = impl;
	int kind = decide(f, LV_FAULT_HEAD, path);
	if (kind == LV_FAULT_FAIL)
		return injected(err, "head", path);
	if (kind == LV_FAULT_HIDE)
		return hidden(err, path);
	return lv_storage_head(f->inner, path, size, mtime_ms, err);
}

static int fault_write(void *impl, const char *path, const void *data, size_t size,
		       lv_error *err)
{
	fault *f = impl;
	int kind = decide(f, LV_FAULT_WRITE, path);
	if (kind == LV_FAULT_FAIL)
		return injected(err, "write", path);
	if (kind == LV_FAULT_DROP)
		return 0;
	return lv_storage_write(f->inner, path, data, kind == LV_FAULT_TRUNCATE ? size / 2 : size, err);
}

static int fault_create(void *impl, const char *path, const void *data, size_t size,
			lv_error *err)
{
	fault *f = impl;
	int kind = decide(f, LV_FAULT_CREATE, path);
	if (kind == LV_FAULT_FAIL)
		return injected(err, "create", path);
	if (kind == LV_FAULT_DROP)
		return 0;
	return lv_storage_create(f->inner, path, data, kind == LV_FAULT_TRUNCATE ? size / 2 : size, err);
}

static int fault_del(void *impl, const char *path, lv_error *err)
{
	fault *f = impl;
	if (decide(f, LV_FAULT_DELETE, path) == LV_FAULT_FAIL)
		return injected(err, "delete", path);
	return lv_storage_delete(f->inner, path, err);
}

static void fault_close(void *impl)
{
	fault *f = impl;
	if (!f)
		return;
	lv_storage_free(f->inner);
	lv__free(f->substr);
	pthread_mutex_destroy(&f->mu);
	lv__free(f);
}

static const lv_storage_ops fault_ops = {
	.version = LV_STORAGE_OPS_VERSION,
	.list = fault_list,
	.read = fault_read,
	.read_range = fault_read_range,
	.head = fault_head,
	.write = fault_write,
	.create = fault_create,
	.del = fault_del,
	.close = fault_close,
};

/* Installs spec (NULL = never trigger) and resets the counter; takes the lock. */
static int apply_spec(fault *f, const lv_fault_spec *spec, lv_error *err)
{
	char *sub = NULL;
	if (spec && spec->path_substring && !(sub = lv__strdup(spec->path_substring)))
		return lv__err(err, LV_ENOMEM, "fault: out of memory");
	pthread_mutex_lock(&f->mu);
	lv__free(f->substr);
	f->substr = sub;
	f->ops = spec ? spec->ops : 0;
	f->nth = spec ? spec->nth : 0;
	f->persistent = spec ? spec->persistent : false;
	f->kind = spec ? spec->kind : 0;
	f->calls = 0;
	pthread_mutex_unlock(&f->mu);
	return 0;
}

int lv_storage_fault_wrap(lv_storage **out, lv_storage *inner, const lv_fault_spec *spec,
			  lv_error *err)
{
	if (!out)
		return lv__err(err, LV_EINVALID, "fault: NULL output");
	*out = NULL;
	if (!inner)
		return lv__err(err, LV_EINVALID, "fault: NULL inner storage");
	LV_TRY(check_spec(spec, err));
	/* On failure the caller keeps `inner` (as with lv_storage_new). */
	fault *f = lv__calloc(1, sizeof *f);
	if (!f)
		return lv__err(err, LV_ENOMEM, "fault: out of memory");
	if (pthread_mutex_init(&f->mu, NULL) != 0) {
		lv__free(f);
		return lv__err(err, LV_ENOMEM, "fault: cannot create a mutex");
	}
	int rc = apply_spec(f, spec, err);
	char *desc = rc < 0 ? NULL : lv__sprintf("fault+%s", lv_storage_describe(inner));
	if (rc == 0 && !desc)
		rc = lv__err(err, LV_ENOMEM, "fault: out of memory");
	if (rc == 0)
		rc = lv__storage_new_kind(out, &fault_ops, f, desc, LV__STORAGE_FAULT, err);
	lv__free(desc);
	if (rc < 0) {
		lv__free(f->substr);
		pthread_mutex_destroy(&f->mu);
		lv__free(f);
		return rc;
	}
	f->inner = inner;
	lv__storage_set_inner(*out, inner);
	return 0;
}

int lv_storage_fault_set(lv_storage *shim, const lv_fault_spec *spec, lv_error *err)
{
	fault *f = lv__storage_impl(shim, LV__STORAGE_FAULT, NULL);
	if (!f)
		return lv__err(err, LV_EINVALID, "fault: %s is not a fault shim",
			       lv_storage_describe(shim));
	LV_TRY(check_spec(spec, err));
	return apply_spec(f, spec, err);
}

uint64_t lv_storage_fault_calls(const lv_storage *shim)
{
	fault *f = lv__storage_impl(shim, LV__STORAGE_FAULT, NULL);
	if (!f)
		return 0;
	pthread_mutex_lock(&f->mu);
	uint64_t c = f->calls;
	pthread_mutex_unlock(&f->mu);
	return c;
}

#endif /* LV_TEST_HOOKS */
