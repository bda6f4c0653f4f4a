/*
 * Internal entry points of the checkpoint codec (core/checkpoint/), for
 * unit tests and the checkpoint fuzz target.  No I/O.
 */
#ifndef LV_CORE_CHECKPOINT_CHECKPOINT_INTERNAL_H
#define LV_CORE_CHECKPOINT_CHECKPOINT_INTERNAL_H

#include <stdbool.h>

#include "core/manifests.h"
#include "lancever/checkpoint.h"
#include "util/progress.h"

#ifdef LV_TEST_HOOKS
/*
 * For tests and fuzzers only (the test library, LV_TEST_HOOKS): decodes and validates a
 * checkpoint file's bytes exactly as the history ladder does (lv__cp_decode: schema,
 * nulls, metadata, strictly increasing versions, and the checksum unless
 * `verify_checksum` is false, which only the fuzz target uses to reach past it).  *rows
 * is a new list (free with lv_version_list_free); *created (may be NULL) receives
 * dataset_created.  (Encoding: lv__cp_encode, codec.h.)
 */
int lv__cp_decode_rows(const uint8_t *data, size_t size, const char *path, bool verify_checksum,
		       lv_version_list **rows, int64_t *created, lv_error *err);
#endif

/*
 * lv_checkpoint_write with rows its caller has already built from the same
 * manifests (cleanup reads every manifest anyway): `pre`, pointers sorted by version,
 * each with manifest_path set.  A live version the previous checkpoint lacks
 * takes its row from `pre` when one has the same version and manifest path,
 * instead of reading its manifest again.  The strings of `pre` must outlive
 * the call.  `prog` (NULL: cfg's own callback) reports the write's phases for a caller
 * that reports its whole run (cleanup, expire); no "done" is reported.  `listed` (may be
 * NULL): the caller's own listing of _versions/ (lv__manifests_list's, sorted), made just
 * before: the write's first look at the dataset takes it (it is emptied, and freed here)
 * instead of listing again; a race seen then makes it list afresh, as always.
 */
typedef struct lv__cp_listing {
	lv__manifest_entry *v; /* lv__malloc'ed */
	size_t n;
} lv__cp_listing;
int lv__cp_write_pre(lv_dataset *ds, const lv_checkpoint_config *cfg,
			     const uint64_t *cleaned, size_t ncleaned,
			     const lv_version_info *const *pre, size_t npre, lv__progress *prog,
			     lv__cp_listing *listed, lv_checkpoint_result *res, lv_error *err);

/*
 * lv_checkpoint_write with rows recovered from damaged files (lancever check
 * --salvage): rows of `extra` (sorted by version) whose versions no usable
 * checkpoint and no live manifest holds are added.  Their strings must
 * outlive the call.
 */
int lv__cp_write_extra(lv_dataset *ds, const lv_checkpoint_config *cfg,
			       const lv_version_info *extra, size_t nextra, lv__progress *prog,
			       lv_checkpoint_result *res, lv_error *err);

/*
 * lv_checkpoint_write with the records a capture read earlier (core/capture.c): `rows`,
 * sorted by version, each with manifest_path set, are written whether or not their
 * manifests are still live (a version whose manifest is gone is recorded cleaned up),
 * without reading those manifests again; a version the previous checkpoint records keeps
 * its row.  A row in a range the archive already sealed is taken as held by its segment
 * when the head's index says that segment holds every version of its range; otherwise
 * the head keeps it (an orphan), as it keeps rows no segment holds.
 * The strings of `rows` must outlive the call.  `rec` (may be NULL; see writer.h) receives
 * the versions above rec->above that the head holds as it was read back from the store.
 */
struct lv__recorded;
int lv__cp_write_captured(lv_dataset *ds, const lv_checkpoint_config *cfg, const lv_version_info *rows,
			  size_t n, struct lv__recorded *rec, lv_checkpoint_result *res, lv_error *err);

/*
 * lv_checkpoint_write re-adopting the history identity `created` (lancever check --salvage,
 * core/readopt.h): the rows of every usable head, whatever its dataset_created, are merged
 * and written under `created`, with the archive index that reaches furthest.  The caller has
 * verified that the segments that index names carry `created`.
 */
int lv__cp_write_adopt(lv_dataset *ds, const lv_checkpoint_config *cfg, int64_t created,
			       lv_checkpoint_result *res, lv_error *err);

/* The version in the name of the newest file in _checkpoints/ (0: none); its content is not read. */
int lv__cp_newest_name(lv_storage *st, uint64_t *version, lv_error *err);

#endif
