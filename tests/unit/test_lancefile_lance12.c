/*
 * Unit tests: the corpus of real Lance 12.0.0 data files (tests/fixtures/lance12/, made
 * by make_fixtures.mjs) and hostile compressed pages.
 *   - every fixture decodes strictly, with the version, row count, column types, null
 *     counts and a digest of every cell equal to what LanceDB returned (index.json,
 *     checked by support/lfdigest.c);
 *   - lv__lf_decompress refuses a claimed decompressed size over the cap, over the file's
 *     budget or other than the exact size expected, truncated zstd/lz4 data, and a bare
 *     zstd frame that expands past the cap - before allocating the claimed size;
 *   - a fixture whose zstd size prefix claims 2^62 bytes is an error, not an allocation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>
#include <lz4.h>
#include <zstd.h>

#include "lancefile/lf_internal.h"
#include "lancever/lancefile.h"
#include "support/lfdigest.h"
#include "support/testutil.h"

#define FIX LV_FIXTURES_DIR "/lance12/"

/* Every fixture decodes with every cell equal to LanceDB's. */
static void test_fixtures(void **st)
{
	(void)st;
	lfd_check_index(FIX, 10);
}

/* ---- lv__lf_decompress on hostile buffers ---- */

static lv__lf_dctx dctx(lv_error *err, lv__lf_budget *budget)
{
	lv__lf_dctx c = { .file = "t.lance", .col = "c", .err = err, .budget = budget };
	return c;
}

/* u64 size prefix + zstd frame of `n` bytes of a pattern. */
static uint8_t *zstd_buf(size_t n, size_t *len, uint8_t **plain)
{
	*plain = malloc(n ? n : 1);
	for (size_t i = 0; i < n; i++)
		(*plain)[i] = (uint8_t)(i * 7 % 13);
	size_t cap = ZSTD_compressBound(n) + 8;
	uint8_t *b = malloc(cap);
	size_t z = ZSTD_compress(b + 8, cap - 8, *plain, n, 3);
	assert_false(ZSTD_isError(z));
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)((uint64_t)n >> (8 * i));
	*len = z + 8;
	return b;
}

static void test_decompress_zstd(void **st)
{
	(void)st;
	lv_error err = { 0 };
	lv__lf_budget budget = { 1 << 24 };
	lv__lf_dctx c = dctx(&err, &budget);
	uint8_t *plain, *out;
	size_t len, outlen;
	uint8_t *b = zstd_buf(5000, &len, &plain);
	/* well formed, exact expectation */
	assert_int_equal(lv__lf_decompress(&c, LV__LF_COMP_ZSTD, b, len, 5000, 1 << 20, &out, &outlen), 0);
	assert_int_equal(outlen, 5000);
	assert_memory_equal(out, plain, 5000);
	free(out);
	assert_int_equal(budget.left, (1 << 24) - 5000);
	/* expected another size */
	assert_int_equal(lv__lf_decompress(&c, LV__LF_COMP_ZSTD, b, len, 4999, 1 << 20, &out, &outlen),
			 LV_ECORRUPT);
	assert_null(out);
	/* claimed size huge: refused before allocation (ASan would catch a 2^62 malloc) */
	b[7] = 0x40;
	assert_int_equal(lv__lf_decompress(&c, LV__LF_COMP_ZSTD, b, len, 0, SIZE_MAX, &out, &outlen),
			 LV_ECORRUPT);
	assert_non_null(strstr(err.message, "claims"));
	b[7] = 0;
	/* claimed size larger than the frame holds */
	b[0] = (uint8_t)(5001 & 0xff), b[1] = (uint8_t)(5001 >> 8);
	assert_int_equal(lv__lf_decompress(&c, LV__LF_COMP_ZSTD, b, len, 0, 1 << 20, &out, &outlen),
			 LV_ECORRUPT);
	b[0] = (uint8_t)(5000 & 0xff), b[1] = (uint8_t)(5000 >> 8);
	/* truncated frame */
	assert_int_equal(lv__lf_decompress(&c, LV__LF_COMP_ZSTD, b, len - 5, 0, 1 << 20, &out, &outlen),
			 LV_ECORRUPT);
	/* shorter than the prefix */
	assert_int_equal(lv__lf_decompress(&c, LV__LF_COMP_ZSTD, b, 5, 0, 1 << 20, &out, &outlen),
			 LV_ECORRUPT);
	/* over the file's remaining budget */
	budget.left = 100;
	assert_int_equal(lv__lf_decompress(&c, LV__LF_COMP_ZSTD, b, len, 0, 1 << 20, &out, &outlen),
			 LV_ECORRUPT);
	budget.left = 1 << 24;
	/* a bare frame (no prefix) is decoded too, and stops at the cap */
	assert_int_equal(lv__lf_decompress(&c, LV__LF_COMP_ZSTD, b + 8, len - 8, 0, 1 << 20, &out, &outlen),
			 0);
	assert_int_equal(outlen, 5000);
	free(out);
	assert_int_equal(lv__lf_decompress(&c, LV__LF_COMP_ZSTD, b + 8, len - 8, 0, 4000, &out, &outlen),
			 LV_ECORRUPT);
	free(b);
	free(plain);
}

