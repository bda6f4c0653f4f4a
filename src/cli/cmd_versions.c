/*
 * lancever versions: the live versions (Lance's versions()).  --json prints an array of
 * version records (the shape of LanceDB's listVersions(): records.c); warnings go to
 * stderr.  (history: cmd_history.c.)
 */
#include <stddef.h>

#include "cli.h"

#define OPT_JSON { "--json", NULL, "print a JSON array of version records", LVCLI_FLAG, 0, 0, offsetof(lvcli_args, json) }
#define OPT_STATS { "--stats", NULL, "say on stderr where the answer came from (checkpoint or manifests) and what it cost", LVCLI_FLAG, 0, 0, offsetof(lvcli_args, stats) }

static const lvcli_opt versions_opts[] = {
	OPT_JSON,
	LVCLI_OPT_FORMAT,
	{ "--threads", "N", "manifests read at once, 1..256 (default 8; 32 on S3)", LVCLI_NUMBER, 1, 256,
	  offsetof(lvcli_args, threads) },
	OPT_STATS,
	{ 0 },
};

/* Runs lv_versions and prints its answer. */
static int list_command(int argc, char **argv, const lvcli_cmd *c, bool history)
{
	lvcli_args a;
	lv_dataset *ds = NULL;
	int rc = lvcli_start(argc, argv, c, &a, &ds);
	if (rc)
		return rc;
	lv_error err = { 0 };
	lv_version_list *l = NULL;
	lv_history_report rep;
	lv_history_report_init(&rep, LV_HISTORY_REPORT_VERSION);
	rc = lv_versions(&l, ds, &rep, &err);
	if (rc < 0) {
		rc = lvcli_fail(&err);
		lvcli_close(ds);
		return rc;
	}
	if (lvcli_format_stream(&a))
		rc = lvcli_emit_list(&a, l, history ? "history" : "versions");
	else if (a.json)
		lvcli_print_list_json(stdout, l);
	else
		lvcli_print_table(stdout, l, history);
	if (a.stats)
		lvcli_print_report(&rep);
	lv_version_list_free(l);
	lvcli_close(ds);
	return rc;
}

static int run_versions(int argc, char **argv)
{
	return list_command(argc, argv, &lvcli_cmd_versions, false);
}

const lvcli_cmd lvcli_cmd_versions = {
	"versions", "DATASET", "live versions (what Lance's versions() returns)",
	"Lists the versions whose manifests are in _versions/, with Lance's summary counters, "
	"from the newest usable checkpoint plus the manifests newer than it (or from every "
	"manifest when no checkpoint can be used).",
	versions_opts, run_versions, true,
};
