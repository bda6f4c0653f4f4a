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
#define fwrite(p, n, k, f) fwrite_unlocked(p, n, k, f)

/* A record is assembled in a buffer on the stack and handed to stdio in a few pieces (one
 * fwrite per piece instead of ~56 per record: the JSON of 10,000 versions spent over a
 * third of its instructions in stdio's per-call work, bench/gate.sh).  Invariant: the bytes
 * reach f in the order they were put; anything written to f directly (tags, a string that
 * needs escaping) is preceded by rb_flush. */
typedef struct {
	FILE *f;
	size_t n;
	char b[4096];
} rbuf;

static void rb_flush(rbuf *r)
{
	if (r->n)
		fwrite(r->b, 1, r->n, r->f);
	r->n = 0;
}

static void rb_put(rbuf *r, const void *p, size_t n)
{
	if (n > sizeof r->b - r->n) {
		rb_flush(r);
		if (n > sizeof r->b) {
			fwrite(p, 1, n, r->f);
			return;
		}
	}
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

static void rb_addc(rbuf *r, char c)
{
	if (r->n == sizeof r->b)
		rb_flush(r);
	r->b[r->n++] = c;
}

/* A string literal (its length known at compile time), and a key (,"k":) as one. */
#define LIT(r, s) rb_put(r, "" s, sizeof(s) - 1)
#define KEY(r, k) LIT(r, ",\"" k "\":")

/* Numbers written without printf's format parsing. */
static void put_u64(rbuf *r, uint64_t v)
{
	char b[24], *p = b + sizeof b;
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	rb_put(r, p, (size_t)(b + sizeof b - p));
}

static void put_i64(rbuf *r, int64_t v)
{
	if (v < 0) {
		rb_addc(r, '-');
		put_u64(r, (uint64_t)0 - (uint64_t)v); /* INT64_MIN too */
		return;
	}
	put_u64(r, (uint64_t)v);
}

static void u64_or_null(rbuf *r, bool has, uint64_t v)
{
	if (has)
		put_u64(r, v);
	else
		LIT(r, "null");
}

static void put_bool(rbuf *r, bool b)
{
	if (b)
		LIT(r, "true");
	else
		LIT(r, "false");
}

/* A JSON string (or null): as-is between quotes when every byte is printable ASCII other
 * than " and \ (lvcli_json_strn's own plain run), else written by lvcli_json_strn. */
static void put_str(rbuf *r, const char *s)
{
	if (!s) {
		LIT(r, "null");
		return;
	}
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (p[i] >= 0x20 && p[i] < 0x80 && p[i] != '"' && p[i] != '\\')
		i++;
	if (p[i] || i + 2 > sizeof r->b) {
		rb_flush(r);
		lvcli_json_strn(r->f, s, strlen(s));
		return;
	}
	rb_addc(r, '"');
	rb_put(r, s, i);
	rb_addc(r, '"');
}

/* Lance's seven summary counters, in the checkpoint's column order: each with its key as
 * ,"name": and as ,"name":" (LanceDB's metadata has them as strings), lengths included. */
#define COUNTER(n)                                                                          \
	{ ",\"" #n "\":", sizeof(",\"" #n "\":") - 1, ",\"" #n "\":\"", sizeof(",\"" #n "\":\"") - 1, \
	  offsetof(lv_version_info, n) }
static const struct {
	const char *num;
	size_t num_len;
	const char *text;
	size_t text_len, off;
} COUNTERS[] = {
	COUNTER(total_fragments),      COUNTER(total_data_files),
	COUNTER(total_files_size),     COUNTER(total_deletion_files),
	COUNTER(total_data_file_rows), COUNTER(total_deletion_file_rows),
	COUNTER(total_rows),
};

/* The counters as "k":n (or "k":"n"), comma-separated, the first with a leading comma when
 * `lead`. */
static void counters(rbuf *r, const lv_version_info *v, bool as_text, bool lead)
{
	for (size_t i = 0; i < sizeof COUNTERS / sizeof COUNTERS[0]; i++) {
		uint64_t n;
		memcpy(&n, (const char *)v + COUNTERS[i].off, sizeof n);
		const char *k = as_text ? COUNTERS[i].text : COUNTERS[i].num;
		size_t kl = as_text ? COUNTERS[i].text_len : COUNTERS[i].num_len, skip = !(i || lead);
		rb_put(r, k + skip, kl - skip);
		put_u64(r, n);
		if (as_text)
			rb_addc(r, '"');
	}
}

/* The keys only a manifest has; null for a record from a checkpoint. */
static void manifest_details_json(rbuf *r, const lv_version_info *v)
{
	bool m = v->has_manifest_details;
	/* a listed manifest's name and size may be known without reading it */
	bool listed = m || (!v->is_cleaned_up && v->manifest_path);
	KEY(r, "manifest_path");
	put_str(r, listed ? v->manifest_path : NULL);
	KEY(r, "manifest_size"); /* a listing may name a file without its size (0) */
	u64_or_null(r, m || (listed && v->manifest_size), v->manifest_size);
	KEY(r, "writer_library");
	put_str(r, m ? v->writer_library : NULL);
	KEY(r, "writer_version");
	put_str(r, m ? v->writer_version : NULL);
	KEY(r, "data_format");
	put_str(r, m ? v->data_format : NULL);
	KEY(r, "transaction_file");
	put_str(r, m ? v->transaction_file : NULL);
	KEY(r, "branch");
	put_str(r, m ? v->branch : NULL);
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
	rb_addc(r, '{');
	for (size_t i = 0; i < v->num_config; i++) {
		if (i)
			rb_addc(r, ',');
		put_str(r, v->config_keys[i]);
		rb_addc(r, ':');
		put_str(r, v->config_values[i]);
	}
	rb_addc(r, '}');
}

/* LanceDB's listVersions() record: "timestamp" (ISO 8601 UTC) and "metadata" (the 7
 * counters as strings, under their checkpoint column names). */
static void lancedb_fields(rbuf *r, const lv_version_info *v)
{
	char t[40];
	lvcli_format_time(t, sizeof t, v->timestamp_millis);
	KEY(r, "timestamp");
	put_str(r, t);
	LIT(r, ",\"metadata\":{");
	counters(r, v, true, false);
	rb_addc(r, '}');
}

static void version_fields(rbuf *r, const lv_version_info *v, lvcli_refctx *tags)
{
	LIT(r, "\"version\":");
	put_u64(r, v->version);
	lancedb_fields(r, v);
	KEY(r, "timestamp_millis");
	put_i64(r, v->timestamp_millis);
	counters(r, v, false, true);
	KEY(r, "is_tagged");
	put_bool(r, v->is_tagged);
	rb_flush(r);
	lvcli_tags_json(r->f, tags, v);
	KEY(r, "is_cleaned_up");
	put_bool(r, v->is_cleaned_up);
	KEY(r, "transaction_uuid");
	put_str(r, v->transaction_uuid);
	KEY(r, "read_version");
	u64_or_null(r, v->has_read_version, v->read_version);
	KEY(r, "operation_type");
	put_str(r, v->operation_type);
	/* a JSON object built (and UTF-8 checked) by the library */
	KEY(r, "transaction_properties");
	if (v->transaction_properties)
		rb_put(r, v->transaction_properties, strlen(v->transaction_properties));
	else
		LIT(r, "{}");
	manifest_details_json(r, v);
}

void lvcli_print_version_fields(FILE *f, const lv_version_info *v, lvcli_refctx *tags)
{
	rbuf r;
	r.f = f;
	r.n = 0;
	version_fields(&r, v, tags);
	rb_flush(&r);
}

void lvcli_print_version_json(FILE *f, const lv_version_info *v, lvcli_refctx *tags)
{
	rbuf r;
	r.f = f;
	r.n = 0;
	flockfile(f);
	rb_addc(&r, '{');
	version_fields(&r, v, tags);
	rb_addc(&r, '}');
	rb_flush(&r);
	funlockfile(f);
}

static void put2(char *p, unsigned v)
{
	p[0] = (char)('0' + v / 10);
	p[1] = (char)('0' + v % 10);
}

/* 1970-01-01 .. 9999-12-31 as strftime's "%Y-%m-%dT%H:%M:%S" + ".mmmZ" would write it,
 * without the locale and time-zone machinery (the civil-from-days algorithm of H. Hinnant,
 * proleptic Gregorian like gmtime); false outside that range or when cap is short. */
static bool fast_time(char *buf, size_t cap, int64_t sec, int frac)
{
	if (sec < 0 || sec > INT64_C(253402300799) || cap < 25)
		return false;
	int64_t z = sec / 86400 + 719468, era = z / 146097;
	unsigned rem = (unsigned)(sec % 86400), doe = (unsigned)(z - era * 146097);
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
