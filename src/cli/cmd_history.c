/* lancever history / checkpoint / asof / show / diff */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void print_list_json(const lv_version_list *l)
{
	fputc('[', stdout);
	for (size_t i = 0; i < lv_version_list_count(l); i++) {
		if (i)
			fputs(",\n", stdout);
		lvcli_print_version_json(stdout, lv_version_list_get(l, i));
	}
	fputs("]\n", stdout);
}

int lvcli_history(int argc, char **argv)
{
	lvcli_args a;
	int rc = lvcli_parse_args(argc, argv, &a, 1, "history DATASET [--json] [--stats]");
	if (rc)
		return rc;
	lv_error err = { 0 };
	lv_dataset *ds = NULL;
	lv_version_list *l = NULL;
	lv_history_report rep;
	if (lvcli_open_dataset(&ds, a.pos[0], 0, &err) < 0)
		return lvcli_fail(&err);
	if (lv_history(&l, ds, &rep, &err) < 0) {
		lvcli_close(ds);
		return lvcli_fail(&err);
	}
	if (a.json)
		print_list_json(l);
	else
		lvcli_print_table(stdout, l, true);
	if (a.stats)
		lvcli_print_report(&rep, l);
	lv_version_list_free(l);
	lvcli_close(ds);
	return 0;
}

int lvcli_checkpoint(int argc, char **argv)
{
	lvcli_args a;
	int rc = lvcli_parse_args(argc, argv, &a, 1,
			    "checkpoint DATASET [--max-entries N] [--max-files N] [--disable] [--json]");
	if (rc)
		return rc;
	lv_error err = { 0 };
	lv_dataset *ds = NULL;
	if (lvcli_open_dataset(&ds, a.pos[0], 0, &err) < 0)
		return lvcli_fail(&err);
	lv_checkpoint_config cfg = LV_CHECKPOINT_CONFIG_INIT;
	cfg.enabled = a.enabled;
	cfg.max_entries = a.max_entries;
	cfg.max_checkpoint_files = a.max_files;
	lv_checkpoint_result r;
	if (lv_checkpoint_write(ds, &cfg, NULL, 0, &r, &err) < 0) {
		lvcli_close(ds);
		return lvcli_fail(&err);
	}
	if (a.json) {
		printf("{\"written\":%s,\"already_present\":%s,\"path\":", r.written ? "true" : "false",
		       r.already_present ? "true" : "false");
		lvcli_json_str(stdout, r.written ? r.path : NULL);
		printf(",\"latest_version\":%" PRIu64 ",\"entries\":%" PRIu64 ",\"new_entries\":%" PRIu64
		       ",\"file_size\":%" PRIu64 ",\"files_pruned\":%" PRIu64 ",\"previous_checkpoint\":%" PRIu64
		       ",\"checkpoints_rejected\":%" PRIu64 "}\n",
		       r.latest_version, r.entries, r.new_entries, r.file_size, r.files_pruned,
		       r.report.checkpoint_version, r.report.checkpoints_rejected);
	} else if (!r.written) {
		printf("checkpointing is disabled for this dataset; nothing written\n");
	} else {
		printf("%s %s: %" PRIu64 " versions (%" PRIu64 " new), %" PRIu64 " bytes; pruned %" PRIu64
		       " old checkpoint file(s)\n",
		       r.already_present ? "up to date" : "wrote", r.path, r.entries, r.new_entries,
		       r.file_size, r.files_pruned);
	}
	if (r.report.checkpoints_rejected)
		fprintf(stderr, "lancever: %" PRIu64 " checkpoint file(s) unusable: %s\n",
			r.report.checkpoints_rejected, r.report.note);
	lvcli_close(ds);
	return 0;
}

