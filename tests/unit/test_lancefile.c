/* Unit tests for the Lance v2 file writer and reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <cmocka.h>

#include "lancever/lancefile.h"
#include "util/util.h"

/* ---- expected bytes, assembled from docs/lance-reference.md, "Worked example" ---- */

typedef struct xb {
	uint8_t b[1024];
	size_t n;
} xb;

static void hex(xb *x, const char *h)
{
	while (*h) {
		if (*h == ' ') {
			h++;
			continue;
		}
		unsigned v;
		sscanf(h, "%2x", &v);
		x->b[x->n++] = (uint8_t)v;
		h += 2;
	}
}
static void str(xb *x, const char *s)
{
	memcpy(x->b + x->n, s, strlen(s));
	x->n += strlen(s);
}
static void fill(xb *x, uint8_t v, size_t upto)
{
	while (x->n < upto)
		x->b[x->n++] = v;
}
static void u64le(xb *x, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		x->b[x->n++] = (uint8_t)(v >> (8 * i));
}

static void gb0(xb *x)
{
	hex(x, "0a 44");
	hex(x, "0a 19 12 02"), str(x, "id"), hex(x, "20 ff ff ff ff ff ff ff ff ff 01 2a 06");
	str(x, "uint64"), hex(x, "38 01");
	hex(x, "0a 1f 12 04"), str(x, "name"), hex(x, "18 01 20 ff ff ff ff ff ff ff ff ff 01 2a 06");
	str(x, "string"), hex(x, "30 01 38 02");
	hex(x, "2a 06 0a 01"), str(x, "k"), hex(x, "12 01"), str(x, "v");
	hex(x, "10 03");
}

static void colenc(xb *x)
{
	hex(x, "0a 29 12 27 0a 25 0a 1f"), str(x, "/lance.encodings.ColumnEncoding"), hex(x, "12 02 0a 00");
}

/*
 * What follows the data pages, in both versions: global buffer 0 (the schema) from off[0]
 * to off[1]; each column's metadata (its ColumnEncoding, then one page whose encoding is an
 * `enc` message: page[i][0], the type name, page[i][1]) ending at off[i + 2]; the column
 * metadata offset table and the global buffer offset table.
 */
typedef struct file_tail {
	const char *enc;
	const char *page[2][2];
	size_t off[4];
} file_tail;

static const file_tail tail_20 = {
	"/lance.encodings.ArrayEncoding",
	{ { "12 3c 0a 01 00 12 01 18 18 03 22 32 12 30 0a 2e 0a 1e", "12 0c 12 0a 0a 08 0a 06 0a 04 08 40 12 00" },
	  { "12 4f 0a 03 40 80 01 12 02 18 03 18 03 22 42 12 40 0a 3e 0a 1e",
	    "12 1c 32 1a 0a 0c 12 0a 0a 08 0a 06 0a 04 08 40 12 00 12 08 0a 06 08 08 12 02 08 01 18 04" } },
	{ 192, 264, 369, 493 },
}, tail_21 = {
	"/lance.encodings21.PageLayout",
	{ { "12 40 0a 02 00 40 12 02 02 20 18 03 22 34 12 32 0a 30 0a 1d", "12 0f 0a 0d 1a 04 0a 02 08 40 32 01 01 38 01 48 03" },
	  { "12 4c 0a 04 80 01 c0 01 12 02 02 28 18 03 22 3e 12 3c 0a 3a 0a 1d",
	    "12 19 0a 17 12 04 0a 02 08 10 1a 08 12 06 0a 04 0a 02 08 20 32 01 03 38 01 48 03" } },
	{ 256, 328, 437, 558 },
};

static void metadata(xb *x, const file_tail *t)
{
	gb0(x);
	assert_int_equal(x->n, t->off[1]);
	for (int i = 0; i < 2; i++) {
		colenc(x);
		hex(x, t->page[i][0]);
		str(x, t->enc);
		hex(x, t->page[i][1]);
		assert_int_equal(x->n, t->off[i + 2]);
	}
	u64le(x, t->off[1]), u64le(x, t->off[2] - t->off[1]), u64le(x, t->off[2]), u64le(x, t->off[3] - t->off[2]);
	u64le(x, t->off[0]), u64le(x, t->off[1] - t->off[0]);
}

