/*
 * Opening a dataset: the address parsed once (storage/address.h) and its store
 * opened once (asked to pick the key spelling that holds _versions/), the
 * branch (by option, or a local "<root>/tree/<branch>" path that <root>
 * registers: the store is then opened at <root>), the thread default, and the
 * dataset's refs.  No URI is looked at here: only the parsed address.
 *
 * The gap-note cache: a listing of _checkpoints/gaps/ made by one history call
 * (or by lv_capture_gap_reason) answers every gap reason asked until the next
 * history or versions call starts, so a history with many gaps lists the folder
 * once, not once per gap row.  It is per handle, under its own mutex.
 */
#include "core/dataset.h"

#include <stdlib.h>
#include <string.h>

#include "core/manifests.h"
#include "core/stores.h"
#include "core/capture_gaps.h"
#include "core/vcache.h"
#include "core/refs.h"
#include "storage/backends.h"
#include "util/abi.h"
#include "util/util.h"

#define DEFAULT_THREADS 8
#define REMOTE_THREADS 32

/* Where a dataset's manifests are: its presence tells a store's spellings apart. */
#define VERSIONS_DIR "_versions"

/* The branch's directory, tree/<branch>, as the store spells it (a store that Lance 8 wrote
 * may spell it another way: lv__storage_sub_holding). */
static int open_branch(lv_storage **out, lv_storage *root, const char *branch, lv_error *err)
{
	char *sub = lv__sprintf("tree/%s", branch);
	int rc = sub ? lv__storage_sub_holding(out, root, sub, VERSIONS_DIR, err)
		     : lv__err(err, LV_ENOMEM, "out of memory");
	lv__free(sub);
	return rc;
}

