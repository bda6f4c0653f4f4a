/*
 * lancever asof / show / diff: questions about one or two versions.  Each prints one
 * record (text or one JSON object with the dataset's warnings).
 */
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "cli.h"

#define OPT_JSON(what) { "--json", NULL, what, LVCLI_FLAG, 0, 0, offsetof(lvcli_args, json) }

static const lvcli_opt asof_opts[] = {
	{ "--strict", NULL, "committed strictly before TIME (what Python Lance's asof does); default: at or before",
	  LVCLI_FLAG, 0, 0, offsetof(lvcli_args, strict) },
	OPT_JSON("print a JSON object: query (TIME as given), query_millis, strict, checkout_possible, version (a record), warnings"),
	{ "--stats", NULL, "say on stderr where the answer came from and what it cost", LVCLI_FLAG, 0, 0,
	  offsetof(lvcli_args, stats) },
	{ 0 },
};
static const lvcli_opt show_opts[] = {
	OPT_JSON("print the version record as a JSON object, with warnings"), { 0 } };
static const lvcli_opt diff_opts[] = {
	OPT_JSON("print a JSON object: from, to, ms_between, each counter (total_rows, total_fragments, "
		 "...: the version records' names) with from/to/delta, warnings"), { 0 } };

static void print_asof(const lvcli_args *a, int64_t ts, const lv_version_info *v, lv_dataset *ds)
{
	if (a->json) {
		fputs("{\"query\":", stdout);
		lvcli_json_str(stdout, a->pos[1]);
		printf(",\"query_millis\":%" PRId64 ",\"strict\":%s,\"checkout_possible\":%s,\"version\":", ts,
		       a->strict ? "true" : "false", v->is_cleaned_up ? "false" : "true");
		lvcli_refctx tags;
		lvcli_refctx_init(&tags, ds, a->pos[0], "asof", false);
		lvcli_print_version_json(stdout, v, &tags);
		lvcli_refctx_free(&tags);
		lvcli_json_warnings(stdout, ds);
		fputs("}\n", stdout);
		return;
	}
	char t[40];
	lvcli_format_time(t, sizeof t, v->timestamp_millis);
	printf("version %" PRIu64 " (committed %s)%s\n", v->version, t,
	       v->is_cleaned_up ? ": cleaned up, history only, cannot be checked out" : "");
}

static int check_asof(lvcli_args *a)
{
	return lvcli_parse_time("asof: TIME", a->pos[1], &a->when_ms);
}

static int run_asof(const lvcli_args *a, lv_dataset *ds)
{
	int rc = 0;
	lv_error err = { 0 };
	lv_version_list *l = NULL;
	lv_history_report rep;
	lv_history_report_init(&rep, LV_HISTORY_REPORT_VERSION);
	if (lv_version_as_of(&l, ds, a->when_ms, a->strict, &rep, &err) == LV_ENOTFOUND &&
	    !strncmp(err.message, "no version committed", 20)) {
		/* the library says milliseconds; echo the time as the user wrote it */
		const char *rest = strstr(err.message, " ms");
		fprintf(stderr, "lancever: no version committed %s %s%s (LV_ENOTFOUND)\n",
			a->strict ? "before" : "at or before", lvcli_esc(a->pos[1]), rest ? rest + 3 : "");
		rc = 1;
	} else if (err.code < 0) {
		rc = lvcli_fail(&err);
	} else {
		print_asof(a, a->when_ms, lv_version_list_get(l, 0), ds);
		if (a->stats)
			lvcli_print_report(&rep);
	}
	lv_version_list_free(l);
	return rc;
}

/* The VERSION refs of show (one) and diff (two), checked before the dataset is opened. */
static lvcli_ref refs_given[2];

/* A failed call about a ref: the error, naming the ref as typed when it is not the number. */
static int fail_ref(const lvcli_ref *r, uint64_t v, const lv_error *err)
{
	char num[24];
	snprintf(num, sizeof num, "%" PRIu64, v);
	if (!strcmp(r->text, num))
		return lvcli_fail(err);
	fprintf(stderr, "lancever: '%s' (version %" PRIu64 "): %s (%s)\n", lvcli_esc(r->text), v,
		lvcli_esc(err->message), lv_strerror(err->code));
	return 1;
}

/* The names of the set bits of `flags`, comma-separated; a bit no Lance names is "bit N"
 * ("bit_N" and quoted in JSON). */
static void put_flag_names(uint64_t flags, bool json)
{
	for (unsigned b = 0, n = 0; b < 64; b++) {
		if (!(flags >> b & 1))
			continue;
		const char *name = lv_feature_flag_name(b);
		fputs(n++ ? (json ? "," : ", ") : "", stdout);
		if (name)
			printf(json ? "\"%s\"" : "%s", name);
		else
			printf(json ? "\"bit_%u\"" : "bit %u", b);
	}
}

