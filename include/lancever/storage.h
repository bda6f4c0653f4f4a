/*
 * lancever/storage.h - the storage abstraction every other layer uses.
 *
 * A storage handle is rooted at one directory or object-store prefix (normally
 * a dataset root).  All paths passed to it are relative to that root, use '/'
 * as the separator, and must not contain "." or ".." segments, a leading '/'
 * or a NUL; the front-end functions below reject such paths with LV_EINVALID
 * before a backend sees them, so no backend can be led outside its root.
 *
 * Backends: local filesystem (plain paths and file:// URIs), in-memory
 * ("mem://"), Amazon S3 and S3-compatible stores ("s3://bucket/prefix"), Azure
 * Blob Storage ("az://container/prefix").  Custom backends implement
 * lv_storage_ops (lancever/sys/storage.h); test hooks (a fault-injecting shim,
 * in-memory mtimes) are in lancever/sys/testing.h.  Every backend is safe to
 * call from several threads at once.
 *
 * Object stores take LanceDB's storage options (the keys Lance and LanceDB
 * users pass as `storage_options`, case-insensitive) as key/value pairs; an
 * unknown key, or one the backend does not support, is an LV_EINVALID error
 * naming the key (never its value).  Credentials, endpoints and limits not
 * given as options come from the environment as LanceDB reads them (docs/operations.md,
 * "Cloud").  No message ever contains a secret.
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

/**
 * Storage options for lv_storage_open() and lv_dataset_open(): an opaque bag of key/value
 * pairs, LanceDB's `storage_options` (keys case-insensitive; docs/operations.md "Cloud" lists them).
 * The bag copies what it is given; the same bag may be used for any number of opens.  A key
 * set twice keeps its first value (so put the pairs that must win first).
 */
typedef struct lv_storage_options lv_storage_options;

/** A new, empty bag; *out is the caller's (lv_storage_options_free()).
 *  Errors: LV_EINVALID (NULL out), LV_ENOMEM. */
LV_EXTERN int lv_storage_options_new(lv_storage_options **out, lv_error *err) LV_WARN_UNUSED;

/**
 * Adds the pair key=value (both copied).  Which keys are known is decided when a store is
 * opened (an unknown key is then LV_EINVALID naming it); no message ever holds a value.
 * Errors: LV_EINVALID (NULL bag, NULL or empty key, NULL value), LV_ELIMIT (more than 100000
 * pairs), LV_ENOMEM.
 */
LV_EXTERN int lv_storage_options_set(lv_storage_options *o, const char *key, const char *value,
				     lv_error *err) LV_WARN_UNUSED;

/** Frees the bag (values are wiped first: they may be secrets).  Accepts NULL.  Errors: none. */
LV_EXTERN void lv_storage_options_free(lv_storage_options *o);

/**
 * Opens a storage handle rooted at `uri`: a plain path, "file:///abs/path",
 * "mem://name" (a fresh, empty in-memory store), "s3://bucket[/prefix]" or
 * "az://container[/prefix]" (also "abfs[s]://container@account.dfs.core.windows.net/prefix").
 * Object-store URIs resolve their credentials when opened (docs/operations.md, "Cloud").
 * `opts` may be NULL.  A local path need not exist yet.  *out is the caller's:
 * lv_storage_free(); NULL on error.
 * Errors: LV_EUNSUPPORTED (a scheme that is not built in, a storage option lancever does
 * not support, a file:// URI that is not an absolute local path), LV_EINVALID (bad URI,
 * unknown storage option, storage options given for a local or in-memory store, a
 * local path that is not a directory, no credentials found), LV_EIO (a credential
 * source failed, a local path that cannot be resolved), LV_ENOMEM.
 */
LV_EXTERN int lv_storage_open(lv_storage **out, const char *uri,
			      const lv_storage_options *opts, lv_error *err) LV_WARN_UNUSED;

/** Opens a new, empty in-memory store; *out: the caller's (lv_storage_free()).
 *  Errors: LV_EINVALID (NULL out), LV_ENOMEM. */
LV_EXTERN int lv_storage_mem_new(lv_storage **out, lv_error *err) LV_WARN_UNUSED;

