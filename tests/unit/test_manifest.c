/* Unit tests: protobuf wire reader, manifest and transaction parsers, version names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "format/manifest.h"
#include "support/corrupt.h"
#include "support/testutil.h"
#include "util/util.h"
#include "wire/pb.h"

/* ---- wire reader ---- */

static void test_varint_edges(void **state)
{
	(void)state;
	uint64_t v;
	const uint8_t max[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	lv__pb r = lv__pb_make(max, sizeof max);
	assert_true(lv__pb_varint(&r, &v));
	assert_true(v == UINT64_MAX);
	assert_true(lv__pb_done(&r));

	const uint8_t over[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 };
	r = lv__pb_make(over, sizeof over);
	assert_false(lv__pb_varint(&r, &v));

	const uint8_t eleven[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00 };
	r = lv__pb_make(eleven, sizeof eleven);
	assert_false(lv__pb_varint(&r, &v));

	const uint8_t trunc[] = { 0x80, 0x80 };
	r = lv__pb_make(trunc, sizeof trunc);
	assert_false(lv__pb_varint(&r, &v));

	const uint8_t zero[] = { 0x00 };
	r = lv__pb_make(zero, 1);
	assert_true(lv__pb_varint(&r, &v));
	assert_int_equal(v, 0);
}

static void test_fields_and_errors(void **state)
{
	(void)state;
	lv__pb_field f;
	/* field 1 varint 150, field 2 len "hi", field 3 fixed32, field 4 fixed64 */
	const uint8_t ok[] = { 0x08, 0x96, 0x01, 0x12, 0x02, 'h', 'i', 0x1d, 1, 0, 0, 0,
			       0x21, 2, 0, 0, 0, 0, 0, 0, 0 };
	lv__pb r = lv__pb_make(ok, sizeof ok);
	assert_int_equal(lv__pb_next(&r, &f), 1);
	assert_int_equal(f.num, 1);
	assert_int_equal(f.u, 150);
	assert_int_equal(lv__pb_next(&r, &f), 1);
	assert_int_equal(f.wire, LV_PB_LEN);
	assert_int_equal(f.len, 2);
	assert_memory_equal(f.data, "hi", 2);
	assert_int_equal(lv__pb_next(&r, &f), 1);
	assert_int_equal(f.u, 1);
	assert_int_equal(lv__pb_next(&r, &f), 1);
	assert_int_equal(f.u, 2);
	assert_int_equal(lv__pb_next(&r, &f), 0);

	const uint8_t badlen[] = { 0x12, 0x05, 'a' };
	r = lv__pb_make(badlen, sizeof badlen);
	assert_int_equal(lv__pb_next(&r, &f), -1);
	assert_true(lv__pb_done(&r));

	const uint8_t group[] = { 0x0b };
	r = lv__pb_make(group, 1);
	assert_int_equal(lv__pb_next(&r, &f), -1);

	const uint8_t field0[] = { 0x00, 0x01 };
	r = lv__pb_make(field0, 2);
	assert_int_equal(lv__pb_next(&r, &f), -1);

	const uint8_t short64[] = { 0x09, 1, 2, 3 };
	r = lv__pb_make(short64, sizeof short64);
	assert_int_equal(lv__pb_next(&r, &f), -1);

	/* a huge length must not overflow the pointer arithmetic */
	const uint8_t huge[] = { 0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	r = lv__pb_make(huge, sizeof huge);
	assert_int_equal(lv__pb_next(&r, &f), -1);
}

static void sum_cb(uint64_t v, void *arg) { *(uint64_t *)arg += v; }

static void test_packed_and_unpacked(void **state)
{
	(void)state;
	lv__pb_field f;
	const uint8_t packed[] = { 0x12, 0x03, 0x01, 0x02, 0x03 };
	lv__pb r = lv__pb_make(packed, sizeof packed);
	assert_int_equal(lv__pb_next(&r, &f), 1);
	uint64_t sum = 0;
	assert_int_equal(lv__pb_repeated_varint(&f, sum_cb, &sum), 3);
	assert_int_equal(sum, 6);
	const uint8_t unpacked[] = { 0x10, 0x07 };
	r = lv__pb_make(unpacked, sizeof unpacked);
	assert_int_equal(lv__pb_next(&r, &f), 1);
	sum = 0;
	assert_int_equal(lv__pb_repeated_varint(&f, sum_cb, &sum), 1);
	assert_int_equal(sum, 7);
	const uint8_t badpacked[] = { 0x12, 0x01, 0x80 };
	r = lv__pb_make(badpacked, sizeof badpacked);
	assert_int_equal(lv__pb_next(&r, &f), 1);
	assert_int_equal(lv__pb_repeated_varint(&f, NULL, NULL), -1);
}

static void test_writer_roundtrip(void **state)
{
	(void)state;
	lv__dbuf b;
	lv__dbuf_init(&b, 0);
	assert_int_equal(lv__pbw_u64(&b, 3, 0), 0); /* omitted */
	assert_int_equal(b.len, 0);
	assert_int_equal(lv__pbw_u64(&b, 3, 300), 0);
	assert_int_equal(lv__pbw_str(&b, 2, "abc"), 0);
	assert_int_equal(lv__pbw_u64_always(&b, 4, UINT64_MAX), 0);
	lv__pb r = lv__pb_make(b.ptr, b.len);
	lv__pb_field f;
	assert_int_equal(lv__pb_next(&r, &f), 1);
	assert_int_equal(f.num, 3);
	assert_int_equal(f.u, 300);
	assert_int_equal(lv__pb_next(&r, &f), 1);
	assert_int_equal(f.len, 3);
	assert_int_equal(lv__pb_next(&r, &f), 1);
	assert_true(f.u == UINT64_MAX);
	assert_int_equal(lv__pb_varint_size(UINT64_MAX), 10);
	lv__dbuf_dispose(&b);
}

/* ---- version names ---- */

/* lv__parse_u64 (8 digits at a time) against a digit-by-digit reference: every length, a
 * byte that is not a digit (and the bytes next to the digits' range) at every position,
 * the overflow edge, random values. */
static bool parse_ref(const char *s, size_t n, uint64_t *out)
{
	if (n == 0 || n > 20)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';
		if (d > 9 || __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)d, &v))
			return false;
	}
	*out = v;
	return true;
}

