/*
 * lancever cleanup: removes old versions by Lance's rules, after a checkpoint has recorded
 * their history.
 *
 * Invariants: the file list and the summary count only what this process removed (the
 * library reports a file once it is gone, not when it is queued); with --json nothing
 * reaches stdout until the cleanup has finished, so a failed cleanup prints no JSON; the
 * progress line (stderr, terminals only) is redrawn at most PROGRESS_HZ times a second.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define PROGRESS_HZ 4

static const lvcli_opt cleanup_opts[] = {
	{ "--older-than", "DURATION", "remove versions committed before now - DURATION (7d, 36h, 90m, "
	  "1d12h); with no condition at all, 7d", LVCLI_DURATION, 0, 0, offsetof(lvcli_args, older_than_ms) },
	{ "--retain-versions", "N", "keep at least the newest N versions", LVCLI_NUMBER, 1, INT64_MAX,
	  offsetof(lvcli_args, retain_versions) },
	{ "--before-version", "V", "remove only versions below V", LVCLI_NUMBER, 1, UINT64_MAX,
	  offsetof(lvcli_args, before_version) },
	{ "--delete-unverified", NULL, "also remove unreferenced files younger than 7 days (only when no "
	  "writer is committing)", LVCLI_FLAG, 0, 0, offsetof(lvcli_args, delete_unverified) },
	{ "--no-error-if-tagged-old-versions", NULL, "keep tagged versions the policy selects instead of "
	  "refusing to run", LVCLI_FLAG_OFF, 0, 0, offsetof(lvcli_args, error_if_tagged) },
	{ "--error-if-tagged-old-versions", NULL, "refuse to run if the policy selects a tagged version "
	  "(the default, as in Lance)", LVCLI_FLAG, 0, 0, offsetof(lvcli_args, error_if_tagged) },
	{ "--max-entries", "N", "the head checkpoint written first holds at most N versions (default "
	  "10000); older history goes to archive segments", LVCLI_NUMBER, 1, INT64_MAX,
	  offsetof(lvcli_args, max_entries) },
	{ "--max-files", "N", "keep at most N checkpoint files (default 2)", LVCLI_NUMBER, 1, INT64_MAX,
	  offsetof(lvcli_args, max_files) },
	{ "--no-archive", NULL, "history beyond --max-entries is dropped instead of sealed into archive "
	  "segments (the proposal's behaviour)", LVCLI_FLAG, 0, 0, offsetof(lvcli_args, no_archive) },
	{ "--segment-rows", "N", "versions per archive segment (default 4096, at most --max-entries)",
	  LVCLI_NUMBER, 1, INT64_MAX, offsetof(lvcli_args, segment_rows) },
	{ "--no-checkpoint", NULL, "write no checkpoint first: the removed versions' history is lost",
	  LVCLI_FLAG, 0, 0, offsetof(lvcli_args, no_checkpoint) },
	{ "--delete-rate-limit", "N", "at most N deletes per second", LVCLI_NUMBER, 1, 1000000000,
	  offsetof(lvcli_args, delete_rate_limit) },
	{ "--dry-run", NULL, "list what would be removed and why; change nothing", LVCLI_FLAG, 0, 0,
	  offsetof(lvcli_args, dry_run) },
	{ "--list", NULL, "list every file removed", LVCLI_FLAG, 0, 0, offsetof(lvcli_args, list) },
	{ "--json", NULL, "print a JSON object: files (with --list or --dry-run), dry_run, versions_total, "
	  "versions_removed, versions_archived, checkpoint, files_removed, bytes_removed, by_kind, warnings",
	  LVCLI_FLAG, 0, 0, offsetof(lvcli_args, json) },
	{ "--stats", NULL, "say on stderr how many manifests were read and the requests and bytes it cost",
	  LVCLI_FLAG, 0, 0, offsetof(lvcli_args, stats) },
	LVCLI_OPT_FORMAT,
	{ 0 },
};

typedef struct cl_out {
	bool dry_run, json, list;
	FILE *files; /* --json: the "files" array, held back until the cleanup succeeded */
	size_t nfiles;
	char phase[64];
	int64_t last_ms;
	bool collect;           /* --format csv|arrow: every file kept for the Arrow export */
	lv_cleanup_file *kept;
	size_t nkept, cap;
	bool oom;
} cl_out;

