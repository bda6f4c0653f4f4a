/*
 * A store that relays every call to another one (tests): the custom-backend door
 * (lancever/sys/storage.h) with hooks before a listing, a read or a create and after a delete,
 * so a test can hold back a thread at a call, count calls, run a racing writer at a create or
 * log the order of deletes.  The inner store stays the caller's.
 */
#ifndef LV_TU_RELAY_H
#define LV_TU_RELAY_H

#include <lancever/storage.h>

typedef struct tu_relay_hooks {
	void *arg;
	/* before each listing of `dir` (may block: it runs on the lister's thread) */
	void (*before_list)(void *arg, const char *dir);
	/* after each delete of `path`, with its result */
	void (*after_delete)(void *arg, const char *path, int rc);
	/* before each read of `path` (whole or ranged) */
	void (*before_read)(void *arg, const char *path);
	/* before each create of `path` */
	void (*before_create)(void *arg, const char *path);
} tu_relay_hooks;

/* A new store over `inner` (which it never frees) with `hooks` (copied; NULL: none) and the
 * backend flags `flags` (LV_STORAGE_FLAG_*); fails the test on error. */
lv_storage *tu_relay(lv_storage *inner, const tu_relay_hooks *hooks, unsigned flags);

#endif
