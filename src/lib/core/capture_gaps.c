/*
 * Gap notes: `_checkpoints/gaps/{first:020}-{last:020}.{reason}` (capture_gaps.h).
 *
 * Invariants:
 *  - A note is created with create-if-absent and never replaced or deleted:
 *    two captures noting the same range agree (the name is the content).
 *  - A name that is not a note is ignored and counted (nstray), never read,
 *    moved or deleted; a note never changes what a checkpoint records.
 *  - Numbers in names are checked (20 digits, first <= last, 0 < first).
 */
#include "core/capture_gaps.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static const char *const reasons[] = { LV_CAPTURE_GAP_VANISHED, LV_CAPTURE_GAP_UNSEEN };

const char *lv__capgap_text(const char *reason)
{
	if (!strcmp(reason, LV_CAPTURE_GAP_VANISHED))
		return "manifest removed before it could be read";
	if (!strcmp(reason, LV_CAPTURE_GAP_UNSEEN))
		return "committed and removed between two polls (or while no capture ran)";
	return "a reason this lancever does not know";
}

int lv__capgap_put(lv_storage *st, uint64_t first, uint64_t last, const char *reason, int64_t noted_ms,
		   lv_error *err)
{
	if (first == 0 || first > last || !reason)
		return lv__err(err, LV_EINVALID, "gap note: bad range %" PRIu64 "-%" PRIu64, first, last);
	char path[128], body[256];
	snprintf(path, sizeof path, LV__CAPGAP_DIR "/%020" PRIu64 "-%020" PRIu64 ".%s", first, last, reason);
	int n = snprintf(body, sizeof body,
			 "lancever-gap 1\nfirst %" PRIu64 "\nlast %" PRIu64 "\nreason %s\nnoted_ms %" PRId64 "\n",
			 first, last, reason, noted_ms);
	int rc = lv_storage_create(st, path, body, (size_t)n, err);
	return rc == LV_EEXISTS ? 0 : rc;
}

/* 20 decimal digits at p into *v: false if they are not. */
static bool dec20(const char *p, uint64_t *v)
{
	uint64_t x = 0;
	for (int i = 0; i < 20; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		unsigned d = (unsigned)(p[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

/* "{first:020}-{last:020}.{reason}" (the base name): false if it is not a note. */
static bool parse_name(const char *name, lv__capgap *g)
{
	if (strlen(name) < 43 || name[20] != '-' || name[41] != '.')
		return false;
	if (!dec20(name, &g->first) || !dec20(name + 21, &g->last) || g->first == 0 || g->first > g->last)
		return false;
	g->reason = "other";
	for (size_t i = 0; i < sizeof reasons / sizeof *reasons; i++)
		if (!strcmp(name + 42, reasons[i]))
			g->reason = reasons[i];
	return true;
}

typedef struct list_ctx {
	lv__capgaps *g;
	int rc;
} list_ctx;

static int list_cb(const lv_list_entry *e, void *payload)
{
	list_ctx *c = payload;
	const char *base = strrchr(e->path, '/');
	lv__capgap g;
	if (!parse_name(base ? base + 1 : e->path, &g)) {
		c->g->nstray++;
		return 0;
	}
	lv__capgap *nv = lv__grow(c->g->v, &c->g->cap, c->g->n, sizeof *nv, 8);
	if (!nv) {
		c->rc = LV_ENOMEM;
		return 1;
	}
	c->g->v = nv;
	nv[c->g->n++] = g;
	return 0;
}

static int cmp_gap(const void *a, const void *b)
{
	const lv__capgap *x = a, *y = b;
	return x->first < y->first ? -1 : x->first > y->first;
}

int lv__capgap_list(lv_storage *st, lv__capgaps *out, lv_error *err)
{
	memset(out, 0, sizeof *out);
	list_ctx c = { out, 0 };
	int rc = lv_storage_list_names(st, LV__CAPGAP_DIR, list_cb, &c, err);
	if (rc >= 0 && c.rc < 0)
		rc = lv__err(err, c.rc, "out of memory listing " LV__CAPGAP_DIR);
	if (rc < 0) {
		lv__capgaps_dispose(out);
		return rc;
	}
	if (out->n > 1)
		qsort(out->v, out->n, sizeof *out->v, cmp_gap);
	return 0;
}

void lv__capgaps_dispose(lv__capgaps *g)
{
	lv__free(g->v);
	memset(g, 0, sizeof *g);
}

const lv__capgap *lv__capgap_find(const lv__capgaps *g, uint64_t first, uint64_t last)
{
	for (size_t i = 0; i < g->n && g->v[i].first <= last; i++)
		if (g->v[i].last >= first)
			return &g->v[i];
	return NULL;
}
