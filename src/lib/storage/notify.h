/*
 * Store notifications (notify.c), the front end of the optional backend capability
 * lv__notify_ops (storage_int.h): what core's watcher calls to learn at once that a file
 * appeared in a directory (local disk: inotify), instead of waiting for its next poll.
 * Invariants: a store whose backend has no such capability (object stores, memory, a shim)
 * is LV_EUNSUPPORTED, never an error of the caller's; paths are checked and joined with
 * the sub-handle prefix here, as every storage call's are; lv__notify_wake is the one
 * function that may be called from a signal handler.
 */
#ifndef LV_STORAGE_NOTIFY_H
#define LV_STORAGE_NOTIFY_H

#include "lancever/storage.h"

typedef struct lv__notify lv__notify;

/* A notifier for the stores of `st`'s backend.  *out: lv__notify_free().
 * Errors: LV_EUNSUPPORTED (the backend cannot notify, or the system refuses), LV_ENOMEM. */
int lv__notify_new(lv__notify **out, const lv_storage *st, lv_error *err);
/* Whether n can watch directories of `st` (false for a NULL n).  Errors: none. */
bool lv__notify_can(const lv__notify *n, const lv_storage *st);
/* Watches directory `dir` of `st` (relative to st; "" = its root); *wd names it in waits.
 * Errors: LV_EUNSUPPORTED (st is not of n's backend, or its changes would not be seen:
 * a network filesystem), LV_ELIMIT (the system's watch limit), LV_ENOTFOUND, LV_EINVALID
 * (a bad path), LV_EIO. */
int lv__notify_add(lv__notify *n, lv_storage *st, const char *dir, int64_t *wd, lv_error *err);
/* Stops watching wd.  Errors: none. */
void lv__notify_remove(lv__notify *n, int64_t wd);
/* Waits up to timeout_ms for events or a wake; fn(wd, arg) once per event.  Errors: LV_EIO. */
int lv__notify_wait(lv__notify *n, int64_t timeout_ms, void (*fn)(int64_t wd, void *arg),
		    void *arg, lv_error *err);
/* Makes the current or next wait return at once.  Async-signal-safe.  Accepts NULL. */
void lv__notify_wake(lv__notify *n);
/* Frees n.  Accepts NULL. */
void lv__notify_free(lv__notify *n);

#endif
