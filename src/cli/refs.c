/*
 * Refs: a VERSION argument as people write it (docs/cli.md, "Versions (refs)") -- a version
 * number, a tag name, BRANCH:VERSION, latest, latest~N -- checked for syntax before the
 * dataset is opened and resolved after, through the public API only (lv_refs_load for tags
 * and branches, lv_versions for latest).  Also the tag names of a version (the TAGS column
 * and JSON "tags").
 *
 * Invariants: a syntax error is a usage error (2) naming the option and the text as typed; a
 * ref that does not resolve is an error (1) that names the ref as typed; a ref that starts
 * with a digit is a number, never a tag; branch NULL and "main" are the same branch; the
 * refs and the latest version are read at most once per context.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* "main" and NULL are main. */
static const char *norm(const char *branch)
{
	return branch && strcmp(branch, "main") ? branch : NULL;
}

static bool same_branch(const char *a, const char *b)
{
	a = norm(a), b = norm(b);
	return a == b || (a && b && !strcmp(a, b));
}

/* A tag as a ref: not empty, not starting with a digit, a sign, '.' or a space, no
 * whitespace, control character or ':' (Lance's tag names are alphanumerics, '.', '-', '_'). */
static bool tag_syntax(const char *s)
{
	unsigned char c0 = (unsigned char)s[0];
	if (!c0 || (c0 >= '0' && c0 <= '9') || strchr("+-. ~@", c0))
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= ' ' || *p == 0x7f || *p == ':' || *p == '~')
			return false;
	return true;
}

/* The part after BRANCH: (or the whole ref). */
static int parse_tail(const char *what, const char *text, const char *s, lvcli_ref *r)
{
	if (s[0] >= '0' && s[0] <= '9') {
		r->kind = LVCLI_REF_NUMBER;
		return lvcli_parse_number(what, s, 0, UINT64_MAX, &r->version);
	}
	if (!strncmp(s, "latest", 6) && (!s[6] || s[6] == '~')) {
		r->kind = LVCLI_REF_LATEST;
		if (!s[6])
			return 0;
		if (lvcli_parse_u64_strict(s + 7, UINT64_MAX, &r->back))
			return 0;
	} else if (tag_syntax(s) && !r->branch[0]) {
		r->kind = LVCLI_REF_TAG;
		r->tag = s;
		return 0;
	}
	return lvcli_usage_error("%s wants a version number, a tag, BRANCH:VERSION, latest or latest~N, "
				 "got '%s'", what, lvcli_esc(text));
}

int lvcli_ref_parse(const char *what, const char *s, lvcli_ref *r)
{
	memset(r, 0, sizeof *r);
	r->text = s;
	const char *colon = strchr(s, ':');
	if (!colon)
		return parse_tail(what, s, s, r);
	size_t n = (size_t)(colon - s);
	if (n == 0 || n >= sizeof r->branch)
		return lvcli_usage_error("%s wants BRANCH:VERSION with a branch name, got '%s'", what,
					 lvcli_esc(s));
	memcpy(r->branch, s, n);
	r->branch[n] = 0;
	return parse_tail(what, s, colon + 1, r);
}

int lvcli_before_parse(const char *s, lvcli_ref *r)
{
	if (s[0] < '0' || s[0] > '9')
		return lvcli_ref_parse("--before-version", s, r);
	memset(r, 0, sizeof *r); /* a number, from 1 */
	r->text = s;
	r->kind = LVCLI_REF_NUMBER;
	return lvcli_parse_number("--before-version", s, 1, UINT64_MAX, &r->version);
}

int lvcli_before_resolve(lv_dataset *ds, const char *uri, const char *cmd, const lvcli_ref *r,
			 uint64_t *out)
{
	lvcli_refctx c;
	lvcli_refctx_init(&c, ds, uri, cmd, false);
	int rc = lvcli_ref_resolve(&c, r, out);
	lvcli_refctx_free(&c);
	return rc;
}

