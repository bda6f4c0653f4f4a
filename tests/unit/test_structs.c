/*
 * The public structs' description for FFI callers (lv_struct_info / lv_struct_field,
 * util/structs.c) and the init functions of the struct rule (lancever/common.h):
 *  - every described struct's fields tile it (sorted by offset: no overlap, a gap only
 *    as alignment padding, the size the compiler gives), its version is its header's;
 *  - every lv_X_init sets the header's version and the INIT macro's defaults, and for a
 *    version it does not know (0, older, newer) returns LV_EINVALID and writes nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <lancever/lancever.h>
#include <lancever/sys/storage.h>

typedef struct known {
	const char *name;
	size_t size;
	int version;
} known;

#define K(S, V) { #S, sizeof(S), V }
static const known KNOWN[] = {
	K(lv_error, 0), K(lv_buf, 0), K(lv_open_options, LV_OPEN_OPTIONS_VERSION),
	K(lv_history_report, LV_HISTORY_REPORT_VERSION), K(lv_version_info, 0), K(lv_warning, 0),
	K(lv_tag, 0), K(lv_branch, 0), K(lv_refs_bad, 0),
	K(lv_checkpoint_config, LV_CHECKPOINT_CONFIG_VERSION),
	K(lv_checkpoint_result, LV_CHECKPOINT_RESULT_VERSION),
	K(lv_history_options, LV_HISTORY_OPTIONS_VERSION), K(lv_cleanup_candidate, 0),
	K(lv_cleanup_policy, LV_CLEANUP_POLICY_VERSION), K(lv_cleanup_stats, LV_CLEANUP_STATS_VERSION),
	K(lv_expire_policy, LV_EXPIRE_POLICY_VERSION), K(lv_check_item, 0),
	K(lv_check_options, LV_CHECK_OPTIONS_VERSION), K(lv_arrow_options, LV_ARROW_OPTIONS_VERSION),
	K(lv_cleanup_file, 0), K(lv_column, 0), K(lv_kv, 0),
	K(lv_lancefile_write_options, LV_LANCEFILE_WRITE_OPTIONS_VERSION), K(lv_list_entry, 0),
	K(lv_storage_stats, LV_STORAGE_STATS_VERSION), K(lv_storage_ops, LV_STORAGE_OPS_VERSION),
	K(lv_capture_options, LV_CAPTURE_OPTIONS_VERSION), K(lv_capture_stats, LV_CAPTURE_STATS_VERSION),
	K(lv_watch_options, LV_WATCH_OPTIONS_VERSION), K(lv_watch_table_stats, 0),
	K(lv_watch_field, 0), K(lv_watch_event, 0),
};

typedef struct span {
	size_t off, size;
} span;

static int by_offset(const void *a, const void *b)
{
	const span *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

static void test_descriptions_tile_their_structs(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof KNOWN / sizeof KNOWN[0]; k++) {
		size_t size = 0, n = 0;
		int version = -1;
		assert_int_equal(lv_struct_info(KNOWN[k].name, &size, &version, &n), 0);
		assert_int_equal(size, KNOWN[k].size);
		assert_int_equal(version, KNOWN[k].version);
		span sp[64];
		assert_true(n > 0 && n <= 64);
		for (size_t i = 0; i < n; i++) {
			const char *f = NULL;
			int type = 0;
			assert_int_equal(lv_struct_field(KNOWN[k].name, i, &f, &type, &sp[i].off, &sp[i].size), 0);
			assert_non_null(f);
			assert_true(type >= LV_FIELD_INT && type <= LV_FIELD_UNSIGNED);
			if (i == 0 && version) /* the rule: a versioned struct starts with `int version` */
				assert_true(!strcmp(f, "version") && sp[i].off == 0 && type == LV_FIELD_INT);
		}
		qsort(sp, n, sizeof *sp, by_offset);
		size_t end = 0;
		for (size_t i = 0; i < n; i++) {
			if (sp[i].off < end || sp[i].off >= end + 8)
				fail_msg("%s: a field at %zu, the one before ends at %zu", KNOWN[k].name,
					 sp[i].off, end);
			end = sp[i].off + sp[i].size;
		}
		if (end > size || size >= end + 8)
			fail_msg("%s: fields end at %zu, size %zu", KNOWN[k].name, end, size);
		assert_int_equal(lv_struct_field(KNOWN[k].name, n, NULL, NULL, NULL, NULL), LV_ENOTFOUND);
	}
	assert_int_equal(lv_struct_info("lv_storage_options", NULL, NULL, NULL), LV_ENOTFOUND);
	assert_int_equal(lv_struct_info(NULL, NULL, NULL, NULL), LV_EINVALID);
}

/* Each init: sets version + defaults (checked by a few fields), refuses an unknown version
 * without writing a byte. */
