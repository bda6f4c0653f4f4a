/*
 * One HTTP client for the object-store backends (S3, Azure) and the credential
 * sources: libcurl (loaded on first use, objstore/dl.h) behind a pool of easy
 * handles that keep their connections, a per-attempt signing callback, capped
 * response bodies, and retries of transient failures inside a total deadline.
 *
 * Deadline.  Every operation (one request and all its retries) has a total
 * budget, `deadline_ms` (30 s by default): no attempt starts, no backoff sleeps
 * and no attempt waits for its answer past it.  Once an answer has started,
 * the transfer runs on while it moves (an attempt that moves less than 1 KB/s
 * for `stall_s` is cut and retried), so a large object is not cut by the
 * deadline.  Each retry is announced through the library's log hook
 * (lv_set_log_handler) with what failed and how much of the budget is left.
 *
 * Retried: transport errors (connect, reset, stall, timeout), HTTP 5xx and 429,
 * and what the request's `retry_on` says (S3's 400 SlowDown).  A response body is
 * never put in a message: only its error code, through the request's `code_of`.
 */
#ifndef LV_OBJSTORE_HTTP_H
#define LV_OBJSTORE_HTTP_H

#include <stdbool.h>
#include <stdint.h>

#include "objstore/dl.h"
#include "objstore/options.h"
#include "util/util.h"

typedef struct lv__http_limits {
	int64_t connect_ms;  /* connect timeout: option connect_timeout, LANCEVER_S3_CONNECT_TIMEOUT_MS (10 s) */
	int64_t stall_s;     /* cut an attempt below 1 KB/s for this long: LANCEVER_S3_STALL_SECONDS (10) */
	int64_t attempt_ms;  /* 0 = none; else one attempt's whole time: option timeout */
	int64_t deadline_ms; /* one operation, retries included: option client_retry_timeout,
	                      * LANCEVER_S3_DEADLINE_SECONDS (30 s) */
	int attempts;        /* tries per operation: option client_max_retries + 1,
	                      * LANCEVER_S3_MAX_ATTEMPTS (5) */
	uint64_t max_object; /* largest whole GET: LANCEVER_S3_MAX_OBJECT_BYTES (4 GiB) */
	long list_max_pages; /* pages per listing: LANCEVER_S3_LIST_MAX_PAGES (100000) */
	bool insecure;       /* option allow_invalid_certificates */
	const char *proxy, *noproxy, *user_agent; /* options proxy_url, proxy_excludes, user_agent
	                                           * (borrowed from the options: copied by lv__http_new) */
} lv__http_limits;

/*
 * The limits from the LANCEVER_S3_* environment and the client options of `opts`
 * (connect_timeout, timeout, client_retry_timeout, client_max_retries,
 * allow_invalid_certificates, proxy_url, proxy_excludes, user_agent; others accepted
 * without effect: docs/operations.md "Cloud").  LV_EINVALID naming the variable or key.
 */
int lv__http_limits_read(lv__http_limits *l, lv__optbag *opts, lv_error *err);
/* Defaults only (no environment, no options). */
void lv__http_limits_default(lv__http_limits *l);

typedef struct lv__http lv__http;

/* A client with its own handle pool.  `service` ("s3", "az", "aws-credentials") starts
 * every log line.  LV_EUNSUPPORTED if libcurl/libcrypto cannot be loaded; LV_ENOMEM. */
int lv__http_new(lv__http **out, const lv__http_limits *lim, const char *service, lv_error *err);
void lv__http_free(lv__http *h);
const lv__crypto_fns *lv__http_crypto(const lv__http *h);
const lv__http_limits *lv__http_get_limits(const lv__http *h);

/* Request headers being built (by lv__http_perform and a request's `sign`). */
typedef struct lv__http_hdrs lv__http_hdrs;
/* Adds one "Name: value" line.  Returns 0 or LV_ENOMEM. */
int lv__http_hdr(lv__http_hdrs *h, const char *fmt, ...) LV_PRINTF(2, 3);

typedef struct lv__http_resp lv__http_resp;

typedef struct lv__http_req {
	const char *method;   /* GET, HEAD, PUT, POST, DELETE */
	const char *what;     /* for messages: "GET", "LIST", ... */
	const char *name;     /* for messages: the object or directory */
	const char *url;      /* the whole URL, already encoded */
	const uint8_t *body;
	size_t body_len;
	const char *const *headers; /* fixed "Name: value" lines (NULL-terminated), may be NULL */
	/* Called before every attempt (credentials may have been refreshed, dates move on). */
	int (*sign)(void *ctx, const struct lv__http_req *q, lv__http_hdrs *h, lv_error *err);
	void *ctx;
	/* Body rules: a 2xx body over max_ok is an LV_ELIMIT error (0 = 64 KiB); keep_ok != 0
	 * keeps that much of a 2xx body and stops (not an error); a ranged GET of
	 * [range_off, range_off + range_len) keeps what the range needs. */
	uint64_t max_ok, keep_ok;
	bool ranged;
	uint64_t range_off, range_len;
	/* Optional: also retry this answer (S3: 400 SlowDown). */
	bool (*retry_on)(const lv__http_resp *r);
	/* Optional: the service's error code of an answer, for messages ("" if none). */
	void (*code_of)(const lv__http_resp *r, char *out, size_t cap);
	const char *service_name; /* "S3", "Azure": starts error messages */
	const char *root;         /* optional: the store ("s3://bucket/prefix"), for log lines */
} lv__http_req;

struct lv__http_resp {
	long status;
	lv__dbuf body;
	uint64_t content_length;
	bool has_length;
	bool has_range;        /* Content-Range: bytes <range_start>-... */
	uint64_t range_start;
	int64_t last_modified_ms;
	char ms_error_code[64]; /* x-ms-error-code header (Azure), "" if none */
	/* internal to http.c */
	const lv__http_req *q;
	long hstatus;
	bool too_large, enough;
	uint64_t limit_ok;
};

/*
 * Performs `q` with retries inside the deadline.  Returns 0 with r->status and
 * r->body set for any answer that is not retried (also 4xx: the caller decides),
 * or LV_EIO after the last retried failure, LV_ELIMIT for an oversized body,
 * LV_ENOMEM.  The caller disposes r->body (lv__http_resp_dispose), also on failure.
 */
int lv__http_perform(lv__http *h, const lv__http_req *q, lv__http_resp *r, lv_error *err);
void lv__http_resp_dispose(lv__http_resp *r);

#endif
