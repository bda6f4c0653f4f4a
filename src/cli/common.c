/*
 * What every command shares: argument parsing against the command's option table, the
 * one number rule, "did you mean", messages on stderr, escaping of names from disk (text
 * and JSON), opening a dataset with the global options, and its warnings.
 *
 * Invariants: usage errors return 2 and print nothing on stdout; every string from disk
 * reaches the terminal through lvcli_esc and JSON through lvcli_json_strn, so neither ever
 * carries a control character or a byte that is not UTF-8.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli.h"

/* ---- numbers ---- */

bool lvcli_parse_u64_strict(const char *s, uint64_t max, uint64_t *out)
{
	if (!s || !*s)
		return false;
	uint64_t v = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		unsigned d = (unsigned)(*p - '0');
		if (v > (max - d) / 10)
			return false; /* v * 10 + d > max, without overflowing */
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

int lvcli_parse_number(const char *what, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	if (lvcli_parse_u64_strict(s, max, &v) && v >= min) {
		*out = v;
		return 0;
	}
	/* One message shape: what is wanted, the largest value allowed, what was given. */
	if (min <= 1 && max >= INT64_MAX)
		return lvcli_usage_error("%s wants a %s integer (at most %" PRIu64 "), got '%s'", what,
					 min ? "positive" : "non-negative", max, lvcli_esc(s));
	return lvcli_usage_error("%s wants an integer in %" PRIu64 "..%" PRIu64 ", got '%s'", what,
				 min, max, lvcli_esc(s));
}

int lvcli_missing_value(const char *opt)
{
	return lvcli_usage_error("missing value for %s", opt);
}

/* ---- did you mean ---- */

/* Optimal string alignment distance (an adjacent swap costs 1), capped at 31 characters. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	if (n > 31 || m > 31)
		return 99;
	size_t d[32][32];
	for (size_t i = 0; i <= n; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			size_t c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < c)
				c = d[i - 2][j - 2] + 1;
			d[i][j] = c;
		}
	return d[n][m];
}

const char *lvcli_did_you_mean(const char *s, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX, len = strlen(s);
	for (size_t i = 0; i < n; i++) {
		/* an abbreviation of one name ("--older" for "--older-than") */
		if (len >= 4 && !strncmp(names[i], s, len))
			return names[i];
		size_t d = edit_distance(s, names[i]);
		if (d < best_d) {
			best_d = d;
			best = names[i];
		}
	}
	/* a typo: one or two edits, fewer than a third of the word */
	return best && best_d <= 2 && best_d * 3 <= len ? best : NULL;
}

int lvcli_unknown_option(const lvcli_cmd *c, const char *opt)
{
	const char *names[24];
	size_t n = 0;
	for (const lvcli_opt *o = c->opts; o && o->name && n < 22; o++)
		names[n++] = o->name;
	names[n++] = "--help";
	const char *hint = lvcli_did_you_mean(opt, names, n);
	if (hint)
		return lvcli_usage_error("%s: unknown option '%s' (did you mean %s?)", c->name,
					 lvcli_esc(opt), hint);
	lvcli_usage_error("%s: unknown option '%s'", c->name, lvcli_esc(opt));
	fputs("usage: lancever ", stderr);
	lvcli_synopsis(stderr, c);
	return 2;
}

/* ---- the option parser ---- */

static const lvcli_opt *find_opt(const lvcli_cmd *c, const char *s, size_t n)
{
	for (const lvcli_opt *o = c->opts; o && o->name; o++)
		if (strlen(o->name) == n && !strncmp(o->name, s, n))
			return o;
	return NULL;
}

