/*
 * The tag and branch loader: lists _refs/tags and _refs/branches through the storage
 * handle, reads every *.json file (at once, on the thread pool, as each read is a round
 * trip on an object store) and parses them with format/refs.c, in listing order.  The
 * two steps can be taken apart (lv__refs_list, then lv__refs_read_listed), so that a
 * reader lists the refs with its other first-round listings and reads the files with
 * its second-round reads (issue 30 §4: two round trips on an object store).
 *
 * Invariants: tags and branches come out sorted by name; a file that vanished between
 * listing and reading is skipped; a strict load fails on any other bad file (naming
 * it), a lenient one records it (lv_refs_unreadable) and goes on.  Only out of memory
 * and listing failures fail a lenient load.
 */
#include "core/refs.h"
#include "storage/subdirs.h"
#include "util/util.h"

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
	uint64_t tags_sig; /* the sum of lv__refs_entry_digest over the tags directory as listed */
};

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
		lv__free(nv->v[i]);
	lv__free(nv->v);
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
	lv__free(name);
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
	char *path = lv__join2(r->dir, r->names[i]);
	r->rcs[i] = path ? read_ref(r->st, path, &r->bufs[i], &r->errs[i])
			 : lv__err(&r->errs[i], LV_ENOMEM, "%s: out of memory", r->dir);
	lv__free(path);
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
	b->path = lv__join2(dir, name);
	b->message = lv__strdup(e->message[0] ? e->message : "unreadable");
	if (!b->path || !b->message) {
		lv__free(b->path);
		lv__free(b->message);
		return LV_ENOMEM;
	}
	r->nbad++;
	return 0;
}

/* With `lenient` (non-NULL), a file that cannot be read or parsed is recorded there and skipped.
 * `nv`: the directory as listed (its names are consumed: ".json" is stripped in place). */
