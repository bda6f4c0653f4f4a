/*
 * The checkpoint writer's internals, shared by its files:
 *   write.c    lv_checkpoint_write: gather -> quarantine -> compose -> put -> prune
 *   compose.c  the rows: what the head holds, which ranges are sealed into segments
 *   seal.c     one segment written (create-if-absent, never replaced)
 *   put.c      the head written (create-if-absent, else merged under the lock)
 *   cover.c    two heads' indexes folded into one non-overlapping cover (merges)
 *   verify.c   what is published checked before, and read back from the store after
 *   prune.c    old heads deleted only when every row they hold is held elsewhere
 *   newid.c    no head of a new identity while the dataset shows recorded history
 */
#ifndef LV_CORE_CHECKPOINT_WRITER_H
#define LV_CORE_CHECKPOINT_WRITER_H

#include "core/checkpoint/archive.h"
#include "core/checkpoint/store.h"
#include "core/dataset.h"
#include "core/manifests.h"
#include "core/warnings.h"
#include "lancever/checkpoint.h"
#include "util/progress.h"

/* What one attempt saw of the dataset. */
typedef struct lv__seen {
	lv__manifest_entry *live;
	size_t nlive;
	lv__cp_names names;
	int *cls;              /* per names.v: enum lv__cp_class, -1 = not tried */
	lv__cp_file base;      /* rows of every usable checkpoint (merged), or of none */
	lv__seg_names segs;    /* _checkpoints/archive/ */
	lv__arc_index ix;      /* the base head's index (empty when it has none) */
	bool unreadable;       /* a checkpoint could not be read: prune nothing */
	int races;
	lv__warnlog wl;
	uint64_t max_rejected;
	bool have_created;     /* with no usable head: dataset_created of a segment of this history */
	int64_t created;
} lv__seen;

/* A segment this writer wrote (and read back) or found in place and decoded. */
typedef struct lv__sealed {
	uint64_t first, last;
	uint64_t *versions; /* the versions it holds, sorted */
	size_t n;
} lv__sealed;

/*
 * What a capture learns from its flush's read-back (lv__cp_write_captured): the versions in
 * (above, latest] the published head holds, as read back from the store.  `have` is false
 * when the head does not reach down to above + 1 (older ones are in segments): the caller
 * then reads them from the history.
 */
typedef struct lv__recorded {
	uint64_t above;
	uint64_t *v; /* sorted, lv__malloc'ed; the caller frees it */
	size_t n;
	bool have;
} lv__recorded;

/* One write's inputs and results. */
typedef struct lv__writer {
	lv_dataset *ds;
	const lv_checkpoint_config *cfg_in;
	lv_checkpoint_config cfg;
	const uint64_t *cleaned; /* sorted */
	size_t ncleaned;
	const lv_version_info *const *pre; /* rows built by the caller, sorted by version */
	size_t npre;
	const lv_version_info *extra; /* salvaged rows (lv__cp_write_extra), sorted */
	size_t nextra;
	bool captured;           /* extra holds a capture's rows (lv__cp_write_captured), not salvage */
	lv_checkpoint_result r;  /* its `report` unused: the report is rep */
	lv_history_report rep;   /* how the previous checkpoint was loaded */
	lv__sealed *sealed;
	size_t nsealed, capsealed;
	uint64_t fresh_vanished; /* manifests that vanished while being read: gather again */
	bool adopting;           /* check --salvage re-adopting identity adopt_created (readopt.h) */
	int64_t adopt_created;
	lv__progress *prog;      /* the caller's progress (never NULL; its cb may be) */
	lv__manifest_entry *listed; /* the caller's listing of _versions/, taken (owned) by the
				     * first gather in place of its own; NULL: list */
	size_t nlisted;
	uint64_t read_done, read_total; /* "reading manifests": of the live ones the base lacks */
	lv__recorded *rec;       /* a capture's: the versions the head read back records (or NULL) */
} lv__writer;

