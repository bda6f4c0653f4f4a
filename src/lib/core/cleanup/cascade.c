/*
 * Lance's clean_referenced_branches, the decision half: whether a referenced
 * branch is cleaned before its parent, and with which policy -- the one the
 * branch's own latest manifest gives in its lance.auto_cleanup.* keys (Lance's
 * automatic-cleanup config).  Reads the branch's manifest listing and its
 * latest manifest; changes nothing.  A branch with no `interval` is not due;
 * one whose `interval` divides its latest version is, and so is `interval = 0`
 * (Lance 14 runs its automatic cleanup after every commit then: measured with
 * pylance 14.0.2, tests/interop/lance14/test_cleanup_twins.py); an
 * `interval`, `older_than` or `retain_versions` value that does not parse is
 * an error naming the branch and the key, so a cascade never runs
 * with a policy the branch's owner did not write.  The cleaning itself is
 * lv_cleanup()'s (cleanup.c), which calls lv__cascade_policy once per
 * referenced branch; the branch's files are relayed to the caller's callbacks
 * under tree/NAME/ and its warnings kept on the caller's handle.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cleanup/cleanup_int.h"
#include "core/manifests.h"
#include "core/warnings.h"

#define AUTO "lance.auto_cleanup."

/* The branch's auto-cleanup keys, as read (NULL = absent). */
typedef struct autocfg {
	const char *interval, *older_than, *retain_versions;
} autocfg;

static void read_keys(const lv_version_info *v, autocfg *c)
{
	memset(c, 0, sizeof *c);
	for (size_t i = 0; i < v->num_config; i++) {
		const char *k = v->config_keys[i];
		if (strncmp(k, AUTO, strlen(AUTO)))
			continue;
		k += strlen(AUTO);
		if (!strcmp(k, "interval"))
			c->interval = v->config_values[i];
		else if (!strcmp(k, "older_than"))
			c->older_than = v->config_values[i];
		else if (!strcmp(k, "retain_versions"))
			c->retain_versions = v->config_values[i];
	}
}

static int bad_key(const char *branch, const char *key, const char *v, const char *want,
		   lv_error *err)
{
	return lv__err(err, LV_EINVALID,
		       "clean_referenced_branches: branch %s has " AUTO "%s = '%.64s': expected %s",
		       branch, key, v, want);
}

/* The policy the keys give, on top of the parent's clock, dry run and rate limit. */
static int build(const char *branch, const autocfg *c, const lv_cleanup_policy *parent,
		 lv_cleanup_policy *out, lv_error *err)
{
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.error_if_tagged_old_versions = false;
	p.dry_run = parent->dry_run;
	p.now_ms = parent->now_ms;
	p.delete_rate_limit = parent->delete_rate_limit;
	if (c->older_than && lv_parse_duration(c->older_than, &p.older_than_ms, NULL) < 0)
		return bad_key(branch, "older_than", c->older_than, "a duration such as 14days", err);
	uint64_t n;
	if (c->retain_versions) {
		if (!lv__parse_u64(c->retain_versions, strlen(c->retain_versions), &n) || !n ||
		    n > INT64_MAX)
			return bad_key(branch, "retain_versions", c->retain_versions,
				       "a positive integer", err);
		p.retain_versions = (int64_t)n;
	}
	*out = p;
	return 0;
}

int lv__cascade_policy(lv_dataset *bds, const char *branch, const lv_cleanup_policy *parent,
		       lv_cleanup_policy *out, bool *due, lv_error *err)
{
	*due = false;
	lv__arena a;
	lv__arena_init(&a, 1024);
	lv_version_info info;
	uint64_t latest;
	int rc = lv__read_newest_info(bds->st, &a, &info, &latest, err);
	if (rc == 0 && !latest)
		rc = lv__not_a_dataset(bds, err);
	autocfg c;
	if (rc == 0)
		read_keys(&info, &c);
	uint64_t interval = 0;
	if (rc == 0 && c.interval &&
	    !lv__parse_u64(c.interval, strlen(c.interval), &interval))
		rc = bad_key(branch, "interval", c.interval, "a whole number", err);
	if (rc == 0 && c.interval && (interval == 0 || latest % interval == 0)) {
		rc = build(branch, &c, parent, out, err);
		*due = rc == 0;
	}
	lv__arena_dispose(&a);
	return rc;
}

/* ---- relaying a cascaded branch's reports ---- */

static char *relay_path(const lv__relay *r, const char *path)
{
	size_t n = strlen(r->branch) + strlen(path) + sizeof "tree//";
	char *p = lv__malloc(n);
	if (p)
		snprintf(p, n, "tree/%s/%s", r->branch, path);
	return p;
}

static void relay_file(const char *path, int kind, uint64_t size, const char *reason, void *payload)
{
	const lv__relay *r = payload;
	char *p = relay_path(r, path);
	r->pol->on_file(p ? p : path, kind, size, reason, r->pol->payload);
	lv__free(p);
}

static void relay_candidate(const lv_cleanup_candidate *c, void *payload)
{
	const lv__relay *r = payload;
	lv_cleanup_candidate x = *c;
	char *p = relay_path(r, c->path);
	x.path = p ? p : c->path;
	r->pol->on_candidate(&x, r->pol->payload);
	lv__free(p);
}

void lv__cleanup_stats_add(lv_cleanup_stats *to, const lv_cleanup_stats *b)
{
	to->versions_removed += b->versions_removed;
	to->failed_deletes += b->failed_deletes;
	for (int k = 0; k < LV_KIND_COUNT; k++) {
		to->files_removed[k] += b->files_removed[k];
		to->bytes_removed[k] += b->bytes_removed[k];
	}
}

void lv__cascade_relay(lv_cleanup_policy *bp, const lv__relay *r)
{
	bp->on_file = r->pol->on_file ? relay_file : NULL;
	bp->on_candidate = r->pol->on_candidate ? relay_candidate : NULL;
	bp->payload = (void *)r;
}

/* The branch's warnings, kept on the dataset the caller holds. */
void lv__cascade_keep_warnings(lv_dataset *ds, lv_dataset *bds, const char *name)
{
	lv__warnlog wl = { 0 };
	for (size_t i = 0; i < lv_dataset_warning_count(bds); i++) {
		const lv_warning *w = lv_dataset_warning(bds, i);
		lv__warn(&wl, w->kind, w->path, w->first, w->last, "branch %s: %s", name, w->message);
	}
	lv__warn_commit(ds, &wl);
	lv__warnlog_dispose(&wl);
}
