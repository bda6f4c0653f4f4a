/*
 * Azure Storage Shared Key signing: the string-to-sign of a request and its
 * HMAC-SHA256, as the Blob service (and Azurite) compute them for versions
 * 2015-02-21 and later (an empty Content-Length line for a body of 0 bytes).
 * Pure: no I/O, the clock is the caller's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "azure/az_int.h"
#include "util/util.h"

char *lv__az_encode(const char *s, bool keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s);
	char *out = lv__malloc(n * 3 + 1);
	if (!out)
		return NULL;
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
			out[j++] = (char)c;
		} else {
			out[j++] = '%';
			out[j++] = hex[c >> 4];
			out[j++] = hex[c & 15];
		}
	}
	out[j] = 0;
	return out;
}

char *lv__az_string_to_sign(const char *method, const char *account, const char *path,
			    const lv__az_param *params, size_t nparams, size_t content_length,
			    const char *content_type, bool if_none_match, const char *const *xms,
			    size_t nxms)
{
	lv__dbuf b;
	lv__dbuf_init(&b, 0);
	char len[32] = "";
	if (content_length)
		snprintf(len, sizeof len, "%zu", content_length);
	/* VERB, Content-Encoding, -Language, -Length, -MD5, -Type, Date, If-Modified-Since,
	 * If-Match, If-None-Match, If-Unmodified-Since, Range */
	lv__dbuf_printf(&b, "%s\n\n\n%s\n\n%s\n\n\n\n%s\n\n\n", method, len,
		       content_type ? content_type : "", if_none_match ? "*" : "");
	for (size_t i = 0; i < nxms; i++)
		lv__dbuf_printf(&b, "%s\n", xms[i]);
	lv__dbuf_printf(&b, "/%s%s", account, path);
	for (size_t i = 0; i < nparams; i++)
		lv__dbuf_printf(&b, "\n%s:%s", params[i].name, params[i].value);
	return lv__dbuf_take_str(&b);
}

void lv__az_sign(const lv__crypto_fns *k, const uint8_t *key, size_t keylen, const char *sts,
		 char out[64])
{
	uint8_t mac[32];
	unsigned len = 0;
	k->hmac(k->sha256(), key, (int)keylen, (const uint8_t *)sts, strlen(sts), mac, &len);
	k->encode_block((unsigned char *)out, mac, 32);
	memset(mac, 0, sizeof mac);
}
