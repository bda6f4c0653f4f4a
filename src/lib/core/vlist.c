/*
 * lv_version_list: the container every history call returns.  Items are
 * sorted by version; strings live in the list's arenas; a history list
 * also carries its gaps (version ranges no readable record accounts for).  A view
 * (lv__vshare_view, lv__vlist_slice) reads items that a shared list owns.
 */
#include "core/vlist.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
lv__vshare *lv__vshare_new(lv_version_list *l)
{
	lv__vshare *s = lv__malloc(sizeof *s);
	if (s) {
		s->refs = 1;
		s->l = l;
	}
	return s;
}

lv_version_list *lv__vshare_view(lv__vshare *s)
{
	lv_version_list *v = lv__calloc(1, sizeof *v);
	if (!v)
		return NULL;
	__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
	v->items = s->l->items;
	v->n = s->l->n;
	v->share = s;
	return v;
}

lv_version_list *lv__vlist_slice(lv_version_list *l, size_t i)
{
	lv__vshare *s = lv__vshare_new(l);
	lv_version_list *v = s ? lv__vshare_view(s) : NULL;
	if (!v) {
		if (s) { /* the share gives l back: it was never handed out */
			s->l = NULL;
			lv__vshare_unref(s);
		}
		return NULL;
	}
	lv__vshare_unref(s); /* the view's reference is the only one: it owns l */
	v->items = &l->items[i];
	v->n = 1;
	return v;
}

void lv__vshare_unref(lv__vshare *s)
{
	if (s && __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		lv_version_list_free(s->l);
		lv__free(s);
	}
}

void lv_version_list_free(lv_version_list *l)
{
	if (!l)
		return;
	if (l->share) { /* a view: the items are the share's */
		lv__vshare_unref(l->share);
		lv__free(l);
		return;
	}
	for (size_t i = 0; i < l->narenas; i++)
		lv__arena_dispose(&l->arenas[i]);
	for (size_t i = 0; i < l->nvanished; i++)
		lv__free(l->vanished[i]);
	lv__free(l->arenas);
	lv__free(l->items);
	lv__free(l->vanished);
	lv__free(l->gaps);
	lv__free(l);
}

size_t lv_version_list_count(const lv_version_list *l) { return l ? l->n : 0; }

const lv_version_info *lv_version_list_get(const lv_version_list *l, size_t i)
{
	return l && i < l->n ? &l->items[i] : NULL;
}

size_t lv_version_list_vanished_count(const lv_version_list *l) { return l ? l->nvanished : 0; }

const char *lv_version_list_vanished(const lv_version_list *l, size_t i)
{
	return l && i < l->nvanished ? l->vanished[i] : NULL;
}

static int cmp_info(const void *a, const void *b)
{
	const lv_version_info *x = a, *y = b;
	return x->version < y->version ? -1 : x->version > y->version;
}

void lv__sort_infos(lv_version_info *v, size_t n)
{
	/* Lists built from a checkpoint are usually sorted already: check first. */
	size_t i = 1;
	while (i < n && v[i - 1].version <= v[i].version)
		i++;
	if (i < n)
		qsort(v, n, sizeof *v, cmp_info);
}

int lv__add_vanished(lv_version_list *l, const char *path)
{
	char **nv = lv__reallocarray(l->vanished, l->nvanished + 1, sizeof *nv);
	if (!nv)
		return LV_ENOMEM;
	l->vanished = nv;
	if (!(nv[l->nvanished] = lv__strdup(path)))
		return LV_ENOMEM;
	l->nvanished++;
	return 0;
}

lv_version_list *lv__version_list_new(size_t cap_items, size_t cap_arenas)
{
	lv_version_list *l = lv__calloc(1, sizeof *l);
	if (!l)
		return NULL;
	/* Not zeroed: every producer writes an item whole before counting it in n. */
	l->items = lv__reallocarray(NULL, cap_items, sizeof *l->items);
	l->arenas = lv__calloc(cap_arenas, sizeof *l->arenas);
	if (!l->items || !l->arenas) {
		lv_version_list_free(l);
		return NULL;
	}
	return l;
}
/* ---- copies ---- */

static const char *dup(lv__arena *a, const char *s, int *rc)
{
	char *d = s ? lv__arena_strdup(a, s) : NULL;
	if (s && !d)
		*rc = LV_ENOMEM;
	return d;
}

/* A copy of v whose strings live in the list's arena.  Without manifest details, the detail
 * pointers are cleared, not copied: they may point into a plan's arena that is freed when the
 * stream ends (a reader such as the Arrow export looks at every string field). */
