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

/* A decoded checkpoint file (a head checkpoint or an archive segment). */
typedef struct lv__cp_file {
	lv_version_list *rows; /* items + arena[0] own the strings */
	uint64_t latest;       /* its newest row's version */
	int64_t created;       /* lance:checkpoint:dataset_created */
	int64_t created_at;
	char path[96];
	bool is_segment;       /* carries lancever:segment: the range below */
	uint64_t seg_first, seg_last;
	char *archive;         /* a head's lancever:archive (segment index text), or NULL */
	uint64_t file_size;    /* the file's size and time as its read saw them (local disk: */
	int64_t file_mtime_ms; /* storage/stamped.h); 0 and 0 when not known */
} lv__cp_file;

/* The metadata a file of the archive adds (covered by the checksum); NULL fields: absent. */
typedef struct lv__cp_extra {
	const char *segment; /* "<first>-<last>": the version range a segment answers for */
	const char *archive; /* a head's index of the segments (core/checkpoint/archive.h) */
} lv__cp_extra;

void lv__cp_file_dispose(lv__cp_file *f);
/* The end of reading one checkpoint file into f from bytes b: on failure (rc < 0) f is
 * disposed; the bytes go to *keep (when not NULL, the caller's then), else are freed.
 * Returns rc. */
int lv__cp_file_read_end(int rc, lv__cp_file *f, lv_buf *b, lv_buf *keep);

/*
 * Decodes and validates one checkpoint file's bytes: schema, nulls, strictly
 * increasing versions, and the checksum (unless !verify_checksum: the fuzz
 * target and salvage only).  Only the rows whose versions are in `keep`
 * (sorted; NULL = all) are materialised.
 */
int lv__cp_decode(const uint8_t *data, size_t size, const char *path, bool verify_checksum,
		  const lv__manifest_entry *keep, size_t nkeep, lv__cp_file *out, lv_error *err);

/* Encodes rows (sorted by version) as a checkpoint file. */
int lv__cp_encode(const lv_version_info *rows, size_t n, int64_t created, lv_buf *out,
		  lv_error *err);
/* The same with the archive's metadata (x may be NULL). */
int lv__cp_encode_x(const lv_version_info *rows, size_t n, int64_t created, const lv__cp_extra *x,
		    lv_buf *out, lv_error *err);

#endif
