/*
 * metrics.c - `lancever watch --metrics ADDR`: the watcher's statistics (lv_watch_snapshot_take)
 * in the Prometheus text exposition format 0.0.4, served over HTTP by libmicrohttpd.
 *
 * Invariants:
 * - libmicrohttpd is loaded (dlopen) when --metrics is given, never otherwise, so the command
 *   starts on a machine without it (the wheel's command: cmake/wheel.cmake) and only
 *   --metrics fails there, naming the library.  Its header is the one CMake found.
 * - The address: "PORT", ":PORT", "HOST:PORT" or "[V6]:PORT".  Without HOST it is 127.0.0.1.
 *   HOST must be a numeric address or "localhost"; a host that is named is bound as named (the
 *   explicit choice to expose the endpoint: it has no authentication).  Port 0 picks a free
 *   port, which is printed on stderr.
 * - Each scrape takes one snapshot (consistent across tables) and renders it into one buffer;
 *   only GET and HEAD of "/metrics" (and "/") are answered, anything else is 404 / 405.
 * - Label values are escaped as the format requires (\\, \", \n) and bytes that are not
 *   UTF-8 become U+FFFD; table names come from disk.
 * - Per-table series carry target/table/branch labels; the total is the series without them,
 *   so `sum(m{table!=""})` equals the unlabelled total.
 */
#include "cli.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#ifndef LV_MHD_SONAME
#define LV_MHD_SONAME "libmicrohttpd.so.12"
#endif

/* ---- the library, loaded on use ---- */

typedef struct mhd_fns {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_create_response_from_buffer) *create_response;
	__typeof__(MHD_add_response_header) *add_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_get_daemon_info) *daemon_info;
} mhd_fns;

struct lvcli_metrics {
	void *dl;
	mhd_fns f;
	struct MHD_Daemon *d;
	lv_watcher *w;
};

static int load(lvcli_metrics *m)
{
	static const char *const names[] = { "MHD_start_daemon", "MHD_stop_daemon",
		"MHD_create_response_from_buffer", "MHD_add_response_header", "MHD_queue_response",
		"MHD_destroy_response", "MHD_get_daemon_info" };
	void **slots[] = { (void **)&m->f.start_daemon, (void **)&m->f.stop_daemon,
		(void **)&m->f.create_response, (void **)&m->f.add_header, (void **)&m->f.queue_response,
		(void **)&m->f.destroy_response, (void **)&m->f.daemon_info };
	m->dl = dlopen(LV_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!m->dl) {
		const char *e = dlerror();
		fprintf(stderr, "lancever: --metrics needs %s (Debian: libmicrohttpd12), which could not be loaded (%.200s)\n",
			LV_MHD_SONAME, e ? e : "not found");
		return 1;
	}
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		void *p = dlsym(m->dl, names[i]);
		if (!p) {
			fprintf(stderr, "lancever: --metrics needs %s with %s, which it lacks\n", LV_MHD_SONAME, names[i]);
			return 1;
		}
		memcpy(slots[i], &p, sizeof p); /* object pointer -> function pointer slot */
	}
	return 0;
}

/* ---- the text, in a growable buffer ---- */

typedef struct tbuf {
	char *p;
	size_t len, cap;
	bool oom;
} tbuf;

