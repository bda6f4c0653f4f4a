/*
 * Version records as the commands print them: the JSON object (one shape: every key
 * always present, null where the source did not say), the table, the --stats report.
 *
 * Which keys are null when (also in docs/cli.md): read_version, transaction_uuid and
 * operation_type when the transaction did not say; the manifest-only keys
 * (manifest_path ... config) when the record did not come from a manifest read by this
 * call: rows answered from a checkpoint, and cleaned-up versions -- except manifest_path
 * of a live row, which the listing gives (and manifest_size, when the listing says it).
 */
#include <inttypes.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* The JSON record is written under one flockfile (lvcli_print_version_json); inside it the
 * unlocked stdio calls skip a lock per call (glibc, _GNU_SOURCE). */
#define fputc(c, f) fputc_unlocked(c, f)
#define fputs(s, f) fputs_unlocked(s, f)
#define fwrite(p, n, k, f) fwrite_unlocked(p, n, k, f)

/* Numbers and keys written without printf's format parsing (the JSON of 10,000 versions
 * spent a third of its instructions there: bench/gate.sh). */
static void put_u64(FILE *f, uint64_t v)
{
	char b[24], *p = b + sizeof b;
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	fwrite(p, 1, (size_t)(b + sizeof b - p), f);
}

static void put_i64(FILE *f, int64_t v)
{
	if (v < 0) {
		fputc('-', f);
		put_u64(f, (uint64_t)0 - (uint64_t)v); /* INT64_MIN too */
		return;
	}
	put_u64(f, (uint64_t)v);
}

static void u64_or_null(FILE *f, bool has, uint64_t v)
{
	if (has)
		put_u64(f, v);
	else
		fputs("null", f);
}

static void key(FILE *f, const char *k)
{
	fputs(",\"", f);
	fputs(k, f);
	fputs("\":", f);
}

/* Lance's seven summary counters, in the checkpoint's column order. */
static const struct {
	const char *name;
	size_t off;
} COUNTERS[] = {
	{ "total_fragments", offsetof(lv_version_info, total_fragments) },
	{ "total_data_files", offsetof(lv_version_info, total_data_files) },
	{ "total_files_size", offsetof(lv_version_info, total_files_size) },
	{ "total_deletion_files", offsetof(lv_version_info, total_deletion_files) },
	{ "total_data_file_rows", offsetof(lv_version_info, total_data_file_rows) },
	{ "total_deletion_file_rows", offsetof(lv_version_info, total_deletion_file_rows) },
	{ "total_rows", offsetof(lv_version_info, total_rows) },
};

/* The counters as "k":n (or "k":"n", as LanceDB's metadata has them), comma-separated, the
 * first with a leading comma when `lead`. */
static void counters(FILE *f, const lv_version_info *v, bool as_text, bool lead)
{
	for (size_t i = 0; i < sizeof COUNTERS / sizeof COUNTERS[0]; i++) {
		uint64_t n;
		memcpy(&n, (const char *)v + COUNTERS[i].off, sizeof n);
		fputs(i || lead ? ",\"" : "\"", f);
		fputs(COUNTERS[i].name, f);
		fputs(as_text ? "\":\"" : "\":", f);
		put_u64(f, n);
		if (as_text)
			fputc('"', f);
	}
}

