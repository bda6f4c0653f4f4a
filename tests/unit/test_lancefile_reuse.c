/*
 * Unit tests for what the Lance file reader reuses within one read (reader.c enc_cache,
 * miniblock.c layout_of, schema.c schema_str) and for the checks that must still run on
 * every page when it does:
 *  - a column or page encoding, or a mini-block layout, with the same bytes as the last
 *    valid one is taken as it is; one with other bytes is checked afresh (a bad second
 *    column after a good first one still fails, naming the second);
 *  - the per-page checks run on a reused layout: num_items against the page's rows, the
 *    column type's width, the page's buffers;
 *  - type URLs: the last '/'-separated segment must be the wanted name, whole;
 *  - schema strings live in one copy of the schema, NUL-terminated in place: names,
 *    metadata with NUL bytes, duplicate names compared as C strings.
 * Files are written by lv_lancefile_write (2.1: one mini-block page a column) and patched.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lancever/lancefile.h"
#include "support/testutil.h"
#include "util/util.h"

#define ROWS 3
#define PAGE_URL "/lance.encodings21.PageLayout"
#define COL_URL "/lance.encodings.ColumnEncoding"

static const uint64_t va[ROWS] = { 1, 2, 3 }, vb[ROWS] = { 10, 20, 30 }, vc[ROWS] = { 7, 8, 9 };

/* Three uint64 columns a, b, c (same encodings: the second and third reuse the first's). */
static lv_buf write3(const lv_kv *meta, size_t nmeta)
{
	lv_column c[3];
	memset(c, 0, sizeof c);
	c[0] = (lv_column){ .name = "a", .type = LV_COL_UINT64, .u64 = va };
	c[1] = (lv_column){ .name = "bb", .type = LV_COL_UINT64, .u64 = vb };
	c[2] = (lv_column){ .name = "c", .type = LV_COL_UINT64, .u64 = vc };
	lv_lancefile_write_options o = LV_LANCEFILE_WRITE_OPTIONS_INIT;
	o.file_version = LV_LANCEFILE_V2_1;
	lv_buf b = { 0 };
	lv_error e = { 0 };
	assert_int_equal(lv_lancefile_write(&b, c, 3, ROWS, meta, nmeta, &o, &e), 0);
	return b;
}

static int read_err(lv_buf *b, lv_error *e)
{
	lv_lancefile *f = NULL;
	memset(e, 0, sizeof *e);
	int rc = lv_lancefile_read(&f, b->ptr, b->size, "r.lance", e);
	if (rc == 0)
		lv_lancefile_free(f);
	return rc;
}

static void test_reused_encodings_decode(void **st)
{
	(void)st;
	lv_buf b = write3(NULL, 0);
	/* the three pages' layouts are the same bytes: what the reuse is for */
	assert_non_null(tu_nth(&b, PAGE_URL, strlen(PAGE_URL), 2));
	lv_lancefile *f = NULL;
	lv_error e = { 0 };
	assert_int_equal(lv_lancefile_read(&f, b.ptr, b.size, "r.lance", &e), 0);
	const uint64_t *want[3] = { va, vb, vc };
	for (size_t i = 0; i < 3; i++)
		assert_memory_equal(lv_lancefile_column(f, i)->u64, want[i], sizeof va);
	lv_lancefile_free(f);
	lv_buf_dispose(&b);
}

/* A second column whose column / page encoding differs from the first's (a bad type URL) is
 * checked, not taken from the first. */
static void test_changed_encoding_is_checked(void **st)
{
	(void)st;
	const char *urls[2] = { COL_URL, PAGE_URL };
	for (int u = 0; u < 2; u++) {
		lv_buf b = write3(NULL, 0);
		uint8_t *p = tu_nth(&b, urls[u], strlen(urls[u]), 1);
		assert_non_null(p);
		p[strlen(urls[u]) - 1] ^= 0x20; /* ...Encodin'G' / ...Layou'T' */
		lv_error e;
		assert_int_equal(read_err(&b, &e), LV_EUNSUPPORTED);
		assert_non_null(strstr(e.message, "'bb'"));
		assert_non_null(strstr(e.message, "unsupported encoding type"));
		lv_buf_dispose(&b);
	}
}

/* The Page message of column k: "... 18 <rows> 22 <len> 12 ..." (length, then encoding). */
static uint8_t *page_rows(lv_buf *b, int k)
{
	static const uint8_t pat[] = { 0x18, ROWS, 0x22 };
	return tu_nth(b, pat, sizeof pat, k);
}

/* A reused layout (the second column's is the first's bytes) still meets the page's checks:
 * its num_items against the page's rows. */
