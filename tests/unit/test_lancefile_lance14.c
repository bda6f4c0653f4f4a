/*
 * Unit tests: real Lance files written by pylance 14.0.2 (tests/fixtures/lance14/, made by
 * make_fixtures.py) and hand-built pages of the forms Lance 14 writes that lancever read
 * wrongly or refused before (docs/format.md "Lance file format layer"):
 *   - every fixture decodes (partially where index.json names a column lancever does not
 *     decode by design: nested types, blob columns), with the version, row count, types,
 *     null counts and a digest of every cell equal to what pylance read (lfdigest.c);
 *   - a 2.2 constant page with some rows null: u16 definition levels in page buffers,
 *     levels other than 0/1, a buffer of the wrong size and repetition levels refused;
 *   - a full-zip fixed-width page whose null rows still hold their value bytes, truncated;
 *   - a full-zip vector page with item validity: a null item in a valid row is refused;
 *   - a dictionary block with 64-bit offsets (large_string), offsets out of range refused;
 *   - the columns around nested ones placed by column counts, or named when the counts
 *     do not add up to the footer's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lancefile/lf_internal.h"
#include "lancever/lancefile.h"
#include "support/lfdigest.h"
#include "support/testutil.h"

#define FIX LV_FIXTURES_DIR "/lance14"
#define ROWS 6

static void test_fixtures(void **st)
{
	(void)st;
	lfd_check_index(FIX, 11);
}

/* ---- hand-built pages through lv__lf_decode_page21 ---- */

typedef struct page {
	lv__lf_colbuf cb;
	lv__lf_dctx c;
	lv_error err;
	lv__lf_budget budget;
} page;

/* A nullable column of ROWS rows of `type` (dim floats per vector). */
static void page_init(page *p, int type, uint32_t dim)
{
	memset(p, 0, sizeof *p);
	p->cb.type = type;
	p->cb.nullable = true;
	p->cb.dim = dim;
	lv__dbuf_init(&p->cb.data, 1 << 20);
	if (type == LV_COL_UTF8)
		p->cb.offs = calloc(ROWS + 1, sizeof *p->cb.offs);
	else if (type == LV_COL_FSL_FLOAT32)
		p->cb.f32 = calloc(ROWS * dim, sizeof *p->cb.f32);
	else
		p->cb.u64 = calloc(ROWS, sizeof *p->cb.u64);
	p->cb.valid = malloc(ROWS);
	memset(p->cb.valid, 1, ROWS);
	p->budget.left = 1 << 20;
	p->c = (lv__lf_dctx){ .file = "t.lance", .col = "c", .err = &p->err, .version = LV_LANCEFILE_V2_2,
			      .cb = &p->cb, .budget = &p->budget, .nrows = ROWS };
}

static void page_free(page *p)
{
	free(p->cb.u64);
	free(p->cb.offs);
	free(p->cb.f32);
	free(p->cb.valid);
	lv__dbuf_dispose(&p->cb.data);
}

static void page_buf(page *p, const void *b, size_t n)
{
	p->c.buf[p->c.nbufs] = b;
	p->c.buflen[p->c.nbufs++] = n;
}

/* PageLayout{2 ConstantLayout{5 layers = [3 nullable item], 6 inline_value = int32 7}} */
static const uint8_t CONST_I32[] = { 0x12, 0x08, 0x28, 0x03, 0x32, 0x04, 0x07, 0x00, 0x00, 0x00 };

static void test_constant_with_nulls(void **st)
{
	(void)st;
	uint8_t def[2 * ROWS] = { 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0 }; /* rows 0 and 3 null */
	page p;
	page_init(&p, LV_COL_INT32, 0);
	page_buf(&p, "", 0);
	page_buf(&p, def, sizeof def);
	assert_int_equal(lv__lf_decode_page21(&p.c, CONST_I32, sizeof CONST_I32), 0);
	for (size_t r = 0; r < ROWS; r++) {
		assert_int_equal(p.cb.valid[r], r % 3 != 0);
		assert_int_equal(p.cb.u64[r], r % 3 ? 7 : 0);
	}
	/* before: the levels were ignored and every row read as 7 */
	def[6] = 2;
	assert_int_equal(lv__lf_decode_page21(&p.c, CONST_I32, sizeof CONST_I32), LV_ECORRUPT);
	def[6] = 1;
	p.c.buflen[1] = 2 * ROWS - 2; /* levels for fewer rows than the page */
	assert_int_equal(lv__lf_decode_page21(&p.c, CONST_I32, sizeof CONST_I32), LV_EUNSUPPORTED);
	p.c.buflen[1] = 2 * ROWS;
	p.c.buflen[0] = 1; /* repetition levels: a list column */
	p.c.buf[0] = def;
	assert_int_equal(lv__lf_decode_page21(&p.c, CONST_I32, sizeof CONST_I32), LV_EUNSUPPORTED);
	assert_non_null(strstr(p.err.message, "repetition"));
	/* no level buffer at all: every row valid */
	page_free(&p);
	page_init(&p, LV_COL_INT32, 0);
	assert_int_equal(lv__lf_decode_page21(&p.c, CONST_I32, sizeof CONST_I32), 0);
	for (size_t r = 0; r < ROWS; r++)
		assert_true(p.cb.valid[r] && p.cb.u64[r] == 7);
	page_free(&p);
}

