/*
 * HTTP client of the object stores (http.h): handle pool, one exchange with
 * capped bodies, retries with full-jitter backoff inside a total deadline,
 * retries announced through lv__log.  Nothing from a response body reaches a
 * message except the error code a request's `code_of` extracts.
 */
#include "objstore/http.h"
#include "objstore/xml.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define POOL 64
#define SMALL_BODY_MAX (64u << 10) /* error bodies and small 2xx bodies */

struct lv__http {
	lv__http_limits lim;
	char *proxy, *noproxy, *user_agent;
	char service[24];
	const lv__curl_fns *cu;
	const lv__crypto_fns *k;
	pthread_mutex_t mu;
	CURL *pool[POOL];
	int npool;
};

struct lv__http_hdrs {
	const lv__curl_fns *cu;
	struct curl_slist *list;
	bool oom;
};

/* ---- limits ---- */

void lv__http_limits_default(lv__http_limits *l)
{
	memset(l, 0, sizeof *l);
	l->connect_ms = 10000;
	l->stall_s = 10;
	l->deadline_ms = 30000;
	l->attempts = 5;
	l->max_object = (uint64_t)4 << 30;
	l->list_max_pages = 100000;
}

/* An integer limit from the environment, in [lo, hi]; absent = unchanged. */
static int env_limit(const char *name, uint64_t lo, uint64_t hi, uint64_t *inout, lv_error *err)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	uint64_t x;
	if (!lv__parse_u64(v, strlen(v), &x) || x < lo || x > hi)
		return lv__err(err, LV_EINVALID, "%s: expected an integer from %llu to %llu", name,
			       (unsigned long long)lo, (unsigned long long)hi);
	*inout = x;
	return 0;
}

static int env_limits(lv__http_limits *l, lv_error *err)
{
	uint64_t stall = (uint64_t)l->stall_s, conn = (uint64_t)l->connect_ms,
		 att = (uint64_t)l->attempts, obj = l->max_object, pages = (uint64_t)l->list_max_pages,
		 dl = (uint64_t)l->deadline_ms / 1000;
	LV_TRY(env_limit("LANCEVER_S3_STALL_SECONDS", 1, 3600, &stall, err));
	LV_TRY(env_limit("LANCEVER_S3_CONNECT_TIMEOUT_MS", 1, 600000, &conn, err));
	LV_TRY(env_limit("LANCEVER_S3_MAX_ATTEMPTS", 1, 20, &att, err));
	LV_TRY(env_limit("LANCEVER_S3_MAX_OBJECT_BYTES", 1, (uint64_t)4 << 30, &obj, err));
	LV_TRY(env_limit("LANCEVER_S3_LIST_MAX_PAGES", 1, 10000000, &pages, err));
	LV_TRY(env_limit("LANCEVER_S3_DEADLINE_SECONDS", 1, 86400, &dl, err));
	l->stall_s = (int64_t)stall;
	l->connect_ms = (int64_t)conn;
	l->attempts = (int)att;
	l->max_object = obj;
	l->list_max_pages = (long)pages;
	l->deadline_ms = (int64_t)dl * 1000;
	return 0;
}

int lv__http_limits_read(lv__http_limits *l, lv__optbag *o, lv_error *err)
{
	lv__http_limits_default(l);
	LV_TRY(env_limits(l, err));
	const int64_t day = 86400000;
	LV_TRY(lv__opt_ms(o, LV_OPT("connect_timeout", "aws_connect_timeout", "azure_connect_timeout"),
			  NULL, 1000, 600000, &l->connect_ms, err));
	LV_TRY(lv__opt_ms(o, LV_OPT("timeout", "aws_timeout", "azure_timeout"), NULL, 1000, day,
			  &l->attempt_ms, err));
	/* Lance's client_retry_timeout is whole seconds; here it is the operation's deadline. */
	LV_TRY(lv__opt_ms(o, LV_OPT("client_retry_timeout"), NULL, 1000, day, &l->deadline_ms, err));
	uint64_t retries = (uint64_t)l->attempts - 1;
	LV_TRY(lv__opt_u64(o, LV_OPT("client_max_retries"), NULL, 0, 19, &retries, err));
	l->attempts = (int)retries + 1;
	LV_TRY(lv__opt_bool(o, LV_OPT("allow_invalid_certificates", "aws_allow_invalid_certificates",
				      "azure_allow_invalid_certificates"),
			    NULL, false, &l->insecure, err));
	l->proxy = lv__opt_get(o, LV_OPT("proxy_url", "aws_proxy_url", "azure_proxy_url"));
	l->noproxy = lv__opt_get(o, LV_OPT("proxy_excludes", "aws_proxy_excludes", "azure_proxy_excludes"));
	l->user_agent = lv__opt_get(o, LV_OPT("user_agent", "aws_user_agent", "azure_user_agent"));
	/* Tuning knobs of object_store's HTTP client that curl handles its own way (docs/operations.md). */
	lv__opt_accept(o, LV_OPT("download_retry_count", "pool_idle_timeout", "pool_max_idle_per_host",
				 "http1_only", "http2_keep_alive_interval", "http2_keep_alive_timeout",
				 "http2_keep_alive_while_idle", "http2_max_frame_size",
				 "randomize_addresses", "read_timeout", "default_content_type",
				 "use_opendal"));
	return lv__opt_refuse(o, LV_OPT("proxy_ca_certificate", "http2_only",
					"disable_system_certificates", "headers"),
			      "this store", err);
}

