/*
 * libcurl and libcrypto, loaded on first use.
 *
 * Only the object-store backends (S3, Azure) and their credential sources
 * need them, and linking them costs every process ~6 ms of dynamic loading and
 * relocation (libcurl pulls in some thirty libraries: GnuTLS, Kerberos, LDAP,
 * ...), which dwarfs `lancever versions` on a local dataset.  So the library
 * does not link them: objstore/http.c dlopen()s them by soname the first time
 * an s3:// or az:// store is opened and calls them through these tables.  The headers are still the system's, so the types and
 * constants are checked at compile time.
 */
#ifndef LV_OBJSTORE_DL_H
#define LV_OBJSTORE_DL_H

#include <curl/curl.h>
#include <openssl/evp.h>

#include "lancever/common.h"

typedef struct lv__curl_fns {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	void (*easy_cleanup)(CURL *c);
	void (*easy_reset)(CURL *c);
	CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	CURLcode (*easy_perform)(CURL *c);
	const char *(*easy_strerror)(CURLcode code);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
} lv__curl_fns;

typedef struct lv__crypto_fns {
	int (*digest)(const void *data, size_t n, unsigned char *md, unsigned int *len,
		      const EVP_MD *type, ENGINE *impl);
	const EVP_MD *(*sha256)(void);
	const EVP_MD *(*md5)(void);
	int (*encode_block)(unsigned char *t, const unsigned char *f, int n);
	unsigned char *(*hmac)(const EVP_MD *md, const void *key, int klen, const unsigned char *d,
			       size_t n, unsigned char *out, unsigned int *olen);
	int (*decode_block)(unsigned char *t, const unsigned char *f, int n);
} lv__crypto_fns;

/* The tables, loaded once (thread-safe); NULL and LV_EUNSUPPORTED in err when a
 * library or symbol is missing.  curl_global_init has been called on success. */
const lv__curl_fns *lv__curl_api(lv_error *err);
const lv__crypto_fns *lv__crypto_api(lv_error *err);

#endif
