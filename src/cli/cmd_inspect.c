/*
 * lancever inspect FILE.lance [--json|--csv]
 *   Shows a Lance v2 data file (2.0, 2.1, 2.2): version, row count, schema, metadata,
 *   rows.  The schema is shown even when a column cannot be decoded: such a column
 *   is named with the reason (stderr, and "error" in the JSON schema), its cells are
 *   left out, and the exit status is 1.  A manifest is recognised and named as one.
 *   Read-only: it never writes a file.  (The test-file writer that used to hide here as
 *   --write-test is bench/write_lancefile.c.)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* A file larger than this is not inspected (the whole file is decoded in memory). */
#define INSPECT_MAX_BYTES ((uint64_t)2 << 30)

/*
 * Reads a local file through the storage layer, which reads regular files
 * only (a device such as /dev/zero or a FIFO is refused, never read), after
 * checking its size.
 */
static int read_file(const char *path, lv_buf *out, lv_error *err)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	const char *name = slash ? slash + 1 : path;
	lv_storage *st = NULL;
	uint64_t size = 0;
	int rc = dir ? lv_storage_open(&st, dir, NULL, err) : -1;
	if (!dir) {
		snprintf(err->message, sizeof err->message, "out of memory");
		err->code = rc = LV_ENOMEM;
	}
	if (rc == 0)
		rc = lv_storage_head(st, name, &size, NULL, err);
	if (rc == 0 && size > INSPECT_MAX_BYTES) {
		snprintf(err->message, sizeof err->message,
			 "%s: %" PRIu64 " bytes; inspect reads files of at most %" PRIu64 " bytes", path,
			 size, INSPECT_MAX_BYTES);
		err->code = rc = LV_ELIMIT;
	}
	if (rc == 0)
		rc = lv_storage_read(st, name, out, err);
	if (rc < 0 && rc != LV_ELIMIT) { /* name the file as the user gave it */
		char why[sizeof err->message];
		const char *m = strstr(err->message, ": ");
		snprintf(why, sizeof why, "%s", m ? m + 2 : err->message);
		snprintf(err->message, sizeof err->message, "%.200s: %.300s", path, why);
	}
	lv_storage_free(st);
	free(dir);
	return rc;
}

static bool is_null(const lv_column *c, size_t r) { return c->validity && !c->validity[r]; }

static const char *version_str(int v)
{
	return v == LV_LANCEFILE_V2_0 ? "2.0" : v == LV_LANCEFILE_V2_2 ? "2.2" : "2.1";
}

/* A float: its exact value (%.17g round-trips a double, so a float too); JSON has no
 * NaN or infinities, so those are strings there. */
static void print_float(FILE *o, double d, int mode)
{
	if (d != d || d - d != 0) {
		const char *s = d != d ? "NaN" : d > 0 ? "Infinity" : "-Infinity";
		fprintf(o, mode == 1 ? "\"%s\"" : "%s", s);
		return;
	}
	fprintf(o, "%.17g", d);
}

/* Prints a fixed-width numeric cell; false when the column holds no such type. */
static bool print_number(FILE *o, const lv_column *c, size_t r, int mode)
{
	switch (c->type) {
	case LV_COL_UINT64:
	case LV_COL_UINT32:
	case LV_COL_UINT16:
	case LV_COL_UINT8: fprintf(o, "%" PRIu64, c->u64[r]); return true;
	case LV_COL_INT64:
	case LV_COL_INT32:
	case LV_COL_INT16:
	case LV_COL_INT8:
	case LV_COL_TIMESTAMP: fprintf(o, "%" PRId64, c->i64[r]); return true;
	case LV_COL_BOOL: fputs(c->bools[r] ? "true" : "false", o); return true;
	case LV_COL_FLOAT32: {
		uint32_t bits = (uint32_t)c->u64[r];
		float f;
		memcpy(&f, &bits, sizeof f);
		print_float(o, (double)f, mode);
		return true;
	}
	case LV_COL_FLOAT64: {
		double d;
		memcpy(&d, &c->u64[r], sizeof d);
		print_float(o, d, mode);
		return true;
	}
	case LV_COL_FSL_FLOAT32:
		fputs(mode == 2 ? "\"[" : "[", o);
		for (uint32_t k = 0; k < c->list_size; k++) {
			if (k)
				fputc(',', o);
			print_float(o, (double)c->f32[r * c->list_size + k], mode);
		}
		fputs(mode == 2 ? "]\"" : "]", o);
		return true;
	default: return false;
	}
}

/* Prints the value of row r; mode 0 text, 1 JSON, 2 CSV. */
static void print_value(FILE *o, const lv_column *c, size_t r, int mode)
{
	if (is_null(c, r)) {
		fputs(mode == 1 ? "null" : mode == 0 ? "NULL" : "", o);
		return;
	}
	if (c->type == LV_COL_UNDECODED) {
		fputs(mode == 1 ? "null" : mode == 0 ? "?" : "", o);
		return;
	}
	if (print_number(o, c, r, mode))
		return;
	const char *s = c->str_data + c->str_offsets[r];
	size_t n = (size_t)(c->str_offsets[r + 1] - c->str_offsets[r]);
	if (mode == 1) {
		lvcli_json_strn(o, s, n);
	} else if (mode == 2) {
		lvcli_csv_field(o, s, n); /* "" distinguishes an empty string from null */
	} else {
		/* text: one line per row, long values shortened */
		size_t k = n > 60 ? 57 : n;
		for (size_t i = 0; i < k; i++)
			fputc(s[i] == '\n' || s[i] == '\t' ? ' ' : s[i], o);
		if (k < n)
			fprintf(o, "...(%zu bytes)", n);
	}
}

