/*
 * Sealing one range of versions into a segment of the archive.
 *
 * Invariants:
 *  - A segment is created with create-if-absent and never written over,
 *    replaced, moved or deleted: a name already taken is read and judged.
 *  - A segment this writer created is read back and compared byte for byte
 *    before its rows may leave the head; one found in place is decoded, and
 *    only the rows it is seen to hold may leave the head (the caller keeps
 *    the rest as orphans).
 *  - Its content is a pure function of the rows and dataset_created, so
 *    concurrent sealers of the same state write identical bytes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint/ladder.h"
#include "core/checkpoint/writer.h"
#include "core/vlist.h"
#include "util/util.h"

/* Remembers a segment written or found, and the versions it holds (pruning needs them). */
static int remember(lv__writer *w, uint64_t first, uint64_t last, const lv_version_info *rows, size_t n)
{
	lv__sealed *nv = lv__grow(w->sealed, &w->capsealed, w->nsealed, sizeof *nv, 8);
	if (!nv)
		return LV_ENOMEM;
	w->sealed = nv;
	uint64_t *vs = lv__calloc(n ? n : 1, sizeof *vs);
	if (!vs)
		return LV_ENOMEM;
	for (size_t i = 0; i < n; i++)
		vs[i] = rows[i].version;
	nv[w->nsealed] = (lv__sealed){ first, last, vs, n };
	w->nsealed++;
	return 0;
}

/* Does the decoded segment `f` hold every version of rows? */
static bool holds_every(const lv__cp_file *f, const lv_version_info *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!lv__vlist_find(f->rows, rows[i].version))
			return false;
	return true;
}

/* The name is taken: judge what is there.  *holds_all says whether it holds every row of ours. */
static int judge_existing(lv__writer *w, lv__seen *s, const lv__seg_name *name, const lv_buf *ours,
			  const lv_version_info *rows, size_t n, int64_t created, lv__seg_entry *entry,
			  bool *holds_all, lv_error *err)
{
	lv__cp_file f;
	lv_buf there = { 0 };
	lv_error e = { 0 };
	int cls;
	int rc = lv__seg_read(w->ds->st, name, created, &f, &cls, &there, &e);
	if (rc == LV_ENOMEM)
		return lv__err(err, rc, "out of memory");
	if (rc < 0) { /* never replaced: our rows stay in the head */
		lv__warn(&s->wl, LV_WARN_CHECKPOINT_REJECTED, name->path, 0, 0,
			 "segment %s is in place but cannot be used (%s); the head keeps versions %" PRIu64
			 "-%" PRIu64 " instead", name->path, e.message, name->first, name->last);
		lv_buf_dispose(&there);
		*holds_all = false;
		return 0;
	}
	bool same = there.size == ours->size && !memcmp(there.ptr, ours->ptr, ours->size);
	*holds_all = same || holds_every(&f, rows, n);
	lv__seg_entry_of(entry, name->first, name->last, f.rows->items, f.rows->n, there.size);
	rc = remember(w, name->first, name->last, f.rows->items, f.rows->n);
	lv__cp_file_dispose(&f);
	lv_buf_dispose(&there);
	return rc < 0 ? lv__err(err, rc, "out of memory") : 0;
}

int lv__seg_put(lv__writer *w, lv__seen *s, uint64_t first, uint64_t last, const lv_version_info *rows,
		size_t n, int64_t created, lv__seg_entry *entry, bool *holds_all, lv_error *err)
{
	memset(entry, 0, sizeof *entry);
	*holds_all = false;
	lv__seg_name name = { first, last, 0, "" };
	lv__seg_path(name.path, sizeof name.path, first, last);
	char range[48];
	snprintf(range, sizeof range, "%" PRIu64 "-%" PRIu64, first, last);
	lv__cp_extra x = { range, NULL };
	lv_buf file = { 0 };
	LV_TRY(lv__cp_encode_x(rows, n, created, &x, &file, err));
	int rc = lv__cp_check_publishable(&file, name.path, created, 0, err);
	if (rc == 0)
		rc = lv_storage_create(w->ds->st, name.path, file.ptr, file.size, err);
	if (rc == LV_EEXISTS) {
		rc = judge_existing(w, s, &name, &file, rows, n, created, entry, holds_all, err);
	} else if (rc == 0) {
		/* read back: its rows leave the head only if these bytes are what is stored */
		lv_buf back = { 0 };
		lv_error e = { 0 };
		int brc = lv_storage_read(w->ds->st, name.path, &back, &e);
		*holds_all = brc == 0 && back.size == file.size && !memcmp(back.ptr, file.ptr, file.size);
		lv_buf_dispose(&back);
		if (brc == LV_ENOMEM) { /* not a store that lost the bytes: this process's memory */
			lv_buf_dispose(&file);
			*holds_all = false;
			return lv__err(err, LV_ENOMEM, "out of memory");
		}
		if (!*holds_all)
			lv__warn(&s->wl, LV_WARN_CHECKPOINT_REJECTED, name.path, 0, 0,
				 "segment %s did not read back as written%s%s; the head keeps its rows",
				 name.path, brc < 0 ? ": " : "", brc < 0 ? e.message : "");
		lv__seg_entry_of(entry, first, last, rows, n, file.size);
		w->r.segments_written++;
		w->r.segment_bytes += file.size;
		if (*holds_all && remember(w, first, last, rows, n) < 0)
			rc = lv__err(err, LV_ENOMEM, "out of memory");
	}
	lv_buf_dispose(&file);
	return rc;
}
