/*
 * The cleanup and expire structs of lancever/cleanup.h: their init functions, the
 * version check of a caller's policy and stats (util/abi.h: one version each, older
 * layouts are LV_EINVALID), validation, copying a run's stats into the caller's
 * struct, and the defaults that cleanup and expire share (the clock; the 7-day age
 * when no condition is given).  No I/O.
 */
#include <stddef.h>
#include <string.h>

#include "core/cleanup/cleanup_int.h"
#include "util/abi.h"

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

static int check_policy(const lv_cleanup_policy *pol, lv_error *err)
{
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

int lv_cleanup_policy_init(lv_cleanup_policy *p, int version)
{
	static const lv_cleanup_policy defaults = LV_CLEANUP_POLICY_INIT;
	return lv__struct_init("lv_cleanup_policy", p, sizeof *p, &defaults, version,
				       LV_CLEANUP_POLICY_VERSION, LV_CLEANUP_POLICY_VERSION);
}

int lv_expire_policy_init(lv_expire_policy *p, int version)
{
	static const lv_expire_policy defaults = LV_EXPIRE_POLICY_INIT;
	return lv__struct_init("lv_expire_policy", p, sizeof *p, &defaults, version,
				       LV_EXPIRE_POLICY_VERSION, LV_EXPIRE_POLICY_VERSION);
}

int lv_cleanup_stats_init(lv_cleanup_stats *s, int version)
{
	return lv__struct_init("lv_cleanup_stats", s, sizeof *s, NULL, version,
				       LV_CLEANUP_STATS_VERSION, LV_CLEANUP_STATS_VERSION);
}

int lv__stats_check(const lv_cleanup_stats *s, lv_error *err)
{
	return s ? lv__struct_version("lv_cleanup_stats", s->version, LV_CLEANUP_STATS_VERSION,
				      LV_CLEANUP_STATS_VERSION, err)
		 : 0;
}

void lv__stats_out(lv_cleanup_stats *to, const lv_cleanup_stats *s)
{
	if (!to)
		return;
	int v = to->version; /* version 1 has every field (a later one writes its own only) */
	*to = *s;
	to->version = v;
}

int lv__cleanup_policy_read(const lv_dataset *ds, const lv_cleanup_policy *pol,
			    const lv_cleanup_stats *stats, lv_error *err)
{
	if (!ds || !pol)
		return lv__err(err, LV_EINVALID, "lv_cleanup: NULL argument");
	LV_TRY(lv__struct_version("lv_cleanup_policy", pol->version, LV_CLEANUP_POLICY_VERSION,
				  LV_CLEANUP_POLICY_VERSION, err));
	LV_TRY(lv__stats_check(stats, err));
	return check_policy(pol, err);
}