static void check_parse(const char *s, size_t n)
{
	uint64_t a = 0, b = 0;
	bool x = lv__parse_u64(s, n, &a), y = parse_ref(s, n, &b);
	assert_int_equal(x, y);
	if (x)
		assert_true(a == b);
}

static void test_parse_u64(void **state)
{
	(void)state;
	static const unsigned char odd[] = { '/', ':', 0x00, 0x20, 0x2d, 0x3f, 0x40, 0x60, 0x70, 0x80,
					     0xb0, 0xf0, 0xf9, 0xfa, 0xff };
	char s[32];
	for (size_t n = 0; n <= 22; n++) {
		for (size_t i = 0; i < sizeof s; i++)
			s[i] = (char)('0' + (i * 7 + n) % 10);
		check_parse(s, n);
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k < sizeof odd; k++) {
				char keep = s[i];
				s[i] = (char)odd[k];
				check_parse(s, n);
				s[i] = keep;
			}
	}
	check_parse("18446744073709551615", 20);
	check_parse("18446744073709551616", 20);
	check_parse("99999999999999999999", 20);
	check_parse("00000000000000000000", 20);
	check_parse("9999999999999999999", 19);
	uint64_t v;
	assert_true(lv__parse_u64("18446744073709551615", 20, &v) && v == UINT64_MAX);
	assert_true(lv__parse_u64("12345678", 8, &v) && v == 12345678);
	srand(30);
	for (int t = 0; t < 200000; t++) {
		uint64_t x = ((uint64_t)rand() << 40) ^ ((uint64_t)rand() << 20) ^ (uint64_t)rand();
		x >>= rand() % 64;
		int len = snprintf(s, sizeof s, rand() % 2 ? "%020llu" : "%llu", (unsigned long long)x);
		if (rand() % 8 == 0)
			s[rand() % len] = (char)(rand() % 256);
		check_parse(s, (size_t)len);
	}
}

