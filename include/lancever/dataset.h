/*
 * lancever/dataset.h - open a Lance dataset and read its version history.
 *
 * Ownership: objects returned through `**out` belong to the caller and are
 * released with their own lv_*_free() (all accept NULL).  Pointers returned by
 * getters (lv_version_list_get, strings inside lv_version_info) are borrowed and
 * live as long as the object they came from.  (Conventions: lancever/common.h.)
 *
 * "The reading errors", which every call that reads a dataset's history can return
 * (here, in checkpoint.h, check.h and arrow.h): LV_ENOTFOUND (not a Lance
 * dataset: no manifest in _versions/, or a branch that is not registered);
 * LV_ECORRUPT, LV_EUNSUPPORTED or LV_ELIMIT (a manifest the call reads does not parse,
 * needs a feature lancever does not implement, or is larger than accepted; the message
 * names it); LV_ENOMEM; and storage errors.  A checkpoint or archive segment that
 * cannot be used is not an error: it is a warning, and the ladder goes on.
 */
#ifndef LANCEVER_DATASET_H
#define LANCEVER_DATASET_H

#include "common.h"
#include "refs.h"
#include "storage.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lv_dataset lv_dataset;
typedef struct lv_version_list lv_version_list;

typedef struct lv_open_options {
	int version;          /**< LV_OPEN_OPTIONS_VERSION (set by lv_open_options_init) */
	int threads;          /**< manifest-reading concurrency, 0 = default (8; 32 on remote stores) */
	const char *branch;   /**< NULL/"main" = main; else the branch under tree/ */
	const lv_storage_options *storage; /**< NULL = none; borrowed for the call */
} lv_open_options;

/* Version 2: `storage` became a pointer (version 1 held the options by value: refused). */
#define LV_OPEN_OPTIONS_VERSION 2
#define LV_OPEN_OPTIONS_INIT { .version = LV_OPEN_OPTIONS_VERSION }

/**
 * Sets o->version to `version` (pass LV_OPEN_OPTIONS_VERSION) and every field to its
 * default (as LV_OPEN_OPTIONS_INIT).  Errors: LV_EINVALID (NULL o, a version this library
 * does not know: then nothing is written).
 */
LV_EXTERN int lv_open_options_init(lv_open_options *o, int version);

/**
 * Opens the dataset rooted at `uri` (path, file://, mem://, s3://, az://; see
 * lv_storage_open).  `opts` may be NULL.
 * With opts->branch, versions come from `tree/<branch>/` and tags are those of
 * that branch.  A local path of the form `<root>/tree/<branch>` whose root is a
 * dataset is opened as that branch automatically.  The URI is parsed once and its store
 * opened once.  Opening reads no more than such probes (and, on an object store whose
 * URI maps to keys two ways, one listing of _versions/ to pick the one Lance wrote):
 * whether a dataset is there is found by the first reading call (LV_ENOTFOUND), except
 * that a local path that does not exist is LV_ENOTFOUND ("<uri>: does not exist") and one
 * that is a file LV_EINVALID ("<uri>: is not a directory") here.
 * *out is the caller's: lv_dataset_free(); NULL on error.
 * Errors: LV_EINVALID (NULL out or uri, opts of a version other than 2, a branch name Lance
 * refuses: segments of Unicode alphanumerics and '.', '-', '_' between '/'s, valid UTF-8;
 * docs/cli.md), LV_ENOTFOUND, those of lv_storage_open(), LV_ENOMEM.
 */
LV_EXTERN int lv_dataset_open(lv_dataset **out, const char *uri, const lv_open_options *opts,
			      lv_error *err) LV_WARN_UNUSED;

/**
 * Opens a dataset over an existing storage handle.  The dataset borrows `st`,
 * which must outlive it.  *out is the caller's: lv_dataset_free(); NULL on error.
 * Errors: LV_EINVALID (NULL out or st, an invalid branch name), LV_ENOMEM.
 */
LV_EXTERN int lv_dataset_open_storage(lv_dataset **out, lv_storage *st,
				      const lv_open_options *opts, lv_error *err) LV_WARN_UNUSED;

/** Frees the dataset, its warnings and the storage it opened (not a borrowed one).
 *  Accepts NULL.  Errors: none. */
LV_EXTERN void lv_dataset_free(lv_dataset *ds);

/** The dataset's storage handle (the branch's sub-handle on a branch).  Borrowed: valid
 *  until lv_dataset_free(ds).  Errors: none (NULL for NULL). */
