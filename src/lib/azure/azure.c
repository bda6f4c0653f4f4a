/*
 * Azure Blob Storage backend: Shared Key (or SAS) signed requests over the
 * shared HTTP client (objstore/http.h: retries inside a deadline, capped
 * bodies) for the storage ops written once in objstore/objstore.h, which
 * this file serves with one request per blob (ranges as x-ms-range, create-
 * if-absent as Put Blob with If-None-Match: *) and List Blobs pages; deletes
 * of many blobs are parallel Delete Blob requests (Blob Batch is not used).
 * Credentials and SAS tokens never reach a message.  Opening is azopen.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "azure/az_int.h"
#include "objstore/xml.h"
#include "util/util.h"

#define AZ_LIST_BODY_MAX ((uint64_t)32 << 20)
#define AZ_DELETE_THREADS 16

typedef struct azreq {
	lv__objreq o;                      /* key: the full blob name (decoded); NULL = the container */
	const lv__az_param *params;        /* sorted by name */
	size_t nparams;
	bool put_blob;
} azreq;

typedef struct sign_ctx {
	az *a;
	const azreq *q;
	const char *path; /* URL path as sent */
} sign_ctx;

static int az_sign(void *ctx, const lv__http_req *hq, lv__http_hdrs *h, lv_error *err)
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
	if (q->o.range) {
		snprintf(xr, sizeof xr, "x-ms-range:%s", q->o.range);
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
	if (rc == 0 && q->o.create)
		rc = lv__http_hdr(h, "If-None-Match: *");
	if (rc == 0 && c->a->keylen) {
		char *sts = lv__az_string_to_sign(q->o.method, c->a->account, c->path, q->params, q->nparams,
						  q->o.n, ctype, q->o.create,
						  (const char *const *)xms, nx);
		if (!sts)
			return lv__err(err, LV_ENOMEM, "out of memory");
		char sig[64];
		lv__az_sign(lv__http_crypto(c->a->o.http), c->a->key, c->a->keylen, sts, sig);
		lv__free(sts);
		rc = lv__http_hdr(h, "Authorization: SharedKey %s:%s", c->a->account, sig);
	}
	return rc < 0 ? lv__err(err, rc, "out of memory") : 0;
}

static void code_of(const lv__http_resp *r, char *out, size_t cap)
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
	lv__free(eb);
	return p;
}

static char *query_of(const az *a, const azreq *q)
{
	lv__dbuf b;
	lv__dbuf_init(&b, 0);
	for (size_t i = 0; i < q->nparams; i++) {
		char *v = lv__az_encode(q->params[i].value, false);
		if (!v) {
			lv__dbuf_dispose(&b);
			return NULL;
		}
		lv__dbuf_printf(&b, "%s%s=%s", i ? "&" : "", q->params[i].name, v);
		lv__free(v);
	}
	if (a->sas)
		lv__dbuf_printf(&b, "%s%s", q->nparams ? "&" : "", a->sas);
	lv__dbuf_addc(&b, 0);
	if (b.oom) {
		lv__dbuf_dispose(&b);
		return NULL;
	}
	return (char *)b.ptr;
}

/* Performs q with retries; 0 with r->status set (the caller disposes r, also on failure). */
static int az_perform(az *a, const azreq *q, lv__http_resp *r, lv_error *err)
{
	memset(r, 0, sizeof *r);
	char *path = url_path(a, q->o.key);
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
		lv__http_req hq;
		lv__obj_http_req(&a->o, &q->o, url, &hq);
		hq.sign = az_sign;
		hq.ctx = &c;
		rc = lv__http_perform(a->o.http, &hq, r, err);
	}
	lv__free_secret(url); /* it may hold a SAS */
	lv__free_secret(query);
	lv__free(path);
	return rc;
}

/* ---- ops (the rest are objstore.h's) ---- */

static int az_object(void *impl, const lv__objreq *o, lv__http_resp *r, lv_error *err)
{
	azreq q = { *o, NULL, 0, !strcmp(o->method, "PUT") };
	return az_perform(impl, &q, r, err);
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
	j->rcs[i] = lv__obj_delete(j->a, j->paths[i], &e);
}

static int az_del_many(void *impl, const char *const *paths, size_t n, int *rcs, lv_error *err)
{
	deljob j = { impl, paths, rcs };
	lv__parallel_for(n, AZ_DELETE_THREADS, del_one, &j);
	return 0;
}

/* ---- List Blobs ---- */

static int az_list_page(void *impl, const char *kprefix, bool recursive, const char *marker,
			const char *dname, const char *what, lv__list_page *pg, lv_error *err)
{
	az *a = impl;
	lv__az_param ps[6];
	size_t np = 0;
	ps[np++] = (lv__az_param){ "comp", "list" };
	if (!recursive)
		ps[np++] = (lv__az_param){ "delimiter", "/" };
	if (marker)
		ps[np++] = (lv__az_param){ "marker", marker };
	ps[np++] = (lv__az_param){ "maxresults", "5000" };
	ps[np++] = (lv__az_param){ "prefix", kprefix };
	ps[np++] = (lv__az_param){ "restype", "container" };
	azreq q = { { .method = "GET", .what = "LIST", .path = dname, .max_ok = AZ_LIST_BODY_MAX },
		    ps, np, false };
	lv__http_resp r;
	int rc = az_perform(a, &q, &r, err);
	if (rc == 0 && r.status != 200)
		rc = lv__obj_status_error(&a->o, "LIST", dname, &r, err);
	if (rc == 0)
		rc = lv__azxml_parse_list((const char *)r.body.ptr, r.body.len, what, pg, err);
	lv__http_resp_dispose(&r);
	return rc;
}

void lv__az_close(void *impl)
{
	az *a = impl;
	if (!a)
		return;
	memset(a->key, 0, sizeof a->key);
	lv__http_free(a->o.http);
	lv__free(a->account);
	lv__free(a->container);
	lv__free(a->o.prefix);
	lv__free(a->service);
	lv__free_secret(a->sas);
	lv__free(a->cred_source);
	lv__free(a);
}

static void az_credential_source(void *impl, char *buf, size_t cap)
{
	az *a = impl;
	snprintf(buf, cap, "%s", a->cred_source ? a->cred_source : "none");
}

const lv__objsvc lv__az_svc = {
	.name = "Azure",
	.put_ok = 201,
	.del_ok = 202,
	.code_of = code_of,
	.object = az_object,
	.list_page = az_list_page,
};

const lv_storage_ops lv__az_ops = {
	LV__OBJSTORE_OPS,
	.del = lv__obj_delete,
	.close = lv__az_close,
	.del_many = az_del_many,
	.credential_source = az_credential_source,
};
