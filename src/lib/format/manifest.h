/*
 * Lance manifest and transaction parsers.  Pure: they take bytes and return
 * views into those bytes (valid while the bytes live); no I/O, no allocation.
 *
 * File layout (Lance table format, the manifest file):
 *   [IndexSection u32+pb][Transaction u32+pb][Manifest u32+pb][i64 pos][u16][u16]["LANC"]
 */
#ifndef LV_FORMAT_MANIFEST_H
#define LV_FORMAT_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lancever/common.h"

typedef struct lv__sv {
	const char *p;
	size_t n;
} lv__sv;

/* The 7 counters of Lance's ManifestSummary, computed as Lance does. */
typedef struct lv__summary {
	uint64_t total_fragments;
	uint64_t total_data_files;
	uint64_t total_files_size;
	uint64_t total_deletion_files;
	uint64_t total_data_file_rows;
	uint64_t total_deletion_file_rows;
	uint64_t total_rows;
} lv__summary;

/* Feature flags lancever understands (reader_feature_flags / writer_feature_flags). */
#define LV_FLAG_DELETION_FILES 1u
#define LV_FLAG_STABLE_ROW_IDS 2u
#define LV_FLAG_USE_V2_FORMAT_DEPRECATED 4u
#define LV_FLAG_TABLE_CONFIG 8u
#define LV_FLAG_BASE_PATHS 16u
#define LV_FLAG_DISABLE_TRANSACTION_FILE 32u
/* 64: data overlay files (Lance 9.1+, unstable): Lance 8 and Lance 12 release builds
 * refuse a manifest with it, and so does lancever. */
#define LV_FLAG_UNSTABLE_DATA_OVERLAY_FILES 64u
/* 128: covering-index metadata (IndexMetadata.covering_fields, Lance 11.0.0+): set as reader
 * and writer flag by pylance 14.0.2 when an index with covering fields is committed [observed].
 * It adds no file: an index's files stay under _indices/<uuid>/, so reading and cleanup know it. */
#define LV_FLAG_COVERED_INDEX_METADATA 128u
/* 256: data files of several exact format versions (Lance 12); reader and writer flag
 * must be set together, a half-set manifest is corrupt (as Lance 12 says).  pylance 14.0.2 sets
 * it on an append or update with another data_storage_version [observed]; each DataFile's own
 * file version is authoritative, which changes no file a manifest references. */
#define LV_FLAG_MIXED_DATA_FILE_VERSIONS 256u
/* Newer bits, in flux upstream (named for messages only; lancever neither reads nor cleans a
 * manifest with them): 512 fragment reuse with stable row ids, 1024 fragment-reuse index
 * (tagged FRI history, _fri/ row maps), 2048 claimed twice upstream (semantic types / managed
 * blobs). */
#define LV_FLAG_FRAG_REUSE_STABLE_ROW_IDS 512u
#define LV_FLAG_FRAGMENT_REUSE_INDEX 1024u
#define LV_FLAG_BIT11 2048u
/* Reader flags a manifest may carry for lancever to read it: what Lance 12.0.0 reads. */
#define LV_READER_FLAGS_KNOWN 447u

/* Names: lv_feature_flag_name() (lancever/dataset.h), defined in core/manifests.c. */

/* Files a manifest references, reported to an optional visitor during the parse. */
typedef struct lv__data_file_ref {
	lv__sv path;          /* relative to data/ of its base */
	bool has_base_id;
	uint32_t base_id;
	uint64_t file_size_bytes;
} lv__data_file_ref;

typedef struct lv__deletion_ref {
	uint64_t fragment_id;
	uint64_t read_version;
	uint64_t id;
	uint32_t file_type;  /* 0 = arrow, 1 = bitmap */
	bool has_base_id;
	uint32_t base_id;
	uint64_t num_deleted_rows;
} lv__deletion_ref;

typedef struct lv__manifest_visitor {
	/* Return 0 to continue; a negative LV_E* aborts the parse with that code. */
	int (*data_file)(const lv__data_file_ref *f, void *payload);
	int (*deletion_file)(const lv__deletion_ref *d, void *payload);
	/* External row-id / version sequence files (ExternalFile.path, relative to root). */
	int (*external_file)(lv__sv path, void *payload);
	void *payload;
} lv__manifest_visitor;

