/* Listing the files a cleanup may consider, with their sizes and times. */
#include "core/cleanup/cleanup_int.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

int lv__collect_file(const lv_list_entry *e, void *payload)
{
	lv__file_vec *fv = payload;
	lv__file_ent *nv = lv__grow(fv->v, &fv->cap, fv->n, sizeof *nv, 256);
	if (!nv) {
		fv->rc = LV_ENOMEM;
		return 1;
	}
	fv->v = nv;
	if (!(fv->v[fv->n].path = lv__strdup(e->path))) {
		fv->rc = LV_ENOMEM;
		return 1;
	}
	fv->v[fv->n].size = e->size;
	fv->v[fv->n].mtime_ms = e->mtime_ms;
	fv->n++;
	return 0;
}

void lv__file_vec_dispose(lv__file_vec *fv)
{
	for (size_t i = 0; i < fv->n; i++)
		free(fv->v[i].path);
	free(fv->v);
	memset(fv, 0, sizeof *fv);
}

bool lv__ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !memcmp(s + a - b, suf, b);
}
