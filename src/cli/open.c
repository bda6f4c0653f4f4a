/*
 * Opening a dataset with the global options (--branch, --storage-option, the
 * --s3-* flags as their storage options) and closing it with its warnings.  The
 * DATASET argument goes to the library as given: the library parses the address and
 * names a missing path or a file as such.
 *
 * Invariants: a dataset that failed to open has printed one error (exit status 1);
 * every dataset opened is closed by lvcli_close, which prints each warning once.
 */
#include <inttypes.h>
#include <string.h>

#include "cli.h"

/* ---- datasets ---- */

lvcli_globals lvcli_g;

/* The global options' storage options: --storage-option pairs first (they win), then the
 * --s3-* flags under their storage option names.  0, or an LV_* code with err set. */
int lvcli_storage_options(lv_storage_options **out, lv_error *err)
{
	*out = NULL;
	const lvcli_globals *g = &lvcli_g;
	if (!g->noptions && !g->s3_endpoint && !g->s3_region && !g->s3_allow_http)
		return 0;
	int rc = lv_storage_options_new(out, err);
	for (size_t i = 0; rc == 0 && i < g->noptions; i++)
		rc = lv_storage_options_set(*out, g->option_keys[i], g->option_values[i], err);
	if (rc == 0 && g->s3_endpoint)
		rc = lv_storage_options_set(*out, "aws_endpoint", g->s3_endpoint, err);
	if (rc == 0 && g->s3_region)
		rc = lv_storage_options_set(*out, "aws_region", g->s3_region, err);
	if (rc == 0 && g->s3_allow_http)
		rc = lv_storage_options_set(*out, "allow_http", "true", err);
	return rc;
}

int lvcli_open(lv_dataset **ds, const char *uri, int threads)
{
	return lvcli_open_branch(ds, uri, threads, NULL);
}

int lvcli_open_branch(lv_dataset **ds, const char *uri, int threads, const char *branch)
{
	lv_open_options o;
	lv_open_options_init(&o, LV_OPEN_OPTIONS_VERSION);
	o.threads = threads;
	o.branch = branch ? branch : lvcli_g.branch;
	lv_error err = { 0 };
	lv_storage_options *so = NULL;
	lvcli_hint_uri(uri); /* a not-found error hints at db/t.lance (hint.c) */
	int rc = lvcli_storage_options(&so, &err);
	o.storage = so;
	if (rc == 0)
		rc = lv_dataset_open(ds, uri, &o, &err);
	lv_storage_options_free(so);
	if (rc < 0)
		return lvcli_fail(&err);
	if (lvcli_g.verbose) { /* where, and who supplied the credentials: never a secret */
		char src[512];
		lv_storage *st = lv_dataset_storage(*ds);
		(void)lv_storage_credential_source(st, src, sizeof src);
		fprintf(stderr, "lancever: store %s (%s), ", lvcli_esc(lv_storage_describe(st)),
			lv_storage_is_remote(st) ? "remote" : "local");
		fprintf(stderr, "credentials: %s\n", lvcli_esc(src));
	}
	return 0;
}

int lvcli_start(int argc, char **argv, const lvcli_cmd *c, lvcli_args *a, lv_dataset **ds)
{
	int rc = lvcli_parse(argc, argv, c, a);
	if (rc)
		return rc;
	return lvcli_open(ds, a->pos[0], (int)a->threads);
}

int lvcli_run_dataset(int argc, char **argv, const lvcli_cmd *c, int (*check)(lvcli_args *a),
		      int (*run)(const lvcli_args *a, lv_dataset *ds))
{
	lvcli_args a;
	lv_dataset *ds = NULL;
	int rc = lvcli_parse(argc, argv, c, &a);
	if (rc || (check && (rc = check(&a))) || (rc = lvcli_open(&ds, a.pos[0], (int)a.threads)))
		return rc;
	rc = run(&a, ds);
	lvcli_close(ds);
	return rc;
}

void lvcli_close(lv_dataset *ds)
{
	size_t n = lv_dataset_warning_count(ds), nvanished = 0;
	const lv_warning *first = NULL, *last = NULL;
	for (size_t i = 0; i < n && !lvcli_g.quiet; i++) {
		const lv_warning *w = lv_dataset_warning(ds, i);
		if (w->kind == LV_WARN_MANIFEST_VANISHED) {
			/* a reader during a cleanup can see thousands: one line says it */
			if (!nvanished++)
				first = w;
			last = w;
			continue;
		}
		fprintf(stderr, "%slancever: warning: %s%s\n", lvcli_color(stderr, LVCLI_YELLOW),
			lvcli_esc(w->message), lvcli_color(stderr, LVCLI_RESET));
	}
	if (nvanished == 1)
		fprintf(stderr, "%slancever: warning: %s%s\n", lvcli_color(stderr, LVCLI_YELLOW),
			lvcli_esc(first->message), lvcli_color(stderr, LVCLI_RESET));
	else if (nvanished > 1)
		fprintf(stderr,
			"%slancever: warning: %zu manifests vanished while being read (a concurrent "
			"cleanup?) and were skipped: %s ... %s%s\n", lvcli_color(stderr, LVCLI_YELLOW),
			nvanished, lvcli_esc(first->path), lvcli_esc(last->path),
			lvcli_color(stderr, LVCLI_RESET));
	lv_dataset_free(ds);
}

static const char *warning_kind(int kind)
{
	static const char *const names[] = {
		[LV_WARN_CHECKPOINT_REJECTED] = "checkpoint_rejected",
		[LV_WARN_CHECKPOINT_DAMAGED] = "checkpoint_damaged",
		[LV_WARN_MANIFEST_VANISHED] = "manifest_vanished",
		[LV_WARN_TAG_UNREADABLE] = "tag_unreadable",
		[LV_WARN_BRANCH_UNREADABLE] = "branch_unreadable",
		[LV_WARN_HISTORY_GAP] = "history_gap",
		[LV_WARN_ANSWER_UNCERTAIN] = "answer_uncertain",
		[LV_WARN_SEGMENT_MISSING] = "segment_missing",
		[LV_WARN_SEGMENT_STRAY] = "segment_stray",
	};
	if (kind > 0 && (size_t)kind < sizeof names / sizeof names[0] && names[kind])
		return names[kind];
	return "other";
}

void lvcli_json_warnings(FILE *f, const lv_dataset *ds)
{
	fputs(",\"warnings\":[", f);
	for (size_t i = 0; i < lv_dataset_warning_count(ds); i++) {
		const lv_warning *w = lv_dataset_warning(ds, i);
		fprintf(f, "%s{\"kind\":\"%s\",\"path\":", i ? "," : "", warning_kind(w->kind));
		lvcli_json_str(f, w->path);
		/* versions start at 1: 0 means the warning is about a file, not a range */
		if (w->first || w->last)
			fprintf(f, ",\"first\":%" PRIu64 ",\"last\":%" PRIu64, w->first, w->last);
		else
			fputs(",\"first\":null,\"last\":null", f);
		fputs(",\"message\":", f);
		lvcli_json_str(f, w->message);
		fputc('}', f);
	}
	fputc(']', f);
}