typedef struct lv__manifest {
	uint64_t version;
	bool has_timestamp;
	int64_t ts_seconds;
	int32_t ts_nanos;
	uint64_t reader_flags;
	uint64_t writer_flags;
	bool has_index_section;
	uint64_t index_section;
	bool has_transaction_section;
	uint64_t transaction_section;   /* field 23 (Lance 14) if present, else 21 (Lance 8, 12) */
	bool transaction_section_v14;   /* it came from field 23 */
	bool has_max_fragment_id;
	uint32_t max_fragment_id;
	bool has_branch;
	lv__sv branch;
	lv__sv tag;
	lv__sv transaction_file;
	lv__sv writer_library;
	lv__sv writer_version;
	lv__sv data_format_file;
	lv__sv data_format_version;
	size_t num_fields;
	size_t num_config;
	size_t num_base_paths;
	uint64_t next_row_id;
	lv__summary summary;

	/* Spans for second passes (config map, base paths, sections). */
	const uint8_t *file;
	size_t file_size;
	uint64_t manifest_pos;  /* offset of the u32 length of the Manifest message */
	const uint8_t *msg;     /* the Manifest message */
	size_t msg_len;
} lv__manifest;

/*
 * Commit time of a manifest, exactly as Lance 8.0.0 reports it (checked against
 * LanceDB's listVersions() on crafted timestamps, tests/interop/test_corruption.mjs):
 * Lance sums seconds * 1e9 + nanos in u128 (negative values sign-extended, so
 * they wrap to huge numbers), splits the sum back into seconds (truncated to
 * i64) and sub-second nanos, and if chrono cannot represent that time (years
 * beyond +-262,000) reports the Unix epoch.  So a negative or absurd timestamp
 * in a corrupt manifest reads as 0, like in Lance, and nothing here overflows.
 * `nanos` may be NULL; it receives the full-precision time, wrapped to int64.
 */
int64_t lv__manifest_ts_millis(const lv__manifest *m, int64_t *nanos);

/*
 * Parses a whole manifest file.  `name` is used in error messages.  Unknown
 * reader feature flags are LV_EUNSUPPORTED; malformed bytes LV_ECORRUPT.
 * `vis` may be NULL.
 */
int lv__manifest_parse(const uint8_t *file, size_t size, const char *name,
		       const lv__manifest_visitor *vis, lv__manifest *out, lv_error *err);

/* Iterates the config map: *cursor starts at 0; returns 1 with key/value, 0 at end. */
int lv__manifest_config_next(const lv__manifest *m, size_t *cursor, lv__sv *key, lv__sv *value);

/* A BasePath entry (Manifest.base_paths). */
typedef struct lv__base_path {
	uint32_t id;
	bool has_name;
	lv__sv name;
	bool is_dataset_root;
	lv__sv path;
} lv__base_path;
int lv__manifest_base_path_next(const lv__manifest *m, size_t *cursor, lv__base_path *out);

/* Index metadata from the index section (IndexSection.indices). */
typedef struct lv__index_ref {
	uint8_t uuid[16];
	bool has_uuid;
	lv__sv name;
	uint64_t dataset_version;
	bool has_base_id;
	uint32_t base_id;
} lv__index_ref;
typedef int (*lv__index_cb)(const lv__index_ref *idx, void *payload);
/* Walks the index section if present; returns count (>= 0) or a negative LV_E*. */
long lv__manifest_indices(const lv__manifest *m, const char *name, lv__index_cb cb, void *payload,
			  lv_error *err);

/* Span of the inline transaction, if the manifest has one (bounds-checked). */
int lv__manifest_inline_txn(const lv__manifest *m, const char *name, const uint8_t **txn,
			    size_t *len, lv_error *err);

/* ---- transactions ---- */

typedef struct lv__txn {
	uint64_t read_version;
	lv__sv uuid;
	lv__sv tag;
	uint32_t op_field;     /* 100..199, the set `operation` oneof member */
	const char *op_name;   /* "Append", ...; "Unknown(N)" (in op_buf) for a number not known */
	char op_buf[24];
	size_t num_properties;
	const uint8_t *msg;
	size_t msg_len;
} lv__txn;

/* Parses a serialized Transaction message (the .txn file or the inline section). */
int lv__txn_parse(const uint8_t *msg, size_t len, const char *name, lv__txn *out, lv_error *err);

/* Iterates transaction_properties entries (map<string,string>). */
int lv__txn_property_next(const lv__txn *t, size_t *cursor, lv__sv *key, lv__sv *value);

/* Operation name for a oneof field number (100..115, Lance 12), NULL otherwise. */
const char *lv__txn_op_name(uint32_t field);

/* ---- version file names: V1 "{v}.manifest", V2 "{u64::MAX - v:020}.manifest" ---- */

enum { LV_NAME_NONE = 0, LV_NAME_V1 = 1, LV_NAME_V2 = 2 };
/* Classifies a file name in _versions/ (no directory part); sets *version for V1/V2. */
int lv__version_name_parse(const char *name, uint64_t *version);
/* Writes "_versions/<name>" for a version into buf (>= 48 bytes). */
void lv__version_path(char *buf, size_t cap, uint64_t version, int scheme);

#endif
