/* lancever versions / tags */
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "cli.h"

static void print_u64_or_null(FILE *f, bool has, uint64_t v)
{
	if (has)
		fprintf(f, "%llu", (unsigned long long)v);
	else
		fputs("null", f);
}

void lvcli_print_version_json(FILE *f, const lv_version_info *v)
{
	fprintf(f,
		"{\"version\":%llu,\"timestamp_millis\":%lld,\"total_fragments\":%llu,"
		"\"total_data_files\":%llu,\"total_files_size\":%llu,\"total_deletion_files\":%llu,"
		"\"total_data_file_rows\":%llu,\"total_deletion_file_rows\":%llu,\"total_rows\":%llu,"
		"\"is_tagged\":%s,\"is_cleaned_up\":%s,\"transaction_uuid\":",
		(unsigned long long)v->version, (long long)v->timestamp_millis,
		(unsigned long long)v->total_fragments, (unsigned long long)v->total_data_files,
		(unsigned long long)v->total_files_size, (unsigned long long)v->total_deletion_files,
		(unsigned long long)v->total_data_file_rows,
		(unsigned long long)v->total_deletion_file_rows, (unsigned long long)v->total_rows,
		v->is_tagged ? "true" : "false", v->is_cleaned_up ? "true" : "false");
	lvcli_json_str(f, v->transaction_uuid);
	fputs(",\"read_version\":", f);
	print_u64_or_null(f, v->has_read_version, v->read_version);
	fputs(",\"operation_type\":", f);
	lvcli_json_str(f, v->operation_type);
	/* transaction_properties is a JSON object produced by the library */
	fprintf(f, ",\"transaction_properties\":%s", v->transaction_properties);
	if (v->has_manifest_details) {
		fputs(",\"manifest_path\":", f);
		lvcli_json_str(f, v->manifest_path);
		fprintf(f, ",\"manifest_size\":%llu,\"writer_library\":",
			(unsigned long long)v->manifest_size);
		lvcli_json_str(f, v->writer_library);
		fputs(",\"writer_version\":", f);
		lvcli_json_str(f, v->writer_version);
		fputs(",\"data_format\":", f);
		lvcli_json_str(f, v->data_format);
		fputs(",\"transaction_file\":", f);
		lvcli_json_str(f, v->transaction_file);
		fputs(",\"branch\":", f);
		lvcli_json_str(f, v->branch);
		fprintf(f, ",\"num_indices\":%zu,\"reader_feature_flags\":%llu,\"writer_feature_flags\":%llu",
			v->num_indices, (unsigned long long)v->reader_feature_flags,
			(unsigned long long)v->writer_feature_flags);
		fputs(",\"config\":{", f);
		for (size_t i = 0; i < v->num_config; i++) {
			if (i)
				fputc(',', f);
			lvcli_json_str(f, v->config_keys[i]);
			fputc(':', f);
			lvcli_json_str(f, v->config_values[i]);
		}
		fputc('}', f);
	}
	fputc('}', f);
}

void lvcli_format_time(char *buf, size_t cap, int64_t ms)
{
	/* floor division: -1 ms is 1969-12-31T23:59:59.999Z */
	int64_t sec = ms / 1000, frac = ms % 1000;
	if (frac < 0) {
		sec--;
		frac += 1000;
	}
	time_t s = (time_t)sec;
	struct tm tm;
	size_t n = 0;
	/* A corrupt manifest can hold any time: beyond what gmtime represents, print the number. */
	if (gmtime_r(&s, &tm) == NULL || (n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm)) == 0) {
		snprintf(buf, cap, "%lld ms", (long long)ms);
		return;
	}
	snprintf(buf + n, cap - n, ".%03dZ", (int)frac);
}

