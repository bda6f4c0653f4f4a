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
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "jbuf.h"

/* A record is assembled in a buffer (jbuf.h: on the stack for one record, 64 KiB for an
 * array) and handed to stdio in one piece (a string that needs escaping, tag names that do,
 * and a text longer than the buffer in more): the JSON of 10,000 versions spent over a third of its instructions in stdio's
 * per-call work before, and most of the rest in per-piece copies (bench/gate.sh).  Keys and
 * literals are put with lengths known at compile time, so each is a few moves. */
#define LIT(r, s) LVCLI_JB_LIT(r, s)
#define KEY(r, k) LIT(r, ",\"" k "\":")

static void u64_or_null(lvcli_jbuf *r, bool has, uint64_t v)
{
	if (has)
		lvcli_jb_u64(r, v);
	else
		LIT(r, "null");
}

/* The keys only a manifest has; null for a record from a checkpoint. */
static void manifest_details_json(lvcli_jbuf *r, const lv_version_info *v)
{
	bool m = v->has_manifest_details;
	/* a listed manifest's name and size may be known without reading it */
	bool listed = m || (!v->is_cleaned_up && v->manifest_path);
	KEY(r, "manifest_path");
	lvcli_jb_str(r, listed ? v->manifest_path : NULL);
	if (!m && !(listed && v->manifest_size)) { /* a row from a checkpoint: every key null */
		LIT(r, ",\"manifest_size\":null,\"writer_library\":null,\"writer_version\":null"
		       ",\"data_format\":null,\"transaction_file\":null,\"branch\":null"
		       ",\"num_indices\":null,\"reader_feature_flags\":null"
		       ",\"writer_feature_flags\":null,\"config\":null");
		return;
	}
	KEY(r, "manifest_size"); /* a listing may name a file without its size (0) */
	u64_or_null(r, m || (listed && v->manifest_size), v->manifest_size);
	KEY(r, "writer_library");
	lvcli_jb_str(r, m ? v->writer_library : NULL);
	KEY(r, "writer_version");
	lvcli_jb_str(r, m ? v->writer_version : NULL);
	KEY(r, "data_format");
	lvcli_jb_str(r, m ? v->data_format : NULL);
	KEY(r, "transaction_file");
	lvcli_jb_str(r, m ? v->transaction_file : NULL);
	KEY(r, "branch");
	lvcli_jb_str(r, m ? v->branch : NULL);
	KEY(r, "num_indices");
	u64_or_null(r, m, v->num_indices);
	KEY(r, "reader_feature_flags");
	u64_or_null(r, m, v->reader_feature_flags);
	KEY(r, "writer_feature_flags");
	u64_or_null(r, m, v->writer_feature_flags);
	KEY(r, "config");
	if (!m) {
		LIT(r, "null");
		return;
	}
	lvcli_jb_c(r, '{');
	for (size_t i = 0; i < v->num_config; i++) {
		if (i)
			lvcli_jb_c(r, ',');
		lvcli_jb_str(r, v->config_keys[i]);
		lvcli_jb_c(r, ':');
		lvcli_jb_str(r, v->config_values[i]);
	}
	lvcli_jb_c(r, '}');
}

static bool fast_time(char *buf, size_t cap, int64_t sec, int frac);

/*
 * The record's head, from "version" to "is_tagged", written through a local pointer after
 * one check for room (no check per piece): HEAD_MAX bounds its literals (388 bytes at most),
 * its 16 numbers of at most 20 digits and a sign, and the timestamp's 40 bytes.  The
 * buffers of this file are 4 KiB or more, so a flush always makes the room.
 */
#define HEAD_MAX 1280
#define W(o, s) (memcpy(o, "" s, sizeof(s) - 1), o += sizeof(s) - 1)
#define WNUM(o, v) (o = lvcli_jb_dec(o, v))
/* Lance's seven summary counters in the checkpoint's column order, as "k":"n" inside
 * LanceDB's metadata and as ,"k":n: each formatted once (at d[i], n[i] digits), the second
 * form a copy of those 20 bytes (at least 100 bytes apart: keys lie between; the bytes past
 * the digits are overwritten by what follows). */