/**
 * Returns a new handle for the sub-directory `subdir` of `parent` (used for
 * branches under tree/).  The parent must outlive the child.  *out is the caller's:
 * lv_storage_free() (which leaves the parent open).
 * Errors: LV_EINVALID (NULL argument, `subdir` not a valid relative path), LV_ENOMEM.
 */
LV_EXTERN int lv_storage_sub(lv_storage **out, lv_storage *parent, const char *subdir,
			     lv_error *err) LV_WARN_UNUSED;

/** Closes the handle (and a backend it owns).  Accepts NULL.  Errors: none. */
LV_EXTERN void lv_storage_free(lv_storage *st);

/**
 * Interrupts the handle (on = true) or lifts that (false).  While it is interrupted, every
 * operation on it and on its sub-handles (list, read, head, write, create, delete) fails
 * with LV_EIO ("interrupted") before reaching the backend; one already in progress
 * finishes.  A long call (lv_cleanup, lv_checkpoint_write, lv_history, ...) on a dataset
 * over this handle then stops at its next storage operation and fails, leaving the store
 * as a failure of that operation would (history is written before anything is deleted,
 * so nothing recorded is lost).  An atomic store: callable from any thread or a signal
 * handler (the Python package calls it on Ctrl-C).  Errors: none (NULL is ignored).
 */
LV_EXTERN void lv_storage_interrupt(lv_storage *st, bool on);

/**
 * A human readable description of the root ("file:///x", "mem://", "s3://b/p", "az://c/p").
 * Borrowed: valid until lv_storage_free(st); "(null)" for NULL.  Errors: none.
 */
LV_EXTERN const char *lv_storage_describe(const lv_storage *st);

/**
 * True if every request to the store is a network round trip (S3, Azure, or a
 * custom backend that says so), so callers keep many requests in flight and
 * batch; false for local and in-memory stores and for NULL.  A shim (such as
 * the fault shim of lancever/sys/testing.h) reports what its inner store reports.
 * Errors: none.
 */
LV_EXTERN bool lv_storage_is_remote(const lv_storage *st);

/**
 * Writes which source supplied the store's credentials into buf[cap]
 * (NUL-terminated, cut to fit), e.g. "environment (AWS_ACCESS_KEY_ID)",
 * "shared credentials file /home/u/.aws/credentials, profile dev",
 * "EC2 instance metadata (IMDSv2), expires 2026-12-04T12:00:00Z"; "none" for
 * stores without credentials (local, mem).  Never a key, token or secret.
 * Returns 0.  Errors: LV_EINVALID (NULL argument, cap 0).
 */
LV_EXTERN int lv_storage_credential_source(const lv_storage *st, char *buf, size_t cap);

/**
 * Lists objects under directory `dir` ("" = root).  Non-recursive listings
 * report only direct children that are files; recursive ones report every file
 * below.  Order is backend-defined (the local backend sorts by name).
 * A missing directory lists as empty.  A non-zero value returned by `cb` stops the
 * listing and is returned.  Errors: LV_EINVALID (NULL st or cb, bad path), storage errors.
 */
LV_EXTERN int lv_storage_list(lv_storage *st, const char *dir, bool recursive, lv_list_cb cb,
			      void *payload, lv_error *err) LV_WARN_UNUSED;

/**
 * Like a non-recursive lv_storage_list(), but entries may report size and
 * mtime as 0 (unknown) and come in no particular order.  Cheaper where sizes
 * cost extra work (local disk: no stat per entry).  Errors: as lv_storage_list()
 * (LV_EINVALID, storage errors).
 */
LV_EXTERN int lv_storage_list_names(lv_storage *st, const char *dir, lv_list_cb cb, void *payload,
				    lv_error *err) LV_WARN_UNUSED;

/**
 * Reads a whole object into `out`: the caller's (lv_buf_dispose()), empty on error.
 * Errors: LV_ENOTFOUND (absent), LV_EINVALID (NULL argument, bad path), storage errors.
 */
LV_EXTERN int lv_storage_read(lv_storage *st, const char *path, lv_buf *out,
			      lv_error *err) LV_WARN_UNUSED;

