/*
 * The versions() cache of a dataset handle (see vcache.h).
 *
 * Invariants:
 *  - An answer is served again only for the same newest checkpoint (name,
 *    size, modification time: on local disk a first call takes the two from
 *    its read of the file, storage/stamped.h, and a later call's listing
 *    stats it; 0 = not known, never served), the same listing of _versions/ and the same
 *    tag and branch files, and only after the row its identity was confirmed
 *    with still matches its manifest (the check every versions() makes).
 *  - Only clean answers are kept: from the newest checkpoint, nothing
 *    vanished, no warning.
 *  - Answers are shared read-only (lv__vshare): a caller's list stays valid
 *    whatever the cache does next.  One call at a time uses the cache; a
 *    concurrent call goes without it.
 */
#include "core/vcache.h"

#include <stdlib.h>
#include <string.h>

#include "core/checkpoint/identity.h"
#include "core/refs.h"
#include "util/util.h"

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
	return h * 0xBF58476D1CE4E5B9ull;
}

uint64_t lv__vcache_live_sig(const lv__manifest_entry *live, size_t n)
{
	uint64_t h = mix(0, n);
	for (size_t i = 0; i < n; i++)
		h = mix(h, live[i].version * 4 + (uint64_t)live[i].scheme);
	return h;
}

static int refs_cb(const lv_list_entry *e, void *payload)
{
	uint64_t *h = payload;
	*h += lv__refs_entry_digest(e); /* the sum the refs load also keeps (lv__refs_tags_sig) */
	return 0;
}

int lv__vcache_refs_sig(lv_dataset *ds, uint64_t *sig, lv_error *err)
{
	uint64_t h = 0;
	/* versions() answers depend on tags only (is_tagged), not on branches */
	LV_TRY(lv_storage_list(ds->root, LV_REFS_TAGS_DIR, false, refs_cb, &h, err));
	*sig = h;
	return 0;
}

bool lv__vcache_enter(lv_dataset *ds)
{
	return ds->vcache && pthread_mutex_trylock(&ds->vcache->mu) == 0;
}

void lv__vcache_leave(lv_dataset *ds)
{
	pthread_mutex_unlock(&ds->vcache->mu);
}

void lv__vcache_free(lv__vcache *c)
{
	if (!c)
		return;
	lv__vshare_unref(c->answer);
	pthread_mutex_destroy(&c->mu);
	lv__free(c);
}

static bool same_cp(const lv__cp_name *a, const lv__cp_name *b)
{
	return a->size == b->size && a->mtime_ms == b->mtime_ms && a->mtime_ms &&
	       !strcmp(a->path, b->path);
}

int lv__vcache_lookup(lv_dataset *ds, const lv__cp_name *newest, const lv__manifest_entry *live,
		      size_t nlive, uint64_t refs_sig, lv_version_list **out, lv_history_report *rep)
{
	lv__vcache *c = ds->vcache;
	if (!c->answer || !c->have_row || !same_cp(&c->cp, newest) || c->refs_sig != refs_sig ||
	    c->live_sig != lv__vcache_live_sig(live, nlive))
		return 0;
	uint64_t bytes = 0;
	lv_error e = { 0 };
	if (lv__cp_confirm_row(ds, &c->row_entry, &c->row, NULL, c->cp.path, &bytes, &e) != 0)
		return 0; /* the full path decides, and says why */
	if (!(*out = lv__vshare_view(c->answer)))
		return 0;
	*rep = c->rep;
	rep->identity_bytes = bytes;
	return 1;
}

/* The newest row of the answer that came from the checkpoint: what identity is confirmed with. */
static bool pick_row(lv__vcache *c, const lv_version_list *l, const lv__manifest_entry *live,
		     size_t nlive)
{
	for (size_t i = l->n; i-- > 0;) {
		const lv_version_info *v = &l->items[i];
		if (v->has_manifest_details || !v->transaction_uuid ||
		    strlen(v->transaction_uuid) >= sizeof c->row_uuid)
			continue;
		size_t k = lv__lower_bound_u64(live, nlive, sizeof *live, offsetof(lv__manifest_entry, version),
					       v->version);
		if (k >= nlive || live[k].version != v->version)
			return false;
		c->row = *v;
		memcpy(c->row_uuid, v->transaction_uuid, strlen(v->transaction_uuid) + 1);
		c->row.transaction_uuid = c->row_uuid;
		c->row_entry = live[k];
		return true;
	}
	return false;
}

void lv__vcache_store(lv_dataset *ds, const lv__cp_name *newest, const lv__manifest_entry *live,
		      size_t nlive, uint64_t refs_sig, lv_version_list **out,
		      const lv_history_report *rep)
{
	lv__vcache *c = ds->vcache;
	lv__vshare *s = lv__vshare_new(*out);
	lv_version_list *view = s ? lv__vshare_view(s) : NULL;
	if (!view) {
		lv__free(s);
		return;
	}
	lv__vshare_unref(c->answer);
	c->answer = s;
	*out = view;
	c->cp = *newest;
	c->live_sig = lv__vcache_live_sig(live, nlive);
	c->refs_sig = refs_sig;
	c->have_row = pick_row(c, s->l, live, nlive);
	c->rep = *rep;
}