/* The keys only a manifest has; null for a record from a checkpoint. */
static void manifest_details_json(FILE *f, const lv_version_info *v)
{
	bool m = v->has_manifest_details;
	/* a listed manifest's name and size may be known without reading it */
	bool listed = m || (!v->is_cleaned_up && v->manifest_path);
	key(f, "manifest_path");
	lvcli_json_str(f, listed ? v->manifest_path : NULL);
	key(f, "manifest_size"); /* a listing may name a file without its size (0) */
	u64_or_null(f, m || (listed && v->manifest_size), v->manifest_size);
	key(f, "writer_library");
	lvcli_json_str(f, m ? v->writer_library : NULL);
	key(f, "writer_version");
	lvcli_json_str(f, m ? v->writer_version : NULL);
	key(f, "data_format");
	lvcli_json_str(f, m ? v->data_format : NULL);
	key(f, "transaction_file");
	lvcli_json_str(f, m ? v->transaction_file : NULL);
	key(f, "branch");
	lvcli_json_str(f, m ? v->branch : NULL);
	key(f, "num_indices");
	u64_or_null(f, m, v->num_indices);
	key(f, "reader_feature_flags");
	u64_or_null(f, m, v->reader_feature_flags);
	key(f, "writer_feature_flags");
	u64_or_null(f, m, v->writer_feature_flags);
	key(f, "config");
	if (!m) {
		fputs("null", f);
		return;
	}
	fputc('{', f);
	for (size_t i = 0; i < v->num_config; i++) {
		if (i)
			fputc(',', f);
		lvcli_json_str(f, v->config_keys[i]);
		fputc(':', f);
		lvcli_json_str(f, v->config_values[i]);
	}
	fputc('}', f);
}

/* LanceDB's listVersions() record: "timestamp" (ISO 8601 UTC) and "metadata" (the 7
 * counters as strings, under their checkpoint column names). */
static void lancedb_fields(FILE *f, const lv_version_info *v)
{
	char t[40];
	lvcli_format_time(t, sizeof t, v->timestamp_millis);
	key(f, "timestamp");
	lvcli_json_str(f, t);
	fputs(",\"metadata\":{", f);
	counters(f, v, true, false);
	fputc('}', f);
}

void lvcli_print_version_fields(FILE *f, const lv_version_info *v, lvcli_refctx *tags)
{
	fputs("\"version\":", f);
	put_u64(f, v->version);
	lancedb_fields(f, v);
	key(f, "timestamp_millis");
	put_i64(f, v->timestamp_millis);
	counters(f, v, false, true);
	key(f, "is_tagged");
	fputs(v->is_tagged ? "true" : "false", f);
	lvcli_tags_json(f, tags, v);
	key(f, "is_cleaned_up");
	fputs(v->is_cleaned_up ? "true" : "false", f);
	key(f, "transaction_uuid");
	lvcli_json_str(f, v->transaction_uuid);
	key(f, "read_version");
	u64_or_null(f, v->has_read_version, v->read_version);
	key(f, "operation_type");
	lvcli_json_str(f, v->operation_type);
	/* a JSON object built (and UTF-8 checked) by the library */
	key(f, "transaction_properties");
	fputs(v->transaction_properties ? v->transaction_properties : "{}", f);
	manifest_details_json(f, v);
}

void lvcli_print_version_json(FILE *f, const lv_version_info *v, lvcli_refctx *tags)
{
	flockfile(f);
	fputc('{', f);
	lvcli_print_version_fields(f, v, tags);
	fputc('}', f);
	funlockfile(f);
}

void lvcli_format_time(char *buf, size_t cap, int64_t ms)
{
	/* floor division: -1 ms is 1969-12-31T23:59:59.999Z */
	int64_t sec = ms / 1000, frac = ms % 1000;
	if (frac < 0) {
		sec--;
		frac += 1000;
	}
	time_t s = (time_t)sec;
	struct tm tm;
	size_t n = 0;
	/* A corrupt manifest can hold any time: beyond what gmtime represents, print the number. */
	if (gmtime_r(&s, &tm) == NULL || (n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm)) == 0) {
		snprintf(buf, cap, "%" PRId64 " ms", ms);
		return;
	}
	snprintf(buf + n, cap - n, ".%03dZ", (int)frac);
}

