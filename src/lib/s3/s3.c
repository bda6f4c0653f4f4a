/*
 * S3 backend: our own SigV4 signer over the shared HTTP client
 * (objstore/http.h: handle pool, retries inside a deadline, capped bodies),
 * serving the storage ops written once in objstore/objstore.h with one request
 * per object and ListObjectsV2 pages; DeleteObjects for many keys.  The backend is thread-safe: every
 * request signs itself, at each attempt, with the credentials of the moment
 * (aws/creds.h refreshes temporary ones before they expire, and once more when
 * S3 says a token has expired).  Credentials never appear in messages.
 * Opening (URI, options, environment, profiles) is s3open.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "objstore/xml.h"
#include "s3/s3_int.h"
#include "aws/sigv4.h"
#include "util/util.h"

/* Bodies lancever keeps: error bodies (for the code in messages) and the 2xx bodies of
 * PUT/DELETE/HEAD are cut after 64 KiB (objstore/http.h's default); a ListObjectsV2 page
 * or DeleteObjects result over 32 MiB is refused (1000 keys of 1 KiB, escaped, take ~6 MiB). */
#define S3_LIST_BODY_MAX ((uint64_t)32 << 20)

/* ---- one S3 request ---- */

typedef struct s3req {
	lv__objreq o;             /* method, what, name, key ("" for bucket-level), body, range, limits */
	const char *query;       /* canonical query (sorted, encoded) or "" */
	const char *content_type;
	const char *content_md5; /* base64, or NULL */
} s3req;

typedef struct sign_ctx {
	s3 *s;
	const s3req *q;
	const char *curi;     /* canonical (encoded) URI path */
	char payload[65];     /* hex SHA-256 of the body, or "UNSIGNED-PAYLOAD" */
	bool force_refresh;   /* S3 said the token expired: fetch new credentials first */
} sign_ctx;

static int s3_sign(void *ctx, const lv__http_req *hq, lv__http_hdrs *h, lv_error *err)
{
	sign_ctx *c = ctx;
	const s3req *q = c->q;
	lv__aws_creds *cr = NULL;
	LV_TRY(lv__aws_chain_get(c->s->creds, c->force_refresh, &cr, err));
	c->force_refresh = false;
	int rc = 0;
	if (cr) {
		time_t now = time(NULL);
		struct tm tm;
		gmtime_r(&now, &tm);
		char amz[20];
		strftime(amz, sizeof amz, "%Y%m%dT%H%M%SZ", &tm);
		lv__sigv4_header sh[4];
		size_t nh = 0;
		sh[nh++] = (lv__sigv4_header){ "host", c->s->host };
		sh[nh++] = (lv__sigv4_header){ "x-amz-content-sha256", c->payload };
		sh[nh++] = (lv__sigv4_header){ "x-amz-date", amz };
		if (cr->token)
			sh[nh++] = (lv__sigv4_header){ "x-amz-security-token", cr->token };
		lv__sigv4_request sr = { q->o.method, c->curi, q->query, sh, nh, c->payload, amz,
					c->s->region, "s3", cr->akid, cr->secret };
		char auth[1024];
		if (lv__sigv4_authorization(&sr, auth, sizeof auth) < 0)
			rc = lv__err(err, LV_EINVALID, "S3: could not sign the request");
		else
			rc = lv__http_hdr(h, "Authorization: %s", auth);
		memset(auth, 0, sizeof auth);
		if (rc == 0)
			rc = lv__http_hdr(h, "x-amz-date: %s", amz);
		if (rc == 0 && cr->token)
			rc = lv__http_hdr(h, "x-amz-security-token: %s", cr->token);
		lv__aws_creds_release(cr);
	}
	if (rc == 0)
		rc = lv__http_hdr(h, "x-amz-content-sha256: %s", c->payload);
	if (rc == 0 && q->o.range)
		rc = lv__http_hdr(h, "Range: %s", q->o.range);
	if (rc == 0 && q->o.create)
		rc = lv__http_hdr(h, "If-None-Match: *");
	if (rc == 0 && q->content_type)
		rc = lv__http_hdr(h, "Content-Type: %s", q->content_type);
	if (rc == 0 && q->content_md5)
		rc = lv__http_hdr(h, "Content-MD5: %s", q->content_md5);
	return rc < 0 && rc != LV_ENOMEM ? rc : rc == LV_ENOMEM ? lv__err(err, rc, "out of memory") : 0;
}

/* The S3 error code in an XML error body (<Code>..</Code>), for messages. */
static void code_of(const lv__http_resp *r, char *out, size_t cap)
{
	lv__s3xml_error_code((const char *)r->body.ptr, r->body.len, out, cap);
}

