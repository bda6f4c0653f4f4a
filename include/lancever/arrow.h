/*
 * lancever/arrow.h - version history as Arrow data, without libarrow.
 *
 * History, live versions, tags and cleanup file lists are handed to any Arrow
 * consumer (pyarrow, polars, DuckDB, nanoarrow, arrow-rs ...) through the Arrow
 * C Stream Interface, and written as an Arrow IPC stream (the "streaming
 * format": a Schema message, RecordBatch messages, an end-of-stream marker).
 *
 * The three structs below are the ABI of the Arrow C Data Interface and C
 * Stream Interface, declared as the Arrow specification publishes them
 * (arrow.apache.org/docs/format/CDataInterface.html, CStreamInterface.html);
 * the guard macros are the spec's, so this header coexists with any other
 * header that declares them.
 *
 * Ownership follows the spec ("move semantics"): an exported ArrowSchema,
 * ArrowArray or ArrowArrayStream belongs to the consumer, who calls its
 * `release` exactly once; `release` sets itself to NULL.  Every exported
 * object is independent of the others: record batches stay valid after the
 * stream and the schema are released, a child array or schema may be moved
 * out of its parent (then the parent must be released), and objects may be
 * released in any order and from any thread.  A stream must not be used from
 * two threads at once.  Stream callbacks return 0 or an errno value (EINVAL,
 * ENOMEM, EIO); after a failure, get_last_error() describes it.
 *
 * Every export below writes `out` only on success; the stream is then the caller's
 * (out->release).  Each returns LV_EINVALID for a NULL argument or an `opts` of an
 * unknown version, and LV_ENOMEM (lancever/common.h conventions).
 */
#ifndef LANCEVER_ARROW_H
#define LANCEVER_ARROW_H

#include "cleanup.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
	const char *format;
	const char *name;
	const char *metadata;
	int64_t flags;
	int64_t n_children;
	struct ArrowSchema **children;
	struct ArrowSchema *dictionary;
	void (*release)(struct ArrowSchema *);
	void *private_data;
};

struct ArrowArray {
	int64_t length;
	int64_t null_count;
	int64_t offset;
	int64_t n_buffers;
	int64_t n_children;
	const void **buffers;
	struct ArrowArray **children;
	struct ArrowArray *dictionary;
	void (*release)(struct ArrowArray *);
	void *private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
	int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
	int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
	const char *(*get_last_error)(struct ArrowArrayStream *);
	void (*release)(struct ArrowArrayStream *);
	void *private_data;
};

#endif /* ARROW_C_STREAM_INTERFACE */

/** Options of every export below.  NULL = all defaults. */
typedef struct lv_arrow_options {
	int version;        /**< LV_ARROW_OPTIONS_VERSION (set by lv_arrow_options_init) */
	size_t batch_rows;  /**< rows per record batch, at most; 0 = LV_ARROW_DEFAULT_BATCH_ROWS */
	size_t batch_bytes; /**< string bytes per record batch, at most (a single larger row still
			         gets a batch of its own); 0 = LV_ARROW_DEFAULT_BATCH_BYTES */
} lv_arrow_options;

#define LV_ARROW_OPTIONS_VERSION 1
#define LV_ARROW_OPTIONS_INIT { .version = LV_ARROW_OPTIONS_VERSION }

/** Sets o->version to `version` (pass LV_ARROW_OPTIONS_VERSION) and every field to 0 (the
 *  defaults).  Errors: LV_EINVALID (NULL o, an unknown version: then nothing is written). */
LV_EXTERN int lv_arrow_options_init(lv_arrow_options *o, int version);
#define LV_ARROW_DEFAULT_BATCH_ROWS 65536
#define LV_ARROW_DEFAULT_BATCH_BYTES ((size_t)64 << 20)

