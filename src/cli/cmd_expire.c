/*
 * lancever expire: manifest-only expiry (lv_expire): old versions' manifests go, after a
 * checkpoint has recorded them; their data files are left for a later cleanup.
 *
 * Invariants: with --json nothing reaches stdout until the expiry has finished (a failure
 * prints no JSON); the list names only manifests this process removed.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const lvcli_opt expire_opts[] = {
	{ "--older-than", "DURATION", "expire versions committed before now - DURATION (14days, 36h, 1h 30min); "
	  "with no condition at all, 7d", LVCLI_DURATION, 0, 0, offsetof(lvcli_args, older_than_ms) },
	{ "--retain-versions", "N", "keep at least the newest N versions", LVCLI_NUMBER, 1, INT64_MAX,
	  offsetof(lvcli_args, retain_versions) },
	{ "--before-version", "V", "expire only versions below V (a number, a tag, latest~N: docs/cli.md, refs)",
	  LVCLI_STRING, 0, 0, offsetof(lvcli_args, before) },
	{ "--keep-one-per", "DURATION", "thinning: of the versions selected, keep the newest of each "
	  "window of this length by commit time (1h, 1d)", LVCLI_DURATION, 0, 0,
	  offsetof(lvcli_args, keep_one_per_ms) },
	{ "--no-error-if-tagged-old-versions", NULL, "keep tagged versions the policy selects instead of "
	  "refusing to run", LVCLI_FLAG_OFF, 0, 0, offsetof(lvcli_args, error_if_tagged) },
	{ "--error-if-tagged-old-versions", NULL, "refuse to run if the policy selects a tagged version "
	  "(the default)", LVCLI_FLAG, 0, 0, offsetof(lvcli_args, error_if_tagged) },
	{ "--max-entries", "N", "the head checkpoint written first holds at most N versions (default "
	  "10000); older history goes to archive segments", LVCLI_NUMBER, 1, INT64_MAX,
	  offsetof(lvcli_args, max_entries) },
	LVCLI_OPT_SEGMENT_ROWS,
	LVCLI_OPT_NO_ARCHIVE,
	{ "--delete-rate-limit", "N", "at most N deletes per second", LVCLI_NUMBER, 1, 1000000000,
	  offsetof(lvcli_args, delete_rate_limit) },
	{ "--dry-run", NULL, "list what would be expired; change nothing", LVCLI_FLAG, 0, 0,
	  offsetof(lvcli_args, dry_run) },
	{ "--list", NULL, "list every manifest removed", LVCLI_FLAG, 0, 0, offsetof(lvcli_args, list) },
	{ "--json", NULL, "print a JSON object: manifests (with --list or --dry-run), dry_run, versions_total, "
	  "versions_removed, versions_archived, checkpoint, warnings", LVCLI_FLAG, 0, 0,
	  offsetof(lvcli_args, json) },
	{ 0 },
};

typedef struct ex_out {
	bool dry_run, json, list;
	FILE *files; /* --json: the array, held back until the expiry succeeded */
	size_t nfiles;
	lvcli_progress progress;
} ex_out;

static void on_file(const char *path, int kind, uint64_t size, const char *reason, void *payload)
{
	(void)kind;
	(void)size;
	(void)reason;
	ex_out *o = payload;
	if (!o->list)
		return;
	if (o->json) {
		fputs(o->nfiles++ ? "," : "", o->files);
		lvcli_json_str(o->files, path);
		return;
	}
	uint64_t v;
	printf("%s %s", o->dry_run ? "would remove" : "removed", lvcli_esc(path));
	if (lv_manifest_path_version(path, &v))
		printf(" (version %" PRIu64 ")", v);
	fputc('\n', stdout);
}

static void on_progress(const char *phase, uint64_t done, uint64_t total, void *payload)
{
	lvcli_progress_draw(&((ex_out *)payload)->progress, phase, done, total);
}

