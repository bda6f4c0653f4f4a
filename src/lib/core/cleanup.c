/*
 * lv_cleanup(): Lance's cleanup rules, checkpoint first.
 *
 * Phases: read every manifest of the dataset (and of every branch under
 * tree/, for the root files they use) -> plan old vs kept -> write the
 * checkpoint marking the old versions cleaned up -> delete files that no kept
 * manifest references, by Lance's age rules -> delete the old manifests.
 * Anything unreadable before the first deletion aborts with nothing changed.
 */
#include "lancever/cleanup.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint/checkpoint_internal.h"
#include "core/dataset.h"
#include "core/manifests.h"
#include "core/versions.h"
#include "core/vlist.h"
#include "format/manifest.h"
#include "format/refs.h"
#include "util/util.h"

const char *lv_file_kind_name(int kind)
{
	static const char *const names[LV_KIND_COUNT] = { "manifest", "data", "deletion",
							  "index", "transaction", "temp" };
	return kind >= 0 && kind < LV_KIND_COUNT ? names[kind] : "?";
}

/* ---- a set of strings (open addressing, owned copies) ---- */

typedef struct strset {
	char **slot;
	size_t cap, n;
} strset;

static uint64_t hash_str(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

static bool strset_has_n(const strset *s, const char *k, size_t n)
{
	if (!s->cap)
		return false;
	for (size_t i = hash_str(k, n) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		const char *x = s->slot[i];
		if (!x)
			return false;
		if (strlen(x) == n && !memcmp(x, k, n))
			return true;
	}
}

static bool strset_has(const strset *s, const char *k) { return strset_has_n(s, k, strlen(k)); }

static int strset_add(strset *s, const char *k)
{
	size_t n = strlen(k);
	if (strset_has_n(s, k, n))
		return 0;
	if ((s->n + 1) * 2 > s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 1024;
		char **ns = lv__calloc(nc, sizeof *ns);
		if (!ns)
			return LV_ENOMEM;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->slot[i])
				continue;
			size_t j = hash_str(s->slot[i], strlen(s->slot[i])) & (nc - 1);
			while (ns[j])
				j = (j + 1) & (nc - 1);
			ns[j] = s->slot[i];
		}
		free(s->slot);
		s->slot = ns;
		s->cap = nc;
	}
	size_t i = hash_str(k, n) & (s->cap - 1);
	while (s->slot[i])
		i = (i + 1) & (s->cap - 1);
	if (!(s->slot[i] = lv__strndup(k, n)))
		return LV_ENOMEM;
	s->n++;
	return 0;
}

static void strset_dispose(strset *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->slot[i]);
	free(s->slot);
	memset(s, 0, sizeof *s);
}

/* ---- per-manifest reference collection ---- */

/* A path from a manifest, relative to the dataset root: refuse anything that could leave it. */
static bool safe_rel(const char *p, size_t n)
{
	if (n == 0 || n > 4000 || p[0] == '/' || p[0] == '\\')
		return false;
	for (size_t i = 0; i < n; i++)
		if (p[i] == 0 || p[i] == '\\' || (p[i] == ':' && i + 2 < n && p[i + 1] == '/' && p[i + 2] == '/'))
			return false;
	/* no "." or ".." segment */
	size_t s = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || p[i] == '/') {
			size_t l = i - s;
			if (l == 0 || (l == 1 && p[s] == '.') || (l == 2 && p[s] == '.' && p[s + 1] == '.'))
				return false;
			s = i + 1;
		}
	}
	return true;
}

/* A version's history row built from the manifest bytes cleanup reads anyway. */
typedef struct mrow {
	lv_version_info info;
	lv_arena arena; /* info's strings */
} mrow;

typedef struct mref {
	const char *path;   /* manifest path */
	bool branch;        /* a branch's manifest: only its base_id files concern the root */
	uint64_t version;
	int64_t ts_ms;
	uint64_t size;
	lv_dbuf refs;       /* NUL-separated root-relative paths ("_indices/<uuid>" for indices) */
	int rc;
	lv_error *err;      /* while reading: the reader's own; afterwards a copy only if rc < 0 */
	bool want_info;     /* a version of main: also build its history row (for the checkpoint) */
	struct mrow *row;   /* that row, when built (not for a transaction in _transactions/) */
} mref;

