#include "util/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int lv__err(lv_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof err->message, fmt, ap);
		va_end(ap);
		err->code = code;
	}
	return code;
}

int lv__err_prefix(lv_error *err, int code, const char *fmt, ...)
{
	if (!err)
		return code;
	char prefix[LV_ERROR_MESSAGE_MAX];
	char old[LV_ERROR_MESSAGE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	memcpy(old, err->message, sizeof old);
	old[sizeof old - 1] = 0;
	snprintf(err->message, sizeof err->message, "%.200s: %.300s", prefix, old);
	if (err->code == 0)
		err->code = code;
	return err->code;
}

const char *lv_strerror(int code)
{
	switch (code) {
	case LV_OK: return "LV_OK";
	case LV_ENOTFOUND: return "LV_ENOTFOUND";
	case LV_ECORRUPT: return "LV_ECORRUPT";
	case LV_EEXISTS: return "LV_EEXISTS";
	case LV_EIO: return "LV_EIO";
	case LV_ENOMEM: return "LV_ENOMEM";
	case LV_EINVALID: return "LV_EINVALID";
	case LV_EUNSUPPORTED: return "LV_EUNSUPPORTED";
	case LV_ELIMIT: return "LV_ELIMIT";
	case LV_ECONFLICT: return "LV_ECONFLICT";
	case LV_ETAGGED: return "LV_ETAGGED";
	default: return "LV_EUNKNOWN";
	}
}

void lv_buf_dispose(lv_buf *b)
{
	if (!b)
		return;
	free(b->ptr);
	b->ptr = NULL;
	b->size = 0;
}

/* LV_VERSION_STRING comes from project(VERSION) in CMakeLists.txt, the one place it is written. */
const char *lv_version_string(void) { return LV_VERSION_STRING; }
const char *lv_version(void) { return LV_VERSION_STRING; }
int lv_version_number(void) { return LV_VERSION_NUMBER; }

void *lv__malloc(size_t n) { return malloc(n ? n : 1); }
void *lv__calloc(size_t n, size_t size) { return calloc(n ? n : 1, size ? size : 1); }
void *lv__realloc(void *p, size_t n) { return realloc(p, n ? n : 1); }
void *lv__reallocarray(void *p, size_t n, size_t size)
{
	size_t t;
	if (lv__mul_overflow(n, size, &t))
		return NULL;
	return lv__realloc(p, t);
}

void *lv__memdupz(const void *s, size_t n)
{
	return n == SIZE_MAX ? NULL : lv__copyz(malloc(n + 1), s, n);
}

int lv__buf_copy(lv_buf *out, const lv_buf *b)
{
	uint8_t *p = lv__memdupz(b->ptr, b->size);
	if (!p)
		return LV_ENOMEM;
	out->ptr = p;
	out->size = b->size;
	return 0;
}

char *lv__strndup(const char *s, size_t n) { return lv__memdupz(s, n); }

char *lv__strdup(const char *s) { return s ? lv__strndup(s, strlen(s)) : NULL; }

void lv__free_secret(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s)); /* a plain memset before free() may be optimised away */
	free(s);
}

