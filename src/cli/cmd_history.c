/*
 * lancever history: every version ever recorded, streamed (lv_history_each), so a long
 * history is printed without being held: the table row by row with each gap marked in
 * place, --json as one array.  --limit N and --since V|TIME read only the segments that
 * can hold what is asked for.
 *
 * Invariant: with --json, stdout holds the whole array or nothing (a failure part-way
 * leaves nothing): the array is written to a temporary file and copied out at the end.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const lvcli_opt history_opts[] = {
	{ "--json", NULL, "print a JSON array of version records", LVCLI_FLAG, 0, 0, offsetof(lvcli_args, json) },
	LVCLI_OPT_FORMAT,
	{ "--limit", "N", "only the newest N recorded versions", LVCLI_NUMBER, 1, UINT32_MAX,
	  offsetof(lvcli_args, limit) },
	{ "--since", "V|TIME", "only versions from V on (a number), or committed at or after TIME "
	  "(ISO 8601, or @MILLISECONDS since the epoch)", LVCLI_STRING, 0, 0, offsetof(lvcli_args, since) },
	{ "--stats", NULL, "say on stderr where the answer came from, how many segments and manifests "
	  "were read and what it cost", LVCLI_FLAG, 0, 0, offsetof(lvcli_args, stats) },
	{ 0 },
};

typedef struct out {
	FILE *f;     /* the table (stdout), or the JSON array's temporary file */
	bool json;
	size_t n;
} out;

static int on_row(const lv_version_info *v, void *payload)
{
	out *o = payload;
	if (o->json) {
		fputs(o->n ? ",\n" : "", o->f);
		lvcli_print_version_json(o->f, v);
	} else {
		lvcli_print_table_row(o->f, v, true);
		if (ferror(o->f)) /* a reader that went away: stop reading the history, quietly */
			lvcli_check_pipe(lvcli_stdout_error());
	}
	o->n++;
	return 0;
}

static int on_gap(uint64_t first, uint64_t last, void *payload)
{
	out *o = payload;
	if (!o->json)
		lvcli_print_table_gap(o->f, first, last);
	return 0;
}

/* --since: a number is a version; otherwise a TIME (lv_parse_time).  0 or a usage error. */
static int parse_since(const char *s, lv_history_options *o)
{
	uint64_t v;
	if (lvcli_parse_u64_strict(s, UINT64_MAX, &v)) {
		o->since_version = v ? v : 1;
		return 0;
	}
	o->since_time = true;
	return lvcli_parse_time("--since", s, &o->since_ms);
}

/* --format csv|arrow: the versions asked for, as a list, through the format writers. */
static int emit_list(const lvcli_args *a, const lv_history_options *o, lv_dataset *ds)
{
	lv_error err = { 0 };
	lv_version_list *l = NULL;
	lv_history_report rep;
	lv_history_report_init(&rep, LV_HISTORY_REPORT_VERSION);
	int rc = lv_history_list(&l, ds, o, &rep, &err) < 0 ? lvcli_fail(&err) : lvcli_emit_list(a, l, "history");
	if (rc == 0 && a->stats)
		lvcli_print_report(&rep);
	lv_version_list_free(l);
	lvcli_close(ds);
	return rc;
}

/* Copies the JSON array from its temporary file to stdout. */
static void copy_out(FILE *tmp)
{
	char buf[65536];
	size_t n;
	rewind(tmp);
	while ((n = fread(buf, 1, sizeof buf, tmp)) > 0)
		fwrite(buf, 1, n, stdout);
}

static int run_history(int argc, char **argv)
{
	lvcli_args a;
	int rc = lvcli_parse(argc, argv, &lvcli_cmd_history, &a);
	if (rc)
		return rc;
	lv_history_options o;
	lv_history_options_init(&o, LV_HISTORY_OPTIONS_VERSION);
	o.limit = a.limit;
	if (a.since && (rc = parse_since(a.since, &o)))
		return rc;
	lv_dataset *ds = NULL;
	if (lvcli_open(&ds, a.pos[0], 0))
		return 1;
	if (lvcli_format_stream(&a)) /* csv, arrow: from a list (lv_history_list) */
		return emit_list(&a, &o, ds);
	out w = { a.json ? tmpfile() : stdout, a.json, 0 };
	if (!w.f) {
		lvcli_close(ds);
		fputs("lancever: cannot create a temporary file for --json\n", stderr);
		return 1;
	}
	if (a.json)
		fputc('[', w.f);
	else
		lvcli_print_table_header(stdout, true);
	lv_error err = { 0 };
	lv_history_report rep;
	lv_history_report_init(&rep, LV_HISTORY_REPORT_VERSION);
	if (lv_history_each(ds, &o, on_row, on_gap, &w, &rep, &err) < 0) {
		rc = lvcli_fail(&err);
	} else if (a.json) {
		fputs("]\n", w.f);
		if (ferror(w.f)) {
			fputs("lancever: error writing a temporary file for --json\n", stderr);
			rc = 1;
		} else {
			copy_out(w.f);
		}
	}
	if (rc == 0 && a.stats)
		lvcli_print_report(&rep);
	if (a.json)
		fclose(w.f);
	lvcli_close(ds);
	return rc;
}

const lvcli_cmd lvcli_cmd_history = {
	"history", "DATASET", "every version ever recorded; cleaned-up ones flagged",
	"Lists every version that a checkpoint, an archive segment or a manifest records, including "
	"versions whose manifests a cleanup removed (CLEANED_UP), oldest first, as it reads them: "
	"memory does not grow with the history. Ranges of versions that nothing readable records are "
	"marked in place and reported as warnings. --limit and --since read only the archive "
	"segments that can hold the versions asked for.",
	history_opts, run_history, true,
};