int lv__version_info_copy(lv__arena *a, const lv_version_info *v, lv_version_info *out)
{
	int rc = 0;
	*out = *v;
	out->transaction_uuid = dup(a, v->transaction_uuid, &rc);
	out->operation_type = dup(a, v->operation_type, &rc);
	out->transaction_properties = dup(a, v->transaction_properties, &rc);
	out->manifest_path = dup(a, v->manifest_path, &rc);
	if (!v->has_manifest_details) {
		out->writer_library = out->writer_version = out->data_format = NULL;
		out->transaction_file = out->branch = NULL;
		out->num_config = 0;
		out->config_keys = out->config_values = NULL;
		return rc;
	}
	out->writer_library = dup(a, v->writer_library, &rc);
	out->writer_version = dup(a, v->writer_version, &rc);
	out->data_format = dup(a, v->data_format, &rc);
	out->transaction_file = dup(a, v->transaction_file, &rc);
	out->branch = dup(a, v->branch, &rc);
	if (v->num_config) {
		const char **k = lv__arena_alloc(a, v->num_config * sizeof *k);
		const char **val = lv__arena_alloc(a, v->num_config * sizeof *val);
		if (!k || !val)
			return LV_ENOMEM;
		for (size_t i = 0; i < v->num_config; i++) {
			k[i] = dup(a, v->config_keys[i], &rc);
			val[i] = dup(a, v->config_values[i], &rc);
		}
		out->config_keys = k;
		out->config_values = val;
	}
	return rc;
}

int lv_version_list_select(lv_version_list **out, const lv_version_list *l, const size_t *idx,
			   size_t n, lv_error *err)
{
	if (!out || !l || (n && !idx))
		return lv__err(err, LV_EINVALID, "lv_version_list_select: NULL argument");
	*out = NULL;
	for (size_t i = 0; i < n; i++)
		if (idx[i] >= l->n || (i && idx[i] <= idx[i - 1]))
			return lv__err(err, LV_EINVALID, "lv_version_list_select: index %zu (%zu) is out of "
				       "range or not above the one before", i, idx[i]);
	lv_version_list *s = lv__version_list_new(n ? n : 1, 1);
	if (!s)
		return lv__err(err, LV_ENOMEM, "out of memory");
	lv__arena_init(&s->arenas[0], 4096);
	s->narenas = 1;
	int rc = 0;
	for (; rc == 0 && s->n < n; s->n++)
		rc = lv__version_info_copy(&s->arenas[0], &l->items[idx[s->n]], &s->items[s->n]);
	/* the gaps between the first and the last version kept */
	size_t cap = 0;
	for (size_t g = 0; rc == 0 && n && g < l->ngaps; g++) {
		if (l->gaps[g][0] <= s->items[0].version || l->gaps[g][1] >= s->items[n - 1].version)
			continue;
		uint64_t(*ng)[2] = lv__grow(s->gaps, &cap, s->ngaps, sizeof *ng, 4);
		if (!ng) {
			rc = LV_ENOMEM;
			break;
		}
		s->gaps = ng;
		s->gaps[s->ngaps][0] = l->gaps[g][0];
		s->gaps[s->ngaps][1] = l->gaps[g][1];
		s->ngaps++;
	}
	if (rc < 0) {
		lv_version_list_free(s);
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	*out = s;
	return 0;
}

/* ---- gaps ---- */

int lv__vlist_find_gaps(lv_version_list *l, uint64_t start)
{
	lv__free(l->gaps);
	l->gaps = NULL;
	l->ngaps = 0;
	size_t cap = 0;
	uint64_t next = start; /* the lowest version not yet accounted for */
	for (size_t i = 0; i <= l->n; i++) {
		uint64_t v = i < l->n ? l->items[i].version : next;
		if (v > next) {
			uint64_t(*g)[2] = lv__grow(l->gaps, &cap, l->ngaps, sizeof *g, 4);
			if (!g)
				return LV_ENOMEM;
			l->gaps = g;
			l->gaps[l->ngaps][0] = next;
			l->gaps[l->ngaps][1] = v - 1;
			l->ngaps++;
		}
		if (i < l->n && v >= next)
			next = v + 1;
	}
	return 0;
}

uint64_t lv__vlist_gap_versions(const lv_version_list *l)
{
	uint64_t n = 0;
	for (size_t i = 0; i < l->ngaps; i++)
		n += l->gaps[i][1] - l->gaps[i][0] + 1;
	return n;
}

size_t lv_version_list_gap_count(const lv_version_list *l) { return l ? l->ngaps : 0; }

bool lv_version_list_gap(const lv_version_list *l, size_t i, uint64_t *first, uint64_t *last)
{
	if (!l || i >= l->ngaps)
		return false;
	if (first)
		*first = l->gaps[i][0];
	if (last)
		*last = l->gaps[i][1];
	return true;
}

const lv_version_info *lv__vlist_find(const lv_version_list *l, uint64_t version)
{
	size_t i = lv__lower_bound_u64(l->items, l->n, sizeof *l->items,
				       offsetof(lv_version_info, version), version);
	return i < l->n && l->items[i].version == version ? &l->items[i] : NULL;
}
