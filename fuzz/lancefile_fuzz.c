/* libFuzzer target: the Lance v2 file reader must never crash on any input. */
#include <stddef.h>
#include <stdint.h>

#include "lancever/lancefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lv_lancefile *f = NULL;
	lv_error err = { 0 };
	if (lv_lancefile_read(&f, data, size, "fuzz.lance", &err) == 0) {
		/* touch the results so the decoded arrays are exercised */
		size_t n = lv_lancefile_num_rows(f);
		for (size_t i = 0; i < lv_lancefile_num_columns(f); i++) {
			const lv_column *c = lv_lancefile_column(f, i);
			if (c->type == LV_COL_UTF8 && c->str_offsets[n] < c->str_offsets[0])
				__builtin_trap();
		}
		lv_lancefile_free(f);
	}
	return 0;
}
