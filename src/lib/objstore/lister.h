/*
 * A listing over pages (S3 ListObjectsV2, Azure List Blobs): every listed key
 * is checked (objstore/xml.h lv__list_rel) and collected, continuation tokens
 * are remembered so that a server sending one twice (a pagination loop) is an
 * error, and the entries are delivered sorted by path, as the local backend
 * delivers them.  Pages are delivered as they come while they continue the
 * order (S3 and Azure list in key order), so a callback that stops the
 * listing saves the requests for the pages after it; a page out of order
 * (never seen from those services) turns that off, and the entries not yet
 * delivered are sorted and delivered at the end (each entry once).
 */
#ifndef LV_OBJSTORE_LISTER_H
#define LV_OBJSTORE_LISTER_H

#include "lancever/storage.h"
#include "objstore/xml.h"

/* At most this many objects in one listing (about 1 GB of memory at the limit). */
#define LV_LIST_MAX_KEYS 10000000u

typedef struct lv__lister_ent {
	char *path;
	uint64_t size;
	int64_t mtime;
} lv__lister_ent;

typedef struct lv__lister {
	lv__lister_ent *v;
	size_t n, cap;
	const char *kprefix; /* the key prefix listed */
	size_t strip;        /* bytes of "<prefix>/" to strip from keys */
	bool recursive;
	uint64_t *tokens;    /* hashes of the continuation tokens seen */
	size_t ntokens, tcap;
	size_t done;         /* entries [0, done) delivered */
	bool unordered;      /* a page came out of order: deliver the rest at the end */
} lv__lister;

void lv__lister_init(lv__lister *l, const char *kprefix, size_t strip, bool recursive);
/* Takes every object of a page (LV_ECORRUPT for a key outside the prefix or not a valid path). */
int lv__lister_page(lv__lister *l, const lv__list_page *pg, const char *what, lv_error *err);
/* Records the token of the next page; LV_ECORRUPT if the server sent it before. */
int lv__lister_token(lv__lister *l, const char *token, const char *what, lv_error *err);
/* After a page: delivers its entries (sorted) if they continue the order of those delivered;
 * returns what the callback returned (non-zero: stop listing). */
int lv__lister_emit_page(lv__lister *l, lv_list_cb cb, void *payload);
/* Delivers the entries not delivered yet, sorted by path; returns what the callback returned
 * (0 = all). */
int lv__lister_emit(lv__lister *l, lv_list_cb cb, void *payload);
void lv__lister_dispose(lv__lister *l);

#endif
