/*
 * Manifests: listing _versions/, turning one manifest into its version
 * record, and the concurrent reader every caller uses.
 *
 * Invariants:
 *  - A listed manifest is identified by its name (V1 or V2 scheme); a
 *    version present under both names is read once (V2).
 *  - A manifest that vanishes between listing and reading is LV_ENOTFOUND:
 *    skipped and recorded by the caller, never an error.
 */
#include "core/manifests.h"

#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/fetch.h"
#include "core/vlist.h"
#include "format/manifest.h"
#include "util/util.h"

/* A transaction file larger than this is refused (Lance's are a few KB). */
#define LV__TXN_MAX ((uint64_t)64 << 20)
/* ---- listing ---- */

typedef struct list_ctx {
	lv__manifest_entry *v;
	size_t n, cap;
	int rc;
	lv_list_cb other; /* every other name listed (may be NULL) */
	void *other_payload;
} list_ctx;

/* Writes v in decimal, `width` digits with leading zeros (0: as many as it takes), two
 * digits at a time. */
static char *put_dec(char *p, uint64_t v, int width)
{
	static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
				       "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
				       "8081828384858687888990919293949596979899";
	char d[24];
	int n = 24;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		d[--n] = pairs[2 * r + 1];
		d[--n] = pairs[2 * r];
	}
	if (v >= 10) {
		d[--n] = pairs[2 * v + 1];
		d[--n] = pairs[2 * v];
	} else {
		d[--n] = (char)('0' + v);
	}
	while (24 - n < width)
		d[--n] = '0';
	memcpy(p, d + n, (size_t)(24 - n));
	return p + (24 - n);
}

const char *lv__mpath(const lv__manifest_entry *e, char *buf)
{
	/* hand-written: versions() writes one path per live version */
	memcpy(buf, "_versions/", 10);
	char *p = e->scheme == LV_NAME_V2 ? put_dec(buf + 10, UINT64_MAX - e->version, 20)
					  : put_dec(buf + 10, e->version, 0);
	memcpy(p, ".manifest", 10);
	return buf;
}

const char *lv__mpath_after(const lv__manifest_entry *e, const lv__manifest_entry *pe,
			    const char *prev, char *buf)
{
	if (e->scheme != LV_NAME_V2 || !prev || !pe || pe->scheme != LV_NAME_V2 ||
	    e->version != pe->version + 1)
		return lv__mpath(e, buf);
	memcpy(buf, prev, LV__MPATH_V2);
	char *d = buf + 10 + 19; /* the last digit */
	while (d > buf + 10 && *d == '0')
		*d-- = '9';
	if (*d == '0') /* all zeros: no number below (cannot happen after a version) */
		return lv__mpath(e, buf);
	(*d)--;
	return buf;
}