/* Builds a dataset over `root`; with a branch, versions are read from tree/<branch>. */
static int init_ds(lv_dataset **out, lv_storage *root, bool owns_root, const char *branch,
		   const lv_open_options *opts, lv_error *err)
{
	if (branch && !strcmp(branch, "main"))
		branch = NULL;
	if (branch)
		LV_TRY(lv__branch_name_check(branch, strlen(branch), err));
	lv_dataset *ds = lv__calloc(1, sizeof *ds);
	if (!ds)
		return lv__err(err, LV_ENOMEM, "out of memory");
	ds->root = root;
	ds->st = root;
	pthread_mutex_init(&ds->warn_mu, NULL);
	pthread_mutex_init(&ds->notes_mu, NULL);
	ds->owned_root = owns_root ? root : NULL; /* lv_dataset_open sets its own */
	/* Object stores answer each read after a round trip: keep many in flight. */
	bool remote = lv_storage_is_remote(root);
	ds->threads = opts && opts->threads > 0 ? opts->threads : remote ? REMOTE_THREADS : DEFAULT_THREADS;
	if (ds->threads > 256)
		ds->threads = 256;
	ds->remote = remote;
	ds->vcache = lv__calloc(1, sizeof *ds->vcache);
	if (!ds->vcache) {
		pthread_mutex_destroy(&ds->warn_mu);
		pthread_mutex_destroy(&ds->notes_mu);
		lv__free(ds);
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	pthread_mutex_init(&ds->vcache->mu, NULL);
	if (branch) {
		ds->branch = lv__strdup(branch);
		int rc = ds->branch ? open_branch(&ds->owned_sub, root, branch, err)
				    : lv__err(err, LV_ENOMEM, "out of memory");
		if (rc < 0) {
			lv__free(ds->branch);
			lv__vcache_free(ds->vcache);
			pthread_mutex_destroy(&ds->warn_mu);
			pthread_mutex_destroy(&ds->notes_mu);
			lv__free(ds);
			return rc;
		}
		ds->st = ds->owned_sub;
	}
	*out = ds;
	return 0;
}

/* "_refs/branches/<name>.json", the name percent-encoded as Lance writes it ('/' as %2F, each
 * byte of a non-ASCII character as %XX).  n: the name's length.  malloc'ed. */
static char *branch_file(const char *branch, size_t n)
{
	char *enc = lv__ref_name_encode(branch, n);
	char *path = enc ? lv__sprintf(LV_REFS_BRANCHES_DIR "/%s.json", enc) : NULL;
	lv__free(enc);
	return path;
}

/* Does `root` register `branch` (n bytes) in _refs/branches? */
static bool branch_registered(lv_storage *root, const char *branch, size_t n)
{
	char *probe = n ? branch_file(branch, n) : NULL;
	lv_error e = { 0 };
	bool ok = probe && lv_storage_head(root, probe, NULL, NULL, &e) == 0;
	lv__free(probe);
	return ok;
}

/* A store opened for a dataset: the store itself, the dataset's root within it (the store,
 * or a sub-handle of it), and the branch a "<root>/tree/<branch>" path named. */
typedef struct opened {
	lv_storage *top, *mid; /* owned: the store; a sub-handle root (or NULL) */
	lv_storage *root;      /* top or mid */
	char *branch;          /* malloc'ed, or NULL */
} opened;

/*
 * A local "<root>/tree/<branch>" address where <root>'s _refs/branches registers
 * <branch> (the first such split): the store opened at the outermost candidate
 * root, that root a sub-handle of it, and the branch.  0 with o->root NULL if no
 * split is registered (the path is a dataset of its own, even under a directory
 * that happens to hold _versions/).
 */
static int open_branch_path(opened *o, lv__address *a, lv_error *err)
{
	char *path = a->root, *full = lv__strdup(path);
	if (!full)
		return lv__err(err, LV_ENOMEM, "out of memory");
	path[a->tree] = 0; /* the outermost candidate root */
	int rc = lv__storage_open_address(&o->top, a, err);
	for (const char *t = full + a->tree; rc == 0 && t && !o->root; t = strstr(t + 1, "/tree/")) {
		const char *b = t + 6;
		size_t n = strlen(b);
		while (n && b[n - 1] == '/')
			n--;
		size_t rel = (size_t)(t - full) - a->tree; /* "/x/tree" between the two roots */
		lv_storage *r = o->top;
		lv_error e = { 0 };
		char *sub = rel ? lv__strndup(full + a->tree + 1, rel - 1) : NULL;
		if (rel && (!sub || lv_storage_sub(&o->mid, o->top, sub, &e) < 0))
			r = NULL;
		else if (rel)
			r = o->mid;
		lv__free(sub);
		if (r && n && branch_registered(r, b, n)) {
			o->root = r;
			if (!(o->branch = lv__strndup(b, n)))
				rc = lv__err(err, LV_ENOMEM, "out of memory");
		} else {
			lv_storage_free(o->mid);
			o->mid = NULL;
		}
	}
	lv__free(full);
	return rc;
}

/* Opens the store `a` names, once, choosing the key spelling that holds a dataset. */
static int open_address(opened *o, lv__address *a, const char *branch, lv_error *err)
{
	memset(o, 0, sizeof *o);
	a->probe = VERSIONS_DIR;
	a->must_exist = true;
	if (!branch && a->tree) {
		LV_TRY(open_branch_path(o, a, err));
		if (o->root)
			return 0;
		/* not a branch: the dataset is the whole path, opened as such */
		lv_storage_free(o->top);
		o->top = NULL;
		a->root[a->tree] = '/';
	}
	LV_TRY(lv__storage_open_address(&o->top, a, err));
	o->root = o->top;
	return 0;
}

int lv_open_options_init(lv_open_options *o, int version)
{
	static const lv_open_options defaults = LV_OPEN_OPTIONS_INIT;
	return lv__struct_init("lv_open_options", o, sizeof *o, &defaults, version,
				       LV_OPEN_OPTIONS_VERSION, LV_OPEN_OPTIONS_VERSION);
}

static int check_opts(const lv_open_options *opts, lv_error *err)
{
	return opts ? lv__struct_version("lv_open_options", opts->version, LV_OPEN_OPTIONS_VERSION,
					 LV_OPEN_OPTIONS_VERSION, err)
		    : 0;
}

int lv_dataset_open(lv_dataset **out, const char *uri, const lv_open_options *opts, lv_error *err)
{
	if (!out || !uri)
		return lv__err(err, LV_EINVALID, "lv_dataset_open: NULL argument");
	*out = NULL;
	LV_TRY(check_opts(opts, err));
	lv__stores_builtin();
	lv__address a;
	opened o;
	memset(&o, 0, sizeof o);
	const char *branch = opts ? opts->branch : NULL;
	int rc = lv__address_parse(&a, uri, opts ? opts->storage : NULL, err);
	if (rc == 0)
		rc = open_address(&o, &a, branch, err);
	lv__address_dispose(&a);
	if (rc == 0)
		rc = init_ds(out, o.root, false, o.branch ? o.branch : branch, opts, err);
	if (rc == 0) {
		(*out)->owned_root = o.top;
		(*out)->owned_mid = o.mid;
	} else {
		lv_storage_free(o.mid);
		lv_storage_free(o.top);
	}
	lv__free(o.branch);
	return rc;
}

int lv_dataset_open_storage(lv_dataset **out, lv_storage *st, const lv_open_options *opts,
			    lv_error *err)
{
	if (!out || !st)
		return lv__err(err, LV_EINVALID, "lv_dataset_open_storage: NULL argument");
	*out = NULL;
	LV_TRY(check_opts(opts, err));
	return init_ds(out, st, false, opts ? opts->branch : NULL, opts, err);
}

void lv__dataset_hold(lv_dataset *ds)
{
	__atomic_fetch_add(&ds->holders, 1, __ATOMIC_ACQ_REL);
}

void lv_dataset_free(lv_dataset *ds)
{
	if (!ds || __atomic_fetch_sub(&ds->holders, 1, __ATOMIC_ACQ_REL) > 0)
		return; /* another holder (a history stream) frees it */
	lv__warnlog_dispose(&ds->warnings);
	pthread_mutex_destroy(&ds->warn_mu);
	lv__free(ds->notes);
	pthread_mutex_destroy(&ds->notes_mu);
	lv__vcache_free(ds->vcache);
	lv_storage_free(ds->owned_sub);
	lv_storage_free(ds->owned_mid);
	lv_storage_free(ds->owned_root);
	lv__free(ds->branch);
	lv__free(ds);
}

lv_storage *lv_dataset_storage(lv_dataset *ds) { return ds ? ds->st : NULL; }

const char *lv_dataset_branch(const lv_dataset *ds) { return ds ? ds->branch : NULL; }

int lv_refs_load(lv_refs **out, lv_dataset *ds, lv_error *err)
{
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "lv_refs_load: NULL argument");
	*out = NULL;
	/* Refuse a directory that is not a dataset, rather than listing no tags. */
	lv__manifest_entry *e = NULL;
	size_t n = 0;
	LV_TRY(lv__manifests_list(ds->st, &e, &n, err));
	lv__free(e);
	if (n == 0)
		return lv__not_a_dataset(ds, err);
	LV_TRY(lv__refs_load_lenient(out, ds->root, ds->remote ? ds->threads : 1, err));
	lv__warnlog wl = { 0 };
	lv__warn_refs(&wl, *out);
	lv__warn_commit(ds, &wl);
	return 0;
}

