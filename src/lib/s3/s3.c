/*
 * S3 backend: libcurl for transport, our own SigV4 signer, expat for
 * ListObjectsV2.  Requests are independent and the backend is thread-safe:
 * each call borrows a curl easy handle from a small pool (keeping its
 * connections alive), signs its own request and retries transient failures
 * (5xx, 429/SlowDown, connection errors) with exponential backoff and jitter.
 * Credentials come from the environment and never appear in messages.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "s3/dl.h"
#include "s3/s3xml.h"
#include "s3/sigv4.h"
#include "storage/storage_int.h"
#include "util/util.h"

#define S3_POOL 64
/* Bodies lancever keeps: error bodies (for the code in messages) and the 2xx bodies of
 * PUT/DELETE/HEAD are cut after 64 KiB; a ListObjectsV2 page or DeleteObjects result
 * over 32 MiB is refused (1000 keys of 1 KiB, escaped, take ~6 MiB). */
#define S3_SMALL_BODY_MAX (64u << 10)
#define S3_LIST_BODY_MAX ((uint64_t)32 << 20)
/* At most this many objects in one listing (about 1 GB of memory at the limit). */
#define S3_LIST_MAX_KEYS 10000000u

/*
 * Limits, each overridable through the environment (read when the store is
 * opened; an invalid value is an error naming the variable).  The tests of
 * hostile servers (tests/interop/test_s3_hostile.mjs) lower them so that a
 * stalled or endless server fails in seconds instead of minutes:
 *   LANCEVER_S3_STALL_SECONDS      abort a transfer slower than 1 KB/s for this long (30)
 *   LANCEVER_S3_CONNECT_TIMEOUT_MS connect timeout (10000)
 *   LANCEVER_S3_MAX_ATTEMPTS       tries per request, retries of 5xx/429/connection errors (5)
 *   LANCEVER_S3_MAX_OBJECT_BYTES   largest object a whole GET returns (4 GiB, as local files)
 *   LANCEVER_S3_LIST_MAX_PAGES     ListObjectsV2 pages per listing (100000)
 */
typedef struct s3_limits {
	long stall_s;
	long connect_ms;
	int attempts;
	uint64_t max_object;
	long list_max_pages;
} s3_limits;

typedef struct s3 {
	char *bucket, *prefix;      /* prefix without leading/trailing '/'; "" = bucket root */
	char *endpoint;             /* scheme://host[:port], no trailing '/' */
	char *host;                 /* Host header value */
	bool path_style;
	char *region, *akid, *secret, *token;
	s3_limits lim;
	pthread_mutex_t mu;
	CURL *pool[S3_POOL];
	int npool;
	const lv_curl_api *cu;   /* libcurl and libcrypto, loaded at open (s3/dl.h) */
	const lv_crypto_api *k;
} s3;


static CURL *take_handle(s3 *s)
{
	CURL *c = NULL;
	pthread_mutex_lock(&s->mu);
	if (s->npool)
		c = s->pool[--s->npool];
	pthread_mutex_unlock(&s->mu);
	if (c)
		s->cu->easy_reset(c);
	else
		c = s->cu->easy_init();
	return c;
}

static void give_handle(s3 *s, CURL *c)
{
	pthread_mutex_lock(&s->mu);
	if (s->npool < S3_POOL) {
		s->pool[s->npool++] = c;
		c = NULL;
	}
	pthread_mutex_unlock(&s->mu);
	if (c)
		s->cu->easy_cleanup(c);
}

/* ---- one HTTP exchange ---- */

typedef struct resp {
	/* set by the caller before perform() */
	uint64_t max_ok;        /* a 2xx body (or its Content-Length) over this is an error */
	uint64_t keep_ok;       /* != 0: keep this much of a 2xx body, then stop (not an error) */
	bool ranged;            /* a ranged GET of [range_off, range_off + range_len) */
	uint64_t range_off, range_len;
	/* results */
	long status;
	lv_dbuf body;
	uint64_t content_length;
	bool has_length;
	bool has_range;         /* Content-Range: bytes <range_start>-... */
	uint64_t range_start;
	int64_t last_modified_ms;
	long hstatus;           /* status line of the response being received */
	bool too_large;         /* stopped: the 2xx body is over max_ok */
	bool enough;            /* stopped on purpose: all the bytes wanted were received */
} resp;

