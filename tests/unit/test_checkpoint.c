/* Unit tests: checkpoints, the degradation ladder, history, time travel, properties. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>
#include <pthread.h>

#include <lancever/lancever.h>

#include "core/crc32c.h"
#include "core/dataset.h"
#include "core/manifests.h"
#include "core/records.h"
#include "core/vlist.h"
#include "support/memcopy.h"
#include "support/rowcmp.h"
#include "support/synth.h"
#include "support/testutil.h"

#define CHECK(expr) TU_CHECK(err, expr)

static lv_error err;

/* A fresh in-memory copy of a fixture dataset written by Lance 8.0.0. */
static lv_storage *mem_copy_of(const char *fixture) { return tu_mem_copy(fixture); }

static void assert_lists_equal(const lv_version_list *a, const lv_version_list *b)
{
	assert_int_equal(lv_version_list_count(a), lv_version_list_count(b));
	for (size_t i = 0; i < lv_version_list_count(a); i++)
		if (!tu_same_checkpoint_row(lv_version_list_get(a, i), lv_version_list_get(b, i)))
			fail_msg("row %zu (version %llu) differs", i,
				 (unsigned long long)lv_version_list_get(a, i)->version);
}

/* Real Lance dataset: checkpoint, idempotence, versions from checkpoint == from manifests. */
static void test_real_checkpoint_roundtrip(void **state)
{
	(void)state;
	lv_storage *st = mem_copy_of("lance8/t.lance");
	lv_dataset *ds = tu_open(st);
	lv_version_list *before = NULL, *after = NULL, *hist = NULL;
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	CHECK(lv_versions(&before, ds, &rep, &err));
	assert_int_equal(rep.rung, LV_RUNG_MANIFESTS);
	assert_int_equal(lv_version_list_count(before), 6);
	assert_true(lv_version_list_get(before, 2)->is_tagged); /* keep3 */

	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	assert_true(r.written);
	assert_false(r.already_present);
	assert_int_equal(r.latest_version, 6);
	assert_int_equal(r.entries, 6);
	assert_string_equal(r.path, "_checkpoints/00000000000000000006.lance");
	lv_buf f1 = tu_read(st, r.path);

	/* Same state, same bytes: the second writer finds it and succeeds. */
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	assert_true(r.already_present);
	lv_buf f2 = tu_read(st, r.path);
	assert_int_equal(f1.size, f2.size);
	assert_memory_equal(f1.ptr, f2.ptr, f1.size);

	/* The file is a real Lance file with the proposal's schema and metadata. */
	lv_lancefile *lf = NULL;
	CHECK(lv_lancefile_read(&lf, f1.ptr, f1.size, r.path, &err));
	assert_int_equal(lv_lancefile_num_columns(lf), 15);
	assert_int_equal(lv_lancefile_num_rows(lf), 6);
	assert_string_equal(lv_lancefile_column(lf, 0)->name, "version");
	assert_string_equal(lv_lancefile_column(lf, 14)->name, "transaction_properties");
	const lv_kv *kv = lv_lancefile_metadata_find(lf, "lance:checkpoint:dataset_created");
	assert_non_null(kv);
	char want[32];
	snprintf(want, sizeof want, "%lld", (long long)lv_version_list_get(before, 0)->timestamp_millis);
	assert_int_equal(kv->value_len, strlen(want));
	assert_memory_equal(kv->value, want, kv->value_len);
	kv = lv_lancefile_metadata_find(lf, "lance:checkpoint:created_at");
	snprintf(want, sizeof want, "%lld", (long long)lv_version_list_get(before, 5)->timestamp_millis);
	assert_memory_equal(kv->value, want, kv->value_len);
	lv_lancefile_free(lf);

	lv_storage_reset_stats(st);
	CHECK(lv_versions(&after, ds, &rep, &err));
	assert_int_equal(rep.rung, LV_RUNG_NEWEST_CHECKPOINT);
	assert_int_equal(rep.manifests_read, 0);
	assert_int_equal(rep.checkpoint_version, 6);
	/* identity confirmed from the head of one manifest (these are < 64 KiB: the whole file) */
	assert_true(rep.identity_bytes > 0 && rep.identity_bytes <= 65536);
	assert_lists_equal(before, after);
	CHECK(lv_history(&hist, ds, &rep, &err));
	assert_lists_equal(before, hist);
	lv_buf_dispose(&f1);
	lv_buf_dispose(&f2);
	lv_version_list_free(before);
	lv_version_list_free(after);
	lv_version_list_free(hist);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* Cleaned-up versions leave versions() but stay in history(), flagged. */
static void test_history_after_manifests_removed(void **state)
{
	(void)state;
	lv_storage *st = synth_mem_series(10, 1700000000000);
	lv_dataset *ds = tu_open(st);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	char p[96];
	for (uint64_t v = 1; v <= 4; v++)
		CHECK(lv_storage_delete(st, synth_manifest_path(p, sizeof p, v), &err));
	/* a tail of 3 new versions */
	for (uint64_t v = 11; v <= 13; v++) {
		synth_commit c = { .version = v, .ts_ms = 1700000000000 + 1000 * (int64_t)v, .read_version = v - 1 };
		CHECK(synth_write(st, &c));
	}
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	lv_version_list *l = tu_versions(ds, &rep);
	assert_int_equal(rep.rung, LV_RUNG_NEWEST_CHECKPOINT);
	assert_int_equal(rep.manifests_read, 3);
	assert_int_equal(lv_version_list_count(l), 9);
	assert_int_equal(lv_version_list_get(l, 0)->version, 5);
	for (size_t i = 0; i < 9; i++)
		assert_false(lv_version_list_get(l, i)->is_cleaned_up);
	lv_version_list_free(l);
	CHECK(lv_history(&l, ds, &rep, &err));
	assert_int_equal(lv_version_list_count(l), 13);
	for (size_t i = 0; i < 13; i++)
		assert_int_equal(lv_version_list_get(l, i)->is_cleaned_up, i < 4);
	lv_version_list_free(l);

	/* A second checkpoint keeps the cleaned-up rows, flagged, and prunes to 2 files. */
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	assert_int_equal(r.entries, 13);
	assert_int_equal(r.new_entries, 3);
	CHECK(lv_storage_delete(st, synth_manifest_path(p, sizeof p, 5), &err));
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err)); /* same latest: merged/replaced */
	synth_commit c = { .version = 14, .ts_ms = 1700000014000, .read_version = 13 };
	CHECK(synth_write(st, &c));
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	assert_int_equal(r.files_pruned, 1);
	CHECK(lv_history(&l, ds, &rep, &err));
	assert_int_equal(lv_version_list_count(l), 14);
	assert_true(lv_version_list_get(l, 4)->is_cleaned_up);
	lv_version_list_free(l);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* Writes checkpoints at 5 and 8 over synthetic versions 1..8; returns the storage. */
