/*
 * libFuzzer target: the Lance v2 file reader (2.0, 2.1, 2.2: every page layout and
 * compressive encoding, zstd/lz4 decompression) must never crash, leak or read out of
 * bounds on any input, in strict and in partial mode.  Seeds: fuzz/corpora/lancefile
 * (lancever-written files, LanceDB 0.31 files, and lance12_* files from
 * tests/fixtures/lance12/make_fixtures.mjs --fuzz-seeds).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lancever/lancefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Touches the decoded arrays so that they are exercised (and checked by ASan). */
static void touch(const lv_lancefile *f)
{
	size_t n = lv_lancefile_num_rows(f);
	volatile uint64_t sink = 0;
	for (size_t i = 0; i < lv_lancefile_num_columns(f); i++) {
		const lv_column *c = lv_lancefile_column(f, i);
		if (c->type == LV_COL_UTF8 && c->str_offsets[n] < c->str_offsets[0])
			__builtin_trap();
		if (n == 0 || c->type == LV_COL_UNDECODED)
			continue;
		if (c->type == LV_COL_FSL_FLOAT32) {
			uint32_t bits;
			memcpy(&bits, &c->f32[n * c->list_size - 1], sizeof bits);
			sink += bits;
		}
		else if (c->type == LV_COL_BOOL)
			sink += c->bools[n - 1];
		else if (c->type != LV_COL_UTF8)
			sink += c->u64[n - 1];
		if (c->validity)
			sink += c->validity[n - 1];
	}
	(void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lv_lancefile *f = NULL;
	lv_error err = { 0 };
	if (lv_lancefile_read(&f, data, size, "fuzz.lance", &err) == 0) {
		touch(f);
		lv_lancefile_free(f);
	}
	if (lv_lancefile_read_ex(&f, data, size, "fuzz.lance", LV_LANCEFILE_READ_PARTIAL, &err) == 0) {
		touch(f);
		for (size_t i = 0; i < lv_lancefile_num_fields(f); i++) {
			const char *name;
			if (lv_lancefile_field(f, i, &name, NULL, NULL, NULL) != 0 || !name)
				__builtin_trap();
		}
		lv_lancefile_free(f);
	}
	return 0;
}