/* Stores one option's value; 0 or the exit status of a usage error. */
static int set_opt(const lvcli_opt *o, const char *v, lvcli_args *a)
{
	void *dst = (char *)a + o->off;
	switch (o->kind) {
	case LVCLI_FLAG:
	case LVCLI_FLAG_OFF:
		*(bool *)dst = o->kind == LVCLI_FLAG;
		return 0;
	case LVCLI_NUMBER:
		return lvcli_parse_number(o->name, v, o->min, o->max, (uint64_t *)dst);
	case LVCLI_FORMAT:
		return lvcli_format_set(o->name, v, (int *)dst);
	case LVCLI_STRING:
		*(const char **)dst = v;
		return 0;
	default: {
		lv_error e = { 0 };
		if (lv_parse_duration(v, (int64_t *)dst, &e) < 0)
			return lvcli_usage_error("%s wants a duration such as 7d, 36h, 90m or 1d12h, "
						 "got '%s'", o->name, lvcli_esc(v));
		return 0;
	}
	}
}

/* Positional arguments: as many as c->args names. */
static int check_positionals(const lvcli_cmd *c, const lvcli_args *a)
{
	int want = 0;
	for (const char *p = c->args; p && *p; want++) {
		p += strcspn(p, " ");
		p += strspn(p, " ");
	}
	if (a->npos == want)
		return 0;
	if (a->npos < want) {
		/* name the first missing one */
		const char *p = c->args;
		for (int i = 0; i < a->npos; i++) {
			p += strcspn(p, " ");
			p += strspn(p, " ");
		}
		lvcli_usage_error("%s: missing %.*s", c->name, (int)strcspn(p, " "), p);
	} else {
		lvcli_usage_error("%s: unexpected argument '%s'", c->name, lvcli_esc(a->pos[want]));
	}
	fputs("usage: lancever ", stderr);
	lvcli_synopsis(stderr, c);
	return 2;
}

int lvcli_parse(int argc, char **argv, const lvcli_cmd *c, lvcli_args *a)
{
	memset(a, 0, sizeof *a);
	a->older_than_ms = -1;
	a->keep_one_per_ms = -1;
	a->error_if_tagged = true;
	bool args_only = false; /* after "--": every word is a positional argument */
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (!args_only && !strcmp(s, "--")) {
			args_only = true;
			continue;
		}
		/* a negative number is a (bad) positional value, not an option */
		if (args_only || s[0] != '-' || !s[1] || (s[1] >= '0' && s[1] <= '9')) {
			if (a->npos < 4)
				a->pos[a->npos] = s;
			a->npos++;
			continue;
		}
		const char *eq = strchr(s, '=');
		size_t n = eq ? (size_t)(eq - s) : strlen(s);
		const lvcli_opt *o = find_opt(c, s, n);
		if (!o)
			return lvcli_unknown_option(c, s);
		const char *v = NULL;
		if (o->value) {
			if (eq)
				v = eq + 1;
			else if (i + 1 < argc)
				v = argv[++i];
			else
				return lvcli_missing_value(o->name);
		} else if (eq) {
			return lvcli_usage_error("%s takes no value, got '%s'", o->name, lvcli_esc(s));
		}
		int rc = set_opt(o, v, a);
		if (rc)
			return rc;
	}
	if (a->npos > 3) /* only the count matters from here */
		a->npos = 4;
	int rc = check_positionals(c, a);
	return rc == 0 && a->format ? lvcli_format_check(c, a) : rc;
}

/* ---- messages ---- */

int lvcli_fail(const lv_error *err)
{
	fprintf(stderr, "lancever: %s (%s)\n", err->message[0] ? lvcli_esc(err->message) : "error",
		lv_strerror(err->code));
	return 1;
}

int lvcli_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "lancever: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	return 2;
}

/* ---- checkpoint options ---- */

void lvcli_checkpoint_options(const lvcli_args *a, lv_checkpoint_config *c)
{
	if (a->max_entries)
		c->max_entries = (int64_t)a->max_entries;
	if (a->max_files)
		c->max_checkpoint_files = (int64_t)a->max_files;
	if (a->no_archive)
		c->archive = 0;
	if (a->segment_rows)
		c->archive_segment_rows = (int64_t)a->segment_rows;
}

/* ---- output that could not be written ---- */

/* Is fd the write end of a pipe or socket whose reader has gone (POLLERR / POLLHUP)? */
static bool reader_gone(int fd)
{
	struct stat sb;
	if (fstat(fd, &sb) != 0 || !(S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode)))
		return false;
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