static int add_ref(mref *m, const char *fmt_prefix, const char *p, size_t n)
{
	if (!safe_rel(p, n))
		return lv__err(m->err, LV_ECORRUPT,
			       "manifest %s: file path '%.*s' would leave the dataset root; refusing to clean up",
			       m->path, (int)(n > 200 ? 200 : n), p);
	if (lv_dbuf_adds(&m->refs, fmt_prefix) < 0 || lv_dbuf_add(&m->refs, p, n) < 0 ||
	    lv_dbuf_addc(&m->refs, 0) < 0)
		return lv__err(m->err, LV_ENOMEM, "out of memory");
	return 0;
}

static int on_data(const lv_data_file_ref *f, void *payload)
{
	mref *m = payload;
	/* Own files live under data/; a base_id file lives under another root (a branch's parent,
	 * a clone source).  In a branch's manifest, base_id files are the ones in *our* root:
	 * protect them all (over-protecting only ever keeps a file). */
	if (f->has_base_id != m->branch)
		return 0;
	return add_ref(m, "data/", f->path.p, f->path.n);
}

static int on_deletion(const lv_deletion_ref *d, void *payload)
{
	mref *m = payload;
	if (d->has_base_id != m->branch)
		return 0;
	char name[96];
	int n = snprintf(name, sizeof name, "%" PRIu64 "-%" PRIu64 "-%" PRIu64 ".%s", d->fragment_id,
			 d->read_version, d->id, d->file_type == 1 ? "bin" : "arrow");
	return add_ref(m, "_deletions/", name, (size_t)n);
}

static int on_external(lv_sv path, void *payload)
{
	mref *m = payload;
	return m->branch ? 0 : add_ref(m, "", path.p, path.n);
}

static int on_index(const lv_index_ref *idx, void *payload)
{
	mref *m = payload;
	if (idx->has_base_id != m->branch)
		return 0;
	char u[40];
	const uint8_t *b = idx->uuid;
	int n = snprintf(u, sizeof u,
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
			 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
			 b[13], b[14], b[15]);
	return add_ref(m, "_indices/", u, (size_t)n);
}

static void read_refs(size_t i, void *arg)
{
	mref *m = &((mref *)((void **)arg)[0])[i];
	lv_storage *st = ((void **)arg)[1];
	lv_buf b = { 0 };
	lv_manifest man;
	lv_manifest_visitor vis = { on_data, on_deletion, on_external, m };
	lv_error e = { 0 };
	m->err = &e; /* a 512-byte message per manifest is kept only if it failed */
	m->rc = lv_storage_read(st, m->path, &b, m->err);
	if (m->rc == LV_ENOTFOUND)
		m->rc = lv__err(m->err, LV_EIO,
				"manifest %s vanished during cleanup (a concurrent cleanup?); aborting", m->path);
	if (m->rc < 0)
		goto out;
	m->size = b.size;
	m->rc = lv__manifest_parse(b.ptr, b.size, m->path, &vis, &man, m->err);
	if (m->rc == 0 && m->err->code < 0) /* a visitor refusal */
		m->rc = m->err->code;
	if (m->rc == 0) {
		m->version = man.version;
		m->ts_ms = lv__manifest_ts_millis(&man, NULL);
		long k = lv__manifest_indices(&man, m->path, on_index, m, m->err);
		if (k < 0)
			m->rc = m->err->code < 0 ? m->err->code : (int)k;
	}
	if (m->rc == 0 && man.transaction_file.n && !m->branch)
		m->rc = add_ref(m, "_transactions/", man.transaction_file.p, man.transaction_file.n);
	if (m->rc == 0 && man.transaction_file.n &&
	    memchr(man.transaction_file.p, '/', man.transaction_file.n))
		m->rc = lv__err(m->err, LV_ECORRUPT, "manifest %s: unsafe transaction_file name", m->path);
	/*
	 * The checkpoint written before anything is deleted needs this version's
	 * row; build it from the bytes in hand rather than have the checkpoint
	 * writer read the manifest again.  Best effort: on any failure (or a
	 * transaction in its own file) the writer reads the manifest itself.
	 */
	if (m->rc == 0 && m->want_info) {
		lv_error ie = { 0 };
		mrow *r = malloc(sizeof *r);
		if (r) {
			lv_arena_init(&r->arena, 512);
			if (lv__version_info_from_bytes(st, m->path, b.ptr, b.size, false, &r->arena,
							&r->info, &ie) == 0 &&
			    r->info.version == m->version) {
				m->row = r;
			} else {
				lv_arena_dispose(&r->arena);
				free(r);
			}
		}
	}
out:
	lv_buf_dispose(&b);
	m->err = NULL;
	if (m->rc < 0 && (m->err = malloc(sizeof *m->err)) != NULL)
		*m->err = e;
}

