/*
 * Tag and branch reference files.  Parsing is strict about the types of the
 * fields we use (a version that is a string, a float or negative is corruption,
 * not zero) and lenient about everything else (unknown keys are ignored, so
 * newer Lance releases that add fields keep working).
 */
#include "format/refs.h"
#include "util/util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lv_refs {
	lv_tag *tags;
	size_t ntags;
	lv_branch *branches;
	size_t nbranches;
	lv_refs_bad *bad; /* files skipped by a lenient load */
	size_t nbad, capbad;
	uint64_t tags_sig; /* lv__refs_listing_digest of the tags directory as it was listed */
};

/* ---- parsing ---- */

/* Loads a top-level JSON object; LV_ECORRUPT with jansson's position otherwise. */
static int load_object(const uint8_t *data, size_t size, const char *what, const char *name,
		       json_t **out, lv_error *err)
{
	*out = NULL;
	if (size > LV_REFS_FILE_MAX)
		return lv__err(err, LV_ELIMIT, "%s %s: %zu bytes exceed the %zu byte limit", what,
			       name, size, LV_REFS_FILE_MAX);
	json_error_t je;
	/* Duplicate keys would make the file mean different things to different readers. */
	json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return lv__err(err, LV_ECORRUPT, "%s %s: invalid JSON at line %d column %d: %s",
			       what, name, je.line, je.column, je.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return lv__err(err, LV_ECORRUPT, "%s %s: not a JSON object", what, name);
	}
	*out = root;
	return 0;
}

/*
 * A non-negative integer field.  Absent or null gives `dflt` unless required.
 * jansson refuses integers beyond INT64_MAX at parse time, so those are corrupt too.
 */
static int get_u64(json_t *obj, const char *key, bool required, uint64_t dflt, uint64_t *out,
		   const char *what, const char *name, lv_error *err)
{
	json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v)) {
		if (required)
			return lv__err(err, LV_ECORRUPT, "%s %s: missing \"%s\"", what, name, key);
		*out = dflt;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return lv__err(err, LV_ECORRUPT, "%s %s: \"%s\" must be a non-negative integer",
			       what, name, key);
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

int lv__version_hint_parse(const uint8_t *data, size_t size, const char *name, uint64_t *version,
			   lv_error *err)
{
	json_t *root;
	LV_TRY(load_object(data, size, "version hint", name, &root, err));
	int rc = get_u64(root, "version", true, 0, version, "version hint", name, err);
	json_decref(root);
	return rc;
}

/* An optional string field: absent or null gives NULL, else a malloc'ed copy. */
static int get_str(json_t *obj, const char *key, char **out, const char *what, const char *name,
		   lv_error *err)
{
	*out = NULL;
	json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return lv__err(err, LV_ECORRUPT, "%s %s: \"%s\" must be a string or null", what,
			       name, key);
	/* jansson rejects \u0000 by default, so the value is a proper C string. */
	*out = lv__strndup(json_string_value(v), json_string_length(v));
	if (!*out)
		return lv__err(err, LV_ENOMEM, "%s %s: out of memory", what, name);
	return 0;
}

void lv__tag_dispose(lv_tag *t)
{
	if (!t)
		return;
	free((char *)t->name);
	free((char *)t->branch);
	free((char *)t->created_at);
	free((char *)t->updated_at);
	free((char *)t->metadata);
	memset(t, 0, sizeof *t);
}

void lv__branch_dispose(lv_branch *b)
{
	if (!b)
		return;
	free((char *)b->name);
	free((char *)b->parent_branch);
	memset(b, 0, sizeof *b);
}

/* A copy of the ref's name in *out: 0, or LV_ENOMEM naming the `what` (tag, branch). */
static int dup_name(const char *what, const char *name, char **out, lv_error *err)
{
	if (!(*out = lv__strdup(name)))
		return lv__err(err, LV_ENOMEM, "%s %s: out of memory", what, name);
	return 0;
}

/* The tag's "metadata": absent or null gives "{}", an object its compact JSON text (keys
 * sorted), anything else LV_ECORRUPT (the tag is then skipped with a warning, as a tag that does
 * not parse). */
static int get_metadata(json_t *obj, char **out, const char *name, lv_error *err)
{
	json_t *v = json_object_get(obj, "metadata");
	if (v && !json_is_null(v) && !json_is_object(v))
		return lv__err(err, LV_ECORRUPT, "tag %s: \"metadata\" must be an object", name);
	*out = (v && json_is_object(v)) ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS)
					 : lv__strdup("{}");
	if (!*out)
		return lv__err(err, LV_ENOMEM, "tag %s: out of memory", name);
	return 0;
}