/*
 * Version lists.  The schema is a struct ("+s") of these 22 columns, in this order
 * ("?" = nullable):
 *
 *   version UInt64 "L" | timestamp_millis Timestamp(ms, UTC) "tsm:UTC" (int64 milliseconds
 *   since the Unix epoch) | total_fragments, total_data_files,
 *   total_files_size, total_deletion_files, total_data_file_rows, total_deletion_file_rows,
 *   total_rows UInt64 | is_tagged, is_cleaned_up Boolean "b" | transaction_uuid Utf8 "u" ? |
 *   read_version UInt64 ? | operation_type Utf8 ? | transaction_properties Utf8 (JSON object)
 *     -- the 15 checkpoint columns, with the checkpoint file's nullability and types (its
 *        int64 timestamp_millis typed as the timestamp it is) --
 *   manifest_path Utf8 ? | manifest_size UInt64 ? | writer_library Utf8 ? |
 *   writer_version Utf8 ? | data_format Utf8 ? | branch Utf8 ? | num_indices UInt64 ?
 *     -- manifest details: null unless this call read the version's manifest, except
 *        manifest_path of every live version (from the listing) and manifest_size when
 *        the listing gives it; so a cleaned-up version has them all null, and a live
 *        version answered from a checkpoint has only those two; branch is null on main --
 *
 * Schema metadata: "lancever:kind" ("versions", "history", or the caller's kind) and
 * "lancever:gaps": a JSON array of [first, last] version ranges that no readable
 * record accounts for ("[]" when none; lv_versions lists have none).
 */
#define LV_ARROW_VERSION_COLUMNS 22

/**
 * Reads the live versions (as lv_versions) and exports them as a stream.
 * `out` is written only on success.  `report` may be NULL.
 * Errors: those of lv_versions(), LV_EINVALID (above), LV_ENOMEM.
 */
LV_EXTERN int lv_versions_arrow_stream(struct ArrowArrayStream *out, lv_dataset *ds,
				       const lv_arrow_options *opts, lv_history_report *report,
				       lv_error *err) LV_WARN_UNUSED;

/**
 * Every recorded version (as lv_history), streamed: lv_history_cursor_arrow_stream() over
 * a cursor opened with no options.  Errors: those of lv_history_cursor_open() and
 * lv_history_cursor_arrow_stream().
 */
LV_EXTERN int lv_history_arrow_stream(struct ArrowArrayStream *out, lv_dataset *ds,
				      const lv_arrow_options *opts, lv_history_report *report,
				      lv_error *err) LV_WARN_UNUSED;

/**
 * Exports a history cursor (lv_history_cursor_open, before its first row) as a stream that
 * reads the history as it is consumed: each get_next pulls the next batch_rows rows from
 * the cursor, so memory is bounded by a batch, an archive segment and the head checkpoint
 * (issue 29: about 20 MB at 1,000,000 versions), not by the history, and the batches are
 * those of the whole list (lv_version_list_arrow_stream).  Before returning it runs the
 * cursor's gap scan (lv_history_cursor_gaps: one extra read of the archive segments) so
 * the schema's "lancever:gaps" is complete; the scan's warnings are on the dataset and
 * `report` (may be NULL) is written when this returns, counting the plan and the scan.
 * Takes ownership of `cursor`, on failure too; the stream frees it when released.  The
 * stream holds the dataset (through the cursor): lv_dataset_free() may come first, as with
 * the lists' streams, but do not call other functions on the dataset from another thread
 * while a get_next runs.  An error while streaming (a segment or manifest that cannot be read, out of
 * memory) fails that get_next with EIO (ENOMEM) and get_last_error() naming it, and every
 * later get_next the same way: the stream is never cut short silently.
 * Errors: LV_EINVALID (above; NULL cursor, one already read from), those of
 * lv_history_cursor_gaps(), LV_ENOMEM.
 */
LV_EXTERN int lv_history_cursor_arrow_stream(struct ArrowArrayStream *out,
					     lv_history_cursor *cursor,
					     const lv_arrow_options *opts,
					     lv_history_report *report,
					     lv_error *err) LV_WARN_UNUSED;

/**
 * Exports a list already read (by lv_versions, lv_history, lv_version_get ...).
 * The stream copies what it needs: the list may be freed right after.
 * `kind` names the list in the schema metadata ("versions" / "history"; NULL =
 * "versions").  Errors: LV_EINVALID (NULL out or list, bad opts), LV_ENOMEM.
 */