/* ---- client ---- */

int lv__http_new(lv__http **out, const lv__http_limits *lim, const char *service, lv_error *err)
{
	*out = NULL;
	const lv__curl_fns *cu = lv__curl_api(err);
	const lv__crypto_fns *k = cu ? lv__crypto_api(err) : NULL;
	if (!k)
		return err ? err->code : LV_EUNSUPPORTED;
	lv__http *h = lv__calloc(1, sizeof *h);
	if (!h)
		return lv__err(err, LV_ENOMEM, "out of memory");
	h->lim = *lim;
	h->cu = cu;
	h->k = k;
	snprintf(h->service, sizeof h->service, "%s", service);
	pthread_mutex_init(&h->mu, NULL);
	h->proxy = lim->proxy ? lv__strdup(lim->proxy) : NULL;
	h->noproxy = lim->noproxy ? lv__strdup(lim->noproxy) : NULL;
	h->user_agent = lim->user_agent ? lv__strdup(lim->user_agent)
					: lv__sprintf("lancever/%s", lv_version_string());
	if ((lim->proxy && !h->proxy) || (lim->noproxy && !h->noproxy) || !h->user_agent) {
		lv__http_free(h);
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	h->lim.proxy = h->proxy;
	h->lim.noproxy = h->noproxy;
	h->lim.user_agent = h->user_agent;
	*out = h;
	return 0;
}

void lv__http_free(lv__http *h)
{
	if (!h)
		return;
	for (int i = 0; i < h->npool; i++)
		h->cu->easy_cleanup(h->pool[i]);
	pthread_mutex_destroy(&h->mu);
	lv__free(h->proxy);
	lv__free(h->noproxy);
	lv__free(h->user_agent);
	lv__free(h);
}

const lv__crypto_fns *lv__http_crypto(const lv__http *h) { return h->k; }
const lv__http_limits *lv__http_get_limits(const lv__http *h) { return &h->lim; }

static CURL *take_handle(lv__http *h)
{
	CURL *c = NULL;
	pthread_mutex_lock(&h->mu);
	if (h->npool)
		c = h->pool[--h->npool];
	pthread_mutex_unlock(&h->mu);
	if (c)
		h->cu->easy_reset(c);
	else
		c = h->cu->easy_init();
	return c;
}

static void give_handle(lv__http *h, CURL *c)
{
	pthread_mutex_lock(&h->mu);
	if (h->npool < POOL) {
		h->pool[h->npool++] = c;
		c = NULL;
	}
	pthread_mutex_unlock(&h->mu);
	if (c)
		h->cu->easy_cleanup(c);
}

int lv__http_hdr(lv__http_hdrs *h, const char *fmt, ...)
{
	char line[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	char *big = NULL;
	if (n >= (int)sizeof line) { /* a long token (STS session tokens run to ~2 KB, SAS more) */
		big = lv__malloc((size_t)n + 1);
		if (!big)
			return (h->oom = true), LV_ENOMEM;
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	struct curl_slist *l = h->cu->slist_append(h->list, big ? big : line);
	if (big) {
		memset(big, 0, (size_t)n);
		lv__free(big);
	}
	if (!l)
		return (h->oom = true), LV_ENOMEM;
	h->list = l;
	return 0;
}

/* ---- one exchange ---- */

static uint64_t sat_add(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

/* How much of the body being received is kept before the transfer is stopped (not an error). */
static uint64_t keep_limit(const lv__http_resp *r)
{
	const lv__http_req *q = r->q;
	if (r->hstatus < 200 || r->hstatus > 299)
		return SMALL_BODY_MAX; /* an error body: its first bytes carry the code */
	if (q->ranged) /* 206: the range; 200 (Range ignored): the object up to its end */
		return r->hstatus == 206 ? q->range_len : sat_add(q->range_off, q->range_len);
	return q->keep_ok ? q->keep_ok : UINT64_MAX;
}

static size_t on_body(char *p, size_t sz, size_t n, void *u)
{
	lv__http_resp *r = u;
	size_t k = sz * n;
	uint64_t keep = keep_limit(r);
	uint64_t room = keep > r->body.len ? keep - r->body.len : 0;
	size_t take = k > room ? (size_t)room : k; /* only what is wanted, then stop */
	/* Never more than max_ok of a 2xx body, also of a ranged GET whose server
	 * ignored Range (the bytes up to the end of the range are needed then). */
	if (r->hstatus >= 200 && r->hstatus <= 299 && !r->q->keep_ok &&
	    r->body.len + take > r->limit_ok) {
		r->too_large = true;
		return 0;
	}
	if (lv__dbuf_add(&r->body, p, take) < 0)
		return 0;
	if (take < k) {
		r->enough = true;
		return 0;
	}
	return k;
}

/* The value of header `name` (with its ':') in line, or NULL. */
static const char *hval(const char *line, const char *name)
{
	size_t n = strlen(name);
	if (strncasecmp(line, name, n))
		return NULL;
	line += n;
	while (*line == ' ' || *line == '\t')
		line++;
	return line;
}

static size_t on_header(char *p, size_t sz, size_t n, void *u)
{
	lv__http_resp *r = u;
	size_t len = sz * n;
	char line[512];
	size_t l = len < sizeof line - 1 ? len : sizeof line - 1;
	memcpy(line, p, l);
	line[l] = 0;
	while (l && (line[l - 1] == '\r' || line[l - 1] == '\n'))
		line[--l] = 0;
	const char *x;
	if (!strncmp(line, "HTTP/", 5)) {
		/* a new response (after a 1xx): what came before does not count */
		const char *sp = strchr(line, ' ');
		r->hstatus = sp ? strtol(sp + 1, NULL, 10) : 0;
		r->has_length = r->has_range = false;
		r->content_length = r->range_start = 0;
		r->last_modified_ms = 0;
		r->ms_error_code[0] = 0;
	} else if ((x = hval(line, "content-length:"))) {
		uint64_t v;
		if (lv__parse_u64(x, strlen(x), &v)) {
			r->content_length = v;
			r->has_length = true;
			/* refuse an oversized body before receiving it (also the whole object a
			 * server sends when it ignores Range) */
			bool whole = !r->q->ranged || r->hstatus == 200;
			if (r->hstatus >= 200 && r->hstatus <= 299 && r->q->method[0] != 'H' && whole &&
			    !r->q->keep_ok && v > r->limit_ok) {
				r->too_large = true;
				return 0;
			}
		}
	} else if ((x = hval(line, "content-range:"))) {
		if (!strncmp(x, "bytes ", 6)) {
			x += 6;
			const char *dash = strchr(x, '-');
			uint64_t v;
			if (dash && lv__parse_u64(x, (size_t)(dash - x), &v)) {
				r->range_start = v;
				r->has_range = true;
			}
		}
	} else if ((x = hval(line, "last-modified:"))) {
		r->last_modified_ms = lv__rfc1123_ms(x);
	} else if ((x = hval(line, "x-ms-error-code:"))) {
		size_t j = 0;
		for (; x[j] && j < sizeof r->ms_error_code - 1; j++) {
			char c = x[j];
			bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
			r->ms_error_code[j] = ok ? c : '?';
		}
		r->ms_error_code[j] = 0;
	}
	return len;
}

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

typedef struct progress {
	const lv__http_resp *r;
	uint64_t deadline_ns;
	bool expired;
} progress;

/* Cuts an attempt still waiting for its answer when the operation's deadline passes. */
static int on_progress(void *u, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	progress *pg = u;
	if (pg->r->hstatus == 0 && lv__mono_ns() >= pg->deadline_ns) {
		pg->expired = true;
		return 1;
	}
	return 0;
}

static void set_method(lv__http *h, CURL *c, const lv__http_req *q, upload *up)
{
	const lv__curl_fns *cu = h->cu;
	if (!strcmp(q->method, "HEAD")) {
		cu->easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (!strcmp(q->method, "PUT")) {
		cu->easy_setopt(c, CURLOPT_UPLOAD, 1L);
		cu->easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		cu->easy_setopt(c, CURLOPT_READDATA, up);
		cu->easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)q->body_len);
	} else if (!strcmp(q->method, "POST")) {
		cu->easy_setopt(c, CURLOPT_POST, 1L);
		cu->easy_setopt(c, CURLOPT_POSTFIELDS, q->body ? (const char *)q->body : "");
		cu->easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)q->body_len);
	} else if (strcmp(q->method, "GET")) {
		cu->easy_setopt(c, CURLOPT_CUSTOMREQUEST, q->method);
	}
}

static void set_transfer(lv__http *h, CURL *c, lv__http_resp *r, progress *pg, int64_t left_ms)
{
	const lv__curl_fns *cu = h->cu;
	const lv__http_limits *l = &h->lim;
	cu->easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	cu->easy_setopt(c, CURLOPT_WRITEDATA, r);
	cu->easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	cu->easy_setopt(c, CURLOPT_HEADERDATA, r);
	cu->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	cu->easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	cu->easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	cu->easy_setopt(c, CURLOPT_XFERINFODATA, pg);
	int64_t conn = l->connect_ms < left_ms ? l->connect_ms : left_ms;
	cu->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(conn > 0 ? conn : 1));
	if (l->attempt_ms)
		cu->easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)l->attempt_ms);
	/* a stalled server (no answer, or a trickle): cut, then retry */
	cu->easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1024L);
	cu->easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)l->stall_s);
	cu->easy_setopt(c, CURLOPT_USERAGENT, h->user_agent);
	if (l->insecure) {
		cu->easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		cu->easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (h->proxy)
		cu->easy_setopt(c, CURLOPT_PROXY, h->proxy);
	if (h->noproxy)
		cu->easy_setopt(c, CURLOPT_NOPROXY, h->noproxy);
}

