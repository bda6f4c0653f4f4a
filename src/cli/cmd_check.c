/*
 * lancever check DATASET [--salvage] [--json]
 *   Verifies every checkpoint, every file kept aside, every archive segment, every manifest, tag and
 *   branch file, and the history they make up.  Exit 0 when nothing is wrong,
 *   1 when something is (each finding printed: the report is the answer), 2 on
 *   a usage error.  --salvage writes the rows damaged files still give back for
 *   versions no other record holds into a new checkpoint, and re-adopts a
 *   complete older history identity a newer head split off (nothing is deleted).
 */
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "cli.h"

static const char *kind_name(int kind)
{
	switch (kind) {
	case LV_CHECK_CHECKPOINT: return "checkpoint";
	case LV_CHECK_KEPT_ASIDE: return "kept-aside";
	case LV_CHECK_MANIFEST: return "manifest";
	case LV_CHECK_REF: return "ref";
	case LV_CHECK_SEGMENT: return "segment";
	default: return "gap";
	}
}

static void print_text(const lv_check *c)
{
	for (size_t i = 0; i < lv_check_count(c); i++) {
		const lv_check_item *it = lv_check_get(c, i);
		const char *state = it->kind == LV_CHECK_GAP || it->status == LV_ENOTFOUND ? "MISSING"
				    : it->status				      ? "REJECTED"
										      : "ok";
		printf("%-10s  %-8s  %s", kind_name(it->kind), state, it->path ? lvcli_esc(it->path) : "");
		if (it->kind == LV_CHECK_CHECKPOINT || it->kind == LV_CHECK_KEPT_ASIDE ||
		    it->kind == LV_CHECK_SEGMENT)
			printf("%s%" PRIu64 " rows", it->path ? "  " : "", it->rows);
		if (it->rows)
			printf(" (versions %" PRIu64 "-%" PRIu64 ")", it->first, it->last);
		if (it->salvageable)
			printf(", %" PRIu64 " salvageable", it->salvageable);
		if (it->message[0])
			printf("%s%s", it->path || it->rows ? ": " : "", lvcli_esc(it->message));
		printf("\n");
	}
	printf("%zu problem(s)", lv_check_problems(c));
	if (lv_check_salvaged(c))
		printf("; %" PRIu64 " row(s) salvaged into a new checkpoint", lv_check_salvaged(c));
	printf("\n");
}

static void print_json(const lv_check *c, lv_dataset *ds)
{
	printf("{\"problems\":%zu,\"salvaged\":%" PRIu64 ",\"items\":[", lv_check_problems(c),
	       lv_check_salvaged(c));
	for (size_t i = 0; i < lv_check_count(c); i++) {
		const lv_check_item *it = lv_check_get(c, i);
		printf("%s{\"kind\":\"%s\",\"path\":", i ? "," : "", kind_name(it->kind));
		lvcli_json_str(stdout, it->path);
		printf(",\"status\":\"%s\",\"rows\":%" PRIu64 ",\"first\":%" PRIu64 ",\"last\":%" PRIu64
		       ",\"salvageable\":%" PRIu64 ",\"message\":",
		       it->status ? lv_strerror(it->status) : "ok", it->rows, it->first, it->last,
		       it->salvageable);
		lvcli_json_str(stdout, it->message);
		/* a gap a capture noted: its reason token (removed-before-read, removed-unseen, other) */
		const char *reason = NULL;
		lv_error e = { 0 };
		if (it->kind == LV_CHECK_GAP && lv_capture_gap_reason(ds, it->first, it->last, &reason, NULL, &e) < 0)
			reason = NULL;
		fputs(",\"gap_reason\":", stdout);
		lvcli_json_str(stdout, reason);
		printf("}");
	}
	printf("]");
	lvcli_json_warnings(stdout, ds);
	printf("}\n");
}

static const lvcli_opt check_opts[] = {
	{ "--salvage", NULL, "write the rows damaged files still give back, for versions no other record "
	  "holds, into a new checkpoint, and re-adopt a complete older history identity that a newer "
	  "head split off (nothing is deleted)", LVCLI_FLAG, 0, 0, offsetof(lvcli_args, salvage) },
	{ "--json", NULL, "print a JSON object: problems, salvaged, items (kind, path, status, rows, first, "
	  "last, salvageable, message, gap_reason), warnings", LVCLI_FLAG, 0, 0, offsetof(lvcli_args, json) },
	{ 0 },
};

static int run_check(const lvcli_args *a, lv_dataset *ds)
{
	int rc = 0;
	lv_check_options o;
	lv_check_options_init(&o, LV_CHECK_OPTIONS_VERSION);
	o.salvage = a->salvage;
	lv_error err = { 0 };
	lv_check *c = NULL;
	lvcli_progress prog = { 0 };
	if (lvcli_progress_on()) { /* a terminal, or --progress=json (progress.c) */
		o.on_progress = lvcli_progress_cb;
		o.payload = &prog;
	}
	int run = lv_check_run(&c, ds, &o, &err);
	lvcli_progress_end(&prog);
	if (run < 0) {
		rc = lvcli_fail(&err);
	} else {
		if (a->json)
			print_json(c, ds);
		else
			print_text(c);
		rc = lv_check_problems(c) ? 1 : 0;
	}
	lv_check_free(c);
	return rc;
}

LVCLI_DATASET_CMD(check, NULL, run_check, "DATASET", "verify every history record; exit 1 if anything is wrong",
	"Verifies every checkpoint, every checkpoint kept aside as damaged, every archive segment "
	"(and names each one the head's index lists that is missing), every manifest, tag "
	"and branch file, and the history they make up, and reports each range of versions that "
	"no readable record holds, with the rows a damaged file could give back. Exits 1 when it "
	"finds a problem (after printing its report, also with --json).");
