/*
 * Azure Blob Storage backend: Shared Key (or SAS) signed requests over the
 * shared HTTP client (objstore/http.h: retries inside a deadline, capped
 * bodies), List Blobs with pagination, ranged GETs (x-ms-range), create-if-
 * absent as Put Blob with If-None-Match: *, and deletes of many blobs as
 * parallel Delete Blob requests (Blob Batch is not used).  Credentials and SAS
 * tokens never reach a message.  Opening is azopen.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "azure/az_int.h"
#include "objstore/lister.h"
#include "objstore/xml.h"
#include "storage/storage_int.h"
#include "util/util.h"

#define AZ_SMALL_BODY_MAX (64u << 10)
#define AZ_LIST_BODY_MAX ((uint64_t)32 << 20)
#define AZ_DELETE_THREADS 16

typedef struct azreq {
	const char *method, *what, *name; /* name: for messages, relative to the store */
	const char *blob;                 /* full blob name (decoded); NULL = the container */
	const lv_az_param *params;        /* sorted by name */
	size_t nparams;
	const uint8_t *body;
	size_t body_len;
	bool put_blob, if_none_match;
	const char *range;                /* "bytes=a-b" (x-ms-range) or NULL */
	uint64_t max_ok, keep_ok;
	bool ranged;
	uint64_t range_off, range_len;
} azreq;

typedef struct sign_ctx {
	az *a;
	const azreq *q;
	const char *path; /* URL path as sent */
} sign_ctx;

static int az_sign(void *ctx, const lv_http_req *hq, lv_http_hdrs *h, lv_error *err)
{
	sign_ctx *c = ctx;
	const azreq *q = c->q;
	char date[64];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	char xd[96], xr[96], *xms[4];
	size_t nx = 0;
	if (q->put_blob)
		xms[nx++] = "x-ms-blob-type:BlockBlob";
	snprintf(xd, sizeof xd, "x-ms-date:%s", date);
	xms[nx++] = xd;
	if (q->range) {
		snprintf(xr, sizeof xr, "x-ms-range:%s", q->range);
		xms[nx++] = xr;
	}
	xms[nx++] = "x-ms-version:" LV_AZ_VERSION;
	int rc = 0;
	for (size_t i = 0; i < nx && rc == 0; i++) {
		const char *colon = strchr(xms[i], ':');
		rc = lv__http_hdr(h, "%.*s: %s", (int)(colon - xms[i]), xms[i], colon + 1);
	}
	const char *ctype = q->put_blob ? "application/octet-stream" : NULL;
	if (rc == 0 && ctype)
		rc = lv__http_hdr(h, "Content-Type: %s", ctype);
	if (rc == 0 && q->if_none_match)
		rc = lv__http_hdr(h, "If-None-Match: *");
	if (rc == 0 && c->a->keylen) {
		char *sts = lv__az_string_to_sign(q->method, c->a->account, c->path, q->params, q->nparams,
						  q->body_len, ctype, q->if_none_match,
						  (const char *const *)xms, nx);
		if (!sts)
			return lv__err(err, LV_ENOMEM, "out of memory");
		char sig[64];
		lv__az_sign(lv__http_crypto(c->a->http), c->a->key, c->a->keylen, sts, sig);
		free(sts);
		rc = lv__http_hdr(h, "Authorization: SharedKey %s:%s", c->a->account, sig);
	}
	return rc < 0 ? lv__err(err, rc, "out of memory") : 0;
}

static void code_of(const lv_http_resp *r, char *out, size_t cap)
{
	if (r->ms_error_code[0])
		snprintf(out, cap, "%s", r->ms_error_code);
	else
		lv__s3xml_error_code((const char *)r->body.ptr, r->body.len, out, cap);
}

/* The URL path of a blob (or of the container): service path + /container[/blob]. */
static char *url_path(const az *a, const char *blob)
{
	const char *hs = strstr(a->service, "://");
	const char *sp = hs ? strchr(hs + 3, '/') : NULL;
	char *eb = blob ? lv__az_encode(blob, true) : NULL;
	if (blob && !eb)
		return NULL;
	char *p = lv__sprintf("%s/%s%s%s", sp ? sp : "", a->container, blob ? "/" : "", eb ? eb : "");
	free(eb);
	return p;
}