static void test_version_names(void **state)
{
	(void)state;
	uint64_t v;
	assert_int_equal(lv__version_name_parse("18446744073709551614.manifest", &v), LV_NAME_V2);
	assert_int_equal(v, 1);
	assert_int_equal(lv__version_name_parse("18446744073709551609.manifest", &v), LV_NAME_V2);
	assert_int_equal(v, 6);
	assert_int_equal(lv__version_name_parse("12.manifest", &v), LV_NAME_V1);
	assert_int_equal(v, 12);
	assert_int_equal(lv__version_name_parse("d9223372036854775809.manifest", &v), LV_NAME_NONE);
	assert_int_equal(lv__version_name_parse("latest_version_hint.json", &v), LV_NAME_NONE);
	/* staged manifests of a commit store (`{v}.manifest-{uuid}`) are never versions */
	assert_int_equal(lv__version_name_parse("5.manifest-0b6d5d6e-2b6b-4b68-9b9e-9a7c5bb0a3f1", &v),
			 LV_NAME_NONE);
	assert_int_equal(lv__version_name_parse(
				 "18446744073709551610.manifest-0b6d5d6e-2b6b-4b68-9b9e-9a7c5bb0a3f1", &v),
			 LV_NAME_NONE);
	assert_int_equal(lv__version_name_parse("5.manifest.tmp", &v), LV_NAME_NONE);
	assert_int_equal(lv__version_name_parse("12.manifest-1234-uuid", &v), LV_NAME_NONE);
	assert_int_equal(lv__version_name_parse(".tmp12.manifest", &v), LV_NAME_NONE);
	assert_int_equal(lv__version_name_parse(".manifest", &v), LV_NAME_NONE);
	assert_int_equal(lv__version_name_parse("1a.manifest", &v), LV_NAME_NONE);
	assert_int_equal(lv__version_name_parse("99999999999999999999.manifest", &v), LV_NAME_NONE);
	char buf[64];
	lv__version_path(buf, sizeof buf, 1, LV_NAME_V2);
	assert_string_equal(buf, "_versions/18446744073709551614.manifest");
	lv__version_path(buf, sizeof buf, 7, LV_NAME_V1);
	assert_string_equal(buf, "_versions/7.manifest");
}

/* ---- real manifests written by Lance 8.0.0 ---- */

typedef struct fx_manifest {
	char path[512];
	uint8_t *bytes;
	size_t size;
	uint64_t version;
} fx_manifest;

static size_t load_manifests(const char *table, fx_manifest *out, size_t cap)
{
	char dir[512];
	snprintf(dir, sizeof dir, "%s/lance8/%s/_versions", LV_FIXTURES_DIR, table);
	char **names = tu_list_dir(dir);
	size_t n = 0;
	for (char **p = names; *p && n < cap; p++) {
		uint64_t v;
		if (lv__version_name_parse(*p, &v) == LV_NAME_NONE)
			continue;
		snprintf(out[n].path, sizeof out[n].path, "%s/%s", dir, *p);
		out[n].bytes = tu_read_file(out[n].path, &out[n].size);
		out[n].version = v;
		n++;
	}
	tu_free_list(names);
	return n;
}

static void free_manifests(fx_manifest *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(m[i].bytes);
}

static uint64_t jget(json_t *o, const char *k)
{
	json_t *x = json_object_get(o, k);
	assert_non_null(x);
	return (uint64_t)json_integer_value(x);
}

/* The summary counters must equal LanceDB's listVersions() for every version. */
static void check_table_against_lance(const char *table)
{
	fx_manifest m[32];
	size_t n = load_manifests(table, m, 32);
	assert_true(n >= 2);
	char ep[512];
	snprintf(ep, sizeof ep, "%s/lance8/%s.expected.json", LV_FIXTURES_DIR,
		 strncmp(table, "v1", 2) == 0 ? "v1" : "t");
	json_error_t je;
	json_t *exp = json_load_file(ep, 0, &je);
	assert_non_null(exp);
	for (size_t i = 0; i < n; i++) {
		lv__manifest man;
		lv_error err = { 0 };
		int rc = lv__manifest_parse(m[i].bytes, m[i].size, m[i].path, NULL, &man, &err);
		if (rc)
			fail_msg("%s: %s", m[i].path, err.message);
		assert_int_equal(man.version, m[i].version);
		json_t *e = NULL;
		for (size_t k = 0; k < json_array_size(exp); k++)
			if (jget(json_array_get(exp, k), "version") == man.version)
				e = json_array_get(exp, k);
		assert_non_null(e);
		assert_int_equal(man.ts_seconds * 1000 + man.ts_nanos / 1000000,
				 (int64_t)jget(e, "timestamp_millis"));
		assert_int_equal(man.summary.total_fragments, jget(e, "total_fragments"));
		assert_int_equal(man.summary.total_data_files, jget(e, "total_data_files"));
		assert_int_equal(man.summary.total_files_size, jget(e, "total_files_size"));
		assert_int_equal(man.summary.total_deletion_files, jget(e, "total_deletion_files"));
		assert_int_equal(man.summary.total_data_file_rows, jget(e, "total_data_file_rows"));
		assert_int_equal(man.summary.total_deletion_file_rows, jget(e, "total_deletion_file_rows"));
		assert_int_equal(man.summary.total_rows, jget(e, "total_rows"));
		assert_true(man.writer_version.n == 5 && !memcmp(man.writer_version.p, "8.0.0", 5));
		/* Lance 8.0.0 writes the transaction inline, first in the file */
		const uint8_t *tp;
		size_t tn;
		assert_int_equal(lv__manifest_inline_txn(&man, m[i].path, &tp, &tn, &err), 0);
		lv__txn t;
		assert_int_equal(lv__txn_parse(tp, tn, m[i].path, &t, &err), 0);
		assert_non_null(t.op_name);
		assert_int_equal(t.uuid.n, 36);
		/* ... and identical to the .txn file it names */
		char txp[600];
		snprintf(txp, sizeof txp, "%s/lance8/%s/_transactions/%.*s", LV_FIXTURES_DIR, table,
			 (int)man.transaction_file.n, man.transaction_file.p);
		size_t fsz;
		uint8_t *fb = tu_read_file(txp, &fsz);
		assert_int_equal(fsz, tn);
		assert_memory_equal(fb, tp, tn);
		free(fb);
	}
	json_decref(exp);
	free_manifests(m, n);
}