int lvcli_stdout_error(void)
{
	if (!ferror(stdout))
		return 0;
	/* glibc keeps unwritten bytes buffered after a failed write: flushing retries them and
	 * leaves the write's errno; a failed write that bypassed the buffer left none */
	errno = 0;
	if (fflush(stdout) != 0 && errno)
		return errno;
	return reader_gone(STDOUT_FILENO) ? EPIPE : EIO;
}

void lvcli_check_pipe(int e)
{
	if (e != EPIPE)
		return;
	/* as git does: the reader went away, so end as SIGPIPE's default action would, silently,
	 * even when the signal was ignored (killed by SIGPIPE: status 141 in a shell) */
	signal(SIGPIPE, SIG_DFL);
	raise(SIGPIPE);
	_exit(LVCLI_EXIT_PIPE); /* SIGPIPE blocked: it stays pending; the status says the same */
}

/* ---- escaping ---- */

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlongs, no surrogates,
 * at most U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	size_t len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
		     : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (len == 0 || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) || (c == 0xf0 && p[1] < 0x90) ||
	    (c == 0xf4 && p[1] > 0x8f))
		return 0;
	return len;
}

/* Bytes of the next character to show as-is (0: show p[0] as \xNN); *esc = 2 for a C1
 * control (two bytes, both shown escaped). */
static size_t plain_len(const unsigned char *p, size_t n, int *esc)
{
	*esc = 0;
	if (p[0] < 0x20 || p[0] == 0x7f)
		return 0;
	size_t l = utf8_len(p, n);
	if (l == 2 && p[0] == 0xc2 && p[1] < 0xa0) {
		*esc = 2;
		return 0;
	}
	return l;
}

#define ESC_SLOTS 8
static char *esc_buf[ESC_SLOTS];
static size_t esc_cap[ESC_SLOTS];
static unsigned esc_next;

const char *lvcli_esc(const char *s)
{
	if (!s)
		return "-";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0;
	int e;
	while (i < n) {
		size_t l = plain_len(p + i, n - i, &e);
		if (!l)
			break;
		i += l;
	}
	if (i == n)
		return s;
	unsigned k = esc_next++ % ESC_SLOTS;
	if (esc_cap[k] < n * 4 + 1) {
		char *nb = realloc(esc_buf[k], n * 4 + 1);
		if (!nb)
			return "(out of memory)";
		esc_buf[k] = nb;
		esc_cap[k] = n * 4 + 1;
	}
	char *o = esc_buf[k];
	memcpy(o, s, i);
	o += i;
	while (i < n) {
		size_t l = plain_len(p + i, n - i, &e);
		if (l) {
			memcpy(o, p + i, l);
			o += l;
			i += l;
			continue;
		}
		for (int b = 0; b < (e ? e : 1); b++, i++)
			o += sprintf(o, "\\x%02x", p[i]);
	}
	*o = 0;
	return esc_buf[k];
}

void lvcli_print_padded(FILE *f, const char *s, int width)
{
	const char *e = lvcli_esc(s);
	int n = 0;
	for (const unsigned char *p = (const unsigned char *)e; *p; p++)
		n += (*p & 0xc0) != 0x80; /* characters, not bytes */
	fputs(e, f);
	for (; n < width; n++)
		fputc(' ', f);
}

void lvcli_esc_free(void)
{
	for (unsigned k = 0; k < ESC_SLOTS; k++) {
		free(esc_buf[k]);
		esc_buf[k] = NULL;
		esc_cap[k] = 0;
	}
}

void lvcli_json_strn(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
		} else if (c == '\n') {
			fputs("\\n", f);
		} else if (c == '\t') {
			fputs("\\t", f);
		} else if (c == '\r') {
			fputs("\\r", f);
		} else if (c < 0x20) {
			fprintf(f, "\\u%04x", c);
		} else if (c >= 0x80) {
			size_t l = utf8_len(p + i, n - i);
			if (l == 0) {
				fputs("\\ufffd", f); /* as the library's escaper does */
				i++;
			} else {
				fwrite(p + i, 1, l, f);
				i += l;
			}
			continue;
		} else {
			fputc(c, f);
		}
		i++;
	}
	fputc('"', f);
}