int lv__tag_parse(const uint8_t *data, size_t size, const char *name, lv_tag *out,
		  lv_error *err)
{
	memset(out, 0, sizeof *out);
	if (!name)
		name = "";
	json_t *root = NULL;
	char *branch = NULL, *created = NULL, *updated = NULL, *nm = NULL, *meta = NULL;
	int rc = load_object(data, size, "tag", name, &root, err);
	if (rc < 0)
		goto out;
	uint64_t version = 0, msize = 0;
	if ((rc = get_u64(root, "version", true, 0, &version, "tag", name, err)) < 0 ||
	    (rc = get_u64(root, "manifestSize", false, 0, &msize, "tag", name, err)) < 0 ||
	    (rc = get_str(root, "branch", &branch, "tag", name, err)) < 0 ||
	    (rc = get_str(root, "createdAt", &created, "tag", name, err)) < 0 ||
	    (rc = get_str(root, "updatedAt", &updated, "tag", name, err)) < 0 ||
	    (rc = get_metadata(root, &meta, name, err)) < 0 ||
	    (rc = dup_name("tag", name, &nm, err)) < 0)
		goto out;
	out->name = nm;
	out->branch = branch;
	out->version = version;
	out->manifest_size = msize;
	out->created_at = created;
	out->updated_at = updated;
	out->metadata = meta;
	nm = branch = created = updated = meta = NULL;
out:
	free(meta);
	free(nm);
	free(branch);
	free(created);
	free(updated);
	json_decref(root);
	return rc;
}

int lv__branch_parse(const uint8_t *data, size_t size, const char *name, lv_branch *out,
		     lv_error *err)
{
	memset(out, 0, sizeof *out);
	if (!name)
		name = "";
	json_t *root = NULL;
	char *parent = NULL, *nm = NULL;
	int rc = load_object(data, size, "branch", name, &root, err);
	if (rc < 0)
		goto out;
	uint64_t pver = 0, created = 0, msize = 0;
	if ((rc = get_u64(root, "parentVersion", true, 0, &pver, "branch", name, err)) < 0 ||
	    (rc = get_u64(root, "createAt", false, 0, &created, "branch", name, err)) < 0 ||
	    (rc = get_u64(root, "manifestSize", false, 0, &msize, "branch", name, err)) < 0 ||
	    (rc = get_str(root, "parentBranch", &parent, "branch", name, err)) < 0 ||
	    (rc = dup_name("branch", name, &nm, err)) < 0)
		goto out;
	out->name = nm;
	out->parent_branch = parent;
	out->parent_version = pver;
	out->create_at = (int64_t)created; /* <= INT64_MAX: jansson integers are signed */
	out->manifest_size = msize;
	nm = parent = NULL;
out:
	free(nm);
	free(parent);
	json_decref(root);
	return rc;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Bytes object_store's PathPart percent-encodes (its INVALID set, plus non-ASCII). */
static bool encoded_byte(unsigned c)
{
	return c < 0x20 || c >= 0x7f || (c && strchr("/\\{^}%`]\">[~<#|*?", (int)c));
}

char *lv__ref_name_decode(const char *stem, size_t n)
{
	char *s = lv__malloc(n + 1);
	if (!s)
		return NULL;
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		int hi = stem[i] == '%' && i + 2 < n ? hexval(stem[i + 1]) : -1;
		int lo = hi >= 0 ? hexval(stem[i + 2]) : -1;
		unsigned c = lo >= 0 ? (unsigned)(hi * 16 + lo) : 0;
		if (lo >= 0 && c != 0 && encoded_byte(c)) {
			s[j++] = (char)c;
			i += 2;
		} else {
			s[j++] = stem[i];
		}
	}
	s[j] = 0;
	return s;
}

