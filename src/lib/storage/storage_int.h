/*
 * What backends built into the library get from the storage front end
 * (storage.c): handles with a kind tag, so a backend-specific call
 * (lv_storage_mem_set_mtime, lv_storage_fault_*) can check a handle before
 * casting its impl, and the shim link that lets properties and test hooks look
 * through a shim.  The front end knows no backend: opening an address is open.c's
 * (backends.h), path rules are util/path.h's.
 */
#ifndef LV_STORAGE_INT_H
#define LV_STORAGE_INT_H

#include "lancever/sys/storage.h"
#include "util/path.h"

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
	LV__STORAGE_S3,
	LV__STORAGE_AZURE
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
 * Marks `st` as a shim over `inner` (borrowed by this link; the shim's impl owns
 * it): lv_storage_is_remote() and lv_storage_credential_source() then answer for
 * `inner`, and lv__storage_inner() finds it.
 */
void lv__storage_set_inner(lv_storage *st, lv_storage *inner);

/*
 * The store a shim wraps (for a sub-handle of a shim: its root's), or NULL if
 * `st` is not a shim.  *prefix_out (may be NULL) receives the sub-handle prefix
 * as lv__storage_impl does.
 */
lv_storage *lv__storage_inner(const lv_storage *st, const char **prefix_out);

/*
 * The optional notification capability of a backend (storage/notify.h is what core calls):
 * a backend that can tell when files appear in a directory (local disk: inotify) sets its
 * table on its root handle with lv__storage_set_notify; sub-handles share their root's.
 * One notifier (`nimpl`) serves every handle of the backends that share the table.
 *   open:   makes a notifier.  LV_EUNSUPPORTED when the system has none.
 *   add:    watches `dir` (joined with the sub-handle prefix, relative to impl's root) for
 *           files created, moved in or written; *wd identifies it in `wait`.  LV_EUNSUPPORTED
 *           for a directory whose changes would not be seen (a network filesystem),
 *           LV_ELIMIT when the system's watch limit is reached, LV_ENOTFOUND when missing.
 *   remove: stops watching wd.
 *   wait:   waits up to timeout_ms for events (or a wake) and calls fn(wd, arg) once per
 *           event; 0, or LV_EIO.
 *   wake:   makes a wait (now or the next) return at once.  Async-signal-safe.
 *   close:  frees the notifier.
 */
typedef struct lv__notify_ops {
	int (*open)(void **nimpl, lv_error *err);
	int (*add)(void *nimpl, void *impl, const char *dir, int64_t *wd, lv_error *err);
	void (*remove)(void *nimpl, int64_t wd);
	int (*wait)(void *nimpl, int64_t timeout_ms, void (*fn)(int64_t wd, void *arg), void *arg,
		    lv_error *err);
	void (*wake)(void *nimpl);
	void (*close)(void *nimpl);
} lv__notify_ops;

/*
 * The optional listing of several subdirectories of one directory (storage/subdirs.h is what
 * core calls): `parent` (joined with the sub-handle prefix) walked once and each subs[i]
 * listed from it as `list` (not recursive) lists it, into cb with payloads[i]; rcs[i] and
 * errs[i] per subdirectory.  Set on a root handle; sub-handles share it, shims have none.
 */
typedef int (*lv__list_subdirs_fn)(void *impl, const char *parent, const char *const *subs,
				   size_t n, lv_list_cb cb, void *const *payloads, int *rcs,
				   lv_error *errs);
void lv__storage_set_list_subdirs(lv_storage *st, lv__list_subdirs_fn fn);

/*
 * The optional ranged read that also gives the file's size and modification time as the
 * opened file had them (local disk: the fstat its regular-file check makes anyway), so a
 * caller keying a cache on them needs no stat of its own (storage/stamped.h is what core
 * calls).  Set on a root handle; sub-handles share it, shims have none.
 */
typedef int (*lv__read_stamped_fn)(void *impl, const char *path, uint64_t offset, uint64_t len,
				   lv_buf *out, uint64_t *size, int64_t *mtime_ms, lv_error *err);
void lv__storage_set_read_stamped(lv_storage *st, lv__read_stamped_fn fn);

/* Gives `st` (a root handle) the notification capability `ops` (static, borrowed). */
void lv__storage_set_notify(lv_storage *st, const lv__notify_ops *ops);
/* The notification table of `st`'s backend (NULL: none; a shim has none), its impl and the
 * sub-handle prefix (NULL at a root) into *impl and *prefix. */
const lv__notify_ops *lv__storage_notify_ops(const lv_storage *st, void **impl,
					     const char **prefix);

#endif