static void test_real_manifests_v2(void **state)
{
	(void)state;
	check_table_against_lance("t.lance");
}

static void test_real_manifests_v1(void **state)
{
	(void)state;
	check_table_against_lance("v1.lance");
}

static void test_real_operations(void **state)
{
	(void)state;
	/* t.lance: create, append, delete, update, index, overwrite */
	static const char *expected[] = { "Overwrite", "Append", "Delete", "Update", "CreateIndex",
					  "Overwrite" };
	fx_manifest m[32];
	size_t n = load_manifests("t.lance", m, 32);
	assert_int_equal(n, 6);
	for (size_t i = 0; i < n; i++) {
		lv__manifest man;
		lv_error err = { 0 };
		assert_int_equal(lv__manifest_parse(m[i].bytes, m[i].size, "x", NULL, &man, &err), 0);
		const uint8_t *tp;
		size_t tn;
		assert_int_equal(lv__manifest_inline_txn(&man, "x", &tp, &tn, &err), 0);
		lv__txn t;
		assert_int_equal(lv__txn_parse(tp, tn, "x", &t, &err), 0);
		assert_string_equal(t.op_name, expected[man.version - 1]);
		assert_int_equal(t.read_version, man.version - 1);
		long nidx = lv__manifest_indices(&man, "x", NULL, NULL, &err);
		assert_int_equal(nidx, man.version == 5 ? 1 : 0);
	}
	free_manifests(m, n);
}

/*
 * Every truncation, every byte XOR 0xFF and 1024 seeded bit flips (support/corrupt.h,
 * shared with the public-API sweep in test_corruption.c): an error or a parse, never
 * a crash; every truncation is an error naming the file.
 */
static void test_truncated_and_flipped(void **state)
{
	(void)state;
	fx_manifest m[32];
	size_t n = load_manifests("t.lance", m, 32);
	for (size_t i = 0; i < n; i++) {
		cm_case *cases = NULL;
		size_t nc = cm_cases(m[i].size, 20261203u + i, 1024, 1, &cases);
		assert_true(nc >= 2 * m[i].size);
		uint8_t *copy = malloc(m[i].size);
		for (size_t k = 0; k < nc; k++) {
			size_t len = cm_apply(m[i].bytes, m[i].size, &cases[k], copy);
			lv__manifest man;
			lv_error err = { 0 };
			int rc = lv__manifest_parse(copy, len, "flip", NULL, &man, &err);
			if (cases[k].kind == CM_TRUNC) {
				assert_true(rc < 0);
				assert_true(strstr(err.message, "flip") != NULL);
			} else if (rc == 0) {
				const uint8_t *tp;
				size_t tn;
				lv__txn t;
				if (lv__manifest_inline_txn(&man, "flip", &tp, &tn, &err) == 0)
					(void)lv__txn_parse(tp, tn, "flip", &t, &err);
				(void)lv__manifest_indices(&man, "flip", NULL, NULL, &err);
			} else {
				assert_true(err.message[0] != 0);
			}
		}
		free(copy);
		free(cases);
	}
	free_manifests(m, n);
}

