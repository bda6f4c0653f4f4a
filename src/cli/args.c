/* Argument parsing shared by the sub-commands: the strict number parser and the
 * "DATASET [positional...] [--json] ..." parser. */
#include <inttypes.h>
#include <string.h>

#include "cli.h"

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
					 min ? "positive" : "non-negative", max, s);
	return lvcli_usage_error("%s wants an integer in %" PRIu64 "..%" PRIu64 ", got '%s'", what,
				 min, max, s);
}

int lvcli_parse_i64_pos(const char *opt, const char *v, int64_t *out)
{
	uint64_t x = 0;
	int rc = lvcli_parse_number(opt, v, 1, INT64_MAX, &x);
	if (rc == 0)
		*out = (int64_t)x;
	return rc;
}

int lvcli_missing_value(const char *opt)
{
	return lvcli_usage_error("missing value for %s", opt);
}

int lvcli_parse_args(int argc, char **argv, lvcli_args *a, int want_pos, const char *usage)
{
	memset(a, 0, sizeof *a);
	a->max_entries = a->max_files = -1;
	a->enabled = -1;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (!strcmp(s, "--json"))
			a->json = true;
		else if (!strcmp(s, "--stats"))
			a->stats = true;
		else if (!strcmp(s, "--strict"))
			a->strict = true;
		else if (!strcmp(s, "--max-entries") || !strcmp(s, "--max-files")) {
			if (i + 1 >= argc)
				return lvcli_missing_value(s);
			int64_t *dst = !strcmp(s, "--max-entries") ? &a->max_entries : &a->max_files;
			if (lvcli_parse_i64_pos(s, argv[++i], dst))
				return 2;
		} else if (!strcmp(s, "--disable"))
			a->enabled = 0;
		else if (s[0] == '-' && s[1] && !(s[1] >= '0' && s[1] <= '9'))
			return lvcli_usage_error("unknown option '%s'\nusage: lancever %s", s, usage);
		else if (a->npos < 4)
			a->pos[a->npos++] = s;
		else
			return lvcli_usage_error("too many arguments\nusage: lancever %s", usage);
	}
	if (a->npos != want_pos)
		return lvcli_usage_error("usage: lancever %s", usage);
	return 0;
}