void lvcli_refctx_init(lvcli_refctx *c, lv_dataset *ds, const char *uri, const char *cmd, bool may_switch)
{
	memset(c, 0, sizeof *c);
	c->ds = ds;
	c->uri = uri;
	c->cmd = cmd;
	c->branch = norm(lv_dataset_branch(ds)); /* --branch, or a <root>/tree/<branch> path */
	c->may_switch = may_switch;
}

void lvcli_refctx_free(lvcli_refctx *c)
{
	if (c->own)
		lvcli_close(c->own);
	lv_refs_free(c->refs);
	c->own = NULL;
	c->refs = NULL;
}

void lvcli_refctx_borrow(lvcli_refctx *c, const lv_version_list *l)
{
	if (!c->refs)
		c->borrowed = lv_version_list_refs(l);
}

/* The refs in use: loaded here, else borrowed from a version list. */
static const lv_refs *refs_of(const lvcli_refctx *c) { return c->refs ? c->refs : c->borrowed; }

/* lv_refs_load, its requests and bytes counted in c (for --stats); 0 or an LV_* code. */
static int refs_read(lvcli_refctx *c, lv_error *err)
{
	lv_storage_stats a, b;
	lv_storage_stats_init(&a, LV_STORAGE_STATS_VERSION);
	lv_storage_stats_init(&b, LV_STORAGE_STATS_VERSION);
	lv_storage_get_stats(lv_dataset_storage(c->ds), &a);
	int rc = lv_refs_load(&c->refs, c->ds, err);
	lv_storage_get_stats(lv_dataset_storage(c->ds), &b);
	c->requests += b.requests - a.requests;
	c->bytes_read += b.bytes_read - a.bytes_read;
	return rc;
}

/* The dataset's tags and branches, loaded once; 0 or prints the error and returns 1. */
static int load_refs(lvcli_refctx *c)
{
	lv_error err = { 0 };
	if (!c->refs && refs_read(c, &err) < 0)
		return lvcli_fail(&err);
	return 0;
}

void lvcli_refctx_report(const lvcli_refctx *c, lv_history_report *r)
{
	r->requests += c->requests;
	r->bytes_read += c->bytes_read;
}

const lv_refs *lvcli_refctx_refs(lvcli_refctx *c)
{
	return load_refs(c) ? NULL : c->refs;
}

/* "no tag 'x' (tags: a, b)": the names there, at most a few. */
static int no_such(lvcli_refctx *c, const lvcli_ref *r, bool tag, const char *name)
{
	size_t n = tag ? lv_refs_tag_count(c->refs) : lv_refs_branch_count(c->refs);
	fprintf(stderr, "lancever: %s: '%s': no %s '%s'", c->cmd, lvcli_esc(r->text),
		tag ? "tag" : "branch", lvcli_esc(name));
	for (size_t i = 0; i < n && i < 8; i++)
		fprintf(stderr, "%s%s", i ? ", " : tag ? " (tags: " : " (branches: main, ",
			lvcli_esc(tag ? lv_refs_tag(c->refs, i)->name : lv_refs_branch(c->refs, i)->name));
	fprintf(stderr, "%s\n", n > 8 ? ", ...)" : n ? ")" : tag ? " (there are no tags)" : "");
	return 1;
}

/* Makes `branch` the context's, opening it if another is open; 0 or the exit status. */
static int use_branch(lvcli_refctx *c, const lvcli_ref *r, const char *branch)
{
	if (same_branch(branch, c->branch))
		return 0;
	if (!c->may_switch) {
		fprintf(stderr, "lancever: %s: '%s' is on branch %s, but this works on branch %s "
			"(choose it with --branch)\n", c->cmd, lvcli_esc(r->text),
			lvcli_esc(norm(branch) ? branch : "main"), lvcli_esc(c->branch ? c->branch : "main"));
		return 1;
	}
	if (norm(branch)) {
		if (load_refs(c))
			return 1;
		size_t i = 0, n = lv_refs_branch_count(c->refs);
		while (i < n && strcmp(lv_refs_branch(c->refs, i)->name, branch))
			i++;
		if (i == n)
			return no_such(c, r, false, branch);
	}
	lv_dataset *ds = NULL;
	if (lvcli_open_branch(&ds, c->uri, 0, norm(branch) ? branch : "main"))
		return 1;
	if (c->own)
		lvcli_close(c->own);
	c->own = c->ds = ds;
	c->branch = norm(lv_dataset_branch(ds));
	c->have_latest = false;
	return 0;
}

