/*
 * Fuzz target for the ref-file parsers: every input is parsed as a tag file
 * and as a branch file, and its first bytes are decoded as a branch file name.
 */
#include <stdint.h>
#include <stdlib.h>

#include "format/refs.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lv_error e = { 0 };
	lv_tag t;
	if (lv__tag_parse(data, size, "fuzz-tag", &t, &e) == 0) {
		/* a parsed tag has a name and self-consistent strings */
		if (!t.name)
			abort();
		lv__tag_dispose(&t);
	}
	lv_branch b;
	if (lv__branch_parse(data, size, "fuzz/branch", &b, &e) == 0) {
		if (!b.name || b.create_at < 0)
			abort();
		lv__branch_dispose(&b);
	}
	size_t n = size < 256 ? size : 256;
	char *name = lv__ref_name_decode((const char *)data, n);
	free(name);
	return 0;
}
