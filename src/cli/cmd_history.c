/*
 * lancever history: every version ever recorded, streamed (lv_history_each), so a long
 * history is printed without being held: the table row by row with each gap marked in
 * place, --json as one array, --format csv|arrow a batch at a time (a history cursor under
 * the library's Arrow stream).  --limit N and --since V|TIME read only the segments that
 * can hold what is asked for; --until and --reverse hold the answer (a list).
 *
 * Invariants: with --json, stdout holds the whole array or nothing (a failure part-way
 * leaves nothing): the array is written to a temporary file and copied out at the end.
 * csv and arrow go straight out, like the table: a failure part-way stops them where they
 * are (the Arrow stream then lacks its end-of-stream marker), with the error on stderr
 * and exit status 1.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const lvcli_opt history_opts[] = {
	{ "--json", NULL, "print a JSON array of version records", LVCLI_FLAG, 0, 0, offsetof(lvcli_args, json) },
	LVCLI_OPT_FORMAT,
	LVCLI_OPT_LIST("recorded versions"),
	{ "--stats", NULL, "say on stderr where the answer came from, how many segments and manifests "
	  "were read and what it cost", LVCLI_FLAG, 0, 0, offsetof(lvcli_args, stats) },
	{ 0 },
};

typedef struct out {
	FILE *f;     /* the table (stdout), or the JSON array's temporary file */
	bool json;
	size_t n;
	lvcli_refctx *tags;
} out;

static int on_row(const lv_version_info *v, void *payload)
{
	out *o = payload;
	if (o->json) {
		fputs(o->n ? ",\n" : "", o->f);
		lvcli_print_version_json(o->f, v, o->tags);
	} else {
		lvcli_print_table_row(o->f, v, true, o->tags);
		if (ferror(o->f)) /* a reader that went away: stop reading the history, quietly */
			lvcli_check_pipe(lvcli_stdout_error());
	}
	o->n++;
	lvcli_ticker_count(o->n);
	return 0;
}

static int on_gap(uint64_t first, uint64_t last, void *payload)
{
	out *o = payload;
	if (!o->json)
		lvcli_print_table_gap(o->f, first, last, o->tags ? o->tags->ds : NULL);
	return 0;
}

/* The library's options from the selection: --since (a version or a time) and, unless
 * --until cuts the list first, --limit. */
static void history_options(const lvcli_select *sel, lv_history_options *o)
{
	lv_history_options_init(o, LV_HISTORY_OPTIONS_VERSION);
	if (sel->since.given && sel->since.is_time) {
		o->since_time = true;
		o->since_ms = sel->since.ms;
	} else if (sel->since.given) {
		o->since_version = sel->since.version ? sel->since.version : 1;
	}
	o->limit = sel->until.given ? 0 : sel->limit;
}

/* --format arrow: the library's stream over a history cursor, which reads the history as
 * the writer consumes it: memory is bounded by a batch (8,192 rows) and a segment, not by the
 * history (the list path below held 615 MB at 1,000,000 versions). */
static int emit_stream(const lvcli_args *a, const lv_history_options *o, lv_dataset *ds,
		       lvcli_refctx *tags)
{
	lv_error err = { 0 };
	lv_history_cursor *c = NULL;
	struct ArrowArrayStream s;
	lv_history_report rep;
	lv_history_report_init(&rep, LV_HISTORY_REPORT_VERSION);
	if (lv_history_cursor_open(&c, ds, o, &err) < 0 ||
	    lv_history_cursor_arrow_stream(&s, c, lvcli_arrow_options_rows(LVCLI_STREAM_BATCH_ROWS),
					   &rep, &err) < 0)
		return lvcli_fail(&err);
	int rc = lvcli_emit_stream_tags(a, &s, tags);
	if (rc == 0 && a->stats) {
		lvcli_refctx_report(tags, &rep);
		lvcli_print_report(&rep);
	}
	return rc;
}

static int emit_list(const lvcli_args *a, const lvcli_select *sel, const lv_history_options *o,
		     lv_dataset *ds, lvcli_refctx *tags);

/* One chunk of the cursor as CSV lines (the header with the first); the exit status. */
static int csv_chunk(const lv_version_list *l, bool header, lvcli_refctx *tags)
{
	lv_error err = { 0 };
	struct ArrowArrayStream s, t;
	if (lv_version_list_arrow_stream(&s, l, "history", NULL, &err) < 0 ||
	    lvcli_tags_stream(&t, &s, tags, &err) < 0)
		return lvcli_fail(&err);
	if (lvcli_write_csv_part(&t, stdout, header, &err) == 0)
		return 0;
	if (ferror(stdout)) {
		lvcli_check_pipe(lvcli_stdout_error()); /* a reader that went away: quietly */
		fprintf(stderr, "lancever: %s\n", err.message);
		return 1;
	}
	return lvcli_fail(&err);
}

/* --format csv: the cursor's chunks written as they come.  CSV has no place for the gaps, so
 * the archive is read once (no gap scan, unlike arrow); an empty answer (nothing selected)
 * still gets its header, from the list of nothing. */
