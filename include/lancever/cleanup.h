/*
 * lancever/cleanup.h - cleanup of old versions that keeps their history.
 *
 * Lance's cleanup rules (cleanup_old_versions in Lance's table format), with one change in order: the
 * checkpoint that records the versions about to be removed (is_cleaned_up =
 * true) is written *before* anything is deleted, so a crash can never lose
 * their history.  Then the files only old versions referenced are deleted,
 * and the old manifests last: an interrupted run leaves them in place, so a
 * rerun still knows their files were committed and finishes the job.
 *
 * Never removed: the latest version, tagged versions, versions a branch was
 * created from, any file a kept manifest (of the dataset or of a branch)
 * references, and, unless delete_unverified, any unreferenced file younger
 * than 7 days that no old manifest mentions (it may belong to a commit in
 * progress).  Nothing outside the dataset root is ever touched: a manifest
 * path with "..", a leading '/' or a scheme aborts the cleanup.
 */
#ifndef LANCEVER_CLEANUP_H
#define LANCEVER_CLEANUP_H

#include "checkpoint.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Kinds of removed files, for statistics. */
enum lv_file_kind {
	LV_KIND_MANIFEST = 0,
	LV_KIND_DATA = 1,
	LV_KIND_DELETION = 2,
	LV_KIND_INDEX = 3,
	LV_KIND_TRANSACTION = 4,
	LV_KIND_TEMP = 5,
	LV_KIND_COUNT = 6
};

/**
 * Static name of a kind ("manifest", "data", ...); "?" for a kind out of range.
 * The string is static: never free it.  Errors: none.
 */
LV_EXTERN const char *lv_file_kind_name(int kind);

/**
 * Called for every file this cleanup removed, once it is gone (in a dry run: for every file
 * it would remove).  A file that a concurrent cleanup removed first is not reported.  Paths
 * are relative to the lineage cleaned: the dataset root on main, tree/NAME/ on branch NAME.
 */
typedef void (*lv_cleanup_file_cb)(const char *path, int kind, uint64_t size_bytes, const char *reason,
				   void *payload);
/** Progress (lancever/common.h has the contract): lv_cleanup's phases "reading manifests",
 * "cleaning referenced branches", the checkpoint writer's ("listing", "reading manifests" of
 * the ones the previous checkpoint lacks, "writing checkpoint", "verifying"), "checking
 * files", "removing old manifests", "done"; lv_expire's "reading tags", the writer's,
 * "reading commit times", "reading manifests" (a dry run's tail), "reading segments",
 * "removing old manifests", "done". */
typedef lv_progress_cb lv_cleanup_progress_cb;

/**
 * A file this cleanup removed (a dry run: would remove), as Lance's explain_cleanup_old_versions
 * describes a candidate: `unverified` is Lance's flag -- true when the file goes only because it
 * is old enough (older than 7 days) or delete_unverified is set, not because a removed manifest
 * vouched for it (temporary manifests are always unverified, old manifests never are; for a
 * transaction file, unverified = no removed manifest names it).
 */
typedef struct lv_cleanup_candidate {
	const char *path;
	int kind;                     /**< LV_KIND_* */
	uint64_t size;                /**< bytes: `size_bytes` in JSON, CSV, Arrow and Python (the
					   C name is kept: renaming it would break callers' source) */
	const char *reason;
	bool unverified;
	uint64_t version;             /**< an old manifest: its version; else 0 */
} lv_cleanup_candidate;
typedef void (*lv_cleanup_candidate_cb)(const lv_cleanup_candidate *c, void *payload);

/**
 * A branch created from a version of the lineage being cleaned whose base version the policy
 * selects (Lance's CleanupReferencedBranch; Lance lists a branch whose base manifest is gone
 * too).  Such a base version is never removed here (it is kept, as every branch base is).
 * `cascade` says whether this cleanup cleans that branch first: clean_referenced_branches is
 * set and the branch's own lance.auto_cleanup.* config makes it due (see that field).  Called
 * once the dataset's manifests are judged, before the branch is cleaned.
 */
