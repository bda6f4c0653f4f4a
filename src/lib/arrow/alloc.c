/*
 * Memory of the Arrow export and its test hooks (lancever/sys/arrow.h), and the
 * streams' copies of their rows (lv__arows).
 *
 * Invariants: every allocation of src/lib/arrow goes through lv__arrow_alloc,
 * so an injected failure can hit any of them; the live-object counter is
 * incremented when an object with a release callback is handed out and
 * decremented inside that callback.  Both counters are lock-free atomics, so
 * they hold no lock a fork() could inherit.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow_internal.h"
#include "lancever/sys/arrow.h"
#include "util/util.h"

static atomic_int_fast64_t live_objects;
static atomic_uint_fast64_t alloc_count; /* allocations since the last lv_arrow_fail_alloc_at */
static atomic_uint_fast64_t fail_at;     /* 0 = never */

void *lv__arrow_alloc(size_t n)
{
	uint64_t k = atomic_fetch_add(&alloc_count, 1) + 1;
	uint64_t f = atomic_load(&fail_at);
	if (f && k == f)
		return NULL;
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
	atomic_fetch_add(&live_objects, delta);
}

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