#define INIT_CASE(T, fn, V) INIT_CASE_FROM(T, fn, V, V)
/* A struct whose versions FLOOR..V are accepted (fields appended since FLOOR). */
#define INIT_CASE_FROM(T, fn, V, FLOOR)                                                      \
	do {                                                                                 \
		T x;                                                                         \
		memset(&x, 0x5a, sizeof x);                                                  \
		unsigned char before[sizeof x];                                              \
		memcpy(before, &x, sizeof x);                                                \
		int bads[2] = { (FLOOR) - 1, (V) + 1 };                                      \
		for (int b = 0; b < 2; b++) {                                                \
			assert_int_equal(fn(&x, bads[b]), LV_EINVALID);                      \
			assert_memory_equal(&x, before, sizeof x);                           \
		}                                                                            \
		assert_int_equal(fn(&x, 0), LV_EINVALID);                                    \
		assert_int_equal(fn(NULL, V), LV_EINVALID);                                  \
		assert_int_equal(fn(&x, V), 0);                                              \
		assert_int_equal(x.version, V);                                              \
	} while (0)

static void test_init_functions(void **state)
{
	(void)state;
	INIT_CASE(lv_open_options, lv_open_options_init, LV_OPEN_OPTIONS_VERSION);
	INIT_CASE(lv_history_report, lv_history_report_init, LV_HISTORY_REPORT_VERSION);
	INIT_CASE_FROM(lv_checkpoint_config, lv_checkpoint_config_init, LV_CHECKPOINT_CONFIG_VERSION, 2);
	INIT_CASE(lv_checkpoint_result, lv_checkpoint_result_init, LV_CHECKPOINT_RESULT_VERSION);
	INIT_CASE(lv_history_options, lv_history_options_init, LV_HISTORY_OPTIONS_VERSION);
	INIT_CASE(lv_cleanup_policy, lv_cleanup_policy_init, LV_CLEANUP_POLICY_VERSION);
	INIT_CASE(lv_cleanup_stats, lv_cleanup_stats_init, LV_CLEANUP_STATS_VERSION);
	INIT_CASE(lv_expire_policy, lv_expire_policy_init, LV_EXPIRE_POLICY_VERSION);
	INIT_CASE_FROM(lv_check_options, lv_check_options_init, LV_CHECK_OPTIONS_VERSION, 2);
	INIT_CASE(lv_arrow_options, lv_arrow_options_init, LV_ARROW_OPTIONS_VERSION);
	INIT_CASE(lv_lancefile_write_options, lv_lancefile_write_options_init,
		  LV_LANCEFILE_WRITE_OPTIONS_VERSION);
	INIT_CASE(lv_storage_ops, lv_storage_ops_init, LV_STORAGE_OPS_VERSION);
	INIT_CASE(lv_storage_stats, lv_storage_stats_init, LV_STORAGE_STATS_VERSION);
	INIT_CASE(lv_capture_options, lv_capture_options_init, LV_CAPTURE_OPTIONS_VERSION);
	INIT_CASE(lv_capture_stats, lv_capture_stats_init, LV_CAPTURE_STATS_VERSION);
	INIT_CASE(lv_watch_options, lv_watch_options_init, LV_WATCH_OPTIONS_VERSION);
	/* the defaults agree with the INIT macros */
	lv_open_options o;
	assert_int_equal(lv_open_options_init(&o, LV_OPEN_OPTIONS_VERSION), 0);
	assert_true(o.threads == 0 && !o.branch && !o.storage);
	lv_checkpoint_config c;
	assert_int_equal(lv_checkpoint_config_init(&c, LV_CHECKPOINT_CONFIG_VERSION), 0);
	assert_true(c.enabled == -1 && c.max_entries == -1 && c.max_checkpoint_files == -1 &&
		    c.archive == -1 && c.archive_segment_rows == -1);
	lv_expire_policy x, xm = LV_EXPIRE_POLICY_INIT;
	assert_int_equal(lv_expire_policy_init(&x, LV_EXPIRE_POLICY_VERSION), 0);
	assert_true(x.older_than_ms == xm.older_than_ms && x.retain_versions == xm.retain_versions &&
		    x.keep_one_per_ms == -1 && x.error_if_tagged_old_versions && !x.checkpoint);
	lv_checkpoint_result r;
	assert_int_equal(lv_checkpoint_result_init(&r, LV_CHECKPOINT_RESULT_VERSION), 0);
	assert_true(!r.report && !r.written && r.entries == 0);
}

static void test_version(void **state)
{
	(void)state;
	char want[32];
	snprintf(want, sizeof want, "%d.%d.%d", LV_VERSION_MAJOR, LV_VERSION_MINOR, LV_VERSION_PATCH);
	assert_string_equal(lv_version(), want);
	assert_string_equal(lv_version_string(), want);
	assert_string_equal(LV_VERSION_TEXT, want);
	assert_int_equal(lv_version_number(), LV_VERSION_NUMBER);
	assert_int_equal(LV_VERSION_NUMBER,
			 LV_VERSION_MAJOR * 10000 + LV_VERSION_MINOR * 100 + LV_VERSION_PATCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_descriptions_tile_their_structs),
		cmocka_unit_test(test_init_functions),
		cmocka_unit_test(test_version),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