typedef void (*lv_cleanup_branch_cb)(const char *name, uint64_t referenced_version, bool cascade,
				     void *payload);

/** Called once the manifests are read and judged, before anything changes: the version the
 * plan was made against (the latest: Lance's read_version), the versions listed and the
 * versions selected for removal. */
typedef void (*lv_cleanup_plan_cb)(uint64_t read_version, uint64_t versions_total,
				   uint64_t versions_selected, void *payload);

typedef struct lv_cleanup_policy {
	int version;                  /**< LV_CLEANUP_POLICY_VERSION (set by lv_cleanup_policy_init) */
	int64_t older_than_ms;        /**< remove versions committed before now - this; -1 = unset */
	int64_t retain_versions;      /**< keep the newest N versions; -1 = unset */
	uint64_t before_version;      /**< remove only versions < this; 0 = unset */
	bool delete_unverified;       /**< also delete unreferenced files younger than 7 days */
	bool error_if_tagged_old_versions; /**< fail (LV_ETAGGED) if the policy selects a tagged version */
	bool dry_run;                 /**< report what would be removed; change nothing */
	int64_t now_ms;               /**< the clock; 0 = wall clock (tests inject their own) */
	const lv_checkpoint_config *checkpoint; /**< of the checkpoint written first; NULL = the
					   dataset config, else defaults.  Borrowed for the call */
	lv_cleanup_file_cb on_file;
	lv_cleanup_progress_cb on_progress;
	void *payload;
	double delete_rate_limit;     /**< deletes per second (each file counts one, as in Lance's
					   delete_rate_limit, even when a request deletes many); 0 = none */
	const uint64_t *versions;     /**< Lance's exact version list: only these versions are
					   candidates (every other condition set must hold too);
					   NULL = unset.  The latest version, tagged versions and
					   branch bases in it are kept as always (a tagged one fails
					   the run under error_if_tagged_old_versions, as in Lance);
					   a version that does not exist is ignored, as in Lance */
	size_t nversions;             /**< entries of `versions`; 0 with versions set is refused,
					   as Lance refuses an empty list */
	lv_cleanup_candidate_cb on_candidate; /**< each file with Lance's unverified flag (called
					   after on_file, for the same files); NULL = none */
	lv_cleanup_branch_cb on_referenced_branch; /**< see lv_cleanup_branch_cb; NULL = none */
	lv_cleanup_plan_cb on_plan;   /**< see lv_cleanup_plan_cb; NULL = none */
	bool clean_referenced_branches; /**< Lance's cascade: before this lineage's files are
					   judged, each referenced branch (see lv_cleanup_branch_cb)
					   is cleaned with the policy its own latest manifest's
					   lance.auto_cleanup.* keys give, when they make it due:
					   `interval` set and the branch's latest version a
					   multiple of it (0: every version, as in Lance 14); `older_than` (humantime, e.g. "14days")
					   and `retain_versions` as given (neither: 7 days);
					   error_if_tagged_old_versions off; delete_unverified off;
					   this policy's dry_run, now_ms and delete_rate_limit.
					   A branch without `interval` is not cleaned; a value that
					   does not parse fails the cleanup (LV_EINVALID) before
					   anything changes.  The branch's files reach on_file and
					   on_candidate with paths relative to the dataset root
					   (tree/NAME/...), and its removals are added to `stats`.
					   Not recursive: a cascaded branch's own referenced
					   branches are not cleaned */
} lv_cleanup_policy;

/* Version 6: `checkpoint` became a pointer (versions 1 to 5, from before 1.0, are refused). */
#define LV_CLEANUP_POLICY_VERSION 6
/* With no condition set, older_than defaults to 7 days (LanceDB optimize()'s default); a
 * version list is a condition.  Every other field is 0 / NULL / false. */
