/*
 * lancever cleanup: removes old versions by Lance's rules, after a checkpoint has recorded
 * their history.
 *
 * Invariants: the file list and the summary count only what this process removed (the
 * library reports a file once it is gone, not when it is queued); with --json nothing
 * reaches stdout until the cleanup has finished, so a failed cleanup prints no JSON; the
 * progress line (stderr, terminals only) is progress.c's.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const lvcli_opt cleanup_opts[] = {
	{ "--older-than", "DURATION", "remove versions committed before now - DURATION (14days, 2weeks, "
	  "36h, 1h 30min); with no condition at all, 7d", LVCLI_DURATION, 0, 0, offsetof(lvcli_args, older_than_ms) },
	{ "--retain-versions", "N", "keep at least the newest N versions", LVCLI_NUMBER, 1, INT64_MAX,
	  offsetof(lvcli_args, retain_versions) },
	{ "--before-version", "V", "remove only versions below V (a number, a tag, latest~N: docs/cli.md, refs)",
	  LVCLI_STRING, 0, 0, offsetof(lvcli_args, before) },
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
	LVCLI_OPT_NO_ARCHIVE,
	LVCLI_OPT_SEGMENT_ROWS,
	{ "--no-checkpoint", NULL, "write no checkpoint first: the removed versions' history is lost",
	  LVCLI_FLAG, 0, 0, offsetof(lvcli_args, no_checkpoint) },
	{ "--delete-rate-limit", "N", "at most N deletes per second", LVCLI_NUMBER, 1, 1000000000,
	  offsetof(lvcli_args, delete_rate_limit) },
	{ "--versions", "LIST", "remove only these versions (3,5,7-9; Lance's exact version list): "
	  "every other condition given must hold too; the latest, tagged versions and branch bases "
	  "in it are kept (a tagged one stops the run unless --no-error-if-tagged-old-versions), and "
	  "each listed version not removed is warned about", LVCLI_STRING, 0, 0,
	  offsetof(lvcli_args, versions) },
	{ "--clean-referenced-branches", NULL, "first clean each branch made from a version this "
	  "cleanup selects, with that branch's own lance.auto_cleanup.* policy when it is due (Lance's "
	  "clean_referenced_branches)", LVCLI_FLAG, 0, 0, offsetof(lvcli_args, clean_referenced) },
	{ "--explain", NULL, "say what a cleanup would remove, shaped like Lance's CleanupExplanation "
	  "(read_version, stats, candidate_files with kind, unverified and size, "
	  "candidate_files_truncated, candidate_file_limit, referenced_branches, warnings); change "
	  "nothing", LVCLI_FLAG, 0, 0, offsetof(lvcli_args, explain) },
	{ "--max-candidates", "N", "--explain lists at most N candidate files (default 1000, as Lance)",
	  LVCLI_NUMBER, 1, 100000000, offsetof(lvcli_args, max_candidates) },
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

/* At most this many versions in --versions (ranges expanded). */
#define VERSIONS_MAX 1000000
#define EXPLAIN_LIMIT_DEFAULT 1000

typedef struct cl_out {
	bool dry_run, json, list;
	/* --versions: the requested versions (sorted) and whether each was removed */
	uint64_t *want;
	bool *gone;
	size_t nwant, cap;
	lvcli_ref *refs; /* its items that are refs (a tag, latest~N), resolved once it is open */
	size_t nrefs;
	/* --clean-referenced-branches: the referenced branches it did not clean */
	bool cascade_asked;
	char **skipped;
	size_t nskipped, nskipped_unnamed; /* the latter: out of memory copying their names */
	/* --explain */
	bool explain;
	uint64_t read_version, limit;
	FILE *cands, *branches; /* JSON arrays (--json) or text lines, held back */
	size_t ncands, nbranches;
	bool truncated;
	FILE *files; /* --json: the "files" array, held back until the cleanup succeeded */
	size_t nfiles;
	lvcli_progress progress;
	bool collect;           /* --format csv|arrow: every file kept for the Arrow export */
	lv_cleanup_file *kept;
	size_t nkept, kcap;
	bool oom;
} cl_out;