static char *query_of(const az *a, const azreq *q)
{
	lv_dbuf b;
	lv_dbuf_init(&b, 0);
	for (size_t i = 0; i < q->nparams; i++) {
		char *v = lv__az_encode(q->params[i].value, false);
		if (!v) {
			lv_dbuf_dispose(&b);
			return NULL;
		}
		lv_dbuf_printf(&b, "%s%s=%s", i ? "&" : "", q->params[i].name, v);
		free(v);
	}
	if (a->sas)
		lv_dbuf_printf(&b, "%s%s", q->nparams ? "&" : "", a->sas);
	lv_dbuf_addc(&b, 0);
	if (b.oom) {
		lv_dbuf_dispose(&b);
		return NULL;
	}
	return (char *)b.ptr;
}

/* Performs q with retries; 0 with r->status set (the caller disposes r, also on failure). */
static int az_perform(az *a, const azreq *q, lv_http_resp *r, lv_error *err)
{
	memset(r, 0, sizeof *r);
	char *path = url_path(a, q->blob);
	char *query = path ? query_of(a, q) : NULL;
	const char *hs = strstr(a->service, "://");
	const char *sp = hs ? strchr(hs + 3, '/') : NULL;
	size_t hostpart = sp ? (size_t)(sp - a->service) : strlen(a->service);
	char *url = query ? lv__sprintf("%.*s%s%s%s", (int)hostpart, a->service, path, query[0] ? "?" : "",
					query)
			  : NULL;
	int rc;
	if (!url) {
		rc = lv__err(err, LV_ENOMEM, "out of memory");
	} else {
		sign_ctx c = { a, q, path };
		lv_http_req hq = { 0 };
		hq.method = q->method;
		hq.what = q->what;
		hq.name = q->name;
		hq.url = url;
		hq.body = q->body;
		hq.body_len = q->body_len;
		hq.sign = az_sign;
		hq.ctx = &c;
		hq.max_ok = q->max_ok ? q->max_ok : AZ_SMALL_BODY_MAX;
		hq.keep_ok = q->keep_ok;
		hq.ranged = q->ranged;
		hq.range_off = q->range_off;
		hq.range_len = q->range_len;
		hq.code_of = code_of;
		hq.service_name = "Azure";
		hq.root = a->root;
		rc = lv__http_perform(a->http, &hq, r, err);
	}
	if (url)
		memset(url, 0, strlen(url)); /* it may hold a SAS */
	if (query)
		memset(query, 0, strlen(query));
	free(url);
	free(query);
	free(path);
	return rc;
}

static int status_error(const char *what, const char *name, const lv_http_resp *r, lv_error *err)
{
	char code[64];
	code_of(r, code, sizeof code);
	int lv = r->status == 404 ? LV_ENOTFOUND : LV_EIO;
	return lv__err(err, lv, "Azure %s %s: HTTP %ld%s%s", what, name, r->status, code[0] ? " " : "",
		       code);
}

static char *full_blob(const az *a, const char *path)
{
	if (!a->prefix[0])
		return lv__strdup(path);
	return path[0] ? lv__sprintf("%s/%s", a->prefix, path) : lv__strdup(a->prefix);
}

/* ---- ops ---- */

static int az_get(az *a, const char *path, bool ranged, uint64_t offset, uint64_t len, lv_buf *out,
		  lv_error *err)
{
	char range[64] = "";
	if (ranged) {
		uint64_t last;
		if (__builtin_add_overflow(offset, len - 1, &last))
			snprintf(range, sizeof range, "bytes=%llu-", (unsigned long long)offset);
		else
			snprintf(range, sizeof range, "bytes=%llu-%llu", (unsigned long long)offset,
				 (unsigned long long)last);
	}
	char *blob = full_blob(a, path);
	if (!blob)
		return lv__err(err, LV_ENOMEM, "out of memory");
	azreq q = { "GET", "GET", path, blob, NULL, 0, NULL, 0, false, false, ranged ? range : NULL,
		    lv__http_get_limits(a->http)->max_object, 0, ranged, offset, len };
	lv_http_resp r;
	int rc = az_perform(a, &q, &r, err);
	if (rc == 0) {
		if (r.status == 206 && ranged) {
			if (r.has_range && r.range_start != offset)
				rc = lv__err(err, LV_ECORRUPT,
					     "Azure GET %s: asked for bytes from %llu, the server sent bytes from %llu",
					     path, (unsigned long long)offset, (unsigned long long)r.range_start);
			else if ((rc = lv_dbuf_take(&r.body, out)) == 0 && out->size > len)
				out->size = len;
		} else if (r.status == 200) {
			if (ranged) { /* Range ignored: the body starts at byte 0 */
				size_t skip = r.body.len < offset ? r.body.len : (size_t)offset;
				if (skip)
					memmove(r.body.ptr, r.body.ptr + skip, r.body.len - skip);
				r.body.len -= skip;
				if (r.body.len > len)
					r.body.len = (size_t)len;
			}
			rc = lv_dbuf_take(&r.body, out);
		} else if (r.status == 416 && ranged) { /* the range starts past the end */
			lv_dbuf_dispose(&r.body);
			lv_dbuf_init(&r.body, 0);
			rc = lv_dbuf_take(&r.body, out);
		} else {
			rc = status_error("GET", path, &r, err);
		}
		if (rc == LV_ENOMEM)
			rc = lv__err(err, rc, "Azure GET %s: out of memory", path);
	}
	lv__http_resp_dispose(&r);
	free(blob);
	return rc;
}