int lv__mpaths(const lv__manifest_entry *e, size_t n, const char ***paths, char **block)
{
	*paths = lv__calloc(n ? n : 1, sizeof **paths);
	*block = lv__malloc((n ? n : 1) * LV__MPATH);
	if (!*paths || !*block) {
		lv__free(*paths);
		lv__free(*block);
		*paths = NULL;
		*block = NULL;
		return LV_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		(*paths)[i] = lv__mpath(&e[i], *block + i * LV__MPATH);
	return 0;
}

/* Appends (version, scheme) to the listing; 1 (stop) when out of memory. */
static int add_entry(list_ctx *c, uint64_t version, int scheme)
{
	if (c->n == c->cap) {
		lv__manifest_entry *nv = lv__grow(c->v, &c->cap, c->n, sizeof *nv, 64);
		if (!nv) {
			c->rc = LV_ENOMEM;
			return 1;
		}
		c->v = nv;
	}
	c->v[c->n++] = (lv__manifest_entry){ version, scheme };
	return 0;
}

static int list_cb(const lv_list_entry *e, void *payload)
{
	list_ctx *c = payload;
	uint64_t version;
	size_t n = strlen(e->path);
	/* the usual name, "_versions/<20 digits>.manifest" (V2), read without the general parse
	 * below (which gives the same answer for it): one per listed manifest */
	if (n == 39 && !memcmp(e->path, "_versions/", 10) && !memcmp(e->path + 30, ".manifest", 9) &&
	    lv__parse_u64(e->path + 10, 20, &version))
		return add_entry(c, UINT64_MAX - version, LV_NAME_V2);
	const char *base = memrchr(e->path, '/', n);
	int scheme = lv__version_name_parse(base ? base + 1 : e->path, &version);
	if (scheme == LV_NAME_NONE || n >= LV__MPATH)
		return c->other ? c->other(e, c->other_payload) : 0;
	/* only the canonical spelling of a name (lv__mpath writes it back exactly): a V1 name has
	 * no leading zero, and the listing is of _versions/ itself */
	const char *name = base ? base + 1 : e->path;
	if ((scheme == LV_NAME_V1 && name[0] == '0' && name[1] != '.') || !base ||
	    base != e->path + 9 || memcmp(e->path, "_versions", 9))
		return c->other ? c->other(e, c->other_payload) : 0;
	return add_entry(c, version, scheme);
}

static int cmp_entry(const void *a, const void *b)
{
	const lv__manifest_entry *x = a, *y = b;
	if (x->version != y->version)
		return x->version < y->version ? -1 : 1;
	return y->scheme - x->scheme; /* V2 first */
}

/*
 * Versions usually form one contiguous run [min, min+n): then each entry's
 * place is version - min, an O(n) sort.  Returns false (array untouched) if
 * they do not, or if one version appears twice (both schemes).
 */
static bool place_contiguous(lv__manifest_entry *v, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < n; i++) {
		lo = v[i].version < lo ? v[i].version : lo;
		hi = v[i].version > hi ? v[i].version : hi;
	}
	if (hi - lo != n - 1)
		return false;
	lv__manifest_entry *tmp = lv__malloc(n * sizeof *tmp);
	bool *seen = lv__calloc(n, sizeof *seen);
	bool ok = tmp && seen;
	for (size_t i = 0; ok && i < n; i++) {
		size_t k = (size_t)(v[i].version - lo);
		ok = !seen[k];
		seen[k] = true;
		tmp[k] = v[i];
	}
	if (ok)
		memcpy(v, tmp, n * sizeof *tmp);
	lv__free(tmp);
	lv__free(seen);
	return ok;
}

int lv__manifests_list(lv_storage *st, lv__manifest_entry **out, size_t *n, lv_error *err)
{
	return lv__manifests_list_with(st, NULL, NULL, out, n, err);
}

int lv__manifests_list_with(lv_storage *st, lv_list_cb other, void *payload,
			    lv__manifest_entry **out, size_t *n, lv_error *err)
{
	list_ctx c = { 0 };
	c.other = other;
	c.other_payload = payload;
	/* Names only: a manifest's size comes with its read, so no stat per entry. */
	int rc = lv_storage_list_names(st, "_versions", list_cb, &c, err);
	if (rc >= 0 && c.rc < 0)
		rc = lv__err(err, c.rc, "out of memory listing _versions");
	if (rc < 0) {
		lv__free(c.v);
		return rc;
	}
	*out = c.v;
	*n = lv__entries_sort_fold(c.v, c.n);
	return 0;
}

size_t lv__entries_sort_fold(lv__manifest_entry *v, size_t n)
{
	if (n > 1 && !place_contiguous(v, n))
		qsort(v, n, sizeof *v, cmp_entry);
	/* Fold a version present under both schemes (mid-migration): keep the V2 name. */
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (w == 0 || v[w - 1].version != v[i].version)
			v[w++] = v[i];
	return w;
}

int lv__read_newest_info(lv_storage *st, lv__arena *arena, lv_version_info *info,
			 uint64_t *version, lv_error *err)
{
	lv__manifest_entry *e = NULL;
	size_t n = 0;
	*version = 0;
	LV_TRY(lv__manifests_list(st, &e, &n, err));
	int rc = 0;
	if (n) {
		char path[LV__MPATH];
		*version = e[n - 1].version;
		rc = lv__read_version_info(st, lv__mpath(&e[n - 1], path), arena, info, err);
	}
	lv__free(e);
	return rc;
}

