/*
 * Unit tests for how the Lance file reader sizes a string column's bytes (reader.c,
 * str_bytes_bound): reserved once from the sizes of the column's page buffers, each checked
 * to lie within the file first, the sum capped at the file's size.  Hostile files: pages
 * whose buffers overlap (their sizes add up to many times the file) and a buffer that runs
 * past the file.
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
#include "util/util.h"
#include "wire/pb.h"

#define ROWS 200
#define PAGE_ROWS 5
#define STR_LEN 40

/* A 2.0 file of one string column, ROWS rows of STR_LEN bytes, PAGE_ROWS rows a page: each
 * page has an offsets buffer of 40 bytes and a bytes buffer of 200 (a 2-byte varint). */
static lv_buf write_file(char *data, uint64_t *offs)
{
	for (size_t i = 0; i < ROWS; i++) {
		for (size_t k = 0; k < STR_LEN; k++)
			data[i * STR_LEN + k] = (char)('a' + (i + k) % 26);
		offs[i + 1] = (i + 1) * STR_LEN;
	}
	lv_column c = { .name = "s", .type = LV_COL_UTF8, .str_offsets = offs, .str_data = data };
	lv_lancefile_write_options o = LV_LANCEFILE_WRITE_OPTIONS_INIT;
	o.file_version = LV_LANCEFILE_V2_0;
	o.max_page_rows = PAGE_ROWS;
	lv_buf b = { 0 };
	lv_error e = { 0 };
	assert_int_equal(lv_lancefile_write(&b, &c, 1, ROWS, NULL, 0, &o, &e), 0);
	assert_true(b.size < 16384); /* every position and size below is a 2-byte varint at most */
	return b;
}

/* The packed varint list of field `num` of a Page message: up to 2 values and where each
 * value's bytes start. */
static size_t packed(const lv__pb_field *page, uint32_t num, uint64_t *v, const uint8_t **at)
{
	lv__pb r = lv__pb_sub(page);
	lv__pb_field f = { 0 };
	size_t n = 0;
	while (lv__pb_next(&r, &f) == 1) {
		if (f.num != num || f.wire != LV_PB_LEN)
			continue;
		lv__pb q = lv__pb_make(f.data, f.len);
		while (!lv__pb_done(&q) && n < 2) {
			at[n] = q.p;
			assert_true(lv__pb_varint(&q, &v[n]));
			n++;
		}
	}
	return n;
}

/* Calls fn(page's bytes-buffer size varint, its offset) for every page of column 0. */
static size_t patch_pages(uint8_t *p, size_t size, uint64_t (*fn)(uint64_t off, size_t size))
{
	const uint8_t *ft = p + size - 40;
	uint64_t gbo = lv__le64(ft + 16);
	uint32_t ncols = lv__le32(ft + 28);
	assert_int_equal(ncols, 1);
	uint64_t cmo = gbo - 16, pos = lv__le64(p + cmo), len = lv__le64(p + cmo + 8);
	lv__pb r = lv__pb_make(p + pos, (size_t)len);
	lv__pb_field g = { 0 };
	size_t pages = 0;
	while (lv__pb_next(&r, &g) == 1) {
		if (g.num != 2 || g.wire != LV_PB_LEN)
			continue;
		uint64_t off[2], sz[2];
		const uint8_t *off_at[2], *sz_at[2];
		assert_int_equal(packed(&g, 1, off, off_at), 2);
		assert_int_equal(packed(&g, 2, sz, sz_at), 2);
		assert_int_equal(sz[1], PAGE_ROWS * STR_LEN); /* the bytes buffer: 0xC8 0x01 */
		uint64_t want = fn(off[1], size);
		assert_true(want >= 128 && want < 16384);
		uint8_t *q = p + (sz_at[1] - p);
		q[0] = (uint8_t)(0x80 | (want & 0x7f));
		q[1] = (uint8_t)(want >> 7);
		pages++;
	}
	return pages;
}

/* Every bytes buffer runs to the end of the data (just before the footer): the buffers stay
 * within the file, but their sizes add up to ~20 times its size. */
static uint64_t to_end(uint64_t off, size_t size) { return size - 40 - off; }
/* One byte past the data: the page must be rejected. */
static uint64_t past_end(uint64_t off, size_t size) { return size - 40 - off + 1; }

static void t_overlapping_pages_capped(void **st)
{
	(void)st;
	static char data[ROWS * STR_LEN];
	static uint64_t offs[ROWS + 1];
	lv_buf b = write_file(data, offs);
	assert_int_equal(patch_pages(b.ptr, b.size, to_end), ROWS / PAGE_ROWS);
	lv__blocks_release(); /* nothing cached: the reservation is the block itself */
	lv_lancefile *f = NULL;
	lv_error e = { 0 };
	assert_int_equal(lv_lancefile_read(&f, b.ptr, b.size, "overlap.lance", &e), 0);
	const lv_column *c = lv_lancefile_column(f, 0);
	assert_int_equal(c->str_offsets[ROWS], ROWS * STR_LEN);
	assert_memory_equal(c->str_data, data, sizeof data);
	/* reserved from the page buffers' sizes, capped at the file's size (~16 KB); uncapped it
	 * would be their sum, ~20 times that */
	size_t usable = lv__blocks_usable(c->str_data);
	if (usable > b.size + 64)
		fail_msg("string bytes reserved %zu bytes for a file of %zu", usable, b.size);
	lv_lancefile_free(f);
	lv_buf_dispose(&b);
}

static void t_buffer_past_file_rejected(void **st)
{
	(void)st;
	static char data[ROWS * STR_LEN];
	static uint64_t offs[ROWS + 1];
	lv_buf b = write_file(data, offs);
	patch_pages(b.ptr, b.size, past_end);
	lv_lancefile *f = (lv_lancefile *)1;
	lv_error e = { 0 };
	assert_int_equal(lv_lancefile_read(&f, b.ptr, b.size, "past.lance", &e), LV_ECORRUPT);
	assert_null(f);
	assert_non_null(strstr(e.message, "out of the file"));
	assert_non_null(strstr(e.message, "page 0")); /* the first page, before any decoding */
	lv_buf_dispose(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_overlapping_pages_capped),
		cmocka_unit_test(t_buffer_past_file_rejected),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
