#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "support/arrowds.h"
#include "support/synth.h"
#include "support/testutil.h"

const ads_column ads_columns[LV_ARROW_VERSION_COLUMNS] = {
	{ "version", "L", false },
	{ "timestamp_millis", "tsm:UTC", false },
	{ "total_fragments", "L", false },
	{ "total_data_files", "L", false },
	{ "total_files_size", "L", false },
	{ "total_deletion_files", "L", false },
	{ "total_data_file_rows", "L", false },
	{ "total_deletion_file_rows", "L", false },
	{ "total_rows", "L", false },
	{ "is_tagged", "b", false },
	{ "is_cleaned_up", "b", false },
	{ "transaction_uuid", "u", true },
	{ "read_version", "L", true },
	{ "operation_type", "u", true },
	{ "transaction_properties", "u", false },
	{ "manifest_path", "u", true },
	{ "manifest_size", "L", true },
	{ "writer_library", "u", true },
	{ "writer_version", "u", true },
	{ "data_format", "u", true },
	{ "branch", "u", true },
	{ "num_indices", "L", true },
};

static void fail_if(int rc, const lv_error *err, const char *what)
{
	if (rc)
		fail_msg("%s: %d %s", what, rc, err->message);
}

lv_storage *ads_dataset(void)
{
	lv_error err = { 0 };
	lv_storage *st = NULL;
	fail_if(lv_storage_mem_new(&st, &err), &err, "mem");
	static char big[3001];
	memset(big, 'x', 3000);
	const char *p3[] = { "quote", "a\"b\\c", "city", "Z\xc3\xbcrich \xe2\x82\xac", NULL };
	const char *p7[] = { "big", big, NULL };
	for (uint64_t v = 1; v <= 15; v++) {
		if (v == 13) {
			lv_dataset *ds = NULL;
			fail_if(lv_dataset_open_storage(&ds, st, NULL, &err), &err, "open");
			lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
			p.before_version = 4;
			p.now_ms = 1800000000000LL;
			lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
			fail_if(synth_tag(st, "keep", 4), &err, "tag");
			fail_if(lv_cleanup(ds, &p, &s, &err), &err, "cleanup 1");
			lv_dataset_free(ds);
		}
		synth_commit c = { .version = v, .ts_ms = 1700000000000LL + 1000 * (int64_t)v - (v == 9 ? 5000 : 0),
				   .read_version = v - 1, .op_field = v % 3 == 0 ? 101 : v == 11 ? 106 : 100,
				   .props = v == 3 ? p3 : v == 7 ? p7 : NULL };
		fail_if(synth_write(st, &c), &err, "commit");
	}
	lv_dataset *ds = NULL;
	fail_if(lv_dataset_open_storage(&ds, st, NULL, &err), &err, "open");
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.before_version = 14;
	p.error_if_tagged_old_versions = false;
	lv_checkpoint_config off = LV_CHECKPOINT_CONFIG_INIT;
	off.enabled = 0;
	p.checkpoint = &off;
	p.now_ms = 1800000000000LL;
	lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
	fail_if(lv_cleanup(ds, &p, &s, &err), &err, "cleanup 2");
	lv_dataset_free(ds);
	return st;
}

ads_fixture ads_open(void)
{
	lv_error err = { 0 };
	ads_fixture f = { ads_dataset(), NULL, NULL };
	f.ds = tu_open(f.st);
	fail_if(lv_history(&f.l, f.ds, NULL, &err), &err, "history");
	return f;
}

void ads_close(ads_fixture *f)
{
	lv_version_list_free(f->l);
	lv_dataset_free(f->ds);
	lv_storage_free(f->st);
}

static ads_cell str(const char *s)
{
	return (ads_cell){ .null = s == NULL, .s = s };
}

ads_cell ads_expect(const lv_version_info *v, size_t col)
{
	bool m = v->has_manifest_details;
	bool listed = m || (!v->is_cleaned_up && v->manifest_path); /* arrow.h: from the listing */
	switch (col) {
	case 0: return (ads_cell){ .u = v->version };
	case 1: return (ads_cell){ .i = v->timestamp_millis };
	case 2: return (ads_cell){ .u = v->total_fragments };
	case 3: return (ads_cell){ .u = v->total_data_files };
	case 4: return (ads_cell){ .u = v->total_files_size };
	case 5: return (ads_cell){ .u = v->total_deletion_files };
	case 6: return (ads_cell){ .u = v->total_data_file_rows };
	case 7: return (ads_cell){ .u = v->total_deletion_file_rows };
	case 8: return (ads_cell){ .u = v->total_rows };
	case 9: return (ads_cell){ .b = v->is_tagged };
	case 10: return (ads_cell){ .b = v->is_cleaned_up };
	case 11: return str(v->transaction_uuid);
	case 12: return (ads_cell){ .null = !v->has_read_version, .u = v->read_version };
	case 13: return str(v->operation_type);
	case 14: return str(v->transaction_properties);
	case 15: return str(listed ? v->manifest_path : NULL);
	case 16: return (ads_cell){ .null = !(m || (listed && v->manifest_size)), .u = v->manifest_size };
	case 17: return str(m ? v->writer_library : NULL);
	case 18: return str(m ? v->writer_version : NULL);
	case 19: return str(m ? v->data_format : NULL);
	case 20: return str(m ? v->branch : NULL);
	default: return (ads_cell){ .null = !m, .u = v->num_indices };
	}
}

char *ads_metadata_get(const char *md, const char *key)
{
	if (!md)
		return NULL;
	int32_t n, kl, vl;
	memcpy(&n, md, 4);
	md += 4;
	for (int32_t i = 0; i < n; i++) {
		memcpy(&kl, md, 4);
		const char *k = md + 4;
		md = k + kl;
		memcpy(&vl, md, 4);
		const char *v = md + 4;
		md = v + vl;
		if ((size_t)kl == strlen(key) && !memcmp(k, key, (size_t)kl)) {
			char *out = malloc((size_t)vl + 1);
			memcpy(out, v, (size_t)vl);
			out[vl] = 0;
			return out;
		}
	}
	return NULL;
}