/* ---- one manifest -> one record ---- */

static const char *arena_sv(lv__arena *a, lv__sv s)
{
	return lv__arena_strndup(a, s.p ? s.p : "", s.n);
}

int lv__txn_properties_json(const lv__txn *t, lv__arena *arena, const char **out)
{
	/* Sorted keys make the text deterministic whatever order the writer used. */
	size_t n = t->num_properties, k = 0, cursor = 0;
	lv__sv *keys = NULL, *vals = NULL;
	lv__dbuf b;
	int rc = LV_ENOMEM;
	lv__dbuf_init(&b, 0);
	if (n) {
		keys = lv__calloc(n, sizeof *keys);
		vals = lv__calloc(n, sizeof *vals);
		if (!keys || !vals)
			goto out;
		lv__sv kk, vv;
		while (k < n && lv__txn_property_next(t, &cursor, &kk, &vv) == 1) {
			keys[k] = kk;
			vals[k] = vv;
			k++;
		}
		/* insertion sort: property maps are small */
		for (size_t i = 1; i < k; i++) {
			lv__sv ki = keys[i], vi = vals[i];
			size_t j = i;
			while (j > 0) {
				lv__sv kj = keys[j - 1];
				size_t m = kj.n < ki.n ? kj.n : ki.n;
				int c = memcmp(kj.p, ki.p, m);
				if (c < 0 || (c == 0 && kj.n <= ki.n))
					break;
				keys[j] = keys[j - 1];
				vals[j] = vals[j - 1];
				j--;
			}
			keys[j] = ki;
			vals[j] = vi;
		}
	}
	if ((rc = lv__dbuf_addc(&b, '{')) < 0)
		goto out;
	for (size_t i = 0; i < k; i++) {
		/* proto3 maps: a repeated key keeps the last value; drop earlier duplicates */
		if (i + 1 < k && keys[i].n == keys[i + 1].n && !memcmp(keys[i].p, keys[i + 1].p, keys[i].n))
			continue;
		if (b.len > 1 && (rc = lv__dbuf_addc(&b, ',')) < 0)
			goto out;
		if ((rc = lv__json_escape(&b, keys[i].p, keys[i].n)) < 0 ||
		    (rc = lv__dbuf_addc(&b, ':')) < 0 ||
		    (rc = lv__json_escape(&b, vals[i].p, vals[i].n)) < 0)
			goto out;
	}
	if ((rc = lv__dbuf_addc(&b, '}')) < 0)
		goto out;
	*out = lv__arena_strndup(arena, (const char *)b.ptr, b.len);
	rc = *out ? 0 : LV_ENOMEM;
out:
	lv__free(keys);
	lv__free(vals);
	lv__dbuf_dispose(&b);
	return rc;
}

static bool safe_txn_name(lv__sv s)
{
	if (s.n == 0 || s.n > 255)
		return false;
	for (size_t i = 0; i < s.n; i++)
		if (s.p[i] == '/' || s.p[i] == '\\' || s.p[i] == 0)
			return false;
	return !(s.n <= 2 && s.p[0] == '.');
}

int lv__read_version_info(lv_storage *st, const char *path, lv__arena *arena, lv_version_info *info,
			  lv_error *err)
{
	lv_buf file = { 0 };
	uint64_t held;
	memset(info, 0, sizeof *info);
	int rc = lv__fetch_footered(st, path, LV__FETCH_MAX, NULL, &file, &held, err);
	if (rc < 0)
		return rc;
	rc = lv__version_info_from_bytes(st, path, file.ptr, file.size, true, arena, info, err);
	lv_buf_dispose(&file);
	return rc;
}