int lvcli_asof(int argc, char **argv)
{
	lvcli_args a;
	int rc = lvcli_parse_args(argc, argv, &a, 2, "asof DATASET TIME [--strict] [--json]");
	if (rc)
		return rc;
	lv_error err = { 0 };
	int64_t ts;
	const char *when = a.pos[1];
	if (when[0] >= '0' && when[0] <= '9' && strspn(when, "0123456789") == strlen(when)) {
		/* milliseconds: digits only, at most INT64_MAX */
		uint64_t ms;
		if (lvcli_parse_number("asof: TIME (milliseconds)", when, 0, INT64_MAX, &ms))
			return 2;
		ts = (int64_t)ms;
	} else if (lv_parse_time(when, &ts, &err) < 0) {
		return lvcli_usage_error("asof: TIME wants milliseconds since the epoch or ISO 8601 "
					 "(2026-12-02T17:00:00Z), got '%s'", when);
	}
	lv_dataset *ds = NULL;
	lv_version_list *l = NULL;
	lv_history_report rep;
	if (lvcli_open_dataset(&ds, a.pos[0], 0, &err) < 0)
		return lvcli_fail(&err);
	rc = lv_version_as_of(&l, ds, ts, a.strict, &rep, &err);
	lvcli_close(ds);
	if (rc < 0)
		return lvcli_fail(&err);
	const lv_version_info *v = lv_version_list_get(l, 0);
	if (a.json) {
		printf("{\"query_millis\":%" PRId64 ",\"strict\":%s,\"checkout_possible\":%s,\"version\":", ts,
		       a.strict ? "true" : "false", v->is_cleaned_up ? "false" : "true");
		lvcli_print_version_json(stdout, v);
		fputs("}\n", stdout);
	} else {
		char t[40];
		lvcli_format_time(t, sizeof t, v->timestamp_millis);
		printf("version %" PRIu64 " (committed %s)%s\n", v->version, t,
		       v->is_cleaned_up ? ": cleaned up, history only, cannot be checked out" : "");
	}
	if (a.stats)
		lvcli_print_report(&rep, l);
	lv_version_list_free(l);
	return 0;
}

static int parse_version(const char *cmd, const char *what, const char *s, uint64_t *out)
{
	char name[64];
	snprintf(name, sizeof name, "%s: %s", cmd, what);
	return lvcli_parse_number(name, s, 0, UINT64_MAX, out);
}

/* Finds version v in a history list. */
static const lv_version_info *find(const lv_version_list *l, uint64_t v)
{
	for (size_t i = 0; i < lv_version_list_count(l); i++)
		if (lv_version_list_get(l, i)->version == v)
			return lv_version_list_get(l, i);
	return NULL;
}

int lvcli_show(int argc, char **argv)
{
	lvcli_args a;
	int rc = lvcli_parse_args(argc, argv, &a, 2, "show DATASET VERSION [--json]");
	if (rc)
		return rc;
	uint64_t ver = 0;
	if (parse_version("show", "VERSION", a.pos[1], &ver))
		return 2;
	lv_error err = { 0 };
	lv_dataset *ds = NULL;
	lv_version_list *l = NULL;
	const lv_version_info *v = NULL;
	if (lvcli_open_dataset(&ds, a.pos[0], 0, &err) < 0)
		return lvcli_fail(&err);
	/* From the manifest if it is live, else from the checkpoint history. */
	rc = lv_version_get(&l, ds, ver, &err);
	if (rc == 0) {
		v = lv_version_list_get(l, 0);
	} else if (rc == LV_ENOTFOUND) {
		rc = lv_history(&l, ds, NULL, &err);
		if (rc == 0 && !(v = find(l, ver))) {
			rc = LV_ENOTFOUND;
			snprintf(err.message, sizeof err.message,
				 "version %" PRIu64 " is neither live nor recorded in a checkpoint", ver);
			err.code = rc;
		}
	}
	lvcli_close(ds);
	if (rc < 0) {
		lv_version_list_free(l);
		return lvcli_fail(&err);
	}
	if (a.json) {
		lvcli_print_version_json(stdout, v);
		fputc('\n', stdout);
	} else {
		char t[40];
		lvcli_format_time(t, sizeof t, v->timestamp_millis);
		printf("version                  %" PRIu64 "\n", v->version);
		printf("timestamp                %s (%" PRId64 " ms)\n", t, v->timestamp_millis);
		printf("source                   %s\n", v->has_manifest_details ? v->manifest_path : "checkpoint");
		printf("cleaned up               %s\n", v->is_cleaned_up ? "yes" : "no");
		printf("tagged                   %s\n", v->is_tagged ? "yes" : "no");
		printf("operation                %s\n", v->operation_type ? v->operation_type : "-");
		if (v->has_read_version)
			printf("read version             %" PRIu64 "\n", v->read_version);
		printf("transaction uuid         %s\n", v->transaction_uuid ? v->transaction_uuid : "-");
		printf("transaction properties   %s\n", v->transaction_properties);
		printf("fragments                %" PRIu64 "\n", v->total_fragments);
		printf("data files               %" PRIu64 " (%" PRIu64 " bytes)\n", v->total_data_files,
		       v->total_files_size);
		printf("deletion files           %" PRIu64 " (%" PRIu64 " rows deleted)\n",
		       v->total_deletion_files, v->total_deletion_file_rows);
		printf("rows                     %" PRIu64 " (%" PRIu64 " in data files)\n", v->total_rows,
		       v->total_data_file_rows);
		if (v->has_manifest_details) {
			printf("manifest size            %" PRIu64 "\n", v->manifest_size);
			printf("writer                   %s %s\n", v->writer_library ? v->writer_library : "-",
			       v->writer_version ? v->writer_version : "-");
			printf("data format              %s\n", v->data_format ? v->data_format : "-");
			printf("indices                  %zu\n", v->num_indices);
			for (size_t i = 0; i < v->num_config; i++)
				printf("config                   %s = %s\n", v->config_keys[i], v->config_values[i]);
		}
	}
	lv_version_list_free(l);
	return 0;
}

