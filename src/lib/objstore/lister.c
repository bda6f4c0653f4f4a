/* Listings over pages (lister.h): checked keys, pagination loops, sorted delivery. */
#include "objstore/lister.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

void lv__lister_init(lv__lister *l, const char *kprefix, size_t strip, bool recursive)
{
	memset(l, 0, sizeof *l);
	l->kprefix = kprefix;
	l->strip = strip;
	l->recursive = recursive;
}

static int take(lv__lister *l, const lv__list_obj *o, const char *what, lv_error *err)
{
	const char *rel;
	int k = lv__list_rel(o->key, l->kprefix, l->strip, l->recursive, what, &rel, err);
	if (k <= 0)
		return k;
	if (l->n >= LV_LIST_MAX_KEYS)
		return lv__err(err, LV_ELIMIT, "%s: more than %u objects", what, LV_LIST_MAX_KEYS);
	lv__lister_ent *nv = lv__grow(l->v, &l->cap, l->n, sizeof *nv, 256);
	if (!nv)
		return lv__err(err, LV_ENOMEM, "%s: out of memory", what);
	l->v = nv;
	if (!(nv[l->n].path = lv__strdup(rel)))
		return lv__err(err, LV_ENOMEM, "%s: out of memory", what);
	nv[l->n].size = o->size;
	nv[l->n].mtime = o->mtime_ms;
	l->n++;
	return 0;
}

int lv__lister_page(lv__lister *l, const lv__list_page *pg, const char *what, lv_error *err)
{
	for (size_t i = 0; i < pg->n; i++)
		LV_TRY(take(l, &pg->objs[i], what, err));
	return 0;
}

/* FNV-1a, 64 bits: tokens are compared by hash (a false "loop" needs a 64-bit collision). */
static uint64_t token_hash(const char *t)
{
	uint64_t h = 14695981039346656037ull;
	for (; *t; t++)
		h = (h ^ (unsigned char)*t) * 1099511628211ull;
	return h;
}

int lv__lister_token(lv__lister *l, const char *token, const char *what, lv_error *err)
{
	uint64_t h = token_hash(token);
	for (size_t i = 0; i < l->ntokens; i++) /* pages are round trips: a scan is cheap enough */
		if (l->tokens[i] == h)
			return lv__err(err, LV_ECORRUPT,
				       "%s: the server sent continuation token of page %zu again at page %zu "
				       "(pagination loop)", what, i + 1, l->ntokens + 1);
	uint64_t *nt = lv__grow(l->tokens, &l->tcap, l->ntokens, sizeof *nt, 16);
	if (!nt)
		return lv__err(err, LV_ENOMEM, "%s: out of memory", what);
	l->tokens = nt;
	l->tokens[l->ntokens++] = h;
	return 0;
}

static int ent_cmp(const void *a, const void *b)
{
	return strcmp(((const lv__lister_ent *)a)->path, ((const lv__lister_ent *)b)->path);
}

int lv__lister_emit(lv__lister *l, lv_list_cb cb, void *payload)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof *l->v, ent_cmp);
	for (size_t i = 0; i < l->n; i++) {
		lv_list_entry e = { l->v[i].path, l->v[i].size, l->v[i].mtime };
		int rc = cb(&e, payload);
		if (rc)
			return rc;
	}
	return 0;
}

void lv__lister_dispose(lv__lister *l)
{
	for (size_t i = 0; i < l->n; i++)
		lv__free(l->v[i].path);
	lv__free(l->v);
	lv__free(l->tokens);
	memset(l, 0, sizeof *l);
}