/* The manifest's own fields (counters, writer, config map).  LV_ENOMEM, or an index error. */
static int info_of_manifest(const lv__manifest *m, const char *path, size_t size, lv__arena *arena,
			    lv_version_info *info, lv_error *err)
{
	info->version = m->version;
	/* Lance: timestamp_nanos = seconds*1e9 + nanos; listVersions reports ms. */
	info->timestamp_millis = lv__manifest_ts_millis(m, &info->timestamp_nanos);
	info->total_fragments = m->summary.total_fragments;
	info->total_data_files = m->summary.total_data_files;
	info->total_files_size = m->summary.total_files_size;
	info->total_deletion_files = m->summary.total_deletion_files;
	info->total_data_file_rows = m->summary.total_data_file_rows;
	info->total_deletion_file_rows = m->summary.total_deletion_file_rows;
	info->total_rows = m->summary.total_rows;
	info->has_manifest_details = true;
	info->manifest_path = lv__arena_strdup(arena, path);
	info->manifest_size = size;
	info->writer_library = m->writer_library.n ? arena_sv(arena, m->writer_library) : NULL;
	info->writer_version = m->writer_version.n ? arena_sv(arena, m->writer_version) : NULL;
	info->data_format = m->data_format_version.n ? arena_sv(arena, m->data_format_version) : NULL;
	info->transaction_file = m->transaction_file.n ? arena_sv(arena, m->transaction_file) : NULL;
	info->reader_feature_flags = m->reader_flags;
	info->writer_feature_flags = m->writer_flags;
	info->branch = m->has_branch ? arena_sv(arena, m->branch) : NULL;
	if (!info->manifest_path || (m->writer_library.n && !info->writer_library))
		return lv__err(err, LV_ENOMEM, "out of memory");
	long nidx = lv__manifest_indices(m, path, NULL, NULL, err);
	if (nidx < 0)
		return (int)nidx;
	info->num_indices = (size_t)nidx;
	info->num_config = m->num_config;
	if (!m->num_config)
		return 0;
	const char **keys = lv__arena_alloc(arena, m->num_config * sizeof *keys);
	const char **vals = lv__arena_alloc(arena, m->num_config * sizeof *vals);
	if (!keys || !vals)
		return lv__err(err, LV_ENOMEM, "out of memory");
	size_t cursor = 0, i = 0;
	lv__sv k, v;
	while (i < m->num_config && lv__manifest_config_next(m, &cursor, &k, &v) == 1) {
		keys[i] = arena_sv(arena, k);
		vals[i] = arena_sv(arena, v);
		i++;
	}
	info->num_config = i;
	info->config_keys = keys;
	info->config_values = vals;
	return 0;
}

/*
 * The transaction's bytes: the inline section first, else _transactions/<file>
 * (read into *file only if read_txn_file; otherwise 1).  LV_ENOTFOUND: none.
 */
static int txn_bytes(lv_storage *st, const lv__manifest *m, const char *path, bool read_txn_file,
		     lv_buf *file, const uint8_t **tp, size_t *tn, char *name, size_t cap,
		     lv_error *err)
{
	int rc = lv__manifest_inline_txn(m, path, tp, tn, err);
	if (rc == 0) {
		snprintf(name, cap, "%s (inline transaction)", path);
		return 0;
	}
	if (rc != LV_ENOTFOUND || !m->transaction_file.n)
		return rc;
	if (!read_txn_file)
		return 1; /* the caller reads this manifest the ordinary way when it needs the row */
	if (!safe_txn_name(m->transaction_file))
		return lv__err(err, LV_ECORRUPT, "manifest %s: unsafe transaction_file name", path);
	snprintf(name, cap, "_transactions/%.*s", (int)m->transaction_file.n, m->transaction_file.p);
	LV_TRY(lv__fetch_capped(st, name, LV__TXN_MAX, file, err));
	*tp = file->ptr;
	*tn = file->size;
	return 0;
}