#define LV_CLEANUP_POLICY_INIT                                                              \
	{ .version = LV_CLEANUP_POLICY_VERSION, .older_than_ms = -1, .retain_versions = -1,    \
	  .error_if_tagged_old_versions = true }

/**
 * Sets p->version to `version` (pass LV_CLEANUP_POLICY_VERSION) and every field to its
 * default, as LV_CLEANUP_POLICY_INIT.  Errors: LV_EINVALID (NULL p, a version this library
 * does not know: then nothing is written).
 */
LV_EXTERN int lv_cleanup_policy_init(lv_cleanup_policy *p, int version);

#define LV_CLEANUP_DEFAULT_OLDER_THAN_MS (7LL * 24 * 3600 * 1000)
#define LV_CLEANUP_UNVERIFIED_MS (7LL * 24 * 3600 * 1000)
/* Margin for coarse file-system mtimes when comparing unreferenced files with commit times. */
#define LV_CLEANUP_MTIME_SLACK_MS 2000

/** What a cleanup or expiry did: the caller's struct, initialised with lv_cleanup_stats_init. */
typedef struct lv_cleanup_stats {
	int version;                 /**< LV_CLEANUP_STATS_VERSION (set by its init) */
	uint64_t versions_total;     /**< manifests listed */
	uint64_t versions_removed;   /**< old manifests this call deleted (a dry run: would delete) */
	uint64_t versions_archived;  /**< versions the history records once the checkpoint written
					  first is in place (its head and the archive) */
	uint64_t files_removed[LV_KIND_COUNT]; /**< by this call: not those a concurrent cleanup took first */
	uint64_t bytes_removed[LV_KIND_COUNT];
	bool checkpoint_written;
	char checkpoint_path[64];
	uint64_t failed_deletes;     /**< files the store refused to delete (each still there, found
					  again by the next run; Lance 14's failed_deletes): the run
					  goes on and does not fail for them */
} lv_cleanup_stats;

/* Version 1 (a struct without a version, from before 1.0, is refused). */
#define LV_CLEANUP_STATS_VERSION 1
#define LV_CLEANUP_STATS_INIT { .version = LV_CLEANUP_STATS_VERSION }

/** Zeroes s and sets s->version to `version` (pass LV_CLEANUP_STATS_VERSION).
 *  Errors: LV_EINVALID (NULL s, an unknown version: then nothing is written). */
LV_EXTERN int lv_cleanup_stats_init(lv_cleanup_stats *s, int version);

/**
 * Runs a cleanup.  Any unreadable manifest aborts it before anything is
 * deleted.  Returns LV_ETAGGED when tagged versions would be removed and
 * error_if_tagged_old_versions is set.  A cleanup (a dry run too, as Lance's
 * explain) is refused with LV_EUNSUPPORTED, before anything changes, when a
 * manifest it reads (the dataset's, its branches', commits newer than the
 * plan) carries writer feature flags lancever does not know, naming the bits
 * (Lance's ensure_can_write_manifest refuses them in cleanup).  `stats` (may be NULL) is
 * the caller's initialised struct, filled (the fields of its version) also on error with
 * what was done; the callbacks' arguments are borrowed for the call.
 * Errors: LV_EINVALID (a NULL argument, an invalid policy, a policy or stats of a version
 * this library does not know (nothing is done), an empty version list, a
 * cascaded branch's lance.auto_cleanup.* value that does not parse); errors of a cascaded
 * branch's cleanup (its name in the message);
 * LV_ETAGGED; LV_EUNSUPPORTED (unknown writer flags); LV_ECORRUPT (a
 * manifest that does not parse or names an unsafe path: nothing is deleted); LV_EIO (a
 * manifest that vanished mid-plan); the reading errors of lv_history() and the errors of
 * lv_checkpoint_write() (the history written first); and storage errors of the deletes.
 */
LV_EXTERN int lv_cleanup(lv_dataset *ds, const lv_cleanup_policy *policy, lv_cleanup_stats *stats,
			 lv_error *err) LV_WARN_UNUSED;