void lvcli_print_table(FILE *f, const lv_version_list *l, bool show_cleaned)
{
	fprintf(f, "%8s  %-24s  %-16s  %8s  %9s  %6s  %-6s%s\n", "VERSION", "TIMESTAMP (UTC)",
		"OPERATION", "READ_VER", "ROWS", "FRAGS", "TAGGED", show_cleaned ? "  CLEANED_UP" : "");
	size_t g = 0, ngaps = lv_version_list_gap_count(l);
	uint64_t gf = 0, gl = 0;
	for (size_t i = 0; i < lv_version_list_count(l); i++) {
		const lv_version_info *v = lv_version_list_get(l, i);
		/* History marks each range it cannot account for, in place. */
		while (g < ngaps && lv_version_list_gap(l, g, &gf, &gl) && gf < v->version) {
			char range[48];
			snprintf(range, sizeof range, gf == gl ? "%llu" : "%llu-%llu", (unsigned long long)gf,
				 (unsigned long long)gl);
			fprintf(f, "%8s  (no record of %s: see the warning on stderr)\n", range,
				gf == gl ? "this version" : "these versions");
			g++;
		}
		char ts[40], rv[24];
		lvcli_format_time(ts, sizeof ts, v->timestamp_millis);
		if (v->has_read_version)
			snprintf(rv, sizeof rv, "%llu", (unsigned long long)v->read_version);
		else
			snprintf(rv, sizeof rv, "-");
		fprintf(f, "%8llu  %-24s  %-16s  %8s  %9llu  %6llu  %-6s%s\n",
			(unsigned long long)v->version, ts, v->operation_type ? v->operation_type : "-",
			rv, (unsigned long long)v->total_rows, (unsigned long long)v->total_fragments,
			v->is_tagged ? "yes" : "", show_cleaned && v->is_cleaned_up ? "  yes" : "");
	}
}

void lvcli_print_report(const lv_history_report *r, const lv_version_list *l)
{
	static const char *rungs[] = { "manifests", "newest checkpoint", "older checkpoint" };
	fflush(stdout);
	fprintf(stderr,
		"lancever: answered from %s; manifests read %llu, vanished %llu, checkpoints rejected %llu, "
		"identity check read %llu bytes, requests %llu, bytes read %llu%s%s\n",
		r->rung >= 0 && r->rung <= 2 ? rungs[r->rung] : "?",
		(unsigned long long)r->manifests_read, (unsigned long long)r->manifests_vanished,
		(unsigned long long)r->checkpoints_rejected, (unsigned long long)r->identity_bytes,
		(unsigned long long)r->requests, (unsigned long long)r->bytes_read,
		r->note[0] ? "; " : "", r->note);
	for (size_t i = 0; i < lv_version_list_vanished_count(l); i++)
		fprintf(stderr, "lancever: skipped %s (vanished during listing)\n",
			lv_version_list_vanished(l, i));
}

const char *lvcli_branch; /* set by a global --branch option */
const char *lvcli_s3_endpoint, *lvcli_s3_region;
bool lvcli_s3_allow_http;

int lvcli_open_dataset(lv_dataset **ds, const char *uri, int threads, lv_error *err)
{
	lv_open_options o = LV_OPEN_OPTIONS_INIT;
	o.threads = threads;
	o.branch = lvcli_branch;
	o.storage.s3_endpoint = lvcli_s3_endpoint;
	o.storage.s3_region = lvcli_s3_region;
	o.storage.s3_allow_http = lvcli_s3_allow_http;
	return lv_dataset_open(ds, uri, &o, err);
}

void lvcli_close(lv_dataset *ds)
{
	for (size_t i = 0; ds && !lvcli_quiet && i < lv_dataset_warning_count(ds); i++)
		fprintf(stderr, "lancever: warning: %s\n", lv_dataset_warning(ds, i)->message);
	lv_dataset_free(ds);
}

