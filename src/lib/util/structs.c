/*
 * util/structs.c - the public structs described to FFI callers (lv_struct_info,
 * lv_struct_field in lancever/common.h), so that no binding copies a layout.
 *
 * Invariants: every struct of include/lancever/ that a caller allocates, fills or
 * reads (options, policies, configs, results, the views handed out) has one row in
 * STRUCTS, with every field in declaration order; offsets and sizes come from
 * offsetof/sizeof, never by hand (tests/unit/test_structs.c checks that the fields
 * tile each struct: no overlap, no gap beyond alignment padding).  lv_storage_options
 * is an opaque bag (no layout to describe).  A leaf: it
 * includes only public headers.
 */
#include <stddef.h>
#include <string.h>

#include "lancever/lancever.h"
#include "lancever/sys/storage.h"

typedef struct field {
	const char *name;
	int type;
	size_t offset, size;
} field;

#define F(S, f, t) { #f, LV_FIELD_##t, offsetof(S, f), sizeof(((S *)0)->f) }

static const field ERROR_F[] = { F(lv_error, code, INT), F(lv_error, message, CHARS) };
static const field BUF_F[] = { F(lv_buf, ptr, PTR), F(lv_buf, size, SIZE) };
static const field OPEN_F[] = {
	F(lv_open_options, version, INT), F(lv_open_options, threads, INT),
	F(lv_open_options, branch, STR), F(lv_open_options, storage, PTR),
};
static const field REPORT_F[] = {
	F(lv_history_report, version, INT), F(lv_history_report, rung, INT),
	F(lv_history_report, checkpoint_version, U64), F(lv_history_report, checkpoints_rejected, U64),
	F(lv_history_report, manifests_read, U64), F(lv_history_report, manifests_vanished, U64),
	F(lv_history_report, identity_bytes, U64), F(lv_history_report, requests, U64),
	F(lv_history_report, bytes_read, U64), F(lv_history_report, note, CHARS),
	F(lv_history_report, unrecorded_versions, U64), F(lv_history_report, warnings, U64),
	F(lv_history_report, segments_read, U64),
};
#define VI(f, t) F(lv_version_info, f, t)
static const field INFO_F[] = {
	VI(version, U64), VI(timestamp_millis, I64), VI(total_fragments, U64),
	VI(total_data_files, U64), VI(total_files_size, U64), VI(total_deletion_files, U64),
	VI(total_data_file_rows, U64), VI(total_deletion_file_rows, U64), VI(total_rows, U64),
	VI(is_tagged, BOOL), VI(is_cleaned_up, BOOL), VI(transaction_uuid, STR),
	VI(has_read_version, BOOL), VI(read_version, U64), VI(operation_type, STR),
	VI(transaction_properties, STR), VI(has_manifest_details, BOOL), VI(timestamp_nanos, I64),
	VI(manifest_path, STR), VI(manifest_size, U64), VI(writer_library, STR),
	VI(writer_version, STR), VI(data_format, STR), VI(transaction_file, STR),
	VI(transaction_inline, BOOL), VI(reader_feature_flags, U64), VI(writer_feature_flags, U64),
	VI(branch, STR), VI(num_indices, SIZE), VI(num_config, SIZE), VI(config_keys, PTR),
	VI(config_values, PTR),
};
static const field WARNING_F[] = {
	F(lv_warning, kind, INT), F(lv_warning, path, STR), F(lv_warning, first, U64),
	F(lv_warning, last, U64), F(lv_warning, message, STR),
};
static const field TAG_F[] = {
	F(lv_tag, name, STR), F(lv_tag, branch, STR), F(lv_tag, version, U64),
	F(lv_tag, manifest_size, U64), F(lv_tag, created_at, STR), F(lv_tag, updated_at, STR),
	F(lv_tag, metadata, STR),
};
static const field BRANCH_F[] = {
	F(lv_branch, name, STR), F(lv_branch, parent_branch, STR), F(lv_branch, parent_version, U64),
	F(lv_branch, create_at, I64), F(lv_branch, manifest_size, U64),
};
static const field REFS_BAD_F[] = {
	F(lv_refs_bad, kind, INT), F(lv_refs_bad, path, STR), F(lv_refs_bad, message, STR),
};
static const field CONFIG_F[] = {
	F(lv_checkpoint_config, version, INT), F(lv_checkpoint_config, enabled, INT),
	F(lv_checkpoint_config, max_entries, I64), F(lv_checkpoint_config, max_checkpoint_files, I64),
	F(lv_checkpoint_config, archive, INT), F(lv_checkpoint_config, archive_segment_rows, I64),
	F(lv_checkpoint_config, on_progress, PTR), F(lv_checkpoint_config, payload, PTR),
};
#define CR(f, t) F(lv_checkpoint_result, f, t)
static const field RESULT_F[] = {
	CR(version, INT), CR(written, BOOL), CR(already_present, BOOL), CR(latest_version, U64),
	CR(entries, U64), CR(new_entries, U64), CR(file_size, U64), CR(files_pruned, U64),
	CR(path, CHARS), CR(report, PTR), CR(files_quarantined, U64), CR(unrecorded_versions, U64),
	CR(segments_written, U64), CR(segment_bytes, U64), CR(archived_through, U64),
	CR(recorded_versions, U64),
};
static const field HOPTS_F[] = {
	F(lv_history_options, version, INT), F(lv_history_options, limit, U64),
	F(lv_history_options, since_version, U64), F(lv_history_options, since_time, BOOL),
	F(lv_history_options, since_ms, I64),
};
static const field CAND_F[] = {
	F(lv_cleanup_candidate, path, STR), F(lv_cleanup_candidate, kind, INT),
	F(lv_cleanup_candidate, size, U64), F(lv_cleanup_candidate, reason, STR),
	F(lv_cleanup_candidate, unverified, BOOL), F(lv_cleanup_candidate, version, U64),
};
#define CP(f, t) F(lv_cleanup_policy, f, t)
static const field POLICY_F[] = {
	CP(version, INT), CP(older_than_ms, I64), CP(retain_versions, I64), CP(before_version, U64),
	CP(delete_unverified, BOOL), CP(error_if_tagged_old_versions, BOOL), CP(dry_run, BOOL),
	CP(now_ms, I64), CP(checkpoint, PTR), CP(on_file, PTR), CP(on_progress, PTR),
	CP(payload, PTR), CP(delete_rate_limit, DOUBLE), CP(versions, PTR), CP(nversions, SIZE),
	CP(on_candidate, PTR), CP(on_referenced_branch, PTR), CP(on_plan, PTR),
	CP(clean_referenced_branches, BOOL),
};
#define CS(f, t) F(lv_cleanup_stats, f, t)
static const field STATS_F[] = {
	CS(version, INT), CS(versions_total, U64), CS(versions_removed, U64),
	CS(versions_archived, U64), CS(files_removed, U64S), CS(bytes_removed, U64S),
	CS(checkpoint_written, BOOL), CS(checkpoint_path, CHARS), CS(failed_deletes, U64),
};
#define EP(f, t) F(lv_expire_policy, f, t)
static const field EXPIRE_F[] = {
	EP(version, INT), EP(older_than_ms, I64), EP(retain_versions, I64), EP(before_version, U64),
	EP(keep_one_per_ms, I64), EP(error_if_tagged_old_versions, BOOL), EP(dry_run, BOOL),
	EP(delete_rate_limit, DOUBLE), EP(now_ms, I64), EP(checkpoint, PTR), EP(on_file, PTR),
	EP(on_progress, PTR), EP(payload, PTR),
};
static const field ITEM_F[] = {
	F(lv_check_item, kind, INT), F(lv_check_item, path, STR), F(lv_check_item, status, INT),
	F(lv_check_item, message, STR), F(lv_check_item, rows, U64), F(lv_check_item, first, U64),
	F(lv_check_item, last, U64), F(lv_check_item, salvageable, U64),
};
static const field CHECK_F[] = {
	F(lv_check_options, version, INT), F(lv_check_options, salvage, BOOL),
	F(lv_check_options, checkpoint, PTR), F(lv_check_options, on_progress, PTR),
	F(lv_check_options, payload, PTR),
};
static const field ARROW_F[] = {
	F(lv_arrow_options, version, INT), F(lv_arrow_options, batch_rows, SIZE),
	F(lv_arrow_options, batch_bytes, SIZE),
};
static const field CFILE_F[] = {
	F(lv_cleanup_file, path, STR), F(lv_cleanup_file, kind, INT), F(lv_cleanup_file, size, U64),
	F(lv_cleanup_file, reason, STR),
};
static const field COLUMN_F[] = {
	F(lv_column, name, STR), F(lv_column, type, INT), F(lv_column, nullable, BOOL),
	F(lv_column, u64, PTR), F(lv_column, i64, PTR), F(lv_column, bools, PTR),
	F(lv_column, str_offsets, PTR), F(lv_column, str_data, PTR), F(lv_column, validity, PTR),
	F(lv_column, f32, PTR), F(lv_column, list_size, UNSIGNED),
};
static const field KV_F[] = { F(lv_kv, key, STR), F(lv_kv, value, PTR), F(lv_kv, value_len, SIZE) };
static const field LFOPTS_F[] = {
	F(lv_lancefile_write_options, version, INT), F(lv_lancefile_write_options, file_version, INT),
	F(lv_lancefile_write_options, max_page_rows, SIZE),
};
static const field ENTRY_F[] = {
	F(lv_list_entry, path, STR), F(lv_list_entry, size, U64), F(lv_list_entry, mtime_ms, I64),
};
static const field SSTATS_F[] = {
	F(lv_storage_stats, version, INT), F(lv_storage_stats, requests, U64), F(lv_storage_stats, bytes_read, U64),
	F(lv_storage_stats, bytes_written, U64),
};
#define OP(f, t) F(lv_storage_ops, f, t)
static const field OPS_F[] = {
	OP(version, INT), OP(list, PTR), OP(read, PTR), OP(read_range, PTR), OP(head, PTR),
	OP(write, PTR), OP(create, PTR), OP(del, PTR), OP(close, PTR), OP(list_names, PTR),
	OP(del_many, PTR), OP(flags, UNSIGNED), OP(credential_source, PTR),
};
static const field COPTS_F[] = {
	F(lv_capture_options, version, INT), F(lv_capture_options, flush_ms, I64),
};
#define CT(f, t) F(lv_capture_stats, f, t)
static const field CSTATS_F[] = {
	CT(version, INT), CT(captured, U64), CT(missed, U64), CT(requests, U64), CT(errors, U64),
	CT(flushes, U64), CT(newest_version, U64), CT(last_lag_ms, I64), CT(held, U64), CT(polls, U64),
	CT(flushed_version, U64),
};

