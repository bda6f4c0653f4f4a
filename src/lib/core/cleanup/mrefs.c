/*
 * What each manifest references (data, deletion, index, transaction and
 * external files), collected by the one concurrent manifest reader.
 *
 * Invariants:
 *  - A referenced path is relative to the dataset root and can never leave
 *    it: an absolute path, a scheme, a backslash or a "."/".." segment makes
 *    the whole cleanup refuse.
 *  - A manifest that vanishes while cleanup reads it aborts the cleanup (a
 *    concurrent cleanup): nothing is deleted on a partial picture.
 */
#include "core/cleanup/cleanup_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/manifests.h"
#include "format/manifest.h"
#include "util/util.h"

/* ---- per-manifest reference collection ---- */

/* A path from a manifest, relative to the dataset root: refuse anything that could leave it. */
static bool safe_rel(const char *p, size_t n)
{
	if (n == 0 || n > LV__REF_PATH_MAX || p[0] == '/' || p[0] == '\\')
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

static int add_ref_key(lv__mref *m, const char *fmt_prefix, const char *p, size_t n,
		       lv__digest *out)
{
	if (!safe_rel(p, n))
		return lv__err(m->err, LV_ECORRUPT,
			       "manifest %s: file path '%.*s' would leave the dataset root; refusing to clean up",
			       m->path, (int)(n > 200 ? 200 : n), p);
	/* the digest is taken here, on the reading thread: the plan only inserts it */
	char key[LV__CLEANUP_KEY_MAX];
	size_t pl = strlen(fmt_prefix);
	memcpy(key, fmt_prefix, pl);
	memcpy(key + pl, p, n);
	lv__digest d = lv__strset_digest(key, pl + n);
	if (lv__dbuf_add(&m->refs, &d, sizeof d) < 0)
		return lv__err(m->err, LV_ENOMEM, "out of memory");
	if (out)
		*out = d;
	return 0;
}

static int add_ref(lv__mref *m, const char *fmt_prefix, const char *p, size_t n)
{
	return add_ref_key(m, fmt_prefix, p, n, NULL);
}

static int on_data(const lv__data_file_ref *f, void *payload)
{
	lv__mref *m = payload;
	/* Own files live under data/; a base_id file lives under another root (a branch's parent,
	 * a clone source).  In a branch's manifest, base_id files are the ones in *our* root:
	 * protect them all (over-protecting only ever keeps a file). */
	if (f->has_base_id != m->branch)
		return 0;
	return add_ref(m, "data/", f->path.p, f->path.n);
}

static int on_deletion(const lv__deletion_ref *d, void *payload)
{
	lv__mref *m = payload;
	if (d->has_base_id != m->branch)
		return 0;
	char name[96];
	int n = snprintf(name, sizeof name, "%" PRIu64 "-%" PRIu64 "-%" PRIu64 ".%s", d->fragment_id,
			 d->read_version, d->id, d->file_type == 1 ? "bin" : "arrow");
	return add_ref(m, "_deletions/", name, (size_t)n);
}

static int on_external(lv__sv path, void *payload)
{
	lv__mref *m = payload;
	if (m->branch)
		return 0;
	if (path.n >= 14 && !memcmp(path.p, "_transactions/", 14))
		m->txn_form = LV__TXN_OTHER; /* the own pass would not cover it (scan.c) */
	return add_ref(m, "", path.p, path.n);
}

static int on_index(const lv__index_ref *idx, void *payload)
{
	lv__mref *m = payload;
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

/*
 * Lance refuses to write to (or clean) a dataset whose manifest has writer flags it does not
 * know: they may mean files cleanup cannot see are in use (data overlay files, bit 6).
 */
static int unknown_writer_flags(const char *path, uint64_t flags, lv_error *err)
{
	uint64_t unknown = flags & ~(uint64_t)LV_WRITER_FLAGS_KNOWN;
	char bits[160];
	size_t n = 0;
	bits[0] = 0;
	for (int b = 0; b < 64 && n < sizeof bits - 8; b++)
		if (unknown >> b & 1)
			n += (size_t)snprintf(bits + n, sizeof bits - n, "%s%d", n ? ", " : "", b);
	return lv__err(err, LV_EUNSUPPORTED,
		       "manifest %s has writer feature flags lancever does not know (0x%" PRIx64
		       ": bit %s); refusing to clean up (Lance refuses to write to or clean such a "
		       "dataset)",
		       path, unknown, bits);
}

/* Collects one manifest's references (and, if wanted, its history row): a reader visitor. */
static int refs_visit(void *ctx, size_t chunk, size_t i, const char *path, const uint8_t *data,
		      size_t size, lv_error *err)
{
	(void)chunk;
	(void)path;
	lv__mrefs_job *j = ctx;
	lv__mref *m = &j->m[i];
	lv__manifest man;
	m->err = err;
	lv__manifest_visitor vis = { on_data, on_deletion, on_external, m };
	m->size = size;
	int rc = lv__manifest_parse(data, size, m->path, &vis, &man, err);
	if (rc == 0 && err->code < 0) /* a visitor refusal */
		rc = err->code;
	if (rc == 0 && (man.writer_flags & ~(uint64_t)LV_WRITER_FLAGS_KNOWN))
		rc = unknown_writer_flags(m->path, man.writer_flags, err);
	if (rc == 0) {
		m->version = man.version;
		m->writer_flags = man.writer_flags;
		m->ts_ms = lv__manifest_ts_millis(&man, NULL);
		long k = lv__manifest_indices(&man, m->path, on_index, m, err);
		if (k < 0)
			rc = err->code < 0 ? err->code : (int)k;
	}
	if (rc == 0 && man.transaction_file.n && !m->branch) {
		rc = add_ref_key(m, "_transactions/", man.transaction_file.p, man.transaction_file.n,
				 &m->txn.key);
		if (m->txn_form == LV__TXN_NONE)
			m->txn_form = lv__txn_name_parse(man.transaction_file.p, man.transaction_file.n,
							 &m->txn.name)
					      ? LV__TXN_LANCE
					      : LV__TXN_OTHER;
	}
	if (rc == 0 && man.transaction_file.n &&
	    memchr(man.transaction_file.p, '/', man.transaction_file.n))
		rc = lv__err(err, LV_ECORRUPT, "manifest %s: unsafe transaction_file name", m->path);
	m->err = NULL;
	/*
	 * The checkpoint written before anything is deleted needs this version's
	 * row; build it from the bytes in hand rather than have the checkpoint
	 * writer read the manifest again.  Best effort: on any failure (or a
	 * transaction in its own file) the writer reads the manifest itself.
	 */
	if (rc == 0 && m->want_info) {
		lv_error ie = { 0 };
		lv__mrow *r = lv__malloc(sizeof *r);
		if (r) {
			lv__arena_init(&r->arena, 512);
			if (lv__version_info_from_bytes(j->st, m->path, data, size, false, &r->arena,
							&r->info, &ie) == 0 &&
			    r->info.version == m->version) {
				m->row = r;
			} else {
				lv__arena_dispose(&r->arena);
				lv__free(r);
			}
		}
	}
	return rc;
}

int lv__mrefs_read(lv_dataset *ds, lv_storage *st, lv__mref *m, size_t n, lv_error *err)
{
	if (n == 0)
		return 0;
	const char **paths = lv__calloc(n, sizeof *paths);
	int *rcs = lv__calloc(n, sizeof *rcs);
	int rc = 0;
	if (!paths || !rcs)
		rc = lv__err(err, LV_ENOMEM, "out of memory");
	for (size_t i = 0; i < n && rc == 0; i++)
		paths[i] = m[i].path;
	lv__mrefs_job j = { st, m };
	if (rc == 0)
		rc = lv__manifests_each(st, ds->threads, paths, n,
					 lv__manifests_per_chunk(n, ds->threads), refs_visit, &j, rcs, err);
	/* A manifest gone while cleanup reads it: a concurrent cleanup; stop before deleting. */
	for (size_t i = 0; i < n && rc == 0; i++)
		if (rcs[i] == LV_ENOTFOUND)
			rc = lv__err(err, LV_EIO,
				     "manifest %s vanished during cleanup (a concurrent cleanup?); aborting",
				     m[i].path);
	lv__free(paths);
	lv__free(rcs);
	return rc;
}

int lv__mrefs_add_to(lv__strset *s, const lv__mref *m)
{
	for (size_t off = 0; off + sizeof(lv__digest) <= m->refs.len; off += sizeof(lv__digest)) {
		lv__digest d;
		memcpy(&d, m->refs.ptr + off, sizeof d);
		LV_TRY(lv__strset_add_digest(s, d));
	}
	return 0;
}

void lv__mrow_free(lv__mrow *r)
{
	if (r) {
		lv__arena_dispose(&r->arena);
		lv__free(r);
	}
}

void lv__mrefs_dispose(lv__mref *m, size_t n)
{
	for (size_t i = 0; m && i < n; i++) {
		lv__dbuf_dispose(&m[i].refs);
		lv__mrow_free(m[i].row);
	}
	lv__free(m);
}

/* What the one listing of _versions/ in lv__mrefs_of_newer keeps besides the versions. */
typedef struct newer_listing {
	lv__file_vec detached; /* _versions/d*.manifest */
	lv__file_vec *temps;   /* _versions/.tmp* (for the sweep; may be NULL) */
} newer_listing;

/* A listing callback keeping detached manifests and temporary files. */
static int collect_detached(const lv_list_entry *e, void *payload)
{
	newer_listing *nl = payload;
	const char *base = lv__basename(e->path);
	if (base[0] == 'd' && lv__ends_with(base, ".manifest"))
		return lv__collect_file(e, &nl->detached);
	if (nl->temps && !strncmp(base, ".tmp", 4))
		return lv__collect_file(e, nl->temps);
	return 0;
}

/* A listing callback keeping only manifests (_versions/ *.manifest, detached ones too). */
static int collect_manifest(const lv_list_entry *e, void *payload)
{
	return lv__ends_with(lv__basename(e->path), ".manifest") ? lv__collect_file(e, payload) : 0;
}

/* Is this listed path a version's manifest in some branch's _versions/? */
static bool branch_version_manifest(const char *path)
{
	const char *base = lv__basename(path);
	uint64_t v;
	size_t pl = strlen(path), bl = strlen(base);
	return lv__version_name_parse(base, &v) != LV_NAME_NONE && pl >= bl + 10 &&
	       !memcmp(path + pl - bl - 10, "_versions/", 10);
}

/*
 * Reads the manifests `fv` lists (paths relative to `st`) and keeps what they reference.
 * `branch`: only their base_id files concern us (a manifest of another lineage); else every
 * own file.  `versions_only`: skip what is not a version's manifest under a _versions/.
 */
static int keep_refs_of(lv_dataset *ds, lv_storage *st, const lv__file_vec *fv, bool branch,
			bool versions_only, lv__strset *referenced, lv_error *err)
{
	lv__mref *m = lv__calloc(fv->n ? fv->n : 1, sizeof *m);
	if (!m)
		return lv__err(err, LV_ENOMEM, "out of memory");
	size_t n = 0;
	for (size_t i = 0; i < fv->n; i++) {
		if (versions_only && !branch_version_manifest(fv->v[i].path))
			continue;
		m[n].path = fv->v[i].path;
		m[n].branch = branch;
		lv__dbuf_init(&m[n].refs, 0);
		n++;
	}
	int rc = lv__mrefs_read(ds, st, m, n, err);
	for (size_t i = 0; i < n && rc == 0; i++)
		if ((rc = lv__mrefs_add_to(referenced, &m[i])) < 0)
			lv__err(err, rc, "out of memory");
	lv__mrefs_dispose(m, n);
	return rc;
}

/* Lists `dir` of `st` with `cb` (recursively or not) and keeps what those manifests reference. */
static int keep_listed(lv_dataset *ds, lv_storage *st, const char *dir, bool recursive,
		       lv_list_cb cb, bool branch, bool versions_only, lv__strset *referenced,
		       lv_error *err)
{
	lv__file_vec fv = { 0 };
	int rc = recursive ? lv_storage_list(st, dir, true, cb, &fv, err)
			   : lv_storage_list_names(st, dir, cb, &fv, err);
	if (rc >= 0 && fv.rc < 0)
		rc = lv__err(err, fv.rc, "out of memory");
	if (rc >= 0)
		rc = keep_refs_of(ds, st, &fv, branch, versions_only, referenced, err);
	lv__file_vec_dispose(&fv);
	return rc < 0 ? rc : 0;
}

/*
 * Manifests that are not versions of the lineage being cleaned but may use its files, all
 * kept: every branch's (any tree/ ** /_versions/ *.manifest under the root: their base_id
 * files may be ours) and, when a branch is cleaned, every manifest of main too (base_id
 * files: a clone or rebase of main could point into the branch).  Over-protecting only ever
 * keeps a file.
 */
int lv__mrefs_of_others(lv_dataset *ds, lv__strset *referenced, lv_error *err)
{
	LV_TRY(keep_listed(ds, ds->root, "tree", true, lv__collect_file, true, true, referenced, err));
	if (ds->branch)
		LV_TRY(keep_listed(ds, ds->root, "_versions", false, collect_manifest, true, false,
				   referenced, err));
	return 0;
}

/* References of manifests committed after `latest` (concurrent writers) and of the lineage's
 * detached versions (_versions/d*.manifest), from one listing, added to `referenced`; the
 * same listing's temporary files (_versions/.tmp*) go to `temps` (may be NULL). */
int lv__mrefs_of_newer(lv_dataset *ds, uint64_t latest, lv__strset *referenced,
		       lv__file_vec *temps, lv__manifest_entry **listed, size_t *nlisted,
		       lv_error *err)
{
	lv__manifest_entry *e = NULL;
	size_t ne = 0;
	newer_listing nl = { { 0 }, temps };
	int rc = lv__manifests_list_with(ds->st, collect_detached, &nl, &e, &ne, err);
	if (rc >= 0 && (nl.detached.rc < 0 || (temps && temps->rc < 0)))
		rc = lv__err(err, LV_ENOMEM, "out of memory");
	if (rc >= 0)
		rc = keep_refs_of(ds, ds->st, &nl.detached, false, false, referenced, err);
	lv__file_vec_dispose(&nl.detached);
	if (rc < 0) {
		lv__free(e);
		return rc;
	}
	size_t first = ne;
	while (first > 0 && e[first - 1].version > latest)
		first--;
	size_t n = ne - first;
	const char **paths = NULL;
	char *block = NULL;
	lv__mref *m = n ? lv__calloc(n, sizeof *m) : NULL;
	if (n && (!m || lv__mpaths(e + first, n, &paths, &block) < 0))
		rc = lv__err(err, LV_ENOMEM, "out of memory");
	for (size_t i = 0; i < n && rc == 0; i++) {
		lv__dbuf_init(&m[i].refs, 0);
		m[i].path = paths[i];
	}
	if (rc == 0)
		rc = lv__mrefs_read(ds, ds->st, m, n, err);
	for (size_t i = 0; i < n && rc == 0; i++)
		if ((rc = lv__mrefs_add_to(referenced, &m[i])) < 0)
			lv__err(err, rc, "out of memory");
	lv__mrefs_dispose(m, n);
	lv__free(paths);
	lv__free(block);
	if (rc == 0 && listed) {
		*listed = e;
		*nlisted = ne;
	} else {
		lv__free(e);
	}
	return rc;
}