static void expected_20(xb *x)
{
	x->n = 0;
	hex(x, "01 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 03 00 00 00 00 00 00 00");
	fill(x, 0x48, 64);
	u64le(x, 1), u64le(x, 5), u64le(x, 3);
	fill(x, 0x48, 128);
	str(x, "abc");
	fill(x, 0x48, 192);
	metadata(x, &tail_20);
	hex(x, "08 01 00 00 00 00 00 00 ed 01 00 00 00 00 00 00 0d 02 00 00 00 00 00 00");
	hex(x, "01 00 00 00 02 00 00 00 00 00 03 00 4c 41 4e 43");
	assert_int_equal(x->n, 581);
}

static void expected_21(xb *x)
{
	x->n = 0;
	hex(x, "30 00");
	fill(x, 0x48, 64);
	hex(x, "00 00 18 00 fe fe fe fe");
	u64le(x, 1), u64le(x, 2), u64le(x, 3);
	fill(x, 0x48, 128);
	hex(x, "40 00");
	fill(x, 0x48, 192);
	hex(x, "03 00 06 00 14 00 fe fe 00 00 01 00 00 00 fe fe");
	hex(x, "10 00 00 00 11 00 00 00 11 00 00 00 13 00 00 00 61 62 63 48 fe fe fe fe");
	fill(x, 0x48, 256);
	metadata(x, &tail_21);
	u64le(x, 328), u64le(x, 558), u64le(x, 590);
	hex(x, "01 00 00 00 02 00 00 00 02 00 01 00 4c 41 4e 43");
	assert_int_equal(x->n, 646);
}

/* The section 11 table: id [1,2,3], name ["a", null, "bc"], metadata {k: v}. */
static const uint64_t ex_ids[] = { 1, 2, 3 };
static const uint64_t ex_offs[] = { 0, 1, 1, 3 };
static const uint8_t ex_valid[] = { 1, 0, 1 };
static const lv_kv ex_meta[] = { { "k", "v", 1 } };

static void ex_cols(lv_column c[2])
{
	memset(c, 0, 2 * sizeof *c);
	c[0] = (lv_column){ .name = "id", .type = LV_COL_UINT64, .u64 = ex_ids };
	c[1] = (lv_column){ .name = "name", .type = LV_COL_UTF8, .nullable = true,
			    .str_offsets = ex_offs, .str_data = "abc", .validity = ex_valid };
}

static void write_example(int ver, lv_buf *out)
{
	lv_column c[2];
	ex_cols(c);
	lv_lancefile_write_options o = LV_LANCEFILE_WRITE_OPTIONS_INIT;
	o.file_version = ver;
	lv_error e = { 0 };
	int rc = lv_lancefile_write(out, c, 2, 3, ex_meta, 1, &o, &e);
	if (rc)
		fprintf(stderr, "write: %s\n", e.message);
	assert_int_equal(rc, 0);
}

static void test_worked_example_20(void **st)
{
	(void)st;
	xb x;
	expected_20(&x);
	lv_buf b;
	write_example(LV_LANCEFILE_V2_0, &b);
	assert_int_equal(b.size, 581);
	assert_memory_equal(b.ptr, x.b, 581);
	lv_buf_dispose(&b);
}

static void test_worked_example_21(void **st)
{
	(void)st;
	xb x;
	expected_21(&x);
	lv_buf b;
	write_example(0, &b); /* default version is 2.1 */
	assert_int_equal(b.size, 646);
	assert_memory_equal(b.ptr, x.b, 646);
	lv_buf_dispose(&b);
}