LV_EXTERN int lv_version_list_arrow_stream(struct ArrowArrayStream *out,
					   const lv_version_list *list, const char *kind,
					   const lv_arrow_options *opts,
					   lv_error *err) LV_WARN_UNUSED;

/*
 * Tags and branches, one row each:
 *   kind "tag" | "branch"  Utf8;  name Utf8;
 *   version UInt64: the tagged version / the version the branch was created from;
 *   branch Utf8, nullable: the tag's branch / the branch's parent (null = main);
 *   manifest_size UInt64 (0 = unknown);
 *   created_at Utf8, nullable: the tag's RFC 3339 text / the branch's creation
 *   time as RFC 3339 UTC seconds ("2026-12-02T17:00:00Z"; null when unknown).
 * The stream copies what it needs from `refs`.
 * Errors: LV_EINVALID (NULL out or refs, bad opts), LV_ENOMEM.
 */
LV_EXTERN int lv_refs_arrow_stream(struct ArrowArrayStream *out, const lv_refs *refs,
				   const lv_arrow_options *opts, lv_error *err) LV_WARN_UNUSED;

/** One file of a cleanup, as its lv_cleanup_file_cb reported it. */
typedef struct lv_cleanup_file {
	const char *path;
	int kind;           /**< enum lv_file_kind */
	uint64_t size;      /**< bytes (`size_bytes` in JSON, CSV, Arrow and Python) */
	const char *reason;
} lv_cleanup_file;

/*
 * A cleanup's files: path Utf8, kind Utf8 (lv_file_kind_name), size UInt64,
 * reason Utf8.  With `stats` (may be NULL) the schema metadata carries the
 * totals: "lancever:dry_run", "lancever:versions_total", "lancever:versions_removed",
 * "lancever:versions_archived", "lancever:checkpoint" (path or ""),
 * "lancever:files_removed", "lancever:bytes_removed".  The stream copies `files`.
 * Errors: LV_EINVALID (NULL out, NULL files with nfiles > 0, a file without a path,
 * bad opts, stats of an unknown version), LV_ENOMEM.  Reads the fields of stats' version.
 */
LV_EXTERN int lv_cleanup_files_arrow_stream(struct ArrowArrayStream *out,
					    const lv_cleanup_file *files, size_t nfiles,
					    const lv_cleanup_stats *stats, bool dry_run,
					    const lv_arrow_options *opts,
					    lv_error *err) LV_WARN_UNUSED;

/** Receives IPC bytes in order; returns 0, or a negative LV_E* code to stop. */
typedef int (*lv_arrow_write_fn)(const void *data, size_t size, void *payload);

/**
 * Writes `stream` as an Arrow IPC stream (metadata version V5, no
 * compression, no dictionaries): its schema (with the schema metadata), one
 * record batch per batch, then the end-of-stream marker.  Takes ownership of
 * `stream`: it is released before returning, whatever the outcome.  Columns
 * of types Boolean, Int8..Int64, UInt8..UInt64, Timestamp (any unit, with or
 * without a time zone: "ts[smun]:TZ") and Utf8 are supported
 * (nullable or not, any offset); other types are LV_EUNSUPPORTED naming the
 * column.  A failing stream callback is LV_EIO with its get_last_error text.
 * Errors: LV_EINVALID (NULL or released stream: then nothing is released; NULL
 * write), LV_EUNSUPPORTED (above, or a schema that is not a struct), LV_EIO (above;
 * LV_ENOMEM if the callback said ENOMEM), LV_ECORRUPT (malformed schema metadata, or
 * arrays that do not match their schema), LV_ELIMIT
 * (metadata too large), LV_ENOMEM, and any negative code `write` returned.
 */
LV_EXTERN int lv_arrow_ipc_write(struct ArrowArrayStream *stream, lv_arrow_write_fn write,
				 void *payload, lv_error *err) LV_WARN_UNUSED;

#ifdef __cplusplus
}
#endif
#endif