static int read_dir(lv_storage *st, const char *dir, namevec *nv, size_t elem, ref_parse_fn parse,
		    int (*cmp)(const void *, const void *), int threads, void **arr, size_t *count,
		    lv_refs *lenient, int bad_kind, lv_error *err)
{
	ref_reads rr = { st, dir, NULL, NULL, NULL, NULL };
	int rc = 0;
	if (nv->n == 0)
		goto out;
	rr.names = nv->v;
	rr.bufs = lv__calloc(nv->n, sizeof *rr.bufs);
	rr.rcs = lv__calloc(nv->n, sizeof *rr.rcs);
	rr.errs = lv__calloc(nv->n, sizeof *rr.errs);
	if (!(*arr = lv__calloc(nv->n, elem)) || !rr.bufs || !rr.rcs || !rr.errs) {
		rc = lv__err(err, LV_ENOMEM, "%s: out of memory", dir);
		goto out;
	}
	/* The files are read at once (on an object store each read is a round trip), then parsed in order. */
	lv__parallel_for(nv->n, threads, read_one_ref, &rr);
	for (size_t i = 0; i < nv->n; i++) {
		if (rr.rcs[i] < 0 && rr.rcs[i] != LV_ENOMEM && lenient) {
			if ((rc = add_bad(lenient, bad_kind, dir, nv->v[i], &rr.errs[i])) < 0) {
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
		nv->v[i][strlen(nv->v[i]) - 5] = 0; /* strip ".json" */
		rc = parse(rr.bufs[i].ptr, rr.bufs[i].size, nv->v[i], (char *)*arr + *count * elem, err);
		if (rc < 0 && rc != LV_ENOMEM && lenient) {
			lv_error pe = *err;
			char *full = lv__sprintf("%s.json", nv->v[i]);
			rc = full ? add_bad(lenient, bad_kind, dir, full, &pe) : LV_ENOMEM;
			lv__free(full);
			if (rc < 0) {
				rc = lv__err(err, rc, "%s: out of memory", dir);
				goto out;
			}
			continue;
		}
		if (rc < 0) {
			rc = lv__err_prefix(err, rc, "%s/%s.json", dir, nv->v[i]);
			goto out;
		}
		(*count)++;
	}
	if (*count > 1)
		qsort(*arr, *count, elem, cmp);
out:
	for (size_t i = 0; rr.bufs && i < nv->n; i++)
		lv_buf_dispose(&rr.bufs[i]);
	lv__free(rr.bufs);
	lv__free(rr.rcs);
	lv__free(rr.errs);
	return rc;
}

/* The two directories as listed (the first round of a load). */
struct lv__refs_listing {
	lv_storage *st;
	int threads;
	namevec nv[2]; /* tags, branches */
	int rc[2];
	lv_error err[2];
};

static const char *const ref_dir[2] = { LV_REFS_TAGS_DIR, LV_REFS_BRANCHES_DIR };
static const char *const ref_sub[2] = { "tags", "branches" }; /* of "_refs" */

void lv__refs_listing_free(lv__refs_listing *l)
{
	if (!l)
		return;
	namevec_free(&l->nv[0]);
	namevec_free(&l->nv[1]);
	lv__free(l);
}

int lv__refs_list(lv__refs_listing **out, lv_storage *st, int threads, lv_error *err)
{
	*out = NULL;
	if (!st)
		return lv__err(err, LV_EINVALID, "refs: NULL storage");
	lv__refs_listing *l = lv__calloc(1, sizeof *l);
	if (!l)
		return lv__err(err, LV_ENOMEM, "refs: out of memory");
	l->st = st;
	l->threads = threads > 1 ? threads : 1;
	/* both directories at once: on local disk a missing _refs/ is found missing once */
	void *const payloads[2] = { &l->nv[0], &l->nv[1] };
	int rc = lv__storage_list_subdirs(st, "_refs", ref_sub, 2, l->threads, collect_json, payloads,
					  l->rc, l->err, err);
	if (rc < 0) {
		lv__refs_listing_free(l);
		return rc;
	}
	for (int i = 0; i < 2; i++) {
		if (l->nv[i].rc < 0)
			l->rc[i] = lv__err(&l->err[i], l->nv[i].rc, "list %s: out of memory", ref_dir[i]);
		else if (l->rc[i] > 0)
			l->rc[i] = 0;
	}
	int k = l->rc[0] < 0 ? 0 : l->rc[1] < 0 ? 1 : -1;
	if (k >= 0) {
		rc = l->rc[k];
		if (err)
			*err = l->err[k];
		lv__refs_listing_free(l);
		return rc;
	}
	*out = l;
	return 0;
}

uint64_t lv__refs_listing_sig(const lv__refs_listing *l) { return l ? l->nv[0].sig : 0; }

/* Tags and branches: the two directories' files read at once when threads > 1. */
typedef struct ref_dirs {
	lv__refs_listing *l;
	lv_refs *lenient[2];
	void *tags, *branches;
	size_t ntags, nbranches;
	int rc[2];
	lv_error err[2];
} ref_dirs;

static void read_one_dir(size_t i, void *arg)
{
	ref_dirs *d = arg;
	lv__refs_listing *l = d->l;
	if (i == 0)
		d->rc[0] = read_dir(l->st, LV_REFS_TAGS_DIR, &l->nv[0], sizeof(lv_tag), parse_tag_slot,
				    cmp_tag, l->threads, &d->tags, &d->ntags, d->lenient[0],
				    LV_WARN_TAG_UNREADABLE, &d->err[0]);
	else
		d->rc[1] = read_dir(l->st, LV_REFS_BRANCHES_DIR, &l->nv[1], sizeof(lv_branch),
				    parse_branch_slot, cmp_branch, l->threads, &d->branches,
				    &d->nbranches, d->lenient[1], LV_WARN_BRANCH_UNREADABLE, &d->err[1]);
}

int lv__refs_read_listed(lv_refs **out, lv__refs_listing *l, bool lenient, lv_error *err)
{
	*out = NULL;
	lv_refs *r = lv__calloc(1, sizeof *r);
	if (!r)
		return lv__err(err, LV_ENOMEM, "refs: out of memory");
	ref_dirs d;
	memset(&d, 0, sizeof d);
	d.l = l;
	/* Tags and branches are recorded apart (they load concurrently), then joined. */
	lv_refs side = { 0 };
	if (lenient) {
		d.lenient[0] = r;
		d.lenient[1] = &side;
	}
	lv__parallel_for(2, l->threads > 1 ? 2 : 1, read_one_dir, &d);
	r->tags = d.tags;
	r->ntags = d.ntags;
	r->tags_sig = l->nv[0].sig;
	r->branches = d.branches;
	r->nbranches = d.nbranches;
	int k = d.rc[0] < 0 ? 0 : d.rc[1] < 0 ? 1 : -1;
	for (size_t i = 0; i < side.nbad; i++) {
		lv_refs_bad *nv = k < 0 ? lv__grow(r->bad, &r->capbad, r->nbad, sizeof *nv, 4) : NULL;
		if (nv) {
			r->bad = nv;
			r->bad[r->nbad++] = side.bad[i];
		} else {
			lv__free(side.bad[i].path);
			lv__free(side.bad[i].message);
			if (k < 0) {
				k = 1;
				d.rc[1] = lv__err(&d.err[1], LV_ENOMEM, "refs: out of memory");
			}
		}
	}
	lv__free(side.bad);
	if (k >= 0) {
		if (err)
			*err = d.err[k];
		lv_refs_free(r);
		return d.rc[k];
	}
	*out = r;
	return 0;
}

static int refs_load(lv_refs **out, lv_storage *st, int threads, bool lenient, lv_error *err)
{
	if (!out)
		return lv__err(err, LV_EINVALID, "refs: NULL output");
	*out = NULL;
	lv__refs_listing *l = NULL;
	LV_TRY(lv__refs_list(&l, st, threads, err));
	int rc = lv__refs_read_listed(out, l, lenient, err);
	lv__refs_listing_free(l);
	return rc;
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
		lv__free(r->bad[i].path);
		lv__free(r->bad[i].message);
	}
	lv__free(r->bad);
	lv__free(r->tags);
	lv__free(r->branches);
	lv__free(r);
}
