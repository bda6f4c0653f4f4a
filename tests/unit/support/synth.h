/* Synthetic Lance datasets for unit tests: real manifest bytes, written into any storage. */
#ifndef LV_SYNTH_H
#define LV_SYNTH_H

#include <lancever/storage.h>

#include "util/util.h"

typedef struct synth_commit {
	uint64_t version;
	int64_t ts_ms;
	uint64_t read_version;
	const char *uuid;            /* NULL = generated from version */
	uint32_t op_field;           /* 100..114; 0 = Append (100) */
	const char *const *config;   /* key, value, key, value, ..., NULL */
	const char *const *props;    /* transaction properties, same shape */
	uint64_t rows;               /* physical rows of the single fragment (0 = version*10) */
	int scheme;                  /* 1 = V1 names, 2 = V2 (default), 3 = detached (d<v>.manifest) */
	int txn_file_only;
	const char *data_path;        /* the fragment's data file (relative to data/); NULL = data.lance */           /* no inline transaction: only _transactions/<file> */
	uint64_t writer_flags;       /* the manifest's writer_feature_flags (0 = none) */
	uint64_t reader_flags;       /* the manifest's reader_feature_flags (0 = none) */
	const char *overlay_path;    /* a DataOverlayFile (DataFragment field 11) on the fragment,
					with this data file (relative to data/); NULL = none */
} synth_commit;

/* Appends a manifest message and the manifest footer (its offset, version 0.2, "LANC")
 * to `file`, which holds what comes before it (an inline transaction, or nothing). */
void synth_add_manifest(lv__dbuf *file, const lv__dbuf *man);
/* Writes one manifest (inline transaction + manifest + footer).  Returns an LV_* code. */
int synth_write(lv_storage *st, const synth_commit *c);
/* Writes versions 1..n with timestamps base_ms + 1000*v. */
int synth_series(lv_storage *st, uint64_t n, int64_t base_ms);
/* Writes versions first..last the same way (each read_version = v - 1). */
int synth_range(lv_storage *st, uint64_t first, uint64_t last, int64_t base_ms);
/* A new in-memory store holding versions 1..n (synth_series); fails the test on error. */
lv_storage *synth_mem_series(uint64_t n, int64_t base_ms);
/* Writes a tag file _refs/tags/<name>.json. */
int synth_tag(lv_storage *st, const char *name, uint64_t version);
/* Path of version v's manifest (V2 name) in buf. */
const char *synth_manifest_path(char *buf, size_t cap, uint64_t version);

#endif