/* Owned rows: the list owns its strings. */
typedef struct lv__rows {
	lv_version_info *v;
	size_t n, cap;
	lv__arena arena;   /* strings copied in */
	char **props;     /* wrapped property texts (malloc'ed, freed with the rows) */
	size_t nprops;
} lv__rows;

void lv__rows_dispose(lv__rows *r);
/* Appends a copy of `v` (strings copied into r->arena).  0 or LV_ENOMEM. */
int lv__rows_add_copy(lv__rows *r, const lv_version_info *v);

/* Union of two sorted row sets: rows of `a` win for immutable fields, flags are OR-ed. */
int lv__cp_merge_rows(const lv_version_info *a, size_t na, const lv_version_info *b, size_t nb,
		      lv_version_info **out, size_t *nout);

/*
 * The rows the head will hold (sorted, flags set, properties wrapped), with
 * every complete cell of versions sealed into a segment on the way when the
 * archive is on.  `index` receives the head's archive index text (NULL when
 * the archive is off).  Manifests the base lacks are read range by range, so
 * memory stays bounded by a cell plus the head.
 */
int lv__cp_compose(lv__writer *w, lv__seen *s, lv__rows *head, char **index, lv_error *err);

/* Writes one segment for first..last (rows sorted, inside the range).  See seal.c. */
int lv__seg_put(lv__writer *w, lv__seen *s, uint64_t first, uint64_t last, const lv_version_info *rows,
		size_t n, int64_t created, lv__seg_entry *entry, bool *holds_all, lv_error *err);

/* Writes the head `file` under w->r.path (create-if-absent, else judged and merged). */
int lv__cp_put_head(lv__writer *w, lv__seen *s, lv_buf *file, const lv_version_info *keep, size_t nkeep,
		    int64_t created, const char *index, lv_error *err);

/* Prunes heads beyond the newest `keep`, each only if every row it holds is held elsewhere. */
int lv__cp_prune(lv__writer *w, lv__seen *s, int64_t keep, const lv_version_info *rows, size_t n,
		 int64_t created, lv_error *err);

/*
 * Before publishing (verify.c): `file` decodes as a reader would take it (checksum, a strict
 * index), carries `created`, and its newest row is `latest` (0: not checked).  LV_ECORRUPT
 * naming `path` otherwise: the file is not published.
 */
int lv__cp_check_publishable(const lv_buf *file, const char *path, int64_t created, uint64_t latest,
			     lv_error *err);

/*
 * After publishing the head w->r.path (verify.c): it is read back from the store, of this
 * history, and every version of w->cleaned and every cleaned-up row of `keep` is in one of
 * its rows or of a segment its index names, read back (size, checksum, identity, range).
 * Retried a few times (stores that show writes late); then LV_EIO naming the file.
 */
int lv__cp_verify_published(lv__writer *w, const lv_version_info *keep, size_t nkeep, int64_t created,
			    lv_error *err);

/*
 * Folds index b into `into` as a non-overlapping cover chosen from both sets of entries
 * (cover.c: the same for every merger, in any order); entries left out go to *dropped
 * (malloc'ed, *ndropped of them): the versions only they hold must stay in the head.
 * 0 or LV_ENOMEM.
 */
int lv__arc_index_fold(lv__arc_index *into, const lv__arc_index *b, lv__seg_entry **dropped,
		       size_t *ndropped);
/* The sub-ranges of [first, last] no entry of ix covers, at most `cap` of them, into out. */
size_t lv__arc_index_uncovered(const lv__arc_index *ix, uint64_t first, uint64_t last,
			       uint64_t (*out)[2], size_t cap);

/*
 * With no usable head and no identity from the archive: 0 if a head of a new identity may be
 * written, LV_ECONFLICT naming the sign of recorded history found (newid.c), a storage error;
 * 0 with w->fresh_vanished set when a concurrent writer's head appeared (gather again).
 */
int lv__cp_guard_new_identity(lv__writer *w, lv__seen *s, lv_error *err);

/* Is x in the sorted array v? */
bool lv__in_sorted_u64(const uint64_t *v, size_t n, uint64_t x);

#endif