static inline void copy20(char *o, const char *s)
{
	char t[20]; /* through registers: the two ranges may not overlap in memcpy */
	memcpy(t, s, 20);
	memcpy(o, t, 20);
}
#define COUNTER_TEXT(o, key, x, i) (W(o, key), d[i] = o, WNUM(o, x), n[i] = (size_t)(o - d[i]))
#define COUNTER_NUM(o, key, i) (W(o, key), copy20(o, d[i]), o += n[i])
#define COUNTERS_TEXT(o, v)                                                          \
	(COUNTER_TEXT(o, "\"total_fragments\":\"", v->total_fragments, 0),             \
	 COUNTER_TEXT(o, "\",\"total_data_files\":\"", v->total_data_files, 1),        \
	 COUNTER_TEXT(o, "\",\"total_files_size\":\"", v->total_files_size, 2),        \
	 COUNTER_TEXT(o, "\",\"total_deletion_files\":\"", v->total_deletion_files, 3), \
	 COUNTER_TEXT(o, "\",\"total_data_file_rows\":\"", v->total_data_file_rows, 4), \
	 COUNTER_TEXT(o, "\",\"total_deletion_file_rows\":\"", v->total_deletion_file_rows, 5), \
	 COUNTER_TEXT(o, "\",\"total_rows\":\"", v->total_rows, 6), W(o, "\""))
#define COUNTERS_NUM(o)                                          \
	(COUNTER_NUM(o, ",\"total_fragments\":", 0),             \
	 COUNTER_NUM(o, ",\"total_data_files\":", 1),            \
	 COUNTER_NUM(o, ",\"total_files_size\":", 2),            \
	 COUNTER_NUM(o, ",\"total_deletion_files\":", 3),        \
	 COUNTER_NUM(o, ",\"total_data_file_rows\":", 4),        \
	 COUNTER_NUM(o, ",\"total_deletion_file_rows\":", 5),    \
	 COUNTER_NUM(o, ",\"total_rows\":", 6))

/* The timestamp as lvcli_format_time writes it (printable ASCII: digits, '-', ':', 'T', '.',
 * 'Z', or "N ms"), at most 39 bytes, at o; returns its end. */
static char *put_time(char *o, int64_t ms)
{
	int64_t sec = ms / 1000, frac = ms % 1000; /* floor division, as lvcli_format_time */
	if (frac < 0) {
		sec--;
		frac += 1000;
	}
	if (fast_time(o, 40, sec, (int)frac))
		return o + 24;
	lvcli_format_time(o, 40, ms);
	return o + strlen(o);
}

static void record_head(lvcli_jbuf *r, const lv_version_info *v)
{
	_Static_assert(HEAD_MAX <= 4096, "the record buffers hold a head");
	if (lvcli_jb_free(r) < HEAD_MAX)
		lvcli_jb_flush(r);
	char *o = r->p, *d[7];
	size_t n[7];
	/* LanceDB's listVersions() record: "timestamp" (ISO 8601 UTC) and "metadata" (the 7
	 * counters as strings, under their checkpoint column names) */
	W(o, "\"version\":");
	WNUM(o, v->version);
	W(o, ",\"timestamp\":\"");
	o = put_time(o, v->timestamp_millis);
	W(o, "\",\"metadata\":{");
	COUNTERS_TEXT(o, v);
	W(o, "},\"timestamp_millis\":");
	o = lvcli_jb_idec(o, v->timestamp_millis);
	COUNTERS_NUM(o);
	if (v->is_tagged)
		W(o, ",\"is_tagged\":true");
	else
		W(o, ",\"is_tagged\":false");
	r->p = o;
}

/* ,"tags":[...] (empty without tags): the names of the tags on v (refs.c). */
static void tags_json(lvcli_jbuf *r, lvcli_refctx *tags, const lv_version_info *v)
{
	const char *names[16];
	size_t n = tags ? lvcli_tags_of(tags, v, names, 16) : 0;
	LIT(r, ",\"tags\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			lvcli_jb_c(r, ',');
		lvcli_jb_str(r, names[i]);
	}
	lvcli_jb_c(r, ']');
}

static void version_fields(lvcli_jbuf *r, const lv_version_info *v, lvcli_refctx *tags)
{
	record_head(r, v);
	tags_json(r, tags, v);
	if (v->is_cleaned_up)
		LIT(r, ",\"is_cleaned_up\":true");
	else
		LIT(r, ",\"is_cleaned_up\":false");
	KEY(r, "transaction_uuid");
	lvcli_jb_str(r, v->transaction_uuid);
	KEY(r, "read_version");
	u64_or_null(r, v->has_read_version, v->read_version);
	KEY(r, "operation_type");
	lvcli_jb_str(r, v->operation_type);
	/* a JSON object built (and UTF-8 checked) by the library */
	KEY(r, "transaction_properties");
	if (v->transaction_properties)
		lvcli_jb_put(r, v->transaction_properties, strlen(v->transaction_properties));
	else
		LIT(r, "{}");
	manifest_details_json(r, v);
}

