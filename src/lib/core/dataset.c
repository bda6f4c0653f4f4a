/*
 * Opening a dataset: its root storage, the branch (by option, or a local
 * "<root>/tree/<branch>" path that <root> registers), the thread default,
 * and the dataset's refs.
 */
#include "core/dataset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/manifests.h"
#include "core/vcache.h"
#include "format/refs.h"
#include "util/abi.h"
#include "util/util.h"

#define DEFAULT_THREADS 8
#define REMOTE_THREADS 32

static bool has_versions(lv_storage *st);

/*
 * The branch's directory, tree/<branch>.  On an object store Lance 12 names it with the raw
 * characters and Lance 8 as a URL path, each non-ASCII byte as %XX ("tree/%C3%BCn%C3%AF/",
 * measured on s3rver): when the raw one holds no manifests, the encoded one is taken if it does.
 */
static int open_branch(lv_storage **out, lv_storage *root, const char *branch, bool remote,
		       lv_error *err)
{
	char *sub = lv__sprintf("tree/%s", branch);
	int rc = sub ? lv_storage_sub(out, root, sub, err) : lv__err(err, LV_ENOMEM, "out of memory");
	free(sub);
	size_t n = strlen(branch), high = 0;
	for (size_t i = 0; i < n; i++)
		high += (unsigned char)branch[i] >= 0x80;
	if (rc < 0 || !remote || !high || has_versions(*out))
		return rc;
	char *enc = lv__malloc(sizeof "tree/" + n + 2 * high), *p = enc;
	lv_storage *alt = NULL;
	lv_error e = { 0 };
	if (!enc)
		return 0; /* keep the raw one */
	p += sprintf(p, "tree/");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)branch[i];
		p += c >= 0x80 ? sprintf(p, "%%%02X", c) : sprintf(p, "%c", c);
	}
	if (lv_storage_sub(&alt, root, enc, &e) == 0 && has_versions(alt)) {
		lv_storage_free(*out);
		*out = alt;
		alt = NULL;
	}
	lv_storage_free(alt);
	free(enc);
	return 0;
}