static int az_read(void *impl, const char *path, lv_buf *out, lv_error *err)
{
	return az_get(impl, path, false, 0, 0, out, err);
}

static int az_read_range(void *impl, const char *path, uint64_t offset, uint64_t len, lv_buf *out,
			 lv_error *err)
{
	if (len == 0) {
		out->ptr = lv__malloc(1);
		out->size = 0;
		return out->ptr ? 0 : lv__err(err, LV_ENOMEM, "out of memory");
	}
	return az_get(impl, path, true, offset, len, out, err);
}

/* HEAD, PUT or DELETE of one blob; the answer is left in *r. */
static int blob_request(az *a, const char *method, const char *path, const void *data, size_t n,
			bool create, lv_http_resp *r, lv_error *err)
{
	memset(r, 0, sizeof *r);
	char *blob = full_blob(a, path);
	if (!blob)
		return lv__err(err, LV_ENOMEM, "out of memory");
	bool put = !strcmp(method, "PUT");
	azreq q = { method, method, path, blob, NULL, 0, data, n, put, create, NULL, 0,
		    AZ_SMALL_BODY_MAX, false, 0, 0 };
	int rc = az_perform(a, &q, r, err);
	free(blob);
	return rc;
}

static int az_head(void *impl, const char *path, uint64_t *size, int64_t *mtime, lv_error *err)
{
	lv_http_resp r;
	int rc = blob_request(impl, "HEAD", path, NULL, 0, false, &r, err);
	if (rc == 0 && r.status != 200)
		rc = status_error("HEAD", path, &r, err);
	if (rc == 0 && !r.has_length)
		rc = lv__err(err, LV_ECORRUPT, "Azure HEAD %s: no Content-Length in the answer", path);
	if (rc == 0) {
		if (size)
			*size = r.content_length;
		if (mtime)
			*mtime = r.last_modified_ms;
	}
	lv__http_resp_dispose(&r);
	return rc;
}

static int az_put(az *a, const char *path, const void *data, size_t n, bool create, lv_error *err)
{
	lv_http_resp r;
	int rc = blob_request(a, "PUT", path, data ? data : "", n, create, &r, err);
	if (rc == 0 && r.status != 201 && r.status != 200)
		rc = create && (r.status == 409 || r.status == 412)
			     ? lv__err(err, LV_EEXISTS, "Azure PUT %s: already exists", path)
			     : status_error("PUT", path, &r, err);
	lv__http_resp_dispose(&r);
	return rc;
}

static int az_write(void *impl, const char *path, const void *data, size_t n, lv_error *err)
{
	return az_put(impl, path, data, n, false, err);
}

static int az_create(void *impl, const char *path, const void *data, size_t n, lv_error *err)
{
	return az_put(impl, path, data, n, true, err);
}

static int az_del(void *impl, const char *path, lv_error *err)
{
	lv_http_resp r;
	int rc = blob_request(impl, "DELETE", path, NULL, 0, false, &r, err);
	if (rc == 0 && r.status != 202 && r.status != 200)
		rc = status_error("DELETE", path, &r, err);
	lv__http_resp_dispose(&r);
	return rc;
}

typedef struct deljob {
	az *a;
	const char *const *paths;
	int *rcs;
} deljob;

static void del_one(size_t i, void *arg)
{
	deljob *j = arg;
	lv_error e = { 0 };
	j->rcs[i] = az_del(j->a, j->paths[i], &e);
}

static int az_del_many(void *impl, const char *const *paths, size_t n, int *rcs, lv_error *err)
{
	deljob j = { impl, paths, rcs };
	lv_parallel_for(n, AZ_DELETE_THREADS, del_one, &j);
	return 0;
}

