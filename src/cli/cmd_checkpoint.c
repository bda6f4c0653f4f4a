/*
 * lancever checkpoint: writes _checkpoints/{latest:020}.lance (never a table version).
 */
#include <inttypes.h>
#include <stddef.h>

#include "cli.h"

static const lvcli_opt checkpoint_opts[] = {
	{ "--max-entries", "N", "the head checkpoint holds at most N versions (default 10000, or the "
	  "dataset's lance.version_checkpoint.max_entries); older ones go to the archive",
	  LVCLI_NUMBER, 1, INT64_MAX, offsetof(lvcli_args, max_entries) },
	{ "--max-files", "N", "keep at most N checkpoint files, pruning the oldest (default 2)",
	  LVCLI_NUMBER, 1, INT64_MAX, offsetof(lvcli_args, max_files) },
	{ "--disable", NULL, "act as if the dataset disabled checkpoints: write nothing and say so",
	  LVCLI_FLAG, 0, 0, offsetof(lvcli_args, disable) },
	LVCLI_OPT_NO_ARCHIVE,
	LVCLI_OPT_SEGMENT_ROWS,
	{ "--json", NULL, "print a JSON object: written, already_present, path, latest_version, entries, "
	  "new_entries, file_size, files_pruned, previous_checkpoint, checkpoints_rejected, "
	  "segments_written, segment_bytes, archived_through, recorded_versions, warnings",
	  LVCLI_FLAG, 0, 0, offsetof(lvcli_args, json) },
	{ "--stats", NULL, "say on stderr how the previous checkpoint was loaded and what it cost",
	  LVCLI_FLAG, 0, 0, offsetof(lvcli_args, stats) },
	{ 0 },
};

static void print_result(const lvcli_args *a, const lv_checkpoint_result *r, const lv_dataset *ds)
{
	if (a->json) {
		printf("{\"written\":%s,\"already_present\":%s,\"path\":", r->written ? "true" : "false",
		       r->already_present ? "true" : "false");
		lvcli_json_str(stdout, r->written ? r->path : NULL);
		printf(",\"latest_version\":%" PRIu64 ",\"entries\":%" PRIu64 ",\"new_entries\":%" PRIu64
		       ",\"file_size\":%" PRIu64 ",\"files_pruned\":%" PRIu64 ",\"previous_checkpoint\":%" PRIu64
		       ",\"checkpoints_rejected\":%" PRIu64,
		       r->latest_version, r->entries, r->new_entries, r->file_size, r->files_pruned,
		       r->report->checkpoint_version, r->report->checkpoints_rejected);
		printf(",\"segments_written\":%" PRIu64 ",\"segment_bytes\":%" PRIu64 ",\"archived_through\":%" PRIu64
		       ",\"recorded_versions\":%" PRIu64, r->segments_written, r->segment_bytes, r->archived_through,
		       r->recorded_versions);
		lvcli_json_warnings(stdout, ds);
		fputs("}\n", stdout);
	} else if (!r->written) {
		printf("checkpointing is disabled for this dataset; nothing written\n");
	} else {
		char sz[32]; /* "8.1 kB", or bytes with --bytes (width.c) */
		printf("%s %s: %" PRIu64 " versions (%" PRIu64 " new), %s; pruned %" PRIu64
		       " old checkpoint file(s)\n",
		       r->already_present ? "up to date" : "wrote", lvcli_esc(r->path), r->entries,
		       r->new_entries, lvcli_size_words(sz, sizeof sz, r->file_size), r->files_pruned);
		if (r->segments_written)
			printf("sealed %" PRIu64 " archive segment(s), %s\n", r->segments_written,
			       lvcli_size_words(sz, sizeof sz, r->segment_bytes));
		if (r->archived_through)
			printf("history: %" PRIu64 " versions recorded; versions up to %" PRIu64
			       " are in the archive (_checkpoints/archive/)\n", r->recorded_versions,
			       r->archived_through);
	}
}

static int run_checkpoint(const lvcli_args *a, lv_dataset *ds)
{
	int rc = 0;
	lv_checkpoint_config cfg;
	lv_checkpoint_config_init(&cfg, LV_CHECKPOINT_CONFIG_VERSION);
	if (a->disable)
		cfg.enabled = 0;
	lvcli_checkpoint_options(a, &cfg);
	lv_checkpoint_result r;
	lv_history_report rep;
	lv_checkpoint_result_init(&r, LV_CHECKPOINT_RESULT_VERSION);
	lv_history_report_init(&rep, LV_HISTORY_REPORT_VERSION);
	r.report = &rep;
	lv_error err = { 0 };
	lvcli_progress prog = { 0 };
	if (lvcli_progress_on()) { /* a terminal, or --progress=json (progress.c) */
		cfg.on_progress = lvcli_progress_cb;
		cfg.payload = &prog;
	}
	int wrote = lv_checkpoint_write(ds, &cfg, NULL, 0, &r, &err);
	lvcli_progress_end(&prog);
	if (wrote < 0) {
		rc = lvcli_fail(&err);
	} else {
		print_result(a, &r, ds);
		if (a->stats)
			lvcli_print_report(&rep);
	}
	return rc;
}

LVCLI_DATASET_CMD(checkpoint, NULL, run_checkpoint, "DATASET", "write a checkpoint (no cleanup, no new version)",
	"Records every version's metadata (the 15 columns of the Version Checkpointing proposal) "
	"in _checkpoints/{latest version:020}.lance, a Lance file, so that versions() answers "
	"from one small read and the history survives cleanup; ranges of older versions are sealed "
	"once into archive segments (_checkpoints/archive/{first:020}-{last:020}.lance), so a "
	"checkpoint writes only what changed. Nothing in _versions/ is touched. The same dataset "
	"state always gives the same bytes.");
