/*
 * The archive: sealed segments of history under _checkpoints/archive/, and the
 * head checkpoint's index of them.
 *
 * A segment "_checkpoints/archive/{first:020}-{last:020}.lance" is a checkpoint
 * file (same 15 columns, metadata and checksum) that answers for the versions
 * first..last: it holds every row a writer had for them when it sealed the
 * range, and nothing outside it.  Segments are written once with
 * create-if-absent and never rewritten, replaced or deleted.
 *
 * The size rule: ranges are cells of S versions laid end to end from version 1
 * (S = archive_segment_rows, at most max_entries), the next cell starting after
 * the archive's last one; a cell is sealed as soon as all of its versions have
 * been committed.  So a head holds less than S rows of its own plus copies of
 * the rows of live versions (for versions()), and every row is written to the
 * archive once.
 */
#ifndef LV_CORE_CHECKPOINT_ARCHIVE_H
#define LV_CORE_CHECKPOINT_ARCHIVE_H

#include "core/checkpoint/codec.h"
#include "core/dataset.h"
#include "core/manifests.h"
#include "core/warnings.h"

#define LV__ARCHIVE_DIR LV__CP_DIR "/archive"
#define LV__SEGMENT_ROWS_DEFAULT 4096
/* The first line of a head's index ("lancever:archive"). */
#define LV__ARCHIVE_MAGIC "lancever-archive 1"

/* A listed segment. */
typedef struct lv__seg_name {
	uint64_t first, last;
	uint64_t size; /* from the listing (0 if it did not say) */
	char path[80];
} lv__seg_name;

typedef struct lv__seg_names {
	lv__seg_name *v; /* sorted by first, then last */
	size_t n, cap;
	int rc;
	/* strays: listed files the readers do not use, set aside by lv__seg_list
	 * (segment-shaped names with an impossible range) and lv__seg_choose */
	struct lv__seg_stray *stray;
	size_t nstray, capstray;
} lv__seg_names;

typedef struct lv__seg_stray {
	lv__seg_name name;
	char why[200];
	bool redundant; /* a valid segment of this history that is not needed (left out of the
			   index by a merge, or inside one used): no warning, no problem */
} lv__seg_stray;

/* Lists _checkpoints/archive/ (names that are not segment-shaped are ignored; segment-shaped
 * names with first == 0 or first > last are strays). */
int lv__seg_list(lv_storage *st, lv__seg_names *out, lv_error *err);

void lv__seg_names_free(lv__seg_names *s);
void lv__seg_path(char *buf, size_t cap, uint64_t first, uint64_t last);
/* The listed segment whose range holds version v, or NULL. */
const lv__seg_name *lv__seg_find(const lv__seg_names *s, uint64_t v);

/* One segment as the head's index records it. */
typedef struct lv__seg_entry {
	uint64_t first, last;
	uint64_t rows;
	int64_t min_ts, max_ts; /* of its rows' commit times (0, 0 with no rows) */
	uint64_t bytes;         /* the file's size */
} lv__seg_entry;

/*
 * The index a head carries: segments sealed so far, the end of the sealed
 * range, and the ranges of rows the head keeps because no segment holds them
 * ("orphans": a range whose segment was found damaged, or lacking rows, when
 * it was to be sealed; rows check --salvage gave back).
 */
typedef struct lv__arc_index {
	uint64_t segment_rows; /* S when the head was written */
	uint64_t through;      /* versions <= this belong to the archive (0 = none) */
	lv__seg_entry *v;      /* sorted by first, ranges disjoint */
	size_t n, cap;
	uint64_t (*orphans)[2]; /* sorted, disjoint [first, last] */
	size_t norphans, caporphans;
} lv__arc_index;

int lv__arc_index_parse(const char *text, const char *path, lv__arc_index *out, lv_error *err);
/* The index as text (malloc'ed), NULL on OOM. */
char *lv__arc_index_format(const lv__arc_index *ix);
/* Adds or replaces the entry for e's range.  0 or LV_ENOMEM. */
int lv__arc_index_put(lv__arc_index *ix, const lv__seg_entry *e);
const lv__seg_entry *lv__arc_index_find(const lv__arc_index *ix, uint64_t first);
/* Adds an orphan range (kept sorted; adjacent or overlapping ranges are joined).  0 or LV_ENOMEM. */
int lv__arc_index_orphan(lv__arc_index *ix, uint64_t first, uint64_t last);
bool lv__arc_index_is_orphan(const lv__arc_index *ix, uint64_t v);
void lv__arc_index_dispose(lv__arc_index *ix);
/* An index entry describing rows (sorted) written as a file of `bytes`. */
void lv__seg_entry_of(lv__seg_entry *e, uint64_t first, uint64_t last, const lv_version_info *rows,
		      size_t n, uint64_t bytes);

/*
 * Reads and validates one segment: it decodes (checksum included), says it
 * answers for its name's range, holds only rows in that range, and, when
 * `created` is not INT64_MIN, carries that dataset_created (else it is of
 * another history: LV_ECONFLICT).  *cls gets an enum lv__cp_class (ladder.h).
 * With `bytes`, the bytes read are handed back.
 */
int lv__seg_read(lv_storage *st, const lv__seg_name *name, int64_t created, lv__cp_file *f, int *cls,
		 lv_buf *bytes, lv_error *err);

/*
 * With no usable head: the dataset_created of the history the archive records, from the
 * newest segment that a live manifest confirms (*confirmed), else from the newest readable
 * one that does not reach past the latest version (*found, not confirmed).  A few are tried.
 */
int lv__seg_history_created(lv_dataset *ds, const lv__seg_names *segs, const lv__manifest_entry *live,
			    size_t nlive, int64_t *created, bool *found, bool *confirmed, const char **which,
			    uint64_t *segments_read, uint64_t *identity_bytes, lv_error *err);

/*
 * The segments readers and writers use, chosen from the listing (see archive.c for the
 * rules): the head's index takes precedence; a listed file it does not name that overlaps
 * a segment it names is left out, as are, where unindexed segments
 * overlap each other, the invalid ones and one entirely inside another that is used.  So
 * the ranges used never shadow an indexed one.  Files left out move to segs->stray: those
 * that read as valid segments of this history (`created`: the history's, or INT64_MIN) are
 * `redundant`, the others each a LV_WARN_SEGMENT_STRAY warning in `wl` (may be NULL).
 * `latest`: the newest live version.  0 or LV_ENOMEM.
 */
int lv__seg_choose(lv_storage *st, lv__seg_names *segs, const lv__arc_index *ix, int64_t created,
		   uint64_t latest, lv__warnlog *wl, uint64_t *segments_read, lv_error *err);

#endif