/* A bare zstd frame without a content size that expands far past the cap. */
static void test_decompress_zstd_bomb(void **st)
{
	(void)st;
	size_t n = 64 << 20;
	uint8_t *zeros = calloc(1, n);
	ZSTD_CCtx *z = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(z, ZSTD_c_contentSizeFlag, 0);
	size_t cap = ZSTD_compressBound(n);
	uint8_t *b = malloc(cap);
	size_t len = ZSTD_compress2(z, b, cap, zeros, n);
	assert_false(ZSTD_isError(len));
	ZSTD_freeCCtx(z);
	free(zeros);
	assert_int_equal(ZSTD_getFrameContentSize(b, len), ZSTD_CONTENTSIZE_UNKNOWN);
	lv_error err = { 0 };
	lv__lf_budget budget = { (uint64_t)1 << 40 };
	lv__lf_dctx c = dctx(&err, &budget);
	uint8_t *out;
	size_t outlen;
	assert_int_equal(lv__lf_decompress(&c, LV__LF_COMP_ZSTD, b, len, 0, 1 << 20, &out, &outlen),
			 LV_ECORRUPT);
	assert_non_null(strstr(err.message, "over"));
	free(b);
}

static void test_decompress_lz4(void **st)
{
	(void)st;
	lv_error err = { 0 };
	lv__lf_budget budget = { 1 << 24 };
	lv__lf_dctx c = dctx(&err, &budget);
	uint8_t plain[3000];
	for (size_t i = 0; i < sizeof plain; i++)
		plain[i] = (uint8_t)(i % 17);
	uint8_t b[4 + 4096];
	int z = LZ4_compress_default((const char *)plain, (char *)b + 4, sizeof plain, 4096);
	assert_true(z > 0);
	b[0] = 3000 & 0xff, b[1] = 3000 >> 8, b[2] = 0, b[3] = 0;
	uint8_t *out;
	size_t outlen;
	assert_int_equal(lv__lf_decompress(&c, LV__LF_COMP_LZ4, b, (size_t)z + 4, 3000, 1 << 20, &out, &outlen),
			 0);
	assert_memory_equal(out, plain, 3000);
	free(out);
	/* claims 4 GiB - 1 */
	b[2] = 0xff, b[3] = 0xff;
	assert_int_equal(lv__lf_decompress(&c, LV__LF_COMP_LZ4, b, (size_t)z + 4, 0, 1 << 20, &out, &outlen),
			 LV_ECORRUPT);
	b[2] = 0, b[3] = 0;
	/* claims one byte more than the block holds; truncated block */
	b[0] = (3001 & 0xff);
	assert_int_equal(lv__lf_decompress(&c, LV__LF_COMP_LZ4, b, (size_t)z + 4, 0, 1 << 20, &out, &outlen),
			 LV_ECORRUPT);
	b[0] = 3000 & 0xff;
	assert_int_equal(lv__lf_decompress(&c, LV__LF_COMP_LZ4, b, (size_t)z, 0, 1 << 20, &out, &outlen),
			 LV_ECORRUPT);
	assert_int_equal(lv__lf_decompress(&c, LV__LF_COMP_LZ4, b, 3, 0, 1 << 20, &out, &outlen),
			 LV_ECORRUPT);
}

