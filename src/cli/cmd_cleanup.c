/* lancever cleanup / info */
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

typedef struct cl_out {
	bool dry_run, json, list;
	int nfiles;
} cl_out;

static void on_file(const char *path, int kind, uint64_t size, const char *reason, void *payload)
{
	cl_out *o = payload;
	if (!o->list)
		return;
	if (o->json) {
		fputs(o->nfiles++ ? ",\n{\"path\":" : "{\"path\":", stdout);
		lvcli_json_str(stdout, path);
		printf(",\"kind\":\"%s\",\"size\":%" PRIu64 ",\"reason\":", lv_file_kind_name(kind), size);
		lvcli_json_str(stdout, reason);
		fputc('}', stdout);
	} else {
		printf("%s %-11s %10" PRIu64 "  %s  (%s)\n", o->dry_run ? "would remove" : "removed",
		       lv_file_kind_name(kind), size, path, reason);
	}
}

static void on_progress(const char *phase, uint64_t done, uint64_t total, void *payload)
{
	(void)payload;
	if (total)
		fprintf(stderr, "\r\033[K%s %" PRIu64 "/%" PRIu64, phase, done, total);
	else
		fprintf(stderr, "\r\033[K%s", phase);
	if (!strcmp(phase, "done"))
		fputs("\r\033[K", stderr);
}

int lvcli_cleanup(int argc, char **argv)
{
	const char *uri = NULL;
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	cl_out o = { 0 };
	lv_error err = { 0 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool takes_value = !strcmp(a, "--older-than") || !strcmp(a, "--retain-versions") ||
				   !strcmp(a, "--max-entries") || !strcmp(a, "--max-files") ||
				   !strcmp(a, "--before-version");
		if (takes_value && !v)
			return lvcli_missing_value(a);
		if (!strcmp(a, "--older-than")) {
			if (lv_parse_duration(v, &p.older_than_ms, &err) < 0)
				return lvcli_usage_error("--older-than wants a duration such as 7d, 36h, 90m or "
							 "1d12h, got '%s'", v);
			i++;
		} else if (!strcmp(a, "--retain-versions")) {
			if (lvcli_parse_i64_pos(a, v, &p.retain_versions))
				return 2;
			i++;
		} else if (!strcmp(a, "--max-entries")) {
			if (lvcli_parse_i64_pos(a, v, &p.checkpoint.max_entries))
				return 2;
			i++;
		} else if (!strcmp(a, "--max-files")) {
			if (lvcli_parse_i64_pos(a, v, &p.checkpoint.max_checkpoint_files))
				return 2;
			i++;
		} else if (!strcmp(a, "--no-checkpoint")) {
			p.checkpoint.enabled = 0;
		} else if (!strcmp(a, "--before-version")) {
			/* 1.. : 0 would mean "unset" to lv_cleanup */
			if (lvcli_parse_number(a, v, 1, UINT64_MAX, &p.before_version))
				return 2;
			i++;
		} else if (!strcmp(a, "--delete-unverified")) {
			p.delete_unverified = true;
		} else if (!strcmp(a, "--error-if-tagged-old-versions")) {
			p.error_if_tagged_old_versions = true;
		} else if (!strcmp(a, "--no-error-if-tagged-old-versions")) {
			p.error_if_tagged_old_versions = false;
		} else if (!strcmp(a, "--dry-run")) {
			p.dry_run = true;
		} else if (!strcmp(a, "--json")) {
			o.json = true;
		} else if (!strcmp(a, "--list")) {
			o.list = true;
		} else if (a[0] == '-') {
			return lvcli_usage_error("cleanup: unknown option '%s'", a);
		} else if (!uri) {
			uri = a;
		} else {
			return lvcli_usage_error("cleanup: more than one DATASET");
		}
	}
	if (!uri)
		return lvcli_usage_error(
			"usage: lancever cleanup DATASET [--older-than 7d] [--retain-versions N] "
			"[--before-version V] [--delete-unverified] [--no-error-if-tagged-old-versions] "
			"[--max-entries N] [--max-files N] [--no-checkpoint] [--dry-run] [--list] [--json]");
	o.dry_run = p.dry_run;
	if (p.dry_run)
		o.list = true; /* a dry run is for seeing what would go */
	p.on_file = on_file;
	p.payload = &o;
	if (isatty(2))
		p.on_progress = on_progress;
	lv_dataset *ds = NULL;
	if (lvcli_open_dataset(&ds, uri, 0, &err) < 0)
		return lvcli_fail(&err);
	if (o.json)
		fputs("{\"files\":[", stdout);
	lv_cleanup_stats s;
	int rc = lv_cleanup(ds, &p, &s, &err);
	lvcli_close(ds);
	if (rc < 0) {
		if (o.json)
			fputs("]}\n", stdout);
		fflush(stdout);
		return lvcli_fail(&err);
	}
	uint64_t files = 0, bytes = 0;
	for (int k = 0; k < LV_KIND_COUNT; k++) {
		files += s.files_removed[k];
		bytes += s.bytes_removed[k];
	}
	if (o.json) {
		printf("],\"dry_run\":%s,\"versions_total\":%" PRIu64 ",\"versions_removed\":%" PRIu64
		       ",\"versions_archived\":%" PRIu64 ",\"checkpoint\":",
		       p.dry_run ? "true" : "false", s.versions_total, s.versions_removed,
		       s.versions_archived);
		lvcli_json_str(stdout, s.checkpoint_written ? s.checkpoint_path : NULL);
		printf(",\"files_removed\":%" PRIu64 ",\"bytes_removed\":%" PRIu64 ",\"by_kind\":{", files, bytes);
		for (int k = 0; k < LV_KIND_COUNT; k++)
			printf("%s\"%s\":{\"files\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", k ? "," : "",
			       lv_file_kind_name(k), s.files_removed[k], s.bytes_removed[k]);
		fputs("}}\n", stdout);
		return 0;
	}
	printf("%s %" PRIu64 " of %" PRIu64 " versions; history of %" PRIu64 " versions kept in %s\n",
	       p.dry_run ? "would remove" : "removed", s.versions_removed, s.versions_total,
	       s.versions_archived, s.checkpoint_written ? s.checkpoint_path : "(no checkpoint written)");
	printf("%-12s %8s %14s\n", "kind", "files", "bytes");
	for (int k = 0; k < LV_KIND_COUNT; k++)
		printf("%-12s %8" PRIu64 " %14" PRIu64 "\n", lv_file_kind_name(k), s.files_removed[k],
		       s.bytes_removed[k]);
	printf("%-12s %8" PRIu64 " %14" PRIu64 "\n", "total", files, bytes);
	return 0;
}