int lv__version_info_from_bytes(lv_storage *st, const char *path, const uint8_t *data, size_t size,
				bool read_txn_file, lv__arena *arena, lv_version_info *info,
				lv_error *err)
{
	lv_buf txnfile = { 0 };
	lv__manifest m;
	memset(info, 0, sizeof *info);
	info->transaction_properties = "{}";
	LV_TRY(lv__manifest_parse(data, size, path, NULL, &m, err));
	LV_TRY(info_of_manifest(&m, path, size, arena, info, err));
	const uint8_t *tp = NULL;
	size_t tn = 0;
	char txn_name[320];
	int rc = txn_bytes(st, &m, path, read_txn_file, &txnfile, &tp, &tn, txn_name, sizeof txn_name,
			   err);
	if (rc == LV_ENOTFOUND) /* no transaction (a missing transaction file is not an error) */
		return 0;
	if (rc != 0) {
		lv_buf_dispose(&txnfile);
		return rc;
	}
	info->transaction_inline = txnfile.ptr == NULL;
	lv__txn t;
	if ((rc = lv__txn_parse(tp, tn, txn_name, &t, err)) == 0) {
		info->transaction_uuid = t.uuid.n ? arena_sv(arena, t.uuid) : NULL;
		info->has_read_version = true;
		info->read_version = t.read_version;
		info->operation_type = arena_sv(arena, (lv__sv){ t.op_name, strlen(t.op_name) });
		if ((rc = lv__txn_properties_json(&t, arena, &info->transaction_properties)) < 0)
			lv__err(err, rc, "out of memory");
	}
	lv_buf_dispose(&txnfile);
	return rc;
}

/* ---- the concurrent reader ---- */

/*
 * Manifests are read in chunks of consecutive items: one worker reads a
 * chunk's manifests one after another (footer-first, within the budget of
 * bytes in flight) and hands each to the visitor with its chunk's index, so a
 * visitor can keep one arena per chunk; the chunk keeps its first hard error.
 * Small batches (a tail) get chunks of one, so every manifest is in flight at
 * once; long ones (a whole history) share arenas instead of paying a block
 * and an error buffer per version.
 */
typedef struct chunk {
	int first_err; /* index of the chunk's first hard error, or -1 */
	lv_error err;
} chunk;

typedef struct each_job {
	lv_storage *st;
	const char *const *paths;
	size_t n, per;
	lv__manifest_fn fn;
	void *ctx;
	int *rcs;
	chunk *chunks;
	lv__budget budget;
} each_job;

static void each_chunk(size_t c, void *arg)
{
	each_job *j = arg;
	chunk *ch = &j->chunks[c];
	ch->first_err = -1;
	size_t end = (c + 1) * j->per < j->n ? (c + 1) * j->per : j->n;
	for (size_t i = c * j->per; i < end; i++) {
		lv_error e = { 0 };
		lv_buf b = { 0 };
		uint64_t held = 0;
		int rc = lv__fetch_footered(j->st, j->paths[i], LV__FETCH_MAX, &j->budget, &b, &held, &e);
		if (rc == 0)
			rc = j->fn(j->ctx, c, i, j->paths[i], b.ptr, b.size, &e);
		lv_buf_dispose(&b);
		lv__budget_release(&j->budget, held);
		j->rcs[i] = rc;
		if (rc < 0 && rc != LV_ENOTFOUND && ch->first_err < 0) {
			ch->first_err = (int)(i - c * j->per);
			ch->err = e;
		}
	}
}

size_t lv__manifests_per_chunk(size_t n, int threads)
{
	size_t t = threads > 0 ? (size_t)threads : 1;
	size_t per = n / (4 * t);
	return per < 1 ? 1 : per > 64 ? 64 : per;
}

int lv__manifests_each(lv_storage *st, int threads, const char *const *paths, size_t n, size_t per,
		       lv__manifest_fn fn, void *ctx, int *rcs, lv_error *err)
{
	if (n == 0)
		return 0;
	size_t nchunks = (n + per - 1) / per;
	chunk *chunks = lv__calloc(nchunks, sizeof *chunks);
	if (!chunks)
		return lv__err(err, LV_ENOMEM, "out of memory");
	each_job j;
	memset(&j, 0, sizeof j);
	j.st = st;
	j.paths = paths;
	j.n = n;
	j.per = per;
	j.fn = fn;
	j.ctx = ctx;
	j.rcs = rcs;
	j.chunks = chunks;
	lv__budget_init(&j.budget, LV__FETCH_INFLIGHT);
	lv__parallel_for(nchunks, threads, each_chunk, &j);
	lv__budget_dispose(&j.budget);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		if (rcs[i] < 0 && rcs[i] != LV_ENOTFOUND) {
			rc = rcs[i];
			if (err)
				*err = chunks[i / per].err;
		}
	lv__free(chunks);
	return rc;
}