char *lv__ref_name_encode(const char *name, size_t n)
{
	char *s = lv__malloc(3 * n + 1);
	if (!s)
		return NULL;
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned c = (unsigned char)name[i];
		if (c && encoded_byte(c)) {
			s[j++] = '%';
			s[j++] = "0123456789ABCDEF"[c >> 4];
			s[j++] = "0123456789ABCDEF"[c & 15];
		} else {
			s[j++] = (char)c;
		}
	}
	s[j] = 0;
	return s;
}

/* ---- branch names ---- */

/* "invalid branch name 'NAME': WHY" (LV_EINVALID); the name cut at 200 bytes. */
static int bad_name(const char *name, size_t n, const char *why, lv_error *err)
{
	return lv__err(err, LV_EINVALID, "invalid branch name '%.*s': %s", (int)(n < 200 ? n : 200),
		       name, why);
}

/* One segment (between '/'s): Unicode alphanumerics, '.', '-', '_'; not "." (a path step). */
static int check_segment(const char *name, size_t n, const char *seg, size_t len, lv_error *err)
{
	if (len == 1 && seg[0] == '.')
		return bad_name(name, n, "a segment is '.'", err);
	for (size_t i = 0; i < len;) {
		uint32_t cp = 0;
		size_t l = lv__utf8_decode(seg + i, len - i, &cp);
		if (l == 0)
			return bad_name(name, n, "not valid UTF-8", err);
		if (!(cp == '.' || cp == '-' || cp == '_' || lv__unicode_alnum(cp))) {
			char why[96];
			snprintf(why, sizeof why, "U+%04X is not alphanumeric, '.', '-' or '_' (what "
				 "Lance allows in a segment)", (unsigned)cp);
			return bad_name(name, n, why, err);
		}
		i += l;
	}
	return 0;
}

int lv__branch_name_check(const char *name, size_t n, lv_error *err)
{
	static const char lock[] = ".lock";
	const size_t nlock = sizeof lock - 1;
	if (n == 0)
		return bad_name(name, n, "empty", err);
	if (n > LV_BRANCH_NAME_MAX)
		return bad_name(name, n, "longer than 1024 bytes (LV_BRANCH_NAME_MAX)", err);
	if (name[0] == '/' || name[n - 1] == '/')
		return bad_name(name, n, "starts or ends with '/'", err);
	if (memchr(name, '\\', n))
		return bad_name(name, n, "contains '\\'", err);
	if (n >= nlock && !memcmp(name + n - nlock, lock, nlock))
		return bad_name(name, n, "ends with '.lock'", err);
	for (size_t i = 0; i + 1 < n; i++) {
		if (name[i] == '/' && name[i + 1] == '/')
			return bad_name(name, n, "contains '//'", err);
		if (name[i] == '.' && name[i + 1] == '.')
			return bad_name(name, n, "contains '..'", err);
	}
	for (size_t start = 0; start < n;) {
		const char *slash = memchr(name + start, '/', n - start);
		size_t end = slash ? (size_t)(slash - name) : n;
		LV_TRY(check_segment(name, n, name + start, end - start, err));
		start = end + 1;
	}
	return 0;
}

/* ---- loading ---- */

typedef struct namevec {
	char **v;
	size_t n, cap;
	int rc;
	uint64_t sig; /* every listed entry's lv__refs_entry_digest, summed */
} namevec;

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
	return h * 0xBF58476D1CE4E5B9ull;
}

uint64_t lv__refs_entry_digest(const lv_list_entry *e)
{
	uint64_t s = 1469598103934665603ull;
	for (const char *p = e->path; *p; p++)
		s = (s ^ (uint8_t)*p) * 1099511628211ull;
	return mix(mix(s, e->size), (uint64_t)e->mtime_ms);
}

/* Collects "*.json" file names (with a non-empty stem) of one directory. */
static int collect_json(const lv_list_entry *e, void *payload)
{
	namevec *nv = payload;
	nv->sig += lv__refs_entry_digest(e); /* order-independent: a sum */
	/* listed paths are relative to the storage root: keep the file name only */
	const char *name = lv__basename(e->path);
	size_t len = strlen(name);
	if (len <= 5 || strcmp(name + len - 5, ".json") != 0)
		return 0;
	char **v = lv__grow(nv->v, &nv->cap, nv->n, sizeof *v, 16);
	if (!v) {
		nv->rc = LV_ENOMEM;
		return 1;
	}
	nv->v = v;
	if (!(nv->v[nv->n] = lv__strdup(name))) {
		nv->rc = LV_ENOMEM;
		return 1;
	}
	nv->n++;
	return 0;
}