/**
 * Reads bytes [offset, offset+len) into `out`.  A range running past the end
 * is clipped: `out->size` may be smaller than `len` (0 at or beyond the end).
 * `out` is the caller's (lv_buf_dispose()), empty on error.  Errors: as lv_storage_read().
 */
LV_EXTERN int lv_storage_read_range(lv_storage *st, const char *path, uint64_t offset,
				    uint64_t len, lv_buf *out, lv_error *err) LV_WARN_UNUSED;

/**
 * Size and mtime of one object.  Either out may be NULL; they are written only on success.
 * Errors: LV_ENOTFOUND (absent), LV_EINVALID (NULL st, bad path), storage errors.
 */
LV_EXTERN int lv_storage_head(lv_storage *st, const char *path, uint64_t *size_out,
			      int64_t *mtime_ms_out, lv_error *err) LV_WARN_UNUSED;

/**
 * Writes (creates or replaces) an object atomically: readers see old or new bytes.
 * `data` is only read during the call.  Errors: LV_EINVALID (NULL st, NULL data with
 * size > 0, bad path), storage errors.
 */
LV_EXTERN int lv_storage_write(lv_storage *st, const char *path, const void *data, size_t size,
			       lv_error *err) LV_WARN_UNUSED;

/**
 * Creates an object only if it does not exist, atomically: LV_EEXISTS if it
 * does (the existing object is left untouched).  Readers never see a partial object.
 * Errors: LV_EEXISTS, otherwise as lv_storage_write().
 */
LV_EXTERN int lv_storage_create(lv_storage *st, const char *path, const void *data, size_t size,
				lv_error *err) LV_WARN_UNUSED;

/**
 * Deletes an object.  Errors: LV_ENOTFOUND (absent; a store that cannot tell returns 0),
 * LV_EINVALID (NULL st, bad path), storage errors.
 */
LV_EXTERN int lv_storage_delete(lv_storage *st, const char *path, lv_error *err) LV_WARN_UNUSED;

/**
 * Deletes `n` objects, batched where the store supports it (S3: up to 1000
 * per request, failed keys retried once).  rcs (may be NULL) receives each
 * path's result: 0, LV_ENOTFOUND (not every store can tell), or an error.
 * Returns 0 if every path is gone (LV_ENOTFOUND counts as gone), else the first error,
 * with a message naming the path.  Errors: LV_EINVALID (NULL st, NULL paths with n > 0, a
 * bad path: then nothing is deleted and rcs is not filled), LV_ENOMEM, storage errors.
 */
LV_EXTERN int lv_storage_delete_many(lv_storage *st, const char *const *paths, size_t n, int *rcs,
				     lv_error *err) LV_WARN_UNUSED;

/** Counters kept by the front end for every handle (for reports and tests): the caller's
 *  struct, initialised with lv_storage_stats_init (the struct rule, lancever/common.h). */
typedef struct lv_storage_stats {
	int version;         /**< LV_STORAGE_STATS_VERSION (set by its init) */
	uint64_t requests;   /**< backend calls made (list pages count once each) */
	uint64_t bytes_read; /**< payload bytes returned by reads */
	uint64_t bytes_written;
} lv_storage_stats;

/* Version 1 (a struct without a version, from before 1.0, is refused). */
#define LV_STORAGE_STATS_VERSION 1
#define LV_STORAGE_STATS_INIT { .version = LV_STORAGE_STATS_VERSION }

/** Zeroes s and sets s->version to `version` (pass LV_STORAGE_STATS_VERSION).
 *  Errors: LV_EINVALID (NULL s, an unknown version: then nothing is written). */
LV_EXTERN int lv_storage_stats_init(lv_storage_stats *s, int version);

/** Writes the handle's counters into the caller's initialised `out` (a sub-handle's
 *  requests also count in its parent; all 0 for a NULL st), keeping its version.
 *  Errors: LV_EINVALID (NULL out, out of an unknown version: then nothing is written). */
LV_EXTERN int lv_storage_get_stats(const lv_storage *st, lv_storage_stats *out);
/** Zeroes the handle's counters (not its parent's).  Accepts NULL.  Errors: none. */
LV_EXTERN void lv_storage_reset_stats(lv_storage *st);

#ifdef __cplusplus
}
#endif
#endif