int lv_history_report_init(lv_history_report *r, int version)
{
	return lv__struct_init("lv_history_report", r, sizeof *r, NULL, version,
				       LV_HISTORY_REPORT_VERSION, LV_HISTORY_REPORT_VERSION);
}

int lv__report_check(const lv_history_report *r, lv_error *err)
{
	return r ? lv__struct_version("lv_history_report", r->version, LV_HISTORY_REPORT_VERSION,
				      LV_HISTORY_REPORT_VERSION, err)
		 : 0;
}

void lv__report_put(lv_history_report *dst, const lv_history_report *src)
{
	if (!dst)
		return;
	int v = dst->version; /* version 1 has every field (a later one writes its own only) */
	*dst = *src;
	dst->version = v;
}

int lv__ds_notes_keep(lv_dataset *ds, const lv__capgaps *g)
{
	lv__capgap *v = g->n ? lv__calloc(g->n, sizeof *v) : NULL;
	if (g->n && !v)
		return LV_ENOMEM;
	if (g->n)
		memcpy(v, g->v, g->n * sizeof *v); /* the reasons are static strings */
	pthread_mutex_lock(&ds->notes_mu);
	lv__free(ds->notes);
	ds->notes = v;
	ds->nnotes = g->n;
	ds->notes_valid = true;
	pthread_mutex_unlock(&ds->notes_mu);
	return 0;
}