static bool grow(tbuf *b, size_t more)
{
	if (b->oom)
		return false;
	if (b->len + more + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + more + 1)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

static void put(tbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(tbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !grow(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* A label value as the exposition format escapes it. */
static void put_label(tbuf *b, const char *s)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)u);
	for (size_t i = 0; i < n;) {
		size_t k = lvcli_utf8_len(u + i, n - i);
		if (k == 0) {
			put(b, "\xEF\xBF\xBD");
			i++;
		} else if (u[i] == '\\' || u[i] == '"') {
			put(b, "\\%c", u[i++]);
		} else if (u[i] == '\n') {
			put(b, "\\n");
			i++;
		} else if (grow(b, k)) {
			memcpy(b->p + b->len, u + i, k);
			b->len += k;
			b->p[b->len] = '\0';
			i += k;
		} else {
			return;
		}
	}
}

/* `{target="..",table="..",branch=".."` for a table (no closing brace), "" for the total. */
static void put_labels(tbuf *b, const lv_watch_table_stats *t, bool total, const char *extra)
{
	if (total && !extra)
		return;
	put(b, "{");
	if (!total) {
		put(b, "target=\"");
		put_label(b, t->target);
		put(b, "\",table=\"");
		put_label(b, t->table);
		put(b, "\",branch=\"");
		put_label(b, t->branch ? t->branch : "");
		put(b, "\"%s", extra ? "," : "");
	}
	if (extra)
		put(b, "%s", extra);
	put(b, "}");
}

typedef struct family {
	const char *name, *type, *help;
	size_t off;   /* of the uint64_t counter (or int64_t gauge) in lv_watch_table_stats */
	bool signed_; /* an int64_t field */
	int scale;    /* 1000: milliseconds shown in seconds */
} family;

#define F(name, type, field, help, sg, sc) { name, type, help, offsetof(lv_watch_table_stats, field), sg, sc }
static const family families[] = {
	F("lancever_watch_versions_captured_total", "counter", captured, "Versions read and recorded.", false, 0),
	F("lancever_watch_versions_missed_total", "counter", missed,
	  "Versions recorded as a gap: their manifest was gone before it could be read.", false, 0),
	F("lancever_watch_requests_total", "counter", requests, "Storage requests made.", false, 0),
	F("lancever_watch_errors_total", "counter", errors, "Failed polls, flushes and opens.", false, 0),
	F("lancever_watch_flushes_total", "counter", flushes, "Flushes that wrote checkpoints.", false, 0),
	F("lancever_watch_polls_total", "counter", polls, "Polls made.", false, 0),
	F("lancever_watch_newest_version", "gauge", newest_version, "Newest version known.", false, 0),
	F("lancever_watch_last_lag_seconds", "gauge", last_lag_ms,
	  "Lag of the last poll that found versions (read time - commit time of the newest manifest read).", true, 1000),
	F("lancever_watch_poll_interval_seconds", "gauge", interval_ms, "Current poll interval.", true, 1000),
};
#undef F

static void put_value(tbuf *b, const lv_watch_table_stats *t, const family *f)
{
	const char *p = (const char *)t + f->off;
	if (f->signed_) {
		int64_t v;
		memcpy(&v, p, sizeof v);
		if (f->scale && v < 0)
			put(b, " NaN\n"); /* no observation yet */
		else if (f->scale)
			put(b, " %" PRId64 ".%03" PRId64 "\n", v / 1000, v % 1000);
		else
			put(b, " %" PRId64 "\n", v);
	} else {
		uint64_t v;
		memcpy(&v, p, sizeof v);
		put(b, " %" PRIu64 "\n", v);
	}
}

static void put_histogram(tbuf *b, const lv_watch_table_stats *t, bool total)
{
	const char *n = "lancever_watch_lag_seconds";
	uint64_t cum = 0;
	for (size_t i = 0; i < LV_WATCH_LAG_BUCKETS; i++) {
		char le[40];
		int64_t ms = lv_watch_lag_bound(i);
		cum += t->lag_buckets[i];
		if (ms < 0)
			snprintf(le, sizeof le, "le=\"+Inf\"");
		else
			snprintf(le, sizeof le, "le=\"%" PRId64 ".%03" PRId64 "\"", ms / 1000, ms % 1000);
		put(b, "%s_bucket", n);
		put_labels(b, t, total, le);
		put(b, " %" PRIu64 "\n", cum);
	}
	int64_t s = t->lag_sum_ms < 0 ? 0 : t->lag_sum_ms;
	put(b, "%s_sum", n);
	put_labels(b, t, total, NULL);
	put(b, " %" PRId64 ".%03" PRId64 "\n", s / 1000, s % 1000);
	put(b, "%s_count", n);
	put_labels(b, t, total, NULL);
	put(b, " %" PRIu64 "\n", t->lag_count);
}

/* The whole exposition of snapshot s (b->oom on failure). */
static void render(tbuf *b, const lv_watch_snapshot *s)
{
	size_t n = lv_watch_snapshot_count(s);
	const lv_watch_table_stats *tot = lv_watch_snapshot_total(s);
	put(b, "# HELP lancever_watch_tables Tables watched.\n# TYPE lancever_watch_tables gauge\n");
	put(b, "lancever_watch_tables %" PRIu64 "\n", tot ? tot->tables : 0);
	for (size_t k = 0; k < sizeof families / sizeof families[0]; k++) {
		const family *f = &families[k];
		put(b, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name, f->type);
		for (size_t i = 0; i < n; i++) {
			const lv_watch_table_stats *t = lv_watch_snapshot_table(s, i);
			put(b, "%s", f->name);
			put_labels(b, t, false, NULL);
			put_value(b, t, f);
		}
		if (tot && f->off != offsetof(lv_watch_table_stats, interval_ms)) {
			put(b, "%s", f->name);
			put_value(b, tot, f);
		}
	}
	put(b, "# HELP lancever_watch_notified 1 when the store notifies new manifests (inotify), 0 when polled only.\n"
	       "# TYPE lancever_watch_notified gauge\n");
	for (size_t i = 0; i < n; i++) {
		const lv_watch_table_stats *t = lv_watch_snapshot_table(s, i);
		put(b, "lancever_watch_notified");
		put_labels(b, t, false, NULL);
		put(b, " %d\n", t->notified ? 1 : 0);
	}
	put(b, "# HELP lancever_watch_lag_seconds Capture lag of each poll that found versions.\n"
	       "# TYPE lancever_watch_lag_seconds histogram\n");
	for (size_t i = 0; i < n; i++)
		put_histogram(b, lv_watch_snapshot_table(s, i), false);
	if (tot)
		put_histogram(b, tot, true);
}

/* ---- the server ---- */

static enum MHD_Result answer(lvcli_metrics *m, struct MHD_Connection *c, unsigned status, const char *type,
			      const char *body, size_t len)
{
	struct MHD_Response *r = m->f.create_response(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	m->f.add_header(r, "Content-Type", type);
	enum MHD_Result ok = m->f.queue_response(c, status, r);
	m->f.destroy_response(r);
	return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *ver, const char *upload, size_t *upload_size, void **req)
{
	(void)ver;
	(void)upload;
	lvcli_metrics *m = cls;
	static int first;
	if (*req == NULL) { /* the headers: answer once the (empty) body is in */
		*req = &first;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0; /* a body is read and ignored */
		return MHD_YES;
	}
	const char *text = "text/plain; charset=utf-8";
	if (strcmp(url, "/metrics") != 0 && strcmp(url, "/") != 0)
		return answer(m, c, MHD_HTTP_NOT_FOUND, text, "not found: the metrics are at /metrics\n", 39);
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return answer(m, c, MHD_HTTP_METHOD_NOT_ALLOWED, text, "GET /metrics\n", 13);
	lv_watch_snapshot *s = NULL;
	lv_error err = { 0 };
	if (lv_watch_snapshot_take(&s, m->w, &err) != 0)
		return answer(m, c, MHD_HTTP_INTERNAL_SERVER_ERROR, text, "snapshot failed\n", 16);
	tbuf b = { 0 };
	render(&b, s);
	lv_watch_snapshot_free(s);
	enum MHD_Result ok = b.oom ? answer(m, c, MHD_HTTP_INTERNAL_SERVER_ERROR, text, "out of memory\n", 14)
				   : answer(m, c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", b.p, b.len);
	free(b.p);
	return ok;
}

/* Parses ADDR into *sa (port in network order); 0, or 2 after a usage message. */
static int parse_addr(const char *addr, struct sockaddr_storage *sa, bool *v6, unsigned *port)
{
	char host[64] = "127.0.0.1";
	const char *p = strrchr(addr, ':');
	const char *ps = p ? p + 1 : addr;
	if (p && p != addr) {
		const char *h = addr;
		size_t hl = (size_t)(p - addr);
		if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']') {
			h++;
			hl -= 2;
		}
		if (hl == 0 || hl >= sizeof host)
			return lvcli_usage_error("--metrics '%s': not HOST:PORT", lvcli_esc(addr));
		memcpy(host, h, hl);
		host[hl] = '\0';
		if (strcmp(host, "localhost") == 0)
			strcpy(host, "127.0.0.1");
	}
	char *end;
	errno = 0;
	unsigned long n = strtoul(ps, &end, 10);
	if (!*ps || *end || errno || n > 65535 || ps[0] == '-' || ps[0] == '+')
		return lvcli_usage_error("--metrics '%s': the port must be a number 0-65535", lvcli_esc(addr));
	*port = (unsigned)n;
	memset(sa, 0, sizeof *sa);
	struct sockaddr_in *s4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)n);
		*v6 = false;
	} else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)n);
		*v6 = true;
	} else {
		return lvcli_usage_error("--metrics '%s': HOST must be a numeric address or localhost", lvcli_esc(addr));
	}
	return 0;
}

