/*
 * Several subdirectories of one directory listed at once (storage.c): what core's refs loader
 * calls for _refs/tags and _refs/branches.  Invariants: each subdirectory is listed as
 * lv_storage_list (not recursive) would list it, with the same paths, order, checks and
 * counts, so a caller cannot tell the two apart; a backend that can do better (local disk:
 * the parent walked once, and a missing parent found missing once for all of them) says so
 * with lv__storage_set_list_subdirs, every other store lists each (threads > 1: at once).
 */
#ifndef LV_STORAGE_SUBDIRS_H
#define LV_STORAGE_SUBDIRS_H

#include "lancever/storage.h"

/* Lists parent/subs[i] (each one path segment) into cb with payloads[i], for i < n; the
 * result of each is rcs[i] (0 or an LV_E*, a missing directory listing as empty) with
 * errs[i].  Returns 0, or LV_EINVALID for bad arguments (then no listing is made). */
int lv__storage_list_subdirs(lv_storage *st, const char *parent, const char *const *subs,
			     size_t n, int threads, lv_list_cb cb, void *const *payloads, int *rcs,
			     lv_error *errs, lv_error *err);

#endif