static void namevec_free(namevec *nv)
{
	for (size_t i = 0; i < nv->n; i++)
		free(nv->v[i]);
	free(nv->v);
}

static int list_names(lv_storage *st, const char *dir, namevec *nv, lv_error *err)
{
	int rc = lv_storage_list(st, dir, false, collect_json, nv, err);
	if (nv->rc < 0)
		return lv__err(err, nv->rc, "list %s: out of memory", dir);
	return rc < 0 ? rc : 0;
}

/*
 * Reads dir/file (at most LV_REFS_FILE_MAX + 1 bytes, so an oversize file is
 * detected without reading all of it).  Returns 1 if the file vanished.
 */
static int read_ref(lv_storage *st, const char *path, lv_buf *buf, lv_error *err)
{
	int rc = lv_storage_read_range(st, path, 0, (uint64_t)LV_REFS_FILE_MAX + 1, buf, err);
	if (rc == LV_ENOTFOUND)
		return 1; /* deleted since the listing (a concurrent tag delete) */
	if (rc < 0)
		return rc;
	if (buf->size > LV_REFS_FILE_MAX) {
		lv_buf_dispose(buf);
		return lv__err(err, LV_ELIMIT, "%s: larger than the %zu byte limit for ref files",
			       path, LV_REFS_FILE_MAX);
	}
	return 0;
}

static int cmp_tag(const void *a, const void *b)
{
	return strcmp(((const lv_tag *)a)->name, ((const lv_tag *)b)->name);
}

static int cmp_branch(const void *a, const void *b)
{
	return strcmp(((const lv_branch *)a)->name, ((const lv_branch *)b)->name);
}

/* Parses one ref file into `slot`; `stem` is the file name without ".json" (NUL-terminated). */
typedef int (*ref_parse_fn)(const uint8_t *data, size_t size, const char *stem, void *slot,
			    lv_error *err);

/* A tag (an lv_tag slot) or a branch (lv_branch) named by its decoded file name. */
static int parse_ref_slot(const uint8_t *data, size_t size, const char *stem, void *slot, bool tag,
			  lv_error *err)
{
	char *name = lv__ref_name_decode(stem, strlen(stem));
	if (!name)
		return lv__err(err, LV_ENOMEM, "%s: out of memory",
			       tag ? LV_REFS_TAGS_DIR : LV_REFS_BRANCHES_DIR);
	int rc = tag ? lv__tag_parse(data, size, name, slot, err)
		     : lv__branch_parse(data, size, name, slot, err);
	free(name);
	return rc;
}

static int parse_tag_slot(const uint8_t *data, size_t size, const char *stem, void *slot,
			  lv_error *err)
{
	return parse_ref_slot(data, size, stem, slot, true, err);
}

static int parse_branch_slot(const uint8_t *data, size_t size, const char *stem, void *slot,
			     lv_error *err)
{
	return parse_ref_slot(data, size, stem, slot, false, err);
}

/*
 * Lists `dir`, reads and parses every *.json into an array of `elem`-byte
 * slots (*arr, *count), sorted with `cmp`.  A file that vanished since the
 * listing is skipped; any other failure names the file.  *arr is set as soon
 * as it is allocated, so on failure the caller disposes the *count parsed slots.
 */
typedef struct ref_reads {
	lv_storage *st;
	const char *dir;
	char **names;
	lv_buf *bufs;
	int *rcs;
	lv_error *errs;
} ref_reads;

static void read_one_ref(size_t i, void *arg)
{
	ref_reads *r = arg;
	char *path = lv__sprintf("%s/%s", r->dir, r->names[i]);
	r->rcs[i] = path ? read_ref(r->st, path, &r->bufs[i], &r->errs[i])
			 : lv__err(&r->errs[i], LV_ENOMEM, "%s: out of memory", r->dir);
	free(path);
}