LV_EXTERN lv_storage *lv_dataset_storage(lv_dataset *ds);

/** The branch the dataset is on (opts->branch, or the one a "<root>/tree/<branch>" path
 *  names), NULL on main.  Borrowed: valid until lv_dataset_free(ds).  Errors: none (NULL for
 *  NULL).  Appended in 0.2 (issue 29). */
LV_EXTERN const char *lv_dataset_branch(const lv_dataset *ds);

/**
 * One version: the 15 columns of the checkpoint schema, plus details that only
 * a live manifest has (`has_manifest_details`).
 */
typedef struct lv_version_info {
	uint64_t version;
	int64_t timestamp_millis; /**< commit time; 0 if the manifest has none */
	uint64_t total_fragments;
	uint64_t total_data_files;
	uint64_t total_files_size;
	uint64_t total_deletion_files;
	uint64_t total_data_file_rows;
	uint64_t total_deletion_file_rows;
	uint64_t total_rows;
	bool is_tagged;
	bool is_cleaned_up;
	const char *transaction_uuid;   /**< NULL if unknown */
	bool has_read_version;
	uint64_t read_version;
	const char *operation_type;     /**< "Append", "Delete", ...; NULL if unknown */
	const char *transaction_properties; /**< JSON object text, never NULL ("{}") */

	/* Manifest details (valid when has_manifest_details). */
	bool has_manifest_details;
	int64_t timestamp_nanos;        /**< full-precision commit time */
	const char *manifest_path;      /**< relative to the dataset root */
	uint64_t manifest_size;
	const char *writer_library;     /**< e.g. "lance" (NULL if absent) */
	const char *writer_version;     /**< e.g. "8.0.0" */
	const char *data_format;        /**< e.g. "2.1" */
	const char *transaction_file;   /**< name under _transactions/, NULL if none */
	bool transaction_inline;        /**< the transaction came from the manifest itself */
	uint64_t reader_feature_flags;
	uint64_t writer_feature_flags;
	const char *branch;             /**< NULL = main */
	size_t num_indices;
	size_t num_config;              /**< entries of the manifest config map */
	const char *const *config_keys;
	const char *const *config_values;
} lv_version_info;

/** Where a history answer came from (the degradation ladder). */
enum lv_rung {
	LV_RUNG_MANIFESTS = 0,          /**< no usable checkpoint: every manifest was read */
	LV_RUNG_NEWEST_CHECKPOINT = 1,  /**< the newest checkpoint file */
	LV_RUNG_OLDER_CHECKPOINT = 2    /**< an older checkpoint, newer ones were unusable */
};

/**
 * Report of every history call: the caller's struct, initialised with
 * lv_history_report_init() (a struct that is not is LV_EINVALID, nothing is read).
 */
typedef struct lv_history_report {
	int version;                  /**< LV_HISTORY_REPORT_VERSION (set by its init) */
	int rung;                     /**< enum lv_rung */
	uint64_t checkpoint_version;  /**< latest version the used checkpoint covers (0 = none) */
	uint64_t checkpoints_rejected;/**< checkpoint files tried and rejected */
	uint64_t manifests_read;      /**< manifests read (the tail, when a checkpoint was used) */
	uint64_t manifests_vanished;  /**< listed but gone before they could be read (skipped) */
	uint64_t identity_bytes;      /**< manifest bytes read to check a checkpoint's identity */
	uint64_t requests;            /**< storage requests made */
	uint64_t bytes_read;          /**< bytes read from storage */
	char note[256];               /**< e.g. why a checkpoint was rejected */
	uint64_t unrecorded_versions; /**< history: versions in gaps (no record anywhere readable) */
	uint64_t warnings;            /**< warnings this call added to the dataset */
	uint64_t segments_read;       /**< archive segments read (history, as-of, check; versions, issue 30 §2) */
} lv_history_report;

#define LV_HISTORY_REPORT_VERSION 1
#define LV_HISTORY_REPORT_INIT { .version = LV_HISTORY_REPORT_VERSION }

/** Zeroes r and sets r->version to `version` (pass LV_HISTORY_REPORT_VERSION).
 *  Errors: LV_EINVALID (NULL r, an unknown version: then nothing is written). */
LV_EXTERN int lv_history_report_init(lv_history_report *r, int version);