/* "reader flags   258 (stable_row_ids, mixed_data_file_versions)" */
static void flags_text(const char *what, uint64_t flags)
{
	printf("%-24s %" PRIu64, what, flags);
	if (flags) {
		fputs(" (", stdout);
		put_flag_names(flags, false);
		fputc(')', stdout);
	}
	fputc('\n', stdout);
}

/* "reader":[names...] */
static void flags_json(const char *what, uint64_t flags)
{
	printf("\"%s\":[", what);
	put_flag_names(flags, true);
	fputc(']', stdout);
}

static void show_text(const lv_version_info *v, lvcli_refctx *tags)
{
	char names[256];
	lvcli_tags_text(names, sizeof names, tags, v);
	char t[40];
	lvcli_format_time(t, sizeof t, v->timestamp_millis);
	printf("version                  %" PRIu64 "\n", v->version);
	printf("timestamp                %s (%" PRId64 " ms)\n", t, v->timestamp_millis);
	printf("source                   %s\n", v->has_manifest_details ? lvcli_esc(v->manifest_path) : "checkpoint");
	printf("cleaned up               %s\n", v->is_cleaned_up ? "yes" : "no");
	printf("tags                     %s\n", names[0] ? names : v->is_tagged ? "(tagged)" : "-");
	printf("operation                %s\n", lvcli_esc(v->operation_type));
	if (v->has_read_version)
		printf("read version             %" PRIu64 "\n", v->read_version);
	printf("transaction uuid         %s\n", lvcli_esc(v->transaction_uuid));
	printf("transaction properties   %s\n", lvcli_esc(v->transaction_properties));
	printf("fragments                %" PRIu64 "\n", v->total_fragments);
	char sz[32]; /* "68.4 MB", or bytes with --bytes (width.c) */
	printf("data files               %" PRIu64 " (%s)\n", v->total_data_files,
	       lvcli_size_words(sz, sizeof sz, v->total_files_size));
	printf("deletion files           %" PRIu64 " (%" PRIu64 " rows deleted)\n",
	       v->total_deletion_files, v->total_deletion_file_rows);
	printf("rows                     %" PRIu64 " (%" PRIu64 " in data files)\n", v->total_rows,
	       v->total_data_file_rows);
	if (!v->has_manifest_details)
		return;
	printf("manifest size            %s\n", lvcli_size_words(sz, sizeof sz, v->manifest_size));
	printf("writer                   %s ", lvcli_esc(v->writer_library));
	printf("%s\n", lvcli_esc(v->writer_version));
	printf("data format              %s\n", lvcli_esc(v->data_format));
	printf("indices                  %zu\n", v->num_indices);
	flags_text("reader flags", v->reader_feature_flags);
	flags_text("writer flags", v->writer_feature_flags);
	for (size_t i = 0; i < v->num_config; i++)
		printf("config                   %s = %s\n", lvcli_esc(v->config_keys[i]),
		       lvcli_esc(v->config_values[i]));
}

static int check_show(lvcli_args *a)
{
	return lvcli_ref_parse("show: VERSION", a->pos[1], &refs_given[0]);
}

static int show(const lvcli_args *a, const lvcli_ref *r, uint64_t version, lvcli_refctx *c)
{
	lv_error err = { 0 };
	lv_version_list *l = NULL;
	if (lv_show(&l, c->ds, version, NULL, &err) < 0) {
		lv_version_list_free(l);
		return fail_ref(r, version, &err);
	}
	const lv_version_info *v = lv_version_list_get(l, 0);
	if (a->json) {
		fputc('{', stdout);
		lvcli_print_version_fields(stdout, v, c);
		/* the flags' names, null when the record did not come from a manifest */
		fputs(",\"feature_flags\":", stdout);
		if (v->has_manifest_details) {
			fputc('{', stdout);
			flags_json("reader", v->reader_feature_flags);
			fputc(',', stdout);
			flags_json("writer", v->writer_feature_flags);
			fputc('}', stdout);
		} else {
			fputs("null", stdout);
		}
		lvcli_json_warnings(stdout, c->ds);
		fputs("}\n", stdout);
	} else {
		show_text(v, c);
	}
	lv_version_list_free(l);
	return 0;
}

static int run_show(const lvcli_args *a, lv_dataset *opened)
{
	lvcli_refctx c; /* a ref on another branch opens it */
	lvcli_refctx_init(&c, opened, a->pos[0], "show", true);
	uint64_t v = 0;
	int rc = lvcli_ref_resolve(&c, &refs_given[0], &v);
	if (rc == 0)
		rc = show(a, &refs_given[0], v, &c);
	lvcli_refctx_free(&c);
	return rc;
}

/* At most this many counters (lv_diff_count: 7 today; later releases may append). */
#define NDIFF 16