static lv_storage *two_checkpoints(void)
{
	lv_storage *st = synth_mem_series(5, 1700000000000);
	lv_dataset *ds = tu_open(st);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	for (uint64_t v = 6; v <= 8; v++) {
		synth_commit c = { .version = v, .ts_ms = 1700000000000 + 1000 * (int64_t)v, .read_version = v - 1 };
		CHECK(synth_write(st, &c));
	}
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	assert_string_equal(r.path, "_checkpoints/00000000000000000008.lance");
	lv_dataset_free(ds);
	return st;
}

#define NEWEST "_checkpoints/00000000000000000008.lance"
#define OLDER "_checkpoints/00000000000000000005.lance"

static void expect_rung(lv_storage *st, int rung, size_t expect_rows)
{
	lv_dataset *ds = tu_open(st);
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	lv_version_list *l = tu_versions(ds, &rep);
	if (rep.rung != rung)
		fail_msg("rung %d, expected %d (%s)", rep.rung, rung, rep.note);
	if (rung != LV_RUNG_NEWEST_CHECKPOINT)
		assert_true(rep.checkpoints_rejected >= 1);
	assert_int_equal(lv_version_list_count(l), expect_rows);
	for (size_t i = 0; i < expect_rows; i++) {
		const lv_version_info *v = lv_version_list_get(l, i);
		assert_int_equal(v->version, i + 1);
		assert_int_equal(v->total_rows, (i + 1) * 10);
		assert_int_equal(v->timestamp_millis, 1700000000000 + 1000 * (int64_t)(i + 1));
	}
	lv_version_list_free(l);
	lv_dataset_free(ds);
}

