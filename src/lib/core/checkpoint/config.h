/* Checkpoint configuration resolution. */
#ifndef LV_CORE_CHECKPOINT_CONFIG_H
#define LV_CORE_CHECKPOINT_CONFIG_H

#include "lancever/checkpoint.h"

/* Resolves `in` against the config map of `latest` (NULL: defaults only). */
int lv__cp_config_from_info(lv_checkpoint_config *out, const lv_version_info *latest,
			    const lv_checkpoint_config *in, lv_error *err);

#endif