/* ---- listing ---- */

typedef struct file_ent {
	char *path;
	uint64_t size;
	int64_t mtime_ms;
} file_ent;

typedef struct file_vec {
	file_ent *v;
	size_t n, cap;
	int rc;
} file_vec;

static int collect_file(const lv_list_entry *e, void *payload)
{
	file_vec *fv = payload;
	file_ent *nv = lv__grow(fv->v, &fv->cap, fv->n, sizeof *nv, 256);
	if (!nv) {
		fv->rc = LV_ENOMEM;
		return 1;
	}
	fv->v = nv;
	if (!(fv->v[fv->n].path = lv__strdup(e->path))) {
		fv->rc = LV_ENOMEM;
		return 1;
	}
	fv->v[fv->n].size = e->size;
	fv->v[fv->n].mtime_ms = e->mtime_ms;
	fv->n++;
	return 0;
}

static void file_vec_dispose(file_vec *fv)
{
	for (size_t i = 0; i < fv->n; i++)
		free(fv->v[i].path);
	free(fv->v);
	memset(fv, 0, sizeof *fv);
}

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !memcmp(s + a - b, suf, b);
}

/* ---- the cleanup ---- */

typedef struct plan {
	mref *m;            /* dataset manifests, sorted by version */
	size_t nm;
	bool *old;          /* per manifest */
	strset referenced;  /* by kept manifests (and branches) */
	strset verified;    /* by old manifests: known committed */
} plan;

static int cmp_mref(const void *a, const void *b)
{
	const mref *x = a, *y = b;
	return x->version < y->version ? -1 : x->version > y->version;
}

static void progress(const lv_cleanup_policy *p, const char *phase, uint64_t done, uint64_t total)
{
	if (p->on_progress)
		p->on_progress(phase, done, total, p->payload);
}

/* Reads manifests concurrently; fails with the first error (lowest index). */
static int read_all(lv_dataset *ds, mref *m, size_t n, lv_error *err)
{
	void *arg[2] = { m, ds->root };
	lv_parallel_for(n, ds->threads, read_refs, arg);
	for (size_t i = 0; i < n; i++)
		if (m[i].rc < 0) {
			if (err) {
				if (m[i].err)
					*err = *m[i].err;
				else
					lv__err(err, m[i].rc, "manifest %s: out of memory", m[i].path);
			}
			return m[i].rc;
		}
	return 0;
}

static int add_refs_to(strset *s, const mref *m)
{
	for (size_t off = 0; off < m->refs.len;) {
		const char *p = (const char *)m->refs.ptr + off;
		LV_TRY(strset_add(s, p));
		off += strlen(p) + 1;
	}
	return 0;
}

static void mrefs_dispose(mref *m, size_t n)
{
	for (size_t i = 0; m && i < n; i++) {
		lv_dbuf_dispose(&m[i].refs);
		if (m[i].row) {
			lv_arena_dispose(&m[i].row->arena);
			free(m[i].row);
		}
		free((char *)m[i].path);
		free(m[i].err);
	}
	free(m);
}

/*
 * Manifests that are not versions of this dataset but may use its files:
 * every branch's (any tree/ ** /_versions/ *.manifest: their base_id files are
 * ours) and detached versions (_versions/d*.manifest).  Their references are
 * all kept.
 */