static void print_result(const ex_out *o, const char *files, const lv_cleanup_stats *s,
			 const lv_dataset *ds)
{
	if (o->json) {
		printf("{\"manifests\":[%s],\"dry_run\":%s,\"versions_total\":%" PRIu64
		       ",\"versions_removed\":%" PRIu64 ",\"versions_archived\":%" PRIu64 ",\"checkpoint\":",
		       o->nfiles ? files : "", o->dry_run ? "true" : "false", s->versions_total,
		       s->versions_removed, s->versions_archived);
		lvcli_json_str(stdout, s->checkpoint_written ? s->checkpoint_path : NULL);
		printf(",\"failed_deletes\":%" PRIu64, s->failed_deletes);
		lvcli_json_warnings(stdout, ds);
		fputs("}\n", stdout);
		return;
	}
	printf("%s %" PRIu64 " of %" PRIu64 " versions", o->dry_run ? "would expire" : "expired",
	       s->versions_removed, s->versions_total);
	if (s->checkpoint_written)
		printf("; their history is kept in %s (%" PRIu64 " versions recorded)",
		       lvcli_esc(s->checkpoint_path), s->versions_archived);
	printf("\n%s", s->versions_removed && !o->dry_run
			       ? "their data files stay until a cleanup removes them (lancever cleanup)\n"
			       : "");
}

static int run_expire(int argc, char **argv)
{
	lvcli_args a;
	int rc = lvcli_parse(argc, argv, &lvcli_cmd_expire, &a);
	if (rc)
		return rc;
	if (a.keep_one_per_ms == 0)
		return lvcli_usage_error("--keep-one-per wants a window longer than 0");
	lvcli_ref before;
	if (a.before && (rc = lvcli_before_parse(a.before, &before)))
		return rc;
	lv_expire_policy p;
	lv_checkpoint_config cfg;
	lv_expire_policy_init(&p, LV_EXPIRE_POLICY_VERSION);
	lv_checkpoint_config_init(&cfg, LV_CHECKPOINT_CONFIG_VERSION);
	p.checkpoint = &cfg;
	p.older_than_ms = a.older_than_ms;
	p.retain_versions = a.retain_versions ? (int64_t)a.retain_versions : -1;
	p.keep_one_per_ms = a.keep_one_per_ms;
	p.error_if_tagged_old_versions = a.error_if_tagged;
	p.dry_run = a.dry_run;
	p.delete_rate_limit = (double)a.delete_rate_limit;
	lvcli_checkpoint_options(&a, &cfg);
	ex_out o = { .dry_run = a.dry_run, .json = a.json, .list = a.list || a.dry_run };
	char *files = NULL;
	size_t files_len = 0;
	if (o.json && o.list && !(o.files = open_memstream(&files, &files_len))) {
		fputs("lancever: out of memory\n", stderr);
		return 1;
	}
	p.on_file = on_file;
	p.payload = &o;
	if (lvcli_progress_on()) /* a terminal, or --progress=json (progress.c) */
		p.on_progress = on_progress;
	lv_dataset *ds = NULL;
	lv_error err = { 0 };
	lv_cleanup_stats s;
	lv_cleanup_stats_init(&s, LV_CLEANUP_STATS_VERSION);
	if (lvcli_open(&ds, a.pos[0], 0) ||
	    (a.before && lvcli_before_resolve(ds, a.pos[0], "expire", &before, &p.before_version))) {
		rc = 1;
	} else if ((rc = lv_expire(ds, &p, &s, &err)) < 0) {
		lvcli_progress_end(&o.progress); /* no half line before the error */
		rc = lvcli_fail(&err);
	} else {
		if (o.files)
			fclose(o.files);
		o.files = NULL;
		print_result(&o, files, &s, ds);
	}
	if (o.files)
		fclose(o.files);
	free(files);
	if (ds)
		lvcli_close(ds);
	return rc;
}

const lvcli_cmd lvcli_cmd_expire = {
	"expire", "DATASET", "remove old versions' manifests only (data files stay for cleanup)",
	"Removes the manifests of the versions the policy selects (as cleanup selects them: the "
	"latest version, tagged versions and branch bases are never removed), thinned with "
	"--keep-one-per, and nothing else. First a checkpoint records every version (reading only "
	"manifests no checkpoint covers yet: commit times come from the checkpoint and its archive), "
	"then marks the selected ones cleaned up; then their manifests go. Their data files are "
	"left for a later cleanup, which removes them by Lance's rule for files no manifest "
	"references: once older than 7 days, or at once with --delete-unverified.",
	expire_opts, run_expire, true,
};