int lvcli_info(int argc, char **argv)
{
	lvcli_args a;
	int prc = lvcli_parse_args(argc, argv, &a, 1, "info DATASET [--json]");
	if (prc)
		return prc;
	const char *uri = a.pos[0];
	bool json = a.json;
	lv_error err = { 0 };
	lv_dataset *ds = NULL;
	lv_version_list *l = NULL;
	lv_history_report rep;
	if (lvcli_open_dataset(&ds, uri, 0, &err) < 0)
		return lvcli_fail(&err);
	lv_checkpoint_config cfg;
	int rc = lv_versions(&l, ds, &rep, &err);
	if (rc == 0)
		rc = lv_checkpoint_config_resolve(&cfg, ds, NULL, &err);
	lv_version_list *latest = NULL;
	size_t n = rc == 0 ? lv_version_list_count(l) : 0;
	if (rc == 0)
		rc = lv_version_get(&latest, ds, lv_version_list_get(l, n - 1)->version, &err);
	lvcli_close(ds);
	if (rc < 0) {
		lv_version_list_free(l);
		return lvcli_fail(&err);
	}
	const lv_version_info *v = lv_version_list_get(latest, 0);
	if (json) {
		printf("{\"latest_version\":%" PRIu64 ",\"live_versions\":%zu,\"oldest_live_version\":%" PRIu64
		       ",\"rows\":%" PRIu64 ",\"writer_version\":",
		       v->version, n, lv_version_list_get(l, 0)->version, v->total_rows);
		lvcli_json_str(stdout, v->writer_version);
		fputs(",\"data_format\":", stdout);
		lvcli_json_str(stdout, v->data_format);
		printf(",\"checkpoint\":{\"enabled\":%s,\"max_entries\":%lld,\"max_checkpoint_files\":%lld,"
		       "\"latest_checkpoint_version\":%" PRIu64 "},\"auto_cleanup\":{",
		       cfg.enabled ? "true" : "false", (long long)cfg.max_entries,
		       (long long)cfg.max_checkpoint_files, rep.checkpoint_version);
		int k = 0;
		for (size_t i = 0; i < v->num_config; i++)
			if (!strncmp(v->config_keys[i], "lance.auto_cleanup.", 19)) {
				fputs(k++ ? "," : "", stdout);
				lvcli_json_str(stdout, v->config_keys[i] + 19);
				fputc(':', stdout);
				lvcli_json_str(stdout, v->config_values[i]);
			}
		fputs("}}\n", stdout);
	} else {
		printf("latest version        %" PRIu64 " (%" PRIu64 " rows, %" PRIu64 " fragments)\n",
		       v->version, v->total_rows, v->total_fragments);
		printf("live versions         %zu (oldest %" PRIu64 ")\n", n, lv_version_list_get(l, 0)->version);
		printf("writer / data format  %s %s / %s\n", v->writer_library ? v->writer_library : "-",
		       v->writer_version ? v->writer_version : "-", v->data_format ? v->data_format : "-");
		printf("checkpoints           %s, max_entries %lld, max_checkpoint_files %lld, newest covers %" PRIu64 "\n",
		       cfg.enabled ? "enabled" : "disabled", (long long)cfg.max_entries,
		       (long long)cfg.max_checkpoint_files, rep.checkpoint_version);
		int k = 0;
		for (size_t i = 0; i < v->num_config; i++)
			if (!strncmp(v->config_keys[i], "lance.auto_cleanup.", 19)) {
				printf("auto cleanup          %s = %s\n", v->config_keys[i] + 19, v->config_values[i]);
				k++;
			}
		if (!k)
			printf("auto cleanup          (no lance.auto_cleanup.* keys: Lance's automatic cleanup is off)\n");
	}
	lv_version_list_free(latest);
	lv_version_list_free(l);
	return 0;
}
