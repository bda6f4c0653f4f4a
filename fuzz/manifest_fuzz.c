/*
 * libFuzzer target: manifest file parser, plus its index section and inline
 * transaction; and the input's first bytes as a _versions/ file name (the
 * name a version gets parses back to that version, for both schemes).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/manifest.h"

static int on_data(const lv__data_file_ref *f, void *p) { (void)f; (void)p; return 0; }
static int on_del(const lv__deletion_ref *d, void *p) { (void)d; (void)p; return 0; }
static int on_ext(lv__sv s, void *p) { (void)s; (void)p; return 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void version_names(const uint8_t *data, size_t size)
{
	char name[65];
	size_t n = size < 64 ? size : 64;
	memcpy(name, data, n);
	name[n] = 0;
	uint64_t v;
	int scheme = lv__version_name_parse(name, &v);
	if (scheme == LV_NAME_NONE)
		return;
	char path[64];
	lv__version_path(path, sizeof path, v, scheme);
	uint64_t back;
	if (strncmp(path, "_versions/", 10) || lv__version_name_parse(path + 10, &back) != scheme ||
	    back != v) {
		fprintf(stderr, "manifest_fuzz: version name '%s' -> %s does not round-trip\n", name, path);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	version_names(data, size);
	lv__manifest m;
	lv_error err = { 0 };
	lv__manifest_visitor vis = { on_data, on_del, on_ext, NULL };
	if (lv__manifest_parse(data, size, "fuzz", &vis, &m, &err) != 0)
		return 0;
	(void)lv__manifest_indices(&m, "fuzz", NULL, NULL, &err);
	size_t c = 0;
	lv__sv k, v;
	while (lv__manifest_config_next(&m, &c, &k, &v) == 1)
		;
	lv__base_path bp;
	c = 0;
	while (lv__manifest_base_path_next(&m, &c, &bp) == 1)
		;
	const uint8_t *t;
	size_t tn;
	lv__txn txn;
	if (lv__manifest_inline_txn(&m, "fuzz", &t, &tn, &err) == 0 &&
	    lv__txn_parse(t, tn, "fuzz", &txn, &err) == 0) {
		c = 0;
		while (lv__txn_property_next(&txn, &c, &k, &v) == 1)
			;
	}
	return 0;
}