static void test_corrupt_newest_every_byte(void **state)
{
	(void)state;
	lv_storage *st = two_checkpoints();
	lv_buf good = tu_read(st, NEWEST);
	expect_rung(st, LV_RUNG_NEWEST_CHECKPOINT, 8);
	/* every byte flipped: the older checkpoint (or, rarely, a still-valid file) answers right */
	uint8_t *bad = malloc(good.size);
	size_t older = 0;
	for (size_t i = 0; i < good.size; i++) {
		memcpy(bad, good.ptr, good.size);
		bad[i] ^= 0x55;
		CHECK(lv_storage_write(st, NEWEST, bad, good.size, &err));
		lv_dataset *ds = tu_open(st);
		lv_history_report rep = LV_HISTORY_REPORT_INIT;
		lv_version_list *l = tu_versions(ds, &rep);
		assert_int_equal(lv_version_list_count(l), 8);
		for (size_t k = 0; k < 8; k++) {
			assert_int_equal(lv_version_list_get(l, k)->version, k + 1);
			assert_int_equal(lv_version_list_get(l, k)->total_rows, (k + 1) * 10);
		}
		if (rep.rung == LV_RUNG_OLDER_CHECKPOINT)
			older++;
		lv_version_list_free(l);
		lv_dataset_free(ds);
	}
	/* padding bytes may be flipped harmlessly; everything else must be detected */
	assert_true(older > good.size / 2);
	free(bad);
	/* truncated, zero-length */
	CHECK(lv_storage_write(st, NEWEST, good.ptr, good.size / 2, &err));
	expect_rung(st, LV_RUNG_OLDER_CHECKPOINT, 8);
	CHECK(lv_storage_write(st, NEWEST, "", 0, &err));
	expect_rung(st, LV_RUNG_OLDER_CHECKPOINT, 8);
	/* wrong schema: a valid Lance file with other columns */
	uint64_t vals[2] = { 1, 2 };
	lv_column c = { .name = "version", .type = LV_COL_UINT64, .u64 = vals };
	lv_buf other = { 0 };
	CHECK(lv_lancefile_write(&other, &c, 1, 2, NULL, 0, NULL, &err));
	CHECK(lv_storage_write(st, NEWEST, other.ptr, other.size, &err));
	expect_rung(st, LV_RUNG_OLDER_CHECKPOINT, 8);
	/* all corrupt: manifests */
	CHECK(lv_storage_write(st, OLDER, other.ptr, other.size, &err));
	expect_rung(st, LV_RUNG_MANIFESTS, 8);
	lv_buf_dispose(&other);
	lv_buf_dispose(&good);
	lv_storage_free(st);
}

/* A dataset deleted and recreated at the same path: old checkpoints are ignored. */
static void test_recreated_dataset(void **state)
{
	(void)state;
	lv_storage *st = mem_copy_of("lance8/t.lance");
	lv_buf cp = tu_read(st, tu_checkpoint(st).path);
	lv_storage_free(st);
	/* same operations, new uuids and times */
	st = mem_copy_of("lance8/t_recreated.lance");
	CHECK(lv_storage_write(st, "_checkpoints/00000000000000000006.lance", cp.ptr, cp.size, &err));
	lv_dataset *ds = tu_open(st);
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	lv_version_list *l = tu_history(ds, &rep);
	assert_int_equal(rep.rung, LV_RUNG_MANIFESTS);
	assert_int_equal(rep.checkpoints_rejected, 1);
	assert_non_null(strstr(rep.note, "different history"));
	assert_int_equal(lv_version_list_count(l), 6);
	lv_version_list_free(l);
	/* a checkpoint covering more versions than the dataset has */
	lv_dataset_free(ds);
	lv_storage_free(st);
	st = synth_mem_series(3, 1600000000000);
	CHECK(lv_storage_write(st, "_checkpoints/00000000000000000006.lance", cp.ptr, cp.size, &err));
	tu_expect_history_rung(st, LV_RUNG_MANIFESTS, 3);
	lv_storage_free(st);
	lv_buf_dispose(&cp);
}