/* Builds a manifest file around a message built by the writer. */
static void wrap_manifest(lv__dbuf *msg, lv__dbuf *file)
{
	lv__dbuf_init(file, 0);
	assert_int_equal(lv__dbuf_add_u32le(file, (uint32_t)msg->len), 0);
	assert_int_equal(lv__dbuf_add(file, msg->ptr, msg->len), 0);
	assert_int_equal(lv__dbuf_add_u64le(file, 0), 0);
	assert_int_equal(lv__dbuf_add_u16le(file, 0), 0);
	assert_int_equal(lv__dbuf_add_u16le(file, 2), 0);
	assert_int_equal(lv__dbuf_add(file, "LANC", 4), 0);
}

static void test_summary_rules(void **state)
{
	(void)state;
	/* fragments: (a) 10 rows, 2 files of 100 and 0(unknown) bytes; (b) 5 rows, deletion 2;
	 * (c) physical_rows 0 (unknown) with a file; (d) 7 rows, deletion file with no count */
	lv__dbuf msg, frag, df, del, file;
	lv__dbuf_init(&msg, 0);
	struct { uint64_t rows; int ndf; uint64_t sizes[2]; int has_del; uint64_t ndel; } fr[4] = {
		{ 10, 2, { 100, 0 }, 0, 0 }, { 5, 1, { 50, 0 }, 1, 2 }, { 0, 1, { 7, 0 }, 0, 0 },
		{ 7, 1, { 1, 0 }, 1, 0 } };
	for (int i = 0; i < 4; i++) {
		lv__dbuf_init(&frag, 0);
		assert_int_equal(lv__pbw_u64(&frag, 1, (uint64_t)i), 0);
		for (int k = 0; k < fr[i].ndf; k++) {
			lv__dbuf_init(&df, 0);
			assert_int_equal(lv__pbw_str(&df, 1, "x.lance"), 0);
			assert_int_equal(lv__pbw_u64(&df, 6, fr[i].sizes[k]), 0);
			assert_int_equal(lv__pbw_bytes(&frag, 2, df.ptr, df.len), 0);
			lv__dbuf_dispose(&df);
		}
		if (fr[i].has_del) {
			lv__dbuf_init(&del, 0);
			assert_int_equal(lv__pbw_u64(&del, 2, 3), 0);
			assert_int_equal(lv__pbw_u64(&del, 4, fr[i].ndel), 0);
			assert_int_equal(lv__pbw_bytes(&frag, 3, del.ptr ? del.ptr : (uint8_t *)"", del.len), 0);
			lv__dbuf_dispose(&del);
		}
		assert_int_equal(lv__pbw_u64(&frag, 4, fr[i].rows), 0);
		assert_int_equal(lv__pbw_bytes(&msg, 2, frag.ptr, frag.len), 0);
		lv__dbuf_dispose(&frag);
	}
	assert_int_equal(lv__pbw_u64(&msg, 3, 9), 0);
	wrap_manifest(&msg, &file);
	lv__manifest man;
	lv_error err = { 0 };
	assert_int_equal(lv__manifest_parse(file.ptr, file.len, "synthetic", NULL, &man, &err), 0);
	assert_int_equal(man.version, 9);
	assert_int_equal(man.summary.total_fragments, 4);
	assert_int_equal(man.summary.total_data_files, 5);
	assert_int_equal(man.summary.total_files_size, 158);
	assert_int_equal(man.summary.total_deletion_files, 2);
	assert_int_equal(man.summary.total_deletion_file_rows, 2);
	/* known rows: 10 + (5-2); (c) and (d) unknown */
	assert_int_equal(man.summary.total_rows, 13);
	assert_int_equal(man.summary.total_data_file_rows, 15);
	assert_false(man.has_timestamp);
	lv__dbuf_dispose(&file);

	/* reader flags as Lance 12.0.0 treats them [observed with LanceDB 0.39.0 on patched
	 * manifests]: 64 (data overlay files) refused, 128 read, 256 read when the writer
	 * flag 256 is set too and corrupt when it is not, 512 and above refused */
	struct { uint64_t reader, writer; int rc; const char *msg; } fl[] = {
		{ 64, 0, LV_EUNSUPPORTED, "data overlay" },
		{ 128, 0, 0, NULL },
		{ 128 | 1, 1, 0, NULL },
		{ 256, 256, 0, NULL },
		{ 256, 0, LV_ECORRUPT, "mixed data-file-version" },
		{ 0, 256, LV_ECORRUPT, "mixed data-file-version" },
		{ 512, 0, LV_EUNSUPPORTED, "0x200" },
		{ (uint64_t)1 << 40, 0, LV_EUNSUPPORTED, "flags" },
	};
	for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++) {
		lv__dbuf m2;
		lv__dbuf_init(&m2, 0);
		assert_int_equal(lv__dbuf_add(&m2, msg.ptr, msg.len), 0);
		assert_int_equal(lv__pbw_u64(&m2, 9, fl[i].reader), 0);
		assert_int_equal(lv__pbw_u64(&m2, 10, fl[i].writer), 0);
		wrap_manifest(&m2, &file);
		int rc = lv__manifest_parse(file.ptr, file.len, "flags", NULL, &man, &err);
		if (rc != fl[i].rc)
			fail_msg("reader %llu writer %llu: %d, expected %d (%s)",
				 (unsigned long long)fl[i].reader, (unsigned long long)fl[i].writer, rc,
				 fl[i].rc, err.message);
		if (fl[i].msg)
			assert_non_null(strstr(err.message, fl[i].msg));
		lv__dbuf_dispose(&file);
		lv__dbuf_dispose(&m2);
	}
	lv__dbuf_dispose(&msg);
}