static int emit_csv(const lvcli_args *a, const lvcli_select *sel, const lv_history_options *o,
		    lv_dataset *ds, lvcli_refctx *tags)
{
	lv_error err = { 0 };
	lv_history_cursor *c = NULL;
	lv_history_report rep;
	lv_history_report_init(&rep, LV_HISTORY_REPORT_VERSION);
	if (lv_history_cursor_open(&c, ds, o, &err) < 0)
		return lvcli_fail(&err);
	int rc = 0;
	size_t chunks = 0;
	for (;;) {
		lv_version_list *l = NULL;
		if (lv_history_cursor_next(c, 4096, &l, &rep, &err) < 0) { /* a segment's rows */
			rc = lvcli_fail(&err);
			break;
		}
		if (!l)
			break;
		if (lv_version_list_count(l))
			rc = csv_chunk(l, chunks++ == 0, tags);
		lv_version_list_free(l);
		if (rc)
			break;
	}
	lv_history_cursor_free(c);
	if (rc == 0 && chunks == 0)
		return emit_list(a, sel, o, ds, tags); /* nothing: the header alone */
	if (rc == 0 && a->stats) {
		lvcli_refctx_report(tags, &rep);
		lvcli_print_report(&rep);
	}
	return rc;
}

/* --reverse, --until (and csv|arrow with --until): the versions asked for, as a list (memory grows with
 * the answer), through the format writers or the selection's printer. */
static int emit_list(const lvcli_args *a, const lvcli_select *sel, const lv_history_options *o,
		     lv_dataset *ds, lvcli_refctx *tags)
{
	lv_error err = { 0 };
	lv_version_list *l = NULL;
	lv_history_report rep;
	lv_history_report_init(&rep, LV_HISTORY_REPORT_VERSION);
	int rc = lv_history_list(&l, ds, o, &rep, &err) < 0 ? lvcli_fail(&err)
	       : lvcli_format_stream(a)			 ? lvcli_select_emit(a, l, sel, "history", tags)
								 : lvcli_select_print(stdout, l, sel, a->json, true, tags);
	if (rc == 0 && a->stats) {
		lvcli_refctx_report(tags, &rep);
		lvcli_print_report(&rep);
	}
	lv_version_list_free(l);
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

/* The stream: the table row by row, or the JSON array through a temporary file. */
static int stream(const lvcli_args *a, const lv_history_options *o, lv_dataset *ds, lvcli_refctx *tags)
{
	out w = { a->json ? tmpfile() : stdout, a->json, 0, tags };
	if (!w.f) {
		fputs("lancever: cannot create a temporary file for --json\n", stderr);
		return 1;
	}
	if (a->json)
		fputc('[', w.f);
	else
		lvcli_print_table_header(stdout, true);
	int rc = 0;
	lv_error err = { 0 };
	lv_history_report rep;
	lv_history_report_init(&rep, LV_HISTORY_REPORT_VERSION);
	/* progress on stderr while the rows go to a file or a pipe (on a terminal, they are it) */
	if (!lvcli_stdout_tty())
		lvcli_ticker_start("reading history");
	int each = lv_history_each(ds, o, on_row, on_gap, &w, &rep, &err);
	lvcli_ticker_stop();
	if (each < 0) {
		rc = lvcli_fail(&err);
	} else if (a->json) {
		fputs("]\n", w.f);
		if (ferror(w.f)) {
			fputs("lancever: error writing a temporary file for --json\n", stderr);
			rc = 1;
		} else {
			copy_out(w.f);
		}
	}
	if (rc == 0 && a->stats) {
		lvcli_refctx_report(tags, &rep);
		lvcli_print_report(&rep);
	}
	if (a->json)
		fclose(w.f);
	return rc;
}

static int run_history(int argc, char **argv)
{
	lvcli_args a;
	lvcli_select sel;
	int rc = lvcli_parse(argc, argv, &lvcli_cmd_history, &a);
	if (rc || (rc = lvcli_select_parse(&a, &sel)))
		return rc;
	if (a.format == LVCLI_FMT_HTML && (a.reverse || (a.until && a.limit)))
		return lvcli_usage_error("history: --format html draws in version order, with --since, "
					 "--until or --limit (not --until with --limit, nor --reverse)");
	if (lvcli_format_stream(&a) && a.reverse)
		return lvcli_usage_error("history: --format csv|arrow exports in version order: "
					 "--reverse is for the table and --json");
	lv_dataset *ds = NULL;
	if (lvcli_open(&ds, a.pos[0], 0))
		return 1;
	lvcli_refctx refs;
	lvcli_refctx_init(&refs, ds, a.pos[0], "history", false);
	lv_history_options o;
	if ((rc = lvcli_select_resolve(&sel, &refs)) == 0) {
		history_options(&sel, &o);
		if (a.format == LVCLI_FMT_HTML) /* a page with a timeline, streamed (format_html.c) */
			rc = lvcli_history_html(stdout, ds, a.pos[0], &o, sel.until.given ? &sel : NULL, &refs);
		else if (a.format == LVCLI_FMT_CSV && !a.until)
			rc = emit_csv(&a, &sel, &o, ds, &refs);
		else if (a.format == LVCLI_FMT_ARROW && !a.until)
			rc = emit_stream(&a, &o, ds, &refs);
		else if (lvcli_format_stream(&a) || a.reverse || a.until)
			rc = emit_list(&a, &sel, &o, ds, &refs);
		else
			rc = stream(&a, &o, ds, &refs);
	}
	lvcli_refctx_free(&refs);
	lvcli_close(ds);
	return rc;
}

const lvcli_cmd lvcli_cmd_history = {
	"history", "DATASET", "every version ever recorded; cleaned-up ones flagged",
	"Lists every version that a checkpoint, an archive segment or a manifest records, including "
	"versions whose manifests a cleanup removed (CLEANED_UP), with their tag names, oldest "
	"first, as it reads them: memory does not grow with the history, in every format (--format "
	"csv|arrow a batch of 8,192 rows at a time; --reverse, newest first, and --until hold the "
	"answer in memory). Ranges of versions that nothing readable records "
	"are marked in place and reported as warnings. --limit and --since read only the archive "
	"segments that can hold the versions asked for.",
	history_opts, run_history, true,
};