/**
 * Manifest-only expiry (what upstream Lance calls expire_versions): removes
 * old versions' manifests and nothing else.  The versions are selected as
 * lv_cleanup() selects them (older_than, retain_versions, before_version;
 * with none set, older than 7 days; never the latest, a tagged version or a
 * branch's base), optionally thinned: with keep_one_per_ms, the newest
 * selected version of each window of that length (by commit time, windows
 * aligned to the Unix epoch) is kept.
 *
 * History is written first, as in cleanup: a checkpoint records every
 * version (reading only the manifests no checkpoint covers yet) and marks the
 * expired ones cleaned up before any manifest is deleted.  Commit times of
 * versions a checkpoint covers come from the checkpoint (the head, or the
 * archive segment that holds them), never from their manifests.  Data,
 * deletion, index and transaction files are left in place: a later
 * lv_cleanup() removes them, under Lance's rule for files no manifest
 * references any more (they are "unverified": removed once older than 7
 * days, or at once with delete_unverified when no writer is committing).
 */
typedef struct lv_expire_policy {
	int version;                  /**< LV_EXPIRE_POLICY_VERSION (set by lv_expire_policy_init) */
	int64_t older_than_ms;        /**< expire versions committed before now - this; -1 = unset */
	int64_t retain_versions;      /**< keep the newest N versions; -1 = unset */
	uint64_t before_version;      /**< expire only versions < this; 0 = unset */
	int64_t keep_one_per_ms;      /**< thinning window (e.g. 3600000 = one per hour); -1 = none */
	bool error_if_tagged_old_versions; /**< fail (LV_ETAGGED) if the policy selects a tagged version */
	bool dry_run;                 /**< report what would be expired; change nothing (no checkpoint) */
	double delete_rate_limit;     /**< deletes per second; 0 = none */
	int64_t now_ms;               /**< the clock; 0 = wall clock */
	const lv_checkpoint_config *checkpoint; /**< NULL = the dataset config, else defaults */
	lv_cleanup_file_cb on_file;   /**< each manifest removed (kind LV_KIND_MANIFEST) */
	lv_cleanup_progress_cb on_progress;
	void *payload;
} lv_expire_policy;

/* Version 3: `checkpoint` became a pointer (versions 1 and 2, from before 1.0, are refused). */
#define LV_EXPIRE_POLICY_VERSION 3
#define LV_EXPIRE_POLICY_INIT                                                               \
	{ .version = LV_EXPIRE_POLICY_VERSION, .older_than_ms = -1, .retain_versions = -1,     \
	  .keep_one_per_ms = -1, .error_if_tagged_old_versions = true }

/**
 * Sets p->version to `version` (pass LV_EXPIRE_POLICY_VERSION) and every field to its
 * default, as LV_EXPIRE_POLICY_INIT.  Errors: LV_EINVALID (NULL p, an unknown version:
 * then nothing is written).
 */
LV_EXTERN int lv_expire_policy_init(lv_expire_policy *p, int version);

/**
 * Runs a manifest-only expiry.  `stats` (may be NULL) counts manifests
 * (files_removed[LV_KIND_MANIFEST]); versions_archived is the number of
 * versions the history records.  Any failure before the first delete leaves
 * the dataset unchanged (a checkpoint may have been written: history only).
 * `stats` is the caller's struct; callbacks' arguments are borrowed for the call.
 * Errors: LV_EINVALID (a NULL argument, an invalid policy, a policy or stats of an unknown
 * version), LV_ETAGGED (as
 * lv_cleanup()), the reading errors of lv_history(), the errors of
 * lv_checkpoint_write(), and storage errors of the deletes.
 */
LV_EXTERN int lv_expire(lv_dataset *ds, const lv_expire_policy *policy, lv_cleanup_stats *stats,
			lv_error *err) LV_WARN_UNUSED;

#ifdef __cplusplus
}
#endif
#endif