static void test_txn_properties_and_errors(void **state)
{
	(void)state;
	lv__dbuf t, e;
	lv__dbuf_init(&t, 0);
	assert_int_equal(lv__pbw_u64(&t, 1, 4), 0);
	assert_int_equal(lv__pbw_str(&t, 2, "0b7c7c2e-0000-4000-8000-000000000000"), 0);
	const char *kv[][2] = { { "zeta", "1" }, { "alpha", "quote\"d" }, { "__lance_commit_message", "hi" } };
	for (int i = 0; i < 3; i++) {
		lv__dbuf_init(&e, 0);
		assert_int_equal(lv__pbw_str(&e, 1, kv[i][0]), 0);
		assert_int_equal(lv__pbw_str(&e, 2, kv[i][1]), 0);
		assert_int_equal(lv__pbw_bytes(&t, 4, e.ptr, e.len), 0);
		lv__dbuf_dispose(&e);
	}
	assert_int_equal(lv__pbw_bytes(&t, 107, "", 0), 0);
	lv__txn txn;
	lv_error err = { 0 };
	assert_int_equal(lv__txn_parse(t.ptr, t.len, "t", &txn, &err), 0);
	assert_string_equal(txn.op_name, "ReserveFragments");
	assert_int_equal(txn.read_version, 4);
	assert_int_equal(txn.num_properties, 3);

	/* no operation at all */
	lv__dbuf none;
	lv__dbuf_init(&none, 0);
	assert_int_equal(lv__pbw_u64(&none, 1, 4), 0);
	assert_int_equal(lv__txn_parse(none.ptr, none.len, "empty.txn", &txn, &err), LV_ECORRUPT);
	assert_non_null(strstr(err.message, "empty.txn"));
	/* operation with the wrong wire type */
	assert_int_equal(lv__pbw_u64(&none, 100, 1), 0);
	assert_int_equal(lv__txn_parse(none.ptr, none.len, "bad.txn", &txn, &err), LV_ECORRUPT);
	for (size_t len = 0; len < t.len; len++)
		(void)lv__txn_parse(t.ptr, len, "trunc", &txn, &err);
	for (uint32_t f = 100; f <= 115; f++)
		assert_non_null(lv__txn_op_name(f));
	assert_string_equal(lv__txn_op_name(113), "Clone");
	assert_string_equal(lv__txn_op_name(114), "UpdateBases");
	assert_string_equal(lv__txn_op_name(115), "DataOverlay");
	assert_null(lv__txn_op_name(99));
	assert_null(lv__txn_op_name(116));
	/* an operation newer than lancever knows: Unknown(N), not an error (Lance 9-12 and on) */
	lv__dbuf fut;
	lv__dbuf_init(&fut, 0);
	assert_int_equal(lv__pbw_u64(&fut, 1, 7), 0);
	assert_int_equal(lv__pbw_str(&fut, 2, "0b6d5d6e-2b6b-4b68-9b9e-9a7c5bb0a3f1"), 0);
	assert_int_equal(lv__pbw_bytes(&fut, 137, "\x08\x01", 2), 0);
	assert_int_equal(lv__txn_parse(fut.ptr, fut.len, "future.txn", &txn, &err), 0);
	assert_string_equal(txn.op_name, "Unknown(137)");
	assert_int_equal(txn.op_field, 137);
	assert_int_equal(txn.read_version, 7);
	/* the reserved former blob-op fields (200, 202) are not operations */
	assert_int_equal(lv__pbw_bytes(&fut, 200, "", 0), 0);
	assert_int_equal(lv__txn_parse(fut.ptr, fut.len, "future.txn", &txn, &err), 0);
	assert_string_equal(txn.op_name, "Unknown(137)");
	/* DataOverlay (115) by name */
	lv__dbuf ov;
	lv__dbuf_init(&ov, 0);
	assert_int_equal(lv__pbw_bytes(&ov, 115, "", 0), 0);
	assert_int_equal(lv__txn_parse(ov.ptr, ov.len, "overlay.txn", &txn, &err), 0);
	assert_string_equal(txn.op_name, "DataOverlay");
	lv__dbuf_dispose(&ov);
	lv__dbuf_dispose(&fut);
	lv__dbuf_dispose(&none);
	lv__dbuf_dispose(&t);
}

