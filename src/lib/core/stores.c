/*
 * The built-in storage backends, registered once (storage/backends.h: the
 * registry), and the public lv_storage_open, which needs them registered.  This
 * is the only file that names every backend; it stands above them, so the storage
 * front end (storage/open.c) knows none of them.  A URI is parsed here once into
 * an address (storage/address.h) and opened once.
 */
#include <pthread.h>

#include "core/stores.h"
#include "storage/backends.h"
#include "util/util.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void register_builtin(void)
{
	static const lv__backend *const builtin[] = {
		&lv__backend_local, &lv__backend_file, &lv__backend_mem, &lv__backend_s3,
		&lv__backend_az,    &lv__backend_abfs, &lv__backend_abfss,
	};
	for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
		(void)lv__backend_register(builtin[i]); /* 7 of 16 slots, each scheme once */
}

void lv__stores_builtin(void)
{
	pthread_once(&once, register_builtin);
}

int lv_storage_open(lv_storage **out, const char *uri, const lv_storage_options *opts,
		    lv_error *err)
{
	if (!out)
		return lv__err(err, LV_EINVALID, "open: NULL output");
	*out = NULL;
	lv__stores_builtin();
	lv__address a;
	int rc = lv__address_parse(&a, uri, opts, err);
	if (rc == 0)
		rc = lv__storage_open_address(out, &a, err);
	lv__address_dispose(&a);
	return rc;
}