static void test_constant_string_with_nulls(void **st)
{
	(void)st;
	/* PageLayout{2 ConstantLayout{5 layers = [3]}}; the value is a one-row array */
	static const uint8_t layout[] = { 0x12, 0x02, 0x28, 0x03 };
	uint8_t val[24] = { 2, 0, 0, 0, 8, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 's', 'a', 'm', 'e' };
	uint8_t def[2 * ROWS] = { 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0 }; /* rows 1 and 5 null */
	page p;
	page_init(&p, LV_COL_UTF8, 0);
	page_buf(&p, val, sizeof val);
	page_buf(&p, "", 0);
	page_buf(&p, def, sizeof def);
	assert_int_equal(lv__lf_decode_page21(&p.c, layout, sizeof layout), 0);
	for (size_t r = 0; r < ROWS; r++) {
		bool null = r == 1 || r == 5;
		assert_int_equal(p.cb.valid[r], !null);
		assert_int_equal(p.cb.offs[r + 1] - p.cb.offs[r], null ? 0 : 4);
	}
	assert_memory_equal(p.cb.data.ptr, "samesamesamesame", 16);
	page_free(&p);
}

/* PageLayout{3 FullZipLayout{2 bits_def 1, 3 bits_per_value 64, 5/6 items ROWS,
 * 7 CompressiveEncoding{flat{64}}, 8 layers [3]}} */
static const uint8_t FZ_I64[] = { 0x1a, 0x10, 0x10, 0x01, 0x18, 0x40, 0x28, ROWS, 0x30, ROWS,
				  0x3a, 0x04, 0x0a, 0x02, 0x08, 0x40, 0x40, 0x03 };

static void test_fullzip_fixed_nulls(void **st)
{
	(void)st;
	uint8_t rows[ROWS * 9];
	for (size_t r = 0; r < ROWS; r++) {
		rows[9 * r] = r % 2; /* odd rows null: their value bytes are there all the same */
		for (int k = 0; k < 8; k++)
			rows[9 * r + 1 + k] = (uint8_t)(k ? 0 : 100 + r);
	}
	page p;
	page_init(&p, LV_COL_INT64, 0);
	page_buf(&p, rows, sizeof rows);
	assert_int_equal(lv__lf_decode_page21(&p.c, FZ_I64, sizeof FZ_I64), 0);
	for (size_t r = 0; r < ROWS; r++) {
		assert_int_equal(p.cb.valid[r], r % 2 == 0);
		assert_int_equal(p.cb.u64[r], r % 2 ? 0 : 100 + r); /* before: row 2 read row 1's bytes */
	}
	p.c.buflen[0] = sizeof rows - 1; /* the last (null) row's value cut short */
	assert_int_equal(lv__lf_decode_page21(&p.c, FZ_I64, sizeof FZ_I64), LV_ECORRUPT);
	page_free(&p);
}

static void test_fullzip_vector_item_validity(void **st)
{
	(void)st;
	/* FullZipLayout{bits_def 1, bits_per_value 136, items ROWS, value:
	 * CompressiveEncoding{11 fixed_size_list{1 items 4, 2 flat{32}, 3 has_validity 1}}, layers [3]} */
	static const uint8_t layout[] = { 0x1a, 0x19, 0x10, 0x01, 0x18, 0x88, 0x01, 0x28, ROWS, 0x30, ROWS,
					  0x3a, 0x0c, 0x5a, 0x0a, 0x08, 0x04, 0x12, 0x04, 0x0a, 0x02, 0x08,
					  0x20, 0x18, 0x01, 0x40, 0x03 };
	uint8_t rows[ROWS * 18];
	memset(rows, 0, sizeof rows);
	for (size_t r = 0; r < ROWS; r++) {
		uint8_t *q = rows + 18 * r;
		q[0] = r == 2;                  /* row 2 null */
		q[1] = r == 2 ? 0xf0 : 0x0f;    /* item validity, upper bits unused */
		float x = (float)r;
		memcpy(q + 2 + 12, &x, 4);      /* the last item */
	}
	page p;
	page_init(&p, LV_COL_FSL_FLOAT32, 4);
	page_buf(&p, rows, sizeof rows);
	assert_int_equal(lv__lf_decode_page21(&p.c, layout, sizeof layout), 0);
	for (size_t r = 0; r < ROWS; r++) {
		assert_int_equal(p.cb.valid[r], r != 2);
		assert_true(p.cb.f32[4 * r + 3] == (r == 2 ? 0.0f : (float)r));
	}
	rows[18 * 4 + 1] = 0x0b; /* item 2 of valid row 4 null: not a vector we can hold */
	assert_int_equal(lv__lf_decode_page21(&p.c, layout, sizeof layout), LV_EUNSUPPORTED);
	assert_non_null(strstr(p.err.message, "null items"));
	page_free(&p);
}