static uint64_t sat_add(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

/* How much of the body being received is kept before the transfer is stopped (not an error). */
static uint64_t keep_limit(const resp *r)
{
	if (r->hstatus < 200 || r->hstatus > 299)
		return S3_SMALL_BODY_MAX; /* an error body: its first bytes carry the code */
	if (r->ranged) /* 206: the range; 200 (Range ignored): the object up to its end */
		return r->hstatus == 206 ? r->range_len : sat_add(r->range_off, r->range_len);
	return r->keep_ok ? r->keep_ok : UINT64_MAX;
}

static size_t on_body(char *p, size_t sz, size_t n, void *u)
{
	resp *r = u;
	size_t k = sz * n;
	uint64_t keep = keep_limit(r);
	uint64_t room = keep > r->body.len ? keep - r->body.len : 0;
	size_t take = k > room ? (size_t)room : k; /* only what is wanted, then stop */
	/* Never more than max_ok of a 2xx body, also of a ranged GET whose server
	 * ignored Range (the bytes up to the end of the range are needed then). */
	if (r->hstatus >= 200 && r->hstatus <= 299 && !r->keep_ok && r->body.len + take > r->max_ok) {
		r->too_large = true;
		return 0;
	}
	if (lv_dbuf_add(&r->body, p, take) < 0)
		return 0;
	if (take < k) {
		r->enough = true;
		return 0;
	}
	return k;
}

static int64_t parse_http_date(const char *v)
{
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	if (!strptime(v, "%a, %d %b %Y %H:%M:%S", &tm))
		return 0;
	return (int64_t)timegm(&tm) * 1000;
}

static size_t on_header(char *p, size_t sz, size_t n, void *u)
{
	resp *r = u;
	size_t len = sz * n;
	char line[512];
	size_t l = len < sizeof line - 1 ? len : sizeof line - 1;
	memcpy(line, p, l);
	line[l] = 0;
	while (l && (line[l - 1] == '\r' || line[l - 1] == '\n'))
		line[--l] = 0;
	if (!strncmp(line, "HTTP/", 5)) {
		/* a new response (after a 1xx): what came before does not count */
		const char *sp = strchr(line, ' ');
		r->hstatus = sp ? strtol(sp + 1, NULL, 10) : 0;
		r->has_length = r->has_range = false;
		r->content_length = r->range_start = 0;
		r->last_modified_ms = 0;
	} else if (!strncasecmp(line, "content-length:", 15)) {
		uint64_t v;
		const char *x = line + 15;
		while (*x == ' ')
			x++;
		if (lv_parse_u64(x, strlen(x), &v)) {
			r->content_length = v;
			r->has_length = true;
			/* refuse an oversized body before receiving it (also the whole object a
			 * server sends when it ignores Range) */
			bool whole = !r->ranged || r->hstatus == 200;
			if (r->hstatus >= 200 && r->hstatus <= 299 && whole && !r->keep_ok &&
			    v > r->max_ok) {
				r->too_large = true;
				return 0;
			}
		}
	} else if (!strncasecmp(line, "content-range:", 14)) {
		const char *x = line + 14;
		while (*x == ' ')
			x++;
		if (!strncmp(x, "bytes ", 6)) {
			x += 6;
			const char *dash = strchr(x, '-');
			uint64_t v;
			if (dash && lv_parse_u64(x, (size_t)(dash - x), &v)) {
				r->range_start = v;
				r->has_range = true;
			}
		}
	} else if (!strncasecmp(line, "last-modified:", 14)) {
		const char *x = line + 14;
		while (*x == ' ')
			x++;
		r->last_modified_ms = parse_http_date(x);
	}
	return len;
}

typedef struct req {
	const char *method;
	const char *what;       /* for messages: "GET", "LIST", ... */
	const char *name;       /* for messages: the object or directory, relative */
	const char *key;        /* object key below the bucket ("" for bucket-level) */
	const char *query;      /* canonical query (sorted, encoded) or "" */
	const uint8_t *body;
	size_t body_len;
	const char *range;      /* "bytes=a-b" or NULL */
	bool if_none_match;
	const char *content_type;
	const char *content_md5; /* base64, or NULL */
} req;

typedef struct upload {
	const uint8_t *p;
	size_t left;
} upload;

static size_t on_read(char *buf, size_t sz, size_t n, void *u)
{
	upload *up = u;
	size_t k = sz * n < up->left ? sz * n : up->left;
	memcpy(buf, up->p, k);
	up->p += k;
	up->left -= k;
	return k;
}

/* The S3 error code in an XML error body (<Code>..</Code>), for messages. */
static void error_code(const lv_dbuf *b, char *out, size_t cap)
{
	lv__s3xml_error_code((const char *)b->ptr, b->len, out, cap);
}

static int perform_once(s3 *s, const req *q, resp *r, lv_error *err, bool *retry)
{
	*retry = false;
	char *ekey = lv_aws_uri_encode(q->key, strlen(q->key), 1);
	char *url = NULL, *curi = NULL;
	struct curl_slist *hl = NULL;
	int rc = LV_ENOMEM;
	CURL *c = NULL;
	if (!ekey)
		goto out;
	if (s->path_style)
		curi = lv__sprintf("/%s%s%s", s->bucket, q->key[0] ? "/" : "", ekey);
	else
		curi = lv__sprintf("/%s", ekey);
	if (!curi)
		goto out;
	url = lv__sprintf("%s%s%s%s", s->endpoint, curi, q->query[0] ? "?" : "", q->query);
	if (!url)
		goto out;
	char payload[65];
	lv_sha256_hex(q->body ? (const void *)q->body : "", q->body_len, payload);
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	char amz[20];
	strftime(amz, sizeof amz, "%Y%m%dT%H%M%SZ", &tm);
	lv_sigv4_header h[4];
	size_t nh = 0;
	h[nh++] = (lv_sigv4_header){ "host", s->host };
	h[nh++] = (lv_sigv4_header){ "x-amz-content-sha256", payload };
	h[nh++] = (lv_sigv4_header){ "x-amz-date", amz };
	if (s->token)
		h[nh++] = (lv_sigv4_header){ "x-amz-security-token", s->token };
	lv_sigv4_request sr = { q->method, curi, q->query, h, nh, payload, amz, s->region, "s3",
				s->akid, s->secret };
	char auth[1024], line[1200];
	if (lv_sigv4_authorization(&sr, auth, sizeof auth) < 0) {
		rc = lv__err(err, LV_EINVALID, "S3: could not sign the request");
		goto out;
	}
	snprintf(line, sizeof line, "Authorization: %s", auth);
	hl = s->cu->slist_append(hl, line);
	snprintf(line, sizeof line, "x-amz-content-sha256: %s", payload);
	hl = s->cu->slist_append(hl, line);
	snprintf(line, sizeof line, "x-amz-date: %s", amz);
	hl = s->cu->slist_append(hl, line);
	if (s->token) {
		char *t = lv__sprintf("x-amz-security-token: %s", s->token);
		if (t)
			hl = s->cu->slist_append(hl, t);
		free(t);
	}
	if (q->range) {
		snprintf(line, sizeof line, "Range: %s", q->range);
		hl = s->cu->slist_append(hl, line);
	}
	if (q->if_none_match)
		hl = s->cu->slist_append(hl, "If-None-Match: *");
	if (q->content_type) {
		snprintf(line, sizeof line, "Content-Type: %s", q->content_type);
		hl = s->cu->slist_append(hl, line);
	}
	if (q->content_md5) {
		snprintf(line, sizeof line, "Content-MD5: %s", q->content_md5);
		hl = s->cu->slist_append(hl, line);
	}
	hl = s->cu->slist_append(hl, "Expect:"); /* no 100-continue round trip */
	if (!hl)
		goto out;
	if (!(c = take_handle(s)))
		goto out;
	upload up = { q->body, q->body_len };
	s->cu->easy_setopt(c, CURLOPT_URL, url);
	s->cu->easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	s->cu->easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	s->cu->easy_setopt(c, CURLOPT_WRITEDATA, r);
	s->cu->easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	s->cu->easy_setopt(c, CURLOPT_HEADERDATA, r);
	s->cu->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	s->cu->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, s->lim.connect_ms);
	/* a stalled server (no answer, or a trickle): abort, then retry */
	s->cu->easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1024L);
	s->cu->easy_setopt(c, CURLOPT_LOW_SPEED_TIME, s->lim.stall_s);
	if (!strcmp(q->method, "HEAD")) {
		s->cu->easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (!strcmp(q->method, "PUT")) {
		s->cu->easy_setopt(c, CURLOPT_UPLOAD, 1L);
		s->cu->easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		s->cu->easy_setopt(c, CURLOPT_READDATA, &up);
		s->cu->easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)q->body_len);
	} else if (!strcmp(q->method, "POST")) {
		s->cu->easy_setopt(c, CURLOPT_POST, 1L);
		s->cu->easy_setopt(c, CURLOPT_POSTFIELDS, (const char *)q->body);
		s->cu->easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)q->body_len);
	} else if (strcmp(q->method, "GET")) {
		s->cu->easy_setopt(c, CURLOPT_CUSTOMREQUEST, q->method);
	}
	CURLcode cc = s->cu->easy_perform(c);
	if (r->too_large) {
		rc = lv__err(err, LV_ELIMIT,
			     "S3 %s %s: the response is larger than %llu bytes (the limit%s)", q->what,
			     q->name, (unsigned long long)r->max_ok,
			     r->ranged || r->keep_ok || r->max_ok != s->lim.max_object
				     ? ""
				     : "; LANCEVER_S3_MAX_OBJECT_BYTES raises it");
		goto out;
	}
	if (cc == CURLE_WRITE_ERROR && r->enough)
		cc = CURLE_OK; /* stopped on purpose: everything wanted was received */
	if (cc != CURLE_OK) {
		*retry = true;
		rc = lv__err(err, LV_EIO, "S3 %s %s: %s (%s)", q->what, q->name, s->cu->easy_strerror(cc),
			     s->host);
		goto out;
	}
	s->cu->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	if (r->status >= 500 || r->status == 429) {
		*retry = true;
		char code[64];
		error_code(&r->body, code, sizeof code);
		rc = lv__err(err, LV_EIO, "S3 %s %s: HTTP %ld%s%s (after retries)", q->what, q->name,
			     r->status, code[0] ? " " : "", code);
		goto out;
	}
	if (r->status == 400 && r->body.ptr && memmem(r->body.ptr, r->body.len, "SlowDown", 8))
		*retry = true;
	rc = 0;