static void test_read_example(void **st)
{
	(void)st;
	for (int v = 0; v < 2; v++) {
		xb x;
		if (v)
			expected_21(&x);
		else
			expected_20(&x);
		lv_lancefile *f;
		lv_error e = { 0 };
		assert_int_equal(lv_lancefile_read(&f, x.b, x.n, "ex.lance", &e), 0);
		assert_int_equal(lv_lancefile_file_version(f), v ? LV_LANCEFILE_V2_1 : LV_LANCEFILE_V2_0);
		assert_int_equal(lv_lancefile_num_rows(f), 3);
		assert_int_equal(lv_lancefile_num_columns(f), 2);
		const lv_column *c0 = lv_lancefile_column(f, 0), *c1 = lv_lancefile_column(f, 1);
		assert_string_equal(c0->name, "id");
		assert_string_equal(lv_lancefile_column_logical_type(f, 1), "string");
		assert_true(c1->nullable);
		assert_false(c0->nullable);
		for (int i = 0; i < 3; i++)
			assert_int_equal(c0->u64[i], i + 1);
		assert_int_equal(c1->validity[0], 1);
		assert_int_equal(c1->validity[1], 0);
		assert_int_equal(c1->validity[2], 1);
		assert_int_equal(c1->str_offsets[1] - c1->str_offsets[0], 1);
		assert_memory_equal(c1->str_data + c1->str_offsets[2], "bc", 2);
		const lv_kv *kv = lv_lancefile_metadata_find(f, "k");
		assert_non_null(kv);
		assert_int_equal(kv->value_len, 1);
		assert_memory_equal(kv->value, "v", 1);
		assert_null(lv_lancefile_metadata_find(f, "nope"));
		lv_lancefile_free(f);
	}
}

/* ---- round trips ---- */

typedef struct table {
	size_t n;
	uint64_t *u;
	int64_t *i;
	uint8_t *iv, *b, *bn, *bnv, *sv;
	uint64_t *so, *s2o;
	char *sd, *s2d;
	lv_column cols[6];
} table;

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Builds a 6-column table; string lengths drawn from `lens` (0 = random short). */
static void make_table(table *t, size_t n, uint64_t seed, const size_t *lens, size_t nlens,
		       int null_mode)
{
	memset(t, 0, sizeof *t);
	uint64_t s = seed * 2654435761u + 1;
	t->n = n;
	size_t m = n ? n : 1;
	t->u = calloc(m, 8), t->i = calloc(m, 8), t->iv = calloc(m, 1), t->b = calloc(m, 1);
	t->bn = calloc(m, 1), t->bnv = calloc(m, 1), t->sv = calloc(m, 1);
	t->so = calloc(n + 1, 8), t->s2o = calloc(n + 1, 8);
	lv__dbuf sd, s2d;
	lv__dbuf_init(&sd, 0);
	lv__dbuf_init(&s2d, 0);
	for (size_t r = 0; r < n; r++) {
		t->u[r] = r % 3 ? rng(&s) : r;
		t->i[r] = (int64_t)rng(&s);
		/* null_mode 0: random nulls, 1: none, 2: all null */
		bool nul = null_mode == 2 || (null_mode == 0 && rng(&s) % 5 == 0);
		t->iv[r] = !nul;
		t->b[r] = rng(&s) & 1;
		t->bn[r] = rng(&s) & 1;
		t->bnv[r] = !(null_mode == 2 || (null_mode == 0 && rng(&s) % 3 == 0));
		t->sv[r] = !(null_mode == 2 || (null_mode == 0 && rng(&s) % 4 == 0));
		size_t len = nlens ? lens[r % nlens] : rng(&s) % 20;
		for (size_t k = 0; k < len; k++)
			lv__dbuf_addc(&sd, (uint8_t)('a' + (rng(&s) % 26)));
		t->so[r + 1] = sd.len;
		size_t l2 = rng(&s) % 7;
		for (size_t k = 0; k < l2; k++)
			lv__dbuf_addc(&s2d, (uint8_t)('A' + (r + k) % 26));
		t->s2o[r + 1] = s2d.len;
	}
	lv__dbuf_addc(&sd, 0);
	lv__dbuf_addc(&s2d, 0);
	t->sd = (char *)sd.ptr;
	t->s2d = (char *)s2d.ptr;
	t->cols[0] = (lv_column){ .name = "u64", .type = LV_COL_UINT64, .u64 = t->u };
	t->cols[1] = (lv_column){ .name = "i64", .type = LV_COL_INT64, .nullable = true, .i64 = t->i,
				  .validity = t->iv };
	t->cols[2] = (lv_column){ .name = "b", .type = LV_COL_BOOL, .bools = t->b };
	t->cols[3] = (lv_column){ .name = "bn", .type = LV_COL_BOOL, .nullable = true,
				  .bools = t->bn, .validity = t->bnv };
	t->cols[4] = (lv_column){ .name = "s", .type = LV_COL_UTF8, .nullable = true,
				  .str_offsets = t->so, .str_data = t->sd, .validity = t->sv };
	t->cols[5] = (lv_column){ .name = "s2", .type = LV_COL_UTF8, .str_offsets = t->s2o,
				  .str_data = t->s2d };
}