static void print_diff(const lvcli_args *a, const lv_diff *d, const lv_dataset *ds)
{
	uint64_t va = lv_diff_from(d)->version, vb = lv_diff_to(d)->version;
	/* the counters under their one name (the checkpoint column's: lv_diff_counter), in the
	 * library's order, as the version records, Arrow, C and Python name them */
	const char *name[NDIFF];
	uint64_t from[NDIFF], to[NDIFF];
	int64_t delta[NDIFF];
	size_t n = lv_diff_count(d) < NDIFF ? lv_diff_count(d) : NDIFF;
	for (size_t i = 0; i < n; i++)
		lv_diff_counter(d, i, &name[i], &from[i], &to[i], &delta[i]);
	if (a->json) {
		printf("{\"from\":%" PRIu64 ",\"to\":%" PRIu64 ",\"ms_between\":%" PRId64, va, vb,
		       lv_diff_ms_between(d));
		for (size_t i = 0; i < n; i++)
			printf(",\"%s\":{\"from\":%" PRIu64 ",\"to\":%" PRIu64 ",\"delta\":%" PRId64 "}",
			       name[i], from[i], to[i], delta[i]);
		lvcli_json_warnings(stdout, ds);
		fputs("}\n", stdout);
		return;
	}
	char ha[24], hb[24];
	snprintf(ha, sizeof ha, "v%" PRIu64, va);
	snprintf(hb, sizeof hb, "v%" PRIu64, vb);
	printf("%-24s %14s %14s %14s\n", "", ha, hb, "change");
	for (size_t i = 0; i < n; i++)
		printf("%-24s %14" PRIu64 " %14" PRIu64 " %+14" PRId64 "\n", name[i], from[i], to[i],
		       delta[i]);
	printf("(summaries only: rows added/removed are net changes between %s and %s)\n", ha, hb);
}

/* Whether msg holds v as a whole number. */
static bool names_number(const char *msg, uint64_t v)
{
	char num[24];
	size_t n = (size_t)snprintf(num, sizeof num, "%" PRIu64, v);
	for (const char *p = msg; (p = strstr(p, num)); p++)
		if ((p == msg || p[-1] < '0' || p[-1] > '9') && (p[n] < '0' || p[n] > '9'))
			return true;
	return false;
}

static int check_diff(lvcli_args *a)
{
	int rc = lvcli_ref_parse("diff: A", a->pos[1], &refs_given[0]);
	return rc ? rc : lvcli_ref_parse("diff: B", a->pos[2], &refs_given[1]);
}

static int run_diff(const lvcli_args *a, lv_dataset *opened)
{
	/* A may open its branch; B must then be on the same one */
	lvcli_refctx c;
	lvcli_refctx_init(&c, opened, a->pos[0], "diff", true);
	uint64_t v[2] = { 0, 0 };
	int rc = lvcli_ref_resolve(&c, &refs_given[0], &v[0]);
	c.may_switch = false;
	if (rc == 0)
		rc = lvcli_ref_resolve(&c, &refs_given[1], &v[1]);
	lv_error err = { 0 };
	lv_diff *d = NULL;
	if (rc == 0 && lv_diff_versions(&d, c.ds, v[0], v[1], &err) < 0) {
		/* the library names the version it did not find (A checked first): which ref */
		bool b = !names_number(err.message, v[0]) && names_number(err.message, v[1]);
		rc = fail_ref(&refs_given[b ? 1 : 0], v[b ? 1 : 0], &err);
	} else if (rc == 0) {
		print_diff(a, d, c.ds);
	}
	lv_diff_free(d);
	lvcli_refctx_free(&c);
	return rc;
}

LVCLI_DATASET_CMD(asof, check_asof, run_asof, "DATASET TIME", "newest version committed at or before TIME",
	"TIME is any form of the time syntax (docs/cli.md, \"Time and duration\": ISO 8601 with "
	"or without a zone, no zone being UTC; @MILLISECONDS; '3 days ago'). The answer may be a cleaned-up version, which can no "
	"longer be checked out; the output says so. Commit times are not monotonic across "
	"writers, and the answer accounts for that.");

LVCLI_DATASET_CMD(show, check_show, run_show, "DATASET VERSION", "one version's full record",
	"Shows one version: from its manifest if it is live (with the writer, data format, "
	"indices and config), else from the checkpoint that records it. VERSION is a number, a "
	"tag, BRANCH:VERSION, latest or latest~N (a tag or BRANCH: on another branch shows that "
	"branch's version).");

LVCLI_DATASET_CMD(diff, check_diff, run_diff, "DATASET A B", "what changed between two versions",
	"Compares the summary counters (rows, fragments, files, bytes, deletions) of two recorded "
	"versions, live or cleaned up. These are net changes, not row-level differences. A and B "
	"are refs as show's VERSION (both on one branch).");
