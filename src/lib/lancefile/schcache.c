/*
 * The process-wide cache of parsed Lance file schemas (schcache.h).  versions() on a fresh
 * handle reads the head checkpoint again on every open; its FileDescriptor (~1 KB, ~120
 * protobuf fields) took a fifth of the read to parse.  A hit copies the stored parse.
 *
 * Invariants:
 *  - The key is the exact FileDescriptor bytes (the schema, its metadata and the row count,
 *    field 2: a file with other rows is another key), the footer's physical column count
 *    and the file version.  A hit compares lengths, then the last TAIL bytes (where the
 *    row count and the checksums lancever writes are), then every byte.  Nothing else of
 *    the file is looked at: every offset, page and column check of the read still runs.
 *  - Only a parse whose every top-level column is decodable is stored (no error string: a
 *    read's flags and name change nothing in it), with every string inside the schema's
 *    copy, at most MAX_SCHEMA bytes of schema and MAX_ENTRY bytes in all (under the
 *    large-block size: an entry never holds a block of the allocator's cache, blocks.c).
 *    At most SLOTS entries are held (< 256 KiB); a new one replaces the least recently used.
 *  - An entry is one lv__malloc block, immutable once published.  A reader holds a
 *    reference while schema.c copies it into the file's arena (the schema copy with its
 *    NULs in one memcpy, the arrays, then the string pointers rebased onto the file's
 *    copy): a file never points into an entry.
 *  - One mutex guards the table, the entries' reference counts and the counters.  It is
 *    never held while allocating, freeing or copying an entry out (so it has no order with
 *    the allocator's locks; fork() is safe: pthread_atfork); an entry replaced while a
 *    reader copies from it is freed by its last reader.
 *  - Held entries stay reachable from the table (LeakSanitizer: not a leak); the process's
 *    exit releases them.  Under ASan the cache is on: nothing of an entry is ever shared.
 */
#include "lancefile/schcache.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#define SLOTS 8
#define MAX_SCHEMA ((size_t)12 << 10)
#define MAX_ENTRY (LV__BLOCK_MIN - 64) /* malloc's own, never a block of blocks.c to pin */
#define TAIL 32

typedef struct entry {
	lv__lf_schsnap s; /* first: release() finds the entry from it; immutable once published */
	const uint8_t *key; /* the FileDescriptor's bytes, s.n */
	size_t bytes, nphys;
	int version;
	/* under mu */
	size_t refs;   /* readers copying from it */
	bool gone;     /* no longer in the table: its last reader frees it */
	uint64_t used; /* the tick of its last hit or store */
} entry;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static entry *slots[SLOTS];
static uint64_t tick;
#ifdef LV_TEST_HOOKS
static uint64_t hits, misses, stores;
#define COUNT(c) ((c)++)
#else
#define COUNT(c) ((void)0)
#endif

static void lock(void) { pthread_mutex_lock(&mu); }
static void unlock(void) { pthread_mutex_unlock(&mu); }
static void setup(void) { pthread_atfork(lock, unlock, unlock); }

static void start(void)
{
	pthread_once(&once, setup);
	lock();
}

static bool same(const entry *e, const uint8_t *p, size_t n, size_t nphys, int version)
{
	size_t t = n < TAIL ? n : TAIL;
	return e->s.n == n && e->nphys == nphys && e->version == version &&
	       !memcmp(e->key + n - t, p + n - t, t) && !memcmp(e->key, p, n - t);
}

const lv__lf_schsnap *lv__lf_schcache_acquire(const uint8_t *p, size_t n, size_t nphys,
					      int version)
{
	entry *hit = NULL;
	if (n > MAX_SCHEMA)
		return NULL;
	start();
	for (size_t i = 0; i < SLOTS && !hit; i++)
		if (slots[i] && same(slots[i], p, n, nphys, version))
			hit = slots[i];
	if (hit) {
		hit->refs++;
		hit->used = ++tick;
		COUNT(hits);
	} else {
		COUNT(misses);
	}
	unlock();
	return hit ? &hit->s : NULL;
}

void lv__lf_schcache_release(const lv__lf_schsnap *s)
{
	entry *e = (entry *)s;
	start();
	bool last = --e->refs == 0 && e->gone;
	unlock();
	if (last)
		lv__free(e);
}

/* ---- storing ---- */

/* s is a string of f's schema copy (NUL included). */
static bool in_copy(const lv_lancefile *f, const char *s)
{
	uintptr_t at = (uintptr_t)s, lo = (uintptr_t)f->sch_copy;
	return at >= lo && at - lo <= f->sch_n;
}

static bool cacheable(const lv_lancefile *f)
{
	if (f->sch_n > MAX_SCHEMA || !f->sch_copy)
		return false;
	for (size_t i = 0; i < f->ncols; i++)
		if (f->errors[i] || f->cols[i].type == LV_COL_UNDECODED || f->phys[i] == SIZE_MAX ||
		    !in_copy(f, f->cols[i].name) || !in_copy(f, f->ltypes[i]))
			return false;
	for (size_t i = 0; i < f->nfields; i++)
		if (!in_copy(f, f->fields[i].name) || !in_copy(f, f->fields[i].ltype))
			return false;
	for (size_t i = 0; i < f->nmeta; i++)
		if (!in_copy(f, f->meta[i].key) || !in_copy(f, f->meta[i].value))
			return false;
	return true;
}

