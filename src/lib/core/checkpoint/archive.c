/*
 * The archive (see archive.h): segment names, the head's index of segments,
 * and reading one segment.
 *
 * Invariants:
 *  - Only "{first:020}-{last:020}.lance" names with 1 <= first <= last are taken
 *    for segments; other names of that shape are strays, anything else in the
 *    directory is ignored.
 *  - What readers and writers use is lv__seg_choose's pick: every segment the
 *    head's index names, and unindexed ones only where they overlap none of
 *    those, none of them lying inside another; a file left out that
 *    does not read as a valid segment of this history is a stray with a
 *    warning.  So no file shadows an indexed segment.
 *  - A segment is used only if its content agrees with its name (the range
 *    in its checksummed metadata equals the name's, every row lies inside)
 *    and, when the caller knows it, with the history's dataset_created.
 *  - The index is parsed strictly: sorted, disjoint ranges within `through`,
 *    every number in range; anything else rejects the head that carries it.
 */
#include "core/checkpoint/archive.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint/identity.h"
#include "core/checkpoint/ladder.h"
#include "core/fetch.h"
#include "core/vlist.h"
#include "core/warnings.h"
#include "util/util.h"

/* ---- names ---- */

void lv__seg_path(char *buf, size_t cap, uint64_t first, uint64_t last)
{
	snprintf(buf, cap, LV__ARCHIVE_DIR "/%020" PRIu64 "-%020" PRIu64 ".lance", first, last);
}

static lv__seg_stray *stray_add(lv__seg_names *s, const lv__seg_name *n)
{
	lv__seg_stray *nv = lv__grow(s->stray, &s->capstray, s->nstray, sizeof *nv, 4);
	if (!nv)
		return NULL;
	s->stray = nv;
	memset(&nv[s->nstray], 0, sizeof *nv);
	nv[s->nstray].name = *n;
	return &nv[s->nstray++];
}

static int seg_list_cb(const lv_list_entry *e, void *payload)
{
	lv__seg_names *s = payload;
	const char *name = lv__basename(e->path);
	uint64_t first, last;
	if (strlen(name) != 47 || name[20] != '-' || strcmp(name + 41, ".lance") ||
	    !lv__parse_u64(name, 20, &first) || !lv__parse_u64(name + 21, 20, &last))
		return 0;
	lv__seg_name sn = { first, last, e->size, "" };
	lv__seg_path(sn.path, sizeof sn.path, first, last);
	if (first > last || first == 0) { /* segment-shaped, but no writer makes it: a stray */
		lv__seg_stray *st = stray_add(s, &sn);
		if (st)
			snprintf(st->why, sizeof st->why, "its name's range is empty (first %s)",
				 first == 0 ? "is 0" : "> last");
		s->rc = st ? 0 : LV_ENOMEM;
		return st ? 0 : 1;
	}
	lv__seg_name *nv = lv__grow(s->v, &s->cap, s->n, sizeof *nv, 16);
	if (!nv) {
		s->rc = LV_ENOMEM;
		return 1;
	}
	s->v = nv;
	nv[s->n++] = sn;
	return 0;
}

static int cmp_seg(const void *a, const void *b)
{
	const lv__seg_name *x = a, *y = b;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->last < y->last ? -1 : x->last > y->last;
}

int lv__seg_list(lv_storage *st, lv__seg_names *out, lv_error *err)
{
	memset(out, 0, sizeof *out);
	int rc = lv_storage_list(st, LV__ARCHIVE_DIR, false, seg_list_cb, out, err);
	if (rc >= 0 && out->rc < 0)
		rc = lv__err(err, out->rc, "out of memory listing " LV__ARCHIVE_DIR);
	if (rc < 0) {
		lv__seg_names_free(out);
		return rc;
	}
	if (out->n > 1)
		qsort(out->v, out->n, sizeof *out->v, cmp_seg);
	return 0;
}

