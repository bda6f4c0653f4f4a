/*
 * Opening stores (open.c).  The backend registry, as SQLite's VFS list: a backend names its
 * scheme, the form of its URIs (storage/address.h) and its constructor, and
 * registers itself; the front end opens an address through whichever backend
 * registered its scheme and knows none of them by name.  The built-in backends
 * are registered once, from above the backends (core/stores.c), before the first
 * open.
 */
#ifndef LV_STORAGE_BACKENDS_H
#define LV_STORAGE_BACKENDS_H

#include "lancever/storage.h"
#include "storage/address.h"

typedef struct lv__backend {
	const char *scheme; /* lower case, without "://"; "" = plain local paths */
	int form;           /* enum lv__addr_form: how the parser reads its URIs */
	const char *where;  /* for "unknown storage option 'k' for <where>" ("s3://") */
	/* Opens the store at `a`, taking its options from a->opts (the front end then
	 * refuses any option left over).  *out NULL on error. */
	int (*open)(lv_storage **out, lv__address *a, lv_error *err);
} lv__backend;

/* Adds `b` (borrowed: it must live as long as the library).  LV_EEXISTS if its scheme is
 * taken, LV_ELIMIT when the registry (16 schemes) is full.  Thread-safe. */
int lv__backend_register(const lv__backend *b);
/* The backend registered for `scheme` (lower case), or NULL.  Thread-safe. */
const lv__backend *lv__backend_find(const char *scheme);

/* Opens the store the parsed address names, through its backend: the one open of a store.
 * Errors: those of the backend, LV_EINVALID for an option no backend took. */
int lv__storage_open_address(lv_storage **out, lv__address *a, lv_error *err);

/*
 * A sub-handle of `parent` at `subdir`; on a remote store where nothing lies under
 * `probe` there but something does under subdir's other key spelling (Lance 8's,
 * objstore/uri.h: "tree/%C3%BCn"), at that spelling.  Errors: those of lv_storage_sub.
 */
int lv__storage_sub_holding(lv_storage **out, lv_storage *parent, const char *subdir,
			    const char *probe, lv_error *err);

/* The built-in backends' entries (each defined next to its constructor). */
extern const lv__backend lv__backend_local, lv__backend_file, lv__backend_mem;
extern const lv__backend lv__backend_s3, lv__backend_az, lv__backend_abfs, lv__backend_abfss;

#endif
