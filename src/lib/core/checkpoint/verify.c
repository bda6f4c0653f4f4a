/*
 * What a checkpoint writer publishes is checked twice (issue 24: stores that
 * acknowledge writes they do not keep, racing writers):
 *
 *  - before: the bytes about to be published are decoded as a reader would
 *    (checksum, identity, name, a strictly parsed index), so a writer never
 *    publishes a file its own readers reject (lv__cp_check_publishable);
 *  - after: the head is read back from the store, not from memory, and every
 *    version the caller is about to delete is found in a row of that head or
 *    of a segment its index names, each read back and verified: size,
 *    checksum, identity, range (lv__cp_verify_published).
 *
 * Invariants:
 *  - Nothing is trusted because a write returned 0: a store may acknowledge a
 *    PUT it drops, truncates or shows late.  A failed read-back is retried a
 *    bounded number of times (a store that shows objects late), then fails the
 *    write with an error naming the file; the caller deletes nothing.
 *  - Pruning old heads and deleting manifests happen only after this check.
 *  - A capture's flush learns which versions its head records from this
 *    read-back (note_recorded), not from a second read of the same file.
 *  - No I/O beyond lv_storage_* through the fetch helpers.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/checkpoint/ladder.h"
#include "core/checkpoint/writer.h"
#include "core/fetch.h"
#include "core/vlist.h"
#include "util/util.h"

/* Read-backs tried before a file is declared missing (sleeps 25, 50, 100, 200, 400 ms between). */
#define READBACK_TRIES 6
#define READBACK_FIRST_SLEEP_MS 25

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0) {
	}
}

/* The index entry whose range holds v (entries sorted, disjoint: the first ending at or after
 * v), or NULL. */
static const lv__seg_entry *entry_covering(const lv__arc_index *ix, uint64_t v)
{
	size_t i = lv__lower_bound_u64(ix->v, ix->n, sizeof *ix->v, offsetof(lv__seg_entry, last), v);
	return i < ix->n && ix->v[i].first <= v ? &ix->v[i] : NULL;
}

int lv__cp_check_publishable(const lv_buf *file, const char *path, int64_t created, uint64_t latest,
			     lv_error *err)
{
	lv__cp_file f;
	memset(&f, 0, sizeof f);
	lv_error e = { 0 };
	int rc = lv__cp_decode(file->ptr, file->size, path, true, NULL, 0, &f, &e);
	if (rc == LV_ENOMEM)
		return lv__err(err, rc, "out of memory");
	if (rc == 0 && f.created != created)
		rc = lv__err(&e, LV_ECORRUPT, "dataset_created %" PRId64 ", not %" PRId64, f.created, created);
	if (rc == 0 && latest && f.latest != latest)
		rc = lv__err(&e, LV_ECORRUPT, "newest row %" PRIu64 ", not %" PRIu64, f.latest, latest);
	lv__arc_index ix;
	if (rc == 0 && f.archive && (rc = lv__arc_index_parse(f.archive, path, &ix, &e)) == 0)
		lv__arc_index_dispose(&ix);
	lv__cp_file_dispose(&f);
	if (rc == LV_ENOMEM) /* the index's parse: memory, not the file */
		return lv__err(err, rc, "out of memory");
	if (rc < 0)
		return lv__err(err, LV_ECORRUPT, "%s: refusing to publish a file a reader would reject (%s)",
			       path, e.message);
	return 0;
}

/* Segments read back at once (concurrently, on the dataset's threads). */
#define SEG_WINDOW 8

/* One segment of a window, read back. */
typedef struct seg_slot {
	const lv__seg_entry *e;
	lv__cp_file f;
	int rc, cls;
	lv_error err;
	char path[96];
} seg_slot;

/* One verification of what the store now holds; *retry says a later look may see more. */
typedef struct check {
	lv__writer *w;
	int64_t created;
	lv__cp_file head;
	lv__arc_index ix;
	bool have_ix;
	seg_slot win[SEG_WINDOW]; /* the segments read last */
	size_t nwin;
	bool retry;
	char failed[96]; /* the file the last failure is about */
} check;

static void window_dispose(check *c)
{
	for (size_t i = 0; i < c->nwin; i++)
		lv__cp_file_dispose(&c->win[i].f);
	c->nwin = 0;
}

