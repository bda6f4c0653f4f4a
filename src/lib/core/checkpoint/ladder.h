/* The degradation ladder: the newest usable checkpoint, and why others were not used. */
#ifndef LV_CORE_CHECKPOINT_LADDER_H
#define LV_CORE_CHECKPOINT_LADDER_H

#include "core/checkpoint/identity.h"
#include "core/checkpoint/store.h"
#include "core/dataset.h"

/*
 * Races the ladder can see (a concurrent cleanup or checkpoint): a listed
 * checkpoint was pruned before it could be read, or one covers versions
 * committed after the manifests were listed.
 */
#define LV__RACE_VANISHED 1
#define LV__RACE_AHEAD 2
/* How many times a call lists again after a race before it gives up. */
#define LV__RACE_RETRIES 8

/* Why a checkpoint file was not used. */
enum lv__cp_class {
	LV__CP_USABLE = 0,
	LV__CP_VANISHED,   /* gone since the listing (a concurrent prune) */
	LV__CP_AHEAD,      /* covers versions beyond the listed manifests (a race, or another history) */
	LV__CP_DAMAGED,    /* does not decode, fails its checksum, or is misnamed */
	LV__CP_FOREIGN,    /* decodes, but a live manifest contradicts it (another history) */
	LV__CP_UNREADABLE  /* could not be read or verified (I/O): nothing is known of it */
};

/*
 * Reads and validates one checkpoint file.  Returns 0 (usable: *f filled) or
 * the error that rejected it, with *cls saying which kind of rejection;
 * LV_ENOMEM is returned as itself.  With `keep`, the bytes read are handed
 * back there.  `pre` (may be NULL) is a manifest head read ahead of need;
 * `pre_read_cp` (may be NULL) the file's bytes, read already.
 */
int lv__cp_try(lv_dataset *ds, const lv__cp_name *name, const lv__manifest_entry *live, size_t nlive,
	       bool all_rows, const lv__head_pre *pre, lv_buf *keep, lv__cp_file *f, int *cls,
	       uint64_t *id_bytes, lv_buf *pre_read_cp, lv_error *e);

/*
 * Loads the newest usable checkpoint of `names` (newest first; not freed).
 * out->rows stays NULL when none is usable.  Each rejected file is a warning
 * in `wl`; *max_rejected is the newest version a rejected file (other than
 * one ahead of the manifests) may record.  !all_rows keeps only the rows of
 * live versions (what versions() needs).  `classes` (NULL, or names->n
 * entries) receives each file's enum lv__cp_class, -1 for files not tried.
 */
int lv__cp_load_ladder(lv_dataset *ds, const lv__cp_names *names, const lv__manifest_entry *live,
		       size_t nlive, bool all_rows, lv__cp_file *out, lv_history_report *rep,
		       int *races, lv__warnlog *wl, uint64_t *max_rejected, int *classes,
		       lv_error *err);

#endif
