/*
 * A store that relays every call to another one (tests): the custom-backend door
 * (lancever/sys/storage.h) with hooks at a listing (before it, and on each entry it delivers),
 * before a read, a write or a create, after a delete, and at close, so a test can hold back a
 * thread at a call, count calls, run a racing writer at one or log the order of deletes.  The
 * inner store stays the caller's.
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
	/* before each head of `path` (may block: it runs on the caller's thread) */
	void (*before_head)(void *arg, const char *path);
	/* before each read of `path` (whole or ranged) */
	void (*before_read)(void *arg, const char *path);
	/* before each create of `path` */
	void (*before_create)(void *arg, const char *path);
	/* before each write (replacement) of `path` */
	void (*before_write)(void *arg, const char *path);
	/* each entry a listing delivers, before the lister's callback sees it */
	void (*listed)(void *arg, const lv_list_entry *e);
	/* when the relay store is freed (arg may be freed here) */
	void (*closed)(void *arg);
} tu_relay_hooks;

/* A new store over `inner` (which it never frees) with `hooks` (copied; NULL: none) and the
 * backend flags `flags` (LV_STORAGE_FLAG_*); fails the test on error. */
lv_storage *tu_relay(lv_storage *inner, const tu_relay_hooks *hooks, unsigned flags);

#endif