void lvcli_print_table_gap(FILE *f, uint64_t gf, uint64_t gl, lv_dataset *ds)
{
	char range[48];
	if (gf == gl)
		snprintf(range, sizeof range, "%" PRIu64, gf);
	else
		snprintf(range, sizeof range, "%" PRIu64 "-%" PRIu64, gf, gl);
	/* a capture's note says why (the warning says the same; a note that cannot be listed is
	 * the history's own warning, so the row then just points at the warnings) */
	const char *reason = NULL, *text = NULL;
	lv_error e = { 0 };
	if (ds && lv_capture_gap_reason(ds, gf, gl, &reason, &text, &e) < 0)
		reason = NULL;
	if (reason)
		fprintf(f, "%8s  (no record of %s: a capture missed %s: %s, %s)\n", range,
			gf == gl ? "this version" : "these versions", gf == gl ? "it" : "them", reason, text);
	else
		fprintf(f, "%8s  (no record of %s: see the warning on stderr)\n", range,
			gf == gl ? "this version" : "these versions");
}

void lvcli_print_table_header(FILE *f, bool show_cleaned)
{
	fprintf(f, "%8s  %-24s  %-16s  %8s  %9s  %6s  %9s  %s%s\n", "VERSION", "TIMESTAMP (UTC)",
		"OPERATION", "READ_VER", "ROWS", "FRAGS", "SIZE", show_cleaned ? "CLEANED_UP  " : "", "TAGS");
}

void lvcli_print_table_row(FILE *f, const lv_version_info *v, bool show_cleaned, lvcli_refctx *tags)
{
	char ts[40], rv[24], names[256], line[512], op[96], size[32];
	lvcli_format_time(ts, sizeof ts, v->timestamp_millis);
	if (v->has_read_version)
		snprintf(rv, sizeof rv, "%" PRIu64, v->read_version);
	else
		snprintf(rv, sizeof rv, "-");
	lvcli_tags_text(names, sizeof names, tags, v);
	if (!names[0] && v->is_tagged) /* the tags could not be listed: say it is tagged */
		snprintf(names, sizeof names, "(tagged)");
	/* the operation padded to 16 columns by display width (width.c), not by bytes */
	const char *e = lvcli_esc(v->operation_type);
	size_t ew = lvcli_width(e);
	snprintf(op, sizeof op, "%s%*s", e, ew < 16 ? (int)(16 - ew) : 0, "");
	lvcli_size(size, sizeof size, v->total_files_size);
	int n = snprintf(line, sizeof line, "%8" PRIu64 "  %-24s  %s  %8s  %9" PRIu64 "  %6" PRIu64 "  %9s  %s%s",
			 v->version, ts, op, rv, v->total_rows, v->total_fragments, size,
			 !show_cleaned ? "" : v->is_cleaned_up ? "yes         " : "            ", names);
	size_t len = n < 0 ? 0 : (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
	while (len && line[len - 1] == ' ')
		len--;
	/* a cleaned-up version dimmed when colour is on (term.c) */
	const char *on = v->is_cleaned_up ? lvcli_color(f, LVCLI_DIM) : "";
	const char *off = *on ? lvcli_color(f, LVCLI_RESET) : "";
	fprintf(f, "%s%.*s%s\n", on, (int)len, line, off);
}

void lvcli_print_report(const lv_history_report *r)
{
	static const char *rungs[] = { "manifests", "newest checkpoint", "older checkpoint" };
	fflush(stdout);
	fprintf(stderr,
		"lancever: answered from %s; manifests read %" PRIu64 ", segments read %" PRIu64
		", vanished %" PRIu64 ", checkpoints rejected %" PRIu64 ", identity check read %" PRIu64
		" bytes, requests %" PRIu64 ", bytes read %" PRIu64 "%s%s\n",
		r->rung >= 0 && r->rung <= 2 ? rungs[r->rung] : "?", r->manifests_read, r->segments_read,
		r->manifests_vanished, r->checkpoints_rejected, r->identity_bytes, r->requests,
		r->bytes_read, r->note[0] ? "; " : "", lvcli_esc(r->note));
}