out:
	if (c)
		give_handle(s, c);
	s->cu->slist_free_all(hl);
	free(url);
	free(curi);
	free(ekey);
	return rc;
}

/* Performs with retries.  Returns 0 with r->status set, or LV_EIO after the last attempt. */
static int perform(s3 *s, const req *q, resp *r, lv_error *err)
{
	for (int attempt = 0;; attempt++) {
		lv_dbuf_dispose(&r->body);
		lv_dbuf_init(&r->body, (size_t)LV__READ_MAX);
		r->status = r->hstatus = 0;
		r->has_length = r->has_range = false;
		r->content_length = r->range_start = 0;
		r->last_modified_ms = 0;
		r->too_large = r->enough = false;
		if (!r->max_ok)
			r->max_ok = S3_SMALL_BODY_MAX;
		bool retry;
		int rc = perform_once(s, q, r, err, &retry);
		if (!retry || attempt + 1 >= s->lim.attempts)
			return rc;
		/* exponential backoff with full jitter: 50 ms, 100 ms, 200 ms, ... at most 5 s */
		unsigned cap = attempt < 6 ? 50u << attempt : 5000u;
		unsigned ms = (unsigned)rand() % (cap + 1);
		struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
}

static int status_error(const s3 *s, const char *what, const char *key, const resp *r, lv_error *err)
{
	char code[64];
	error_code(&r->body, code, sizeof code);
	int lv = r->status == 404 ? LV_ENOTFOUND : r->status == 412 ? LV_EEXISTS : LV_EIO;
	return lv__err(err, lv, "S3 %s %s: HTTP %ld%s%s", what, key[0] ? key : s->bucket, r->status,
		       code[0] ? " " : "", code);
}

static char *full_key(const s3 *s, const char *path)
{
	if (!s->prefix[0])
		return lv__strdup(path);
	return path[0] ? lv__sprintf("%s/%s", s->prefix, path) : lv__strdup(s->prefix);
}

/* ---- ops ---- */

/*
 * A whole GET (ranged == false) or a ranged GET of [offset, offset + len).  A
 * server that ignores Range answers 200 with the object from byte 0: the range
 * is cut from that (reading stops at its end); a 206 must start at `offset`.
 */
static int s3_get(s3 *s, const char *path, bool ranged, uint64_t offset, uint64_t len, lv_buf *out,
		  lv_error *err)
{
	char range[64] = "";
	if (ranged) {
		uint64_t last;
		if (__builtin_add_overflow(offset, len - 1, &last))
			snprintf(range, sizeof range, "bytes=%llu-", (unsigned long long)offset);
		else
			snprintf(range, sizeof range, "bytes=%llu-%llu", (unsigned long long)offset,
				 (unsigned long long)last);
	}
	char *key = full_key(s, path);
	if (!key)
		return lv__err(err, LV_ENOMEM, "out of memory");
	resp r;
	memset(&r, 0, sizeof r);
	r.max_ok = s->lim.max_object;
	r.ranged = ranged;
	r.range_off = offset;
	r.range_len = len;
	req q = { "GET", "GET", path, key, "", NULL, 0, ranged ? range : NULL, false, NULL, NULL };
	int rc = perform(s, &q, &r, err);
	if (rc == 0) {
		if (r.status == 206 && ranged) {
			if (r.has_range && r.range_start != offset)
				rc = lv__err(err, LV_ECORRUPT,
					     "S3 GET %s: asked for bytes from %llu, the server sent bytes from %llu",
					     path, (unsigned long long)offset,
					     (unsigned long long)r.range_start);
			else if ((rc = lv_dbuf_take(&r.body, out)) == 0 && out->size > len)
				out->size = len;
		} else if (r.status == 200) {
			if (ranged) { /* Range ignored: the body starts at byte 0 */
				size_t skip = r.body.len < offset ? r.body.len : (size_t)offset;
				if (skip)
					memmove(r.body.ptr, r.body.ptr + skip, r.body.len - skip);
				r.body.len -= skip;
				if (r.body.len > len)
					r.body.len = (size_t)len;
			}
			rc = lv_dbuf_take(&r.body, out);
		} else if (r.status == 416 && ranged) { /* range starts past the end */
			lv_dbuf_dispose(&r.body);
			lv_dbuf_init(&r.body, 0);
			rc = lv_dbuf_take(&r.body, out);
		} else {
			rc = status_error(s, "GET", path, &r, err);
		}
		if (rc == LV_ENOMEM)
			rc = lv__err(err, rc, "S3 GET %s: out of memory", path);
	}
	lv_dbuf_dispose(&r.body);
	free(key);
	return rc;
}

static int s3_read(void *impl, const char *path, lv_buf *out, lv_error *err)
{
	return s3_get(impl, path, false, 0, 0, out, err);
}

static int s3_read_range(void *impl, const char *path, uint64_t offset, uint64_t len, lv_buf *out,
			 lv_error *err)
{
	if (len == 0) {
		out->ptr = lv__malloc(1);
		out->size = 0;
		return out->ptr ? 0 : lv__err(err, LV_ENOMEM, "out of memory");
	}
	return s3_get(impl, path, true, offset, len, out, err);
}

/* A HEAD, PUT or DELETE of one object: the answer's status and small body are
 * left in *r (the caller disposes r->body, also on failure). */
static int object_request(s3 *s, const char *method, const char *path, const void *data, size_t n,
			  bool create, resp *r, lv_error *err)
{
	memset(r, 0, sizeof *r);
	r->keep_ok = S3_SMALL_BODY_MAX;
	char *key = full_key(s, path);
	if (!key)
		return lv__err(err, LV_ENOMEM, "out of memory");
	req q = { method, method, path, key, "", data, n, NULL, create,
		  data ? "application/octet-stream" : NULL, NULL };
	int rc = perform(s, &q, r, err);
	free(key);
	return rc;
}

static int s3_head(void *impl, const char *path, uint64_t *size, int64_t *mtime, lv_error *err)
{
	resp r;
	int rc = object_request(impl, "HEAD", path, NULL, 0, false, &r, err);
	if (rc == 0 && r.status != 200)
		rc = status_error(impl, "HEAD", path, &r, err);
	if (rc == 0 && !r.has_length)
		rc = lv__err(err, LV_ECORRUPT, "S3 HEAD %s: no Content-Length in the answer", path);
	if (rc == 0) {
		if (size)
			*size = r.content_length;
		if (mtime)
			*mtime = r.last_modified_ms;
	}
	lv_dbuf_dispose(&r.body);
	return rc;
}

static int s3_put(s3 *s, const char *path, const void *data, size_t n, bool create, lv_error *err)
{
	resp r;
	/* a zero-length object still sends a (non-NULL) body and its content type */
	int rc = object_request(s, "PUT", path, data ? data : "", n, create, &r, err);
	if (rc == 0 && r.status != 200)
		rc = (create && (r.status == 412 || r.status == 409))
			     ? lv__err(err, LV_EEXISTS, "S3 PUT %s: already exists", path)
			     : status_error(s, "PUT", path, &r, err);
	lv_dbuf_dispose(&r.body);
	return rc;
}

static int s3_write(void *impl, const char *path, const void *data, size_t n, lv_error *err)
{
	return s3_put(impl, path, data, n, false, err);
}

static int s3_create(void *impl, const char *path, const void *data, size_t n, lv_error *err)
{
	return s3_put(impl, path, data, n, true, err);
}

static int s3_del(void *impl, const char *path, lv_error *err)
{
	/* S3 deletes of absent keys succeed silently; HEAD first keeps LV_ENOTFOUND meaningful. */
	LV_TRY(s3_head(impl, path, NULL, NULL, err));
	resp r;
	int rc = object_request(impl, "DELETE", path, NULL, 0, false, &r, err);
	if (rc == 0 && r.status != 204 && r.status != 200)
		rc = status_error(impl, "DELETE", path, &r, err);
	lv_dbuf_dispose(&r.body);
	return rc;
}

/* ---- DeleteObjects ---- */

static int xml_escape(lv_dbuf *b, const char *s)
{
	for (; *s; s++) {
		int rc;
		switch (*s) {
		case '&': rc = lv_dbuf_adds(b, "&amp;"); break;
		case '<': rc = lv_dbuf_adds(b, "&lt;"); break;
		case '>': rc = lv_dbuf_adds(b, "&gt;"); break;
		case '"': rc = lv_dbuf_adds(b, "&quot;"); break;
		case '\'': rc = lv_dbuf_adds(b, "&apos;"); break;
		default: rc = lv_dbuf_addc(b, (uint8_t)*s); break;
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
	lv_dbuf body;
	lv_dbuf_init(&body, 0);
	int rc = keys ? 0 : LV_ENOMEM;
	lv_dbuf_adds(&body, "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete><Quiet>true</Quiet>");
	for (size_t i = 0; i < n && rc == 0; i++) {
		rcs[i] = 0;
		if (!(keys[i] = full_key(s, paths[i])))
			rc = LV_ENOMEM;
		else if (lv_dbuf_adds(&body, "<Object><Key>") < 0 || xml_escape(&body, keys[i]) < 0 ||
			 lv_dbuf_adds(&body, "</Key></Object>") < 0)
			rc = LV_ENOMEM;
	}
	if (rc == 0 && lv_dbuf_adds(&body, "</Delete>") < 0)
		rc = LV_ENOMEM;
	if (rc < 0) {
		rc = lv__err(err, LV_ENOMEM, "out of memory");
		goto out;
	}
	uint8_t md5[16];
	unsigned ml = 0;
	s->k->digest(body.ptr, body.len, md5, &ml, s->k->md5(), NULL);
	char md5b64[32];
	s->k->encode_block((unsigned char *)md5b64, md5, 16);
	resp r;
	memset(&r, 0, sizeof r);
	r.max_ok = S3_LIST_BODY_MAX;
	req q = { "POST", "DELETE", paths[0], "", "delete=", body.ptr, body.len, NULL, false,
		  "application/xml", md5b64 };
	rc = perform(s, &q, &r, err);
	if (rc == 0 && r.status != 200)
		rc = status_error(s, "DELETE", paths[0], &r, err);
	if (rc == 0)
		rc = lv__s3xml_parse_delete((const char *)r.body.ptr, r.body.len,
					    (const char *const *)keys, n, rcs, NULL, err);
	lv_dbuf_dispose(&r.body);
out:
	for (size_t i = 0; keys && i < n; i++)
		free(keys[i]);
	free(keys);
	lv_dbuf_dispose(&body);
	return rc;
}

static int s3_del_many(void *impl, const char *const *paths, size_t n, int *rcs, lv_error *err)
{
	s3 *s = impl;
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

/* ---- ListObjectsV2 with a streaming parser ---- */

typedef struct ent {
	char *path;
	uint64_t size;
	int64_t mtime;
} ent;

typedef struct lst {
	ent *v;
	size_t n, cap;
	const char *kprefix; /* the key prefix listed */
	size_t strip;        /* bytes of "<prefix>/" to strip from keys */
	bool recursive;
	uint64_t *tokens;    /* hashes of the continuation tokens seen (pagination loops) */
	size_t ntokens, tcap;
} lst;

/* Entries are collected over all pages and delivered sorted by path (as the local backend). */
static int deliver(lst *l, const lv_s3_obj *o, const char *what, lv_error *err)
{
	const char *rel;
	int k = lv__s3xml_list_rel(o->key, l->kprefix, l->strip, l->recursive, what, &rel, err);
	if (k <= 0)
		return k;
	if (l->n >= S3_LIST_MAX_KEYS)
		return lv__err(err, LV_ELIMIT, "%s: more than %u objects", what, S3_LIST_MAX_KEYS);
	ent *nv = lv__grow(l->v, &l->cap, l->n, sizeof *nv, 256);
	if (!nv)
		return lv__err(err, LV_ENOMEM, "%s: out of memory", what);
	l->v = nv;
	if (!(nv[l->n].path = lv__strdup(rel)))
		return lv__err(err, LV_ENOMEM, "%s: out of memory", what);
	nv[l->n].size = o->size;
	nv[l->n].mtime = o->mtime_ms;
	l->n++;
	return 0;
}

/* FNV-1a, 64 bits: tokens are compared by hash (a false "loop" needs a 64-bit collision). */
static uint64_t token_hash(const char *t)
{
	uint64_t h = 14695981039346656037ull;
	for (; *t; t++)
		h = (h ^ (unsigned char)*t) * 1099511628211ull;
	return h;
}

/* Records a continuation token; LV_ECORRUPT if the server sent it before (pagination loop). */
static int token_seen(lst *l, const char *token, const char *what, lv_error *err)
{
	uint64_t h = token_hash(token);
	for (size_t i = 0; i < l->ntokens; i++) /* pages are round trips: a scan is cheap enough */
		if (l->tokens[i] == h)
			return lv__err(err, LV_ECORRUPT,
				       "%s: the server sent continuation token of page %zu again at page %zu "
				       "(pagination loop)", what, i + 1, l->ntokens + 1);
	uint64_t *nt = lv__grow(l->tokens, &l->tcap, l->ntokens, sizeof *nt, 16);
	if (!nt)
		return lv__err(err, LV_ENOMEM, "%s: out of memory", what);
	l->tokens = nt;
	l->tokens[l->ntokens++] = h;
	return 0;
}

static int ent_cmp(const void *a, const void *b)
{
	return strcmp(((const ent *)a)->path, ((const ent *)b)->path);
}

static int s3_list(void *impl, const char *dir, bool recursive, lv_list_cb cb, void *payload,
		   lv_error *err)
{
	s3 *s = impl;
	char *kprefix = NULL; /* key prefix to list: "<prefix>/<dir>/" */
	if (s->prefix[0])
		kprefix = dir[0] ? lv__sprintf("%s/%s/", s->prefix, dir) : lv__sprintf("%s/", s->prefix);
	else
		kprefix = dir[0] ? lv__sprintf("%s/", dir) : lv__strdup("");
	if (!kprefix)
		return lv__err(err, LV_ENOMEM, "out of memory");
	lst l;
	memset(&l, 0, sizeof l);
	l.kprefix = kprefix;
	l.strip = s->prefix[0] ? strlen(s->prefix) + 1 : 0;
	l.recursive = recursive;
	const char *dname = dir[0] ? dir : "/";
	char what[300];
	snprintf(what, sizeof what, "S3 LIST %.256s", dname);
	char *token = NULL;
	int rc = 0;
	for (long page = 0;; page++) {
		if (page >= s->lim.list_max_pages) {
			rc = lv__err(err, LV_ELIMIT,
				     "%s: more than %ld pages (LANCEVER_S3_LIST_MAX_PAGES raises the limit)",
				     what, s->lim.list_max_pages);
			break;
		}
		/* canonical query: parameters sorted by name, values AWS-encoded */
		char *ep = lv_aws_uri_encode(kprefix, strlen(kprefix), 0);
		char *et = token ? lv_aws_uri_encode(token, strlen(token), 0) : NULL;
		char *query = lv__sprintf("%s%s%s%slist-type=2&prefix=%s", et ? "continuation-token=" : "",
					  et ? et : "", et ? "&" : "", recursive ? "" : "delimiter=%2F&",
					  ep ? ep : "");
		free(ep);
		free(et);
		if (!query) {
			rc = lv__err(err, LV_ENOMEM, "out of memory");
			break;
		}
		resp r;
		memset(&r, 0, sizeof r);
		r.max_ok = S3_LIST_BODY_MAX;
		req q = { "GET", "LIST", dname, "", query, NULL, 0, NULL, false, NULL, NULL };
		rc = perform(s, &q, &r, err);
		free(query);
		if (rc == 0 && r.status != 200)
			rc = status_error(s, "LIST", dname, &r, err);
		lv_s3_list_page pg;
		memset(&pg, 0, sizeof pg);
		if (rc == 0)
			rc = lv__s3xml_parse_list((const char *)r.body.ptr, r.body.len, what, &pg, err);
		lv_dbuf_dispose(&r.body);
		for (size_t i = 0; i < pg.n && rc == 0; i++)
			rc = deliver(&l, &pg.objs[i], what, err);
		bool more = pg.truncated;
		free(token);
		token = pg.next_token;
		pg.next_token = NULL;
		lv__s3xml_list_page_dispose(&pg);
		if (rc < 0 || !more)
			break;
		if (!token || !token[0]) {
			rc = lv__err(err, LV_ECORRUPT, "%s: truncated listing without a token", what);
			break;
		}
		if ((rc = token_seen(&l, token, what, err)) < 0)
			break;
	}
	if (rc == 0) {
		if (l.n > 1)
			qsort(l.v, l.n, sizeof *l.v, ent_cmp);
		for (size_t i = 0; i < l.n && rc == 0; i++) {
			lv_list_entry e = { l.v[i].path, l.v[i].size, l.v[i].mtime };
			rc = cb(&e, payload);
		}
	}
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i].path);
	free(l.v);
	free(l.tokens);
	free(token);
	free(kprefix);
	return rc;
}

static void s3_close(void *impl)
{
	s3 *s = impl;
	for (int i = 0; i < s->npool; i++)
		s->cu->easy_cleanup(s->pool[i]);
	pthread_mutex_destroy(&s->mu);
	if (s->secret)
		memset(s->secret, 0, strlen(s->secret));
	free(s->bucket);
	free(s->prefix);
	free(s->endpoint);
	free(s->host);
	free(s->region);
	free(s->akid);
	free(s->secret);
	free(s->token);
	free(s);
}

static const lv_storage_ops s3_ops = {
	.version = LV_STORAGE_OPS_VERSION,
	.list = s3_list,
	.read = s3_read,
	.read_range = s3_read_range,
	.head = s3_head,
	.write = s3_write,
	.create = s3_create,
	.del = s3_del,
	.close = s3_close,
	.del_many = s3_del_many,
};

static const char *env(const char *a, const char *b)
{
	const char *v = getenv(a);
	if ((!v || !*v) && b)
		v = getenv(b);
	return v && *v ? v : NULL;
}

/* An integer limit from the environment, in [lo, hi]; absent = dflt. */
static int env_limit(const char *name, uint64_t lo, uint64_t hi, uint64_t dflt, uint64_t *out,
		     lv_error *err)
{
	const char *v = getenv(name);
	*out = dflt;
	if (!v || !*v)
		return 0;
	uint64_t x;
	if (!lv_parse_u64(v, strlen(v), &x) || x < lo || x > hi)
		return lv__err(err, LV_EINVALID, "%s: expected an integer from %llu to %llu", name,
			       (unsigned long long)lo, (unsigned long long)hi);
	*out = x;
	return 0;
}

static int read_limits(s3_limits *l, lv_error *err)
{
	uint64_t stall, conn, att, obj, pages;
	LV_TRY(env_limit("LANCEVER_S3_STALL_SECONDS", 1, 3600, 30, &stall, err));
	LV_TRY(env_limit("LANCEVER_S3_CONNECT_TIMEOUT_MS", 1, 600000, 10000, &conn, err));
	LV_TRY(env_limit("LANCEVER_S3_MAX_ATTEMPTS", 1, 20, 5, &att, err));
	LV_TRY(env_limit("LANCEVER_S3_MAX_OBJECT_BYTES", 1, LV__READ_MAX, LV__READ_MAX, &obj, err));
	LV_TRY(env_limit("LANCEVER_S3_LIST_MAX_PAGES", 1, 10000000, 100000, &pages, err));
	l->stall_s = (long)stall;
	l->connect_ms = (long)conn;
	l->attempts = (int)att;
	l->max_object = obj;
	l->list_max_pages = (long)pages;
	return 0;
}

int lv__storage_s3_open(lv_storage **out, const char *rest, const lv_storage_options *opts,
			lv_error *err)
{
	s3_limits lim;
	LV_TRY(read_limits(&lim, err));
	const lv_curl_api *cu = lv__curl_api(err);
	const lv_crypto_api *k = cu ? lv__crypto_api(err) : NULL;
	if (!k)
		return err ? err->code : LV_EUNSUPPORTED;
	const char *slash = strchr(rest, '/');
	size_t blen = slash ? (size_t)(slash - rest) : strlen(rest);
	if (blen == 0 || blen > 255)
		return lv__err(err, LV_EINVALID, "open s3://: missing bucket name");
	/* Bucket names are [a-z0-9.-] (plus legacy A-Z and _).  Anything else, such as
	 * "key:secret@bucket", is refused without echoing it: it may hold credentials. */
	for (size_t i = 0; i < blen; i++) {
		char c = rest[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '-' || c == '_'))
			return lv__err(err, LV_EINVALID,
				       "open s3://: invalid bucket name (credentials belong in AWS_* variables, not the URI)");
	}
	s3 *s = calloc(1, sizeof *s);
	if (!s)
		return lv__err(err, LV_ENOMEM, "out of memory");
	pthread_mutex_init(&s->mu, NULL);
	s->cu = cu;
	s->k = k;
	s->lim = lim;
	s->bucket = lv__strndup(rest, blen);
	const char *p = slash ? slash + 1 : "";
	size_t plen = strlen(p);
	while (plen && p[plen - 1] == '/')
		plen--;
	s->prefix = lv__strndup(p, plen);
	const char *endpoint = opts && opts->s3_endpoint ? opts->s3_endpoint : env("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL");
	const char *region = opts && opts->s3_region ? opts->s3_region : env("AWS_REGION", "AWS_DEFAULT_REGION");
	const char *ah = env("AWS_ALLOW_HTTP", NULL);
	bool allow_http = (opts && opts->s3_allow_http) || (ah && (!strcasecmp(ah, "true") || !strcmp(ah, "1")));
	s->region = lv__strdup(region ? region : "us-east-1");
	const char *akid = env("AWS_ACCESS_KEY_ID", NULL), *secret = env("AWS_SECRET_ACCESS_KEY", NULL);
	const char *token = env("AWS_SESSION_TOKEN", NULL);
	int rc = 0;
	if (!akid || !secret) {
		rc = lv__err(err, LV_EINVALID,
			     "open s3://%s: no credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)",
			     s->bucket ? s->bucket : "");
		goto fail;
	}
	s->akid = lv__strdup(akid);
	s->secret = lv__strdup(secret);
	s->token = token ? lv__strdup(token) : NULL;
	if (endpoint) {
		size_t el = strlen(endpoint);
		while (el && endpoint[el - 1] == '/')
			el--;
		s->endpoint = lv__strndup(endpoint, el);
		s->path_style = true;
	} else {
		s->endpoint = lv__sprintf("https://%s.s3.%s.amazonaws.com", s->bucket, s->region);
		s->path_style = false;
	}
	if (!s->bucket || !s->prefix || !s->region || !s->akid || !s->secret || !s->endpoint ||
	    (token && !s->token)) {
		rc = lv__err(err, LV_ENOMEM, "out of memory");
		goto fail;
	}
	if (!strncmp(s->endpoint, "http://", 7) && !allow_http) {
		rc = lv__err(err, LV_EINVALID,
			     "open s3://%s: the endpoint is plain HTTP; set AWS_ALLOW_HTTP=true or --s3-allow-http",
			     s->bucket);
		goto fail;
	}
	const char *hs = strstr(s->endpoint, "://");
	if (!hs || !hs[3]) {
		rc = lv__err(err, LV_EINVALID, "open s3://%s: invalid endpoint", s->bucket);
		goto fail;
	}
	const char *he = strchr(hs + 3, '/');
	s->host = he ? lv__strndup(hs + 3, (size_t)(he - hs - 3)) : lv__strdup(hs + 3);
	if (!s->host) {
		rc = lv__err(err, LV_ENOMEM, "out of memory");
		goto fail;
	}
	if (strchr(s->host, '@')) {
		rc = lv__err(err, LV_EINVALID,
			     "open s3://%s: the endpoint URL must not carry credentials", s->bucket);
		goto fail;
	}
	char describe[600];
	snprintf(describe, sizeof describe, "s3://%s%s%s", s->bucket, s->prefix[0] ? "/" : "", s->prefix);
	rc = lv__storage_new_kind(out, &s3_ops, s, describe, LV__STORAGE_S3, err);
	if (rc == 0)
		return 0;
fail:
	s3_close(s);
	return rc;
}