/* ---- manifests into a version list ---- */

typedef struct into_list {
	lv_storage *st;
	lv_version_info *slots;
	lv__arena *arenas; /* one per chunk */
} into_list;

static int info_visit(void *ctx, size_t c, size_t i, const char *path, const uint8_t *data,
		      size_t size, lv_error *err)
{
	into_list *t = ctx;
	return lv__version_info_from_bytes(t->st, path, data, size, true, &t->arenas[c], &t->slots[i],
					   err);
}

int lv__read_into_list(lv_version_list *l, lv_storage *st, int threads, const char *const *paths,
		       size_t n, lv_error *err)
{
	/* l->items must have room for n more entries; l->arenas for n more arenas. */
	if (n == 0)
		return 0;
	size_t per = lv__manifests_per_chunk(n, threads);
	size_t nchunks = (n + per - 1) / per;
	int *rcs = lv__calloc(n, sizeof *rcs);
	if (!rcs)
		return lv__err(err, LV_ENOMEM, "out of memory");
	/* ~384 bytes of strings per manifest (paths, uuid, operation, properties, writer) */
	size_t block = 384 * per < 1024 ? 1024 : 384 * per > 16384 ? 16384 : 384 * per;
	lv__arena *arenas = l->arenas + l->narenas;
	for (size_t c = 0; c < nchunks; c++)
		lv__arena_init(&arenas[c], block);
	l->narenas += nchunks;
	/* read straight into the list's free slots, then close the gaps of vanished ones */
	lv_version_info *slots = l->items + l->n;
	into_list t = { st, slots, arenas };
	int rc = lv__manifests_each(st, threads, paths, n, per, info_visit, &t, rcs, err);
	/*
	 * LV_ENOTFOUND can only mean the manifest itself vanished (a missing
	 * transaction file is not an error): skip and report it.  Anything else
	 * fails the call, lowest version first.
	 */
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (rcs[i] == 0)
			l->items[l->n++] = slots[i]; /* l->n <= slot i: moves down or stays */
		else if ((rc = lv__add_vanished(l, paths[i])) < 0)
			lv__err(err, rc, "out of memory");
	}
	lv__free(rcs);
	return rc;
}

bool lv__entries_has(const lv__manifest_entry *e, size_t n, uint64_t version)
{
	size_t i = lv__lower_bound_u64(e, n, sizeof *e, offsetof(lv__manifest_entry, version), version);
	return i < n && e[i].version == version;
}

const char *lv_feature_flag_name(unsigned bit)
{
	/* Lance's flag constants, bit by bit (12: 2048 is claimed twice upstream) */
	static const char *const names[] = {
		"deletion_files", "stable_row_ids", "use_v2_format_deprecated", "table_config",
		"base_paths", "disable_transaction_file", "unstable_data_overlay_files",
		"covered_index_metadata", "mixed_data_file_versions", "frag_reuse_with_stable_row_ids",
		"fragment_reuse_index", "semantic_types_or_managed_blobs",
	};
	return bit < sizeof names / sizeof names[0] ? names[bit] : NULL;
}

bool lv_manifest_path_version(const char *path, uint64_t *version)
{
	const char *name = path ? strrchr(path, '/') : NULL;
	uint64_t v;
	if (!name || name - path < 9 || strncmp(name - 9, "_versions", 9) ||
	    (name - path > 9 && name[-10] != '/') || lv__version_name_parse(name + 1, &v) == LV_NAME_NONE)
		return false;
	if (version)
		*version = v;
	return true;
}
