/*
 * The one parser of a dataset address (address.h): scheme, then the form its
 * registered backend names (a local path, a store name, or container + path),
 * the one percent-decoder, and the checks every URI of a form gets.  Only the
 * scheme of a URI no backend takes is echoed in a message: the rest may hold
 * credentials.  The URI passes through here once, top to bottom: each part is
 * copied out (copy_n, lv__pct_decode) and nothing below sees the URI string.
 *
 * External commit stores are refused here, by their scheme.  Lance can commit
 * through DynamoDB ("s3+ddb://bucket/path?ddbTableName=T": the manifest is written
 * to S3 under a staged name and the version becomes committed only by its DynamoDB
 * entry) or through a namespace that manages versions.  There the newest committed
 * versions may exist only as staged objects `_versions/{v}.manifest-{uuid}` until
 * the store finalises them, so the object store alone does not tell which versions
 * are committed: listing it could miss committed versions, and cleaning it could
 * delete the only copy of one.  lancever does not implement commit stores, so any
 * "<scheme>+<store>://" URI is refused up front, naming the store.
 */
#include "storage/address.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "storage/backends.h"
#include "util/util.h"

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

int lv__pct_decode(const char *s, size_t n, bool strict, char **out, lv_error *err)
{
	char *d = lv__malloc(n + 1);
	*out = NULL;
	if (!d)
		return lv__err(err, LV_ENOMEM, "out of memory");
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		int a = s[i] == '%' && i + 2 < n ? hexval(s[i + 1]) : -1;
		int b = a >= 0 ? hexval(s[i + 2]) : -1;
		bool ok = a >= 0 && b >= 0 && (a || b);
		if (s[i] == '%' && !ok && strict) {
			lv__free(d);
			return lv__err(err, LV_EINVALID, "bad percent escape");
		}
		if (ok) {
			d[j++] = (char)(a * 16 + b);
			i += 2;
		} else {
			d[j++] = s[i];
		}
	}
	d[j] = 0;
	*out = d;
	return 0;
}

/* s[0, n) as a new string (NULL on OOM). */
static char *copy_n(const char *s, size_t n)
{
	char *d = lv__malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

static int refuse_commit_store(const char *uri, size_t scheme_len, lv_error *err)
{
	const char *plus = memchr(uri, '+', scheme_len);
	if (!plus)
		return 0;
	if (scheme_len == 6 && strncasecmp(uri, "s3+ddb", 6) == 0)
		return lv__err(err, LV_EUNSUPPORTED,
			       "open: \"s3+ddb://\" datasets commit through a DynamoDB commit store, "
			       "which lancever does not support (their newest versions may be known "
			       "only to DynamoDB); open the dataset with Lance, or use its s3:// URI only "
			       "if no writer commits through DynamoDB");
	return lv__err(err, LV_EUNSUPPORTED,
		       "open: \"%.*s://\" names an external commit store (\"%.*s\"), which lancever "
		       "does not support",
		       (int)(scheme_len > 32 ? 32 : scheme_len), uri,
		       (int)(scheme_len - (size_t)(plus + 1 - uri) > 24 ? 24
									 : scheme_len - (size_t)(plus + 1 - uri)),
		       plus + 1);
}

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

/* The first "/tree/<name>" of a local path (a branch path candidate), or 0. */
static size_t find_tree(const char *path)
{
	for (const char *t = strstr(path, "/tree/"); t; t = strstr(t + 1, "/tree/"))
		if (t > path && t[6] && t[6] != '/')
			return (size_t)(t - path);
	return 0;
}

/* file:///abs or file://localhost/abs: the path, escapes decoded strictly. */
static int parse_file(lv__address *a, const char *rest, lv_error *err)
{
	if (strncasecmp(rest, "localhost/", 10) == 0)
		rest += 9;
	if (rest[0] != '/')
		return lv__err(err, LV_EUNSUPPORTED,
			       "open %.300s: file:// URIs must name an absolute local path", a->uri);
	int rc = lv__pct_decode(rest, strlen(rest), true, &a->root, err);
	if (rc == LV_EINVALID)
		return lv__err(err, LV_EINVALID, "open %.300s: bad percent escape in file:// URI", a->uri);
	return rc;
}

/* container[@host][/path]: no query or fragment (Lance would cut them off). */
static int parse_bucket(lv__address *a, const char *rest, lv_error *err)
{
	for (const char *p = rest; *p; p++)
		if (*p == '?' || *p == '#')
			return lv__err(err, LV_EINVALID,
				       "open %s://: the URI has a '%c' (a URL %s, which Lance ignores); "
				       "percent-encode it as %%%02X if it is part of a name",
				       a->scheme, *p, *p == '?' ? "query" : "fragment",
				       (unsigned)(unsigned char)*p);
	const char *slash = strchr(rest, '/');
	size_t alen = slash ? (size_t)(slash - rest) : strlen(rest);
	const char *at = memchr(rest, '@', alen);
	size_t clen = at ? (size_t)(at - rest) : alen;
	a->container = copy_n(rest, clen);
	if (at && !(a->host = copy_n(at + 1, alen - clen - 1)))
		return lv__err(err, LV_ENOMEM, "out of memory");
	const char *p = slash ? slash + 1 : "";
	size_t n = strlen(p);
	while (n && p[n - 1] == '/')
		n--;
	if (!a->container || !(a->root_raw = copy_n(p, n)))
		return lv__err(err, LV_ENOMEM, "out of memory");
	return lv__pct_decode(p, n, false, &a->root, err);
}

int lv__address_parse(lv__address *a, const char *uri, const lv_storage_options *o, lv_error *err)
{
	memset(a, 0, sizeof *a);
	a->uri = uri;
	if (!uri || !uri[0])
		return lv__err(err, LV_EINVALID, "open: empty URI");
	size_t sl = scheme_len(uri);
	for (size_t i = 0; i < sl && i < sizeof a->scheme - 1; i++)
		a->scheme[i] = (char)(uri[i] >= 'A' && uri[i] <= 'Z' ? uri[i] - 'A' + 'a' : uri[i]);
	const lv__backend *b = sl < sizeof a->scheme ? lv__backend_find(a->scheme) : NULL;
	int rc = b ? 0 : refuse_commit_store(uri, sl, err);
	if (rc < 0)
		return rc;
	if (!b) /* Only the scheme is echoed: the rest of an unknown URI may hold secrets. */
		return lv__err(err, LV_EUNSUPPORTED, "open: unsupported URI scheme \"%.*s://\"",
			       (int)(sl > 32 ? 32 : sl), uri);
	a->form = b->form;
	LV_TRY(lv__optbag_init(&a->opts, o, err));
	const char *rest = sl ? uri + sl + 3 : uri;
	if (a->form == LV__ADDR_BUCKET)
		return parse_bucket(a, rest, err);
	if (a->form != LV__ADDR_PATH)
		return 0;
	if (sl)
		rc = parse_file(a, rest, err);
	else if (!(a->root = copy_n(uri, strlen(uri))))
		rc = lv__err(err, LV_ENOMEM, "out of memory");
	if (rc == 0)
		a->tree = find_tree(a->root);
	return rc;
}

void lv__address_dispose(lv__address *a)
{
	lv__free(a->container);
	lv__free(a->host);
	lv__free(a->root);
	lv__free(a->root_raw);
	lv__optbag_dispose(&a->opts);
	memset(a, 0, sizeof *a);
}
