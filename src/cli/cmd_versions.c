/*
 * lancever versions: the live versions (Lance's versions()), selected and ordered by the list
 * options (select.c).  --json prints an array of version records (a superset of LanceDB's
 * listVersions(): records.c); warnings go to stderr.  (history: cmd_history.c.)
 */
#include <stddef.h>

#include "cli.h"

#define OPT_JSON { "--json", NULL, "print a JSON array of version records", LVCLI_FLAG, 0, 0, offsetof(lvcli_args, json) }
#define OPT_STATS { "--stats", NULL, "say on stderr where the answer came from (checkpoint or manifests) and what it cost", LVCLI_FLAG, 0, 0, offsetof(lvcli_args, stats) }

static const lvcli_opt versions_opts[] = {
	OPT_JSON,
	LVCLI_OPT_FORMAT,
	LVCLI_OPT_LIST("versions"),
	{ "--threads", "N", "manifests read at once, 1..256 (default 8; 32 on S3)", LVCLI_NUMBER, 1, 256,
	  offsetof(lvcli_args, threads) },
	OPT_STATS,
	{ 0 },
};

/* --format csv|arrow export a list sorted by version: no --reverse there. */
static int check_stream(const lvcli_args *a)
{
	if (lvcli_format_stream(a) && a->reverse)
		return lvcli_usage_error("versions: --format csv|arrow exports in version order: "
					 "--reverse is for the table and --json");
	return 0;
}

static int run_versions(int argc, char **argv)
{
	lvcli_args a;
	lvcli_select sel;
	lv_dataset *ds = NULL;
	int rc = lvcli_parse(argc, argv, &lvcli_cmd_versions, &a);
	if (rc || (rc = check_stream(&a)) || (rc = lvcli_select_parse(&a, &sel)) ||
	    (rc = lvcli_open(&ds, a.pos[0], (int)a.threads)))
		return rc;
	lvcli_refctx refs;
	lvcli_refctx_init(&refs, ds, a.pos[0], "versions", false);
	lv_error err = { 0 };
	lv_version_list *l = NULL;
	lv_history_report rep;
	lv_history_report_init(&rep, LV_HISTORY_REPORT_VERSION);
	if ((rc = lvcli_select_resolve(&sel, &refs)) == 0) {
		/* no steps from the library: phase and time after 500 ms (progress.c), cleared
		 * before anything is printed */
		lvcli_ticker_start("reading versions");
		int got = lv_versions(&l, ds, &rep, &err);
		lvcli_ticker_stop();
		if (got < 0)
			rc = lvcli_fail(&err);
	}
	if (rc == 0) {
		lvcli_refctx_borrow(&refs, l); /* tag names: the refs versions() read */
		if (lvcli_format_stream(&a))
			rc = lvcli_select_emit(&a, l, &sel, "versions", &refs);
		else
			rc = lvcli_select_print(stdout, l, &sel, a.json, false, &refs);
		if (a.stats) {
			lvcli_refctx_report(&refs, &rep);
			lvcli_print_report(&rep);
		}
	}
	lv_version_list_free(l);
	lvcli_refctx_free(&refs);
	lvcli_close(ds);
	return rc;
}

const lvcli_cmd lvcli_cmd_versions = {
	"versions", "DATASET", "live versions (what Lance's versions() returns)",
	"Lists the versions whose manifests are in _versions/, with Lance's summary counters and "
	"tag names, oldest first (--reverse: newest first), from the newest usable checkpoint plus "
	"the manifests newer than it (or from every manifest when no checkpoint can be used). "
	"--json records are a superset of LanceDB's listVersions() (version, timestamp, metadata).",
	versions_opts, run_versions, true,
};