/* Records a file a lenient load skipped.  Only out of memory fails. */
static int add_bad(lv_refs *r, int kind, const char *dir, const char *name, const lv_error *e)
{
	lv_refs_bad *nv = lv__grow(r->bad, &r->capbad, r->nbad, sizeof *nv, 4);
	if (!nv)
		return LV_ENOMEM;
	r->bad = nv;
	lv_refs_bad *b = &r->bad[r->nbad];
	b->kind = kind;
	b->path = lv__sprintf("%s/%s", dir, name);
	b->message = lv__strdup(e->message[0] ? e->message : "unreadable");
	if (!b->path || !b->message) {
		free(b->path);
		free(b->message);
		return LV_ENOMEM;
	}
	r->nbad++;
	return 0;
}

/* With `lenient` (non-NULL), a file that cannot be read or parsed is recorded there and skipped. */
static int load_dir(lv_storage *st, const char *dir, size_t elem, ref_parse_fn parse,
		    int (*cmp)(const void *, const void *), int threads, void **arr, size_t *count,
		    lv_refs *lenient, int bad_kind, uint64_t *sig, lv_error *err)
{
	namevec nv = { 0 };
	ref_reads rr = { st, dir, NULL, NULL, NULL, NULL };
	int rc = list_names(st, dir, &nv, err);
	*sig = nv.sig;
	if (rc < 0 || nv.n == 0)
		goto out;
	rr.names = nv.v;
	rr.bufs = lv__calloc(nv.n, sizeof *rr.bufs);
	rr.rcs = lv__calloc(nv.n, sizeof *rr.rcs);
	rr.errs = lv__calloc(nv.n, sizeof *rr.errs);
	if (!(*arr = lv__calloc(nv.n, elem)) || !rr.bufs || !rr.rcs || !rr.errs) {
		rc = lv__err(err, LV_ENOMEM, "%s: out of memory", dir);
		goto out;
	}
	/* The files are read at once (on an object store each read is a round trip), then parsed in order. */
	lv__parallel_for(nv.n, threads, read_one_ref, &rr);
	for (size_t i = 0; i < nv.n; i++) {
		if (rr.rcs[i] < 0 && rr.rcs[i] != LV_ENOMEM && lenient) {
			if ((rc = add_bad(lenient, bad_kind, dir, nv.v[i], &rr.errs[i])) < 0) {
				rc = lv__err(err, rc, "%s: out of memory", dir);
				goto out;
			}
			continue;
		}
		if (rr.rcs[i] < 0) {
			rc = rr.rcs[i];
			if (err)
				*err = rr.errs[i];
			goto out;
		}
		if (rr.rcs[i] == 1)
			continue; /* deleted since the listing */
		nv.v[i][strlen(nv.v[i]) - 5] = 0; /* strip ".json" */
		rc = parse(rr.bufs[i].ptr, rr.bufs[i].size, nv.v[i], (char *)*arr + *count * elem, err);
		if (rc < 0 && rc != LV_ENOMEM && lenient) {
			lv_error pe = *err;
			char *full = lv__sprintf("%s.json", nv.v[i]);
			rc = full ? add_bad(lenient, bad_kind, dir, full, &pe) : LV_ENOMEM;
			free(full);
			if (rc < 0) {
				rc = lv__err(err, rc, "%s: out of memory", dir);
				goto out;
			}
			continue;
		}
		if (rc < 0) {
			rc = lv__err_prefix(err, rc, "%s/%s.json", dir, nv.v[i]);
			goto out;
		}
		(*count)++;
	}
	if (*count > 1)
		qsort(*arr, *count, elem, cmp);
out:
	for (size_t i = 0; rr.bufs && i < nv.n; i++)
		lv_buf_dispose(&rr.bufs[i]);
	free(rr.bufs);
	free(rr.rcs);
	free(rr.errs);
	namevec_free(&nv);
	return rc;
}

/* Tags and branches: two directories, loaded at once when threads > 1. */
typedef struct ref_dirs {
	lv_storage *st;
	int threads;
	lv_refs *lenient[2];
	void *tags, *branches;
	size_t ntags, nbranches;
	int rc[2];
	lv_error err[2];
	uint64_t sig[2];
} ref_dirs;

