/*
 * lancever/refs.h - a dataset's tags and branches (_refs/tags/, _refs/branches/): the
 * records and the loaded set.  Loaded by lv_refs_load() (lancever/dataset.h); implemented
 * in src/lib/core/refs.c (the loader) over src/lib/format/refs.c (the parsers).
 *
 * Ownership: an lv_refs is the caller's, released with lv_refs_free() (accepts NULL);
 * every pointer an accessor returns is borrowed and lives as long as the lv_refs.
 */
#ifndef LANCEVER_REFS_H
#define LANCEVER_REFS_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lv_tag {
	const char *name;
	const char *branch;     /**< NULL = main */
	uint64_t version;
	uint64_t manifest_size; /**< 0 if unknown */
	const char *created_at; /**< RFC 3339 or NULL */
	const char *updated_at;
	const char *metadata;   /**< the tag's "metadata" object as compact JSON text (string
				     values, as Lance writes them); "{}" when absent or null.
				     Appended in 0.1 (issue 27): read it only from a library
				     that has it (this header's) */
} lv_tag;

typedef struct lv_branch {
	const char *name;           /**< "feat/x" (decoded from the %2F file name) */
	const char *parent_branch;  /**< NULL = main */
	uint64_t parent_version;
	int64_t create_at;          /**< unix seconds, 0 if unknown */
	uint64_t manifest_size;
} lv_branch;

typedef struct lv_refs lv_refs;

/** Number of tags.  Errors: none (0 for NULL). */
LV_EXTERN size_t lv_refs_tag_count(const lv_refs *r);
/** Tag `i`.  Borrowed: valid until lv_refs_free(r).  Errors: none (NULL if out of range). */
LV_EXTERN const lv_tag *lv_refs_tag(const lv_refs *r, size_t i);
/** Number of branches.  Errors: none (0 for NULL). */
LV_EXTERN size_t lv_refs_branch_count(const lv_refs *r);
/** Branch `i`.  Borrowed: valid until lv_refs_free(r).  Errors: none (NULL if out of range). */
LV_EXTERN const lv_branch *lv_refs_branch(const lv_refs *r, size_t i);
/* A tag or branch file that lv_refs_load skipped because it could not be read or parsed. */
typedef struct lv_refs_bad {
	int kind;      /**< LV_WARN_TAG_UNREADABLE or LV_WARN_BRANCH_UNREADABLE */
	char *path;    /**< "_refs/tags/x.json" */
	char *message; /**< why */
} lv_refs_bad;
/** Number of skipped tag and branch files.  Errors: none (0 for NULL). */
LV_EXTERN size_t lv_refs_unreadable_count(const lv_refs *r);
/** Skipped file `i`.  Borrowed: valid until lv_refs_free(r).  Errors: none (NULL if out
 *  of range). */
LV_EXTERN const lv_refs_bad *lv_refs_unreadable(const lv_refs *r, size_t i);
/** Frees the refs and everything borrowed from them.  Accepts NULL.  Errors: none. */
LV_EXTERN void lv_refs_free(lv_refs *r);

#ifdef __cplusplus
}
#endif
#endif
