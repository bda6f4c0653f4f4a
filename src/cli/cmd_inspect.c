/*
 * lancever inspect FILE.lance [--json|--csv]
 *   Shows a Lance v2 data file: version, row count, schema, metadata, rows.
 *
 * lancever inspect --write-test OUT.lance --rows N [--version 2.0|2.1] [--seed S]
 *                  [--nulls none|some|all] [--strings short|long|huge] [--max-page-rows N]
 *   Testing aid: writes a deterministic file with columns u64 (UInt64), i64 (Int64,
 *   nullable), b (Boolean), s (Utf8, nullable) through the public lv_lancefile_write.
 *   The interop tests regenerate the same values (same xorshift64 sequence) in JS.
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

/* ---- --write-test ---- */

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static bool parse_size(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		return false;
	*v = x;
	return true;
}

static int write_test(int argc, char **argv)
{
	const char *out = NULL, *ver = "2.1", *nulls = "some", *strs = "short";
	uint64_t rows = 0, seed = 1, page_rows = 0;
	bool have_rows = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			return lvcli_usage_error("inspect --write-test: %s needs a value", a);
		if (!strcmp(a, "--write-test"))
			out = v;
		else if (!strcmp(a, "--rows")) {
			if (!parse_size(v, &rows))
				return lvcli_usage_error("inspect: bad --rows '%s'", v);
			have_rows = true;
		} else if (!strcmp(a, "--seed")) {
			if (!parse_size(v, &seed))
				return lvcli_usage_error("inspect: bad --seed '%s'", v);
		} else if (!strcmp(a, "--max-page-rows")) {
			if (!parse_size(v, &page_rows))
				return lvcli_usage_error("inspect: bad --max-page-rows '%s'", v);
		} else if (!strcmp(a, "--version"))
			ver = v;
		else if (!strcmp(a, "--nulls"))
			nulls = v;
		else if (!strcmp(a, "--strings"))
			strs = v;
		else
			return lvcli_usage_error("inspect --write-test: unknown option '%s'", a);
		i++;
	}
	int fv = !strcmp(ver, "2.0") ? LV_LANCEFILE_V2_0 : !strcmp(ver, "2.1") ? LV_LANCEFILE_V2_1 : 0;
	int nm = !strcmp(nulls, "none") ? 0 : !strcmp(nulls, "some") ? 1 : !strcmp(nulls, "all") ? 2 : -1;
	int sm = !strcmp(strs, "short") ? 0 : !strcmp(strs, "long") ? 1 : !strcmp(strs, "huge") ? 2 : -1;
	if (!out || !have_rows || !fv || nm < 0 || sm < 0 || rows > 10000000)
		return lvcli_usage_error("usage: inspect --write-test OUT --rows N [--version 2.0|2.1] "
					 "[--seed S] [--nulls none|some|all] [--strings short|long|huge]");
	static const char alpha[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static const char utf8[] = "h\xc3\xa9llo \xe2\x9c\x93";
	size_t n = (size_t)rows, m = n ? n : 1;
	uint64_t *u = calloc(m, 8), *so = calloc(n + 1, 8);
	int64_t *i64 = calloc(m, 8);
	uint8_t *iv = calloc(m, 1), *b = calloc(m, 1), *sv = calloc(m, 1);
	size_t cap = 1 << 16, len = 0;
	char *sd = malloc(cap);
	int rc = 1;
	if (!u || !so || !i64 || !iv || !b || !sv || !sd) {
		fprintf(stderr, "lancever: out of memory\n");
		goto done;
	}
	uint64_t st = seed * 0x9E3779B97F4A7C15ull + 1;
	for (size_t r = 0; r < n; r++) {
		u[r] = next_rand(&st);
		i64[r] = (int64_t)next_rand(&st);
		iv[r] = !(nm == 2 || (nm == 1 && next_rand(&st) % 7 == 0));
		b[r] = next_rand(&st) & 1;
		sv[r] = !(nm == 2 || (nm == 1 && next_rand(&st) % 5 == 0));
		if (sv[r]) {
			uint64_t h = next_rand(&st);
			size_t l = sm == 0 ? h % 31 : sm == 1 ? h % 2000 : (r % 50 == 0 ? 70000 + r : h % 31);
			if (len + l + 16 > cap) {
				while (len + l + 16 > cap)
					cap *= 2;
				char *ns = realloc(sd, cap);
				if (!ns) {
					fprintf(stderr, "lancever: out of memory\n");
					goto done;
				}
				sd = ns;
			}
			if (r == 1) {
				memcpy(sd + len, utf8, sizeof utf8 - 1);
				len += sizeof utf8 - 1;
			} else {
				unsigned base = (unsigned)((h >> 11) % 62);
				for (size_t k = 0; k < l; k++)
					sd[len++] = alpha[(base + 7 * k) % 62];
			}
		}
		so[r + 1] = len;
	}
	lv_column cols[4] = {
		{ .name = "u64", .type = LV_COL_UINT64, .u64 = u },
		{ .name = "i64", .type = LV_COL_INT64, .nullable = true, .i64 = i64, .validity = iv },
		{ .name = "b", .type = LV_COL_BOOL, .bools = b },
		{ .name = "s", .type = LV_COL_UTF8, .nullable = true, .str_offsets = so, .str_data = sd,
		  .validity = sv },
	};
	char seedbuf[32], rowsbuf[32];
	snprintf(seedbuf, sizeof seedbuf, "%" PRIu64, seed);
	snprintf(rowsbuf, sizeof rowsbuf, "%zu", n);
	lv_kv meta[2] = { { "lancever.test.seed", seedbuf, strlen(seedbuf) },
			  { "lancever.test.rows", rowsbuf, strlen(rowsbuf) } };
	lv_lancefile_write_options o = LV_LANCEFILE_WRITE_OPTIONS_INIT;
	o.file_version = fv;
	o.max_page_rows = (size_t)page_rows;
	lv_buf buf = { 0 };
	lv_error e = { 0 };
	if (lv_lancefile_write(&buf, cols, 4, n, meta, 2, &o, &e) != 0) {
		rc = lvcli_fail(&e);
		goto done;
	}
	FILE *f = fopen(out, "wb");
	if (!f || fwrite(buf.ptr, 1, buf.size, f) != buf.size || fclose(f) != 0) {
		fprintf(stderr, "lancever: cannot write %s: %s\n", out, strerror(errno));
	} else {
		rc = 0;
	}
	lv_buf_dispose(&buf);
done:
	free(u), free(so), free(i64), free(iv), free(b), free(sv), free(sd);
	return rc;
}

int lvcli_inspect(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--write-test"))
			return write_test(argc, argv);
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
	if (fflush(stdout) != 0)
		return 1;
	return 0;
}