/* Patch every zstd size prefix of a real file to 2^62: an error naming the column. */
static void test_hostile_fixture(void **st)
{
	(void)st;
	size_t n;
	uint8_t *b = tu_read_file(FIX "zstd_2_2.lance", &n);
	int patched = 0;
	for (size_t i = 8; i + 4 <= n; i++)
		if (b[i] == 0x28 && b[i + 1] == 0xb5 && b[i + 2] == 0x2f && b[i + 3] == 0xfd &&
		    lv__le64(b + i - 8) < (1u << 24) && lv__le64(b + i - 8) > 0) {
			memset(b + i - 8, 0, 8);
			b[i - 1] = 0x40;
			patched++;
		}
	assert_true(patched > 0);
	lv_lancefile *f = NULL;
	lv_error err = { 0 };
	assert_true(lv_lancefile_read(&f, b, n, "zstd_2_2.lance", &err) < 0);
	assert_non_null(strstr(err.message, "zstd"));
	/* partial read: the schema survives, the damaged columns are named */
	assert_int_equal(lv_lancefile_read_ex(&f, b, n, "zstd_2_2.lance", LV_LANCEFILE_READ_PARTIAL,
					      &err), 0);
	size_t bad = 0;
	for (size_t i = 0; i < lv_lancefile_num_columns(f); i++)
		if (lv_lancefile_column_error(f, i)) {
			bad++;
			assert_int_equal(lv_lancefile_column(f, i)->type, LV_COL_UNDECODED);
		}
	assert_true(bad > 0);
	assert_int_equal(lv_lancefile_num_columns(f), 4);
	lv_lancefile_free(f);
	free(b);
}

/* Nested columns: a strict read fails naming the column; a partial read keeps the schema
 * (7 fields), decodes 'id' and 'score' (placed after the list and the struct by their
 * column counts, which match the footer's) and names why each nested one was not. */
static void test_nested_partial(void **st)
{
	(void)st;
	size_t n;
	uint8_t *b = tu_read_file(FIX "nested_2_2.lance", &n);
	lv_lancefile *f = NULL;
	lv_error err = { 0 };
	assert_int_equal(lv_lancefile_read(&f, b, n, "nested_2_2.lance", &err), LV_EUNSUPPORTED);
	assert_non_null(strstr(err.message, "'tags'"));
	assert_int_equal(lv_lancefile_read_ex(&f, b, n, "nested_2_2.lance", LV_LANCEFILE_READ_PARTIAL,
					      &err), 0);
	assert_int_equal(lv_lancefile_num_columns(f), 4);
	assert_int_equal(lv_lancefile_num_fields(f), 7);
	const char *name, *lt;
	bool nullable;
	unsigned depth;
	assert_int_equal(lv_lancefile_field(f, 2, &name, &lt, &nullable, &depth), 0);
	assert_string_equal(name, "item");
	assert_int_equal(depth, 1);
	const lv_column *id = lv_lancefile_column(f, 0);
	assert_int_equal(id->type, LV_COL_INT64);
	assert_null(lv_lancefile_column_error(f, 0));
	for (size_t r = 0; r < lv_lancefile_num_rows(f); r++)
		assert_int_equal(id->i64[r], (int64_t)r);
	assert_non_null(strstr(lv_lancefile_column_error(f, 1), "nested type 'list'"));
	assert_non_null(strstr(lv_lancefile_column_error(f, 2), "nested type 'struct'"));
	const lv_column *score = lv_lancefile_column(f, 3);
	assert_null(lv_lancefile_column_error(f, 3));
	assert_int_equal(score->type, LV_COL_FLOAT64);
	for (size_t r = 0; r < lv_lancefile_num_rows(f); r++) {
		double x;
		memcpy(&x, &score->u64[r], sizeof x);
		assert_true(x == (double)r * 0.25);
	}
	lv_lancefile_free(f);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures),
		cmocka_unit_test(test_decompress_zstd),
		cmocka_unit_test(test_decompress_zstd_bomb),
		cmocka_unit_test(test_decompress_lz4),
		cmocka_unit_test(test_hostile_fixture),
		cmocka_unit_test(test_nested_partial),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
