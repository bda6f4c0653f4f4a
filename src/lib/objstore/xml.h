/*
 * Object-store XML bodies as pure functions: bytes in, results out, no I/O and
 * no curl, so they can be unit-tested and fuzzed on their own.  The S3 and
 * Azure backends and the STS credential source call them.
 *
 *  - listing pages: S3 ListObjectsV2 and Azure List Blobs: the objects (key,
 *    size, mtime), whether more pages follow and the continuation token; and
 *    which listed keys a listing may deliver (shared by both stores);
 *  - S3 DeleteObjects results: which keys of a batch failed, and how;
 *  - STS AssumeRoleWithWebIdentity results: temporary credentials;
 *  - error bodies: the error code (<Code>…</Code>), for messages.
 *
 * Bodies come from a server and are untrusted: any byte sequence of any
 * length is a valid argument; malformed input is an error, never a crash.
 * Document type declarations (and so entity definitions) are refused: S3
 * never sends them, and they are how a small body expands into a large one.
 */
#ifndef LV_OBJSTORE_XML_H
#define LV_OBJSTORE_XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lancever/common.h"

/* Longest text of one element (a key, a token, ...) a parser accepts. */
#define LV_S3XML_TEXT_MAX (1 << 16)

/* One object of a ListObjectsV2 page. */
typedef struct lv__list_obj {
	char *key;        /* the full key as sent, NUL-terminated */
	uint64_t size;
	int64_t mtime_ms; /* 0 if absent or unparsable */
} lv__list_obj;

/* One parsed ListObjectsV2 page. */
typedef struct lv__list_page {
	lv__list_obj *objs;  /* in document order; <Contents> without a <Key> are left out */
	size_t n, cap;
	bool truncated;   /* <IsTruncated>true</IsTruncated> */
	char *next_token; /* <NextContinuationToken>, NULL if absent */
} lv__list_page;

/*
 * Parses one ListObjectsV2 response body into *page (which it initialises).
 * The root element must be <ListBucketResult>.  `what` names the listing in
 * messages ("S3 LIST <dir>").  Returns 0, or LV_ECORRUPT (malformed XML, a
 * document type declaration, another root element, a <Size> that is not a
 * number), LV_ELIMIT (an element's text is longer than LV_S3XML_TEXT_MAX),
 * LV_ENOMEM; on error *page is disposed.
 */
int lv__s3xml_parse_list(const char *body, size_t len, const char *what, lv__list_page *page,
			 lv_error *err);
void lv__list_page_dispose(lv__list_page *page);

/*
 * Which listed key a listing delivers.  The listing asked for keys starting
 * with `kprefix` (the store's prefix + "/" + the listed directory + "/", or ""
 * at the bucket root); `strip` bytes (the store's prefix + "/", or 0) are cut
 * from a key to make it relative to the store root.  Returns 1 with *rel
 * pointing into `key` (the relative path, valid per lv__path_check),
 * 0 to skip it ("directory" markers ending in '/', and in a non-recursive
 * listing keys below a sub-directory), or LV_ECORRUPT for a key that does not
 * start with kprefix or is not a valid relative path (".." or "." segments,
 * empty segments, control characters, backslashes, too long): a server that
 * lists such keys is broken or hostile, and they would lead outside the
 * listed prefix.  `what` names the listing in the message.
 */
int lv__list_rel(const char *key, const char *kprefix, size_t strip, bool recursive,
		       const char *what, const char **rel, lv_error *err);

/*
 * Parses a DeleteObjects response body for a batch of `n` full keys: for
 * every <Error> whose <Key> equals keys[i], rcs[i] becomes LV_ENOTFOUND
 * (code NoSuchKey) or LV_EIO; other rcs are left alone.  *failed (may be
 * NULL) receives the number of results set.  The root element must be
 * <DeleteResult>.  Returns 0, LV_ECORRUPT, LV_ELIMIT or LV_ENOMEM.
 */
int lv__s3xml_parse_delete(const char *body, size_t len, const char *const *keys, size_t n,
			   int *rcs, size_t *failed, lv_error *err);

/*
 * The S3 error code of an error body (<Code>…</Code>) into out[cap] ("" if
 * none, or if it is not a plain code of letters, digits, '.', '_' and '-':
 * the code goes into messages, so nothing else from the server does).
 */
void lv__s3xml_error_code(const char *body, size_t len, char *out, size_t cap);

/* Copies at most cap-1 bytes of s into out, control and non-ASCII bytes as '?' (for messages). */
void lv__printable(char *out, size_t cap, const char *s);

/*
 * The text of the first element named names[i] (at any depth) into vals[i]
 * (malloc'ed, NULL if absent), for i < n.  The root element must be `root`.
 * For small fixed documents (STS).  Returns 0, LV_ECORRUPT, LV_ELIMIT, LV_ENOMEM;
 * on error every vals[i] is NULL.
 */
int lv__xml_texts(const char *body, size_t len, const char *root, const char *const *names,
		  char **vals, size_t n, const char *what, lv_error *err);

/*
 * Parses one Azure List Blobs response body (root <EnumerationResults>) into *page:
 * every <Blob> (Name, Properties/Content-Length, Properties/Last-Modified; a blob
 * without a valid size or time is LV_ECORRUPT), <BlobPrefix> entries skipped,
 * truncated and next_token from a non-empty <NextMarker>.  As lv__s3xml_parse_list.
 */
int lv__azxml_parse_list(const char *body, size_t len, const char *what, lv__list_page *page,
			 lv_error *err);

/* "Mon, 04 Dec 2026 11:49:34 GMT" -> ms since the epoch; 0 if it is not that form. */
int64_t lv__rfc1123_ms(const char *v);

#endif
