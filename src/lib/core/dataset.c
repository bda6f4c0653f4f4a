#include "core/dataset_internal.h"

#include <stdlib.h>

#include "format/refs.h"
#include "util/util.h"

#define DEFAULT_THREADS 8

static int init_ds(lv_dataset **out, lv_storage *st, bool owns, const lv_open_options *opts,
		   lv_error *err)
{
	lv_dataset *ds = calloc(1, sizeof *ds);
	if (!ds)
		return lv__err(err, LV_ENOMEM, "out of memory");
	ds->st = st;
	ds->owns_storage = owns;
	ds->threads = opts && opts->threads > 0 ? opts->threads : DEFAULT_THREADS;
	if (ds->threads > 256)
		ds->threads = 256;
	*out = ds;
	return 0;
}

int lv_dataset_open(lv_dataset **out, const char *uri, const lv_open_options *opts, lv_error *err)
{
	if (!out || !uri)
		return lv__err(err, LV_EINVALID, "lv_dataset_open: NULL argument");
	*out = NULL;
	lv_storage *st = NULL;
	LV_TRY(lv_storage_open(&st, uri, opts ? &opts->storage : NULL, err));
	int rc = init_ds(out, st, true, opts, err);
	if (rc < 0)
		lv_storage_free(st);
	return rc;
}

int lv_dataset_open_storage(lv_dataset **out, lv_storage *st, const lv_open_options *opts,
			    lv_error *err)
{
	if (!out || !st)
		return lv__err(err, LV_EINVALID, "lv_dataset_open_storage: NULL argument");
	*out = NULL;
	return init_ds(out, st, false, opts, err);
}

void lv_dataset_free(lv_dataset *ds)
{
	if (!ds)
		return;
	if (ds->owns_storage)
		lv_storage_free(ds->st);
	free(ds);
}

lv_storage *lv_dataset_storage(lv_dataset *ds) { return ds ? ds->st : NULL; }

int lv_refs_load(lv_refs **out, lv_dataset *ds, lv_error *err)
{
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "lv_refs_load: NULL argument");
	return lv__refs_load_storage(out, ds->st, err);
}
