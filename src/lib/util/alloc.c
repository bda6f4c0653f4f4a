/*
 * The library's allocator: every allocation of src/lib goes through lv__malloc,
 * lv__calloc, lv__realloc (or a helper here built on them), so a test can fail the
 * Nth one.  Allocation-failure counters are test hooks: they are compiled only with
 * LV_TEST_HOOKS (the test library, CMakeLists.txt LV_HOOK_SOURCES) and cost the
 * production library nothing.
 *
 * Blocks of LV__BLOCK_MIN bytes or more are taken from and given back to the large-block
 * cache (blocks.c) when one fits, so repeated calls reuse faulted-in pages (lv__realloc of
 * NULL, a buffer's first reservation, included); lv__free is what gives a block back (a
 * plain free() of a large block just frees it).
 *
 * Invariants: a size of 0 allocates 1 byte (never NULL for success); a product that
 * overflows size_t fails as out of memory; copies are NUL-terminated; the failure hook
 * counts an allocation served from the cache like any other.
 */
#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef LV_TEST_HOOKS
/* The allocation-failure hook (lv__alloc_fail_at): lock-free atomics, so no lock a fork()
 * could inherit.  The allocation numbered `alloc_fail` (1-based since the last call) fails. */
static uint64_t alloc_count, alloc_fail; /* __atomic builtins only */

static bool alloc_fails(void)
{
	uint64_t k = __atomic_add_fetch(&alloc_count, 1, __ATOMIC_RELAXED);
	uint64_t f = __atomic_load_n(&alloc_fail, __ATOMIC_RELAXED);
	return f && k == f;
}

uint64_t lv__alloc_fail_at(uint64_t nth)
{
	uint64_t seen = __atomic_exchange_n(&alloc_count, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&alloc_fail, nth, __ATOMIC_RELAXED);
	return seen;
}
#define LV__ALLOC_CHECK()             \
	do {                          \
		if (alloc_fails())    \
			return NULL;  \
	} while (0)
#else
#define LV__ALLOC_CHECK() ((void)0)
#endif

void *lv__malloc(size_t n)
{
	LV__ALLOC_CHECK();
	void *p = lv__blocks_take(n);
	return p ? p : malloc(n ? n : 1);
}

void *lv__calloc(size_t n, size_t size)
{
	LV__ALLOC_CHECK();
	size_t t;
	if (lv__mul_overflow(n, size, &t))
		return NULL;
	void *p = lv__blocks_take(t);
	if (p)
		return memset(p, 0, t); /* pages already mapped: cheaper than new zero pages */
	return calloc(n ? n : 1, size ? size : 1);
}

void *lv__realloc(void *p, size_t n)
{
	LV__ALLOC_CHECK();
	if (!p) { /* like lv__malloc: a buffer's first reservation may come from the cache too */
		void *q = lv__blocks_take(n);
		return q ? q : malloc(n ? n : 1);
	}
	size_t have = n >= LV__BLOCK_MIN ? lv__blocks_usable(p) : 0; /* large requests only */
	if (n >= LV__BLOCK_MIN && n > have) {
		void *q = lv__blocks_take(n);
		if (q) {
			memcpy(q, p, have);
			lv__free(p);
			return q;
		}
	}
	return realloc(p, n ? n : 1);
}

void *lv__aligned_alloc(size_t align, size_t n)
{
	LV__ALLOC_CHECK();
	if (n > SIZE_MAX - (align - 1))
		return NULL;
	return aligned_alloc(align, n ? (n + align - 1) & ~(align - 1) : align);
}

void lv__free(void *p)
{
	if (!lv__blocks_give(p))
		free(p);
}
void *lv__reallocarray(void *p, size_t n, size_t size)
{
	size_t t;
	if (lv__mul_overflow(n, size, &t))
		return NULL;
	return lv__realloc(p, t);
}

void *lv__memdupz(const void *s, size_t n)
{
	return n == SIZE_MAX ? NULL : lv__copyz(lv__malloc(n + 1), s, n);
}

char *lv__strndup(const char *s, size_t n) { return lv__memdupz(s, n); }

char *lv__strdup(const char *s) { return s ? lv__strndup(s, strlen(s)) : NULL; }

char *lv__join2(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name), at = dl ? dl + 1 : 0;
	if (nl > SIZE_MAX - 1 - at)
		return NULL;
	char *p = lv__malloc(at + nl + 1);
	if (!p)
		return NULL;
	memcpy(p, dir, dl);
	if (dl)
		p[dl] = '/';
	memcpy(p + at, name, nl + 1);
	return p;
}

void lv__copy_bytes(void *d, const void *s, size_t n)
{
	memcpy(d, s, n);
}

void lv__free_secret(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s)); /* a plain memset before free() may be optimised away */
	free(s);
}

char *lv__sprintf(const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = NULL;
	if (n >= 0 && (s = lv__malloc((size_t)n + 1)))
		vsnprintf(s, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	return s;
}
