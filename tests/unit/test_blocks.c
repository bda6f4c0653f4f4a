/*
 * Unit tests: the large-block cache under the library's allocator (util/blocks.c,
 * util/alloc.c).  A large block given back by lv__free is handed to the next large
 * request that fits (same address: its pages are reused), never to a request below an
 * eighth of its size, never twice; lv__calloc zeroes a reused block; lv__realloc keeps
 * the bytes when it moves into a cached block, and lv__realloc of NULL (a buffer's first
 * reservation) takes a cached block like lv__malloc; the byte and slot caps hold; small blocks
 * (under 32 KiB) and blocks over the big-block cap are freed, not kept; one big block
 * (over the per-block cap) is kept apart, replaced by a newer one, and handed only to a
 * big request.  Under AddressSanitizer the cache is off (a use after free must stay
 * visible), which the first test checks too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/util.h"

#if defined(__SANITIZE_ADDRESS__)
#define CACHE_ON 0
#else
#define CACHE_ON 1
#endif

#define MIB ((size_t)1 << 20)

static int setup(void **state)
{
	(void)state;
	lv__blocks_release();
	return 0;
}

static void t_reuse_same_block(void **state)
{
	(void)state;
	char *a = lv__malloc(MIB);
	assert_non_null(a);
	memset(a, 'x', MIB);
	lv__free(a);
	char *b = lv__malloc(MIB - 4096);
	assert_non_null(b);
	if (CACHE_ON)
		assert_ptr_equal(a, b); /* the cached block, pages already faulted in */
	char *c = lv__malloc(MIB);
	assert_non_null(c);
	assert_ptr_not_equal(b, c); /* handed out at most once */
	lv__free(b);
	lv__free(c);
}

static void t_small_request_does_not_pin_a_large_block(void **state)
{
	(void)state;
	if (!CACHE_ON)
		skip();
	char *a = lv__malloc(4 * MIB);
	lv__free(a);
	char *b = lv__malloc(256 << 10); /* 4 MiB / 8 = 512 KiB > 256 KiB: not this block */
	assert_ptr_not_equal(a, b);
	char *c = lv__malloc(MIB); /* 512 KiB <= 1 MiB: this one */
	assert_ptr_equal(a, c);
	lv__free(b);
	lv__free(c);
}

static void t_calloc_zeroes_a_reused_block(void **state)
{
	(void)state;
	unsigned char *a = lv__malloc(2 * MIB);
	memset(a, 0xA5, 2 * MIB);
	lv__free(a);
	unsigned char *b = lv__calloc(2 * MIB / 8, 8);
	assert_non_null(b);
	if (CACHE_ON)
		assert_ptr_equal(a, b);
	for (size_t i = 0; i < 2 * MIB; i += 4093)
		assert_int_equal(b[i], 0);
	assert_int_equal(b[2 * MIB - 1], 0);
	lv__free(b);
	assert_null(lv__calloc(SIZE_MAX / 2, 4)); /* the product overflows: out of memory */
}

static void t_realloc_into_a_cached_block_keeps_the_bytes(void **state)
{
	(void)state;
	char *big = lv__malloc(3 * MIB);
	lv__free(big); /* cached */
	char *p = lv__malloc(200 << 10);
	for (size_t i = 0; i < (200 << 10); i++)
		p[i] = (char)(i * 7);
	char *q = lv__realloc(p, 2 * MIB);
	assert_non_null(q);
	if (CACHE_ON)
		assert_ptr_equal(q, big);
	for (size_t i = 0; i < (200 << 10); i++)
		assert_int_equal(q[i], (char)(i * 7));
	lv__free(q);
}