bool lv__ds_notes_find(lv_dataset *ds, uint64_t first, uint64_t last, const char **reason)
{
	pthread_mutex_lock(&ds->notes_mu);
	bool valid = ds->notes_valid;
	if (valid) {
		lv__capgaps g = { ds->notes, ds->nnotes, ds->nnotes, 0 };
		const lv__capgap *n = lv__capgap_find(&g, first, last);
		*reason = n ? n->reason : NULL;
	}
	pthread_mutex_unlock(&ds->notes_mu);
	return valid;
}

void lv__ds_notes_forget(lv_dataset *ds)
{
	pthread_mutex_lock(&ds->notes_mu);
	lv__free(ds->notes);
	ds->notes = NULL;
	ds->nnotes = 0;
	ds->notes_valid = false;
	pthread_mutex_unlock(&ds->notes_mu);
}

int lv__ds_gap_reason(lv_dataset *ds, uint64_t first, uint64_t last, const char **reason, lv_error *err)
{
	*reason = NULL;
	if (lv__ds_notes_find(ds, first, last, reason))
		return 0;
	lv__capgaps g;
	LV_TRY(lv__capgap_list(ds->st, &g, err));
	const lv__capgap *n = lv__capgap_find(&g, first, last);
	*reason = n ? n->reason : NULL;
	int rc = lv__ds_notes_keep(ds, &g);
	lv__capgaps_dispose(&g);
	return rc == LV_ENOMEM ? lv__err(err, rc, "out of memory") : 0;
}

void lv__report_begin(lv_dataset *ds, lv_history_report *rep, lv_storage_stats *s0)
{
	lv__ds_notes_forget(ds); /* a new call lists the notes afresh when it needs them */
	memset(rep, 0, sizeof *rep);
	*s0 = (lv_storage_stats)LV_STORAGE_STATS_INIT;
	(void)lv_storage_get_stats(ds->st, s0);
}

void lv__report_end(lv_dataset *ds, lv_history_report *rep, const lv_storage_stats *s0)
{
	lv_storage_stats s1 = LV_STORAGE_STATS_INIT;
	(void)lv_storage_get_stats(ds->st, &s1);
	rep->requests = s1.requests - s0->requests;
	rep->bytes_read = s1.bytes_read - s0->bytes_read;
}

int lv__not_a_dataset(const lv_dataset *ds, lv_error *err)
{
	/* A branch nobody registered is named as such (asked only here, on the error path). */
	char *file = ds->branch ? branch_file(ds->branch, strlen(ds->branch)) : NULL;
	lv_error e = { 0 };
	if (file && lv_storage_head(ds->root, file, NULL, NULL, &e) == LV_ENOTFOUND) {
		int rc = lv__err(err, LV_ENOTFOUND, "%s: branch '%s' is not registered (no %s)",
				 lv_storage_describe(ds->root), ds->branch, file);
		lv__free(file);
		return rc;
	}
	lv__free(file);
	return lv__err(err, LV_ENOTFOUND, "%s: not a Lance dataset (no manifests in _versions/)",
		       lv_storage_describe(ds->st));
}