/* A manifest file [u32 len | txn][u32 len | Manifest{3: version, sections...}][footer]. */
static void inline_txn_file(const lv__dbuf *txn, const uint64_t (*sec)[2], size_t nsec, lv__dbuf *file)
{
	lv__dbuf msg;
	lv__dbuf_init(&msg, 0);
	assert_int_equal(lv__pbw_u64(&msg, 3, 3), 0);
	for (size_t i = 0; i < nsec; i++)
		assert_int_equal(lv__pbw_u64_always(&msg, (uint32_t)sec[i][0], sec[i][1]), 0);
	lv__dbuf_init(file, 0);
	assert_int_equal(lv__dbuf_add_u32le(file, (uint32_t)txn->len), 0);
	assert_int_equal(lv__dbuf_add(file, txn->ptr, txn->len), 0);
	uint64_t pos = file->len;
	assert_int_equal(lv__dbuf_add_u32le(file, (uint32_t)msg.len), 0);
	assert_int_equal(lv__dbuf_add(file, msg.ptr, msg.len), 0);
	assert_int_equal(lv__dbuf_add_u64le(file, pos), 0);
	assert_int_equal(lv__dbuf_add_u16le(file, 0), 0);
	assert_int_equal(lv__dbuf_add_u16le(file, 2), 0);
	assert_int_equal(lv__dbuf_add(file, "LANC", 4), 0);
	lv__dbuf_dispose(&msg);
}

/*
 * The inline transaction's offset: Manifest field 21 as Lance 8 and 12 write it, field 23 as
 * Lance 14 writes it (21 is transaction_section_deprecated there and not written) [observed:
 * pylance 14.0.2 manifests carry `23: 0`, the section byte-identical to the .txn file].  With
 * both, 23 wins in either order; the wrong wire type is corrupt.
 */
static void test_transaction_section_fields(void **state)
{
	(void)state;
	lv__dbuf t, file;
	lv__dbuf_init(&t, 0);
	assert_int_equal(lv__pbw_u64(&t, 1, 2), 0);
	assert_int_equal(lv__pbw_str(&t, 2, "772bc15c-0492-4481-85c0-e1e97360393d"), 0);
	assert_int_equal(lv__pbw_bytes(&t, 100, "", 0), 0);
	/* 999: an offset inside the manifest message itself, not a transaction */
	static const uint64_t c21[][2] = { { 21, 0 } }, c23[][2] = { { 23, 0 } },
			      both[][2] = { { 21, 999 }, { 23, 0 } }, rboth[][2] = { { 23, 0 }, { 21, 999 } };
	struct { const uint64_t (*sec)[2]; size_t n; } cases[] = { { c21, 1 }, { c23, 1 }, { both, 2 }, { rboth, 2 } };
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		inline_txn_file(&t, cases[i].sec, cases[i].n, &file);
		lv__manifest man;
		lv_error err = { 0 };
		assert_int_equal(lv__manifest_parse(file.ptr, file.len, "l14", NULL, &man, &err), 0);
		const uint8_t *tp = NULL;
		size_t tn = 0;
		if (lv__manifest_inline_txn(&man, "l14", &tp, &tn, &err) != 0)
			fail_msg("case %zu: no inline transaction: %s", i, err.message);
		assert_int_equal(tn, t.len);
		assert_memory_equal(tp, t.ptr, t.len);
		lv__txn txn;
		assert_int_equal(lv__txn_parse(tp, tn, "l14", &txn, &err), 0);
		assert_string_equal(txn.op_name, "Append");
		assert_int_equal(txn.read_version, 2);
		lv__dbuf_dispose(&file);
	}
	/* field 23 as a LEN field: corrupt, as prost refuses it */
	lv__dbuf msg;
	lv__dbuf_init(&msg, 0);
	assert_int_equal(lv__pbw_u64(&msg, 3, 3), 0);
	assert_int_equal(lv__pbw_bytes(&msg, 23, "x", 1), 0);
	wrap_manifest(&msg, &file);
	lv__manifest man;
	lv_error err = { 0 };
	assert_int_equal(lv__manifest_parse(file.ptr, file.len, "bad23", NULL, &man, &err), LV_ECORRUPT);
	lv__dbuf_dispose(&file);
	lv__dbuf_dispose(&msg);
	lv__dbuf_dispose(&t);
}

