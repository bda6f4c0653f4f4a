/*
 * Arguments: a command's argv parsed against its option table (cli.h), the one
 * number rule, "did you mean" for a mistyped option, --format's value and rules,
 * and the checkpoint options the option values map to.
 *
 * Invariants: a usage error returns 2 after one message on stderr and prints nothing
 * on stdout; "--" ends the options; a value is taken as given (strings) or checked
 * here (numbers, durations, --format).
 */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

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

int lvcli_parse_time(const char *what, const char *s, int64_t *ms)
{
	lv_error e = { 0 };
	if (lv_parse_time(s, ms, &e) == 0)
		return 0;
	return lvcli_usage_error("%s wants a time such as 2026-12-02, 2026-12-02T17:00:00Z, "
				 "@1796169600000 or '3 days ago', got '%s'", what, lvcli_esc(s));
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
			return lvcli_usage_error("%s wants a duration such as 14days, 2weeks, 1h 30min or "
						 "36h, got '%s'", o->name, lvcli_esc(v));
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
	size_t al = c->args ? strlen(c->args) : 0;
	bool more = al >= 3 && !strcmp(c->args + al - 3, "..."); /* "TARGET...": one or more */
	if (a->npos == want || (more && a->npos > want))
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

/* ---- --format: its value and rules (found before the dataset is opened) ---- */

static const char *const NAMES[] = { [LVCLI_FMT_TABLE] = "table", [LVCLI_FMT_JSON] = "json",
				     [LVCLI_FMT_CSV] = "csv", [LVCLI_FMT_ARROW] = "arrow",
				     [LVCLI_FMT_HTML] = "html" };

int lvcli_format_set(const char *opt, const char *v, int *dst)
{
	for (int f = LVCLI_FMT_TABLE; f <= LVCLI_FMT_HTML; f++) {
		if (strcmp(v, NAMES[f]))
			continue;
		if (*dst && *dst != f)
			return lvcli_usage_error("%s given twice ('%s', '%s')", opt, NAMES[*dst], v);
		*dst = f;
		return 0;
	}
	return lvcli_usage_error("%s wants json, table, csv, arrow or html, got '%s'", opt, lvcli_esc(v));
}

int lvcli_format_check(const lvcli_cmd *c, lvcli_args *a)
{
	if (a->json && a->format != LVCLI_FMT_JSON)
		return lvcli_usage_error("%s: --json and --format %s contradict each other", c->name,
					 NAMES[a->format]);
	if (a->format == LVCLI_FMT_HTML && strcmp(c->name, "history"))
		return lvcli_usage_error("%s: --format html is history's (a page with a timeline)", c->name);
	if (a->format == LVCLI_FMT_JSON)
		a->json = true;
	if (a->format == LVCLI_FMT_ARROW && lvcli_stdout_tty())
		return lvcli_usage_error("%s: --format arrow writes binary Arrow IPC: redirect stdout to "
					 "a file or a pipe", c->name);
	return 0;
}
