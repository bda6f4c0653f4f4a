/*
 * The Azure Blob Storage backend's handle, shared by azure.c (operations),
 * azopen.c (the address, options, environment, connection strings) and azsign.c
 * (Shared Key signing, pure).
 */
#ifndef LV_AZ_INT_H
#define LV_AZ_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "lancever/sys/storage.h"
#include "objstore/objstore.h"

#define LV_AZ_VERSION "2021-08-06" /* x-ms-version: If-None-Match on Put Blob, List Blobs v2 */

typedef struct az {
	lv__objstore o;     /* first: prefix, root ("az://container/prefix"), HTTP client */
	char *account;
	char *container;
	char *service;     /* scheme://host[:port][/path]: blob URLs are service/container/blob */
	uint8_t key[64];   /* Shared Key: the decoded account key */
	size_t keylen;     /* 0 = no Shared Key */
	char *sas;         /* SAS query (without '?'), or NULL */
	char *cred_source; /* which source supplied the credentials (never a secret) */
} az;

extern const lv_storage_ops lv__az_ops;
extern const lv__objsvc lv__az_svc;
void lv__az_close(void *impl);

/* One query parameter: name and raw (unencoded) value. */
typedef struct lv__az_param {
	const char *name, *value;
} lv__az_param;

/*
 * The Shared Key string-to-sign of a request (azsign.c).  `path` is the URL path as
 * sent (encoded, starting with '/'), params sorted by name, xms the x-ms-* headers
 * as "name:value" sorted by name.  Returns a malloc'ed string or NULL (out of memory).
 */
char *lv__az_string_to_sign(const char *method, const char *account, const char *path,
			    const lv__az_param *params, size_t nparams, size_t content_length,
			    const char *content_type, bool if_none_match, const char *const *xms,
			    size_t nxms);

/* Base64 of HMAC-SHA256(key, sts) into out[64]. */
void lv__az_sign(const lv__crypto_fns *k, const uint8_t *key, size_t keylen, const char *sts,
		 char out[64]);

/* Percent-encodes a blob path (keeping '/') or a query value ('/' encoded too). */
char *lv__az_encode(const char *s, bool keep_slash);

#endif
