/*
 * URI dispatch: the one file that knows every built-in backend.  lv_storage_open()
 * parses the scheme, gathers the storage options into a bag (objstore/options.h),
 * hands the rest of the URI and the bag to the backend's constructor, and refuses
 * any option no backend took.  Only the scheme of a URI we do not handle is
 * echoed in a message: the rest may hold credentials.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "objstore/options.h"
#include "storage/backends.h"
#include "util/util.h"

/* Each scheme gets the full URI, the part after "scheme://" and the options. */
typedef int (*scheme_open_fn)(lv_storage **out, const char *uri, const char *rest, lv__optbag *opts,
			      lv_error *err);

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int open_plain(lv_storage **out, const char *path, lv__optbag *opts, lv_error *err)
{
	LV_TRY(lv__opt_none(opts, "a local path", err));
	return lv__storage_local_open(out, path, err);
}

static int open_file(lv_storage **out, const char *uri, const char *rest, lv__optbag *opts,
		     lv_error *err)
{
	LV_TRY(lv__opt_none(opts, "a file:// URI", err));
	/* Only local files: "file:///abs" or "file://localhost/abs". */
	if (strncasecmp(rest, "localhost/", 10) == 0)
		rest += 9;
	if (rest[0] != '/')
		return lv__err(err, LV_EUNSUPPORTED,
			       "open %.300s: file:// URIs must name an absolute local path", uri);
	size_t n = strlen(rest);
	char *path = lv__malloc(n + 1);
	if (!path)
		return lv__err(err, LV_ENOMEM, "open: out of memory");
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		if (rest[i] == '%') {
			int a = i + 1 < n ? hexval(rest[i + 1]) : -1;
			int b = i + 2 < n ? hexval(rest[i + 2]) : -1;
			if (a < 0 || b < 0 || (a == 0 && b == 0)) {
				free(path);
				return lv__err(err, LV_EINVALID,
					       "open %.300s: bad percent escape in file:// URI", uri);
			}
			path[j++] = (char)(a * 16 + b);
			i += 2;
		} else {
			path[j++] = rest[i];
		}
	}
	path[j] = 0;
	int rc = lv__storage_local_open(out, path, err);
	free(path);
	return rc;
}

static int open_mem(lv_storage **out, const char *uri, const char *rest, lv__optbag *opts,
		    lv_error *err)
{
	LV_TRY(lv__opt_none(opts, "a mem:// store", err));
	return lv__storage_mem_open(out, uri, err);
}

static int open_s3(lv_storage **out, const char *uri, const char *rest, lv__optbag *opts,
		   lv_error *err)
{
	return lv__storage_s3_open(out, rest, opts, err);
}

static int open_azure(lv_storage **out, const char *uri, const char *rest, lv__optbag *opts,
		      lv_error *err)
{
	return lv__storage_azure_open(out, uri, opts, err);
}

static const struct {
	const char *scheme; /* without "://" */
	scheme_open_fn open;
	const char *where;  /* for "unknown storage option 'k' for <where>" */
} schemes[] = {
	{ "file", open_file, "file://" },
	{ "mem", open_mem, "mem://" },
	{ "s3", open_s3, "s3://" },
	{ "az", open_azure, "az://" },
	{ "abfs", open_azure, "abfs://" },
	{ "abfss", open_azure, "abfss://" },
};

/* Length of "scheme" if uri starts with "scheme://", else 0 (a plain path). */
static size_t scheme_len(const char *uri)
{
	size_t i = 0;
	if (!((uri[0] >= 'a' && uri[0] <= 'z') || (uri[0] >= 'A' && uri[0] <= 'Z')))
		return 0;
	while (uri[i] && ((uri[i] >= 'a' && uri[i] <= 'z') || (uri[i] >= 'A' && uri[i] <= 'Z') ||
			  (uri[i] >= '0' && uri[i] <= '9') || uri[i] == '+' || uri[i] == '-' ||
			  uri[i] == '.'))
		i++;
	return strncmp(uri + i, "://", 3) == 0 ? i : 0;
}

static int dispatch(lv_storage **out, const char *uri, lv__optbag *opts, lv_error *err)
{
	size_t sl = scheme_len(uri);
	if (sl == 0)
		return open_plain(out, uri, opts, err);
	for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++) {
		if (strlen(schemes[i].scheme) != sl || strncasecmp(uri, schemes[i].scheme, sl))
			continue;
		int rc = schemes[i].open(out, uri, uri + sl + 3, opts, err);
		if (rc == 0 && (rc = lv__opt_leftover(opts, schemes[i].where, err)) < 0) {
			lv_storage_free(*out);
			*out = NULL;
		}
		return rc;
	}
	LV_TRY(lv__storage_refuse_commit_store(uri, sl, err));
	/* Only the scheme is echoed: the rest of an unknown URI may hold secrets. */
	return lv__err(err, LV_EUNSUPPORTED, "open: unsupported URI scheme \"%.*s://\"",
		       (int)(sl > 32 ? 32 : sl), uri);
}

int lv_storage_open(lv_storage **out, const char *uri, const lv_storage_options *opts,
		    lv_error *err)
{
	if (!out)
		return lv__err(err, LV_EINVALID, "open: NULL output");
	*out = NULL;
	if (!uri || !uri[0])
		return lv__err(err, LV_EINVALID, "open: empty URI");
	lv__optbag bag;
	LV_TRY(lv__optbag_init(&bag, opts, err));
	int rc = dispatch(out, uri, &bag, err);
	lv__optbag_dispose(&bag);
	return rc;
}
