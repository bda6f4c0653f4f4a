/* Checkpoint configuration resolution. */
#ifndef LV_CORE_CHECKPOINT_CONFIG_H
#define LV_CORE_CHECKPOINT_CONFIG_H

#include <stddef.h>

#include "lancever/checkpoint.h"
#include "util/progress.h"

/* Resolves `in` against the config map of `latest` (NULL: defaults only). */
int lv__cp_config_from_info(lv_checkpoint_config *out, const lv_version_info *latest,
			    const lv_checkpoint_config *in, lv_error *err);
/* The bytes of an lv_checkpoint_config of `version` (2: without on_progress and payload). */
size_t lv__cp_config_size(int version);
/* The caller's progress callback of c (none for NULL or a version-2 config), unthrottled state. */
void lv__cp_config_progress(const lv_checkpoint_config *c, lv__progress *p);

#endif