static void t_caps(void **state)
{
	(void)state;
	if (!CACHE_ON)
		skip();
	char *huge = lv__malloc(65 * MIB); /* over the big-block cap: freed, not kept */
	lv__free(huge);
	assert_int_equal(lv__blocks_held(NULL), 0);
	char *p[40];
	for (int i = 0; i < 40; i++)
		p[i] = lv__malloc(MIB + (size_t)i * 4096);
	for (int i = 0; i < 40; i++)
		lv__free(p[i]);
	/* 32 MiB in all: the oldest were freed; the newest is there */
	size_t n = 0, bytes = lv__blocks_held(&n);
	assert_true(bytes <= 32 * MIB && bytes > 30 * MIB);
	assert_true(n >= 27 && n <= 30);
	char *again = lv__malloc(MIB + 39 * 4096);
	assert_ptr_equal(again, p[39]);
	assert_int_equal(lv__blocks_held(NULL), bytes - lv__blocks_usable(again));
	lv__free(again);
	assert_int_equal(lv__blocks_held(NULL), bytes);
	char *s = lv__malloc(16 << 10); /* small blocks (under 32 KiB) are malloc's business */
	lv__free(s);
	assert_int_equal(lv__blocks_held(NULL), bytes);
	lv__blocks_release();
	assert_int_equal(lv__blocks_held(&n), 0);
	assert_int_equal(n, 0);
	/* 64 slots at most: 70 blocks of 40 KiB (2.8 MiB, under the byte cap) keep the newest 64 */
	char *q[70];
	for (int i = 0; i < 70; i++)
		q[i] = lv__malloc(40 << 10);
	for (int i = 0; i < 70; i++)
		lv__free(q[i]);
	lv__blocks_held(&n);
	assert_int_equal(n, 64);
	lv__blocks_release();
}

/* A buffer's first reservation (lv__realloc of NULL, as lv__dbuf_reserve does) is served
 * from the cache like lv__malloc: before, it always went to malloc for fresh pages. */
static void t_realloc_of_null_takes_a_cached_block(void **state)
{
	(void)state;
	if (!CACHE_ON)
		skip();
	char *a = lv__malloc(2 * MIB);
	lv__free(a);
	char *b = lv__realloc(NULL, 2 * MIB - 4096);
	assert_ptr_equal(a, b);
	lv__free(b);
	lv__dbuf d;
	lv__dbuf_init(&d, 0);
	assert_int_equal(lv__dbuf_reserve(&d, MIB), 0); /* rounds up to 2 MiB: the same block */
	assert_ptr_equal(d.ptr, a);
	lv__dbuf_dispose(&d);
	lv__blocks_release();
}

static void t_one_big_block(void **state)
{
	(void)state;
	if (!CACHE_ON)
		skip();
	char *a = lv__malloc(20 * MIB), *b = lv__malloc(24 * MIB);
	memset(a, 'a', 20 * MIB);
	lv__free(a); /* kept as the big block */
	size_t n = 0;
	assert_true(lv__blocks_held(&n) >= 20 * MIB);
	assert_int_equal(n, 1);
	lv__free(b); /* a newer big block replaces it */
	assert_true(lv__blocks_held(&n) >= 24 * MIB);
	assert_int_equal(n, 1);
	char *small = lv__malloc(8 * MIB); /* not over the per-block cap: not the big block */
	assert_true(small != b);
	char *c = lv__malloc(12 * MIB); /* big and at least a quarter of it: the same pages */
	assert_ptr_equal(c, b);
	assert_int_equal(lv__blocks_held(&n), 0);
	memset(c, 'c', 12 * MIB);
	char *d = lv__realloc(c, 20 * MIB); /* grows in place or moves; the bytes stay */
	for (size_t i = 0; i < 12 * MIB; i += 4093)
		assert_int_equal(d[i], 'c');
	lv__free(d);
	lv__free(small);
	lv__blocks_release();
	assert_int_equal(lv__blocks_held(&n), 0);
	assert_int_equal(n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(t_reuse_same_block, setup),
		cmocka_unit_test_setup(t_small_request_does_not_pin_a_large_block, setup),
		cmocka_unit_test_setup(t_calloc_zeroes_a_reused_block, setup),
		cmocka_unit_test_setup(t_realloc_into_a_cached_block_keeps_the_bytes, setup),
		cmocka_unit_test_setup(t_caps, setup),
		cmocka_unit_test_setup(t_realloc_of_null_takes_a_cached_block, setup),
		cmocka_unit_test_setup(t_one_big_block, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