/* ---- List Blobs ---- */

static int list_page(az *a, const char *kprefix, bool recursive, const char *marker, const char *dname,
		     const char *what, lv_list_page *pg, lv_error *err)
{
	lv_az_param ps[6];
	size_t np = 0;
	ps[np++] = (lv_az_param){ "comp", "list" };
	if (!recursive)
		ps[np++] = (lv_az_param){ "delimiter", "/" };
	if (marker)
		ps[np++] = (lv_az_param){ "marker", marker };
	ps[np++] = (lv_az_param){ "maxresults", "5000" };
	ps[np++] = (lv_az_param){ "prefix", kprefix };
	ps[np++] = (lv_az_param){ "restype", "container" };
	azreq q = { "GET", "LIST", dname, NULL, ps, np, NULL, 0, false, false, NULL,
		    AZ_LIST_BODY_MAX, 0, false, 0, 0 };
	lv_http_resp r;
	int rc = az_perform(a, &q, &r, err);
	if (rc == 0 && r.status != 200)
		rc = status_error("LIST", dname, &r, err);
	if (rc == 0)
		rc = lv__azxml_parse_list((const char *)r.body.ptr, r.body.len, what, pg, err);
	lv__http_resp_dispose(&r);
	return rc;
}

static int az_list(void *impl, const char *dir, bool recursive, lv_list_cb cb, void *payload,
		   lv_error *err)
{
	az *a = impl;
	char *kprefix; /* blob name prefix to list: "<prefix>/<dir>/" */
	if (a->prefix[0])
		kprefix = dir[0] ? lv__sprintf("%s/%s/", a->prefix, dir) : lv__sprintf("%s/", a->prefix);
	else
		kprefix = dir[0] ? lv__sprintf("%s/", dir) : lv__strdup("");
	if (!kprefix)
		return lv__err(err, LV_ENOMEM, "out of memory");
	lv_lister l;
	lv__lister_init(&l, kprefix, a->prefix[0] ? strlen(a->prefix) + 1 : 0, recursive);
	const char *dname = dir[0] ? dir : "/";
	char what[300];
	snprintf(what, sizeof what, "Azure LIST %.256s", dname);
	long max_pages = lv__http_get_limits(a->http)->list_max_pages;
	char *marker = NULL;
	int rc = 0;
	for (long page = 0;; page++) {
		if (page >= max_pages) {
			rc = lv__err(err, LV_ELIMIT,
				     "%s: more than %ld pages (LANCEVER_S3_LIST_MAX_PAGES raises the limit)",
				     what, max_pages);
			break;
		}
		lv_list_page pg;
		memset(&pg, 0, sizeof pg);
		rc = list_page(a, kprefix, recursive, marker, dname, what, &pg, err);
		if (rc == 0)
			rc = lv__lister_page(&l, &pg, what, err);
		free(marker);
		marker = pg.next_token;
		pg.next_token = NULL;
		bool more = pg.truncated;
		lv__list_page_dispose(&pg);
		if (rc < 0 || !more || !marker)
			break;
		if ((rc = lv__lister_token(&l, marker, what, err)) < 0)
			break;
	}
	if (rc == 0)
		rc = lv__lister_emit(&l, cb, payload);
	lv__lister_dispose(&l);
	free(marker);
	free(kprefix);
	return rc;
}

void lv__az_close(void *impl)
{
	az *a = impl;
	if (!a)
		return;
	memset(a->key, 0, sizeof a->key);
	if (a->sas)
		memset(a->sas, 0, strlen(a->sas));
	lv__http_free(a->http);
	free(a->account);
	free(a->container);
	free(a->prefix);
	free(a->service);
	free(a->sas);
	free(a->cred_source);
	free(a);
}

static void az_credential_source(void *impl, char *buf, size_t cap)
{
	az *a = impl;
	snprintf(buf, cap, "%s", a->cred_source ? a->cred_source : "none");
}

const lv_storage_ops lv__az_ops = {
	.version = LV_STORAGE_OPS_VERSION,
	.list = az_list,
	.read = az_read,
	.read_range = az_read_range,
	.head = az_head,
	.write = az_write,
	.create = az_create,
	.del = az_del,
	.close = lv__az_close,
	.del_many = az_del_many,
	.flags = LV_STORAGE_FLAG_REMOTE,
	.credential_source = az_credential_source,
};