char *lv__sprintf(const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = NULL;
	if (n >= 0 && (s = malloc((size_t)n + 1)))
		vsnprintf(s, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	return s;
}

void *lv__grow(void *arr, size_t *cap, size_t n, size_t elem, size_t first)
{
	if (n < *cap)
		return arr;
	size_t nc = *cap ? *cap * 2 : first;
	if (nc <= n)
		nc = n + 1;
	void *nv = lv__reallocarray(arr, nc, elem);
	if (nv)
		*cap = nc;
	return nv;
}

/* ---- dbuf ---- */

void lv__dbuf_init(lv__dbuf *b, size_t limit)
{
	memset(b, 0, sizeof *b);
	b->limit = limit ? limit : SIZE_MAX / 2;
}

void lv__dbuf_dispose(lv__dbuf *b)
{
	free(b->ptr);
	b->ptr = NULL;
	b->len = b->cap = 0;
}

int lv__dbuf_reserve(lv__dbuf *b, size_t extra)
{
	size_t need;
	if (b->oom)
		return LV_ENOMEM;
	if (lv__add_overflow(b->len, extra, &need) || lv__add_overflow(need, 1, &need) ||
	    need > b->limit) {
		b->oom = true;
		return LV_ELIMIT;
	}
	if (need <= b->cap)
		return 0;
	size_t nc = b->cap ? b->cap : 256;
	while (nc < need)
		nc = nc > SIZE_MAX / 4 ? need : nc * 2;
	if (nc > b->limit + 1)
		nc = b->limit + 1;
	uint8_t *p = realloc(b->ptr, nc);
	if (!p) {
		b->oom = true;
		return LV_ENOMEM;
	}
	b->ptr = p;
	b->cap = nc;
	return 0;
}

int lv__dbuf_add(lv__dbuf *b, const void *p, size_t n)
{
	LV_TRY(lv__dbuf_reserve(b, n));
	if (n)
		memcpy(b->ptr + b->len, p, n);
	b->len += n;
	b->ptr[b->len] = 0;
	return 0;
}

int lv__dbuf_addc(lv__dbuf *b, uint8_t c) { return lv__dbuf_add(b, &c, 1); }
int lv__dbuf_adds(lv__dbuf *b, const char *s) { return lv__dbuf_add(b, s, strlen(s)); }

int lv__dbuf_add_zeros(lv__dbuf *b, size_t n)
{
	LV_TRY(lv__dbuf_reserve(b, n));
	memset(b->ptr + b->len, 0, n);
	b->len += n;
	b->ptr[b->len] = 0;
	return 0;
}

int lv__dbuf_printf(lv__dbuf *b, const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	int rc = n < 0 ? LV_EINVALID : lv__dbuf_reserve(b, (size_t)n);
	if (rc == 0) {
		vsnprintf((char *)b->ptr + b->len, (size_t)n + 1, fmt, ap2);
		b->len += (size_t)n;
	}
	va_end(ap2);
	return rc;
}

int lv__dbuf_add_u16le(lv__dbuf *b, uint16_t v)
{
	uint8_t x[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	return lv__dbuf_add(b, x, 2);
}
int lv__dbuf_add_u32le(lv__dbuf *b, uint32_t v)
{
	uint8_t x[4];
	for (int i = 0; i < 4; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	return lv__dbuf_add(b, x, 4);
}
int lv__dbuf_add_u64le(lv__dbuf *b, uint64_t v)
{
	uint8_t x[8];
	for (int i = 0; i < 8; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	return lv__dbuf_add(b, x, 8);
}

int lv__dbuf_take(lv__dbuf *b, lv_buf *out)
{
	if (b->oom)
		return LV_ENOMEM;
	if (!b->ptr)
		LV_TRY(lv__dbuf_reserve(b, 0));
	b->ptr[b->len] = 0;
	out->ptr = b->ptr;
	out->size = b->len;
	b->ptr = NULL;
	b->len = b->cap = 0;
	return 0;
}

char *lv__dbuf_take_str(lv__dbuf *b)
{
	lv_buf out;
	if (lv__dbuf_take(b, &out) < 0) {
		lv__dbuf_dispose(b);
		return NULL;
	}
	return (char *)out.ptr;
}

size_t lv__utf8_decode(const void *s, size_t n, uint32_t *cp)
{
	const unsigned char *p = s;
	unsigned c = p[0];
	size_t len;
	uint32_t min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF) { len = 2; min = 0x80; }
	else if (c >= 0xE0 && c <= 0xEF) { len = 3; min = 0x800; }
	else if (c >= 0xF0 && c <= 0xF4) { len = 4; min = 0x10000; }
	else return 0;
	if (n < len)
		return 0;
	uint32_t v = c & (0x7Fu >> len);
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (p[i] & 0x3F);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return len;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	uint32_t cp;
	return lv__utf8_decode(s, n, &cp);
}

bool lv__utf8_valid(const void *s, size_t n)
{
	const unsigned char *p = s;
	size_t i = 0;
	while (i < n) {
		/* ASCII runs, 8 bytes at a time: paths and names are nearly always ASCII */
		while (i + 8 <= n) {
			uint64_t w;
			memcpy(&w, p + i, 8);
			if (w & 0x8080808080808080ull)
				break;
			i += 8;
		}
		if (i >= n)
			break;
		size_t l = utf8_seq(p + i, n - i);
		if (l == 0)
			return false;
		i += l;
	}
	return true;
}

int lv__json_escape(lv__dbuf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	LV_TRY(lv__dbuf_addc(b, '"'));
	size_t i = 0;
	while (i < n) {
		unsigned char c = p[i];
		if (c == '"' || c == '\\') {
			LV_TRY(lv__dbuf_addc(b, '\\'));
			LV_TRY(lv__dbuf_addc(b, c));
			i++;
		} else if (c < 0x20) {
			switch (c) {
			case '\n': LV_TRY(lv__dbuf_adds(b, "\\n")); break;
			case '\r': LV_TRY(lv__dbuf_adds(b, "\\r")); break;
			case '\t': LV_TRY(lv__dbuf_adds(b, "\\t")); break;
			case '\b': LV_TRY(lv__dbuf_adds(b, "\\b")); break;
			case '\f': LV_TRY(lv__dbuf_adds(b, "\\f")); break;
			default: LV_TRY(lv__dbuf_printf(b, "\\u%04x", c)); break;
			}
			i++;
		} else if (c < 0x80) {
			LV_TRY(lv__dbuf_addc(b, c));
			i++;
		} else {
			size_t l = utf8_seq(p + i, n - i);
			if (l == 0) {
				LV_TRY(lv__dbuf_adds(b, "\\ufffd"));
				i++;
			} else {
				LV_TRY(lv__dbuf_add(b, p + i, l));
				i += l;
			}
		}
	}
	return lv__dbuf_addc(b, '"');
}

bool lv__parse_u64(const char *s, size_t n, uint64_t *out)
{
	if (n == 0 || n > 20)
		return false;
	/* Up to 19 digits cannot overflow (10^19 - 1 < 2^64); only a 20th is checked. */
	size_t fast = n < 19 ? n : 19;
	uint64_t v = 0;
	for (size_t i = 0; i < fast; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';
		if (d > 9)
			return false;
		v = v * 10 + d;
	}
	if (n == 20) {
		unsigned d = (unsigned)(unsigned char)s[19] - '0';
		if (d > 9 || __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)d, &v))
			return false;
	}
	*out = v;
	return true;
}

int64_t lv__now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t lv__mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- thread pool ---- */

typedef struct pf_state {
	size_t n;
	size_t next;
	pthread_mutex_t mu;
	lv__parallel_fn fn;
	void *arg;
} pf_state;

static void *pf_worker(void *p)
{
	pf_state *s = p;
	for (;;) {
		pthread_mutex_lock(&s->mu);
		size_t i = s->next < s->n ? s->next++ : s->n;
		pthread_mutex_unlock(&s->mu);
		if (i >= s->n)
			break;
		s->fn(i, s->arg);
	}
	return NULL;
}

int lv__parallel_for(size_t n, int threads, lv__parallel_fn fn, void *arg)
{
	if (threads <= 1 || n <= 1) {
		for (size_t i = 0; i < n; i++)
			fn(i, arg);
		return 0;
	}
	if ((size_t)threads > n)
		threads = (int)n;
	if (threads > 256)
		threads = 256;
	pf_state s = { .n = n, .next = 0, .fn = fn, .arg = arg };
	pthread_mutex_init(&s.mu, NULL);
	pthread_t tids[256];
	int started = 0;
	for (int t = 0; t < threads - 1; t++) {
		if (pthread_create(&tids[t], NULL, pf_worker, &s) != 0)
			break;
		started++;
	}
	pf_worker(&s); /* the caller works too */
	for (int t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	pthread_mutex_destroy(&s.mu);
	return 0;
}

/* ---- log hook (lancever/common.h): the one piece of process-wide state ---- */

static pthread_mutex_t lv_log_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t lv_log_once = PTHREAD_ONCE_INIT;

/* A fork() while another thread holds the lock must not leave it held in the child. */
static void log_child_reinit(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	lv_log_mu = fresh;
}

static void log_register_atfork(void)
{
	if (pthread_atfork(NULL, NULL, log_child_reinit) != 0) {
		/* without the handler only a fork racing a log call is affected */
	}
}
static lv_log_fn lv_log_handler;
static void *lv_log_ctx;

void lv_set_log_handler(lv_log_fn fn, void *ctx)
{
	pthread_once(&lv_log_once, log_register_atfork);
	pthread_mutex_lock(&lv_log_mu);
	lv_log_handler = fn;
	lv_log_ctx = fn ? ctx : NULL;
	pthread_mutex_unlock(&lv_log_mu);
}

void lv__log(int level, const char *fmt, ...)
{
	pthread_once(&lv_log_once, log_register_atfork);
	pthread_mutex_lock(&lv_log_mu);
	lv_log_fn fn = lv_log_handler;
	void *ctx = lv_log_ctx;
	pthread_mutex_unlock(&lv_log_mu);
	if (!fn)
		return;
	char msg[LV_ERROR_MESSAGE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fn(level, msg, ctx); /* outside the lock: a handler may log or replace itself */
}

size_t lv__lower_bound_u64(const void *base, size_t n, size_t size, size_t off, uint64_t key)
{
	const unsigned char *b = base;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;
		memcpy(&k, b + mid * size + off, sizeof k);
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