static void free_table(table *t)
{
	free(t->u), free(t->i), free(t->iv), free(t->b), free(t->bn), free(t->bnv), free(t->sv);
	free(t->so), free(t->s2o), free(t->sd), free(t->s2d);
}

static bool valid_at(const lv_column *c, size_t r) { return !c->validity || c->validity[r]; }

static void check_equal(const table *t, const lv_lancefile *f)
{
	assert_int_equal(lv_lancefile_num_rows(f), t->n);
	assert_int_equal(lv_lancefile_num_columns(f), 6);
	for (size_t ci = 0; ci < 6; ci++) {
		const lv_column *a = &t->cols[ci], *b = lv_lancefile_column(f, ci);
		assert_string_equal(a->name, b->name);
		assert_int_equal(a->type, b->type);
		assert_int_equal(a->nullable, b->nullable);
		if (b->nullable)
			assert_non_null(b->validity);
		for (size_t r = 0; r < t->n; r++) {
			bool va = valid_at(a, r), vb = valid_at(b, r);
			if (va != vb)
				fail_msg("column %s row %zu: validity %d vs %d", a->name, r, va, vb);
			if (!va)
				continue;
			switch (a->type) {
			case LV_COL_UINT64: assert_int_equal(a->u64[r], b->u64[r]); break;
			case LV_COL_INT64: assert_int_equal(a->i64[r], b->i64[r]); break;
			case LV_COL_BOOL: assert_int_equal(!!a->bools[r], b->bools[r]); break;
			default: {
				size_t la = a->str_offsets[r + 1] - a->str_offsets[r];
				size_t lb = b->str_offsets[r + 1] - b->str_offsets[r];
				if (la != lb)
					fail_msg("column %s row %zu: length %zu vs %zu", a->name, r, la, lb);
				assert_memory_equal(a->str_data + a->str_offsets[r],
						    b->str_data + b->str_offsets[r], la);
			}
			}
		}
	}
}

static void round_trip(size_t n, int ver, size_t page_rows, const size_t *lens, size_t nlens,
		       int null_mode)
{
	table t;
	make_table(&t, n, n + (uint64_t)ver + page_rows, lens, nlens, null_mode);
	lv_lancefile_write_options o = LV_LANCEFILE_WRITE_OPTIONS_INIT;
	o.file_version = ver;
	o.max_page_rows = page_rows;
	static const lv_kv meta[] = { { "lancever.kind", "test", 4 }, { "bin", "a\0b", 3 },
				      { "empty", "", 0 } };
	lv_buf b, b2;
	lv_error e = { 0 };
	int rc = lv_lancefile_write(&b, t.cols, 6, n, meta, 3, &o, &e);
	if (rc)
		fail_msg("write %zu rows v%d: %s", n, ver, e.message);
	/* determinism: same input, same bytes */
	assert_int_equal(lv_lancefile_write(&b2, t.cols, 6, n, meta, 3, &o, &e), 0);
	assert_int_equal(b.size, b2.size);
	assert_memory_equal(b.ptr, b2.ptr, b.size);
	lv_buf_dispose(&b2);
	lv_lancefile *f;
	rc = lv_lancefile_read(&f, b.ptr, b.size, "rt.lance", &e);
	if (rc)
		fail_msg("read %zu rows v%d: %s", n, ver, e.message);
	assert_int_equal(lv_lancefile_file_version(f), ver ? ver : LV_LANCEFILE_V2_1);
	check_equal(&t, f);
	assert_int_equal(lv_lancefile_num_metadata(f), 3);
	const lv_kv *kv = lv_lancefile_metadata_find(f, "bin");
	assert_non_null(kv);
	assert_int_equal(kv->value_len, 3);
	assert_memory_equal(kv->value, "a\0b", 3);
	assert_int_equal(lv_lancefile_metadata_find(f, "empty")->value_len, 0);
	lv_lancefile_free(f);
	lv_buf_dispose(&b);
	free_table(&t);
}

static void test_round_trip_sizes(void **st)
{
	(void)st;
	static const size_t sizes[] = { 0, 1, 3, 100, 1000, 5000 };
	for (int v = 0; v < 2; v++)
		for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
			for (int nm = 0; nm < 3; nm++)
				round_trip(sizes[i], v ? LV_LANCEFILE_V2_1 : LV_LANCEFILE_V2_0, 0, NULL,
					   0, nm);
}