static void test_config_and_limits(void **state)
{
	(void)state;
	lv_storage *st = synth_mem_series(9, 1700000000000);
	const char *cfgkv[] = { "lance.version_checkpoint.max_entries", "4", NULL };
	synth_commit c = { .version = 10, .ts_ms = 1700000010000, .read_version = 9, .config = cfgkv };
	CHECK(synth_write(st, &c));
	lv_dataset *ds = tu_open(st);
	lv_checkpoint_config cfg = LV_CHECKPOINT_CONFIG_INIT;
	CHECK(lv_checkpoint_config_resolve(&cfg, ds, NULL, &err));
	assert_int_equal(cfg.enabled, 1);
	assert_int_equal(cfg.max_entries, 4);
	assert_int_equal(cfg.max_checkpoint_files, 2);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	assert_int_equal(r.entries, 4);
	/* explicit settings win */
	lv_checkpoint_config in = LV_CHECKPOINT_CONFIG_INIT;
	in.max_entries = 2;
	in.archive = 0; /* the proposal's head: a smaller one under the same name is not written */
	CHECK(lv_checkpoint_write(ds, &in, NULL, 0, &r, &err));
	assert_int_equal(r.entries, 4); /* same name already says more: kept */
	in.archive = -1;
	in.enabled = 0;
	CHECK(lv_checkpoint_write(ds, &in, NULL, 0, &r, &err));
	assert_false(r.written);
	in.enabled = -1;
	in.max_entries = 0;
	assert_int_equal(lv_checkpoint_write(ds, &in, NULL, 0, &r, &err), LV_EINVALID);
	in.max_entries = -5;
	assert_int_equal(lv_checkpoint_write(ds, &in, NULL, 0, &r, &err), LV_EINVALID);
	lv_dataset_free(ds);
	/* invalid dataset values */
	const char *bad[][2] = { { "lance.version_checkpoint.max_entries", "0" },
				 { "lance.version_checkpoint.max_entries", "-3" },
				 { "lance.version_checkpoint.max_checkpoint_files", "two" },
				 { "lance.version_checkpoint.enabled", "maybe" } };
	for (int i = 0; i < 4; i++) {
		const char *kv[] = { bad[i][0], bad[i][1], NULL };
		synth_commit cc = { .version = 11 + (uint64_t)i, .ts_ms = 1700000011000 + i, .read_version = 10, .config = kv };
		CHECK(synth_write(st, &cc));
		ds = tu_open(st);
		assert_int_equal(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err), LV_EINVALID);
		assert_non_null(strstr(err.message, bad[i][0]));
		lv_dataset_free(ds);
	}
	lv_storage_free(st);
}

/* Versions marked by a cleanup-to-be are recorded as cleaned up. */
static void test_cleaned_marks(void **state)
{
	(void)state;
	lv_storage *st = synth_mem_series(5, 1700000000000);
	CHECK(synth_tag(st, "keep", 2));
	lv_dataset *ds = tu_open(st);
	uint64_t gone[] = { 3, 1 };
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, gone, 2, &r, &err));
	lv_buf b = tu_read(st, r.path);
	lv_lancefile *lf = NULL;
	CHECK(lv_lancefile_read(&lf, b.ptr, b.size, "cp", &err));
	const lv_column *cl = lv_lancefile_column(lf, 10), *tg = lv_lancefile_column(lf, 9);
	uint8_t want_cl[5] = { 1, 0, 1, 0, 0 }, want_tg[5] = { 0, 1, 0, 0, 0 };
	for (int i = 0; i < 5; i++) {
		assert_int_equal(cl->bools[i] != 0, want_cl[i]);
		assert_int_equal(tg->bools[i] != 0, want_tg[i]);
	}
	lv_lancefile_free(lf);
	lv_buf_dispose(&b);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* ---- properties truncation ---- */