static void test_reused_layout_rows_checked(void **st)
{
	(void)st;
	lv_buf b = write3(NULL, 0);
	uint8_t *p = page_rows(&b, 1);
	assert_non_null(p);
	assert_non_null(page_rows(&b, 2)); /* three pages: the pattern is theirs */
	assert_null(page_rows(&b, 3));
	p[1] = ROWS - 1;
	lv_error e;
	assert_int_equal(read_err(&b, &e), LV_ECORRUPT);
	assert_non_null(strstr(e.message, "'bb'"));
	assert_non_null(strstr(e.message, "num_items 3 but page has 2 rows"));
	lv_buf_dispose(&b);
}

/* ... and the column's type: column bb declared uint32 keeps the first column's 64-bit
 * layout bytes, which must be refused for it, not taken as checked. */
static void test_reused_layout_type_checked(void **st)
{
	(void)st;
	lv_buf b = write3(NULL, 0);
	uint8_t *p = tu_nth(&b, "uint64", 6, 1);
	assert_non_null(p);
	memcpy(p, "uint32", 6);
	lv_error e;
	assert_int_equal(read_err(&b, &e), LV_EUNSUPPORTED);
	assert_non_null(strstr(e.message, "'bb'"));
	assert_non_null(strstr(e.message, "32-bit column"));
	lv_buf_dispose(&b);
}

/* Only the URL's last segment counts, and it must be the name whole: "xlance.enc..." (no
 * '/' before the name) is not the page layout type. */
static void test_type_url_segment(void **st)
{
	(void)st;
	lv_buf b = write3(NULL, 0);
	uint8_t *p = tu_nth(&b, PAGE_URL, strlen(PAGE_URL), 0);
	p[0] = 'x';
	lv_error e;
	assert_int_equal(read_err(&b, &e), LV_EUNSUPPORTED);
	assert_non_null(strstr(e.message, "'xlance.encodings21.PageLayout'"));
	assert_non_null(strstr(e.message, "'a'"));
	lv_buf_dispose(&b);
}

/* Schema strings: names and metadata (a value with NUL bytes, an empty one, keys that are
 * prefixes of others) read back from the schema's one copy. */
static void test_schema_strings(void **st)
{
	(void)st;
	static const lv_kv meta[] = { { "k", "v\0w", 3 }, { "kk", "", 0 }, { "k2", "x", 1 } };
	lv_buf b = write3(meta, 3);
	lv_lancefile *f = NULL;
	assert_int_equal(lv_lancefile_read(&f, b.ptr, b.size, "r.lance", NULL), 0);
	assert_string_equal(lv_lancefile_column(f, 0)->name, "a");
	assert_string_equal(lv_lancefile_column(f, 1)->name, "bb");
	assert_string_equal(lv_lancefile_column(f, 2)->name, "c");
	assert_string_equal(lv_lancefile_column_logical_type(f, 1), "uint64");
	const lv_kv *kv = lv_lancefile_metadata_find(f, "k");
	assert_non_null(kv);
	assert_int_equal(kv->value_len, 3);
	assert_memory_equal(kv->value, "v\0w", 4); /* and its NUL after */
	kv = lv_lancefile_metadata_find(f, "kk");
	assert_non_null(kv);
	assert_int_equal(kv->value_len, 0);
	assert_string_equal(kv->value, "");
	assert_string_equal(lv_lancefile_metadata_find(f, "k2")->value, "x");
	assert_null(lv_lancefile_metadata_find(f, "k3"));
	assert_null(lv_lancefile_metadata_find(f, ""));
	lv_lancefile_free(f);
	lv_buf_dispose(&b);
}

/* A name holding a NUL is the C string before it: "b\0" is column "b"... and "a\0" is a
 * duplicate of "a". */
static void test_duplicate_names_as_c_strings(void **st)
{
	(void)st;
	lv_buf b = write3(NULL, 0);
	uint8_t *p = tu_nth(&b, "bb", 2, 0);
	assert_non_null(p);
	p[1] = 0;
	lv_lancefile *f = NULL;
	assert_int_equal(lv_lancefile_read(&f, b.ptr, b.size, "r.lance", NULL), 0);
	assert_string_equal(lv_lancefile_column(f, 1)->name, "b");
	lv_lancefile_free(f);
	p[0] = 'a';
	lv_error e;
	assert_int_equal(read_err(&b, &e), LV_ECORRUPT);
	assert_non_null(strstr(e.message, "duplicate column name"));
	lv_buf_dispose(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reused_encodings_decode),
		cmocka_unit_test(test_changed_encoding_is_checked),
		cmocka_unit_test(test_reused_layout_rows_checked),
		cmocka_unit_test(test_reused_layout_type_checked),
		cmocka_unit_test(test_type_url_segment),
		cmocka_unit_test(test_schema_strings),
		cmocka_unit_test(test_duplicate_names_as_c_strings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
