/*
 * --format json|table|csv|arrow (versions, history, tags, cleanup): the dispatch of csv
 * and arrow to their writers (format_csv.c, format_arrow.c), which read the library's
 * Arrow C stream export.  The option's value and its rules are parsed with the other
 * options (args.c).
 *
 * versions and history add a tags column to a version list (format_tags.c).
 *
 * Invariants: json and table are the commands' own printers (--format json is --json);
 * --json with another --format, and arrow to a terminal, are usage errors found before the
 * dataset is opened; a write error is reported once, in main()'s words.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

bool lvcli_format_stream(const lvcli_args *a)
{
	return a->format == LVCLI_FMT_CSV || a->format == LVCLI_FMT_ARROW;
}

const lv_arrow_options *lvcli_arrow_options_rows(size_t batch_rows)
{
	static lv_arrow_options o;
	lv_arrow_options_init(&o, LV_ARROW_OPTIONS_VERSION);
	uint64_t n = 0;
	const char *e = getenv("LANCEVER_ARROW_BATCH_ROWS");
	o.batch_rows = e && lvcli_parse_u64_strict(e, 1u << 30, &n) ? (size_t)n : batch_rows;
	return &o;
}

const lv_arrow_options *lvcli_arrow_options(void)
{
	return lvcli_arrow_options_rows(0);
}

int lvcli_emit_stream(const lvcli_args *a, struct ArrowArrayStream *s)
{
	return lvcli_emit_stream_tags(a, s, NULL);
}

int lvcli_emit_stream_tags(const lvcli_args *a, struct ArrowArrayStream *s, lvcli_refctx *tags)
{
	lv_error err = { 0 };
	struct ArrowArrayStream t;
	if (lvcli_tags_stream(&t, s, tags, &err) < 0) /* a version list's tag names, one more column */
		return lvcli_fail(&err);
	int rc = a->format == LVCLI_FMT_ARROW ? lvcli_write_arrow(&t, stdout, &err)
					      : lvcli_write_csv(&t, stdout, &err);
	if (rc < 0 && ferror(stdout)) {
		lvcli_check_pipe(lvcli_stdout_error()); /* a reader that went away: quietly */
		fprintf(stderr, "lancever: %s\n", err.message);
		return 1;
	}
	return rc < 0 ? lvcli_fail(&err) : 0;
}

int lvcli_emit_list(const lvcli_args *a, const lv_version_list *l, const char *kind,
		    lvcli_refctx *tags)
{
	lv_error err = { 0 };
	struct ArrowArrayStream s;
	if (lv_version_list_arrow_stream(&s, l, kind, lvcli_arrow_options(), &err) < 0)
		return lvcli_fail(&err);
	return lvcli_emit_stream_tags(a, &s, tags);
}