void lv__seg_names_free(lv__seg_names *s)
{
	lv__free(s->v);
	lv__free(s->stray);
	memset(s, 0, sizeof *s);
}

const lv__seg_name *lv__seg_find(const lv__seg_names *s, uint64_t v)
{
	/* the last segment whose first <= v (ranges may overlap only if S changed meanwhile) */
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->v[mid].first <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0;)
		if (s->v[i].last >= v)
			return &s->v[i];
	return NULL;
}

/* ---- the head's index ---- */

void lv__arc_index_dispose(lv__arc_index *ix)
{
	lv__free(ix->v);
	lv__free(ix->orphans);
	memset(ix, 0, sizeof *ix);
}

int lv__arc_index_orphan(lv__arc_index *ix, uint64_t first, uint64_t last)
{
	size_t i = 0;
	while (i < ix->norphans && ix->orphans[i][1] + 1 < first)
		i++;
	if (i < ix->norphans && ix->orphans[i][0] <= last + 1) { /* joins range i (and maybe more) */
		ix->orphans[i][0] = first < ix->orphans[i][0] ? first : ix->orphans[i][0];
		ix->orphans[i][1] = last > ix->orphans[i][1] ? last : ix->orphans[i][1];
		while (i + 1 < ix->norphans && ix->orphans[i + 1][0] <= ix->orphans[i][1] + 1) {
			if (ix->orphans[i + 1][1] > ix->orphans[i][1])
				ix->orphans[i][1] = ix->orphans[i + 1][1];
			memmove(ix->orphans + i + 1, ix->orphans + i + 2,
				(ix->norphans - i - 2) * sizeof *ix->orphans);
			ix->norphans--;
		}
		return 0;
	}
	uint64_t(*nv)[2] = lv__grow(ix->orphans, &ix->caporphans, ix->norphans, sizeof *nv, 4);
	if (!nv)
		return LV_ENOMEM;
	ix->orphans = nv;
	memmove(ix->orphans + i + 1, ix->orphans + i, (ix->norphans - i) * sizeof *ix->orphans);
	ix->orphans[i][0] = first;
	ix->orphans[i][1] = last;
	ix->norphans++;
	return 0;
}

bool lv__arc_index_is_orphan(const lv__arc_index *ix, uint64_t v)
{
	for (size_t i = 0; i < ix->norphans; i++)
		if (v >= ix->orphans[i][0] && v <= ix->orphans[i][1])
			return true;
	return false;
}

/* The next space- or newline-separated field of [*p, end) as a number; false if not one. */
static bool next_u64(const char **p, const char *end, char sep, uint64_t *out)
{
	const char *q = *p;
	while (q < end && *q != sep)
		q++;
	if (q == end || !lv__parse_u64(*p, (size_t)(q - *p), out))
		return false;
	*p = q + 1;
	return true;
}

static bool next_i64(const char **p, const char *end, char sep, int64_t *out)
{
	bool neg = *p < end && **p == '-';
	uint64_t u;
	*p += neg;
	if (!next_u64(p, end, sep, &u) || u > INT64_MAX)
		return false;
	*out = neg ? -(int64_t)u : (int64_t)u;
	return true;
}

