/*
 * The process-wide cache of parsed Lance file schema fields (schcache.h).  versions() on a
 * fresh handle reads a checkpoint file on every open, and history reads many archive
 * segments: each FileDescriptor (~1 KB, ~120 protobuf fields) took a fifth of the read to
 * parse, nearly all of it the fields, which every checkpoint of a dataset shares.
 *
 * Invariants:
 *  - The key is the bytes of the schema's fields (every Schema.fields entry, contiguous:
 *    schema.c does not look a schema up whose fields have another entry between them), the
 *    footer's physical column count and the file version: all that the fields and columns
 *    of a parse depend on.  The metadata and the row count are not in it and not in an
 *    entry: schema.c parses them from each file.  A hit compares lengths, then every byte.
 *    Nothing else of the file is looked at: every offset, page and column check of the
 *    read still runs.
 *  - Only a parse whose every top-level column is decodable is stored (no error string: a
 *    read's flags and name change nothing in it), with every field string inside the
 *    fields' bytes (or absent), at most MAX_SCHEMA bytes of fields and MAX_ENTRY bytes in
 *    all (under the large-block size: an entry never holds a block of the allocator's
 *    cache, blocks.c).  At most SLOTS entries are held (< 256 KiB); a new one replaces the
 *    least recently used.
 *  - An entry is one lv__malloc block, immutable once published; it holds no pointer to
 *    a string (field strings are offsets into the fields' bytes, which are equal in every
 *    file that hits).  A reader holds a reference while schema.c copies it into the
 *    file's arena: a file never points into an entry.
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

typedef struct entry {
	lv__lf_schsnap s; /* first: release() finds the entry from it; immutable once published */
	const uint8_t *key; /* the fields' bytes, s.n */
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
	return e->s.n == n && e->nphys == nphys && e->version == version && !memcmp(e->key, p, n);
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

/* Where string s of f lies from the fields' first byte (at: their offset in the schema, n
 * bytes), SIZE_MAX when absent (the copy's end, schema.c); false outside the fields. */
static bool offset_of(const lv_lancefile *f, size_t at, size_t n, const char *s, size_t *off)
{
	uintptr_t p = (uintptr_t)s, lo = (uintptr_t)f->sch_copy + at;
	if (s == f->sch_copy + f->sch_n) {
		*off = SIZE_MAX;
		return true;
	}
	*off = p - lo;
	return p >= lo && p - lo <= n;
}

static bool cacheable(const lv_lancefile *f, size_t at, size_t n)
{
	size_t off;
	if (n > MAX_SCHEMA || !f->sch_copy || at > f->sch_n || n > f->sch_n - at)
		return false;
	for (size_t i = 0; i < f->ncols; i++)
		if (f->errors[i] || f->cols[i].type == LV_COL_UNDECODED || f->phys[i] == SIZE_MAX)
			return false;
	for (size_t i = 0; i < f->nfields; i++)
		if (!offset_of(f, at, n, f->fields[i].name, &off) ||
		    !offset_of(f, at, n, f->fields[i].ltype, &off))
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

enum { O_KEY, O_FIELDS, O_NAME, O_LTYPE, O_COLS, O_PHYS, O_N };

/* The entry's size and the offsets of its arrays; 0 when it would exceed MAX_ENTRY. */
static size_t layout(const lv_lancefile *f, size_t n, size_t off[O_N])
{
	size_t at = sizeof(entry);
	bool ok = reserve(&at, &off[O_KEY], n, 1) &&
		  reserve(&at, &off[O_FIELDS], f->nfields, sizeof(lv__lf_field)) &&
		  reserve(&at, &off[O_NAME], f->nfields, sizeof(size_t)) &&
		  reserve(&at, &off[O_LTYPE], f->nfields, sizeof(size_t)) &&
		  reserve(&at, &off[O_COLS], f->ncols, sizeof(lv_column)) &&
		  reserve(&at, &off[O_PHYS], f->ncols, sizeof(size_t));
	return ok ? at : 0;
}

/* A new entry of f's fields and columns (the n bytes of fields at f->sch + at). */
static entry *build(const lv_lancefile *f, size_t at, size_t n, size_t nphys)
{
	size_t off[O_N], bytes = layout(f, n, off);
	char *b = bytes ? lv__malloc(bytes) : NULL;
	if (!b)
		return NULL;
	entry *e = (entry *)b;
	*e = (entry){ .bytes = bytes, .nphys = nphys, .version = f->version };
	lv__lf_schsnap *s = &e->s;
	*s = (lv__lf_schsnap){ .n = n, .nfields = f->nfields, .ncols = f->ncols };
	e->key = memcpy(b + off[O_KEY], f->sch + at, n);
	lv__lf_field *fields = memcpy(b + off[O_FIELDS], f->fields, f->nfields * sizeof *fields);
	size_t *name_at = (size_t *)(b + off[O_NAME]), *ltype_at = (size_t *)(b + off[O_LTYPE]);
	lv_column *cols = (lv_column *)(b + off[O_COLS]);
	s->phys = memcpy(b + off[O_PHYS], f->phys, f->ncols * sizeof *s->phys);
	for (size_t i = 0; i < f->nfields; i++) {
		offset_of(f, at, n, fields[i].name, &name_at[i]); /* cacheable(): in the fields */
		offset_of(f, at, n, fields[i].ltype, &ltype_at[i]);
		fields[i].name = fields[i].ltype = NULL;
	}
	for (size_t i = 0; i < f->ncols; i++) { /* what the schema sets; no column data */
		const lv_column *c = &f->cols[i];
		cols[i] = (lv_column){ .type = c->type, .nullable = c->nullable,
				       .list_size = c->list_size };
	}
	s->fields = fields;
	s->name_at = name_at;
	s->ltype_at = ltype_at;
	s->cols = cols;
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

void lv__lf_schcache_put(const lv_lancefile *f, size_t at, size_t n, size_t nphys)
{
	if (!cacheable(f, at, n))
		return;
	entry *e = build(f, at, n, nphys), *drop = e;
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
