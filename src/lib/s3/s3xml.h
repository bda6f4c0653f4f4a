/*
 * S3 response bodies as pure functions: bytes in, results out, no I/O and no
 * curl, so they can be unit-tested and fuzzed on their own.  s3.c calls them.
 *
 *  - ListObjectsV2 pages: the objects (key, size, mtime), IsTruncated and the
 *    continuation token;
 *  - DeleteObjects results: which keys of a batch failed, and how;
 *  - error bodies: the S3 error code (<Code>…</Code>), for messages.
 *
 * Bodies come from a server and are untrusted: any byte sequence of any
 * length is a valid argument; malformed input is an error, never a crash.
 */
#ifndef LV_S3_S3XML_H
#define LV_S3_S3XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lancever/common.h"

/* Longest text of one element (a key, a token, ...) a parser accepts. */
#define LV_S3XML_TEXT_MAX (1 << 16)

/* One object of a ListObjectsV2 page. */
typedef struct lv_s3_obj {
	char *key;        /* the full key as sent, NUL-terminated */
	uint64_t size;
	int64_t mtime_ms; /* 0 if absent or unparsable */
} lv_s3_obj;

/* One parsed ListObjectsV2 page. */
typedef struct lv_s3_list_page {
	lv_s3_obj *objs;  /* in document order; <Contents> without a <Key> are left out */
	size_t n, cap;
	bool truncated;   /* <IsTruncated>true</IsTruncated> */
	char *next_token; /* <NextContinuationToken>, NULL if absent */
} lv_s3_list_page;

/*
 * Parses one ListObjectsV2 response body into *page (which it initialises).
 * `what` names the listing in messages ("S3 LIST <dir>").  Returns 0, or
 * LV_ECORRUPT (malformed XML), LV_ELIMIT (an element's text is too long),
 * LV_ENOMEM; on error *page is disposed.
 */
int lv__s3xml_parse_list(const char *body, size_t len, const char *what, lv_s3_list_page *page,
			 lv_error *err);
void lv__s3xml_list_page_dispose(lv_s3_list_page *page);

/*
 * Parses a DeleteObjects response body for a batch of `n` full keys: for
 * every <Error> whose <Key> equals keys[i], rcs[i] becomes LV_ENOTFOUND
 * (code NoSuchKey) or LV_EIO; other rcs are left alone.  *failed (may be
 * NULL) receives the number of results set.  Returns 0 or LV_ECORRUPT.
 */
int lv__s3xml_parse_delete(const char *body, size_t len, const char *const *keys, size_t n,
			   int *rcs, size_t *failed, lv_error *err);

/* The S3 error code of an error body (<Code>…</Code>) into out[cap] ("" if none). */
void lv__s3xml_error_code(const char *body, size_t len, char *out, size_t cap);

#endif
