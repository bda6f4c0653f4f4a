/*
 * Memory of the Arrow export and its test hooks (lancever/sys/arrow.h), and the
 * streams' copies of their rows (lv__arows).
 *
 * Invariants: every allocation of src/lib/arrow goes through lv__arrow_alloc, which
 * takes it from the library's allocator (util.h), so an injected failure
 * (lv_arrow_fail_alloc_at = the library's one counter, lv__alloc_fail_at) can hit any
 * of them; the live-object counter is incremented when an object with a release
 * callback is handed out and decremented inside that callback.  The counter is a
 * lock-free atomic, so it holds no lock a fork() could inherit.  Both hooks exist
 * only in the test library (LV_TEST_HOOKS): in the production library
 * lv__arrow_live_add is empty.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow_internal.h"
#include "util/util.h"

#ifdef LV_TEST_HOOKS
#include "lancever/sys/arrow.h"

static atomic_int_fast64_t live_objects;
#endif

void *lv__arrow_alloc(size_t n)
{
	/* Arrow recommends 64-byte aligned buffers. */
	void *p = lv__aligned_alloc(64, n);
	if (p)
		memset(p, 0, n ? (n + 63) & ~(size_t)63 : 64);
	return p;
}

void lv__arrow_free(void *p)
{
	lv__free(p);
}

void lv__arrow_live_add(int64_t delta)
{
#ifdef LV_TEST_HOOKS
	atomic_fetch_add(&live_objects, delta);
#else
	(void)delta;
#endif
}

#ifdef LV_TEST_HOOKS
int64_t lv_arrow_live_objects(void)
{
	return (int64_t)atomic_load(&live_objects);
}

/* The library's one allocation-failure counter (util/alloc.c): it counts every allocation,
 * the export's and those of the history calls it makes. */
uint64_t lv_arrow_fail_alloc_at(uint64_t nth)
{
	return lv__alloc_fail_at(nth);
}
#endif

lv__arows *lv__arows_new(size_t n, size_t row_size, size_t string_bytes)
{
	lv__arows *r = lv__arrow_alloc(sizeof *r);
	size_t sz;
	if (!r || lv__mul_overflow(n, row_size, &sz) || !(r->rows = lv__arrow_alloc(sz)) ||
	    !(r->strings = lv__arrow_alloc(string_bytes))) {
		lv__arows_free(r);
		return NULL;
	}
	r->cap = string_bytes;
	return r;
}

void lv__arows_free(void *rows)
{
	lv__arows *r = rows;
	if (!r)
		return;
	lv__arrow_free(r->rows);
	lv__arrow_free(r->strings);
	lv__arrow_free(r);
}

const char *lv__arows_keep(lv__arows *r, const char *s)
{
	if (!s)
		return NULL;
	size_t l = strlen(s) + 1;
	char *p = r->strings + r->used;
	memcpy(p, s, l);
	r->used += l;
	return p;
}
