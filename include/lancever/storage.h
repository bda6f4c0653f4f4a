/*
 * lancever/storage.h - the storage abstraction every other layer uses.
 *
 * A storage handle is rooted at one directory or object-store prefix (normally
 * a dataset root).  All paths passed to it are relative to that root, use '/'
 * as the separator, and must not contain "." or ".." segments, a leading '/'
 * or a NUL; the front-end functions below reject such paths with LV_EINVALID
 * before a backend sees them, so no backend can be led outside its root.
 *
 * Backends: local filesystem (plain paths and file:// URIs), in-memory (with
 * fault injection, for tests and fuzzers).  Custom backends implement
 * lv_storage_ops (see lancever/sys/storage.h).  Every backend is safe to call
 * from several threads at once.
 */
#ifndef LANCEVER_STORAGE_H
#define LANCEVER_STORAGE_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lv_storage lv_storage;

/** One listed object.  `path` is relative to the storage root. */
typedef struct lv_list_entry {
	const char *path;  /**< borrowed: valid only during the callback */
	uint64_t size;     /**< bytes */
	int64_t mtime_ms;  /**< last modification, ms since the Unix epoch */
} lv_list_entry;

/** Listing callback: return 0 to continue, non-zero to stop (that value is returned). */
typedef int (*lv_list_cb)(const lv_list_entry *entry, void *payload);

/** Options for lv_storage_open(). */
typedef struct lv_storage_options {
	int version;              /**< LV_STORAGE_OPTIONS_VERSION */
	const char *s3_endpoint;  /**< reserved for the S3 backend (NULL = from the environment) */
	const char *s3_region;    /**< reserved */
	bool s3_allow_http;       /**< reserved */
	int max_concurrency;      /**< requests in flight, 0 = backend default */
} lv_storage_options;

#define LV_STORAGE_OPTIONS_VERSION 1
#define LV_STORAGE_OPTIONS_INIT { LV_STORAGE_OPTIONS_VERSION, NULL, NULL, false, 0 }

/**
 * Opens a storage handle rooted at `uri`: a plain path, "file:///abs/path" or
 * "mem://name" (a fresh, empty in-memory store).  Schemes that are not built
 * in give LV_EUNSUPPORTED.  `opts` may be NULL.  Release with lv_storage_free().
 */
LV_EXTERN int lv_storage_open(lv_storage **out, const char *uri,
			      const lv_storage_options *opts, lv_error *err) LV_WARN_UNUSED;

/** Opens a new, empty in-memory store. */
LV_EXTERN int lv_storage_mem_new(lv_storage **out, lv_error *err) LV_WARN_UNUSED;

/**
 * Returns a new handle for the sub-directory `subdir` of `parent` (used for
 * branches under tree/).  The parent must outlive the child.
 */
LV_EXTERN int lv_storage_sub(lv_storage **out, lv_storage *parent, const char *subdir,
			     lv_error *err) LV_WARN_UNUSED;

/** Closes the handle.  Accepts NULL. */
LV_EXTERN void lv_storage_free(lv_storage *st);

/** A human readable description of the root ("file:///x", "mem://", "s3://b/p"). */
LV_EXTERN const char *lv_storage_describe(const lv_storage *st);

/**
 * Lists objects under directory `dir` ("" = root).  Non-recursive listings
 * report only direct children that are files; recursive ones report every file
 * below.  Order is backend-defined (the local backend sorts by name).
 * A missing directory lists as empty.
 */
LV_EXTERN int lv_storage_list(lv_storage *st, const char *dir, bool recursive, lv_list_cb cb,
			      void *payload, lv_error *err) LV_WARN_UNUSED;

/**
 * Like a non-recursive lv_storage_list(), but entries may report size and
 * mtime as 0 (unknown) and come in no particular order.  Cheaper where sizes
 * cost extra work (local disk: no stat per entry).
 */
LV_EXTERN int lv_storage_list_names(lv_storage *st, const char *dir, lv_list_cb cb, void *payload,
				    lv_error *err) LV_WARN_UNUSED;

/** Reads a whole object into `out` (caller disposes). LV_ENOTFOUND if absent. */
LV_EXTERN int lv_storage_read(lv_storage *st, const char *path, lv_buf *out,
			      lv_error *err) LV_WARN_UNUSED;

/**
 * Reads bytes [offset, offset+len) into `out`.  A range running past the end
 * is clipped: `out->size` may be smaller than `len` (0 at or beyond the end).
 */