/* Keeps a copy of one file for --format csv|arrow. */
static void collect(cl_out *o, const char *path, int kind, uint64_t size, const char *reason)
{
	if (o->nkept == o->kcap) {
		size_t cap = o->kcap ? 2 * o->kcap : 64;
		lv_cleanup_file *f = realloc(o->kept, cap * sizeof *f);
		if (!f) {
			o->oom = true;
			return;
		}
		o->kept = f;
		o->kcap = cap;
	}
	lv_cleanup_file f = { .path = strdup(path), .kind = kind, .size = size,
			      .reason = reason ? strdup(reason) : NULL };
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

/* A manifest's version (null for other files). */
static void manifest_version_json(FILE *f, int kind, const char *path)
{
	uint64_t v;
	if (kind == LV_KIND_MANIFEST && lv_manifest_path_version(path, &v))
		fprintf(f, "%" PRIu64, v);
	else
		fputs("null", f);
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
		fprintf(o->files, ",\"kind\":\"%s\",\"size_bytes\":%" PRIu64 ",\"version\":", lv_file_kind_name(kind), size);
		manifest_version_json(o->files, kind, path);
		fputs(",\"reason\":", o->files);
		lvcli_json_str(o->files, reason);
		fputc('}', o->files);
		return;
	}
	uint64_t v;
	printf("%s %-11s %10" PRIu64 "  %s", o->dry_run ? "would remove" : "removed",
	       lv_file_kind_name(kind), size, lvcli_esc(path));
	if (kind == LV_KIND_MANIFEST && lv_manifest_path_version(path, &v))
		printf(" (version %" PRIu64 ")", v);
	printf("  (%s)\n", lvcli_esc(reason));
}

