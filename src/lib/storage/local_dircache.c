/*
 * Local filesystem backend, the directory-fd cache: reads and heads open
 * their file relative to a directory descriptor kept on the handle instead of
 * walking the path from the root each time (a manifest read was three opens
 * and three closes; a head two and two).  The root is an entry too (""): a
 * directory not cached, and every listing's directory, is walked from it.
 *
 * Invariants:
 *  - An entry is made only by the same O_NOFOLLOW walk from the root as an
 *    uncached operation (local_fs.c), or by a listing that opened its directory
 *    that way (lv__local_dir_keep), so a cached descriptor is always of a real
 *    directory that was below the root, reached through no symbolic link.
 *  - An entry serves at most LV__DC_USES operations and at most
 *    LV__DC_AGE_NS after its walk; then the next operation walks again.  So a
 *    component swapped for a symlink, or a directory replaced, is seen within
 *    that bound (today's batch delete already holds one walk for 1,000 deletes).
 *  - Reads and heads use any entry; listings only the root's, walking every
 *    component below it with O_NOFOLLOW, and read a descriptor of their own.
 *    Writes, creates and deletes walk every time, as before: nothing is ever
 *    created or removed through a cached descriptor.
 *  - "Not found" is never answered from the cache alone: a read or head through
 *    a cached descriptor that finds nothing is tried once more with a fresh
 *    walk, and a directory missing below a cached root (a walk or a listing) is
 *    confirmed by one fstatat of the root's path + the directory, else walked
 *    afresh.  So a directory replaced under the cache never answers "not found"
 *    for what the fresh directory holds.
 *  - Descriptors held are bounded per handle (LV__DC_SLOTS) and per process
 *    (LV__DC_PROCESS_MAX, over every handle: a watcher holds a handle per
 *    table); an expired entry is closed at the handle's next operation.
 *  - Entries are shared between threads: a reference count keeps a descriptor
 *    open while an operation uses it; an entry that expired, or was evicted,
 *    is closed by its last user.  All bookkeeping is under one mutex; the
 *    walk and the file operations run outside it.
 */
#include "storage/local_int.h"
#include "util/util.h"

#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LV__DC_SLOTS 8
#define LV__DC_USES 4096u
#define LV__DC_AGE_NS (50ull * 1000 * 1000)
#define LV__DC_PROCESS_MAX 64

/* Descriptors kept by every cache of the process (atomic). */
static int dc_open_total;

typedef struct dc_ent {
	char *dir;     /* relative path of the directory ("" = the root); NULL = free slot;
			* short ones live in inl (no allocation), longer ones on the heap */
	size_t len;
	int fd;
	int refs;      /* operations using fd now */
	unsigned uses; /* operations served since the walk */
	uint64_t born_ns;
	bool stale;    /* no new user; closed by the last one */
	char inl[40];
} dc_ent;

struct lv__dircache {
	pthread_mutex_t mu;
	dc_ent e[LV__DC_SLOTS];
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

lv__dircache *lv__dircache_new(void)
{
	lv__dircache *c = lv__calloc(1, sizeof *c);
	if (c && pthread_mutex_init(&c->mu, NULL) != 0) {
		lv__free(c);
		return NULL;
	}
	return c;
}

static void ent_drop(dc_ent *e)
{
	__atomic_sub_fetch(&dc_open_total, 1, __ATOMIC_RELAXED);
	close(e->fd);
	if (e->dir != e->inl)
		lv__free(e->dir);
	*e = (dc_ent){ 0 };
}

void lv__dircache_free(lv__dircache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < LV__DC_SLOTS; i++)
		if (c->e[i].dir)
			ent_drop(&c->e[i]);
	pthread_mutex_destroy(&c->mu);
	lv__free(c);
}

/* A live entry for dir[0, len) that may serve one more operation (counted), or NULL; an
 * expired one is marked stale (closed now if unused).  Under the lock. */
