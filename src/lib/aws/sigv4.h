/*
 * AWS Signature Version 4, used by the S3 backend (s3/s3.c) and by the STS credential
 * sources (aws/sources.c).  Pure: the caller supplies the time, the request parts and
 * the payload hash; nothing here does I/O.
 */
#ifndef LV_AWS_SIGV4_H
#define LV_AWS_SIGV4_H

#include <stddef.h>
#include <stdint.h>

typedef struct lv__sigv4_header {
	const char *name;  /* lower case */
	const char *value; /* trimmed */
} lv__sigv4_header;

typedef struct lv__sigv4_request {
	const char *method;          /* "GET" */
	const char *canonical_uri;   /* already URI-encoded path, e.g. "/bucket/a%20b" */
	const char *canonical_query; /* already sorted and encoded, "" if none */
	const lv__sigv4_header *headers; /* headers to sign, sorted by name, lower case */
	size_t nheaders;
	const char *payload_sha256;  /* hex, or "UNSIGNED-PAYLOAD" */
	const char *amz_date;        /* "20150830T123600Z" */
	const char *region;
	const char *service;         /* "s3" */
	const char *access_key;
	const char *secret_key;
} lv__sigv4_request;

/* Writes the Authorization header value into out (>= 512 bytes).  Returns 0 or -1. */
int lv__sigv4_authorization(const lv__sigv4_request *r, char *out, size_t cap);

/* Steps of the signature (test_sigv4.c checks them against AWS's worked examples). */
void lv__sigv4_signing_key(const char *secret, const char *date8, const char *region,
			  const char *service, uint8_t out[32]);
void lv__sha256_hex(const void *data, size_t n, char out[65]);

/* AWS URI encoding: unreserved A-Za-z0-9-_.~ kept, the rest %XX; '/' kept iff keep_slash. */
char *lv__aws_uri_encode(const char *s, size_t n, int keep_slash);

#endif
