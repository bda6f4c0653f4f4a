/*
 * Prints, as JSON, the size and field offsets of every C struct the Python package
 * mirrors with ctypes (python/lancever/_lib.py), computed by the compiler from the
 * public headers.  python/tests/test_abi.py compares them with ctypes' own.
 */
#include <stddef.h>
#include <stdio.h>

#include <lancever/lancever.h>
#include <lancever/arrow.h>

static int first_struct = 1, first_field;

static void begin(const char *name, size_t size)
{
	printf("%s\"%s\":{\"size\":%zu,\"fields\":{", first_struct ? "" : ",", name, size);
	first_struct = 0;
	first_field = 1;
}

static void field(const char *name, size_t off)
{
	printf("%s\"%s\":%zu", first_field ? "" : ",", name, off);
	first_field = 0;
}

static void end(void)
{
	printf("}}");
}

#define S(T) begin(#T, sizeof(T))
#define F(T, f) field(#f, offsetof(T, f))

int main(void)
{
	printf("{\"open_options_version\":%d,"
	       "\"cleanup_policy_version\":%d,\"checkpoint_config_version\":%d,"
	       "\"arrow_options_version\":%d,\"structs\":{",
	       LV_OPEN_OPTIONS_VERSION, LV_CLEANUP_POLICY_VERSION,
	       LV_CHECKPOINT_CONFIG_VERSION, LV_ARROW_OPTIONS_VERSION);
	S(lv_error); F(lv_error, code); F(lv_error, message); end();
	S(lv_open_options); F(lv_open_options, version); F(lv_open_options, threads);
	F(lv_open_options, branch); F(lv_open_options, storage); end();
	S(lv_history_report); F(lv_history_report, rung); F(lv_history_report, checkpoint_version);
	F(lv_history_report, checkpoints_rejected); F(lv_history_report, manifests_read);
	F(lv_history_report, manifests_vanished); F(lv_history_report, identity_bytes);
	F(lv_history_report, requests); F(lv_history_report, bytes_read); F(lv_history_report, note);
	F(lv_history_report, unrecorded_versions); F(lv_history_report, warnings);
	F(lv_history_report, segments_read); end();
	S(lv_version_info); F(lv_version_info, version); F(lv_version_info, timestamp_millis);
	F(lv_version_info, total_fragments); F(lv_version_info, total_data_files);
	F(lv_version_info, total_files_size); F(lv_version_info, total_deletion_files);
	F(lv_version_info, total_data_file_rows); F(lv_version_info, total_deletion_file_rows);
	F(lv_version_info, total_rows); F(lv_version_info, is_tagged); F(lv_version_info, is_cleaned_up);
	F(lv_version_info, transaction_uuid); F(lv_version_info, has_read_version);
	F(lv_version_info, read_version); F(lv_version_info, operation_type);
	F(lv_version_info, transaction_properties); F(lv_version_info, has_manifest_details);
	F(lv_version_info, timestamp_nanos); F(lv_version_info, manifest_path);
	F(lv_version_info, manifest_size); F(lv_version_info, writer_library);
	F(lv_version_info, writer_version); F(lv_version_info, data_format);
	F(lv_version_info, transaction_file); F(lv_version_info, transaction_inline);
	F(lv_version_info, reader_feature_flags); F(lv_version_info, writer_feature_flags);
	F(lv_version_info, branch); F(lv_version_info, num_indices); F(lv_version_info, num_config);
	F(lv_version_info, config_keys); F(lv_version_info, config_values); end();
	S(lv_warning); F(lv_warning, kind); F(lv_warning, path); F(lv_warning, first);
	F(lv_warning, last); F(lv_warning, message); end();
	S(lv_tag); F(lv_tag, name); F(lv_tag, branch); F(lv_tag, version); F(lv_tag, manifest_size);
	F(lv_tag, created_at); F(lv_tag, updated_at); F(lv_tag, metadata); end();
	S(lv_branch); F(lv_branch, name); F(lv_branch, parent_branch); F(lv_branch, parent_version);
	F(lv_branch, create_at); F(lv_branch, manifest_size); end();
	S(lv_checkpoint_config); F(lv_checkpoint_config, version); F(lv_checkpoint_config, enabled);
	F(lv_checkpoint_config, max_entries); F(lv_checkpoint_config, max_checkpoint_files);
	F(lv_checkpoint_config, archive); F(lv_checkpoint_config, archive_segment_rows); end();
	S(lv_checkpoint_result); F(lv_checkpoint_result, written);
	F(lv_checkpoint_result, already_present); F(lv_checkpoint_result, latest_version);
	F(lv_checkpoint_result, entries); F(lv_checkpoint_result, new_entries);
	F(lv_checkpoint_result, file_size); F(lv_checkpoint_result, files_pruned);
	F(lv_checkpoint_result, path); F(lv_checkpoint_result, report);
	F(lv_checkpoint_result, files_quarantined); F(lv_checkpoint_result, unrecorded_versions);
	F(lv_checkpoint_result, segments_written); F(lv_checkpoint_result, segment_bytes);
	F(lv_checkpoint_result, archived_through); F(lv_checkpoint_result, recorded_versions); end();
	S(lv_cleanup_policy); F(lv_cleanup_policy, version); F(lv_cleanup_policy, older_than_ms);
	F(lv_cleanup_policy, retain_versions); F(lv_cleanup_policy, before_version);
	F(lv_cleanup_policy, delete_unverified); F(lv_cleanup_policy, error_if_tagged_old_versions);
	F(lv_cleanup_policy, dry_run); F(lv_cleanup_policy, now_ms); F(lv_cleanup_policy, checkpoint);
	F(lv_cleanup_policy, on_file); F(lv_cleanup_policy, on_progress);
	F(lv_cleanup_policy, payload); F(lv_cleanup_policy, delete_rate_limit);
	F(lv_cleanup_policy, versions); F(lv_cleanup_policy, nversions);
	F(lv_cleanup_policy, on_candidate); F(lv_cleanup_policy, on_referenced_branch);
	F(lv_cleanup_policy, on_plan); F(lv_cleanup_policy, clean_referenced_branches); end();
	S(lv_cleanup_candidate); F(lv_cleanup_candidate, path); F(lv_cleanup_candidate, kind);
	F(lv_cleanup_candidate, size); F(lv_cleanup_candidate, reason);
	F(lv_cleanup_candidate, unverified); F(lv_cleanup_candidate, version); end();
	S(lv_cleanup_stats); F(lv_cleanup_stats, versions_total); F(lv_cleanup_stats, versions_removed);
	F(lv_cleanup_stats, versions_archived); F(lv_cleanup_stats, files_removed);
	F(lv_cleanup_stats, bytes_removed); F(lv_cleanup_stats, checkpoint_written);
	F(lv_cleanup_stats, checkpoint_path); F(lv_cleanup_stats, failed_deletes); end();
	S(lv_arrow_options); F(lv_arrow_options, version); F(lv_arrow_options, batch_rows);
	F(lv_arrow_options, batch_bytes); end();
	S(lv_cleanup_file); F(lv_cleanup_file, path); F(lv_cleanup_file, kind);
	F(lv_cleanup_file, size); F(lv_cleanup_file, reason); end();
	S(struct ArrowSchema); F(struct ArrowSchema, format); F(struct ArrowSchema, name);
	F(struct ArrowSchema, metadata); F(struct ArrowSchema, flags); F(struct ArrowSchema, n_children);
	F(struct ArrowSchema, children); F(struct ArrowSchema, dictionary); F(struct ArrowSchema, release);
	F(struct ArrowSchema, private_data); end();
	S(struct ArrowArray); F(struct ArrowArray, length); F(struct ArrowArray, null_count);
	F(struct ArrowArray, offset); F(struct ArrowArray, n_buffers); F(struct ArrowArray, n_children);
	F(struct ArrowArray, buffers); F(struct ArrowArray, children); F(struct ArrowArray, dictionary);
	F(struct ArrowArray, release); F(struct ArrowArray, private_data); end();
	S(struct ArrowArrayStream); F(struct ArrowArrayStream, get_schema);
	F(struct ArrowArrayStream, get_next); F(struct ArrowArrayStream, get_last_error);
	F(struct ArrowArrayStream, release); F(struct ArrowArrayStream, private_data); end();
	printf("}}\n");
	return 0;
}