/* Keeps a copy of one file for --format csv|arrow. */
static void collect(cl_out *o, const char *path, int kind, uint64_t size, const char *reason)
{
	if (o->nkept == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 64;
		lv_cleanup_file *f = realloc(o->kept, cap * sizeof *f);
		if (!f) {
			o->oom = true;
			return;
		}
		o->kept = f;
		o->cap = cap;
	}
	lv_cleanup_file f = { strdup(path), kind, size, reason ? strdup(reason) : NULL };
	if (!f.path || (reason && !f.reason)) {
		free((char *)f.path);
		free((char *)f.reason);
		o->oom = true;
		return;
	}
	o->kept[o->nkept++] = f;
}

static void free_kept(cl_out *o)
{
	for (size_t i = 0; i < o->nkept; i++) {
		free((char *)o->kept[i].path);
		free((char *)o->kept[i].reason);
	}
	free(o->kept);
}

/* --format csv|arrow: the files as rows, the totals in the Arrow schema metadata. */
static int emit_files(const lvcli_args *a, const cl_out *o, const lv_cleanup_stats *s)
{
	lv_error err = { 0 };
	struct ArrowArrayStream st;
	if (o->oom) {
		fputs("lancever: out of memory listing the files\n", stderr);
		return 1;
	}
	if (lv_cleanup_files_arrow_stream(&st, o->kept, o->nkept, s, o->dry_run, lvcli_arrow_options(),
					  &err) < 0)
		return lvcli_fail(&err);
	return lvcli_emit_stream(a, &st);
}