/* ---- a large_string dictionary block ---- */

static void test_dictionary_64bit_block(void **st)
{
	(void)st;
	/* CompressiveEncoding{2 variable{1 offsets CompressiveEncoding{1 flat{1 bits 64}}}} */
	static const uint8_t enc[] = { 0x12, 0x06, 0x0a, 0x04, 0x0a, 0x02, 0x08, 0x40 };
	/* u64 64, u64 bytes_start 48, 4 u64 offsets, "northsoutheast" */
	uint8_t blk[48 + 14];
	const uint64_t words[6] = { 64, 48, 0, 5, 10, 14 };
	for (int i = 0; i < 6; i++)
		for (int k = 0; k < 8; k++)
			blk[8 * i + k] = (uint8_t)(words[i] >> (8 * k));
	memcpy(blk + 48, "northsoutheast", 14);
	page p;
	page_init(&p, LV_COL_UTF8, 0);
	lv__lf_cenc_tree t;
	int root;
	assert_int_equal(lv__lf_cenc_parse(&p.c, enc, sizeof enc, &t, &root), 0);
	lv__lf_dict d;
	assert_int_equal(lv__lf_dict_load(&p.c, &t, root, blk, sizeof blk, 3, &d), 0);
	assert_int_equal(d.str.offs[3], 14);
	assert_memory_equal(d.str.bytes + d.str.offs[1], "south", 5);
	lv__lf_dict_free(&d);
	blk[8] = 200; /* bytes_start past the block */
	assert_int_equal(lv__lf_dict_load(&p.c, &t, root, blk, sizeof blk, 3, &d), LV_ECORRUPT);
	blk[8] = 48;
	blk[40] = 15; /* last offset past the bytes */
	assert_int_equal(lv__lf_dict_load(&p.c, &t, root, blk, sizeof blk, 3, &d), LV_ECORRUPT);
	blk[40] = 14;
	/* more items than the offsets the block holds */
	assert_int_equal(lv__lf_dict_load(&p.c, &t, root, blk, sizeof blk, 5, &d), LV_ECORRUPT);
	/* neither 32 nor 64 bits */
	blk[0] = 16;
	assert_int_equal(lv__lf_dict_load(&p.c, &t, root, blk, sizeof blk, 3, &d), LV_EUNSUPPORTED);
	page_free(&p);
}

/* Nested columns: placed by their physical column counts when these add up to the
 * footer's; when they do not (here: a footer claiming one column fewer), nothing after the
 * first nested field is placed, and every such column is named. */
static void test_nested_placement(void **st)
{
	(void)st;
	size_t n;
	uint8_t *b = tu_read_file(FIX "/nested_2_2.lance", &n);
	lv_lancefile *f = NULL;
	lv_error err = { 0 };
	assert_int_equal(lv_lancefile_read_ex(&f, b, n, "nested_2_2.lance", LV_LANCEFILE_READ_PARTIAL, &err), 0);
	size_t ncols = lv_lancefile_num_columns(f);
	const char *decoded[] = { "id", "mid", "after" };
	size_t k = 0;
	for (size_t i = 0; i < ncols; i++)
		if (!lv_lancefile_column_error(f, i))
			assert_string_equal(lv_lancefile_column(f, i)->name, decoded[k++]);
	assert_int_equal(k, 3);
	lv_lancefile_free(f);
	uint32_t nphys = lv__le32(b + n - 12);
	for (int i = 0; i < 4; i++)
		b[n - 12 + i] = (uint8_t)((nphys - 1) >> (8 * i));
	assert_int_equal(lv_lancefile_read_ex(&f, b, n, "nested_2_2.lance", LV_LANCEFILE_READ_PARTIAL, &err), 0);
	assert_int_equal(lv_lancefile_num_columns(f), ncols);
	/* (column 0 now meets another column's pages: an error, not a value) */
	for (size_t i = 1; i < ncols; i++)
		assert_non_null(lv_lancefile_column_error(f, i));
	assert_non_null(strstr(lv_lancefile_column_error(f, 3), "follows nested field 'tags'"));
	lv_lancefile_free(f);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures),
		cmocka_unit_test(test_constant_with_nulls),
		cmocka_unit_test(test_constant_string_with_nulls),
		cmocka_unit_test(test_fullzip_fixed_nulls),
		cmocka_unit_test(test_fullzip_vector_item_validity),
		cmocka_unit_test(test_dictionary_64bit_block),
		cmocka_unit_test(test_nested_placement),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