static void test_footer_checks(void **state)
{
	(void)state;
	lv__manifest man;
	lv_error err = { 0 };
	uint8_t buf[64] = { 0 };
	memcpy(buf + 60, "LANC", 4);
	/* position beyond the file */
	buf[48] = 0xff;
	assert_int_equal(lv__manifest_parse(buf, 64, "pos", NULL, &man, &err), LV_ECORRUPT);
	/* length that does not reach the footer */
	memset(buf, 0, 60);
	buf[0] = 3;
	assert_int_equal(lv__manifest_parse(buf, 64, "len", NULL, &man, &err), LV_ECORRUPT);
	assert_non_null(strstr(err.message, "len"));
	/* exact: empty message of 44 bytes of zeros is invalid protobuf (field 0) */
	buf[0] = 44;
	assert_int_equal(lv__manifest_parse(buf, 64, "zeros", NULL, &man, &err), LV_ECORRUPT);
	/* no magic */
	memcpy(buf + 60, "LANX", 4);
	assert_int_equal(lv__manifest_parse(buf, 64, "magic", NULL, &man, &err), LV_ECORRUPT);
}

/* lv_manifest_path_version: the public form of the one version-name parser (issue 29). */
static void test_manifest_path_version(void **state)
{
	(void)state;
	static const struct {
		const char *path;
		bool ok;
		uint64_t v;
	} cases[] = {
		{ "_versions/18446744073709551614.manifest", true, 1 },
		{ "_versions/00000000000000000000.manifest", true, UINT64_MAX },
		{ "_versions/7.manifest", true, 7 },
		{ "tree/feat/_versions/18446744073709551613.manifest", true, 2 },
		{ "s3prefix/ds.lance/_versions/12.manifest", true, 12 },
		{ "_versions/d1.manifest", false, 0 },          /* a detached manifest */
		{ "_versions/7.manifest.tmp", false, 0 },
		{ "_versions/x7.manifest", false, 0 },
		{ "my_versions/7.manifest", false, 0 },
		{ "7.manifest", false, 0 },
		{ "data/7.manifest", false, 0 },
		{ "_versions/.manifest", false, 0 },
		{ "_versions/99999999999999999999999.manifest", false, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint64_t v = 0;
		bool ok = lv_manifest_path_version(cases[i].path, &v);
		if (ok != cases[i].ok || (ok && v != cases[i].v))
			fail_msg("%s: %d %llu", cases[i].path, ok, (unsigned long long)v);
	}
	assert_false(lv_manifest_path_version(NULL, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manifest_path_version),
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_varint_edges),
		cmocka_unit_test(test_fields_and_errors),
		cmocka_unit_test(test_packed_and_unpacked),
		cmocka_unit_test(test_writer_roundtrip),
		cmocka_unit_test(test_version_names),
		cmocka_unit_test(test_real_manifests_v2),
		cmocka_unit_test(test_real_manifests_v1),
		cmocka_unit_test(test_real_operations),
		cmocka_unit_test(test_truncated_and_flipped),
		cmocka_unit_test(test_summary_rules),
		cmocka_unit_test(test_txn_properties_and_errors),
		cmocka_unit_test(test_transaction_section_fields),
		cmocka_unit_test(test_footer_checks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