void lvcli_json_str(FILE *f, const char *s)
{
	if (!s)
		fputs("null", f);
	else
		lvcli_json_strn(f, s, strlen(s));
}

/* ---- datasets ---- */

lvcli_globals lvcli_g;

/* A local DATASET that is missing or not a directory, named as such before opening. */
static int check_local_path(const char *uri)
{
	const char *path = uri;
	if (!strncmp(uri, "file://", 7))
		path = uri + 7;
	else if (strstr(uri, "://"))
		return 0; /* s3:// and other stores: the library says what is wrong */
	if (strchr(path, '%'))
		return 0; /* a percent-encoded file:// URI: leave it to the library */
	struct stat sb;
	if (stat(path, &sb) == 0) {
		if (S_ISDIR(sb.st_mode))
			return 0;
		fprintf(stderr, "lancever: %s: is not a directory (a Lance dataset is a directory)\n",
			lvcli_esc(uri));
		return 1;
	}
	if (errno == ENOENT)
		fprintf(stderr, "lancever: %s: does not exist\n", lvcli_esc(uri));
	else
		fprintf(stderr, "lancever: %s: %s\n", lvcli_esc(uri), strerror(errno));
	return 1;
}

int lvcli_open(lv_dataset **ds, const char *uri, int threads)
{
	if (check_local_path(uri))
		return 1;
	lv_open_options o;
	lv_open_options_init(&o, LV_OPEN_OPTIONS_VERSION);
	o.threads = threads;
	o.branch = lvcli_g.branch;
	lv_storage_options so = LV_STORAGE_OPTIONS_INIT; /* (storage.h's own form) */
	so.s3_endpoint = lvcli_g.s3_endpoint;
	so.s3_region = lvcli_g.s3_region;
	so.s3_allow_http = lvcli_g.s3_allow_http;
	so.option_keys = lvcli_g.option_keys;
	so.option_values = lvcli_g.option_values;
	so.noptions = lvcli_g.noptions;
	o.storage = &so;
	lv_error err = { 0 };
	if (lv_dataset_open(ds, uri, &o, &err) < 0)
		return lvcli_fail(&err);
	if (lvcli_g.verbose) { /* where, and who supplied the credentials: never a secret */
		char src[512];
		lv_storage *st = lv_dataset_storage(*ds);
		(void)lv_storage_credential_source(st, src, sizeof src);
		fprintf(stderr, "lancever: store %s (%s), ", lvcli_esc(lv_storage_describe(st)),
			lv_storage_is_remote(st) ? "remote" : "local");
		fprintf(stderr, "credentials: %s\n", lvcli_esc(src));
	}
	return 0;
}

int lvcli_start(int argc, char **argv, const lvcli_cmd *c, lvcli_args *a, lv_dataset **ds)
{
	int rc = lvcli_parse(argc, argv, c, a);
	if (rc)
		return rc;
	return lvcli_open(ds, a->pos[0], (int)a->threads);
}

int lvcli_run_dataset(int argc, char **argv, const lvcli_cmd *c, int (*check)(lvcli_args *a),
		      int (*run)(const lvcli_args *a, lv_dataset *ds))
{
	lvcli_args a;
	lv_dataset *ds = NULL;
	int rc = lvcli_parse(argc, argv, c, &a);
	if (rc || (check && (rc = check(&a))) || (rc = lvcli_open(&ds, a.pos[0], (int)a.threads)))
		return rc;
	rc = run(&a, ds);
	lvcli_close(ds);
	return rc;
}