/* One field of the file's schema. */
typedef struct field {
	const char *name, *lt;
	bool nullable;
	unsigned depth;
} field;

/* Field i of f's schema into *x; false past the last one (or the first unreadable one). */
static bool field_at(const lv_lancefile *f, size_t i, field *x)
{
	return i < lv_lancefile_num_fields(f) &&
	       lv_lancefile_field(f, i, &x->name, &x->lt, &x->nullable, &x->depth) == 0;
}

static void print_json(FILE *o, const lv_lancefile *f)
{
	size_t nc = lv_lancefile_num_columns(f), nr = lv_lancefile_num_rows(f);
	fprintf(o, "{\"version\":\"%s\",\"num_rows\":%zu,\"schema\":[",
		version_str(lv_lancefile_file_version(f)), nr);
	for (size_t i = 0; i < nc; i++) {
		const lv_column *c = lv_lancefile_column(f, i);
		fputs(i ? ",{\"name\":" : "{\"name\":", o);
		lvcli_json_str(o, c->name);
		fputs(",\"type\":", o);
		lvcli_json_str(o, lv_lancefile_column_logical_type(f, i));
		fprintf(o, ",\"nullable\":%s", c->nullable ? "true" : "false");
		if (lv_lancefile_column_error(f, i)) {
			fputs(",\"error\":", o);
			lvcli_json_str(o, lv_lancefile_column_error(f, i));
		}
		fputc('}', o);
	}
	fputs("],\"fields\":[", o);
	field x;
	for (size_t i = 0; field_at(f, i, &x); i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", o);
		lvcli_json_str(o, x.name);
		fputs(",\"type\":", o);
		lvcli_json_str(o, x.lt);
		fprintf(o, ",\"nullable\":%s,\"depth\":%u}", x.nullable ? "true" : "false", x.depth);
	}
	fputs("],\"metadata\":{", o);
	for (size_t i = 0; i < lv_lancefile_num_metadata(f); i++) {
		const lv_kv *kv = lv_lancefile_metadata(f, i);
		if (i)
			fputc(',', o);
		lvcli_json_str(o, kv->key);
		fputc(':', o);
		lvcli_json_strn(o, kv->value, kv->value_len);
	}
	fputs("},\"rows\":[", o);
	for (size_t r = 0; r < nr; r++) {
		fputs(r ? ",\n{" : "\n{", o);
		bool first = true;
		for (size_t i = 0; i < nc; i++) {
			const lv_column *c = lv_lancefile_column(f, i);
			if (c->type == LV_COL_UNDECODED)
				continue;
			if (!first)
				fputc(',', o);
			first = false;
			lvcli_json_str(o, c->name);
			fputc(':', o);
			print_value(o, c, r, 1);
		}
		fputc('}', o);
	}
	fputs("]}\n", o);
}

static void print_csv(FILE *o, const lv_lancefile *f)
{
	size_t nc = lv_lancefile_num_columns(f), nr = lv_lancefile_num_rows(f);
	for (size_t i = 0; i < nc; i++) {
		const lv_column *c = lv_lancefile_column(f, i);
		lv_column hdr = { .type = LV_COL_UTF8 };
		uint64_t offs[2] = { 0, strlen(c->name) };
		hdr.str_offsets = offs;
		hdr.str_data = c->name;
		if (i)
			fputc(',', o);
		print_value(o, &hdr, 0, 2);
	}
	fputs("\r\n", o);
	for (size_t r = 0; r < nr; r++) {
		for (size_t i = 0; i < nc; i++) {
			if (i)
				fputc(',', o);
			print_value(o, lv_lancefile_column(f, i), r, 2);
		}
		fputs("\r\n", o);
	}
}

