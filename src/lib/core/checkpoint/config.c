/*
 * Checkpoint configuration: explicit fields win, then the latest manifest's
 * lance.version_checkpoint.* keys, then defaults.  Invalid values are errors
 * naming the key.
 */
#include "core/checkpoint/config.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/checkpoint/archive.h"
#include "core/dataset.h"
#include "core/manifests.h"
#include "util/abi.h"
#include "util/util.h"
/* ---- configuration ---- */

static int parse_cfg_bool(const char *key, const char *v, int *out, lv_error *err)
{
	if (!strcasecmp(v, "true") || !strcmp(v, "1"))
		*out = 1;
	else if (!strcasecmp(v, "false") || !strcmp(v, "0"))
		*out = 0;
	else
		return lv__err(err, LV_EINVALID, "dataset config %s = '%s': expected true or false", key, v);
	return 0;
}

static int parse_cfg_pos(const char *key, const char *v, int64_t *out, lv_error *err)
{
	uint64_t x;
	if (!lv__parse_u64(v, strlen(v), &x) || x == 0 || x > INT64_MAX)
		return lv__err(err, LV_EINVALID, "dataset config %s = '%s': expected a positive integer",
			       key, v);
	*out = (int64_t)x;
	return 0;
}

/* Version 2 is the floor (a pointer in lv_cleanup_policy since then); 3 added on_progress. */
#define CONFIG_FLOOR 2

static int check_version(int version, lv_error *err)
{
	return lv__struct_version("lv_checkpoint_config", version, CONFIG_FLOOR,
				  LV_CHECKPOINT_CONFIG_VERSION, err);
}

size_t lv__cp_config_size(int version)
{
	return version >= 3 ? sizeof(lv_checkpoint_config) : offsetof(lv_checkpoint_config, on_progress);
}

int lv_checkpoint_config_init(lv_checkpoint_config *c, int version)
{
	static const lv_checkpoint_config defaults = LV_CHECKPOINT_CONFIG_INIT;
	return lv__struct_init("lv_checkpoint_config", c, lv__cp_config_size(version), &defaults, version,
			       CONFIG_FLOOR, LV_CHECKPOINT_CONFIG_VERSION);
}

void lv__cp_config_progress(const lv_checkpoint_config *c, lv__progress *p)
{
	memset(p, 0, sizeof *p);
	if (c && c->version >= 3 && c->version <= LV_CHECKPOINT_CONFIG_VERSION) { /* else refused later */
		p->cb = c->on_progress;
		p->payload = c->payload;
	}
}

/* Resolves config from `in` and the config map of `latest` (may be NULL). */
int lv__cp_config_from_info(lv_checkpoint_config *out, const lv_version_info *latest,
			  const lv_checkpoint_config *in, lv_error *err)
{
	lv_checkpoint_config c = { .version = LV_CHECKPOINT_CONFIG_VERSION, .enabled = 1,
				   .max_entries = 10000, .max_checkpoint_files = 2, .archive = 1,
				   .archive_segment_rows = LV__SEGMENT_ROWS_DEFAULT };
	for (size_t i = 0; latest && i < latest->num_config; i++) {
		const char *k = latest->config_keys[i], *v = latest->config_values[i];
		if (!strcmp(k, LV_CONFIG_ENABLED))
			LV_TRY(parse_cfg_bool(k, v, &c.enabled, err));
		else if (!strcmp(k, LV_CONFIG_MAX_ENTRIES))
			LV_TRY(parse_cfg_pos(k, v, &c.max_entries, err));
		else if (!strcmp(k, LV_CONFIG_MAX_FILES))
			LV_TRY(parse_cfg_pos(k, v, &c.max_checkpoint_files, err));
		else if (!strcmp(k, LV_CONFIG_ARCHIVE))
			LV_TRY(parse_cfg_bool(k, v, &c.archive, err));
		else if (!strcmp(k, LV_CONFIG_SEGMENT_ROWS))
			LV_TRY(parse_cfg_pos(k, v, &c.archive_segment_rows, err));
	}
	if (in) {
		LV_TRY(check_version(in->version, err));
		if (in->enabled < -1 || in->enabled > 1)
			return lv__err(err, LV_EINVALID, "checkpoint enabled must be 0 or 1");
		if (in->max_entries == 0 || in->max_entries < -1)
			return lv__err(err, LV_EINVALID, "max_entries must be a positive integer");
		if (in->max_checkpoint_files == 0 || in->max_checkpoint_files < -1)
			return lv__err(err, LV_EINVALID, "max_checkpoint_files must be a positive integer");
		if (in->enabled != -1)
			c.enabled = in->enabled;
		if (in->max_entries != -1)
			c.max_entries = in->max_entries;
		if (in->max_checkpoint_files != -1)
			c.max_checkpoint_files = in->max_checkpoint_files;
		int archive = in->archive;
		int64_t rows = in->archive_segment_rows;
		if (archive < -1 || archive > 1)
			return lv__err(err, LV_EINVALID, "checkpoint archive must be 0 or 1");
		if (rows == 0 || rows < -1)
			return lv__err(err, LV_EINVALID, "archive_segment_rows must be a positive integer");
		if (archive != -1)
			c.archive = archive;
		if (rows != -1)
			c.archive_segment_rows = rows;
		if (in->version >= 3) { /* not settings: carried as given */
			c.on_progress = in->on_progress;
			c.payload = in->payload;
		}
	}
	*out = c;
	return 0;
}

int lv_checkpoint_config_resolve(lv_checkpoint_config *out, lv_dataset *ds,
				 const lv_checkpoint_config *in, lv_error *err)
{
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "lv_checkpoint_config_resolve: NULL argument");
	LV_TRY(check_version(out->version, err));
	int version = out->version;
	lv__arena a;
	lv__arena_init(&a, 1024);
	lv_version_info info;
	uint64_t latest;
	int rc = lv__read_newest_info(ds->st, &a, &info, &latest, err);
	bool have = rc == 0 && latest;
	if (rc == LV_ENOTFOUND && latest) /* the newest manifest vanished: the defaults */
		rc = 0;
	lv_checkpoint_config c;
	if (rc == 0)
		rc = lv__cp_config_from_info(&c, have ? &info : NULL, in, err);
	if (rc == 0) /* the caller's layout only: an older version's struct is shorter */
		memcpy(out, &c, lv__cp_config_size(version));
	out->version = version;
	lv__arena_dispose(&a);
	return rc;
}