static void test_round_trip_100k(void **st)
{
	(void)st;
	round_trip(100000, LV_LANCEFILE_V2_0, 0, NULL, 0, 0);
	round_trip(100000, LV_LANCEFILE_V2_1, 0, NULL, 0, 0);
	round_trip(100000, 0, 0, NULL, 0, 1);
}

static void test_round_trip_multipage(void **st)
{
	(void)st;
	static const size_t pages[] = { 1, 2, 7, 333, 1000 };
	for (int v = 0; v < 2; v++)
		for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++)
			round_trip(3001, v ? LV_LANCEFILE_V2_1 : LV_LANCEFILE_V2_0, pages[i], NULL, 0,
				   0);
}

static void test_round_trip_long_strings(void **st)
{
	(void)st;
	/* empty .. 200 KB, crossing the mini-block / full-zip threshold at 256 bytes */
	static const size_t lens[] = { 0, 1, 255, 256, 4096, 40000, 65536, 70000, 200000, 3 };
	for (int v = 0; v < 2; v++)
		for (int nm = 0; nm < 2; nm++) {
			round_trip(25, v ? LV_LANCEFILE_V2_1 : LV_LANCEFILE_V2_0, 0, lens, 10, nm);
			round_trip(25, v ? LV_LANCEFILE_V2_1 : LV_LANCEFILE_V2_0, 4, lens, 10, nm);
		}
	static const size_t short_lens[] = { 0, 255, 100, 1, 254 };
	round_trip(20000, LV_LANCEFILE_V2_1, 0, short_lens, 5, 0);
}

/* ---- errors ---- */

static void test_write_invalid(void **st)
{
	(void)st;
	lv_column c[2];
	ex_cols(c);
	lv_buf b;
	lv_error e = { 0 };
	c[0].validity = ex_valid; /* not nullable */
	assert_int_equal(lv_lancefile_write(&b, c, 2, 3, NULL, 0, NULL, &e), LV_EINVALID);
	ex_cols(c);
	c[0].type = 99;
	assert_int_equal(lv_lancefile_write(&b, c, 2, 3, NULL, 0, NULL, &e), LV_EINVALID);
	ex_cols(c);
	c[1].name = "id";
	assert_int_equal(lv_lancefile_write(&b, c, 2, 3, NULL, 0, NULL, &e), LV_EINVALID);
	ex_cols(c);
	lv_lancefile_write_options o = LV_LANCEFILE_WRITE_OPTIONS_INIT;
	o.file_version = 22;
	assert_int_equal(lv_lancefile_write(&b, c, 2, 3, NULL, 0, &o, &e), LV_EINVALID);
	static const uint64_t bad_offs[] = { 0, 2, 1, 3 };
	c[1].str_offsets = bad_offs;
	assert_int_equal(lv_lancefile_write(&b, c, 2, 3, NULL, 0, NULL, &e), LV_EINVALID);
}

static void expect_fail_all_prefixes(const uint8_t *p, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		lv_lancefile *f = (lv_lancefile *)1;
		lv_error e = { 0 };
		int rc = lv_lancefile_read(&f, p, k, "trunc.lance", &e);
		if (rc == 0)
			fail_msg("prefix of %zu bytes read OK", k);
		assert_null(f);
		assert_non_null(strstr(e.message, "trunc.lance"));
	}
}

static void flip_all(const uint8_t *p, size_t n, size_t stride)
{
	uint8_t *m = malloc(n);
	for (size_t i = 0; i < n; i += stride) {
		for (int bit = 0; bit < 8; bit++) {
			memcpy(m, p, n);
			m[i] ^= (uint8_t)(1u << bit);
			lv_lancefile *f = NULL;
			lv_error e = { 0 };
			int rc = lv_lancefile_read(&f, m, n, "flip.lance", &e);
			if (rc == 0)
				lv_lancefile_free(f);
			else
				assert_true(rc == LV_ECORRUPT || rc == LV_EUNSUPPORTED ||
					    rc == LV_ELIMIT);
		}
	}
	free(m);
}

