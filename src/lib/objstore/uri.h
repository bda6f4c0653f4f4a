/*
 * Object keys from dataset URIs, as Lance derives them.  Lance parses a dataset
 * URI ("s3://bucket/my data/t.lance") as a URL and uses the URL's path as the
 * key prefix, so the characters a URL parser percent-encodes in a path (C0
 * controls, space, '"', '<', '>', '`', '{', '}', DEL and every non-ASCII byte)
 * appear in the keys as %XX: LanceDB writes "my data/t.lance" as the keys
 * "my%20data/t.lance/...", and "é" as "%C3%A9".  A '%' already in the URI is
 * kept as it is ("%20" in the URI is the same key as a space).  Measured with
 * LanceDB 0.31 (Lance 8) on s3rver and Azurite (tests/interop/test_cloud_lancedb.mjs).
 */
#ifndef LV_OBJSTORE_URI_H
#define LV_OBJSTORE_URI_H

#include <stddef.h>

#include "lancever/common.h"

/*
 * The key prefix for path[0, n) of a URI (after "bucket/"), trailing '/' removed,
 * into *out (malloc'ed).  LV_EINVALID for '?' or '#' (a URL query or fragment,
 * which Lance would cut off) naming `scheme`; LV_ENOMEM.
 */
int lv__uri_key_prefix(const char *path, size_t n, const char *scheme, char **out, lv_error *err);

#endif