/* Reserves n elements of `size` bytes at *at (aligned); false past MAX_ENTRY. */
static bool reserve(size_t *at, size_t *off, size_t n, size_t size)
{
	size_t a = (*at + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
	if (a > MAX_ENTRY || n > (MAX_ENTRY - a) / (size ? size : 1))
		return false;
	*off = a;
	*at = a + n * size;
	return true;
}

enum { O_KEY, O_COPY, O_FIELDS, O_META, O_KLEN, O_COLS, O_LTYPES, O_PHYS, O_N };

/* The entry's size and the offsets of its arrays; 0 when it would exceed MAX_ENTRY. */
static size_t layout(const lv_lancefile *f, size_t off[O_N])
{
	size_t at = sizeof(entry);
	bool ok = reserve(&at, &off[O_KEY], f->sch_n, 1) &&
		  reserve(&at, &off[O_COPY], f->sch_n + 1, 1) &&
		  reserve(&at, &off[O_FIELDS], f->nfields, sizeof(lv__lf_field)) &&
		  reserve(&at, &off[O_META], f->nmeta, sizeof(lv_kv)) &&
		  reserve(&at, &off[O_KLEN], f->nmeta, sizeof(size_t)) &&
		  reserve(&at, &off[O_COLS], f->ncols, sizeof(lv_column)) &&
		  reserve(&at, &off[O_LTYPES], f->ncols, sizeof(char *)) &&
		  reserve(&at, &off[O_PHYS], f->ncols, sizeof(size_t));
	return ok ? at : 0;
}

/* A new entry of f's parse, its strings rebased onto the entry's copy. */
static entry *build(const lv_lancefile *f, size_t nphys, uint64_t nrows)
{
	size_t off[O_N], bytes = layout(f, off);
	char *b = bytes ? lv__malloc(bytes) : NULL;
	if (!b)
		return NULL;
	entry *e = (entry *)b;
	*e = (entry){ .bytes = bytes, .nphys = nphys, .version = f->version };
	lv__lf_schsnap *s = &e->s;
	*s = (lv__lf_schsnap){ .n = f->sch_n, .block_size = f->mem.block_size,
			       .nfields = f->nfields, .nmeta = f->nmeta, .ncols = f->ncols,
			       .nrows = nrows };
	e->key = memcpy(b + off[O_KEY], f->sch, f->sch_n);
	char *copy = memcpy(b + off[O_COPY], f->sch_copy, f->sch_n + 1);
	lv__lf_field *fields = memcpy(b + off[O_FIELDS], f->fields, f->nfields * sizeof *fields);
	lv_kv *meta = memcpy(b + off[O_META], f->meta, f->nmeta * sizeof *meta);
	lv_column *cols = (lv_column *)(b + off[O_COLS]);
	char **ltypes = (char **)(b + off[O_LTYPES]);
	s->meta_klen = memcpy(b + off[O_KLEN], f->meta_klen, f->nmeta * sizeof *s->meta_klen);
	s->phys = memcpy(b + off[O_PHYS], f->phys, f->ncols * sizeof *s->phys);
	for (size_t i = 0; i < f->nfields; i++) {
		fields[i].name = copy + (fields[i].name - f->sch_copy);
		fields[i].ltype = copy + (fields[i].ltype - f->sch_copy);
	}
	for (size_t i = 0; i < f->nmeta; i++) {
		meta[i].key = copy + (meta[i].key - f->sch_copy);
		meta[i].value = copy + (meta[i].value - f->sch_copy);
	}
	for (size_t i = 0; i < f->ncols; i++) { /* what the schema sets; no column data */
		const lv_column *c = &f->cols[i];
		cols[i] = (lv_column){ .name = copy + (c->name - f->sch_copy), .type = c->type,
				       .nullable = c->nullable, .list_size = c->list_size };
		ltypes[i] = copy + (f->ltypes[i] - f->sch_copy);
	}
	s->copy = copy;
	s->fields = fields;
	s->meta = meta;
	s->cols = cols;
	s->ltypes = ltypes;
	return e;
}

/* Takes slot i out of the table; returns its entry when nobody reads it (free it after
 * unlocking), else leaves it to its last reader. */
static entry *evict(size_t i)
{
	entry *e = slots[i];
	slots[i] = NULL;
	if (e && e->refs) {
		e->gone = true;
		return NULL;
	}
	return e;
}

/* An empty slot, else the least recently used one. */
static size_t victim(void)
{
	size_t v = 0;
	for (size_t i = 0; i < SLOTS; i++) {
		if (!slots[i])
			return i;
		if (slots[i]->used < slots[v]->used)
			v = i;
	}
	return v;
}

void lv__lf_schcache_put(const lv_lancefile *f, size_t nphys, uint64_t nrows)
{
	if (!cacheable(f))
		return;
	entry *e = build(f, nphys, nrows), *drop = e;
	if (!e)
		return;
	bool known = false; /* another thread stored the same parse first */
	start();
	for (size_t i = 0; i < SLOTS && !known; i++)
		known = slots[i] && same(slots[i], e->key, e->s.n, nphys, e->version);
	if (!known) {
		size_t v = victim();
		drop = evict(v);
		e->used = ++tick;
		slots[v] = e;
		COUNT(stores);
	}
	unlock();
	lv__free(drop);
}

#ifdef LV_TEST_HOOKS
void lv__lf_schcache_stat(lv__lf_schcache_stats *s)
{
	start();
	*s = (lv__lf_schcache_stats){ .hits = hits, .misses = misses, .stores = stores };
	for (size_t i = 0; i < SLOTS; i++)
		if (slots[i]) {
			s->entries++;
			s->bytes += slots[i]->bytes;
		}
	unlock();
}

void lv__lf_schcache_clear(void)
{
	entry *drop[SLOTS];
	start();
	for (size_t i = 0; i < SLOTS; i++)
		drop[i] = evict(i);
	hits = misses = stores = 0;
	unlock();
	for (size_t i = 0; i < SLOTS; i++)
		lv__free(drop[i]);
}
#endif