LV_EXTERN int lv_storage_read_range(lv_storage *st, const char *path, uint64_t offset,
				    uint64_t len, lv_buf *out, lv_error *err) LV_WARN_UNUSED;

/** Size and mtime of one object (LV_ENOTFOUND if absent).  Either out may be NULL. */
LV_EXTERN int lv_storage_head(lv_storage *st, const char *path, uint64_t *size_out,
			      int64_t *mtime_ms_out, lv_error *err) LV_WARN_UNUSED;

/** Writes (creates or replaces) an object atomically: readers see old or new bytes. */
LV_EXTERN int lv_storage_write(lv_storage *st, const char *path, const void *data, size_t size,
			       lv_error *err) LV_WARN_UNUSED;

/**
 * Creates an object only if it does not exist, atomically: LV_EEXISTS if it
 * does (the existing object is left untouched).  Readers never see a partial object.
 */
LV_EXTERN int lv_storage_create(lv_storage *st, const char *path, const void *data, size_t size,
				lv_error *err) LV_WARN_UNUSED;

/** Deletes an object.  Deleting an absent object is LV_ENOTFOUND. */
LV_EXTERN int lv_storage_delete(lv_storage *st, const char *path, lv_error *err) LV_WARN_UNUSED;

/**
 * Deletes `n` objects, batched where the store supports it (S3: up to 1000
 * per request, failed keys retried once).  rcs (may be NULL) receives each
 * path's result: 0, LV_ENOTFOUND (not every store can tell), or an error.
 * Returns 0 if every path is gone, else the first error, with a message
 * naming the path.
 */
LV_EXTERN int lv_storage_delete_many(lv_storage *st, const char *const *paths, size_t n, int *rcs,
				     lv_error *err) LV_WARN_UNUSED;

/** Counters kept by the front end for every handle (for reports and tests). */
typedef struct lv_storage_stats {
	uint64_t requests;   /**< backend calls made (list pages count once each) */
	uint64_t bytes_read; /**< payload bytes returned by reads */
	uint64_t bytes_written;
} lv_storage_stats;

LV_EXTERN void lv_storage_get_stats(const lv_storage *st, lv_storage_stats *out);
LV_EXTERN void lv_storage_reset_stats(lv_storage *st);

/* ---- fault injection (in-memory backend and any wrapped backend) ---- */

/** Which calls a fault applies to (bit mask). */
enum lv_fault_op {
	LV_FAULT_LIST = 1 << 0,
	LV_FAULT_READ = 1 << 1, /* whole and ranged reads */
	LV_FAULT_HEAD = 1 << 2,
	LV_FAULT_WRITE = 1 << 3,
	LV_FAULT_CREATE = 1 << 4,
	LV_FAULT_DELETE = 1 << 5,
	LV_FAULT_ALL = 0x3f
};

/** What happens when a fault triggers. */
enum lv_fault_kind {
	LV_FAULT_FAIL = 1,    /**< the call fails with LV_EIO and has no effect */
	LV_FAULT_SHORT = 2,   /**< a read returns only the first half of the bytes */
	LV_FAULT_CORRUPT = 3  /**< a read returns bytes with one byte flipped */
};

typedef struct lv_fault_spec {
	unsigned ops;        /**< lv_fault_op mask of calls that are counted */
	uint64_t nth;        /**< 1-based: the Nth counted call triggers (0 = never) */
	bool persistent;     /**< keep triggering on every counted call after the Nth */
	int kind;            /**< lv_fault_kind */
	const char *path_substring; /**< only count calls whose path contains this (NULL = all) */
} lv_fault_spec;

/**
 * Wraps `inner` in a fault-injecting shim (the shim takes ownership of
 * `inner`).  Works over any backend, including the in-memory one.
 */
LV_EXTERN int lv_storage_fault_wrap(lv_storage **out, lv_storage *inner,
				    const lv_fault_spec *spec, lv_error *err) LV_WARN_UNUSED;

/** Replaces the spec of a fault shim and resets its call counter. */
LV_EXTERN int lv_storage_fault_set(lv_storage *shim, const lv_fault_spec *spec,
				   lv_error *err) LV_WARN_UNUSED;

/** Number of counted calls a fault shim has seen since the last set. */
LV_EXTERN uint64_t lv_storage_fault_calls(const lv_storage *shim);

/** Sets an object's mtime (in-memory backend only; for tests of age rules). */
LV_EXTERN int lv_storage_mem_set_mtime(lv_storage *st, const char *path, int64_t mtime_ms,
				       lv_error *err) LV_WARN_UNUSED;

#ifdef __cplusplus
}
#endif
#endif