static void print_text(FILE *o, const char *path, const lv_lancefile *f)
{
	size_t nc = lv_lancefile_num_columns(f), nr = lv_lancefile_num_rows(f);
	fprintf(o, "file:     %s\nversion:  %s\nrows:     %zu\ncolumns:  %zu\nschema:\n", path,
		version_str(lv_lancefile_file_version(f)), nr, nc);
	field x;
	for (size_t i = 0; field_at(f, i, &x); i++)
		fprintf(o, "  %*s%-*s %-12s %s\n", (int)(2 * x.depth), "", 24 - (int)(2 * (x.depth % 8)),
			x.name, x.lt, x.nullable ? "nullable" : "not null");
	for (size_t i = 0; i < nc; i++)
		if (lv_lancefile_column_error(f, i))
			fprintf(o, "  not decoded: %s\n", lv_lancefile_column_error(f, i));
	fprintf(o, "metadata: %zu entries\n", lv_lancefile_num_metadata(f));
	for (size_t i = 0; i < lv_lancefile_num_metadata(f); i++) {
		const lv_kv *kv = lv_lancefile_metadata(f, i);
		fprintf(o, "  %s = %.*s\n", kv->key, (int)(kv->value_len > 200 ? 200 : kv->value_len),
			kv->value);
	}
	fputs("rows:\n", o);
	for (size_t i = 0; i < nc; i++)
		fprintf(o, "%s%s", i ? " | " : "  ", lv_lancefile_column(f, i)->name);
	fputc('\n', o);
	for (size_t r = 0; r < nr; r++) {
		fputs("  ", o);
		for (size_t i = 0; i < nc; i++) {
			if (i)
				fputs(" | ", o);
			print_value(o, lv_lancefile_column(f, i), r, 0);
		}
		fputc('\n', o);
	}
}

/*
 * A Lance manifest ends in u64 position | u16 0 | u16 2 | "LANC", with a u32-length
 * protobuf at that position ending exactly at the footer (docs/lance-reference.md, "Table format").
 */
static bool is_manifest(const uint8_t *d, size_t n)
{
	if (n < 20 || memcmp(d + n - 4, "LANC", 4) != 0 || d[n - 8] != 0 || d[n - 7] != 0 ||
	    d[n - 6] != 2 || d[n - 5] != 0)
		return false;
	uint64_t pos = 0;
	for (int i = 7; i >= 0; i--)
		pos = pos << 8 | d[n - 16 + i];
	if (pos > n - 20)
		return false;
	uint64_t len = (uint64_t)d[pos] | (uint64_t)d[pos + 1] << 8 | (uint64_t)d[pos + 2] << 16 |
		       (uint64_t)d[pos + 3] << 24;
	return pos + 4 + len == n - 16;
}

int lvcli_inspect(int argc, char **argv)
{
	const char *path = NULL;
	int mode = 0;
	bool args_only = false; /* after "--": a FILE, even one named like an option */
	for (int i = 1; i < argc; i++) {
		if (!args_only && !strcmp(argv[i], "--"))
			args_only = true;
		else if (!args_only && !strcmp(argv[i], "--json"))
			mode = 1;
		else if (!args_only && !strcmp(argv[i], "--csv"))
			mode = 2;
		else if (!args_only && argv[i][0] == '-' && argv[i][1])
			return lvcli_unknown_option(&lvcli_cmd_inspect, argv[i]);
		else if (path)
			return lvcli_usage_error("inspect: only one file may be given");
		else
			path = argv[i];
	}
	if (!path)
		return lvcli_usage_error("usage: lancever inspect FILE.lance [--json|--csv]");
	lv_error e = { 0 };
	lv_buf data = { 0 };
	if (read_file(path, &data, &e) != 0)
		return lvcli_fail(&e);
	if (is_manifest(data.ptr, data.size)) {
		lv_buf_dispose(&data);
		fprintf(stderr, "lancever: %s is a Lance manifest (one dataset version), not a data file: "
			"use 'lancever show DATASET VERSION' on its dataset\n", lvcli_esc(path));
		return 1;
	}
	lv_lancefile *f;
	int rc = lv_lancefile_read_ex(&f, data.ptr, data.size, path, LV_LANCEFILE_READ_PARTIAL, &e);
	lv_buf_dispose(&data);
	if (rc != 0)
		return lvcli_fail(&e);
	int status = 0;
	for (size_t i = 0; i < lv_lancefile_num_columns(f); i++)
		if (lv_lancefile_column_error(f, i)) {
			if (!lvcli_g.quiet)
				fprintf(stderr, "%slancever: warning: %s%s\n", lvcli_color(stderr, LVCLI_YELLOW),
					lvcli_esc(lv_lancefile_column_error(f, i)), lvcli_color(stderr, LVCLI_RESET));
			status = 1;
		}
	if (mode == 1)
		print_json(stdout, f);
	else if (mode == 2)
		print_csv(stdout, f);
	else
		print_text(stdout, path, f);
	lv_lancefile_free(f);
	return status; /* main() checks that stdout was written */
}

static const lvcli_opt inspect_opts[] = {
	{ "--json", NULL, "print a JSON object: version, num_rows, schema, metadata, rows", LVCLI_FLAG, 0, 0, 0 },
	{ "--csv", NULL, "print the rows as CSV (RFC 4180), a header line first", LVCLI_FLAG, 0, 0, 0 },
	{ 0 },
};

const lvcli_cmd lvcli_cmd_inspect = {
	"inspect", "FILE.lance", "schema, metadata and rows of a Lance data file",
	"Shows a Lance file (format 2.0, 2.1 or 2.2): its version, row count, schema (the whole "
	"field tree), schema metadata and rows. A column it cannot decode is named with the reason "
	"on stderr (and as \"error\" in the --json schema), its cells are left out and the exit "
	"status is 1. On a manifest it says that it is one. Read-only: it never writes a file.",
	inspect_opts, lvcli_inspect, false,
};