/* The newest live version of the context's branch (lv_versions), read once. */
static int latest(lvcli_refctx *c, uint64_t *out)
{
	if (!c->have_latest) {
		lv_error err = { 0 };
		lv_version_list *l = NULL;
		if (lv_versions(&l, c->ds, NULL, &err) < 0)
			return lvcli_fail(&err);
		size_t n = lv_version_list_count(l);
		c->latest = n ? lv_version_list_get(l, n - 1)->version : 0;
		lv_version_list_free(l);
		c->have_latest = true;
	}
	*out = c->latest;
	return 0;
}

int lvcli_ref_resolve(lvcli_refctx *c, const lvcli_ref *r, uint64_t *out)
{
	const char *branch = r->branch[0] ? r->branch : NULL;
	uint64_t v = r->version;
	if (r->kind == LVCLI_REF_TAG) {
		if (load_refs(c))
			return 1;
		size_t i = 0, n = lv_refs_tag_count(c->refs);
		while (i < n && strcmp(lv_refs_tag(c->refs, i)->name, r->tag))
			i++;
		if (i == n)
			return no_such(c, r, true, r->tag);
		branch = lv_refs_tag(c->refs, i)->branch;
		v = lv_refs_tag(c->refs, i)->version;
	} else if (!branch) {
		branch = c->branch; /* a number or latest: on the branch in use */
	}
	if (use_branch(c, r, branch))
		return 1;
	if (r->kind == LVCLI_REF_LATEST) {
		uint64_t top;
		if (latest(c, &top))
			return 1;
		if (top == 0 || r->back >= top) {
			fprintf(stderr, "lancever: %s: '%s': the branch has %s\n", c->cmd, lvcli_esc(r->text),
				top ? "fewer versions than that" : "no live version");
			return 1;
		}
		v = top - r->back;
	}
	*out = v;
	return 0;
}

/* ---- the tags of a version ---- */

size_t lvcli_tags_of(lvcli_refctx *c, const lv_version_info *v, const char **names, size_t max)
{
	/* only a version the library flags as tagged: the refs are read (requests) only then */
	if (!v->is_tagged)
		return 0;
	if (!c->refs_tried) {
		lv_error err = { 0 };
		c->refs_tried = true;
		if (!refs_of(c) && refs_read(c, &err) < 0)
			c->refs = NULL; /* the lists still print; is_tagged says tagged */
	}
	size_t k = 0;
	const lv_refs *refs = refs_of(c);
	for (size_t i = 0; refs && i < lv_refs_tag_count(refs); i++) {
		const lv_tag *t = lv_refs_tag(refs, i);
		if (t->version == v->version && same_branch(t->branch, c->branch) && k < max)
			names[k++] = t->name;
	}
	return k;
}

void lvcli_tags_text(char *buf, size_t cap, lvcli_refctx *c, const lv_version_info *v)
{
	const char *names[16];
	size_t n = c ? lvcli_tags_of(c, v, names, 16) : 0, at = 0;
	buf[0] = 0;
	for (size_t i = 0; i < n && at + 1 < cap; i++) {
		int w = snprintf(buf + at, cap - at, "%s%s", i ? "," : "", lvcli_esc(names[i]));
		at += w < 0 ? 0 : (size_t)w;
	}
	if (at >= cap && cap > 4)
		memcpy(buf + cap - 4, "...", 4);
}
