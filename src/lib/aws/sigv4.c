#include "aws/sigv4.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objstore/dl.h"
#include "util/util.h"

static void hex(const uint8_t *b, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[b[i] >> 4];
		out[2 * i + 1] = d[b[i] & 15];
	}
	out[2 * n] = 0;
}

void lv__sha256_hex(const void *data, size_t n, char out[65])
{
	uint8_t md[32] = { 0 };
	unsigned len = 0;
	/* Loaded by the S3 backend's open; an all-zero digest if it could not be (no request
	 * is ever signed then). */
	const lv__crypto_fns *k = lv__crypto_api(NULL);
	if (k)
		k->digest(data, n, md, &len, k->sha256(), NULL);
	hex(md, 32, out);
}

static void hmac(const uint8_t *key, size_t klen, const char *msg, uint8_t out[32])
{
	unsigned len = 32;
	const lv__crypto_fns *k = lv__crypto_api(NULL);
	if (k)
		k->hmac(k->sha256(), key, (int)klen, (const uint8_t *)msg, strlen(msg), out, &len);
	else
		memset(out, 0, 32);
}

void lv__sigv4_signing_key(const char *secret, const char *date8, const char *region,
			  const char *service, uint8_t out[32])
{
	char k[256];
	snprintf(k, sizeof k, "AWS4%s", secret);
	uint8_t a[32], b[32], c[32];
	hmac((const uint8_t *)k, strlen(k), date8, a);
	hmac(a, 32, region, b);
	hmac(b, 32, service, c);
	hmac(c, 32, "aws4_request", out);
	memset(k, 0, sizeof k);
}

char *lv__aws_uri_encode(const char *s, size_t n, int keep_slash)
{
	lv__dbuf b;
	lv__dbuf_init(&b, 0);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '~' || (c == '/' && keep_slash))
			lv__dbuf_addc(&b, c);
		else
			lv__dbuf_printf(&b, "%%%02X", c);
	}
	return lv__dbuf_take_str(&b);
}

int lv__sigv4_authorization(const lv__sigv4_request *r, char *out, size_t cap)
{
	lv__dbuf cr, signed_h;
	lv__dbuf_init(&cr, 0);
	lv__dbuf_init(&signed_h, 0);
	lv__dbuf_printf(&cr, "%s\n%s\n%s\n", r->method, r->canonical_uri, r->canonical_query);
	for (size_t i = 0; i < r->nheaders; i++) {
		lv__dbuf_printf(&cr, "%s:%s\n", r->headers[i].name, r->headers[i].value);
		lv__dbuf_printf(&signed_h, "%s%s", i ? ";" : "", r->headers[i].name);
	}
	lv__dbuf_printf(&cr, "\n%s\n%s", signed_h.ptr ? (char *)signed_h.ptr : "", r->payload_sha256);
	int rc = -1;
	if (cr.oom || signed_h.oom || strlen(r->amz_date) != 16)
		goto out;
	char date8[9];
	memcpy(date8, r->amz_date, 8);
	date8[8] = 0;
	char crhash[65];
	lv__sha256_hex(cr.ptr, cr.len, crhash);
	char sts[512];
	snprintf(sts, sizeof sts, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s", r->amz_date, date8,
		 r->region, r->service, crhash);
	uint8_t key[32], sig[32];
	lv__sigv4_signing_key(r->secret_key, date8, r->region, r->service, key);
	hmac(key, 32, sts, sig);
	memset(key, 0, sizeof key);
	char sighex[65];
	hex(sig, 32, sighex);
	int n = snprintf(out, cap,
			 "AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/aws4_request, SignedHeaders=%s, Signature=%s",
			 r->access_key, date8, r->region, r->service, (char *)signed_h.ptr, sighex);
	rc = n > 0 && (size_t)n < cap ? 0 : -1;
out:
	lv__dbuf_dispose(&cr);
	lv__dbuf_dispose(&signed_h);
	return rc;
}