#define WO(f, t) F(lv_watch_options, f, t)
static const field WOPTS_F[] = {
	WO(version, INT), WO(flush_ms, I64), WO(min_interval_ms, I64), WO(max_interval_ms, I64),
	WO(discover_ms, I64), WO(threads, INT), WO(shard_index, UNSIGNED), WO(shard_count, UNSIGNED),
	WO(no_notify, BOOL), WO(storage, PTR), WO(on_event, PTR), WO(event_ctx, PTR),
};
#define WT(f, t) F(lv_watch_table_stats, f, t)
static const field WSTATS_F[] = {
	WT(table, STR), WT(target, STR), WT(branch, STR), WT(captured, U64), WT(missed, U64),
	WT(requests, U64), WT(errors, U64), WT(flushes, U64), WT(polls, U64),
	WT(newest_version, U64), WT(last_lag_ms, I64), WT(lag_buckets, U64S), WT(lag_count, U64),
	WT(lag_sum_ms, I64), WT(interval_ms, I64), WT(notified, BOOL), WT(tables, U64),
};
static const field WFIELD_F[] = {
	F(lv_watch_field, key, STR), F(lv_watch_field, value, STR), F(lv_watch_field, is_number, BOOL),
};
#define WE(f, t) F(lv_watch_event, f, t)
static const field WEVENT_F[] = {
	WE(kind, INT), WE(level, INT), WE(table, STR), WE(message, STR), WE(fields, PTR),
	WE(nfields, SIZE), WE(time_ms, I64),
};