static void check_truncated(const char *in, size_t limit)
{
	char *out = lv_properties_truncate(in, limit);
	assert_non_null(out);
	size_t n = strlen(in);
	if (n <= limit) {
		assert_string_equal(out, in);
		free(out);
		return;
	}
	assert_true(strlen(out) <= limit);
	json_error_t je;
	json_t *j = json_loads(out, 0, &je);
	if (!j)
		fail_msg("not JSON: %s", je.text);
	assert_true(json_is_true(json_object_get(j, "_truncated")));
	assert_int_equal(json_integer_value(json_object_get(j, "_size")), n);
	const char *data = json_string_value(json_object_get(j, "_data"));
	assert_non_null(data);
	assert_true(strlen(data) > 0 || limit < 64);
	assert_int_equal(strncmp(data, in, strlen(data)), 0); /* a prefix, valid UTF-8 (jansson checked) */
	/* idempotent */
	char *again = lv_properties_truncate(out, limit);
	assert_string_equal(again, out);
	free(again);
	json_decref(j);
	free(out);
}

static void test_properties_truncation(void **state)
{
	(void)state;
	static const char *chars[] = { "a", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\"", "\\" };
	for (size_t c = 0; c < sizeof chars / sizeof chars[0]; c++) {
		for (size_t total = LV_PROPERTIES_LIMIT - 8; total <= LV_PROPERTIES_LIMIT + 8; total++) {
			/* {"k":"<chars...>"} of about `total` bytes */
			char *s = malloc(total + 16);
			size_t n = 0;
			n += (size_t)sprintf(s, "{\"k\":\"");
			while (n + strlen(chars[c]) + 2 <= total) {
				if (chars[c][0] == '"' || chars[c][0] == '\\')
					s[n++] = '\\';
				memcpy(s + n, chars[c], strlen(chars[c]));
				n += strlen(chars[c]);
			}
			s[n++] = '"';
			s[n++] = '}';
			s[n] = 0;
			check_truncated(s, LV_PROPERTIES_LIMIT);
			free(s);
		}
	}
	check_truncated("{}", LV_PROPERTIES_LIMIT);
}

/* A checkpoint row whose properties text is broken JSON keeps it under transaction_properties. */
static void test_properties_through_checkpoint(void **state)
{
	(void)state;
	lv_storage *st = tu_mem();
	char *big = malloc(20001);
	memset(big, 'x', 20000);
	big[20000] = 0;
	const char *props[] = { "msg", big, "z", "\xe2\x82\xac", NULL };
	synth_commit c = { .version = 1, .ts_ms = 1700000000000, .props = props };
	CHECK(synth_write(st, &c));
	lv_dataset *ds = tu_open(st);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	lv_version_list *l = tu_history(ds, NULL);
	const char *p = lv_version_list_get(l, 0)->transaction_properties;
	assert_true(strlen(p) <= LV_PROPERTIES_LIMIT);
	json_error_t je;
	json_t *j = json_loads(p, 0, &je);
	assert_non_null(j);
	assert_true(json_is_true(json_object_get(j, "_truncated")));
	json_decref(j);
	lv_version_list_free(l);
	lv_dataset_free(ds);
	lv_storage_free(st);
	free(big);
}

/* ---- time travel ---- */

static void test_asof_skewed(void **state)
{
	(void)state;
	enum { N = 2000 };
	lv_version_list *l = lv__version_list_new(N, 0);
	assert_non_null(l);
	srand(42);
	for (size_t i = 0; i < N; i++) {
		lv_version_info *v = &l->items[i];
		memset(v, 0, sizeof *v);
		v->version = i + 1;
		/* rising clock with skew: some writers are up to 5 s behind */
		v->timestamp_millis = 1000000 + (int64_t)i * 100 - (rand() % 7 == 0 ? rand() % 5000 : 0);
		v->transaction_properties = "{}";
	}
	l->n = N;
	lv_timeline *t = NULL;
	CHECK(lv_timeline_from_list(&t, l, &err));
	for (int q = 0; q < 20000; q++) {
		int64_t ts = 990000 + rand() % 220000;
		for (int strict = 0; strict < 2; strict++) {
			const lv_version_info *want = NULL;
			for (size_t i = 0; i < N; i++)
				if (strict ? l->items[i].timestamp_millis < ts : l->items[i].timestamp_millis <= ts)
					want = &l->items[i];
			assert_ptr_equal(lv_timeline_as_of(t, ts, strict != 0), want);
		}
	}
	/* exact boundary: inclusive vs strict */
	int64_t ts5 = l->items[4].timestamp_millis;
	const lv_version_info *a = lv_timeline_as_of(t, ts5, false);
	assert_non_null(a);
	assert_true(a->version >= 5);
	lv_timeline_free(t);
	lv_version_list_free(l);
}