int lv__arc_index_parse(const char *text, const char *path, lv__arc_index *out, lv_error *err)
{
	memset(out, 0, sizeof *out);
	const char *p = text, *end = text + strlen(text);
	size_t ml = strlen(LV__ARCHIVE_MAGIC);
	bool ok = (size_t)(end - p) > ml && !memcmp(p, LV__ARCHIVE_MAGIC, ml) && p[ml] == ' ';
	p += ok ? ml + 1 : 0;
	ok = ok && next_u64(&p, end, ' ', &out->segment_rows) && out->segment_rows > 0 &&
	     next_u64(&p, end, '\n', &out->through);
	uint64_t prev_last = 0, prev_orphan = 0;
	while (ok && p < end) {
		if (*p == 'o' && p + 1 < end && p[1] == ' ') { /* "o <first> <last>": an orphan range */
			uint64_t a, b;
			p += 2;
			ok = next_u64(&p, end, ' ', &a) && next_u64(&p, end, '\n', &b) && a >= 1 && a <= b &&
			     a > prev_orphan;
			if (ok && lv__arc_index_orphan(out, a, b) < 0) {
				lv__arc_index_dispose(out);
				return lv__err(err, LV_ENOMEM, "out of memory");
			}
			prev_orphan = b;
			continue;
		}
		lv__seg_entry e;
		ok = next_u64(&p, end, ' ', &e.first) && next_u64(&p, end, ' ', &e.last) &&
		     next_u64(&p, end, ' ', &e.rows) && next_i64(&p, end, ' ', &e.min_ts) &&
		     next_i64(&p, end, ' ', &e.max_ts) && next_u64(&p, end, '\n', &e.bytes);
		ok = ok && e.first >= 1 && e.first <= e.last && e.last <= out->through &&
		     (out->n == 0 || e.first > prev_last) && e.rows <= e.last - e.first + 1 &&
		     e.min_ts <= e.max_ts;
		if (ok && lv__arc_index_put(out, &e) < 0) {
			lv__arc_index_dispose(out);
			return lv__err(err, LV_ENOMEM, "out of memory");
		}
		prev_last = e.last;
	}
	if (!ok) {
		lv__arc_index_dispose(out);
		return lv__err(err, LV_ECORRUPT, "checkpoint %s: malformed archive index", path);
	}
	return 0;
}

char *lv__arc_index_format(const lv__arc_index *ix)
{
	lv__dbuf b;
	lv__dbuf_init(&b, 0);
	lv__dbuf_printf(&b, LV__ARCHIVE_MAGIC " %" PRIu64 " %" PRIu64 "\n", ix->segment_rows, ix->through);
	for (size_t i = 0; i < ix->n; i++) {
		const lv__seg_entry *e = &ix->v[i];
		lv__dbuf_printf(&b, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64 " %" PRId64 " %" PRIu64 "\n",
			       e->first, e->last, e->rows, e->min_ts, e->max_ts, e->bytes);
	}
	for (size_t i = 0; i < ix->norphans; i++)
		lv__dbuf_printf(&b, "o %" PRIu64 " %" PRIu64 "\n", ix->orphans[i][0], ix->orphans[i][1]);
	return lv__dbuf_take_str(&b);
}

int lv__arc_index_put(lv__arc_index *ix, const lv__seg_entry *e)
{
	size_t i = lv__lower_bound_u64(ix->v, ix->n, sizeof *ix->v, offsetof(lv__seg_entry, first),
				       e->first);
	if (i < ix->n && ix->v[i].first == e->first) {
		ix->v[i] = *e;
		return 0;
	}
	lv__seg_entry *nv = lv__grow(ix->v, &ix->cap, ix->n, sizeof *nv, 16);
	if (!nv)
		return LV_ENOMEM;
	ix->v = nv;
	memmove(ix->v + i + 1, ix->v + i, (ix->n - i) * sizeof *ix->v);
	ix->v[i] = *e;
	ix->n++;
	return 0;
}

const lv__seg_entry *lv__arc_index_find(const lv__arc_index *ix, uint64_t first)
{
	size_t i = lv__lower_bound_u64(ix->v, ix->n, sizeof *ix->v, offsetof(lv__seg_entry, first), first);
	return i < ix->n && ix->v[i].first == first ? &ix->v[i] : NULL;
}

void lv__seg_entry_of(lv__seg_entry *e, uint64_t first, uint64_t last, const lv_version_info *rows,
		      size_t n, uint64_t bytes)
{
	memset(e, 0, sizeof *e);
	e->first = first;
	e->last = last;
	e->rows = n;
	e->bytes = bytes;
	for (size_t i = 0; i < n; i++) {
		int64_t t = rows[i].timestamp_millis;
		e->min_ts = i == 0 || t < e->min_ts ? t : e->min_ts;
		e->max_ts = i == 0 || t > e->max_ts ? t : e->max_ts;
	}
}

