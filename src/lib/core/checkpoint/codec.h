/*
 * The checkpoint file codec (the proposal's 15 columns, properties wrapping,
 * the lancever checksum).  No I/O.
 */
#ifndef LV_CORE_CHECKPOINT_CODEC_H
#define LV_CORE_CHECKPOINT_CODEC_H

#include "core/manifests.h"
#include "lancever/checkpoint.h"

#define LV__CP_DIR "_checkpoints"
/* A checkpoint file larger than this is refused before it is read. */
#define LV__CP_MAX_FILE_BYTES ((uint64_t)1 << 30)

/* A decoded checkpoint file. */
typedef struct lv__cp_file {
	lv_version_list *rows; /* items + arena[0] own the strings */
	uint64_t latest;       /* its newest row's version */
	int64_t created;       /* lance:checkpoint:dataset_created */
	int64_t created_at;
	char path[96];
} lv__cp_file;

void lv__cp_file_dispose(lv__cp_file *f);

/*
 * Decodes and validates one checkpoint file's bytes: schema, nulls, strictly
 * increasing versions, and the checksum (unless !verify_checksum: the fuzz
 * target and salvage only).  Only the rows whose versions are in `keep`
 * (sorted; NULL = all) are materialised.
 */
int lv__cp_decode(const uint8_t *data, size_t size, const char *path, bool verify_checksum,
		  const lv_manifest_entry *keep, size_t nkeep, lv__cp_file *out, lv_error *err);

/* Encodes rows (sorted by version) as a checkpoint file. */
int lv__cp_encode(const lv_version_info *rows, size_t n, int64_t created, lv_buf *out,
		  lv_error *err);

#endif