int lvcli_metrics_start(lvcli_metrics **out, lv_watcher *w, const char *addr)
{
	*out = NULL;
	struct sockaddr_storage sa;
	bool v6 = false;
	unsigned port = 0;
	int st = parse_addr(addr ? addr : "", &sa, &v6, &port);
	if (st)
		return st;
	lvcli_metrics *m = calloc(1, sizeof *m);
	if (!m) {
		fprintf(stderr, "lancever: --metrics: out of memory\n");
		return 1;
	}
	m->w = w;
	if (load(m) != 0) {
		lvcli_metrics_stop(m);
		return 1;
	}
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | (v6 ? MHD_USE_IPv6 : 0);
	m->d = m->f.start_daemon(flags, (uint16_t)port, NULL, NULL, on_request, m, MHD_OPTION_SOCK_ADDR,
				 (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_LIMIT, 16u, MHD_OPTION_CONNECTION_TIMEOUT,
				 10u, MHD_OPTION_END);
	if (!m->d) {
		fprintf(stderr, "lancever: --metrics %s: cannot listen there (in use, or not an address of this machine)\n",
			lvcli_esc(addr));
		lvcli_metrics_stop(m);
		return 1;
	}
	if (port == 0) {
		const union MHD_DaemonInfo *i = m->f.daemon_info(m->d, MHD_DAEMON_INFO_BIND_PORT);
		char host[INET6_ADDRSTRLEN] = "?";
		if (v6)
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&sa)->sin6_addr, host, sizeof host);
		else
			inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr, host, sizeof host);
		fprintf(stderr, "lancever: metrics at http://%s%s%s:%u/metrics\n", v6 ? "[" : "", host, v6 ? "]" : "",
			i ? (unsigned)i->port : 0u);
	}
	*out = m;
	return 0;
}

void lvcli_metrics_stop(lvcli_metrics *m)
{
	if (!m)
		return;
	if (m->d)
		m->f.stop_daemon(m->d);
	if (m->dl)
		dlclose(m->dl);
	free(m);
}
