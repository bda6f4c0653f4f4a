/*
 * The dataset address: what a URI names, parsed once (address.c) and handed down
 * whole.  Every layer above storage passes the URI string only as far as
 * lv__address_parse(); below it, backends read the parsed fields and never look at
 * the URI again (messages may show `uri` only as the parser allows: a URI of a
 * scheme that is not registered is shown by its scheme alone, since the rest may
 * hold credentials).
 *
 * Invariants after a successful parse: `scheme` is lower case ("" for a plain
 * path) and names a registered backend (open.c) of form `form`; a PATH address has
 * `root` (the local path, file:// escapes decoded); a BUCKET address has
 * `container`, `root` (the path below it percent-decoded as Lance 12 does, no
 * leading or trailing '/') and `root_raw` (the same path as written, from which
 * Lance 8 derived its keys), and holds no '?' or '#'; `tree` is the offset in a
 * PATH root of the first "/tree/" (a branch path "<root>/tree/<branch>", which
 * only the dataset layer can confirm), or 0.  There is one percent-decoder in the
 * library: lv__pct_decode, here.
 */
#ifndef LV_STORAGE_ADDRESS_H
#define LV_STORAGE_ADDRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "lancever/storage.h"
#include "objstore/options.h"

/* The shape of a scheme's URIs (a registered backend names its form). */
enum lv__addr_form {
	LV__ADDR_PATH = 1, /* a local path: plain, or file:///abs or file://localhost/abs */
	LV__ADDR_NAME,     /* mem://name: the URI names a fresh store and nothing more */
	LV__ADDR_BUCKET,   /* scheme://container[@host][/path]: an object store */
};

typedef struct lv__address {
	const char *uri;  /* as given (borrowed) */
	char scheme[16];  /* lower case, without "://"; "" for a plain path */
	int form;         /* enum lv__addr_form */
	char *container;  /* BUCKET: the bucket or container (before any '@') */
	char *host;       /* BUCKET: what follows '@' ("acct.dfs.core.windows.net"), or NULL */
	char *root;       /* PATH: the local path; BUCKET: the path below the container, decoded */
	char *root_raw;   /* BUCKET: that path as written in the URI */
	size_t tree;      /* PATH: offset in root of the first "/tree/" followed by a name, or 0 */
	const char *probe; /* set by the opener: a directory whose presence tells which of two key
			    * spellings (objstore/uri.h) holds the data, or NULL: the default one */
	bool must_exist;  /* set by the opener: a local root must be an existing directory */
	lv__optbag opts;  /* the storage options, for the backend to take */
} lv__address;

/*
 * Parses `uri` with the storage options `o` (may be NULL) into *a (dispose with
 * lv__address_dispose, also after an error).  Errors: LV_EINVALID (empty URI, bad
 * percent escape in a file:// URI, a '?' or '#' in an object-store URI, a bucket URI
 * without a container), LV_EUNSUPPORTED (a scheme no backend registered, an external
 * commit store, a file:// URI that is not an absolute local path), LV_ENOMEM.
 */
int lv__address_parse(lv__address *a, const char *uri, const lv_storage_options *o, lv_error *err);
void lv__address_dispose(lv__address *a);

/*
 * Decodes %XX escapes of s[0, n) into a new string (malloc'ed; *out NULL on error).
 * strict: a '%' not followed by two hex digits, or %00, is LV_EINVALID; lenient (Lance
 * 12's URL paths): such a '%' stays as it is and %00 is kept.  LV_ENOMEM.
 */
int lv__pct_decode(const char *s, size_t n, bool strict, char **out, lv_error *err);

#endif