/* Builds a dataset over `root`; with a branch, versions are read from tree/<branch>. */
static int init_ds(lv_dataset **out, lv_storage *root, bool owns_root, const char *branch,
		   const lv_open_options *opts, lv_error *err)
{
	if (branch && !strcmp(branch, "main"))
		branch = NULL;
	if (branch)
		LV_TRY(lv__branch_name_check(branch, strlen(branch), err));
	lv_dataset *ds = calloc(1, sizeof *ds);
	if (!ds)
		return lv__err(err, LV_ENOMEM, "out of memory");
	ds->root = root;
	ds->st = root;
	pthread_mutex_init(&ds->warn_mu, NULL);
	ds->owned_root = owns_root ? root : NULL;
	/* Object stores answer each read after a round trip: keep many in flight. */
	bool remote = lv_storage_is_remote(root);
	ds->threads = opts && opts->threads > 0 ? opts->threads : remote ? REMOTE_THREADS : DEFAULT_THREADS;
	if (ds->threads > 256)
		ds->threads = 256;
	ds->remote = remote;
	ds->vcache = calloc(1, sizeof *ds->vcache);
	if (!ds->vcache) {
		pthread_mutex_destroy(&ds->warn_mu);
		free(ds);
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	pthread_mutex_init(&ds->vcache->mu, NULL);
	if (branch) {
		ds->branch = lv__strdup(branch);
		int rc = ds->branch ? open_branch(&ds->owned_sub, root, branch, remote, err)
				    : lv__err(err, LV_ENOMEM, "out of memory");
		if (rc < 0) {
			free(ds->branch);
			lv__vcache_free(ds->vcache);
			free(ds);
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
	free(enc);
	return path;
}

/* Is `branch` (the rest of the path after "/tree/") registered in <root>/_refs/branches? */
static bool branch_registered(const char *root, size_t rootlen, const char *branch)
{
	size_t n = strlen(branch);
	while (n && branch[n - 1] == '/')
		n--;
	if (n == 0)
		return false;
	char *probe = branch_file(branch, n);
	char *dir = lv__strndup(root, rootlen);
	bool ok = false;
	if (probe && dir) {
		lv_storage *st = NULL;
		lv_error e = { 0 };
		if (lv_storage_open(&st, dir, NULL, &e) == 0)
			ok = lv_storage_head(st, probe, NULL, NULL, &e) == 0;
		lv_storage_free(st);
	}
	free(probe);
	free(dir);
	return ok;
}

/*
 * "<root>/tree/<branch>" on local disk, where <root>'s _refs/branches
 * registers <branch>: open it as that branch, so tags (which live at the
 * root) apply.  Any other path is a dataset of its own, even under a
 * directory that happens to hold _versions/.  Returns the split position in
 * `path` or 0.
 */
static size_t detect_branch_path(const char *path)
{
	const char *p = path;
	if (!strncmp(p, "file://", 7))
		p += 7;
	if (strstr(p, "://"))
		return 0;
	for (const char *t = strstr(p, "/tree/"); t; t = strstr(t + 1, "/tree/")) {
		size_t rootlen = (size_t)(t - path);
		bool ok = t[6] && t[6] != '/' && branch_registered(p, (size_t)(t - p), t + 6);
		if (ok)
			return rootlen;
	}
	return 0;
}

static int ignore(const lv_list_entry *e, void *payload)
{
	(void)e;
	*(bool *)payload = true;
	return 1;
}

/* Does `st` hold anything under _versions/? */
static bool has_versions(lv_storage *st)
{
	bool any = false;
	lv_error e = { 0 };
	if (lv_storage_list_names(st, "_versions", ignore, &any, &e) < 0)
		return false;
	return any;
}

/* Could an object store map this URI's path to keys two ways (Lance 8 vs 12: non-ASCII,
 * spaces and the like percent-encoded, or '%' escapes decoded)? */
static bool two_key_mappings(const char *uri)
{
	const char *p = strstr(uri, "://");
	if (!p || !strncmp(uri, "file:", 5) || !strncmp(uri, "mem:", 4))
		return false;
	for (p += 3; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c <= 0x20 || c >= 0x7f || c == '%' || c == '"' || c == '<' || c == '>' ||
		    c == '`' || c == '{' || c == '}')
			return true;
	}
	return false;
}

/*
 * Opens the root store.  On an object store whose URI maps to keys two ways,
 * a dataset found only under Lance 8's keys (object_key_encoding=encoded) is
 * opened there; the default is Lance 12's (see objstore/uri.h).  An explicit
 * object_key_encoding option is obeyed as given.
 */
static int open_root(lv_storage **out, const char *uri, const lv_storage_options *so, lv_error *err)
{
	LV_TRY(lv_storage_open(out, uri, so, err));
	bool explicit_enc = false;
	size_t n = so && so->version >= 2 ? so->noptions : 0;
	for (size_t i = 0; i < n; i++)
		explicit_enc |= so->option_keys[i] && !strcasecmp(so->option_keys[i], "object_key_encoding");
	if (explicit_enc || !two_key_mappings(uri) || has_versions(*out))
		return 0;
	const char **k = lv__calloc(n + 1, sizeof *k), **v = lv__calloc(n + 1, sizeof *v);
	if (!k || !v) {
		free(k);
		free(v);
		return 0; /* keep the default mapping */
	}
	for (size_t i = 0; i < n; i++) {
		k[i] = so->option_keys[i];
		v[i] = so->option_values[i];
	}
	k[n] = "object_key_encoding";
	v[n] = "encoded";
	lv_storage_options alt = LV_STORAGE_OPTIONS_INIT;
	if (so) { /* the version-1 fields (a version-1 struct is shorter) */
		alt.s3_endpoint = so->s3_endpoint;
		alt.s3_region = so->s3_region;
		alt.s3_allow_http = so->s3_allow_http;
		alt.max_concurrency = so->max_concurrency;
	}
	alt.option_keys = k;
	alt.option_values = v;
	alt.noptions = n + 1;
	lv_storage *st8 = NULL;
	lv_error e = { 0 };
	if (lv_storage_open(&st8, uri, &alt, &e) == 0 && has_versions(st8)) {
		lv_storage_free(*out);
		*out = st8;
		st8 = NULL;
	}
	lv_storage_free(st8);
	free(k);
	free(v);
	return 0;
}

int lv_open_options_init(lv_open_options *o, int version)
{
	static const lv_open_options defaults = LV_OPEN_OPTIONS_INIT;
	return lv__struct_init("lv_open_options", o, sizeof *o, &defaults, version, LV_OPEN_OPTIONS_VERSION, LV_OPEN_OPTIONS_VERSION);
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
	const char *branch = opts ? opts->branch : NULL;
	char *root_uri = NULL, *auto_branch = NULL;
	size_t split = branch ? 0 : detect_branch_path(uri);
	if (split) {
		root_uri = lv__strndup(uri, split);
		auto_branch = lv__strdup(uri + split + 6);
		if (!root_uri || !auto_branch) {
			free(root_uri);
			free(auto_branch);
			return lv__err(err, LV_ENOMEM, "out of memory");
		}
		size_t n = strlen(auto_branch);
		while (n && auto_branch[n - 1] == '/')
			auto_branch[--n] = 0;
		branch = auto_branch;
	}
	lv_storage *st = NULL;
	int rc = open_root(&st, root_uri ? root_uri : uri, opts ? opts->storage : NULL, err);
	if (rc == 0) {
		rc = init_ds(out, st, true, branch, opts, err);
		if (rc < 0)
			lv_storage_free(st);
	}
	free(root_uri);
	free(auto_branch);
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

void lv_dataset_free(lv_dataset *ds)
{
	if (!ds)
		return;
	lv__warnlog_dispose(&ds->warnings);
	pthread_mutex_destroy(&ds->warn_mu);
	lv__vcache_free(ds->vcache);
	lv_storage_free(ds->owned_sub);
	lv_storage_free(ds->owned_root);
	free(ds->branch);
	free(ds);
}

lv_storage *lv_dataset_storage(lv_dataset *ds) { return ds ? ds->st : NULL; }

int lv_refs_load(lv_refs **out, lv_dataset *ds, lv_error *err)
{
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "lv_refs_load: NULL argument");
	*out = NULL;
	/* Refuse a directory that is not a dataset, rather than listing no tags. */
	lv__manifest_entry *e = NULL;
	size_t n = 0;
	LV_TRY(lv__list_manifests(ds->st, &e, &n, err));
	free(e);
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
	return lv__struct_init("lv_history_report", r, sizeof *r, NULL, version, LV_HISTORY_REPORT_VERSION, LV_HISTORY_REPORT_VERSION);
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

void lv__report_begin(lv_dataset *ds, lv_history_report *rep, lv_storage_stats *s0)
{
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
		free(file);
		return rc;
	}
	free(file);
	return lv__err(err, LV_ENOTFOUND, "%s: not a Lance dataset (no manifests in _versions/)",
		       lv_storage_describe(ds->st));
}