int lvcli_diff(int argc, char **argv)
{
	lvcli_args a;
	int rc = lvcli_parse_args(argc, argv, &a, 3, "diff DATASET A B [--json]");
	if (rc)
		return rc;
	uint64_t va = 0, vb = 0;
	if (parse_version("diff", "A", a.pos[1], &va) || parse_version("diff", "B", a.pos[2], &vb))
		return 2;
	lv_error err = { 0 };
	lv_dataset *ds = NULL;
	lv_version_list *l = NULL;
	if (lvcli_open_dataset(&ds, a.pos[0], 0, &err) < 0)
		return lvcli_fail(&err);
	rc = lv_history(&l, ds, NULL, &err);
	lvcli_close(ds);
	if (rc < 0)
		return lvcli_fail(&err);
	const lv_version_info *x = find(l, va), *y = find(l, vb);
	if (!x || !y) {
		lv_version_list_free(l);
		snprintf(err.message, sizeof err.message, "version %" PRIu64 " not recorded", !x ? va : vb);
		err.code = LV_ENOTFOUND;
		return lvcli_fail(&err);
	}
	struct { const char *name; uint64_t a, b; } f[] = {
		{ "rows", x->total_rows, y->total_rows },
		{ "fragments", x->total_fragments, y->total_fragments },
		{ "data_files", x->total_data_files, y->total_data_files },
		{ "files_size", x->total_files_size, y->total_files_size },
		{ "deletion_files", x->total_deletion_files, y->total_deletion_files },
		{ "deleted_rows", x->total_deletion_file_rows, y->total_deletion_file_rows },
		{ "data_file_rows", x->total_data_file_rows, y->total_data_file_rows },
	};
	size_t nf = sizeof f / sizeof f[0];
	if (a.json) {
		printf("{\"from\":%" PRIu64 ",\"to\":%" PRIu64 ",\"ms_between\":%" PRId64, va, vb,
		       y->timestamp_millis - x->timestamp_millis);
		for (size_t i = 0; i < nf; i++)
			printf(",\"%s\":{\"from\":%" PRIu64 ",\"to\":%" PRIu64 ",\"delta\":%" PRId64 "}", f[i].name,
			       f[i].a, f[i].b, (int64_t)(f[i].b - f[i].a));
		fputs("}\n", stdout);
	} else {
		char ha[24], hb[24];
		snprintf(ha, sizeof ha, "v%" PRIu64, va);
		snprintf(hb, sizeof hb, "v%" PRIu64, vb);
		printf("%-16s %14s %14s %14s\n", "", ha, hb, "change");
		for (size_t i = 0; i < nf; i++)
			printf("%-16s %14" PRIu64 " %14" PRIu64 " %+14" PRId64 "\n", f[i].name, f[i].a, f[i].b,
			       (int64_t)(f[i].b - f[i].a));
		printf("(summaries only: rows added/removed are net changes between v%" PRIu64 " and v%" PRIu64 ")\n",
		       va, vb);
	}
	lv_version_list_free(l);
	return 0;
}
