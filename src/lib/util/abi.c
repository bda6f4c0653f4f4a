/*
 * util/abi.c - the struct version check (util/abi.h states the rule).
 * A leaf: it only formats an error and fills a struct.
 */
#include "util/abi.h"

#include <string.h>

#include "util/util.h"

int lv__struct_version(const char *what, int version, int floor, int current, lv_error *err)
{
	if (version >= floor && version <= current)
		return 0;
	if (version == 0)
		return lv__err(err, LV_EINVALID, "%s: version is 0 (call its init function first)", what);
	return lv__err(err, LV_EINVALID, "%s: version %d is not one this library reads (%d..%d)%s", what,
		       version, floor, current,
		       version > current ? ": the caller's header is newer than the library"
					 : ": the caller was built against a layout from before 1.0");
}

int lv__struct_init(const char *what, void *x, size_t size, const void *defaults, int version,
		    int floor, int current)
{
	if (!x || lv__struct_version(what, version, floor, current, NULL))
		return LV_EINVALID;
	if (defaults)
		memcpy(x, defaults, size);
	else
		memset(x, 0, size);
	memcpy(x, &version, sizeof version); /* `int version` is the first field */
	return 0;
}