int lvcli_versions(int argc, char **argv)
{
	const char *uri = NULL;
	bool json = false, stats = false;
	int threads = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--stats"))
			stats = true;
		else if (!strcmp(argv[i], "--threads")) {
			uint64_t t;
			if (i + 1 >= argc)
				return lvcli_missing_value(argv[i]);
			if (lvcli_parse_number("--threads", argv[++i], 1, 256, &t))
				return 2;
			threads = (int)t;
		} else if (argv[i][0] == '-' && argv[i][1])
			return lvcli_usage_error("versions: unknown option '%s'", argv[i]);
		else if (!uri)
			uri = argv[i];
		else
			return lvcli_usage_error("versions: more than one DATASET");
	}
	if (!uri)
		return lvcli_usage_error("usage: lancever versions DATASET [--json] [--threads N] [--stats]");
	lv_error err = { 0 };
	lv_dataset *ds = NULL;
	lv_version_list *l = NULL;
	lv_history_report rep;
	if (lvcli_open_dataset(&ds, uri, threads, &err) < 0)
		return lvcli_fail(&err);
	if (lv_versions(&l, ds, &rep, &err) < 0) {
		lvcli_close(ds);
		return lvcli_fail(&err);
	}
	if (json) {
		fputc('[', stdout);
		for (size_t i = 0; i < lv_version_list_count(l); i++) {
			if (i)
				fputs(",\n", stdout);
			lvcli_print_version_json(stdout, lv_version_list_get(l, i));
		}
		fputs("]\n", stdout);
	} else {
		lvcli_print_table(stdout, l, false);
	}
	if (stats || lv_version_list_vanished_count(l))
		lvcli_print_report(&rep, l);
	lv_version_list_free(l);
	lvcli_close(ds);
	return 0;
}

int lvcli_tags(int argc, char **argv)
{
	lvcli_args a;
	int prc = lvcli_parse_args(argc, argv, &a, 1, "tags DATASET [--json]");
	if (prc)
		return prc;
	const char *uri = a.pos[0];
	bool json = a.json;
	lv_error err = { 0 };
	lv_dataset *ds = NULL;
	lv_refs *r = NULL;
	if (lvcli_open_dataset(&ds, uri, 0, &err) < 0)
		return lvcli_fail(&err);
	if (lv_refs_load(&r, ds, &err) < 0) {
		lvcli_close(ds);
		return lvcli_fail(&err);
	}
	size_t nt = lv_refs_tag_count(r), nb = lv_refs_branch_count(r);
	if (json) {
		fputs("{\"tags\":[", stdout);
		for (size_t i = 0; i < nt; i++) {
			const lv_tag *t = lv_refs_tag(r, i);
			fputs(i ? ",{\"name\":" : "{\"name\":", stdout);
			lvcli_json_str(stdout, t->name);
			printf(",\"version\":%llu,\"branch\":", (unsigned long long)t->version);
			lvcli_json_str(stdout, t->branch);
			printf(",\"manifest_size\":%llu,\"created_at\":", (unsigned long long)t->manifest_size);
			lvcli_json_str(stdout, t->created_at);
			fputs("}", stdout);
		}
		fputs("],\"branches\":[", stdout);
		for (size_t i = 0; i < nb; i++) {
			const lv_branch *b = lv_refs_branch(r, i);
			fputs(i ? ",{\"name\":" : "{\"name\":", stdout);
			lvcli_json_str(stdout, b->name);
			fputs(",\"parent_branch\":", stdout);
			lvcli_json_str(stdout, b->parent_branch);
			printf(",\"parent_version\":%llu,\"create_at\":%lld}",
			       (unsigned long long)b->parent_version, (long long)b->create_at);
		}
		fputs("]}\n", stdout);
	} else {
		printf("%-24s %8s  %s\n", "TAG", "VERSION", "BRANCH");
		for (size_t i = 0; i < nt; i++) {
			const lv_tag *t = lv_refs_tag(r, i);
			printf("%-24s %8llu  %s\n", t->name, (unsigned long long)t->version,
			       t->branch ? t->branch : "main");
		}
		if (nb) {
			printf("\n%-24s %8s  %s\n", "BRANCH", "FROM", "PARENT");
			for (size_t i = 0; i < nb; i++) {
				const lv_branch *b = lv_refs_branch(r, i);
				printf("%-24s %8llu  %s\n", b->name, (unsigned long long)b->parent_version,
				       b->parent_branch ? b->parent_branch : "main");
			}
		}
	}
	lv_refs_free(r);
	lvcli_close(ds);
	return 0;
}
