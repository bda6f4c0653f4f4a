/*
 * Test-file writer for the interop tests (moved out of `lancever inspect`, which is
 * read-only now).
 *
 *   write_lancefile OUT.lance --rows N [--version 2.0|2.1] [--seed S]
 *                   [--nulls none|some|all] [--strings short|long|huge] [--max-page-rows N]
 *
 * Writes a deterministic Lance data file with columns u64 (UInt64), i64 (Int64, nullable),
 * b (Boolean), s (Utf8, nullable) through the public lv_lancefile_write.  The interop test
 * tests/interop/test_lancefile_lance_reads_ours.mjs regenerates the same values (same
 * xorshift64 sequence) in JS.  OUT must not exist: the file is created exclusively and an
 * existing file is never overwritten.  Exit status 0, 1 error, 2 usage error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lancever/lancever.h>

static int usage(const char *why, const char *arg)
{
	if (why)
		fprintf(stderr, "write_lancefile: %s%s%s%s\n", why, arg ? " '" : "", arg ? arg : "",
			arg ? "'" : "");
	fprintf(stderr, "usage: write_lancefile OUT.lance --rows N [--version 2.0|2.1] [--seed S]\n"
			"       [--nulls none|some|all] [--strings short|long|huge] [--max-page-rows N]\n");
	return 2;
}

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Decimal digits only, no sign or spaces, at most max. */
static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		unsigned d = (unsigned)(*s - '0');
		if (v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	const char *out = NULL, *ver = "2.1", *nulls = "some", *strs = "short";
	uint64_t rows = 0, seed = 1, page_rows = 0;
	bool have_rows = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-') {
			if (out)
				return usage("more than one OUT", a);
			out = a;
			continue;
		}
		const char *v = i + 1 < argc ? argv[++i] : NULL;
		if (!v)
			return usage("missing value for", a);
		if (!strcmp(a, "--rows")) {
			if (!parse_u64(v, 10000000, &rows))
				return usage("--rows wants 0..10000000, got", v);
			have_rows = true;
		} else if (!strcmp(a, "--seed")) {
			if (!parse_u64(v, UINT64_MAX, &seed))
				return usage("--seed wants a non-negative integer, got", v);
		} else if (!strcmp(a, "--max-page-rows")) {
			if (!parse_u64(v, SIZE_MAX, &page_rows))
				return usage("--max-page-rows wants a non-negative integer, got", v);
		} else if (!strcmp(a, "--version"))
			ver = v;
		else if (!strcmp(a, "--nulls"))
			nulls = v;
		else if (!strcmp(a, "--strings"))
			strs = v;
		else
			return usage("unknown option", a);
	}
	int fv = !strcmp(ver, "2.0") ? LV_LANCEFILE_V2_0 : !strcmp(ver, "2.1") ? LV_LANCEFILE_V2_1 : 0;
	int nm = !strcmp(nulls, "none") ? 0 : !strcmp(nulls, "some") ? 1 : !strcmp(nulls, "all") ? 2 : -1;
	int sm = !strcmp(strs, "short") ? 0 : !strcmp(strs, "long") ? 1 : !strcmp(strs, "huge") ? 2 : -1;
	if (!out || !have_rows)
		return usage("OUT and --rows are required", NULL);
	if (!fv || nm < 0 || sm < 0)
		return usage("bad --version, --nulls or --strings", NULL);

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
		fprintf(stderr, "write_lancefile: out of memory\n");
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
					fprintf(stderr, "write_lancefile: out of memory\n");
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
		fprintf(stderr, "write_lancefile: %s (%s)\n", e.message, lv_strerror(e.code));
		goto done;
	}
	/* "x": created exclusively (C11), so an existing file is never overwritten */
	FILE *f = fopen(out, "wbx");
	if (!f) {
		if (errno == EEXIST)
			fprintf(stderr, "write_lancefile: %s exists; not overwriting it\n", out);
		else
			fprintf(stderr, "write_lancefile: cannot create %s: %s\n", out, strerror(errno));
	} else {
		bool ok = fwrite(buf.ptr, 1, buf.size, f) == buf.size;
		int werr = errno;
		if (fclose(f) != 0 && ok) {
			ok = false;
			werr = errno;
		}
		if (ok) {
			rc = 0;
		} else {
			fprintf(stderr, "write_lancefile: cannot write %s: %s\n", out, strerror(werr));
			unlink(out); /* ours, created above: no partial file left behind */
		}
	}
	lv_buf_dispose(&buf);
done:
	free(u), free(so), free(i64), free(iv), free(b), free(sv), free(sd);
	return rc;
}
