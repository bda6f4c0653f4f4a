/*
 * The list options that `versions` and `history` share: --since and --until (a VERSION ref
 * or a TIME), --limit N (the newest N of what they select), --reverse (newest first; the
 * default is oldest first, by version), and the printing of a version list under them (table
 * with gaps in place, or a JSON array).
 *
 * Invariants: the options are checked before the dataset is opened (usage errors, 2) and
 * refs resolved after (errors naming the ref, 1); a bound is inclusive; --since/--until by
 * time compare commit times, which are not monotonic across writers, so they filter
 * (never stop a scan early); --limit applies after the bounds.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* One bound: a TIME (@ms, ISO 8601 -- starts with a digit but is not all digits --, now,
 * "... ago") or a VERSION ref. */
static int parse_bound(const char *opt, const char *s, lvcli_bound *b)
{
	size_t n = strlen(s);
	bool digits = n && strspn(s, "0123456789") == n;
	bool time = !digits && ((s[0] >= '0' && s[0] <= '9') || s[0] == '@' || !strcmp(s, "now") ||
				(n > 4 && !strcmp(s + n - 4, " ago")));
	b->given = true;
	b->text = s;
	if (time) {
		b->is_time = true;
		lv_error e = { 0 };
		if (lv_parse_time(s, &b->ms, &e) == 0)
			return 0;
		return lvcli_usage_error("%s wants a version, a tag or a time (2026-12-02, @1796169600000, "
					 "'3 days ago'), got '%s'", opt, lvcli_esc(s));
	}
	return lvcli_ref_parse(opt, s, &b->ref);
}

int lvcli_select_parse(const lvcli_args *a, lvcli_select *s)
{
	memset(s, 0, sizeof *s);
	s->limit = a->limit;
	s->reverse = a->reverse;
	int rc = 0;
	if (a->since)
		rc = parse_bound("--since", a->since, &s->since);
	if (rc == 0 && a->until)
		rc = parse_bound("--until", a->until, &s->until);
	return rc;
}

int lvcli_select_resolve(lvcli_select *s, lvcli_refctx *c)
{
	lvcli_bound *b[2] = { &s->since, &s->until };
	for (int i = 0; i < 2; i++)
		if (b[i]->given && !b[i]->is_time && lvcli_ref_resolve(c, &b[i]->ref, &b[i]->version))
			return 1;
	return 0;
}

bool lvcli_select_keep(const lvcli_select *s, const lv_version_info *v)
{
	const lvcli_bound *lo = &s->since, *hi = &s->until;
	if (lo->given && (lo->is_time ? v->timestamp_millis < lo->ms : v->version < lo->version))
		return false;
	if (hi->given && (hi->is_time ? v->timestamp_millis > hi->ms : v->version > hi->version))
		return false;
	return true;
}

/* The gaps of l strictly between versions lo and hi (exclusive), in display order. */
static void gaps_between(FILE *f, const lv_version_list *l, uint64_t lo, uint64_t hi, bool reverse,
			 lv_dataset *ds)
{
	size_t n = lv_version_list_gap_count(l);
	for (size_t k = 0; k < n; k++) {
		size_t g = reverse ? n - 1 - k : k;
		uint64_t first = 0, last = 0;
		lv_version_list_gap(l, g, &first, &last);
		if (first > lo && last < hi)
			lvcli_print_table_gap(f, first, last, ds);
	}
}

/* The indices of l that s selects, in version order (the newest `limit` of those the bounds
 * keep): *k of them from idx (malloc'd); NULL after printing the error. */
static size_t *pick(const lv_version_list *l, const lvcli_select *s, size_t *k)
{
	size_t n = lv_version_list_count(l), m = 0;
	size_t *idx = malloc((n ? n : 1) * sizeof *idx);
	if (!idx) {
		fputs("lancever: out of memory\n", stderr);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (lvcli_select_keep(s, lv_version_list_get(l, i)))
			idx[m++] = i;
	size_t from = s->limit && s->limit < m ? m - s->limit : 0;
	memmove(idx, idx + from, (m - from) * sizeof *idx);
	*k = m - from;
	return idx;
}

int lvcli_select_print(FILE *f, const lv_version_list *l, const lvcli_select *s, bool json,
		       bool show_cleaned, lvcli_refctx *tags)
{
	size_t k = 0;
	size_t *idx = pick(l, s, &k);
	if (!idx)
		return 1;
	if (json) { /* records.c */
		int rc = lvcli_print_versions_json(f, l, idx, k, s->reverse, tags);
		free(idx);
		return rc;
	}
	lv_dataset *ds = tags ? tags->ds : NULL; /* gap rows say a capture's reason */
	/* gaps before the first row only when nothing bounds the list from below */
	bool open_low = !s->since.given && !s->limit;
	lvcli_print_table_header(f, show_cleaned);
	uint64_t prev = 0;
	for (size_t j = 0; j < k; j++) {
		const lv_version_info *v = lv_version_list_get(l, idx[s->reverse ? k - 1 - j : j]);
		if (j && s->reverse)
			gaps_between(f, l, v->version, prev, true, ds);
		else if (j || open_low)
			gaps_between(f, l, j ? prev : 0, v->version, false, ds);
		lvcli_print_table_row(f, v, show_cleaned, tags);
		prev = v->version;
	}
	if (s->reverse && k && open_low)
		gaps_between(f, l, 0, prev, true, ds);
	free(idx);
	return 0;
}

bool lvcli_select_any(const lvcli_select *s)
{
	return s->since.given || s->until.given || s->limit || s->reverse;
}

int lvcli_select_emit(const lvcli_args *a, const lv_version_list *l, const lvcli_select *s,
		      const char *kind, lvcli_refctx *tags)
{
	if (!lvcli_select_any(s))
		return lvcli_emit_list(a, l, kind, tags);
	size_t k = 0;
	size_t *idx = pick(l, s, &k);
	if (!idx)
		return 1;
	lv_error err = { 0 };
	lv_version_list *sub = NULL;
	int rc = lv_version_list_select(&sub, l, idx, k, &err) < 0 ? lvcli_fail(&err)
								   : lvcli_emit_list(a, sub, kind, tags);
	lv_version_list_free(sub);
	free(idx);
	return rc;
}