static dc_ent *find(lv__dircache *c, const char *dir, size_t len, uint64_t now)
{
	for (size_t i = 0; i < LV__DC_SLOTS; i++) {
		dc_ent *e = &c->e[i];
		if (!e->dir || e->stale || e->len != len || memcmp(e->dir, dir, len))
			continue;
		if (e->uses >= LV__DC_USES || now - e->born_ns > LV__DC_AGE_NS) {
			e->stale = true;
			if (!e->refs)
				ent_drop(e);
			continue;
		}
		e->uses++;
		e->refs++;
		return e;
	}
	return NULL;
}

/* Keeps a freshly walked fd as an entry with `refs` users (1: the caller's operation; 0: kept
 * only) in a free slot, else in an unused entry evicted; NULL when every slot is in use (the
 * caller then owns fd).  Under the lock. */
static dc_ent *insert(lv__dircache *c, const char *dir, size_t len, int fd, int refs, uint64_t now)
{
	dc_ent *slot = NULL;
	for (size_t i = 0; i < LV__DC_SLOTS; i++) { /* an older walk of the same directory, or expired */
		dc_ent *e = &c->e[i];
		bool expired = e->dir && (e->uses >= LV__DC_USES || now - e->born_ns > LV__DC_AGE_NS);
		if (e->dir && (expired || (e->len == len && !memcmp(e->dir, dir, len)))) {
			e->stale = true;
			if (!e->refs)
				ent_drop(e);
		}
	}
	for (size_t i = 0; i < LV__DC_SLOTS && !slot; i++)
		if (!c->e[i].dir)
			slot = &c->e[i];
	for (size_t i = 0; i < LV__DC_SLOTS && !slot; i++)
		if (!c->e[i].refs) {
			ent_drop(&c->e[i]);
			slot = &c->e[i];
		}
	if (slot && __atomic_add_fetch(&dc_open_total, 1, __ATOMIC_RELAXED) > LV__DC_PROCESS_MAX) {
		__atomic_sub_fetch(&dc_open_total, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	char *copy = !slot ? NULL : len < sizeof slot->inl ? slot->inl : lv__malloc(len + 1);
	if (!copy) {
		if (slot)
			__atomic_sub_fetch(&dc_open_total, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	memcpy(copy, dir, len);
	copy[len] = 0;
	slot->dir = copy;
	slot->len = len;
	slot->fd = fd;
	slot->refs = refs;
	slot->uses = 1;
	slot->born_ns = now;
	slot->stale = false;
	return slot;
}

/* A cached root (entry "") in use, else walked now and kept; *cached tells which. */
static int root_get(const local *l, uint64_t now, const char *what, int *fd, dc_ent **ent,
		    bool *cached, lv_error *err)
{
	lv__dircache *c = l->dc;
	pthread_mutex_lock(&c->mu);
	*ent = find(c, "", 0, now);
	pthread_mutex_unlock(&c->mu);
	*cached = *ent != NULL;
	if (*ent) {
		*fd = (*ent)->fd;
		return 0;
	}
	const char *leaf;
	LV_TRY(lv__local_open_parent(l, "", false, what, fd, &leaf, err));
	pthread_mutex_lock(&c->mu);
	*ent = insert(c, "", 0, *fd, 1, now);
	pthread_mutex_unlock(&c->mu);
	return 0;
}

static void ent_put(lv__dircache *c, dc_ent *e, int fd)
{
	if (!e) {
		close(fd);
		return;
	}
	pthread_mutex_lock(&c->mu);
	if (--e->refs == 0 && e->stale)
		ent_drop(e);
	pthread_mutex_unlock(&c->mu);
}

/*
 * Walks rel[0, len) (len > 0) from the cached root.  A component missing below a root that
 * was cached (not walked now) is confirmed by one fstatat of the root's path: missing there
 * too, it is a definitive LV_ENOTFOUND (*definitive); otherwise the caller walks afresh.
 * err NULL: the code only (a listing's missing directory is no error: no message is made).
 */
static int walk_from_root(const local *l, const char *rel, size_t len, uint64_t now,
			  const char *what, int *fd, bool *definitive, lv_error *err)
{
	int rfd;
	dc_ent *re;
	bool rcached;
	*definitive = true;
	LV_TRY(root_get(l, now, what, &rfd, &re, &rcached, err));
	lv_error first = { 0 };
	int rc = lv__local_walk_at(l, rfd, rel, 0, len, what, fd, err ? &first : NULL);
	ent_put(l->dc, re, rfd);
	if (rc == LV_ENOTFOUND && rcached && !lv__local_confirm_missing(l, rel, len))
		*definitive = false;
	if (rc < 0 && *definitive && err)
		*err = first;
	return rc;
}

int lv__local_dir_get(const local *l, const char *rel, bool fresh, const char *what, lv__dirref *out,
		      lv_error *err)
{
	const char *slash = strrchr(rel, '/');
	size_t len = slash ? (size_t)(slash - rel) : 0;
	out->leaf = slash ? slash + 1 : rel;
	out->ent = NULL;
	out->cached = false;
	lv__dircache *c = l->dc;
	uint64_t now = c ? now_ns() : 0;
	if (c && !fresh) {
		pthread_mutex_lock(&c->mu);
		dc_ent *e = find(c, rel, len, now);
		pthread_mutex_unlock(&c->mu);
		if (e) {
			out->fd = e->fd;
			out->ent = e;
			out->cached = true;
			return 0;
		}
		if (!len) { /* the root itself: walked now (or cached by a concurrent walk) */
			dc_ent *re;
			LV_TRY(root_get(l, now, what, &out->fd, &re, &out->cached, err));
			out->ent = re;
			return 0;
		}
		bool definitive;
		int rc = walk_from_root(l, rel, len, now, what, &out->fd, &definitive, err);
		if (rc < 0 && definitive)
			return rc;
		if (rc == 0)
			goto keep;
	}
	const char *leaf;
	LV_TRY(lv__local_open_parent(l, rel, false, what, &out->fd, &leaf, err));
keep:
	if (c) {
		pthread_mutex_lock(&c->mu);
		out->ent = insert(c, rel, len, out->fd, 1, now);
		pthread_mutex_unlock(&c->mu);
	}
	return 0;
}

void lv__local_dir_keep(const local *l, const char *dir, int fd)
{
	lv__dircache *c = l->dc;
	dc_ent *e = NULL;
	if (c) {
		pthread_mutex_lock(&c->mu);
		e = insert(c, dir, strlen(dir), fd, 0, now_ns());
		pthread_mutex_unlock(&c->mu);
	}
	if (!e)
		close(fd);
}

/*
 * A listing's directory is walked from the cached root, every component with O_NOFOLLOW:
 * only the root entry is taken from the cache, never a deeper one, so a listing never goes
 * through a directory that was moved (say outside the root) after it was cached, and a
 * cleanup still stops at its listings when a directory it lists became a link.
 */
static int open_list_dir(const local *l, const char *dir, size_t len, int *fd, lv_error *err)
{
	if (!len || !l->dc) /* the root itself (a descriptor of its own), or no cache */
		return lv__local_open_dir(l, dir, len, "list", fd, err);
	bool definitive;
	int rc = walk_from_root(l, dir, len, now_ns(), "list", fd, &definitive, err);
	if (rc < 0 && !definitive) /* missing in the cached root only: walk afresh */
		rc = lv__local_open_dir(l, dir, len, "list", fd, err);
	return rc;
}

/* The walk runs without an error message first (a missing directory, the common case, needs
 * none); only another failure is walked again for its message. */
int lv__local_open_list_dir(const local *l, const char *dir, int *fd, lv_error *err)
{
	size_t len = strlen(dir);
	int rc = open_list_dir(l, dir, len, fd, NULL);
	if (rc < 0 && rc != LV_ENOTFOUND) {
		lv_error tmp = { 0 };
		rc = open_list_dir(l, dir, len, fd, &tmp);
		if (rc < 0 && rc != LV_ENOTFOUND && err)
			*err = tmp;
	}
	if (rc == LV_ENOTFOUND) { /* a missing directory (or a file there) lists as empty */
		*fd = -1;
		return 0;
	}
	return rc;
}

void lv__local_dir_put(const local *l, lv__dirref *d)
{
	ent_put(l->dc, d->ent, d->fd);
	d->ent = NULL;
}