/* ---- one segment ---- */

int lv__seg_read(lv_storage *st, const lv__seg_name *name, int64_t created, lv__cp_file *f, int *cls,
		 lv_buf *bytes, lv_error *err)
{
	memset(f, 0, sizeof *f);
	snprintf(f->path, sizeof f->path, "%s", name->path);
	lv_buf b = { 0 };
	uint64_t held;
	int rc = lv__fetch_footered(st, name->path, LV__CP_MAX_FILE_BYTES, NULL, &b, &held, err);
	if (rc < 0) {
		*cls = rc == LV_ENOTFOUND ? LV__CP_VANISHED : LV__CP_UNREADABLE;
		return rc;
	}
	*cls = LV__CP_USABLE;
	rc = lv__cp_decode(b.ptr, b.size, name->path, true, NULL, 0, f, err);
	const lv_version_list *r = f->rows;
	if (rc == 0 && (!f->is_segment || f->seg_first != name->first || f->seg_last != name->last))
		rc = lv__err(err, LV_ECORRUPT, "segment %s: its metadata does not name its range",
			     name->path);
	if (rc == 0 && r->n && (r->items[0].version < name->first || f->latest > name->last))
		rc = lv__err(err, LV_ECORRUPT, "segment %s: holds versions outside its range", name->path);
	if (rc < 0 && rc != LV_ENOMEM)
		*cls = LV__CP_DAMAGED;
	if (rc == 0 && created != INT64_MIN && f->created != created) {
		*cls = LV__CP_FOREIGN;
		rc = lv__err(err, LV_ECONFLICT,
			     "segment %s belongs to another history (dataset_created %" PRId64 ", not %" PRId64 ")",
			     name->path, f->created, created);
	}
	return lv__cp_file_read_end(rc, f, &b, bytes);
}

/* ---- the history's identity without a head ---- */

static bool is_live(const lv__manifest_entry *live, size_t nlive, uint64_t v)
{
	size_t i = lv__lower_bound_u64(live, nlive, sizeof *live, offsetof(lv__manifest_entry, version), v);
	return i < nlive && live[i].version == v;
}

int lv__seg_history_created(lv_dataset *ds, const lv__seg_names *segs, const lv__manifest_entry *live,
			    size_t nlive, int64_t *created, bool *found, bool *confirmed, const char **which,
			    uint64_t *segments_read, uint64_t *identity_bytes, lv_error *err)
{
	*found = *confirmed = false;
	*which = NULL;
	uint64_t latest = nlive ? live[nlive - 1].version : 0;
	for (size_t i = segs->n, tried = 0; i-- > 0 && tried < 4 && !*confirmed; tried++) {
		lv__cp_file f;
		lv_error e = { 0 };
		int cls;
		int rc = lv__seg_read(ds->st, &segs->v[i], INT64_MIN, &f, &cls, NULL, &e);
		if (rc == LV_ENOMEM)
			return lv__err(err, rc, "out of memory");
		*segments_read += rc == 0;
		if (rc < 0 || f.latest > latest) {
			lv__cp_file_dispose(&f);
			continue;
		}
		if (!*found) { /* the newest readable one, if nothing confirms any */
			*found = true;
			*created = f.created;
			*which = segs->v[i].path;
		}
		bool live_row = false; /* one of its rows a live manifest can confirm */
		for (size_t k = 0; !live_row && k < f.rows->n; k++)
			live_row = is_live(live, nlive, f.rows->items[k].version);
		if (live_row && lv__cp_verify_identity(ds, &f, live, nlive, NULL, identity_bytes, &e) == 0) {
			*created = f.created;
			*confirmed = true;
			*which = segs->v[i].path;
		}
		lv__cp_file_dispose(&f);
	}
	return 0;
}

