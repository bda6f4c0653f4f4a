/*
 * Object keys from dataset URIs, as Lance derives them.  Lance parses a dataset
 * URI ("s3://bucket/my data/t.lance") as a URL, and the two Lance versions
 * tested turn its path into keys differently (measured on s3rver and Azurite,
 * tests/interop/test_cloud_lancedb.mjs):
 *  - "encoded" (Lance 8 / LanceDB 0.31): the URL's path as it is, so the
 *    characters a URL parser percent-encodes in a path (C0 controls, space,
 *    '"', '<', '>', '`', '{', '}', DEL and every non-ASCII byte) appear as %XX
 *    ("my data" -> "my%20data", "é" -> "%C3%A9") and a '%' already in the URI
 *    stays as it is;
 *  - "decoded" (Lance 12 / LanceDB 0.39, the default): the path percent-decoded,
 *    so keys hold the raw characters ("my data", "é", and "%25" -> "%").
 * The storage option object_key_encoding=encoded|decoded chooses; without it a
 * dataset whose manifests are only under the Lance 8 keys is found there (the
 * store lists the opener's probe directory under both: lv__obj_pick_prefix).
 */
#ifndef LV_OBJSTORE_URI_H
#define LV_OBJSTORE_URI_H

#include <stddef.h>

#include "lancever/common.h"

#include "objstore/options.h"

/*
 * The key prefix of a dataset address's path, into *out (malloc'ed): `decoded` (the
 * path percent-decoded, storage/address.h) or, when the storage option
 * object_key_encoding is "encoded", `raw` (the path as written) in Lance 8's mapping.
 * alt (may be NULL) receives the other spelling (Lance 8's) when the option is not
 * given and the two differ, else NULL: the store may find the dataset only there
 * (lv__obj_pick_prefix).  LV_EINVALID for a bad option value; LV_ENOMEM.
 */
int lv__uri_key_prefix(const char *decoded, const char *raw, lv__optbag *o, char **out, char **alt,
		       lv_error *err);
/* path[0, n) in Lance 8's key mapping (malloc'ed; NULL on OOM). */
char *lv__uri_encode(const char *path, size_t n);

#endif
