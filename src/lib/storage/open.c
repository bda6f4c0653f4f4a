/*
 * The backend registry and the one open of a store (backends.h).  Backends
 * register by scheme; an address (address.h) is opened through the backend its
 * scheme names, and any storage option that backend did not take is refused by
 * name.  This file names no backend: they register themselves (core/stores.c
 * registers the built-in ones).  Also the sub-handle that follows a store's other
 * key spelling (objstore/uri.h) to where the data is.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "objstore/uri.h"
#include "storage/backends.h"
#include "util/util.h"

#define MAX_BACKENDS 16

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static const lv__backend *table[MAX_BACKENDS];
static size_t ntable;

const lv__backend *lv__backend_find(const char *scheme)
{
	const lv__backend *b = NULL;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < ntable && !b; i++)
		if (!strcmp(table[i]->scheme, scheme))
			b = table[i];
	pthread_mutex_unlock(&mu);
	return b;
}

int lv__backend_register(const lv__backend *b)
{
	pthread_mutex_lock(&mu);
	int rc = ntable < MAX_BACKENDS ? 0 : LV_ELIMIT;
	for (size_t i = 0; i < ntable && rc == 0; i++)
		if (!strcmp(table[i]->scheme, b->scheme))
			rc = LV_EEXISTS;
	if (rc == 0)
		table[ntable++] = b;
	pthread_mutex_unlock(&mu);
	return rc;
}

int lv__storage_open_address(lv_storage **out, lv__address *a, lv_error *err)
{
	*out = NULL;
	const lv__backend *b = lv__backend_find(a->scheme);
	if (!b) /* the parser found it: only a registry emptied since could miss */
		return lv__err(err, LV_EUNSUPPORTED, "open: unsupported URI scheme \"%s://\"", a->scheme);
	int rc = b->open(out, a, err);
	if (rc == 0 && (rc = lv__opt_leftover(&a->opts, b->where, err)) < 0) {
		lv_storage_free(*out);
		*out = NULL;
	}
	return rc;
}

/* ---- a sub-handle where the data is ---- */

static int any(const lv_list_entry *e, void *payload)
{
	(void)e;
	*(bool *)payload = true;
	return 1;
}

static bool holds(lv_storage *st, const char *dir)
{
	bool found = false;
	lv_error e = { 0 };
	return lv_storage_list_names(st, dir, any, &found, &e) >= 0 && found;
}

int lv__storage_sub_holding(lv_storage **out, lv_storage *parent, const char *subdir,
			    const char *probe, lv_error *err)
{
	LV_TRY(lv_storage_sub(out, parent, subdir, err));
	if (!lv_storage_is_remote(parent) || holds(*out, probe))
		return 0;
	char *enc = lv__uri_encode(subdir, strlen(subdir));
	lv_storage *alt = NULL;
	lv_error e = { 0 };
	if (enc && strcmp(enc, subdir) && lv_storage_sub(&alt, parent, enc, &e) == 0 && holds(alt, probe)) {
		lv_storage_free(*out);
		*out = alt;
		alt = NULL;
	}
	lv_storage_free(alt);
	lv__free(enc);
	return 0;
}