static bool slow_down(const lv__http_resp *r)
{
	return r->status == 400 && r->body.ptr && memmem(r->body.ptr, r->body.len, "SlowDown", 8);
}

/* An answer saying the session token has expired: worth one retry with fresh credentials. */
static bool token_expired(const lv__http_resp *r)
{
	if (r->status != 400 && r->status != 403)
		return false;
	char code[64];
	code_of(r, code, sizeof code);
	return !strcmp(code, "ExpiredToken") || !strcmp(code, "TokenRefreshRequired") ||
	       !strcmp(code, "RequestExpired");
}

/* Performs q (with retries).  0 with r->status set; the caller disposes r (also on failure). */
static int s3_perform(s3 *s, const s3req *q, lv__http_resp *r, lv_error *err)
{
	memset(r, 0, sizeof *r);
	const char *key = q->o.key;
	char *ekey = lv__aws_uri_encode(key, strlen(key), 1);
	char *curi = NULL, *url = NULL;
	if (ekey)
		curi = s->path_style ? lv__sprintf("/%s%s%s", s->bucket, key[0] ? "/" : "", ekey)
				     : lv__sprintf("/%s", ekey);
	if (curi)
		url = lv__sprintf("%s%s%s%s", s->endpoint, curi, q->query[0] ? "?" : "", q->query);
	if (!url) {
		lv__free(ekey);
		lv__free(curi);
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	sign_ctx c = { s, q, curi, "", false };
	if (s->unsigned_payload)
		snprintf(c.payload, sizeof c.payload, "UNSIGNED-PAYLOAD");
	else
		lv__sha256_hex(q->o.data ? q->o.data : "", q->o.n, c.payload);
	lv__http_req hq;
	lv__obj_http_req(&s->o, &q->o, url, &hq);
	hq.sign = s3_sign;
	hq.ctx = &c;
	hq.retry_on = slow_down;
	int rc = lv__http_perform(s->o.http, &hq, r, err);
	if (rc == 0 && token_expired(r)) {
		c.force_refresh = true;
		lv__http_resp_dispose(r);
		rc = lv__http_perform(s->o.http, &hq, r, err);
	}
	lv__free(url);
	lv__free(curi);
	lv__free(ekey);
	return rc;
}

/* ---- ops (the rest are objstore.h's) ---- */

static int s3_object(void *impl, const lv__objreq *o, lv__http_resp *r, lv_error *err)
{
	s3req q = { *o, "", o->data ? "application/octet-stream" : NULL, NULL };
	return s3_perform(impl, &q, r, err);
}

static int s3_del(void *impl, const char *path, lv_error *err)
{
	/* S3 deletes of absent keys succeed silently; HEAD first keeps LV_ENOTFOUND meaningful. */
	LV_TRY(lv__obj_head(impl, path, NULL, NULL, err));
	return lv__obj_delete(impl, path, err);
}

/* ---- DeleteObjects ---- */

static int xml_escape(lv__dbuf *b, const char *s)
{
	for (; *s; s++) {
		int rc;
		switch (*s) {
		case '&': rc = lv__dbuf_adds(b, "&amp;"); break;
		case '<': rc = lv__dbuf_adds(b, "&lt;"); break;
		case '>': rc = lv__dbuf_adds(b, "&gt;"); break;
		case '"': rc = lv__dbuf_adds(b, "&quot;"); break;
		case '\'': rc = lv__dbuf_adds(b, "&apos;"); break;
		default: rc = lv__dbuf_addc(b, (uint8_t)*s); break;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* One DeleteObjects request for up to 1000 keys; rcs[i] gets each key's result. */
static int delete_batch(s3 *s, const char *const *paths, size_t n, int *rcs, lv_error *err)
{
	char **keys = lv__calloc(n, sizeof *keys);
	lv__dbuf body;
	lv__dbuf_init(&body, 0);
	int rc = keys ? 0 : LV_ENOMEM;
	lv__dbuf_adds(&body, "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete><Quiet>true</Quiet>");
	for (size_t i = 0; i < n && rc == 0; i++) {
		rcs[i] = 0;
		if (!(keys[i] = lv__obj_key(&s->o, paths[i])))
			rc = LV_ENOMEM;
		else if (lv__dbuf_adds(&body, "<Object><Key>") < 0 || xml_escape(&body, keys[i]) < 0 ||
			 lv__dbuf_adds(&body, "</Key></Object>") < 0)
			rc = LV_ENOMEM;
	}
	if (rc == 0 && lv__dbuf_adds(&body, "</Delete>") < 0)
		rc = LV_ENOMEM;
	if (rc < 0) {
		rc = lv__err(err, LV_ENOMEM, "out of memory");
		goto out;
	}
	uint8_t md5[16];
	unsigned ml = 0;
	const lv__crypto_fns *k = lv__http_crypto(s->o.http);
	k->digest(body.ptr, body.len, md5, &ml, k->md5(), NULL);
	char md5b64[32];
	k->encode_block((unsigned char *)md5b64, md5, 16);
	lv__http_resp r;
	s3req q = { { .method = "POST", .what = "DELETE", .path = paths[0], .key = "", .data = body.ptr,
		      .n = body.len, .max_ok = S3_LIST_BODY_MAX },
		    "delete=", "application/xml", md5b64 };
	rc = s3_perform(s, &q, &r, err);
	if (rc == 0 && r.status != 200)
		rc = lv__obj_status_error(&s->o, "DELETE", paths[0], &r, err);
	if (rc == 0)
		rc = lv__s3xml_parse_delete((const char *)r.body.ptr, r.body.len,
					    (const char *const *)keys, n, rcs, NULL, err);
	lv__http_resp_dispose(&r);
out:
	for (size_t i = 0; keys && i < n; i++)
		lv__free(keys[i]);
	lv__free(keys);
	lv__dbuf_dispose(&body);
	return rc;
}

static int s3_del_many(void *impl, const char *const *paths, size_t n, int *rcs, lv_error *err)
{
	s3 *s = impl;
	if (!s->bulk_delete) { /* aws_disable_bulk_delete: one DELETE per key */
		for (size_t i = 0; i < n; i++) {
			lv_error e = { 0 };
			rcs[i] = s3_del(s, paths[i], &e);
			if (rcs[i] == LV_ENOTFOUND)
				rcs[i] = 0;
		}
		return 0;
	}
	for (size_t off = 0; off < n; off += 1000) {
		size_t k = n - off < 1000 ? n - off : 1000;
		LV_TRY(delete_batch(s, paths + off, k, rcs + off, err));
		/* Partial failures: retry just those keys once, one by one. */
		for (size_t i = off; i < off + k; i++)
			if (rcs[i] == LV_EIO) {
				lv_error e = { 0 };
				int r1 = delete_batch(s, paths + i, 1, rcs + i, &e);
				if (r1 < 0)
					rcs[i] = r1;
			}
	}
	return 0;
}

/* ---- ListObjectsV2 ---- */

static int s3_list_page(void *impl, const char *kprefix, bool recursive, const char *token,
			const char *dname, const char *what, lv__list_page *pg, lv_error *err)
{
	s3 *s = impl;
	/* canonical query: parameters sorted by name, values AWS-encoded */
	char *ep = lv__aws_uri_encode(kprefix, strlen(kprefix), 0);
	char *et = token ? lv__aws_uri_encode(token, strlen(token), 0) : NULL;
	char *query = lv__sprintf("%s%s%s%slist-type=2&prefix=%s", et ? "continuation-token=" : "",
				  et ? et : "", et ? "&" : "", recursive ? "" : "delimiter=%2F&",
				  ep ? ep : "");
	lv__free(ep);
	lv__free(et);
	if (!query)
		return lv__err(err, LV_ENOMEM, "out of memory");
	lv__http_resp r;
	s3req q = { { .method = "GET", .what = "LIST", .path = dname, .key = "", .max_ok = S3_LIST_BODY_MAX },
		    query, NULL, NULL };
	int rc = s3_perform(s, &q, &r, err);
	lv__free(query);
	if (rc == 0 && r.status != 200)
		rc = lv__obj_status_error(&s->o, "LIST", dname, &r, err);
	if (rc == 0)
		rc = lv__s3xml_parse_list((const char *)r.body.ptr, r.body.len, what, pg, err);
	lv__http_resp_dispose(&r);
	return rc;
}

void lv__s3_close(void *impl)
{
	s3 *s = impl;
	if (!s)
		return;
	lv__http_free(s->o.http);
	lv__aws_chain_free(s->creds);
	lv__free(s->bucket);
	lv__free(s->o.prefix);
	lv__free(s->endpoint);
	lv__free(s->host);
	lv__free(s->region);
	lv__free(s);
}

static void s3_credential_source(void *impl, char *buf, size_t cap)
{
	s3 *s = impl;
	lv__aws_chain_describe(s->creds, buf, cap);
}

const lv__objsvc lv__s3_svc = {
	.name = "S3",
	.put_ok = 200,
	.del_ok = 204,
	.exists_on_412 = true,
	.code_of = code_of,
	.object = s3_object,
	.list_page = s3_list_page,
};

const lv_storage_ops lv__s3_ops = {
	LV__OBJSTORE_OPS,
	.del = s3_del,
	.close = lv__s3_close,
	.del_many = s3_del_many,
	.credential_source = s3_credential_source,
};
