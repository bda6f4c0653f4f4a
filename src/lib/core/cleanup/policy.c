/*
 * Reading a caller's cleanup policy: the layouts of older headers (versions 1
 * to 3, each read only as far as the caller's struct goes), validation, and
 * the defaults that cleanup and expire share (the clock; the 7-day age when
 * no condition is given).  No I/O.
 */
#include <stddef.h>
#include <string.h>

#include "core/cleanup/cleanup_int.h"

int64_t lv__policy_now(int64_t now_ms)
{
	return now_ms ? now_ms : lv__now_ms();
}

int64_t lv__policy_older(int64_t older_than_ms, int64_t retain_versions, uint64_t before_version,
			 bool listed)
{
	if (older_than_ms < 0 && retain_versions < 0 && before_version == 0 && !listed)
		return LV_CLEANUP_DEFAULT_OLDER_THAN_MS;
	return older_than_ms;
}

static int check_policy(const lv_dataset *ds, const lv_cleanup_policy *pol, lv_error *err)
{
	if (!ds || !pol)
		return lv__err(err, LV_EINVALID, "lv_cleanup: NULL argument");
	if (pol->older_than_ms < -1 || pol->retain_versions == 0 || pol->retain_versions < -1 ||
	    !(pol->delete_rate_limit >= 0))
		return lv__err(err, LV_EINVALID,
			       "cleanup: invalid policy (older_than >= 0, retain_versions >= 1, "
			       "delete_rate_limit >= 0)");
	if (pol->versions && !pol->nversions)
		return lv__err(err, LV_EINVALID, "cleanup: versions must not be empty when specified");
	if (!pol->versions && pol->nversions)
		return lv__err(err, LV_EINVALID, "cleanup: nversions without versions");
	return 0;
}

/* lv_cleanup_policy as version 1 laid it out: its checkpoint config had no archive fields. */
typedef struct config_v1 {
	int version, enabled;
	int64_t max_entries, max_checkpoint_files;
} config_v1;
typedef struct policy_v1 {
	int version;
	int64_t older_than_ms, retain_versions;
	uint64_t before_version;
	bool delete_unverified, error_if_tagged_old_versions, dry_run;
	int64_t now_ms;
	config_v1 checkpoint;
	lv_cleanup_file_cb on_file;
	lv_cleanup_progress_cb on_progress;
	void *payload;
} policy_v1;

/* A version-1 policy read as one (a caller built against the older header). */
static void from_v1(const lv_cleanup_policy *in, lv_cleanup_policy *out)
{
	const policy_v1 *o = (const policy_v1 *)(const void *)in;
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.older_than_ms = o->older_than_ms;
	p.retain_versions = o->retain_versions;
	p.before_version = o->before_version;
	p.delete_unverified = o->delete_unverified;
	p.error_if_tagged_old_versions = o->error_if_tagged_old_versions;
	p.dry_run = o->dry_run;
	p.now_ms = o->now_ms;
	p.checkpoint.enabled = o->checkpoint.enabled;
	p.checkpoint.max_entries = o->checkpoint.max_entries;
	p.checkpoint.max_checkpoint_files = o->checkpoint.max_checkpoint_files;
	p.on_file = o->on_file;
	p.on_progress = o->on_progress;
	p.payload = o->payload;
	*out = p;
}

/* A version-2 or -3 policy: today's layout up to the first field it did not have. */
static void from_older(const lv_cleanup_policy *in, size_t known, lv_cleanup_policy *out)
{
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	memcpy(&p, in, known);
	p.version = LV_CLEANUP_POLICY_VERSION;
	*out = p;
}

int lv__cleanup_policy_read(const lv_dataset *ds, const lv_cleanup_policy **pol,
			    lv_cleanup_policy *cur, lv_error *err)
{
	const lv_cleanup_policy *p = *pol;
	if (p && p->version == 1)
		from_v1(p, cur);
	else if (p && p->version == 2)
		from_older(p, offsetof(lv_cleanup_policy, versions), cur);
	else if (p && p->version == 3)
		from_older(p, offsetof(lv_cleanup_policy, clean_referenced_branches), cur);
	else
		cur = NULL;
	if (cur)
		*pol = cur;
	return check_policy(ds, *pol, err);
}