typedef struct desc {
	const char *name;
	size_t size;
	int version; /* 0: no version field */
	const field *fields;
	size_t n;
} desc;

#define D(S, V, A) { #S, sizeof(S), V, A, sizeof A / sizeof A[0] }

static const desc STRUCTS[] = {
	D(lv_error, 0, ERROR_F),
	D(lv_buf, 0, BUF_F),
	D(lv_open_options, LV_OPEN_OPTIONS_VERSION, OPEN_F),
	D(lv_history_report, LV_HISTORY_REPORT_VERSION, REPORT_F),
	D(lv_version_info, 0, INFO_F),
	D(lv_warning, 0, WARNING_F),
	D(lv_tag, 0, TAG_F),
	D(lv_branch, 0, BRANCH_F),
	D(lv_refs_bad, 0, REFS_BAD_F),
	D(lv_checkpoint_config, LV_CHECKPOINT_CONFIG_VERSION, CONFIG_F),
	D(lv_checkpoint_result, LV_CHECKPOINT_RESULT_VERSION, RESULT_F),
	D(lv_history_options, LV_HISTORY_OPTIONS_VERSION, HOPTS_F),
	D(lv_cleanup_candidate, 0, CAND_F),
	D(lv_cleanup_policy, LV_CLEANUP_POLICY_VERSION, POLICY_F),
	D(lv_cleanup_stats, LV_CLEANUP_STATS_VERSION, STATS_F),
	D(lv_expire_policy, LV_EXPIRE_POLICY_VERSION, EXPIRE_F),
	D(lv_check_item, 0, ITEM_F),
	D(lv_check_options, LV_CHECK_OPTIONS_VERSION, CHECK_F),
	D(lv_arrow_options, LV_ARROW_OPTIONS_VERSION, ARROW_F),
	D(lv_cleanup_file, 0, CFILE_F),
	D(lv_column, 0, COLUMN_F),
	D(lv_kv, 0, KV_F),
	D(lv_lancefile_write_options, LV_LANCEFILE_WRITE_OPTIONS_VERSION, LFOPTS_F),
	D(lv_list_entry, 0, ENTRY_F),
	D(lv_storage_stats, LV_STORAGE_STATS_VERSION, SSTATS_F),
	D(lv_storage_ops, LV_STORAGE_OPS_VERSION, OPS_F),
	D(lv_watch_options, LV_WATCH_OPTIONS_VERSION, WOPTS_F),
	D(lv_watch_table_stats, 0, WSTATS_F),
	D(lv_watch_field, 0, WFIELD_F),
	D(lv_watch_event, 0, WEVENT_F),
	D(lv_capture_options, LV_CAPTURE_OPTIONS_VERSION, COPTS_F),
	D(lv_capture_stats, LV_CAPTURE_STATS_VERSION, CSTATS_F),
};

static const desc *find(const char *name)
{
	for (size_t i = 0; name && i < sizeof STRUCTS / sizeof STRUCTS[0]; i++)
		if (!strcmp(STRUCTS[i].name, name))
			return &STRUCTS[i];
	return NULL;
}

int lv_struct_info(const char *name, size_t *size, int *version, size_t *nfields)
{
	if (!name)
		return LV_EINVALID;
	const desc *d = find(name);
	if (!d)
		return LV_ENOTFOUND;
	if (size)
		*size = d->size;
	if (version)
		*version = d->version;
	if (nfields)
		*nfields = d->n;
	return 0;
}

int lv_struct_field(const char *name, size_t i, const char **fname, int *type, size_t *offset,
		    size_t *size)
{
	if (!name)
		return LV_EINVALID;
	const desc *d = find(name);
	if (!d || i >= d->n)
		return LV_ENOTFOUND;
	const field *f = &d->fields[i];
	if (fname)
		*fname = f->name;
	if (type)
		*type = f->type;
	if (offset)
		*offset = f->offset;
	if (size)
		*size = f->size;
	return 0;
}