static void check_reset(check *c)
{
	lv__cp_file_dispose(&c->head);
	window_dispose(c);
	if (c->have_ix)
		lv__arc_index_dispose(&c->ix);
	c->have_ix = false;
}

/* The head as the store returns it now: decoded, of this history, its index parsed. */
static int read_head(check *c, lv_error *err)
{
	lv__writer *w = c->w;
	lv_buf b = { 0 };
	uint64_t held;
	int rc = lv__fetch_footered(w->ds->st, w->r.path, LV__CP_MAX_FILE_BYTES, NULL, &b, &held, err);
	if (rc == 0)
		rc = lv__cp_decode(b.ptr, b.size, w->r.path, true, NULL, 0, &c->head, err);
	lv_buf_dispose(&b);
	c->retry = rc < 0 && rc != LV_ENOMEM;
	if (rc < 0)
		return rc;
	if (c->head.created != c->created || c->head.is_segment)
		return lv__err(err, LV_ECONFLICT, "it belongs to another history (dataset_created %" PRId64 ")",
			       c->head.created);
	if (c->head.latest != w->r.latest_version)
		return lv__err(err, LV_ECORRUPT, "its newest row is version %" PRIu64, c->head.latest);
	if (c->head.archive) {
		LV_TRY(lv__arc_index_parse(c->head.archive, w->r.path, &c->ix, err));
		c->have_ix = true;
	}
	return 0;
}

/* One segment of the window read back: decoded, of this history, the size its index says. */
static void read_slot(size_t i, void *arg)
{
	check *c = arg;
	seg_slot *sl = &c->win[i];
	const lv__seg_entry *e = sl->e;
	lv__seg_name name = { e->first, e->last, 0, "" };
	lv__seg_path(name.path, sizeof name.path, e->first, e->last);
	snprintf(sl->path, sizeof sl->path, "%s", name.path);
	lv_buf bytes = { 0 };
	sl->rc = lv__seg_read(c->w->ds->st, &name, c->created, &sl->f, &sl->cls, &bytes, &sl->err);
	if (sl->rc == 0 && e->bytes && bytes.size != e->bytes)
		sl->rc = lv__err(&sl->err, LV_ECORRUPT, "segment %s: %zu bytes, the index says %" PRIu64,
				 name.path, bytes.size, e->bytes);
	lv_buf_dispose(&bytes);
}

/* The window's slot for e, or NULL. */
static seg_slot *slot_of(check *c, const lv__seg_entry *e)
{
	for (size_t i = 0; i < c->nwin; i++)
		if (c->win[i].e == e)
			return &c->win[i];
	return NULL;
}

/* Reads back the segments the versions from versions[i] on need that the head does not hold,
 * up to SEG_WINDOW of them, concurrently; versions[i]'s (which the caller found) first, so its
 * slot is the returned one.  Stops before a version no entry covers. */
static seg_slot *read_window(check *c, const uint64_t *versions, size_t i, size_t n)
{
	window_dispose(c);
	for (; i < n; i++) {
		if (lv__vlist_find(c->head.rows, versions[i]))
			continue;
		const lv__seg_entry *e = c->have_ix ? entry_covering(&c->ix, versions[i]) : NULL;
		if (!e || (c->nwin == SEG_WINDOW && c->win[c->nwin - 1].e != e))
			break;
		if (c->nwin && c->win[c->nwin - 1].e == e)
			continue; /* (sorted versions: a new entry is always after the last one) */
		memset(&c->win[c->nwin], 0, sizeof c->win[c->nwin]);
		c->win[c->nwin++].e = e;
	}
	lv__parallel_for(c->nwin, c->w->ds->threads, read_slot, c);
	return &c->win[0];
}

/* Every version of `versions` (sorted) in a row read back: the head's, else its segment's
 * (read a window at a time; the first failure in version order is the answer). */
static int check_versions(check *c, const uint64_t *versions, size_t n, lv_error *err)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v = versions[i];
		if (lv__vlist_find(c->head.rows, v))
			continue;
		const lv__seg_entry *e = c->have_ix ? entry_covering(&c->ix, v) : NULL;
		c->retry = true; /* a store may show an older object, or none, for a while */
		if (!e)
			return lv__err(err, LV_ECORRUPT,
				       "version %" PRIu64 " is in no row of it nor of a segment its index names", v);
		seg_slot *sl = slot_of(c, e);
		if (!sl)
			sl = read_window(c, versions, i, n);
		if (sl->rc < 0) {
			snprintf(c->failed, sizeof c->failed, "%s", sl->path);
			c->retry = sl->rc != LV_ENOMEM && sl->cls != LV__CP_FOREIGN;
			if (err)
				*err = sl->err;
			return sl->rc;
		}
		if (!lv__vlist_find(sl->f.rows, v)) {
			snprintf(c->failed, sizeof c->failed, "%s", sl->path);
			return lv__err(err, LV_ECORRUPT, "it lacks version %" PRIu64, v);
		}
	}
	return 0;
}