static void load_one_dir(size_t i, void *arg)
{
	ref_dirs *d = arg;
	if (i == 0)
		d->rc[0] = load_dir(d->st, LV_REFS_TAGS_DIR, sizeof(lv_tag), parse_tag_slot, cmp_tag,
				    d->threads, &d->tags, &d->ntags, d->lenient[0], LV_WARN_TAG_UNREADABLE,
				    &d->sig[0], &d->err[0]);
	else
		d->rc[1] = load_dir(d->st, LV_REFS_BRANCHES_DIR, sizeof(lv_branch), parse_branch_slot,
				    cmp_branch, d->threads, &d->branches, &d->nbranches, d->lenient[1],
				    LV_WARN_BRANCH_UNREADABLE, &d->sig[1], &d->err[1]);
}

static int refs_load(lv_refs **out, lv_storage *st, int threads, bool lenient, lv_error *err)
{
	if (!out)
		return lv__err(err, LV_EINVALID, "refs: NULL output");
	*out = NULL;
	if (!st)
		return lv__err(err, LV_EINVALID, "refs: NULL storage");
	lv_refs *r = lv__calloc(1, sizeof *r);
	if (!r)
		return lv__err(err, LV_ENOMEM, "refs: out of memory");
	ref_dirs d;
	memset(&d, 0, sizeof d);
	d.st = st;
	d.threads = threads > 1 ? threads : 1;
	/* Tags and branches are recorded apart (they load concurrently), then joined. */
	lv_refs side = { 0 };
	if (lenient) {
		d.lenient[0] = r;
		d.lenient[1] = &side;
	}
	lv__parallel_for(2, d.threads > 1 ? 2 : 1, load_one_dir, &d);
	r->tags = d.tags;
	r->ntags = d.ntags;
	r->tags_sig = d.sig[0];
	r->branches = d.branches;
	r->nbranches = d.nbranches;
	int k = d.rc[0] < 0 ? 0 : d.rc[1] < 0 ? 1 : -1;
	for (size_t i = 0; i < side.nbad; i++) {
		lv_refs_bad *nv = k < 0 ? lv__grow(r->bad, &r->capbad, r->nbad, sizeof *nv, 4) : NULL;
		if (nv) {
			r->bad = nv;
			r->bad[r->nbad++] = side.bad[i];
		} else {
			free(side.bad[i].path);
			free(side.bad[i].message);
			if (k < 0) {
				k = 1;
				d.rc[1] = lv__err(&d.err[1], LV_ENOMEM, "refs: out of memory");
			}
		}
	}
	free(side.bad);
	if (k >= 0) {
		if (err)
			*err = d.err[k];
		lv_refs_free(r);
		return d.rc[k];
	}
	*out = r;
	return 0;
}

int lv__refs_load_storage_conc(lv_refs **out, lv_storage *st, int threads, lv_error *err)
{
	return refs_load(out, st, threads, false, err);
}

int lv__refs_load_lenient(lv_refs **out, lv_storage *st, int threads, lv_error *err)
{
	return refs_load(out, st, threads, true, err);
}

uint64_t lv__refs_tags_sig(const lv_refs *r) { return r ? r->tags_sig : 0; }

size_t lv_refs_unreadable_count(const lv_refs *r) { return r ? r->nbad : 0; }

const lv_refs_bad *lv_refs_unreadable(const lv_refs *r, size_t i)
{
	return r && i < r->nbad ? &r->bad[i] : NULL;
}

int lv__refs_load_storage(lv_refs **out, lv_storage *st, lv_error *err)
{
	return lv__refs_load_storage_conc(out, st, 1, err);
}

size_t lv_refs_tag_count(const lv_refs *r) { return r ? r->ntags : 0; }

const lv_tag *lv_refs_tag(const lv_refs *r, size_t i)
{
	return r && i < r->ntags ? &r->tags[i] : NULL;
}

size_t lv_refs_branch_count(const lv_refs *r) { return r ? r->nbranches : 0; }

const lv_branch *lv_refs_branch(const lv_refs *r, size_t i)
{
	return r && i < r->nbranches ? &r->branches[i] : NULL;
}

void lv_refs_free(lv_refs *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ntags; i++)
		lv__tag_dispose(&r->tags[i]);
	for (size_t i = 0; i < r->nbranches; i++)
		lv__branch_dispose(&r->branches[i]);
	for (size_t i = 0; i < r->nbad; i++) {
		free(r->bad[i].path);
		free(r->bad[i].message);
	}
	free(r->bad);
	free(r->tags);
	free(r->branches);
	free(r);
}