void lvcli_print_version_fields(FILE *f, const lv_version_info *v, lvcli_refctx *tags)
{
	char buf[4096];
	lvcli_jbuf r;
	lvcli_jb_init(&r, f, buf, sizeof buf);
	flockfile(f);
	version_fields(&r, v, tags);
	lvcli_jb_flush(&r);
	funlockfile(f);
}

void lvcli_print_version_json(FILE *f, const lv_version_info *v, lvcli_refctx *tags)
{
	char buf[4096];
	lvcli_jbuf r;
	lvcli_jb_init(&r, f, buf, sizeof buf);
	flockfile(f);
	lvcli_jb_c(&r, '{');
	version_fields(&r, v, tags);
	lvcli_jb_c(&r, '}');
	lvcli_jb_flush(&r);
	funlockfile(f);
}

/* The array's records go to f in pieces of this size, under one lock. */
#define ARRAY_PIECE ((size_t)64 << 10)

int lvcli_print_versions_json(FILE *f, const lv_version_list *l, const size_t *idx, size_t k,
			      bool reverse, lvcli_refctx *tags)
{
	char *buf = malloc(ARRAY_PIECE);
	if (!buf) {
		fputs("lancever: out of memory\n", stderr);
		return 1;
	}
	lvcli_jbuf r;
	lvcli_jb_init(&r, f, buf, ARRAY_PIECE);
	flockfile(f);
	lvcli_jb_c(&r, '[');
	for (size_t j = 0; j < k; j++) {
		if (j)
			LIT(&r, ",\n");
		lvcli_jb_c(&r, '{');
		version_fields(&r, lv_version_list_get(l, idx[reverse ? k - 1 - j : j]), tags);
		lvcli_jb_c(&r, '}');
	}
	LIT(&r, "]\n");
	lvcli_jb_flush(&r);
	funlockfile(f);
	free(buf);
	return 0;
}

static void put2(char *p, unsigned v)
{
	p[0] = (char)('0' + v / 10);
	p[1] = (char)('0' + v % 10);
}

/* "YYYY-MM-DDT" of day `days` since 1970-01-01 (the civil-from-days algorithm of H. Hinnant,
 * proleptic Gregorian like gmtime), into buf[0..11). */
static void civil_day(char *buf, int64_t days)
{
	int64_t z = days + 719468, era = z / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
	unsigned d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
	unsigned y = (unsigned)(era * 400) + yoe + (m <= 2);
	put2(buf, y / 100);
	put2(buf + 2, y % 100);
	buf[4] = '-';
	put2(buf + 5, m);
	buf[7] = '-';
	put2(buf + 8, d);
	buf[10] = 'T';
}

/* 1970-01-01 .. 9999-12-31 as strftime's "%Y-%m-%dT%H:%M:%S" + ".mmmZ" would write it,
 * without the locale and time-zone machinery; false outside that range or when cap is short.
 * The date of the last day written is kept per thread (consecutive versions mostly share it). */
static bool fast_time(char *buf, size_t cap, int64_t sec, int frac)
{
	static _Thread_local int64_t last_day = -1;
	static _Thread_local char last_ymd[11];
	if (sec < 0 || sec > INT64_C(253402300799) || cap < 25)
		return false;
	int64_t day = sec / 86400;
	unsigned rem = (unsigned)(sec % 86400);
	if (day != last_day) {
		civil_day(last_ymd, day);
		last_day = day;
	}
	memcpy(buf, last_ymd, 11);
	put2(buf + 11, rem / 3600);
	buf[13] = ':';
	put2(buf + 14, rem / 60 % 60);
	buf[16] = ':';
	put2(buf + 17, rem % 60);
	buf[19] = '.';
	buf[20] = (char)('0' + frac / 100);
	put2(buf + 21, (unsigned)frac % 100);
	buf[23] = 'Z';
	buf[24] = 0;
	return true;
}

void lvcli_format_time(char *buf, size_t cap, int64_t ms)
{
	/* floor division: -1 ms is 1969-12-31T23:59:59.999Z */
	int64_t sec = ms / 1000, frac = ms % 1000;
	if (frac < 0) {
		sec--;
		frac += 1000;
	}
	if (fast_time(buf, cap, sec, (int)frac))
		return;
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
