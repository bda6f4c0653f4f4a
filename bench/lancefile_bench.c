/*
 * Lance v2 file writer/reader benchmark on the 15-column checkpoint schema.
 *
 * lancefile_bench [ROWS] [RUNS]: writes and reads ROWS (default 100,000) rows in
 * versions 2.0 and 2.1 and prints a markdown table: write and read throughput in
 * MB/s of file bytes (median of RUNS, default 7), file bytes per row, and the median
 * minor page faults of one write and of one read (getrusage; they do not depend on the
 * machine's load, the times do).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "lancever/lancefile.h"
#include "util/util.h"

#define NCOLS 15

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Minor page faults of this process so far (a count that does not depend on the load). */
static uint64_t minflt(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_SELF, &ru) == 0 ? (uint64_t)ru.ru_minflt : 0;
}

static uint64_t median(uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_u64);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 100000;
	int runs = argc > 2 ? atoi(argv[2]) : 7;
	if (runs < 1 || runs > 100)
		runs = 7;
	static const char *const ops[] = { "Append", "Overwrite", "Delete", "Update", "Rewrite",
					   "CreateIndex" };
	uint64_t s = 42, *u[9], *tp_off = calloc(n + 1, 8), *uu_off = calloc(n + 1, 8),
		 *op_off = calloc(n + 1, 8);
	int64_t *ts = calloc(n ? n : 1, 8);
	uint8_t *tagged = calloc(n ? n : 1, 1), *cleaned = calloc(n ? n : 1, 1),
		*uu_valid = calloc(n ? n : 1, 1), *rv_valid = calloc(n ? n : 1, 1),
		*op_valid = calloc(n ? n : 1, 1);
	for (int k = 0; k < 9; k++)
		u[k] = calloc(n ? n : 1, 8);
	lv__dbuf uu, op, tp;
	lv__dbuf_init(&uu, 0);
	lv__dbuf_init(&op, 0);
	lv__dbuf_init(&tp, 0);
	uint64_t frags = 0, rows = 0;
	for (size_t i = 0; i < n; i++) {
		u[0][i] = i + 1;                                      /* version */
		ts[i] = 1764000000000 + (int64_t)i * 1000 + (int64_t)(rng(&s) % 1000);
		frags += 1 + rng(&s) % 3;
		rows += 1000 + rng(&s) % 5000;
		u[1][i] = frags;                                      /* total_fragments */
		u[2][i] = frags;                                      /* total_data_files */
		u[3][i] = rows * 40;                                  /* total_files_size */
		u[4][i] = rng(&s) % 4;                                /* total_deletion_files */
		u[5][i] = rows;                                       /* total_data_file_rows */
		u[6][i] = u[4][i] * 17;                               /* total_deletion_file_rows */
		u[7][i] = rows - u[6][i];                             /* total_rows */
		u[8][i] = i;                                          /* read_version */
		rv_valid[i] = i > 0;
		tagged[i] = rng(&s) % 100 == 0;
		cleaned[i] = i < n / 2;
		uu_valid[i] = rng(&s) % 100 != 0;
		if (uu_valid[i]) {
			uint64_t a = rng(&s), b = rng(&s);
			lv__dbuf_printf(&uu, "%08" PRIx64 "-%04" PRIx64 "-4%03" PRIx64 "-a%03" PRIx64
				       "-%012" PRIx64, a >> 32, (a >> 16) & 0xffff, a & 0xfff,
				       b >> 52, b & (uint64_t)0xffffffffffff);
		}
		uu_off[i + 1] = uu.len;
		op_valid[i] = rng(&s) % 50 != 0;
		if (op_valid[i])
			lv__dbuf_adds(&op, ops[rng(&s) % 6]);
		op_off[i + 1] = op.len;
		lv__dbuf_printf(&tp, "{\"writer\":\"lancever\",\"batch\":%zu,\"rows\":%" PRIu64 "}", i,
			       1000 + rng(&s) % 5000);
		tp_off[i + 1] = tp.len;
	}
	lv__dbuf_addc(&uu, 0);
	lv__dbuf_addc(&op, 0);
	lv__dbuf_addc(&tp, 0);
	static const char *const counters[] = { "total_fragments", "total_data_files",
						"total_files_size", "total_deletion_files",
						"total_data_file_rows", "total_deletion_file_rows",
						"total_rows" };
	lv_column cols[NCOLS];
	memset(cols, 0, sizeof cols);
	cols[0] = (lv_column){ .name = "version", .type = LV_COL_UINT64, .u64 = u[0] };
	cols[1] = (lv_column){ .name = "timestamp_millis", .type = LV_COL_INT64, .i64 = ts };
	for (int k = 0; k < 7; k++)
		cols[2 + k] = (lv_column){ .name = counters[k], .type = LV_COL_UINT64, .u64 = u[1 + k] };
	cols[9] = (lv_column){ .name = "is_tagged", .type = LV_COL_BOOL, .bools = tagged };
	cols[10] = (lv_column){ .name = "is_cleaned_up", .type = LV_COL_BOOL, .bools = cleaned };
	cols[11] = (lv_column){ .name = "transaction_uuid", .type = LV_COL_UTF8, .nullable = true,
				.str_offsets = uu_off, .str_data = (char *)uu.ptr, .validity = uu_valid };
	cols[12] = (lv_column){ .name = "read_version", .type = LV_COL_UINT64, .nullable = true,
				.u64 = u[8], .validity = rv_valid };
	cols[13] = (lv_column){ .name = "operation_type", .type = LV_COL_UTF8, .nullable = true,
				.str_offsets = op_off, .str_data = (char *)op.ptr, .validity = op_valid };
	cols[14] = (lv_column){ .name = "transaction_properties", .type = LV_COL_UTF8,
				.str_offsets = tp_off, .str_data = (char *)tp.ptr };
	lv_kv meta[] = { { "lancever.checkpoint.version", "1", 1 } };

	printf("| format | rows | file bytes | bytes/row | write MB/s | read MB/s | write faults | read faults |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
	static const int vers[] = { LV_LANCEFILE_V2_0, LV_LANCEFILE_V2_1 };
	int status = 0;
	for (int v = 0; v < 2; v++) {
		uint64_t wt[100], rt[100], wf[100], rf[100];
		size_t size = 0;
		for (int r = 0; r < runs; r++) {
			lv_lancefile_write_options o = LV_LANCEFILE_WRITE_OPTIONS_INIT;
			o.file_version = vers[v];
			lv_buf b;
			lv_error e = { 0 };
			uint64_t f0 = minflt(), t0 = lv__mono_ns();
			if (lv_lancefile_write(&b, cols, NCOLS, n, meta, 1, &o, &e) != 0) {
				fprintf(stderr, "write: %s\n", e.message);
				return 1;
			}
			uint64_t t1 = lv__mono_ns(), f1 = minflt();
			lv_lancefile *f;
			if (lv_lancefile_read(&f, b.ptr, b.size, "bench.lance", &e) != 0) {
				fprintf(stderr, "read: %s\n", e.message);
				return 1;
			}
			uint64_t t2 = lv__mono_ns(), f2 = minflt();
			if (lv_lancefile_num_rows(f) != n)
				status = 1;
			lv_lancefile_free(f);
			size = b.size;
			lv_buf_dispose(&b);
			wt[r] = t1 - t0;
			rt[r] = t2 - t1;
			wf[r] = f1 - f0;
			rf[r] = f2 - f1;
		}
		double mw = (double)median(wt, runs) / 1e9, mr = (double)median(rt, runs) / 1e9;
		printf("| %s | %zu | %zu | %.1f | %.0f | %.0f | %" PRIu64 " | %" PRIu64 " |\n",
		       v ? "2.1" : "2.0", n, size, n ? (double)size / (double)n : 0.0,
		       (double)size / 1e6 / mw, (double)size / 1e6 / mr, median(wf, runs),
		       median(rf, runs));
	}
	for (int k = 0; k < 9; k++)
		free(u[k]);
	free(ts), free(tagged), free(cleaned), free(uu_valid), free(rv_valid), free(op_valid);
	free(tp_off), free(uu_off), free(op_off);
	lv__dbuf_dispose(&uu);
	lv__dbuf_dispose(&op);
	lv__dbuf_dispose(&tp);
	return status;
}