static void free_refs(cl_out *o)
{
	for (size_t i = 0; i < o->nrefs; i++)
		free((char *)o->refs[i].text);
	free(o->refs);
	free(o->want);
	o->refs = NULL;
	o->want = NULL;
	o->nrefs = o->nwant = 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Adds first..last to the list; 2 (usage) past VERSIONS_MAX. */
static int add_range(cl_out *o, uint64_t first, uint64_t last)
{
	if (last - first >= VERSIONS_MAX || o->nwant + (last - first) >= VERSIONS_MAX)
		return lvcli_usage_error("cleanup: --versions lists more than %d versions", VERSIONS_MAX);
	for (uint64_t v = first;; v++) {
		if (o->nwant == o->cap) {
			o->cap = o->cap ? 2 * o->cap : 16;
			uint64_t *w = realloc(o->want, o->cap * sizeof *w);
			if (!w)
				return lvcli_usage_error("cleanup: out of memory");
			o->want = w;
		}
		o->want[o->nwant++] = v;
		if (v == last)
			return 0;
	}
}

/* One item that is a ref (a tag, latest~N, BRANCH:V), kept to be resolved once the dataset is
 * open; 0 or a usage error. */
static int add_ref(cl_out *o, const char *list, const char *item)
{
	lvcli_ref *r = realloc(o->refs, (o->nrefs + 1) * sizeof *r);
	if (!r)
		return lvcli_usage_error("cleanup: out of memory");
	o->refs = r;
	char what[96];
	snprintf(what, sizeof what, "cleanup: --versions item in '%.60s'", list);
	r += o->nrefs;
	int rc = lvcli_ref_parse(what, item, r);
	if (rc)
		return rc;
	r->text = strdup(item); /* item is a buffer of the caller's */
	if (!r->text)
		return lvcli_usage_error("cleanup: out of memory");
	if (r->kind == LVCLI_REF_TAG)
		r->tag = r->text;
	o->nrefs++;
	return 0;
}

/* --versions "3,5,7-9,indexed,latest~2": numbers >= 1, ranges FIRST-LAST of numbers with
 * FIRST <= LAST, refs (an item that does not start with a digit; tag names may hold '-'). */
static int parse_versions(const char *list, cl_out *o)
{
	const char *p = list;
	for (;;) {
		const char *end = p + strcspn(p, ",");
		char item[256];
		size_t n = (size_t)(end - p);
		if (n == 0 || n >= sizeof item)
			return lvcli_usage_error("cleanup: --versions: bad list '%s' (e.g. 3,5,7-9)",
						 lvcli_esc(list));
		memcpy(item, p, n);
		item[n] = 0;
		int rc;
		if (item[0] < '0' || item[0] > '9') {
			rc = add_ref(o, list, item);
		} else {
			char shown[256];
			memcpy(shown, item, n + 1);
			char *dash = strchr(item, '-');
			uint64_t a, b;
			if (dash)
				*dash = 0;
			if (!lvcli_parse_u64_strict(item, UINT64_MAX, &a) || a == 0 ||
			    (dash && (!lvcli_parse_u64_strict(dash + 1, UINT64_MAX, &b) || b < a)))
				return lvcli_usage_error("cleanup: --versions: bad item '%s' in '%s' (versions "
							 "from 1, ranges FIRST-LAST, tags, latest~N)",
							 lvcli_esc(shown), lvcli_esc(list));
			rc = add_range(o, a, dash ? b : a);
		}
		if (rc)
			return rc;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

/* The refs of --versions and --before-version resolved on the dataset's branch, then the list
 * sorted with each version once; 0, or the exit status after the error. */
static int resolve_versions(cl_out *o, lv_dataset *ds, const char *uri, const lvcli_ref *before,
			    lv_cleanup_policy *p)
{
	lvcli_refctx c;
	lvcli_refctx_init(&c, ds, uri, "cleanup", false);
	int rc = before ? lvcli_ref_resolve(&c, before, &p->before_version) : 0;
	for (size_t i = 0; rc == 0 && i < o->nrefs; i++) {
		uint64_t v = 0;
		if ((rc = lvcli_ref_resolve(&c, &o->refs[i], &v)) == 0 && v == 0)
			rc = lvcli_usage_error("cleanup: --versions: '%s' is version 0",
					       lvcli_esc(o->refs[i].text));
		if (rc == 0) {
			o->refs[i].version = v; /* resolved: its warning names the ref (warn_kept_versions) */
			rc = add_range(o, v, v);
		}
	}
	lvcli_refctx_free(&c);
	if (rc || !o->want)
		return rc;
	qsort(o->want, o->nwant, sizeof *o->want, cmp_u64);
	size_t k = 0; /* duplicates once */
	for (size_t i = 0; i < o->nwant; i++)
		if (!k || o->want[k - 1] != o->want[i])
			o->want[k++] = o->want[i];
	o->nwant = k;
	o->gone = calloc(k, sizeof *o->gone);
	p->versions = o->want;
	p->nversions = o->nwant;
	return o->gone ? 0 : lvcli_usage_error("cleanup: out of memory");
}

/* Lance's names of the file kinds (CleanupFileKind). */
static const char *lance_kind(int kind)
{
	static const char *const n[LV_KIND_COUNT] = { "manifest", "data", "deletion", "index",
						      "transaction", "temporary_manifest" };
	return kind >= 0 && kind < LV_KIND_COUNT ? n[kind] : "?";
}

/* Every file: a removed manifest marks its version gone; --explain keeps the first `limit`. */
static void on_candidate(const lv_cleanup_candidate *c, void *payload)
{
	cl_out *o = payload;
	if (c->kind == LV_KIND_MANIFEST && o->nwant) {
		uint64_t *at = bsearch(&c->version, o->want, o->nwant, sizeof *o->want, cmp_u64);
		if (at)
			o->gone[at - o->want] = true;
	}
	if (!o->explain)
		return;
	if (o->ncands >= o->limit) {
		o->truncated = true;
		return;
	}
	if (o->json) {
		fputs(o->ncands ? ",{\"path\":" : "{\"path\":", o->cands);
		lvcli_json_str(o->cands, c->path);
		fprintf(o->cands, ",\"kind\":\"%s\",\"unverified\":%s,\"size_bytes\":%" PRIu64 ",\"version\":",
			lance_kind(c->kind), c->unverified ? "true" : "false", c->size);
		if (c->kind == LV_KIND_MANIFEST && c->version)
			fprintf(o->cands, "%" PRIu64 "}", c->version);
		else
			fputs("null}", o->cands);
	} else {
		fprintf(o->cands, "  %-18s %-10s %12" PRIu64 "  %s", lance_kind(c->kind),
			c->unverified ? "unverified" : "verified", c->size, lvcli_esc(c->path));
		if (c->kind == LV_KIND_MANIFEST && c->version)
			fprintf(o->cands, " (version %" PRIu64 ")", c->version);
		fputc('\n', o->cands);
	}
	o->ncands++;
}

static void on_branch(const char *name, uint64_t version, bool cascade, void *payload)
{
	cl_out *o = payload;
	if (o->cascade_asked && !cascade) {
		char **v = realloc(o->skipped, (o->nskipped + 1) * sizeof *v);
		char *copy = strdup(name);
		if (v)
			o->skipped = v;
		if (v && copy)
			o->skipped[o->nskipped++] = copy;
		else
			free(copy), o->nskipped_unnamed++;
	}
	if (!o->explain)
		return;
	if (o->json) {
		fputs(o->nbranches ? ",{\"name\":" : "{\"name\":", o->branches);
		lvcli_json_str(o->branches, name);
		fprintf(o->branches, ",\"referenced_version\":%" PRIu64 ",\"cleanup_candidate\":%s}",
			version, cascade ? "true" : "false");
	} else {
		fprintf(o->branches, "  %s (from version %" PRIu64 ")%s\n", lvcli_esc(name), version,
			cascade ? ", would be cleaned" : "");
	}
	o->nbranches++;
}

static void on_plan(uint64_t read_version, uint64_t total, uint64_t selected, void *payload)
{
	(void)total;
	(void)selected;
	((cl_out *)payload)->read_version = read_version;
}

/* Each requested version not removed, and each referenced branch --clean-referenced-branches
 * did not clean: a warning (stderr), and its text for --explain. */
static void warn_one(const char *msg, FILE *json_warnings, size_t *nw)
{
	fprintf(stderr, "%slancever: warning: %s%s\n", lvcli_color(stderr, LVCLI_YELLOW), msg, lvcli_color(stderr, LVCLI_RESET));
	if (json_warnings) {
		fputs((*nw)++ ? "," : "", json_warnings);
		lvcli_json_str(json_warnings, msg);
	}
}

static void warn_kept_versions(const cl_out *o, FILE *json_warnings, size_t *nw)
{
	char msg[400];
	for (size_t i = 0; i < o->nwant; i++) {
		if (o->gone[i])
			continue;
		const char *typed = NULL; /* the ref the user wrote for it, if any */
		for (size_t r = 0; r < o->nrefs && !typed; r++)
			if (o->refs[r].version == o->want[i])
				typed = o->refs[r].text;
		snprintf(msg, sizeof msg, "version %" PRIu64 "%s%.64s%s was %s: not a version of the "
			 "dataset, the latest, tagged, a branch base, or outside the other conditions",
			 o->want[i], typed ? " ('" : "", typed ? lvcli_esc(typed) : "", typed ? "')" : "",
			 o->dry_run ? "not selected" : "not removed");
		warn_one(msg, json_warnings, nw);
	}
	for (size_t i = 0; i < o->nskipped; i++) {
		snprintf(msg, sizeof msg, "referenced branch %.200s was %s: its "
			 "lance.auto_cleanup.interval is unset or does not divide its latest version",
			 lvcli_esc(o->skipped[i]), o->dry_run ? "not selected" : "not cleaned");
		warn_one(msg, json_warnings, nw);
	}
	if (o->nskipped_unnamed) {
		snprintf(msg, sizeof msg, "%zu more referenced branch(es) were not cleaned (out of "
			 "memory naming them)", o->nskipped_unnamed);
		warn_one(msg, json_warnings, nw);
	}
}

static void on_progress(const char *phase, uint64_t done, uint64_t total, void *payload)
{
	lvcli_progress_draw(&((cl_out *)payload)->progress, phase, done, total);
}

/* The policy and the checkpoint config it points to (cfg, the caller's) from the arguments. */
static void policy_from_args(const lvcli_args *a, lv_cleanup_policy *p, lv_checkpoint_config *cfg)
{
	lv_cleanup_policy_init(p, LV_CLEANUP_POLICY_VERSION);
	lv_checkpoint_config_init(cfg, LV_CHECKPOINT_CONFIG_VERSION);
	p->checkpoint = cfg;
	p->older_than_ms = a->older_than_ms;
	p->retain_versions = a->retain_versions ? (int64_t)a->retain_versions : -1;
	p->delete_unverified = a->delete_unverified;
	p->error_if_tagged_old_versions = a->error_if_tagged;
	p->dry_run = a->dry_run;
	if (a->no_checkpoint)
		cfg->enabled = 0;
	lvcli_checkpoint_options(a, cfg);
	p->delete_rate_limit = (double)a->delete_rate_limit;
	p->clean_referenced_branches = a->clean_referenced;
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
	printf(",\"files_removed\":%" PRIu64 ",\"bytes_removed\":%" PRIu64 ",\"failed_deletes\":%" PRIu64
	       ",\"by_kind\":{", nf, nb, s->failed_deletes);
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
	char sz[32]; /* "68.4 MB", or bytes with --bytes (width.c) */
	printf("%-12s %8s %14s\n", "kind", "files", "size");
	for (int k = 0; k < LV_KIND_COUNT; k++) {
		printf("%-12s %8" PRIu64 " %14s\n", lv_file_kind_name(k), s->files_removed[k],
		       lvcli_size(sz, sizeof sz, s->bytes_removed[k]));
		nf += s->files_removed[k];
		nb += s->bytes_removed[k];
	}
	printf("%-12s %8" PRIu64 " %14s\n", "total", nf, lvcli_size(sz, sizeof sz, nb));
	if (s->failed_deletes)
		printf("%" PRIu64 " file(s) could not be deleted (still there; the next cleanup tries "
		       "again)\n", s->failed_deletes);
}

static void print_stats(lv_dataset *ds, const lv_cleanup_stats *s)
{
	lv_storage_stats st;
	lv_storage_stats_init(&st, LV_STORAGE_STATS_VERSION);
	lv_storage_get_stats(lv_dataset_storage(ds), &st);
	fflush(stdout);
	fprintf(stderr,
		"lancever: cleanup read %" PRIu64 " manifests; requests %" PRIu64 ", bytes read %" PRIu64
		", bytes written %" PRIu64 "\n",
		s->versions_total, st.requests, st.bytes_read, st.bytes_written);
}

/* --explain: Lance's CleanupExplanation (JSON field for field; text for people).  Its stats'
 * old_versions is Lance's name of versions_removed, which follows it (the one name elsewhere). */
static void print_explain(cl_out *o, const char *cands, const char *branches, const lv_cleanup_stats *s,
			  const lv_dataset *ds)
{
	uint64_t nb = 0;
	for (int k = 0; k < LV_KIND_COUNT; k++)
		nb += s->bytes_removed[k];
	char *warn = NULL;
	size_t wlen = 0, nw = 0;
	FILE *w = o->json ? open_memstream(&warn, &wlen) : NULL;
	char trunc[96];
	snprintf(trunc, sizeof trunc, "candidate_files truncated to %" PRIu64 " entries", o->limit);
	if (o->truncated && w) {
		lvcli_json_str(w, trunc);
		nw++;
	}
	warn_kept_versions(o, w, &nw);
	for (size_t i = 0; w && i < lv_dataset_warning_count(ds); i++) {
		fputs(nw++ ? "," : "", w);
		lvcli_json_str(w, lv_dataset_warning(ds, i)->message);
	}
	if (w)
		fclose(w);
	if (o->json) {
		printf("{\"read_version\":%" PRIu64 ",\"stats\":{\"bytes_removed\":%" PRIu64
		       ",\"old_versions\":%" PRIu64 ",\"versions_removed\":%" PRIu64 ",\"data_files_removed\":%" PRIu64
		       ",\"transaction_files_removed\":%" PRIu64 ",\"index_files_removed\":%" PRIu64
		       ",\"deletion_files_removed\":%" PRIu64 ",\"failed_deletes\":%" PRIu64 "},\"candidate_files\":[%s],"
		       "\"candidate_files_truncated\":%s,\"candidate_file_limit\":%" PRIu64
		       ",\"referenced_branches\":[%s],\"warnings\":[%s]}\n",
		       o->read_version, nb, s->files_removed[LV_KIND_MANIFEST], s->files_removed[LV_KIND_MANIFEST],
		       s->files_removed[LV_KIND_DATA],
		       s->files_removed[LV_KIND_TRANSACTION], s->files_removed[LV_KIND_INDEX],
		       s->files_removed[LV_KIND_DELETION], s->failed_deletes, cands ? cands : "",
		       o->truncated ? "true" : "false", o->limit, branches ? branches : "", warn ? warn : "");
		free(warn);
		return;
	}
	printf("read version %" PRIu64 ": a cleanup would remove %" PRIu64 " of %" PRIu64
	       " versions and %" PRIu64 " bytes (nothing was changed)\n",
	       o->read_version, s->files_removed[LV_KIND_MANIFEST], s->versions_total, nb);
	printf("data %" PRIu64 ", deletion %" PRIu64 ", index %" PRIu64 ", transaction %" PRIu64
	       ", temporary manifest %" PRIu64 " files\n",
	       s->files_removed[LV_KIND_DATA], s->files_removed[LV_KIND_DELETION],
	       s->files_removed[LV_KIND_INDEX], s->files_removed[LV_KIND_TRANSACTION],
	       s->files_removed[LV_KIND_TEMP]);
	printf("candidate files (%zu listed, limit %" PRIu64 "%s):\n%s", o->ncands, o->limit,
	       o->truncated ? ", truncated" : "", cands ? cands : "");
	printf("referenced branches: %s\n%s", o->nbranches ? "" : "none", branches ? branches : "");
	if (o->truncated)
		fprintf(stderr, "%slancever: warning: %s%s\n", lvcli_color(stderr, LVCLI_YELLOW), trunc, lvcli_color(stderr, LVCLI_RESET));
}

/* Whether a checkpoint would be written (1), would not (0), or unknown (-1). */
static int checkpoint_enabled(lv_dataset *ds, const lv_cleanup_policy *p)
{
	lv_checkpoint_config cfg;
	lv_checkpoint_config_init(&cfg, LV_CHECKPOINT_CONFIG_VERSION);
	lv_error e = { 0 };
	return lv_checkpoint_config_resolve(&cfg, ds, p->checkpoint, &e) < 0 ? -1 : cfg.enabled != 0;
}

static void close_held(cl_out *o)
{
	if (o->cands)
		fclose(o->cands);
	if (o->branches)
		fclose(o->branches);
	o->cands = o->branches = NULL;
}

static int run_cleanup(int argc, char **argv)
{
	lvcli_args a;
	int rc = lvcli_parse(argc, argv, &lvcli_cmd_cleanup, &a);
	if (rc)
		return rc;
	if (a.explain && (a.list || a.format || a.csv))
		return lvcli_usage_error("cleanup: --explain prints its own report (text or --json); "
					 "not with --list or --format");
	if (a.max_candidates && !a.explain)
		return lvcli_usage_error("cleanup: --max-candidates goes with --explain");
	lv_cleanup_policy p;
	lv_checkpoint_config cfg;
	policy_from_args(&a, &p, &cfg);
	p.dry_run = p.dry_run || a.explain;
	/* a dry run is for seeing what would go */
	cl_out o = { .dry_run = p.dry_run, .json = a.json, .list = !a.explain && (a.list || a.dry_run),
		     .collect = !a.explain && lvcli_format_stream(&a), .explain = a.explain,
		     .cascade_asked = a.clean_referenced,
		     .limit = a.max_candidates ? a.max_candidates : EXPLAIN_LIMIT_DEFAULT };
	lvcli_ref before;
	if ((a.before && (rc = lvcli_before_parse(a.before, &before))) ||
	    (a.versions && (rc = parse_versions(a.versions, &o)))) {
		free_refs(&o);
		return rc;
	}
	char *files = NULL, *cands = NULL, *branches = NULL;
	size_t files_len = 0, cands_len = 0, branches_len = 0;
	if ((o.json && o.list && !(o.files = open_memstream(&files, &files_len))) ||
	    (o.explain && (!(o.cands = open_memstream(&cands, &cands_len)) ||
			   !(o.branches = open_memstream(&branches, &branches_len))))) {
		fputs("lancever: out of memory\n", stderr);
		return 1;
	}
	p.on_file = on_file;
	p.on_candidate = on_candidate;
	p.on_referenced_branch = on_branch;
	p.on_plan = on_plan;
	p.payload = &o;
	if (lvcli_progress_on()) /* a terminal, or --progress=json (progress.c) */
		p.on_progress = on_progress;
	lv_dataset *ds = NULL;
	lv_error err = { 0 };
	lv_cleanup_stats s;
	lv_cleanup_stats_init(&s, LV_CLEANUP_STATS_VERSION);
	if (lvcli_open(&ds, a.pos[0], 0)) {
		rc = 1;
	} else if ((rc = resolve_versions(&o, ds, a.pos[0], a.before ? &before : NULL, &p))) {
		/* the error is printed */
	} else if ((rc = lv_cleanup(ds, &p, &s, &err)) < 0) {
		lvcli_progress_end(&o.progress); /* no half line before the error */
		rc = rc == LV_ETAGGED ? fail_tagged(&err) : lvcli_fail(&err);
	} else {
		if (o.files)
			fclose(o.files);
		o.files = NULL;
		close_held(&o);
		int cp = s.checkpoint_written ? 1 : checkpoint_enabled(ds, &p);
		if (o.explain) {
			print_explain(&o, cands, branches, &s, ds);
		} else {
			size_t nw = 0;
			warn_kept_versions(&o, NULL, &nw);
			if (o.collect)
				rc = emit_files(&a, &o, &s);
			else if (o.json)
				print_json(&o, files, &p, &s, ds);
			else
				print_text(&p, &s, cp);
		}
		if (a.stats)
			print_stats(ds, &s);
	}
	if (o.files)
		fclose(o.files);
	close_held(&o);
	free(files);
	free(cands);
	free(branches);
	free_refs(&o);
	free(o.gone);
	free_kept(&o);
	for (size_t i = 0; i < o.nskipped; i++)
		free(o.skipped[i]);
	free(o.skipped);
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
	"segments (_checkpoints/archive/), unless --no-archive drops it as the proposal does. With "
	"--branch NAME, the branch's own versions and files are cleaned (its tags and its child "
	"branches' bases kept); the files it shares with its parent are never touched.",
	cleanup_opts, run_cleanup, true,
};
