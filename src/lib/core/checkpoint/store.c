/*
 * The checkpoint directory: which names are checkpoints, which are damaged
 * files kept aside, the merge lock, and pruning.
 *
 * Invariants:
 *  - Readers take only "{version:020}.lance" for checkpoints; a name with the
 *    quarantine suffix is never read as one and never pruned.
 *  - The merge lock is an object created with create-if-absent; a lock
 *    whose holder died (or whose lease ran out) is broken.
 */
#include "core/checkpoint/store.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/checkpoint/checkpoint_internal.h"
#include "core/crc32c.h"
#include "util/util.h"

/* ---- names ---- */

void lv__cp_names_free(lv__cp_names *c)
{
	lv__free(c->v);
	lv__free(c->damaged);
	c->v = c->damaged = NULL;
	c->n = c->ndamaged = 0;
}

static int cp_list_cb(const lv_list_entry *e, void *payload)
{
	lv__cp_names *c = payload;
	const char *name = lv__basename(e->path);
	uint64_t v;
	size_t len = strlen(name), sl = strlen(LV__CP_DAMAGED_SUFFIX);
	if (len > 26 + sl && !strncmp(name + 20, ".lance" LV__CP_DAMAGED_SUFFIX, 6 + sl) &&
	    lv__parse_u64(name, 20, &v) && len < sizeof c->v[0].path - sizeof LV__CP_DIR) {
		lv__cp_name *nd = lv__grow(c->damaged, &c->capdamaged, c->ndamaged, sizeof *nd, 4);
		if (!nd) {
			c->rc = LV_ENOMEM;
			return 1;
		}
		c->damaged = nd;
		nd[c->ndamaged].version = v;
		nd[c->ndamaged].size = e->size;
		snprintf(nd[c->ndamaged].path, sizeof nd[c->ndamaged].path, LV__CP_DIR "/%s", name);
		c->ndamaged++;
		return 0;
	}
	bool ours = len >= 26 && !strncmp(name + 20, ".lance", 6) && lv__parse_u64(name, 20, &v);
	if (ours && len > 26)
		c->nother++;
	if (!ours || len != 26)
		return 0;
	lv__cp_name *nv = lv__grow(c->v, &c->cap, c->n, sizeof *nv, 8);
	if (!nv) {
		c->rc = LV_ENOMEM;
		return 1;
	}
	c->v = nv;
	c->v[c->n].version = v;
	c->v[c->n].size = e->size;
	c->v[c->n].mtime_ms = e->mtime_ms;
	_Static_assert(sizeof c->v[0].path > sizeof LV__CP_DIR + 26, "a checkpoint's path fits");
	memcpy(c->v[c->n].path, LV__CP_DIR "/", sizeof LV__CP_DIR);
	memcpy(c->v[c->n].path + sizeof LV__CP_DIR, name, 27); /* its 26 bytes and the NUL */
	c->n++;
	return 0;
}

static int cmp_name_desc(const void *a, const void *b)
{
	const lv__cp_name *x = a, *y = b;
	return x->version < y->version ? 1 : x->version > y->version ? -1 : 0;
}

static int cp_list(lv_storage *st, lv__cp_names *out, bool names_only, lv_error *err)
{
	memset(out, 0, sizeof *out);
	int rc = names_only ? lv_storage_list_names(st, LV__CP_DIR, cp_list_cb, out, err)
			    : lv_storage_list(st, LV__CP_DIR, false, cp_list_cb, out, err);
	if (rc >= 0 && out->rc < 0)
		rc = lv__err(err, out->rc, "out of memory");
	if (rc < 0) {
		lv__cp_names_free(out);
		return rc;
	}
	if (out->n > 1)
		qsort(out->v, out->n, sizeof *out->v, cmp_name_desc);
	if (out->ndamaged > 1)
		qsort(out->damaged, out->ndamaged, sizeof *out->damaged, cmp_name_desc);
	return 0;
}

int lv__cp_list(lv_storage *st, lv__cp_names *out, lv_error *err)
{
	return cp_list(st, out, false, err);
}

int lv__cp_list_names(lv_storage *st, lv__cp_names *out, lv_error *err)
{
	return cp_list(st, out, true, err);
}

int lv__cp_newest_name(lv_storage *st, uint64_t *version, lv_error *err)
{
	lv__cp_names names;
	*version = 0;
	int rc = lv__cp_list(st, &names, err);
	if (rc < 0)
		return rc;
	if (names.n)
		*version = names.v[0].version;
	lv__cp_names_free(&names);
	return 0;
}
/* ---- the merge lock ---- */

/*
 * Replacing a checkpoint (the merge in lv_checkpoint_write) is read, merge,
 * write: two writers doing it at once each wrote a merge of what they had
 * read, and the last one dropped the other's is_cleaned_up flags (a lost
 * update; seen on S3 by tests/interop/test_concurrency.mjs).  So it runs
 * under a lock: the object "<checkpoint>.lock", taken with create-if-absent
 * (atomic on every backend) and deleted afterwards.  Its text names the holder
 * ("<host> <pid> <ms>"); a lock whose holder died on this host, or older than
 * LOCK_LEASE_MS, is broken.  Readers never look at lock objects; prune_old
 * removes stale ones a killed writer left.
 */

#define LOCK_LEASE_MS 30000

#define LOCK_WAIT_MS 120000

static void lock_holder(char *buf, size_t cap)
{
	char host[256] = "";
	if (gethostname(host, sizeof host - 1) != 0 || !host[0] || strchr(host, ' '))
		snprintf(host, sizeof host, "-");
	snprintf(buf, cap, "%s %ld %" PRId64 "\n", host, (long)getpid(), lv__now_ms());
}

