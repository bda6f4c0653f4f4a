/*
 * Memory of the Arrow export and its test hooks (lancever/sys/arrow.h), and the
 * streams' copies of their rows (lv__arows).
 *
 * Invariants: every allocation of src/lib/arrow goes through lv__arrow_alloc,
 * so an injected failure can hit any of them; the live-object counter is
 * incremented when an object with a release callback is handed out and
 * decremented inside that callback.  Both counters are lock-free atomics, so
 * they hold no lock a fork() could inherit.  They exist only in the test library
 * (LV_TEST_HOOKS): in the production library lv__arrow_alloc counts nothing and
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
static atomic_uint_fast64_t alloc_count; /* allocations since the last lv_arrow_fail_alloc_at */
static atomic_uint_fast64_t fail_at;     /* 0 = never */
#endif

void *lv__arrow_alloc(size_t n)
{
#ifdef LV_TEST_HOOKS
	uint64_t k = atomic_fetch_add(&alloc_count, 1) + 1;
	uint64_t f = atomic_load(&fail_at);
	if (f && k == f)
		return NULL;
#endif
	/* Arrow recommends 64-byte aligned buffers; aligned_alloc wants a multiple of it. */
	if (n > SIZE_MAX - 63)
		return NULL;
	size_t r = n ? (n + 63) & ~(size_t)63 : 64;
	void *p = aligned_alloc(64, r);
	if (p)
		memset(p, 0, r);
	return p;
}

void lv__arrow_free(void *p)
{
	free(p);
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

uint64_t lv_arrow_fail_alloc_at(uint64_t nth)
{
	uint64_t seen = atomic_exchange(&alloc_count, 0);
	atomic_store(&fail_at, nth);
	return seen;
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