/* ---- which listed files are used (issue 24: a stray file never shadows a segment) ---- */

/* The first entry of the index whose range meets [first, last], or NULL. */
static const lv__seg_entry *index_overlap(const lv__arc_index *ix, uint64_t first, uint64_t last)
{
	for (size_t i = 0; ix && i < ix->n; i++)
		if (ix->v[i].first <= last && first <= ix->v[i].last)
			return &ix->v[i];
	return NULL;
}

/* Moves segs->v[i] to the strays (why formatted), marking it dropped. */
static int set_stray(lv__seg_names *segs, bool *drop, size_t i, bool redundant, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int set_stray(lv__seg_names *segs, bool *drop, size_t i, bool redundant, const char *fmt, ...)
{
	lv__seg_stray *st = stray_add(segs, &segs->v[i]);
	if (!st)
		return LV_ENOMEM;
	st->redundant = redundant;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(st->why, sizeof st->why, fmt, ap);
	va_end(ap);
	drop[i] = true;
	return 0;
}

/* Marks each candidate (not indexed, not dropped) that overlaps another candidate. */
static size_t mark_contested(const lv__seg_names *segs, const bool *indexed, const bool *drop,
			     bool *contested)
{
	size_t n = 0;
	for (size_t i = 0; i < segs->n; i++)
		contested[i] = false;
	for (size_t i = 0; i < segs->n; i++) {
		if (indexed[i] || drop[i])
			continue;
		for (size_t j = i + 1; j < segs->n && segs->v[j].first <= segs->v[i].last; j++)
			if (!indexed[j] && !drop[j]) {
				n += !contested[i] + !contested[j];
				contested[i] = contested[j] = true;
			}
	}
	return n;
}

/* Reads a contested candidate: 0 if it is a valid segment of this history, else why not. */
static int contested_valid(lv_storage *st, const lv__seg_name *name, int64_t created, uint64_t latest,
			   uint64_t *segments_read, lv_error *e)
{
	lv__cp_file f;
	int cls;
	int rc = lv__seg_read(st, name, created, &f, &cls, NULL, e);
	*segments_read += rc == 0;
	if (rc == 0 && f.latest > latest)
		rc = lv__err(e, LV_ECONFLICT, "it records version %" PRIu64 ", past the latest %" PRIu64,
			     f.latest, latest);
	lv__cp_file_dispose(&f);
	return rc;
}

/* Unindexed segments that overlap each other: the invalid ones, then the ones inside a used one. */
static int settle_contested(lv_storage *st, lv__seg_names *segs, const bool *indexed, bool *drop,
			    bool *contested, int64_t created, uint64_t latest, uint64_t *segments_read)
{
	/* cheap first: a range ending past the latest version was never sealed (a cell is
	 * sealed once all of its versions are committed) */
	if (mark_contested(segs, indexed, drop, contested))
		for (size_t i = 0; i < segs->n; i++)
			if (contested[i] && segs->v[i].last > latest)
				LV_TRY(set_stray(segs, drop, i, false, "not in the head's index; its range ends past "
						 "the latest version %" PRIu64 " and overlaps other segments", latest));
	if (mark_contested(segs, indexed, drop, contested))
		for (size_t i = 0; i < segs->n; i++) {
			if (!contested[i])
				continue;
			lv_error e = { 0 };
			int rc = contested_valid(st, &segs->v[i], created, latest, segments_read, &e);
			if (rc == LV_ENOMEM)
				return rc;
			if (rc < 0)
				LV_TRY(set_stray(segs, drop, i, false, "not in the head's index, overlaps other segments "
						 "and is not a valid segment of this history: %.120s", e.message));
		}
	uint64_t reach = 0; /* the end of the ranges used so far (sorted by first) */
	const lv__seg_name *by = NULL;
	for (size_t i = 0; i < segs->n; i++) {
		if (drop[i] || indexed[i])
			continue;
		if (by && segs->v[i].last <= reach) {
			LV_TRY(set_stray(segs, drop, i, true, "a valid segment inside %s, which is used",
					 by->path));
			continue;
		}
		if (segs->v[i].last > reach) {
			reach = segs->v[i].last;
			by = &segs->v[i];
		}
	}
	return 0;
}

/*
 * An unindexed segment that overlaps the indexed segment `o`: left out; a stray with a
 * warning unless it reads as a valid segment of this history (a merge of writers with other
 * segment sizes leaves such segments out of the index, keeping rows only they hold).
 */
static int leave_out(lv_storage *st, lv__seg_names *segs, bool *drop, size_t i, const lv__seg_entry *o,
		     int64_t created, uint64_t latest, uint64_t *segments_read)
{
	const lv__seg_name *s = &segs->v[i];
	lv_error e = { 0 };
	int rc = s->last > latest ? lv__err(&e, LV_ECONFLICT, "its range ends past the latest version")
				  : contested_valid(st, s, created, latest, segments_read, &e);
	if (rc == LV_ENOMEM)
		return rc;
	if (rc == 0)
		return set_stray(segs, drop, i, true, "a valid segment not in the head's index, overlapping "
				 "the indexed segment of versions %" PRIu64 "-%" PRIu64, o->first, o->last);
	return set_stray(segs, drop, i, false, "not in the head's index, overlaps the indexed segment of "
			 "versions %" PRIu64 "-%" PRIu64 ", and is not a valid segment of this history: %.90s",
			 o->first, o->last, e.message);
}

/*
 * The rules, in order (the head's index is the authority for what it accounts for):
 *  1. a listed segment the index names (same first and last) is used;
 *  2. an unindexed one that overlaps an indexed one is left out: a stray (warned about)
 *     unless it reads as a valid segment of this history (then it is redundant);  one in a
 *     hole of the index (a cell its writer did not see rows for) is used as below;
 *  3. unindexed ones that overlap each other: one ending past the latest version, or
 *     one that does not read as a valid segment of this history, is a stray; then one
 *     lying entirely inside another used one is left out (it is valid: not warned about).
 * Unindexed ones that overlap nothing are left to the reader, which validates what it reads.
 */
int lv__seg_choose(lv_storage *st, lv__seg_names *segs, const lv__arc_index *ix, int64_t created,
		   uint64_t latest, lv__warnlog *wl, uint64_t *segments_read, lv_error *err)
{
	size_t n = segs->n;
	bool *flags = lv__calloc(n ? 3 * n : 1, sizeof *flags);
	if (!flags)
		return lv__err(err, LV_ENOMEM, "out of memory");
	bool *indexed = flags, *drop = flags + n, *contested = flags + 2 * n;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const lv__seg_name *s = &segs->v[i];
		const lv__seg_entry *e = ix ? lv__arc_index_find(ix, s->first) : NULL;
		indexed[i] = e && e->last == s->last;
		const lv__seg_entry *o = indexed[i] ? NULL : index_overlap(ix, s->first, s->last);
		if (o)
			rc = leave_out(st, segs, drop, i, o, created, latest, segments_read);
	}
	if (rc == 0)
		rc = settle_contested(st, segs, indexed, drop, contested, created, latest, segments_read);
	size_t k = 0;
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (!drop[i])
			segs->v[k++] = segs->v[i];
	if (rc == 0)
		segs->n = k;
	lv__free(flags);
	if (rc < 0)
		return lv__err(err, rc, "out of memory");
	for (size_t i = 0; wl && i < segs->nstray; i++)
		if (!segs->stray[i].redundant)
			lv__warn(wl, LV_WARN_SEGMENT_STRAY, segs->stray[i].name.path, 0, 0,
				 "%s ignored: %s; it hides nothing and is left in place",
				 segs->stray[i].name.path, segs->stray[i].why);
	return 0;
}