static int other_refs(lv_dataset *ds, strset *referenced, lv_error *err)
{
	file_vec fv = { 0 };
	int rc = lv_storage_list(ds->root, "tree", true, collect_file, &fv, err);
	size_t nbranch = fv.n;
	if (rc >= 0 && fv.rc == 0)
		rc = lv_storage_list_names(ds->root, "_versions", collect_file, &fv, err);
	if (rc >= 0 && fv.rc < 0)
		rc = lv__err(err, fv.rc, "out of memory");
	mref *m = NULL;
	size_t n = 0;
	if (rc < 0)
		goto out;
	m = lv__calloc(fv.n ? fv.n : 1, sizeof *m);
	if (!m) {
		rc = lv__err(err, LV_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < fv.n; i++) {
		const char *base = lv__basename(fv.v[i].path);
		uint64_t v;
		size_t pl = strlen(fv.v[i].path), bl = strlen(base);
		bool branch = i < nbranch;
		if (branch ? lv__version_name_parse(base, &v) == LV_NAME_NONE || pl < bl + 10 ||
				     memcmp(fv.v[i].path + pl - bl - 10, "_versions/", 10)
			   : base[0] != 'd' || !ends_with(base, ".manifest"))
			continue;
		m[n].path = fv.v[i].path;
		fv.v[i].path = NULL;
		m[n].branch = branch;
		lv_dbuf_init(&m[n].refs, 0);
		n++;
	}
	if ((rc = read_all(ds, m, n, err)) < 0)
		goto out;
	for (size_t i = 0; i < n && rc == 0; i++)
		if ((rc = add_refs_to(referenced, &m[i])) < 0)
			lv__err(err, rc, "out of memory");
out:
	mrefs_dispose(m, n);
	file_vec_dispose(&fv);
	return rc;
}

static int ignore_entry(const lv_list_entry *e, void *payload)
{
	(void)e;
	(void)payload;
	return 0;
}

/* References of manifests committed after `latest` (concurrent writers), added to `referenced`. */
static int newer_refs(lv_dataset *ds, uint64_t latest, strset *referenced, lv_error *err)
{
	lv_manifest_entry *e = NULL;
	size_t ne = 0;
	int rc = lv__list_manifests(ds->st, &e, &ne, err);
	if (rc < 0)
		return rc;
	size_t first = ne;
	while (first > 0 && e[first - 1].version > latest)
		first--;
	size_t n = ne - first;
	mref *m = n ? lv__calloc(n, sizeof *m) : NULL;
	if (n && !m) {
		free(e);
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		lv_dbuf_init(&m[i].refs, 0);
		if (!(m[i].path = lv__strdup(e[first + i].path)))
			rc = lv__err(err, LV_ENOMEM, "out of memory");
	}
	if (rc == 0)
		rc = read_all(ds, m, n, err);
	for (size_t i = 0; i < n && rc == 0; i++)
		if ((rc = add_refs_to(referenced, &m[i])) < 0)
			lv__err(err, rc, "out of memory");
	mrefs_dispose(m, n);
	free(e);
	return rc;
}

/* Deletions are queued and sent in batches (one DeleteObjects request per 1000 on S3). */
#define DEL_BATCH 1000

typedef struct deleter {
	lv_dataset *ds;
	const lv_cleanup_policy *p;
	lv_cleanup_stats *s;
	const char *path[DEL_BATCH];
	int kind[DEL_BATCH];
	uint64_t size[DEL_BATCH];
	int rcs[DEL_BATCH];
	size_t n;
} deleter;

static int del_flush(deleter *d, lv_error *err)
{
	if (!d->n)
		return 0;
	int rc = d->p->dry_run ? 0 : lv_storage_delete_many(d->ds->root, d->path, d->n, d->rcs, err);
	for (size_t i = 0; i < d->n; i++) {
		/* LV_ENOTFOUND: already gone (a concurrent cleanup) */
		if (d->p->dry_run || d->rcs[i] == 0 || d->rcs[i] == LV_ENOTFOUND) {
			d->s->files_removed[d->kind[i]]++;
			d->s->bytes_removed[d->kind[i]] += d->size[i];
		}
	}
	d->n = 0;
	return rc;
}

/* `path` must stay valid until the next flush. */
static int remove_file(deleter *d, const char *path, int kind, uint64_t size, const char *reason,
		       lv_error *err)
{
	if (d->p->on_file)
		d->p->on_file(path, kind, size, reason, d->p->payload);
	d->path[d->n] = path;
	d->kind[d->n] = kind;
	d->size[d->n] = size;
	d->n++;
	return d->n == DEL_BATCH ? del_flush(d, err) : 0;
}

/* Which rule a listed file falls under; -1 = never touched by the listing pass. */
static int classify(const char *path, char *key, size_t cap)
{
	snprintf(key, cap, "%s", path);
	if (!strncmp(path, "data/", 5))
		return ends_with(path, ".lance") ? LV_KIND_DATA : -1;
	if (!strncmp(path, "_deletions/", 11))
		return ends_with(path, ".arrow") || ends_with(path, ".bin") ? LV_KIND_DELETION : -1;
	if (!strncmp(path, "_transactions/", 14))
		return ends_with(path, ".txn") ? LV_KIND_TRANSACTION : -1;
	if (!strncmp(path, "_indices/", 9)) {
		const char *u = path + 9, *slash = strchr(u, '/');
		if (!slash || slash == u)
			return -1;
		snprintf(key, cap, "_indices/%.*s", (int)(slash - u), u);
		return LV_KIND_INDEX;
	}
	if (!strncmp(path, "_versions/", 10)) {
		const char *b = path + 10;
		/* rename-commit temp manifests: "<n>.manifest-<uuid>" or ".tmp*" */
		if (!strchr(b, '/') && (!strncmp(b, ".tmp", 4) || strstr(b, ".manifest-")))
			return LV_KIND_TEMP;
		return -1;
	}
	return -1;
}

int lv_cleanup(lv_dataset *ds, const lv_cleanup_policy *pol, lv_cleanup_stats *stats,
	       lv_error *err)
{
	if (!ds || !pol)
		return lv__err(err, LV_EINVALID, "lv_cleanup: NULL argument");
	if (ds->branch)
		return lv__err(err, LV_EUNSUPPORTED, "cleanup of a branch is not supported (clean main)");
	if (pol->older_than_ms < -1 || pol->retain_versions == 0 || pol->retain_versions < -1)
		return lv__err(err, LV_EINVALID, "cleanup: invalid policy (older_than >= 0, retain_versions >= 1)");
	lv_cleanup_stats s;
	memset(&s, 0, sizeof s);
	deleter *del = calloc(1, sizeof *del);
	if (!del)
		return lv__err(err, LV_ENOMEM, "out of memory");
	del->ds = ds;
	del->p = pol;
	del->s = &s;
	int64_t now = pol->now_ms ? pol->now_ms : lv_now_ms();
	int64_t older = pol->older_than_ms;
	if (older < 0 && pol->retain_versions < 0 && pol->before_version == 0)
		older = LV_CLEANUP_DEFAULT_OLDER_THAN_MS;

	plan P;
	memset(&P, 0, sizeof P);
	lv_manifest_entry *live = NULL;
	size_t nlive = 0;
	lv_refs *refs = NULL;
	uint64_t *cleaned = NULL;
	const lv_version_info **pre = NULL;
	file_vec fv = { 0 };
	lv_dbuf tagmsg;
	lv_dbuf_init(&tagmsg, 0);
	int rc;

	/* 1. Tags and branches (refs errors abort: a tag we cannot read may protect a version). */
	if ((rc = lv__refs_load_storage(&refs, ds->root, err)) < 0)
		goto out;
	/*
	 * Every branch's manifests must be visible: the recursive listing of tree/
	 * skips a branch directory that is a symlink (or unreadable), and its
	 * manifests may use our files.  Listing each branch's _versions/ directly
	 * fails on such a path (the local backend never crosses a symlink).
	 */
	for (size_t b = 0; b < lv_refs_branch_count(refs); b++) {
		char bp[LV_ERROR_MESSAGE_MAX];
		snprintf(bp, sizeof bp, "tree/%s/_versions", lv_refs_branch(refs, b)->name);
		if ((rc = lv_storage_list_names(ds->root, bp, ignore_entry, NULL, err)) < 0) {
			char why[LV_ERROR_MESSAGE_MAX];
			snprintf(why, sizeof why, "%s", err ? err->message : "");
			rc = lv__err(err, rc, "branch %s cannot be read (%s); refusing to clean up",
				     lv_refs_branch(refs, b)->name, why);
			goto out;
		}
	}
	/* 2. Every manifest, read concurrently; any failure aborts. */
	progress(pol, "reading manifests", 0, 0);
	if ((rc = lv__list_manifests(ds->st, &live, &nlive, err)) < 0)
		goto out;
	if (nlive == 0) {
		rc = lv__err(err, LV_ENOTFOUND, "%s: not a Lance dataset (no manifests in _versions/)",
			     lv_storage_describe(ds->st));
		goto out;
	}
	P.nm = nlive;
	P.m = lv__calloc(nlive, sizeof *P.m);
	P.old = lv__calloc(nlive, sizeof *P.old);
	cleaned = lv__calloc(nlive, sizeof *cleaned);
	if (!P.m || !P.old || !cleaned) {
		rc = lv__err(err, LV_ENOMEM, "out of memory");
		goto out;
	}
	/*
	 * Rows for the checkpoint step are built only for versions newer than the
	 * newest checkpoint's name: it normally holds the older ones already, and
	 * a million rows built for nothing cost ~0.8 KB each.  If that file turns
	 * out unusable, the checkpoint step reads what it lacks, as without rows.
	 * A dry run writes no checkpoint and builds none.
	 */
	uint64_t cp_newest = 0;
	lv_error ce = { 0 };
	if (!pol->dry_run && lv__checkpoint_newest_name(ds->st, &cp_newest, &ce) < 0)
		cp_newest = 0;
	for (size_t i = 0; i < nlive; i++) {
		P.m[i].path = lv__strdup(live[i].path);
		P.m[i].want_info = !pol->dry_run && live[i].version > cp_newest;
		lv_dbuf_init(&P.m[i].refs, 0);
		if (!P.m[i].path) {
			rc = lv__err(err, LV_ENOMEM, "out of memory");
			goto out;
		}
	}
	if ((rc = read_all(ds, P.m, P.nm, err)) < 0)
		goto out;
	qsort(P.m, P.nm, sizeof *P.m, cmp_mref);
	s.versions_total = P.nm;
	progress(pol, "reading manifests", P.nm, P.nm);

	/* 3. Plan: old = selected by every set condition, not latest, not tagged, not a branch base. */
	uint64_t latest = P.m[P.nm - 1].version;
	uint64_t retain_before = 0;
	if (pol->retain_versions > 0)
		retain_before = (size_t)pol->retain_versions >= P.nm
					? P.m[0].version
					: P.m[P.nm - (size_t)pol->retain_versions].version;
	size_t ntagged_old = 0, nold = 0;
	for (size_t i = 0; i < P.nm; i++) {
		const mref *m = &P.m[i];
		bool sel = m->version < latest;
		if (older >= 0)
			sel = sel && m->ts_ms < now - older;
		if (pol->before_version)
			sel = sel && m->version < pol->before_version;
		if (pol->retain_versions > 0)
			sel = sel && m->version < retain_before;
		if (!sel)
			continue;
		bool tagged = false;
		for (size_t t = 0; t < lv_refs_tag_count(refs); t++) {
			const lv_tag *tg = lv_refs_tag(refs, t);
			if (tg->version == m->version && (!tg->branch || !strcmp(tg->branch, "main"))) {
				tagged = true;
				lv_dbuf_printf(&tagmsg, "%s\"%s\": %" PRIu64, tagmsg.len ? ", " : "",
					       tg->name, tg->version);
			}
		}
		bool branch_base = false;
		for (size_t b = 0; b < lv_refs_branch_count(refs); b++) {
			const lv_branch *br = lv_refs_branch(refs, b);
			if ((!br->parent_branch || !strcmp(br->parent_branch, "main")) &&
			    br->parent_version == m->version)
				branch_base = true;
		}
		if (tagged)
			ntagged_old++;
		if (tagged || branch_base)
			continue;
		P.old[i] = true;
		cleaned[nold++] = m->version;
	}
	if (ntagged_old && pol->error_if_tagged_old_versions) {
		rc = lv__err(err, LV_ETAGGED,
			     "%zu tagged version(s) have been marked for cleanup. Either set "
			     "error_if_tagged_old_versions=false or delete the following tag(s) to enable "
			     "cleanup: {%.300s}",
			     ntagged_old, tagmsg.ptr ? (const char *)tagmsg.ptr : "");
		goto out;
	}
	/* referenced: kept manifests + every branch's manifests; verified: old manifests */
	int64_t earliest_kept = INT64_MAX;
	bool suffix = true, seen_kept = false;
	for (size_t i = 0; i < P.nm; i++) {
		if (P.old[i]) {
			if (seen_kept)
				suffix = false;
			rc = add_refs_to(&P.verified, &P.m[i]);
		} else {
			seen_kept = true;
			if (P.m[i].ts_ms < earliest_kept)
				earliest_kept = P.m[i].ts_ms;
			rc = add_refs_to(&P.referenced, &P.m[i]);
		}
		if (rc < 0) {
			lv__err(err, rc, "out of memory");
			goto out;
		}
	}
	if ((rc = other_refs(ds, &P.referenced, err)) < 0)
		goto out;
	/* Files to consider (listed before anything is deleted). */
	static const char *const dirs[] = { "_versions", "_transactions", "data", "_indices", "_deletions" };
	for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
		rc = lv_storage_list(ds->root, dirs[d], true, collect_file, &fv, err);
		if (rc >= 0 && fv.rc < 0)
			rc = lv__err(err, fv.rc, "out of memory");
		if (rc < 0)
			goto out;
	}
	/*
	 * Commits that landed since the manifests were read may own files in that
	 * listing: read the manifests now newer than our latest and keep what
	 * they reference.
	 */
	if ((rc = newer_refs(ds, latest, &P.referenced, err)) < 0)
		goto out;

	/* 4. Checkpoint first: the old versions' history is recorded before anything goes. */
	if (!pol->dry_run && nold) {
		lv_checkpoint_result cr;
		progress(pol, "writing checkpoint", 0, 1);
		/* P.m is sorted by version: so are the rows built while reading it. */
		if (!(pre = lv__calloc(P.nm, sizeof *pre))) {
			rc = lv__err(err, LV_ENOMEM, "out of memory");
			goto out;
		}
		size_t npre = 0;
		for (size_t i = 0; i < P.nm; i++)
			if (P.m[i].row)
				pre[npre++] = &P.m[i].row->info;
		if ((rc = lv__checkpoint_write_pre(ds, &pol->checkpoint, cleaned, nold, pre, npre, &cr,
						   err)) < 0)
			goto out;
		s.checkpoint_written = cr.written;
		s.versions_archived = cr.written ? cr.entries : 0;
		snprintf(s.checkpoint_path, sizeof s.checkpoint_path, "%s", cr.written ? cr.path : "");
	}

	/* 5. Unreferenced files, by Lance's rules. */
	for (size_t i = 0; i < fv.n; i++) {
		const file_ent *f = &fv.v[i];
		char key[4200];
		int kind = classify(f->path, key, sizeof key);
		if (kind < 0)
			continue;
		progress(pol, "removing unreferenced files", i + 1, fv.n);
		/*
		 * Only files older than every kept manifest, when the kept set is a
		 * suffix.  File systems stamp mtimes from a coarse clock (a file
		 * written just after a commit can look milliseconds older than it),
		 * so files no old manifest mentions get a margin.
		 */
		bool known = strset_has(&P.verified, key);
		if (suffix && f->mtime_ms > earliest_kept - (known ? 0 : LV_CLEANUP_MTIME_SLACK_MS))
			continue;
		bool in_progress = !pol->delete_unverified && f->mtime_ms >= now - LV_CLEANUP_UNVERIFIED_MS;
		const char *reason;
		if (kind == LV_KIND_TEMP) {
			if (in_progress)
				continue;
			reason = "stale temporary manifest";
		} else if (strset_has(&P.referenced, key)) {
			continue;
		} else if (known) {
			reason = "referenced only by removed versions";
		} else if (!in_progress) {
			reason = pol->delete_unverified ? "unreferenced (delete_unverified)"
							: "unreferenced and older than 7 days";
		} else {
			continue;
		}
		if ((rc = remove_file(del, f->path, kind, f->size, reason, err)) < 0)
			goto out;
	}
	if ((rc = del_flush(del, err)) < 0)
		goto out;
	/*
	 * 6. Old manifests last.  Deleting them before their files would make an
	 * interrupted run leak those files for good: a rerun no longer knows they
	 * were committed (verified), and the age cutoff may then protect them.
	 * Kept versions are complete in either order; the old ones are already
	 * recorded as cleaned up by the checkpoint.
	 */
	for (size_t i = 0, k = 0; i < P.nm; i++) {
		if (!P.old[i])
			continue;
		progress(pol, "removing old manifests", ++k, nold);
		if ((rc = remove_file(del, P.m[i].path, LV_KIND_MANIFEST, P.m[i].size, "old version",
				      err)) < 0)
			goto out;
		s.versions_removed++;
	}
	if ((rc = del_flush(del, err)) < 0)
		goto out;

	progress(pol, "done", 1, 1);
	rc = 0;
out:
	if (stats)
		*stats = s;
	lv_refs_free(refs);
	free(live);
	free(cleaned);
	free(pre);
	mrefs_dispose(P.m, P.nm);
	free(P.old);
	strset_dispose(&P.referenced);
	strset_dispose(&P.verified);
	file_vec_dispose(&fv);
	lv_dbuf_dispose(&tagmsg);
	free(del);
	return rc;
}