static void test_truncated_and_flipped(void **st)
{
	(void)st;
	xb x;
	expected_20(&x);
	expect_fail_all_prefixes(x.b, x.n);
	flip_all(x.b, x.n, 1);
	expected_21(&x);
	expect_fail_all_prefixes(x.b, x.n);
	flip_all(x.b, x.n, 1);
	/* a bigger file with every page kind: fixed, bitmaps, mini-block and full-zip strings */
	static const size_t lens[] = { 0, 3, 300, 10 };
	for (int v = 0; v < 2; v++) {
		table t;
		make_table(&t, 300, 7, lens, 4, 0);
		lv_lancefile_write_options o = LV_LANCEFILE_WRITE_OPTIONS_INIT;
		o.file_version = v ? LV_LANCEFILE_V2_1 : LV_LANCEFILE_V2_0;
		o.max_page_rows = 100;
		lv_buf b;
		assert_int_equal(lv_lancefile_write(&b, t.cols, 6, t.n, NULL, 0, &o, NULL), 0);
		flip_all(b.ptr, b.size, 3);
		for (size_t k = 0; k < b.size; k += 97) {
			lv_lancefile *f = NULL;
			assert_int_not_equal(lv_lancefile_read(&f, b.ptr, k, NULL, NULL), 0);
		}
		lv_buf_dispose(&b);
		free_table(&t);
	}
}

static void test_unsupported_encoding(void **st)
{
	(void)st;
	xb x;
	expected_21(&x);
	/* column 0's value_compression flat{64} (1a 04 0a 02 08 40) becomes packed_struct{...} */
	size_t at = 437 - 15 + 4;
	assert_int_equal(x.b[at], 0x0a);
	x.b[at] = 0x62;
	lv_lancefile *f;
	lv_error e = { 0 };
	assert_int_equal(lv_lancefile_read(&f, x.b, x.n, "x.lance", &e), LV_EUNSUPPORTED);
	assert_non_null(strstr(e.message, "packed_struct"));
	assert_non_null(strstr(e.message, "x.lance"));
	assert_non_null(strstr(e.message, "'id'"));
	/* unknown footer version */
	expected_21(&x);
	x.b[x.n - 6] = 9;
	assert_int_equal(lv_lancefile_read(&f, x.b, x.n, "x.lance", &e), LV_EUNSUPPORTED);
	/* unsupported logical type */
	expected_20(&x);
	uint8_t *p = memmem(x.b, x.n, "uint64", 6);
	memcpy(p, "date32", 6);
	assert_int_equal(lv_lancefile_read(&f, x.b, x.n, "x.lance", &e), LV_EUNSUPPORTED);
	assert_non_null(strstr(e.message, "date32"));
}

/* Real files written by LanceDB (fuzz seed corpus, "lancedb_*") must decode. */
static void test_real_lance_files(void **st)
{
	(void)st;
	DIR *d = opendir(LV_SOURCE_DIR "/fuzz/corpora/lancefile");
	assert_non_null(d);
	struct dirent *de;
	int seen = 0;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "lancedb_", 8) != 0)
			continue;
		char path[1024];
		snprintf(path, sizeof path, "%s/fuzz/corpora/lancefile/%s", LV_SOURCE_DIR, de->d_name);
		FILE *fp = fopen(path, "rb");
		assert_non_null(fp);
		uint8_t *buf = malloc(1 << 20);
		size_t n = fread(buf, 1, 1 << 20, fp);
		fclose(fp);
		lv_lancefile *f;
		lv_error e = { 0 };
		int rc = lv_lancefile_read(&f, buf, n, de->d_name, &e);
		if (rc)
			fail_msg("%s: %s", de->d_name, e.message);
		assert_true(lv_lancefile_num_rows(f) > 0);
		lv_lancefile_free(f);
		free(buf);
		seen++;
	}
	closedir(d);
	assert_true(seen >= 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worked_example_20),
		cmocka_unit_test(test_worked_example_21),
		cmocka_unit_test(test_read_example),
		cmocka_unit_test(test_round_trip_sizes),
		cmocka_unit_test(test_round_trip_100k),
		cmocka_unit_test(test_round_trip_multipage),
		cmocka_unit_test(test_round_trip_long_strings),
		cmocka_unit_test(test_write_invalid),
		cmocka_unit_test(test_truncated_and_flipped),
		cmocka_unit_test(test_unsupported_encoding),
		cmocka_unit_test(test_real_lance_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
