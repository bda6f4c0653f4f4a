/*
 * The version list (struct lv_version_list) and its helpers.  Items are
 * sorted by version once a producer calls lv__sort_infos.
 */
#ifndef LV_CORE_VLIST_H
#define LV_CORE_VLIST_H

#include "lancever/dataset.h"
#include "util/arena.h"

struct lv_version_list {
	lv_version_info *items;
	size_t n;
	lv__arena *arenas;
	size_t narenas;
	char **vanished;
	size_t nvanished;
	uint64_t (*gaps)[2]; /* history lists: unrecorded version ranges [first, last] */
	size_t ngaps;
	struct lv__vshare *share; /* set: items belong to a shared answer (vcache.c), not to this */
};

/* A list shared by several holders (the dataset's versions() cache and its callers). */
typedef struct lv__vshare {
	int refs; /* atomic */
	lv_version_list *l;
} lv__vshare;

/* A new share holding l (one reference); NULL on OOM (l untouched). */
lv__vshare *lv__vshare_new(lv_version_list *l);
/* A list object that reads the share's items (the share gets a reference); NULL on OOM. */
lv_version_list *lv__vshare_view(lv__vshare *s);
void lv__vshare_unref(lv__vshare *s);
/* A one-entry list of l's item i that owns l (freed with it); NULL on OOM, l then still the
 * caller's. */
lv_version_list *lv__vlist_slice(lv_version_list *l, size_t i);

/* Room for cap_items items and cap_arenas arenas (not initialised); NULL on OOM. */
lv_version_list *lv__version_list_new(size_t cap_items, size_t cap_arenas);
int lv__add_vanished(lv_version_list *l, const char *path);
void lv__sort_infos(lv_version_info *v, size_t n);
/* The item of `version` in a sorted list, or NULL. */
const lv_version_info *lv__vlist_find(const lv_version_list *l, uint64_t version);
/* Records l's gaps: versions in [start, newest row] that no row holds.  LV_ENOMEM or 0. */
int lv__vlist_find_gaps(lv_version_list *l, uint64_t start);
uint64_t lv__vlist_gap_versions(const lv_version_list *l);

/* A copy of v whose strings live in arena a; without manifest details, the detail pointers
 * are cleared (they may point into memory the producer frees).  0 or LV_ENOMEM. */
int lv__version_info_copy(lv__arena *a, const lv_version_info *v, lv_version_info *out);

#endif