static void on_file(const char *path, int kind, uint64_t size, const char *reason, void *payload)
{
	cl_out *o = payload;
	if (o->collect) {
		collect(o, path, kind, size, reason);
		return;
	}
	if (!o->list)
		return;
	if (o->json) {
		fputs(o->nfiles++ ? ",\n{\"path\":" : "{\"path\":", o->files);
		lvcli_json_str(o->files, path);
		fprintf(o->files, ",\"kind\":\"%s\",\"size\":%" PRIu64 ",\"reason\":", lv_file_kind_name(kind), size);
		lvcli_json_str(o->files, reason);
		fputc('}', o->files);
		return;
	}
	printf("%s %-11s %10" PRIu64 "  %s", o->dry_run ? "would remove" : "removed",
	       lv_file_kind_name(kind), size, lvcli_esc(path));
	printf("  (%s)\n", lvcli_esc(reason));
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The progress line: a new phase and a phase's last step are always drawn, the steps
 * between at most PROGRESS_HZ times a second. */
static void on_progress(const char *phase, uint64_t done, uint64_t total, void *payload)
{
	cl_out *o = payload;
	int64_t t = now_ms();
	bool same = !strncmp(o->phase, phase, sizeof o->phase - 1);
	if (same && done != total && t - o->last_ms < 1000 / PROGRESS_HZ)
		return;
	snprintf(o->phase, sizeof o->phase, "%s", phase);
	o->last_ms = t;
	if (!strcmp(phase, "done"))
		fputs("\r\033[K", stderr);
	else if (total)
		fprintf(stderr, "\r\033[K%s %" PRIu64 "/%" PRIu64, phase, done, total);
	else
		fprintf(stderr, "\r\033[K%s", phase);
}

static void policy_from_args(const lvcli_args *a, lv_cleanup_policy *p)
{
	p->older_than_ms = a->older_than_ms;
	p->retain_versions = a->retain_versions ? (int64_t)a->retain_versions : -1;
	p->before_version = a->before_version;
	p->delete_unverified = a->delete_unverified;
	p->error_if_tagged_old_versions = a->error_if_tagged;
	p->dry_run = a->dry_run;
	if (a->no_checkpoint)
		p->checkpoint.enabled = 0;
	if (a->max_entries)
		p->checkpoint.max_entries = (int64_t)a->max_entries;
	if (a->max_files)
		p->checkpoint.max_checkpoint_files = (int64_t)a->max_files;
	if (a->no_archive)
		p->checkpoint.archive = 0;
	if (a->segment_rows)
		p->checkpoint.archive_segment_rows = (int64_t)a->segment_rows;
	p->delete_rate_limit = (double)a->delete_rate_limit;
}

/* Lance's refusal, worded as Lance words it, but naming the CLI's flag for its knob. */
static int fail_tagged(lv_error *err)
{
	static const char lance[] = "set `error_if_tagged_old_versions=false`";
	static const char ours[] = "pass --no-error-if-tagged-old-versions";
	char *at = strstr(err->message, lance);
	if (!at) {
		fprintf(stderr, "lancever: %s (%s; --no-error-if-tagged-old-versions keeps them instead)\n",
			lvcli_esc(err->message), lv_strerror(err->code));
		return 1;
	}
	fprintf(stderr, "lancever: %.*s%s", (int)(at - err->message), err->message, ours);
	fprintf(stderr, "%s (%s)\n", lvcli_esc(at + strlen(lance)), lv_strerror(err->code));
	return 1;
}

/* "removed 9 of 12 versions; ..." -- what happened to the removed versions' history. */
static void summary_line(const lv_cleanup_policy *p, const lv_cleanup_stats *s, int cp_enabled)
{
	printf("%s %" PRIu64 " of %" PRIu64 " versions", p->dry_run ? "would remove" : "removed",
	       s->versions_removed, s->versions_total);
	if (!s->versions_removed)
		fputs("\n", stdout);
	else if (s->checkpoint_written)
		printf("; their history is kept in %s (%" PRIu64 " versions recorded)\n",
		       lvcli_esc(s->checkpoint_path), s->versions_archived);
	else if (p->dry_run && cp_enabled > 0)
		fputs("; a checkpoint written first would keep their history\n", stdout);
	else if (cp_enabled == 0)
		fputs("; checkpoints are disabled, so their history is not kept\n", stdout);
	else
		fputs("; no checkpoint was written\n", stdout);
}

static void print_json(const cl_out *o, const char *files, const lv_cleanup_policy *p,
		       const lv_cleanup_stats *s, const lv_dataset *ds)
{
	uint64_t nf = 0, nb = 0;
	for (int k = 0; k < LV_KIND_COUNT; k++) {
		nf += s->files_removed[k];
		nb += s->bytes_removed[k];
	}
	printf("{\"files\":[%s],\"dry_run\":%s,\"versions_total\":%" PRIu64 ",\"versions_removed\":%" PRIu64
	       ",\"versions_archived\":%" PRIu64 ",\"checkpoint\":",
	       o->nfiles ? files : "", p->dry_run ? "true" : "false", s->versions_total,
	       s->versions_removed, s->versions_archived);
	lvcli_json_str(stdout, s->checkpoint_written ? s->checkpoint_path : NULL);
	printf(",\"files_removed\":%" PRIu64 ",\"bytes_removed\":%" PRIu64 ",\"by_kind\":{", nf, nb);
	for (int k = 0; k < LV_KIND_COUNT; k++)
		printf("%s\"%s\":{\"files\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", k ? "," : "",
		       lv_file_kind_name(k), s->files_removed[k], s->bytes_removed[k]);
	fputc('}', stdout);
	lvcli_json_warnings(stdout, ds);
	fputs("}\n", stdout);
}

static void print_text(const lv_cleanup_policy *p, const lv_cleanup_stats *s, int cp_enabled)
{
	uint64_t nf = 0, nb = 0;
	summary_line(p, s, cp_enabled);
	printf("%-12s %8s %14s\n", "kind", "files", "bytes");
	for (int k = 0; k < LV_KIND_COUNT; k++) {
		printf("%-12s %8" PRIu64 " %14" PRIu64 "\n", lv_file_kind_name(k), s->files_removed[k],
		       s->bytes_removed[k]);
		nf += s->files_removed[k];
		nb += s->bytes_removed[k];
	}
	printf("%-12s %8" PRIu64 " %14" PRIu64 "\n", "total", nf, nb);
}

static void print_stats(lv_dataset *ds, const lv_cleanup_stats *s)
{
	lv_storage_stats st;
	lv_storage_get_stats(lv_dataset_storage(ds), &st);
	fflush(stdout);
	fprintf(stderr,
		"lancever: cleanup read %" PRIu64 " manifests; requests %" PRIu64 ", bytes read %" PRIu64
		", bytes written %" PRIu64 "\n",
		s->versions_total, st.requests, st.bytes_read, st.bytes_written);
}

/* Whether a checkpoint would be written (1), would not (0), or unknown (-1). */
static int checkpoint_enabled(lv_dataset *ds, const lv_cleanup_policy *p)
{
	lv_checkpoint_config cfg;
	lv_error e = { 0 };
	return lv_checkpoint_config_resolve(&cfg, ds, &p->checkpoint, &e) < 0 ? -1 : cfg.enabled != 0;
}

static int run_cleanup(int argc, char **argv)
{
	lvcli_args a;
	int rc = lvcli_parse(argc, argv, &lvcli_cmd_cleanup, &a);
	if (rc)
		return rc;
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	policy_from_args(&a, &p);
	/* a dry run is for seeing what would go */
	cl_out o = { .dry_run = a.dry_run, .json = a.json, .list = a.list || a.dry_run,
		     .collect = lvcli_format_stream(&a) };
	char *files = NULL;
	size_t files_len = 0;
	if (o.json && o.list && !(o.files = open_memstream(&files, &files_len))) {
		fputs("lancever: out of memory\n", stderr);
		return 1;
	}
	p.on_file = on_file;
	p.payload = &o;
	if (isatty(2))
		p.on_progress = on_progress;
	lv_dataset *ds = NULL;
	lv_error err = { 0 };
	lv_cleanup_stats s;
	if (lvcli_open(&ds, a.pos[0], 0)) {
		rc = 1;
	} else if ((rc = lv_cleanup(ds, &p, &s, &err)) < 0) {
		rc = rc == LV_ETAGGED ? fail_tagged(&err) : lvcli_fail(&err);
	} else {
		if (o.files)
			fclose(o.files);
		o.files = NULL;
		int cp = s.checkpoint_written ? 1 : checkpoint_enabled(ds, &p);
		if (o.collect)
			rc = emit_files(&a, &o, &s);
		else if (o.json)
			print_json(&o, files, &p, &s, ds);
		else
			print_text(&p, &s, cp);
		if (a.stats)
			print_stats(ds, &s);
	}
	if (o.files)
		fclose(o.files);
	free(files);
	free_kept(&o);
	if (ds)
		lvcli_close(ds);
	return rc;
}

const lvcli_cmd lvcli_cmd_cleanup = {
	"cleanup", "DATASET", "remove old versions, keeping their history",
	"Removes the versions the policy selects (every condition given must hold; the latest "
	"version, tagged versions and branch bases are never removed) and the files only they "
	"used, by Lance's rules. First every manifest is read (an unreadable one stops the "
	"cleanup before anything changes), then a checkpoint records the history of the versions "
	"about to go, then their files are removed, and their manifests last. The head checkpoint "
	"holds at most --max-entries versions (default 10000); older history is sealed into archive "
	"segments (_checkpoints/archive/), unless --no-archive drops it as the proposal does.",
	cleanup_opts, run_cleanup, true,
};
