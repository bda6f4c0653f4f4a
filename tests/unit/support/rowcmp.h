/*
 * Do two version rows agree on what a checkpoint records?  Shared by test_checkpoint.c
 * and fuzz/checkpoint_fuzz.c; header-only, because the fuzz targets link none of
 * tests/unit/support.
 */
#ifndef LV_ROWCMP_H
#define LV_ROWCMP_H

#include <stdbool.h>
#include <string.h>

#include "lancever/dataset.h"

/* Both NULL, or both strings and equal. */
static inline bool tu_str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The checkpoint columns of two rows agree, but for is_cleaned_up (a cleanup changes it). */
static inline bool tu_same_checkpoint_row(const lv_version_info *a, const lv_version_info *b)
{
	return a->version == b->version && a->timestamp_millis == b->timestamp_millis &&
	       a->total_fragments == b->total_fragments && a->total_data_files == b->total_data_files &&
	       a->total_files_size == b->total_files_size &&
	       a->total_deletion_files == b->total_deletion_files &&
	       a->total_data_file_rows == b->total_data_file_rows &&
	       a->total_deletion_file_rows == b->total_deletion_file_rows &&
	       a->total_rows == b->total_rows && a->is_tagged == b->is_tagged &&
	       a->has_read_version == b->has_read_version && a->read_version == b->read_version &&
	       tu_str_eq(a->transaction_uuid, b->transaction_uuid) &&
	       tu_str_eq(a->operation_type, b->operation_type) &&
	       tu_str_eq(a->transaction_properties, b->transaction_properties);
}

#endif
