/*
 * lancever check DATASET [--salvage] [--json]
 *   Verifies every checkpoint, every file kept aside, every manifest, tag and
 *   branch file, and the history they make up.  Exit 0 when nothing is wrong,
 *   1 when something is (each finding printed), 2 on a usage error.
 *   --salvage writes the rows damaged files still give back for versions no
 *   other record holds into a new checkpoint (nothing is deleted).
 */
#include <inttypes.h>
#include <string.h>

#include "cli.h"

static const char *kind_name(int kind)
{
	switch (kind) {
	case LV_CHECK_CHECKPOINT: return "checkpoint";
	case LV_CHECK_KEPT_ASIDE: return "kept-aside";
	case LV_CHECK_MANIFEST: return "manifest";
	case LV_CHECK_REF: return "ref";
	default: return "gap";
	}
}

static void print_text(const lv_check *c)
{
	for (size_t i = 0; i < lv_check_count(c); i++) {
		const lv_check_item *it = lv_check_get(c, i);
		const char *state = it->kind == LV_CHECK_GAP ? "MISSING" : it->status ? "REJECTED" : "ok";
		printf("%-10s  %-8s  %s", kind_name(it->kind), state, it->path ? it->path : "");
		if (it->kind == LV_CHECK_CHECKPOINT || it->kind == LV_CHECK_KEPT_ASIDE)
			printf("%s%" PRIu64 " rows", it->path ? "  " : "", it->rows);
		if (it->rows)
			printf(" (versions %" PRIu64 "-%" PRIu64 ")", it->first, it->last);
		if (it->salvageable)
			printf(", %" PRIu64 " salvageable", it->salvageable);
		if (it->message[0])
			printf("%s%s", it->path || it->rows ? ": " : "", it->message);
		printf("\n");
	}
	printf("%zu problem(s)", lv_check_problems(c));
	if (lv_check_salvaged(c))
		printf("; %" PRIu64 " row(s) salvaged into a new checkpoint", lv_check_salvaged(c));
	printf("\n");
}

static void print_json(const lv_check *c)
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
		printf("}");
	}
	printf("]}\n");
}

int lvcli_check(int argc, char **argv)
{
	const char *uri = NULL;
	bool json = false;
	lv_check_options o = LV_CHECK_OPTIONS_INIT;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--salvage"))
			o.salvage = true;
		else if (argv[i][0] == '-' && argv[i][1])
			return lvcli_usage_error("check: unknown option '%s'\nusage: lancever %s", argv[i],
						 "check DATASET [--salvage] [--json]");
		else if (!uri)
			uri = argv[i];
		else
			return lvcli_usage_error("check: too many arguments");
	}
	if (!uri)
		return lvcli_usage_error("usage: lancever check DATASET [--salvage] [--json]");
	lv_error err = { 0 };
	lv_dataset *ds = NULL;
	lv_check *c = NULL;
	if (lvcli_open_dataset(&ds, uri, 0, &err) < 0)
		return lvcli_fail(&err);
	if (lv_check_run(&c, ds, &o, &err) < 0) {
		lvcli_close(ds);
		return lvcli_fail(&err);
	}
	if (json)
		print_json(c);
	else
		print_text(c);
	int rc = lv_check_problems(c) ? 1 : 0;
	lv_check_free(c);
	lvcli_close(ds);
	return rc;
}
