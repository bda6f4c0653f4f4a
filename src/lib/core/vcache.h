/*
 * The dataset handle's cache of its last versions() answer (issue 18): a
 * long-running process that asks again and again pays a listing and the
 * identity check, not a read and decode of the checkpoint.
 */
#ifndef LV_CORE_VCACHE_H
#define LV_CORE_VCACHE_H

#include <pthread.h>

#include "core/checkpoint/store.h"
#include "core/dataset.h"
#include "core/manifests.h"
#include "core/vlist.h"

typedef struct lv__vcache {
	pthread_mutex_t mu;
	lv__vshare *answer;      /* the last clean answer (from the newest checkpoint), or NULL */
	lv__cp_name cp;          /* the checkpoint it came from: name, size, mtime */
	uint64_t live_sig, refs_sig;
	bool have_row;           /* the row its identity was confirmed with */
	lv__manifest_entry row_entry;
	lv_version_info row;
	char row_uuid[128];
	lv_history_report rep;
} lv__vcache;

/* A digest of the listing (versions and name schemes). */
uint64_t lv__vcache_live_sig(const lv__manifest_entry *live, size_t n);
/* A digest of the tag files' names, sizes and times (one listing). */
int lv__vcache_refs_sig(lv_dataset *ds, uint64_t *sig, lv_error *err);

/* Takes the handle's cache lock if free (false: another call has it; go without). */
bool lv__vcache_enter(lv_dataset *ds);
void lv__vcache_leave(lv_dataset *ds);
/* With the lock: the cached answer if it was made for this checkpoint, listing and refs, and
 * the checkpoint still belongs to this history (one small manifest read).  1 = *out served. */
int lv__vcache_lookup(lv_dataset *ds, const lv__cp_name *newest, const lv__manifest_entry *live,
		      size_t nlive, uint64_t refs_sig, lv_version_list **out, lv_history_report *rep);
/* With the lock: keeps `l` (a clean answer from `newest`) and hands back a view of it in *out
 * (l is the cache's then).  On failure *out stays l (uncached). */
void lv__vcache_store(lv_dataset *ds, const lv__cp_name *newest, const lv__manifest_entry *live,
		      size_t nlive, uint64_t refs_sig, lv_version_list **out,
		      const lv_history_report *rep);
void lv__vcache_free(lv__vcache *c);

#endif
