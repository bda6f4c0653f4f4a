/*
 * Internal storage interfaces: backend constructors, the kind tag that lets
 * backend-specific public calls (lv_storage_mem_set_mtime, lv_storage_fault_*)
 * reach their backend safely, and the path rules shared by the front end.
 */
#ifndef LV_STORAGE_INT_H
#define LV_STORAGE_INT_H

#include "lancever/sys/storage.h"

/* Longest path (after a sub-handle prefix is applied) the front end accepts. */
#define LV__PATH_MAX 4096
/* Largest object a whole or ranged read returns (the local backend's cap). */
#define LV__READ_MAX ((uint64_t)4 << 30)
/* Prefix of the temporary files the local backend writes; listings hide them. */
#define LV__TMP_PREFIX ".tmp-lancever-"

/* What a handle's backend is, so a backend-specific call can check before casting impl. */
enum lv__storage_kind {
	LV__STORAGE_CUSTOM = 0, /* made through the public lv_storage_new() */
	LV__STORAGE_LOCAL,
	LV__STORAGE_MEM,
	LV__STORAGE_FAULT,
	LV__STORAGE_S3
};

/* lv_storage_new() plus a kind tag. */
int lv__storage_new_kind(lv_storage **out, const lv_storage_ops *ops, void *impl,
			 const char *describe, int kind, lv_error *err);

/*
 * The backend of `st` if it is of `kind`, else NULL.  For a sub-handle this is
 * the shared backend of its root; *prefix_out (may be NULL) then receives the
 * sub-handle prefix ("tree/x", no trailing '/') or NULL for a root handle.
 */
void *lv__storage_impl(const lv_storage *st, int kind, const char **prefix_out);

/*
 * Validates a relative object path (see lancever/storage.h).  `allow_empty`
 * admits "" (a listing of the root).  `what` names the operation in the message.
 */
int lv__storage_check_path(const char *path, bool allow_empty, const char *what, lv_error *err);

/* Joins a sub-handle prefix (may be NULL) and a checked path into buf[LV__PATH_MAX + 1]. */
int lv__storage_join(char *buf, const char *prefix, const char *path, const char *what,
		     lv_error *err);

/* Backend constructors (storage/local.c, storage/mem.c). */
int lv__storage_local_open(lv_storage **out, const char *root, lv_error *err);
int lv__storage_mem_open(lv_storage **out, const char *describe, lv_error *err);
/* `rest` is the URI after "s3://": bucket[/prefix] (s3/s3.c). */
int lv__storage_s3_open(lv_storage **out, const char *rest, const lv_storage_options *opts,
			lv_error *err);

/*
 * The storage a fault shim wraps, if `st` is a fault shim (or a sub-handle of
 * one), else NULL.  Lets backend-specific calls look through shims.
 */
lv_storage *lv__storage_fault_inner(const lv_storage *st);

/* An error for a "<scheme>+<store>://" URI (external commit store), else 0 (commitstore.c). */
int lv__storage_refuse_commit_store(const char *uri, size_t scheme_len, lv_error *err);

#endif
