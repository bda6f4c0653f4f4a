/* libFuzzer target: transaction parser and the properties JSON builder. */
#include <stddef.h>
#include <stdint.h>

#include "core/dataset.h"
#include "core/manifests.h"
#include "core/records.h"
#include "core/vlist.h"
#include "format/manifest.h"
#include "util/arena.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lv__txn t;
	lv_error err = { 0 };
	if (lv__txn_parse(data, size, "fuzz", &t, &err) != 0)
		return 0;
	lv__arena a;
	lv__arena_init(&a, 1024);
	const char *json;
	(void)lv__txn_properties_json(&t, &a, &json);
	lv__arena_dispose(&a);
	return 0;
}