/**
 * Every live version (one readable manifest in _versions/), sorted by version,
 * with the 15 checkpoint fields exactly as Lance's versions() reports them.
 * From the newest usable checkpoint plus the manifests it lacks (the ladder);
 * when more than 8,192 live versions are older than the head's rows (a dataset
 * never cleaned up whose rows were sealed into archive segments), from those
 * segments too, one at a time, as lv_history_each() reads them, instead of
 * their manifests (report->segments_read counts them);
 * rows that come from the checkpoint carry manifest_path (from the listing)
 * but no other manifest details (has_manifest_details is false: read the
 * manifest with lv_version_get() for those); rows read from a manifest carry
 * them all.  Manifests are read concurrently.  A manifest that disappears
 * between listing and reading (concurrent cleanup) is skipped, counted in
 * report->manifests_vanished and a warning; a manifest that cannot be parsed
 * is an error naming the file (LV_ECORRUPT).  `report` may be NULL; it is written
 * only on success (and must be initialised: lv_history_report_init()).  *out is the caller's: lv_version_list_free(); NULL on error.
 * Errors: LV_EINVALID (NULL out or ds, a report of an unknown version), the reading errors
 * (above).
 */
LV_EXTERN int lv_versions(lv_version_list **out, lv_dataset *ds, lv_history_report *report,
			  lv_error *err) LV_WARN_UNUSED;

/** Number of entries.  Errors: none (0 for NULL). */
LV_EXTERN size_t lv_version_list_count(const lv_version_list *list);
/** Entry `i` (< count), sorted by version.  Borrowed: valid until
 *  lv_version_list_free(list), strings included.  The entries are one array:
 *  lv_version_list_get(list, i) == lv_version_list_get(list, 0) + i (the Python package
 *  reads columns from it in one pass).  Errors: none (NULL if out of range). */
LV_EXTERN const lv_version_info *lv_version_list_get(const lv_version_list *list, size_t i);
/** Name of a manifest skipped because it vanished (i < lv_version_list_vanished_count()).
 *  Borrowed: valid until lv_version_list_free(list).  Errors: none (NULL if out of range). */
LV_EXTERN const char *lv_version_list_vanished(const lv_version_list *list, size_t i);
/** Number of vanished manifests (also report->manifests_vanished).  Errors: none (0 for NULL). */
LV_EXTERN size_t lv_version_list_vanished_count(const lv_version_list *list);
/*
 * Gaps of a history list: ranges of version numbers that no readable
 * checkpoint or manifest records (cleaned up before any checkpoint recorded
 * them, trimmed by max_entries, or only in a damaged checkpoint).  Sorted.
 * Lists from lv_versions() have none (only live versions are asked for).
 */
/** Number of gaps.  Errors: none (0 for NULL). */
LV_EXTERN size_t lv_version_list_gap_count(const lv_version_list *list);
/** Gap `i`: writes *first and *last (either may be NULL).  Errors: none; false (nothing
 *  written) if `i` is out of range. */
LV_EXTERN bool lv_version_list_gap(const lv_version_list *list, size_t i, uint64_t *first,
				   uint64_t *last);
/**
 * The version a manifest path names: its last component is Lance's V1 name "<v>.manifest" or
 * V2 name "<u64::MAX - v, 20 digits>.manifest" directly under a "_versions/" directory (of the
 * root or of tree/<branch>/): true and *version, else false (another file, a detached
 * manifest).  What the dry-run and explain listings and the cleanup files' `version` column
 * say.  Errors: none.  Appended in 0.2 (issue 29).
 */
LV_EXTERN bool lv_manifest_path_version(const char *path, uint64_t *version);

/**
 * A new list of the entries idx[0..n) of `list` (indices strictly increasing, so it stays
 * sorted by version), with its own copies of their strings, and the gaps of `list` that lie
 * between the first and the last entry kept (what `versions`/`history --since/--until/--limit`
 * export).  Entries without manifest details carry none.  *out is the caller's:
 * lv_version_list_free(); NULL on error.  Errors: LV_EINVALID (NULL out or list, NULL idx with
 * n > 0, an index out of range or not above the one before), LV_ENOMEM.  Appended in 0.2.
 */
LV_EXTERN int lv_version_list_select(lv_version_list **out, const lv_version_list *list,
				     const size_t *idx, size_t n, lv_error *err) LV_WARN_UNUSED;
/** Frees the list and everything borrowed from it.  Accepts NULL.  Errors: none. */
LV_EXTERN void lv_version_list_free(lv_version_list *list);