void lvcli_close(lv_dataset *ds)
{
	size_t n = lv_dataset_warning_count(ds), nvanished = 0;
	const lv_warning *first = NULL, *last = NULL;
	for (size_t i = 0; i < n && !lvcli_g.quiet; i++) {
		const lv_warning *w = lv_dataset_warning(ds, i);
		if (w->kind == LV_WARN_MANIFEST_VANISHED) {
			/* a reader during a cleanup can see thousands: one line says it */
			if (!nvanished++)
				first = w;
			last = w;
			continue;
		}
		fprintf(stderr, "lancever: warning: %s\n", lvcli_esc(w->message));
	}
	if (nvanished == 1)
		fprintf(stderr, "lancever: warning: %s\n", lvcli_esc(first->message));
	else if (nvanished > 1)
		fprintf(stderr,
			"lancever: warning: %zu manifests vanished while being read (a concurrent "
			"cleanup?) and were skipped: %s ... %s\n",
			nvanished, lvcli_esc(first->path), lvcli_esc(last->path));
	lv_dataset_free(ds);
}

static const char *warning_kind(int kind)
{
	static const char *const names[] = {
		[LV_WARN_CHECKPOINT_REJECTED] = "checkpoint_rejected",
		[LV_WARN_CHECKPOINT_DAMAGED] = "checkpoint_damaged",
		[LV_WARN_MANIFEST_VANISHED] = "manifest_vanished",
		[LV_WARN_TAG_UNREADABLE] = "tag_unreadable",
		[LV_WARN_BRANCH_UNREADABLE] = "branch_unreadable",
		[LV_WARN_HISTORY_GAP] = "history_gap",
		[LV_WARN_ANSWER_UNCERTAIN] = "answer_uncertain",
		[LV_WARN_SEGMENT_MISSING] = "segment_missing",
		[LV_WARN_SEGMENT_STRAY] = "segment_stray",
	};
	if (kind > 0 && (size_t)kind < sizeof names / sizeof names[0] && names[kind])
		return names[kind];
	return "other";
}

void lvcli_json_warnings(FILE *f, const lv_dataset *ds)
{
	fputs(",\"warnings\":[", f);
	for (size_t i = 0; i < lv_dataset_warning_count(ds); i++) {
		const lv_warning *w = lv_dataset_warning(ds, i);
		fprintf(f, "%s{\"kind\":\"%s\",\"path\":", i ? "," : "", warning_kind(w->kind));
		lvcli_json_str(f, w->path);
		/* versions start at 1: 0 means the warning is about a file, not a range */
		if (w->first || w->last)
			fprintf(f, ",\"first\":%" PRIu64 ",\"last\":%" PRIu64, w->first, w->last);
		else
			fputs(",\"first\":null,\"last\":null", f);
		fputs(",\"message\":", f);
		lvcli_json_str(f, w->message);
		fputc('}', f);
	}
	fputc(']', f);
}

/* ---- --format: its value and rules (found before the dataset is opened) ---- */

static const char *const NAMES[] = { [LVCLI_FMT_TABLE] = "table", [LVCLI_FMT_JSON] = "json",
				     [LVCLI_FMT_CSV] = "csv", [LVCLI_FMT_ARROW] = "arrow" };

int lvcli_format_set(const char *opt, const char *v, int *dst)
{
	for (int f = LVCLI_FMT_TABLE; f <= LVCLI_FMT_ARROW; f++) {
		if (strcmp(v, NAMES[f]))
			continue;
		if (*dst && *dst != f)
			return lvcli_usage_error("%s given twice ('%s', '%s')", opt, NAMES[*dst], v);
		*dst = f;
		return 0;
	}
	return lvcli_usage_error("%s wants json, table, csv or arrow, got '%s'", opt, lvcli_esc(v));
}

int lvcli_format_check(const lvcli_cmd *c, lvcli_args *a)
{
	if (a->json && a->format != LVCLI_FMT_JSON)
		return lvcli_usage_error("%s: --json and --format %s contradict each other", c->name,
					 NAMES[a->format]);
	if (a->format == LVCLI_FMT_JSON)
		a->json = true;
	if (a->format == LVCLI_FMT_ARROW && isatty(STDOUT_FILENO))
		return lvcli_usage_error("%s: --format arrow writes binary Arrow IPC: redirect stdout to "
					 "a file or a pipe", c->name);
	return 0;
}
