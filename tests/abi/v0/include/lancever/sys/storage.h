/*
 * lancever/sys/storage.h - for authors of storage backends.
 *
 * A backend fills an lv_storage_ops table and calls lv_storage_new().  The
 * front end (lancever/storage.h) has already validated every path (relative,
 * no "." / ".." segments) and counts requests and bytes; backends only do I/O.
 * All ops must be thread-safe.  Ops return LV_* codes and fill `err`.
 *
 * Version 2 of the table adds what the store is (`flags`) and where its
 * credentials came from (`credential_source`); version 1 tables are still
 * accepted (then the store is local-like and reports no credentials).
 */
#ifndef LANCEVER_SYS_STORAGE_H
#define LANCEVER_SYS_STORAGE_H

#include "../storage.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LV_STORAGE_OPS_VERSION 2

/** Bits of lv_storage_ops.flags. */
enum lv_storage_flag {
	/** Every request is a network round trip: lv_storage_is_remote() is true. */
	LV_STORAGE_FLAG_REMOTE = 1u << 0
};

typedef struct lv_storage_ops {
	int version; /**< LV_STORAGE_OPS_VERSION (1 still accepted) */
	int (*list)(void *impl, const char *dir, bool recursive, lv_list_cb cb, void *payload,
		    lv_error *err);
	int (*read)(void *impl, const char *path, lv_buf *out, lv_error *err);
	int (*read_range)(void *impl, const char *path, uint64_t offset, uint64_t len, lv_buf *out,
			  lv_error *err);
	int (*head)(void *impl, const char *path, uint64_t *size, int64_t *mtime_ms, lv_error *err);
	int (*write)(void *impl, const char *path, const void *data, size_t size, lv_error *err);
	int (*create)(void *impl, const char *path, const void *data, size_t size, lv_error *err);
	int (*del)(void *impl, const char *path, lv_error *err);
	void (*close)(void *impl);
	/*
	 * Optional (may be NULL): a non-recursive listing of file names whose
	 * size/mtime may be reported as 0 and whose order is unspecified.  For
	 * backends where sizes cost extra work (a stat per entry on local disk).
	 * When NULL, lv_storage_list_names() uses `list`.
	 */
	int (*list_names)(void *impl, const char *dir, lv_list_cb cb, void *payload, lv_error *err);
	/*
	 * Optional (may be NULL): deletes `n` objects in as few requests as the
	 * store allows (S3 DeleteObjects), setting rcs[i] per path (0, or an LV_E*;
	 * a missing object may report 0).  Returns 0 if the requests themselves
	 * went through.  When NULL, lv_storage_delete_many() calls `del` per path.
	 */
	int (*del_many)(void *impl, const char *const *paths, size_t n, int *rcs, lv_error *err);

	/* ---- version 2 ---- */
	/** LV_STORAGE_FLAG_* bits.  A shim over another lv_storage copies what that one reports. */
	unsigned flags;
	/*
	 * Optional (may be NULL = "none"): writes where the credentials came from
	 * into buf[cap] (lv_storage_credential_source), never a secret.
	 */
	void (*credential_source)(void *impl, char *buf, size_t cap);
} lv_storage_ops;

/**
 * Makes a storage handle from a backend.  `describe` is copied.  On success the
 * handle owns `impl` (ops->close is called by lv_storage_free); on failure the
 * caller still owns it.  *out is the caller's: lv_storage_free(); NULL on error.
 * Errors: LV_EINVALID (NULL out or ops, unknown ops version, a NULL required op),
 * LV_ENOMEM.
 */
LV_EXTERN int lv_storage_new(lv_storage **out, const lv_storage_ops *ops, void *impl,
			     const char *describe, lv_error *err) LV_WARN_UNUSED;

#ifdef __cplusplus
}
#endif
#endif