/**
 * Reads one live version's record from its manifest (all manifest details).  *out is the
 * caller's: lv_version_list_free() (one entry); NULL on error.
 * Errors: LV_ENOTFOUND (no manifest of that version), LV_EINVALID (NULL out or ds),
 * LV_ECORRUPT / LV_EUNSUPPORTED / LV_ELIMIT (the manifest), LV_ENOMEM, storage errors.
 */
LV_EXTERN int lv_version_get(lv_version_list **out, lv_dataset *ds, uint64_t version,
			     lv_error *err) LV_WARN_UNUSED;

/* ---- warnings ---- */

/*
 * Every input that a call rejected or skipped (a checkpoint, a manifest, a
 * tag), and every range of history it cannot account for, is recorded on the
 * dataset as a warning: an answer that may be incomplete says so.  Warnings
 * accumulate over calls (duplicates folded) until lv_dataset_clear_warnings().
 * Only the final attempt of a call that retried after a race records any.
 */
enum lv_warning_kind {
	LV_WARN_CHECKPOINT_REJECTED = 1, /**< a checkpoint file could not be used (path, message says why) */
	LV_WARN_CHECKPOINT_DAMAGED = 2,  /**< a damaged checkpoint kept aside as <name>.damaged-<crc> (path) */
	LV_WARN_MANIFEST_VANISHED = 3,   /**< listed, gone before it could be read (concurrent cleanup) */
	LV_WARN_TAG_UNREADABLE = 4,      /**< a tag file that does not parse; the other tags still count */
	LV_WARN_BRANCH_UNREADABLE = 5,   /**< a branch file that does not parse */
	LV_WARN_HISTORY_GAP = 6,         /**< versions first..last have no record anywhere readable */
	LV_WARN_ANSWER_UNCERTAIN = 7,    /**< an as-of answer that a version in a gap could change */
	LV_WARN_SEGMENT_MISSING = 8,     /**< an archive segment the head's index names is not there (path) */
	LV_WARN_SEGMENT_STRAY = 9        /**< a file in _checkpoints/archive/ that is ignored: not in the
					      head's index and overlapping what it accounts for, or not a
					      valid segment where segments overlap (path); it hides nothing */
};

typedef struct lv_warning {
	int kind;            /**< enum lv_warning_kind */
	const char *path;    /**< the file, relative to the dataset root; NULL if none */
	uint64_t first, last;/**< version range (HISTORY_GAP, ANSWER_UNCERTAIN), else 0 */
	const char *message; /**< one line that names the file or the range */
} lv_warning;

/** Number of warnings recorded on `ds`.  Errors: none (0 for NULL). */
LV_EXTERN size_t lv_dataset_warning_count(const lv_dataset *ds);
/** Warning `i`.  Borrowed; valid until the next call on `ds` or lv_dataset_clear_warnings().
 *  Errors: none (NULL if out of range). */
LV_EXTERN const lv_warning *lv_dataset_warning(const lv_dataset *ds, size_t i);
/** Drops every warning (borrowed ones become invalid).  Accepts NULL.  Errors: none. */
LV_EXTERN void lv_dataset_clear_warnings(lv_dataset *ds);

/* ---- tags and branches ---- */

/* The types and accessors: lancever/refs.h (included above). */
/**
 * Reads _refs/tags/ *.json and _refs/branches/ *.json (of the dataset's root, whatever
 * its branch).  A file that cannot be read or parsed is skipped, listed by
 * lv_refs_unreadable() and a warning on `ds`.  *out is the caller's: lv_refs_free();
 * NULL on error.  Errors: LV_EINVALID (NULL out or ds), LV_ENOTFOUND (not a Lance
 * dataset), LV_ENOMEM, storage errors of the listings.
 */
LV_EXTERN int lv_refs_load(lv_refs **out, lv_dataset *ds, lv_error *err) LV_WARN_UNUSED;

/**
 * The name of Lance feature flag bit `bit` (0..63: bit 0 is flag 1, bit 8 is flag 256) as
 * lancever knows it ("deletion_files", "stable_row_ids", "use_v2_format_deprecated",
 * "table_config", "base_paths", "disable_transaction_file", "unstable_data_overlay_files",
 * "covered_index_metadata", "mixed_data_file_versions", "frag_reuse_with_stable_row_ids",
 * "fragment_reuse_index", "semantic_types_or_managed_blobs"), or NULL for a bit no Lance
 * release is known to use.  A name does not mean lancever reads or cleans such a manifest.
 * Static string.  Errors: none.
 */
LV_EXTERN const char *lv_feature_flag_name(unsigned bit);

#ifdef __cplusplus
}
#endif
#endif