static void test_asof_on_dataset(void **state)
{
	(void)state;
	lv_storage *st = tu_mem();
	int64_t ts[] = { 1000, 2000, 1500, 4000, 3000 }; /* skewed */
	for (int i = 0; i < 5; i++) {
		synth_commit c = { .version = (uint64_t)i + 1, .ts_ms = ts[i] * 1000, .read_version = (uint64_t)i };
		CHECK(synth_write(st, &c));
	}
	lv_dataset *ds = tu_open(st);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	char p[96];
	CHECK(lv_storage_delete(st, synth_manifest_path(p, sizeof p, 1), &err));
	CHECK(lv_storage_delete(st, synth_manifest_path(p, sizeof p, 3), &err));
	lv_version_list *l = NULL;
	CHECK(lv_version_as_of(&l, ds, 1800000, false, NULL, &err));
	assert_int_equal(lv_version_list_get(l, 0)->version, 3);
	assert_true(lv_version_list_get(l, 0)->is_cleaned_up);
	lv_version_list_free(l);
	CHECK(lv_version_as_of(&l, ds, 3500000, false, NULL, &err));
	assert_int_equal(lv_version_list_get(l, 0)->version, 5);
	assert_false(lv_version_list_get(l, 0)->is_cleaned_up);
	lv_version_list_free(l);
	CHECK(lv_version_as_of(&l, ds, 3000000, false, NULL, &err));
	assert_int_equal(lv_version_list_get(l, 0)->version, 5);
	lv_version_list_free(l);
	CHECK(lv_version_as_of(&l, ds, 3000000, true, NULL, &err));
	assert_int_equal(lv_version_list_get(l, 0)->version, 3);
	lv_version_list_free(l);
	assert_int_equal(lv_version_as_of(&l, ds, 999999, false, NULL, &err), LV_ENOTFOUND);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static void test_time_parsing(void **state)
{
	(void)state;
	int64_t ms;
	CHECK(lv_parse_time("1700000000123", &ms, &err));
	assert_int_equal(ms, 1700000000123);
	CHECK(lv_parse_time("1970-01-01T00:00:00Z", &ms, &err));
	assert_int_equal(ms, 0);
	CHECK(lv_parse_time("2026-12-02T14:39:50.644Z", &ms, &err));
	assert_int_equal(ms, 1796222390644);
	CHECK(lv_parse_time("2026-12-02T16:39:50.644+02:00", &ms, &err));
	assert_int_equal(ms, 1796222390644);
	CHECK(lv_parse_time("2026-12-02", &ms, &err));
	assert_int_equal(ms, 1796169600000);
	CHECK(lv_parse_time("2024-02-29 12:00", &ms, &err));
	const char *bad[] = { "", "2023-02-29", "2026-13-01", "2026-12-02T25:00", "abc", "2026-12-02Tx",
			      "2026-12-02T10:00:00Zjunk", "-5", "99999999999999999999" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(lv_parse_time(bad[i], &ms, &err), LV_EINVALID);
	CHECK(lv_parse_duration("7d", &ms, &err));
	assert_int_equal(ms, 7 * 86400000LL);
	CHECK(lv_parse_duration("1d12h", &ms, &err));
	assert_int_equal(ms, 36 * 3600000LL);
	CHECK(lv_parse_duration("500ms", &ms, &err));
	assert_int_equal(ms, 500);
	const char *badd[] = { "", "7", "d", "7x", "-1d", "99999999999999999999w" };
	for (size_t i = 0; i < sizeof badd / sizeof badd[0]; i++)
		assert_int_equal(lv_parse_duration(badd[i], &ms, &err), LV_EINVALID);
}

/* Two checkpointers at once on the same state: both succeed, one identical file. */
static void test_concurrent_checkpointers(void **state)
{
	(void)state;
	for (int round = 0; round < 20; round++) {
		lv_storage *st = synth_mem_series(30, 1700000000000);
		pthread_t t[4];
		tu_checkpoint_job a[4];
		for (int i = 0; i < 4; i++) {
			a[i] = (tu_checkpoint_job){ st, NULL, 0, { 0 } };
			pthread_create(&t[i], NULL, tu_checkpoint_job_run, &a[i]);
		}
		for (int i = 0; i < 4; i++) {
			pthread_join(t[i], NULL);
			assert_int_equal(a[i].rc, 0);
		}
		tu_expect_history_rung(st, LV_RUNG_NEWEST_CHECKPOINT, 30);
		lv_storage_free(st);
	}
}

/* Without an inline transaction the head cannot confirm identity: the whole manifest is read. */
static void test_identity_without_inline_txn(void **state)
{
	(void)state;
	lv_storage *st = tu_mem();
	for (uint64_t v = 1; v <= 4; v++) {
		synth_commit c = { .version = v, .ts_ms = 1700000000000 + 1000 * (int64_t)v,
				   .read_version = v - 1, .txn_file_only = 1 };
		CHECK(synth_write(st, &c));
	}
	lv_dataset *ds = tu_open(st);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	lv_version_list *l = tu_versions(ds, &rep);
	assert_int_equal(rep.rung, LV_RUNG_NEWEST_CHECKPOINT);
	assert_int_equal(lv_version_list_count(l), 4);
	assert_string_equal(lv_version_list_get(l, 3)->operation_type, "Append");
	uint64_t sz = 0;
	char p[96];
	CHECK(lv_storage_head(st, synth_manifest_path(p, sizeof p, 4), &sz, NULL, &err));
	assert_int_equal(rep.identity_bytes, 2 * sz); /* head probe, then the full read */
	lv_version_list_free(l);
	/* a different transaction in that manifest is still caught by the full comparison */
	synth_commit c = { .version = 4, .ts_ms = 1700000004000, .read_version = 3, .txn_file_only = 1,
			   .uuid = "ffffffff-0000-4000-8000-000000000004" };
	CHECK(lv_storage_delete(st, p, &err));
	CHECK(synth_write(st, &c));
	CHECK(lv_versions(&l, ds, &rep, &err));
	assert_int_equal(rep.rung, LV_RUNG_MANIFESTS);
	assert_non_null(strstr(rep.note, "different history"));
	lv_version_list_free(l);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* CRC-32C: the published check value, and any length/alignment against a bitwise reference. */
static uint32_t crc_ref(uint32_t c, const uint8_t *p, size_t n)
{
	c = ~c;
	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
	}
	return ~c;
}

static void test_crc32c(void **state)
{
	(void)state;
	assert_int_equal(lv__crc32c(0, "123456789", 9), 0xE3069283u);
	/* past 3 x 256 bytes, the interleaved lanes of the hardware path, more than once */
	uint8_t buf[2600];
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (uint8_t)(i * 131 + 7 + (i >> 8) * 17);
	for (size_t off = 0; off < 9; off++)
		for (size_t n = 0; n + off <= sizeof buf; n += off ? 29 : 7) {
			assert_int_equal(lv__crc32c(0, buf + off, n), crc_ref(0, buf + off, n));
			/* chaining equals one pass */
			uint32_t a = lv__crc32c(0, buf + off, n / 2);
			assert_int_equal(lv__crc32c(a, buf + off + n / 2, n - n / 2), crc_ref(0, buf + off, n));
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c),
		cmocka_unit_test(test_real_checkpoint_roundtrip),
		cmocka_unit_test(test_history_after_manifests_removed),
		cmocka_unit_test(test_corrupt_newest_every_byte),
		cmocka_unit_test(test_recreated_dataset),
		cmocka_unit_test(test_identity_without_inline_txn),
		cmocka_unit_test(test_config_and_limits),
		cmocka_unit_test(test_cleaned_marks),
		cmocka_unit_test(test_properties_truncation),
		cmocka_unit_test(test_properties_through_checkpoint),
		cmocka_unit_test(test_asof_skewed),
		cmocka_unit_test(test_asof_on_dataset),
		cmocka_unit_test(test_time_parsing),
		cmocka_unit_test(test_concurrent_checkpointers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