/* The host[:port] of a URL (no scheme, user info refused at open, no path or query). */
static const char *host_of(const char *url)
{
	const char *h = strstr(url, "://");
	return h ? h + 3 : url;
}

static size_t host_len(const char *url)
{
	const char *h = host_of(url);
	size_t n = strcspn(h, "/?#");
	return n > 200 ? 200 : n;
}

/* One attempt.  *retry says whether a failure (or answer) is transient. */
static int attempt(lv__http *h, const lv__http_req *q, lv__http_resp *r, uint64_t deadline_ns,
		   char *why, size_t whycap, bool *retry, lv_error *err)
{
	*retry = false;
	why[0] = 0;
	lv__http_hdrs hd = { h->cu, NULL, false };
	for (const char *const *x = q->headers; x && *x; x++)
		lv__http_hdr(&hd, "%s", *x);
	if (q->sign) {
		int rc = q->sign(q->ctx, q, &hd, err);
		if (rc < 0) {
			h->cu->slist_free_all(hd.list);
			return rc;
		}
	}
	lv__http_hdr(&hd, "Expect:"); /* no 100-continue round trip */
	CURL *c = hd.oom ? NULL : take_handle(h);
	if (!c) {
		h->cu->slist_free_all(hd.list);
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	upload up = { q->body, q->body_len };
	progress pg = { r, deadline_ns, false };
	uint64_t now = lv__mono_ns();
	int64_t left_ms = deadline_ns > now ? (int64_t)((deadline_ns - now) / 1000000) : 0;
	h->cu->easy_setopt(c, CURLOPT_URL, q->url);
	h->cu->easy_setopt(c, CURLOPT_HTTPHEADER, hd.list);
	set_transfer(h, c, r, &pg, left_ms);
	set_method(h, c, q, &up);
	CURLcode cc = h->cu->easy_perform(c);
	int rc = 0;
	const char *sn = q->service_name;
	if (r->too_large) {
		rc = lv__err(err, LV_ELIMIT, "%s %s %s: the response is larger than %llu bytes (the limit%s)",
			     sn, q->what, q->name, (unsigned long long)r->limit_ok,
			     q->ranged || q->keep_ok || r->limit_ok != h->lim.max_object
				     ? "" : "; LANCEVER_S3_MAX_OBJECT_BYTES raises it");
	} else if (cc == CURLE_WRITE_ERROR && r->enough) {
		cc = CURLE_OK; /* stopped on purpose: everything wanted was received */
	}
	if (rc == 0 && cc != CURLE_OK) {
		*retry = true;
		if (pg.expired)
			snprintf(why, whycap, "no answer before the deadline");
		else /* the host (never the path or query: a SAS lives there) */
			snprintf(why, whycap, "%s (%.*s)", h->cu->easy_strerror(cc), (int)host_len(q->url),
				 host_of(q->url));
		rc = LV_EIO;
	}
	if (rc == 0) {
		h->cu->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
		if (r->status >= 500 || r->status == 429 || (q->retry_on && q->retry_on(r))) {
			char code[64] = "";
			if (q->code_of)
				q->code_of(r, code, sizeof code);
			snprintf(why, whycap, "HTTP %ld%s%s", r->status, code[0] ? " " : "", code);
			*retry = true;
			rc = LV_EIO;
		}
	}
	give_handle(h, c);
	h->cu->slist_free_all(hd.list);
	return rc;
}

static void resp_reset(lv__http_resp *r, const lv__http_req *q)
{
	lv__dbuf_dispose(&r->body);
	memset(r, 0, sizeof *r);
	lv__dbuf_init(&r->body, (size_t)((uint64_t)4 << 30));
	r->q = q;
	r->limit_ok = q->max_ok ? q->max_ok : SMALL_BODY_MAX;
}

static double secs(uint64_t ns) { return (double)ns / 1e9; }

int lv__http_perform(lv__http *h, const lv__http_req *q, lv__http_resp *r, lv_error *err)
{
	const lv__http_limits *l = &h->lim;
	uint64_t t0 = lv__mono_ns();
	uint64_t deadline = t0 + (uint64_t)l->deadline_ms * 1000000u;
	memset(r, 0, sizeof *r);
	char why[160];
	for (int n = 1;; n++) {
		resp_reset(r, q);
		bool retry;
		int rc = attempt(h, q, r, deadline, why, sizeof why, &retry, err);
		if (rc == 0 || !retry)
			return rc;
		uint64_t now = lv__mono_ns();
		/* exponential backoff with full jitter: 50 ms, 100 ms, 200 ms, ... at most 5 s */
		unsigned cap = n <= 6 ? 50u << (n - 1) : 5000u;
		uint64_t wait = (uint64_t)((unsigned)rand() % (cap + 1)) * 1000000u;
		bool out_of_time = now + wait >= deadline;
		if (n >= l->attempts)
			return lv__err(err, LV_EIO, "%s %s %s: %s (after retries: %d attempt%s in %.1f s)",
				       q->service_name, q->what, q->name, why, n, n == 1 ? "" : "s",
				       secs(now - t0));
		if (out_of_time)
			return lv__err(err, LV_EIO,
				       "%s %s %s: %s (after retries: %d attempt%s in %.1f s, the %.0f s "
				       "deadline; storage option client_retry_timeout or "
				       "LANCEVER_S3_DEADLINE_SECONDS sets it)",
				       q->service_name, q->what, q->name, why, n, n == 1 ? "" : "s",
				       secs(now - t0), (double)l->deadline_ms / 1000);
		lv__log(LV_LOG_WARN, "%s: %s %s%s%s: %s, retrying (attempt %d of %d, %.1f s left of %.0f s)",
			h->service, q->what, q->root ? q->root : "", q->root ? "/" : "", q->name, why, n + 1, l->attempts, secs(deadline - now - wait),
			(double)l->deadline_ms / 1000);
		struct timespec ts = { (time_t)(wait / 1000000000u), (long)(wait % 1000000000u) };
		nanosleep(&ts, NULL);
	}
}

void lv__http_resp_dispose(lv__http_resp *r)
{
	lv__dbuf_dispose(&r->body);
}
