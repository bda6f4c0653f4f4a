/*
 * lancever inspect FILE.lance [--json|--csv]
 *   Shows a Lance v2 data file: version, row count, schema, metadata, rows.
 *   Read-only: it never writes a file.  (The test-file writer that used to hide here as
 *   --write-test is bench/write_lancefile.c.)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int read_all(const char *path, uint8_t **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t cap = 1 << 16, n = 0;
	uint8_t *b = malloc(cap);
	while (b) {
		if (n == cap) {
			uint8_t *nb = cap > SIZE_MAX / 2 ? NULL : realloc(b, cap * 2);
			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
			cap *= 2;
		}
		size_t k = fread(b + n, 1, cap - n, f);
		n += k;
		if (k == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (!b || bad) {
		free(b);
		return -1;
	}
	*out = b;
	*len = n;
	return 0;
}

static bool is_null(const lv_column *c, size_t r) { return c->validity && !c->validity[r]; }

static const char *version_str(int v) { return v == LV_LANCEFILE_V2_0 ? "2.0" : "2.1"; }

/* Prints the value of row r; mode 0 text, 1 JSON, 2 CSV. */
static void print_value(FILE *o, const lv_column *c, size_t r, int mode)
{
	if (is_null(c, r)) {
		fputs(mode == 1 ? "null" : mode == 0 ? "NULL" : "", o);
		return;
	}
	switch (c->type) {
	case LV_COL_UINT64: fprintf(o, "%" PRIu64, c->u64[r]); return;
	case LV_COL_INT64: fprintf(o, "%" PRId64, c->i64[r]); return;
	case LV_COL_BOOL: fputs(c->bools[r] ? "true" : "false", o); return;
	default: break;
	}
	const char *s = c->str_data + c->str_offsets[r];
	size_t n = (size_t)(c->str_offsets[r + 1] - c->str_offsets[r]);
	if (mode == 1) {
		lvcli_json_strn(o, s, n);
	} else if (mode == 2) {
		/* RFC 4180: quote when needed; "" distinguishes an empty string from null */
		bool q = n == 0;
		for (size_t i = 0; i < n && !q; i++)
			q = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
		if (!q) {
			fwrite(s, 1, n, o);
			return;
		}
		fputc('"', o);
		for (size_t i = 0; i < n; i++) {
			if (s[i] == '"')
				fputc('"', o);
			fputc(s[i], o);
		}
		fputc('"', o);
	} else {
		/* text: one line per row, long values shortened */
		size_t k = n > 60 ? 57 : n;
		for (size_t i = 0; i < k; i++)
			fputc(s[i] == '\n' || s[i] == '\t' ? ' ' : s[i], o);
		if (k < n)
			fprintf(o, "...(%zu bytes)", n);
	}
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
		fprintf(o, ",\"nullable\":%s}", c->nullable ? "true" : "false");
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
		for (size_t i = 0; i < nc; i++) {
			const lv_column *c = lv_lancefile_column(f, i);
			if (i)
				fputc(',', o);
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
	for (size_t i = 0; i < nc; i++) {
		const lv_column *c = lv_lancefile_column(f, i);
		fprintf(o, "  %-24s %-12s %s\n", c->name, lv_lancefile_column_logical_type(f, i),
			c->nullable ? "nullable" : "not null");
	}
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

int lvcli_inspect(int argc, char **argv)
{
	const char *path = NULL;
	int mode = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			mode = 1;
		else if (!strcmp(argv[i], "--csv"))
			mode = 2;
		else if (argv[i][0] == '-' && argv[i][1])
			return lvcli_usage_error("inspect: unknown option '%s'", argv[i]);
		else if (path)
			return lvcli_usage_error("inspect: only one file may be given");
		else
			path = argv[i];
	}
	if (!path)
		return lvcli_usage_error("usage: lancever inspect FILE.lance [--json|--csv]");
	uint8_t *data;
	size_t size;
	if (read_all(path, &data, &size) != 0) {
		fprintf(stderr, "lancever: cannot read %s: %s\n", path, strerror(errno));
		return 1;
	}
	lv_lancefile *f;
	lv_error e = { 0 };
	int rc = lv_lancefile_read(&f, data, size, path, &e);
	free(data);
	if (rc != 0)
		return lvcli_fail(&e);
	if (mode == 1)
		print_json(stdout, f);
	else if (mode == 2)
		print_csv(stdout, f);
	else
		print_text(stdout, path, f);
	lv_lancefile_free(f);
	return 0; /* main() checks that stdout was written */
}