/* The versions whose record must be read back: those the caller deletes, and every cleaned-up
 * row written (a live row's manifest still answers for it).  With the archive off, versions
 * older than the head's first row are the ones max_entries drops by design (the proposal's
 * behaviour, warned about as a gap): not required.  Sorted, unique; malloc'ed. */
static uint64_t *needed(const lv__writer *w, const lv_version_info *keep, size_t nkeep, size_t *n)
{
	uint64_t *v = lv__calloc(w->ncleaned + nkeep + 1, sizeof *v);
	if (!v)
		return NULL;
	size_t i = 0, j = 0, k = 0;
	if (!w->cfg.archive && nkeep)
		while (i < w->ncleaned && w->cleaned[i] < keep[0].version)
			i++;
	while (i < w->ncleaned || j < nkeep) {
		if (j < nkeep && !keep[j].is_cleaned_up) {
			j++;
			continue;
		}
		uint64_t a = i < w->ncleaned ? w->cleaned[i] : UINT64_MAX;
		uint64_t b = j < nkeep ? keep[j].version : UINT64_MAX;
		uint64_t x = a < b ? a : b;
		if (!k || v[k - 1] != x)
			v[k++] = x;
		i += a == x;
		j += b == x;
	}
	*n = k;
	return v;
}

/*
 * A capture's flush (w->rec): the versions above rec->above the head read back holds, when
 * its rows reach down to above + 1 (else `have` stays false).  0 or LV_ENOMEM.
 */
static int note_recorded(lv__recorded *rec, const lv_version_list *rows)
{
	lv__free(rec->v);
	rec->v = NULL;
	rec->n = 0;
	rec->have = false;
	size_t n = lv_version_list_count(rows);
	const lv_version_info *first = lv_version_list_get(rows, 0);
	if (!first || first->version > rec->above + 1)
		return 0;
	size_t i = 0;
	while (i < n && lv_version_list_get(rows, i)->version <= rec->above)
		i++;
	if (i < n && !(rec->v = lv__calloc(n - i, sizeof *rec->v)))
		return LV_ENOMEM;
	for (; i < n; i++)
		rec->v[rec->n++] = lv_version_list_get(rows, i)->version;
	rec->have = true;
	return 0;
}

int lv__cp_verify_published(lv__writer *w, const lv_version_info *keep, size_t nkeep, int64_t created,
			    lv_error *err)
{
	check c;
	memset(&c, 0, sizeof c);
	c.w = w;
	c.created = created;
	size_t nneed = 0;
	uint64_t *need = needed(w, keep, nkeep, &nneed);
	if (!need)
		return lv__err(err, LV_ENOMEM, "out of memory");
	lv_error e = { 0 };
	int rc = 0;
	long nap = READBACK_FIRST_SLEEP_MS;
	for (int attempt = 0; attempt < READBACK_TRIES; attempt++, nap *= 2) {
		if (attempt)
			sleep_ms(nap / 2);
		check_reset(&c);
		memset(&e, 0, sizeof e);
		c.retry = false;
		snprintf(c.failed, sizeof c.failed, "%s", w->r.path);
		rc = read_head(&c, &e);
		if (rc == 0)
			rc = check_versions(&c, need, nneed, &e);
		if (rc == 0 || rc == LV_ENOMEM || !c.retry)
			break;
	}
	if (rc == 0 && w->rec)
		rc = note_recorded(w->rec, c.head.rows);
	check_reset(&c);
	lv__free(need);
	if (rc == LV_ENOMEM)
		return lv__err(err, rc, "out of memory");
	if (rc < 0)
		return lv__err(err, LV_EIO,
			       "%s did not read back as a sound record (%s; %d reads): the store does not show "
			       "what was written to it, so nothing that file records is deleted",
			       c.failed, e.message, READBACK_TRIES);
	return 0;
}
