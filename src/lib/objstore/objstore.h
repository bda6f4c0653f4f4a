/*
 * The storage ops of an object store, written once for S3 and Azure.  A
 * backend supplies how to send one request for one object and how to fetch
 * one listing page (lv__objsvc); the rules of the storage vtable live here:
 *  - keys are the store's prefix + "/" + the path;
 *  - a ranged GET's answer is checked: a 206 must start at the offset asked
 *    for, a 200 from a server that ignored Range is cut to the range, a 416
 *    (the range starts past the end) is an empty read;
 *  - a HEAD must give the size; a create refused with 409 or 412 is LV_EEXISTS;
 *    a 404 is LV_ENOTFOUND, other failures LV_EIO with the service's error code;
 *  - listings go page by page through a lister (objstore/lister.h) within
 *    LANCEVER_S3_LIST_MAX_PAGES pages; a truncated page without a token is an
 *    error.
 * A backend's handle starts with an lv__objstore, and its lv_storage_ops take
 * the shared ops through LV__OBJSTORE_OPS.
 */
#ifndef LV_OBJSTORE_OBJSTORE_H
#define LV_OBJSTORE_OBJSTORE_H

#include <stdbool.h>
#include <stdint.h>

#include "lancever/sys/storage.h"
#include "objstore/http.h"
#include "objstore/xml.h"

/* One request for one object (the backends extend it for their other requests). */
typedef struct lv__objreq {
	const char *method; /* GET, HEAD, PUT, DELETE (a backend's own requests: also POST) */
	const char *what;   /* for messages: "GET", "LIST", ... */
	const char *path;   /* for messages: the object or directory, relative to the store */
	const char *key;    /* the full key below the bucket or container, decoded */
	const void *data;   /* PUT: the body (non-NULL, also when empty); else NULL */
	size_t n;
	bool create;        /* PUT: only if absent (If-None-Match: *) */
	const char *range;  /* GET: "bytes=a-b", or NULL for the whole object */
	uint64_t max_ok;    /* largest 2xx body (0: the small-body cap of objstore/http.h) */
	bool ranged;        /* GET of [range_off, range_off + range_len) */
	uint64_t range_off, range_len;
} lv__objreq;

typedef struct lv__objsvc {
	const char *name;      /* "S3", "Azure": starts messages */
	long put_ok, del_ok;   /* the 2xx status a PUT / a DELETE answers besides 200 */
	bool exists_on_412;    /* every 412 is LV_EEXISTS (S3), not only a create's */
	/* The service's error code of an answer, for messages ("" if none). */
	void (*code_of)(const lv__http_resp *r, char *out, size_t cap);
	/* Sends q (with retries): 0 with r->status set; the caller disposes r, also on failure. */
	int (*object)(void *impl, const lv__objreq *q, lv__http_resp *r, lv_error *err);
	/* One page of the keys under `kprefix` (after the page of `token`, NULL for the
	 * first), parsed into *pg; `dname` and `what` name the listing in messages. */
	int (*list_page)(void *impl, const char *kprefix, bool recursive, const char *token,
			 const char *dname, const char *what, lv__list_page *pg, lv_error *err);
} lv__objsvc;

/* The first member of a backend's handle. */
typedef struct lv__objstore {
	const lv__objsvc *svc;
	char *prefix;   /* decoded, without leading/trailing '/'; "" = the bucket/container root */
	char root[600]; /* "s3://bucket/prefix", for log lines */
	lv__http *http;
} lv__objstore;

/* The request `hq` for `q` to `url`, with the service's name and error codes and the
 * store's root; the backend adds its signing (and retry_on). */
void lv__obj_http_req(const lv__objstore *o, const lv__objreq *q, const char *url, lv__http_req *hq);
/* The full key of `path` (malloc'ed; NULL on OOM). */
char *lv__obj_key(const lv__objstore *o, const char *path);
/* LV_ENOTFOUND (404), LV_EEXISTS (412 where the service says so) or LV_EIO, naming the
 * service, `what` ("GET", "LIST", ...), `name` and the status and error code. */
int lv__obj_status_error(const lv__objstore *o, const char *what, const char *name,
			 const lv__http_resp *r, lv_error *err);
/*
 * `alt` (taken; may be NULL) is another spelling of o->prefix (objstore/uri.h: Lance 8's
 * keys).  With a `probe` directory, when nothing lies under it at o->prefix but something
 * does under alt, alt becomes the prefix (a dataset Lance 8 wrote).  Call before
 * lv__obj_set_root, once requests can be signed.
 */
void lv__obj_pick_prefix(lv__objstore *o, char *alt, const char *probe);
/* Sets o->root to "<scheme><top>[/<prefix>]" (the handle's description, for log lines). */
void lv__obj_set_root(lv__objstore *o, const char *scheme, const char *top);

int lv__obj_list(void *impl, const char *dir, bool recursive, lv_list_cb cb, void *payload,
		 lv_error *err);
int lv__obj_read(void *impl, const char *path, lv_buf *out, lv_error *err);
int lv__obj_read_range(void *impl, const char *path, uint64_t offset, uint64_t len, lv_buf *out,
		       lv_error *err);
int lv__obj_head(void *impl, const char *path, uint64_t *size, int64_t *mtime, lv_error *err);
int lv__obj_write(void *impl, const char *path, const void *data, size_t n, lv_error *err);
int lv__obj_create(void *impl, const char *path, const void *data, size_t n, lv_error *err);
/* DELETE of one object, without looking first (S3 answers 204 for an absent key too). */
int lv__obj_delete(void *impl, const char *path, lv_error *err);

/* The members of an object store's lv_storage_ops that are the same for every service. */
#define LV__OBJSTORE_OPS                                                                      \
	.version = LV_STORAGE_OPS_VERSION, .list = lv__obj_list, .read = lv__obj_read,        \
	.read_range = lv__obj_read_range, .head = lv__obj_head, .write = lv__obj_write,       \
	.create = lv__obj_create, .flags = LV_STORAGE_FLAG_REMOTE

#endif