/* Is the lock text `b` stale at `now`: its holder is gone from this host, or its lease is over? */
static bool lock_stale(const lv_buf *b, int64_t now)
{
	char text[512], host[256], mine[300];
	size_t n = b->size < sizeof text - 1 ? b->size : sizeof text - 1;
	memcpy(text, b->ptr, n);
	text[n] = 0;
	long long pid, ms;
	if (sscanf(text, "%255s %lld %lld", host, &pid, &ms) != 3)
		return true; /* not ours: only complete lock texts are ever created */
	if (now - ms > LOCK_LEASE_MS)
		return true;
	lock_holder(mine, sizeof mine);
	size_t hl = strlen(host);
	bool same_host = !strncmp(mine, host, hl) && mine[hl] == ' ';
	return same_host && pid != (long long)getpid() && pid > 0 && kill((pid_t)pid, 0) != 0 &&
	       errno == ESRCH;
}

int lv__cp_lock_take(lv_storage *st, const char *path, lv_error *err)
{
	int64_t start = lv__now_ms();
	for (unsigned spin = 0;; spin++) {
		char text[300];
		lock_holder(text, sizeof text);
		int rc = lv_storage_create(st, path, text, strlen(text), err);
		if (rc != LV_EEXISTS)
			return rc;
		lv_buf b = { 0 };
		lv_error e = { 0 };
		bool held = false;
		rc = lv_storage_read(st, path, &b, &e);
		if (rc == 0) {
			held = !lock_stale(&b, lv__now_ms());
			if (!held) /* its writer died: break it */
				rc = lv_storage_delete(st, path, &e);
		}
		lv_buf_dispose(&b);
		if (rc < 0 && rc != LV_ENOTFOUND) /* not found: released meanwhile */
			return lv__err(err, rc, "%s", e.message);
		if (lv__now_ms() - start > LOCK_WAIT_MS)
			return lv__err(err, LV_ECONFLICT, "%s: held by another writer for %d s; giving up",
				       path, LOCK_WAIT_MS / 1000);
		if (held) {
			struct timespec ts = { 0, (long)(spin < 10 ? 1 + spin : 20) * 1000000L };
			nanosleep(&ts, NULL);
		}
	}
}

/* Removes lock objects left in _checkpoints/ by killed writers. */
typedef struct lock_names {
	char **v;
	size_t n, cap;
	int rc;
} lock_names;

static int lock_list_cb(const lv_list_entry *e, void *payload)
{
	lock_names *l = payload;
	size_t n = strlen(e->path), sl = strlen(LV__CP_LOCK_SUFFIX);
	if (n <= sl || strcmp(e->path + n - sl, LV__CP_LOCK_SUFFIX))
		return 0;
	char **nv = lv__grow(l->v, &l->cap, l->n, sizeof *nv, 4);
	if (!nv || !(nv[l->n] = lv__strdup(e->path))) {
		if (nv)
			l->v = nv;
		l->rc = LV_ENOMEM;
		return 1;
	}
	l->v = nv;
	l->n++;
	return 0;
}

void lv__cp_sweep_stale_locks(lv_storage *st)
{
	lock_names l = { 0 };
	lv_error e = { 0 };
	if (lv_storage_list(st, LV__CP_DIR, false, lock_list_cb, &l, &e) >= 0) {
		for (size_t i = 0; i < l.n; i++) {
			lv_buf b = { 0 };
			if (lv_storage_read(st, l.v[i], &b, &e) == 0 && lock_stale(&b, lv__now_ms()) &&
			    lv_storage_delete(st, l.v[i], &e) < 0) {
				/* best effort: the next prune tries again */
			}
			lv_buf_dispose(&b);
		}
	}
	for (size_t i = 0; i < l.n; i++)
		lv__free(l.v[i]);
	lv__free(l.v);
}

/* ---- damaged files, kept aside ---- */

int lv__cp_quarantine(lv_storage *st, const lv__cp_name *name, const lv_buf *bytes, char *aside,
		      size_t cap, lv_error *err)
{
	uint32_t crc = lv__crc32c(0, bytes->ptr, bytes->size);
	snprintf(aside, cap, "%s" LV__CP_DAMAGED_SUFFIX "%08x", name->path, crc);
	/* 1. The copy: created once; an existing one must hold the same bytes. */
	int rc = lv_storage_create(st, aside, bytes->ptr, bytes->size, err);
	if (rc < 0 && rc != LV_EEXISTS)
		return rc;
	lv_buf check = { 0 };
	if ((rc = lv_storage_read(st, aside, &check, err)) < 0)
		return rc;
	bool same = check.size == bytes->size && !memcmp(check.ptr, bytes->ptr, bytes->size);
	lv_buf_dispose(&check);
	if (!same)
		return lv__err(err, LV_ECONFLICT, "%s: exists with other content; %s kept in place",
			       aside, name->path);
	/* 2. The original goes only if it still holds what was copied (a writer may have
	 * replaced it meanwhile with a good file). */
	lv_buf now = { 0 };
	rc = lv_storage_read(st, name->path, &now, err);
	if (rc == LV_ENOTFOUND)
		return 0;
	if (rc < 0)
		return rc;
	same = now.size == bytes->size && !memcmp(now.ptr, bytes->ptr, bytes->size);
	lv_buf_dispose(&now);
	if (!same)
		return lv__err(err, LV_ECONFLICT, "%s changed while being moved aside", name->path);
	rc = lv_storage_delete(st, name->path, err);
	return rc == LV_ENOTFOUND ? 0 : rc;
}
