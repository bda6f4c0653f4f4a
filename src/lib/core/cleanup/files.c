/* Listing the files a cleanup may consider, with their sizes and times. */
#include "core/cleanup/cleanup_int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/fetch.h"
#include "format/refs.h"
#include "util/util.h"

/* A hint is a few bytes; a bigger one is not Lance's. */
#define HINT_MAX 4096

int lv__hint_floor(lv_dataset *ds, uint64_t *floor, lv_error *err)
{
	*floor = UINT64_MAX;
	lv_buf b = { 0 };
	lv_error e = { 0 };
	int rc = lv__fetch_capped(ds->st, LV_VERSION_HINT_PATH, HINT_MAX, &b, &e);
	if (rc == LV_ENOTFOUND)
		return 0;
	if (rc == 0)
		rc = lv__version_hint_parse(b.ptr, b.size, LV_VERSION_HINT_PATH, floor, &e);
	lv_buf_dispose(&b);
	if (rc < 0)
		return lv__err(err, rc, "%s (the version hint: no manifest at or above it may go); "
			       "refusing to remove versions", e.message);
	return 0;
}

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
		lv__free(fv->v[i].path);
	lv__free(fv->v);
	memset(fv, 0, sizeof *fv);
}

bool lv__ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !memcmp(s + a - b, suf, b);
}
