/*
 * libFuzzer target: S3 response parsing (src/lib/s3/s3xml.c), the code every
 * S3 LIST, DeleteObjects and error answer goes through.  Each input is parsed
 * as a ListObjectsV2 page, as a DeleteObjects result for a fixed batch of
 * keys, and as an error body.  Properties: results are bounded by the input
 * (objects, text lengths), per-key results are only ever the documented
 * codes, and the error code is short, NUL-terminated and printable.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3/s3xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                           \
	do {                                                                               \
		if (!(c)) {                                                                \
			fprintf(stderr, "s3xml_fuzz: property failed at line %d: %s\n", __LINE__, \
				#c);                                                       \
			abort();                                                           \
		}                                                                          \
	} while (0)

static const char *const batch[] = {
	"db/t.lance/_versions/18446744073709551614.manifest",
	"db/t.lance/data/a.lance",
	"db/t.lance/_transactions/0-x.txn",
	"k",
};
#define NBATCH (sizeof batch / sizeof batch[0])

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exact-size heap copy, not NUL-terminated, so ASan sees any read past the end. */
	char *body = malloc(size ? size : 1);
	if (!body)
		return 0;
	memcpy(body, data, size);

	lv_s3_list_page pg;
	lv_error err = { 0 };
	if (lv__s3xml_parse_list(body, size, "S3 LIST fuzz", &pg, &err) == 0) {
		CHECK(pg.n <= size / 8); /* "<Contents><Key></Key></Contents>" at least */
		for (size_t i = 0; i < pg.n; i++)
			CHECK(pg.objs[i].key && strlen(pg.objs[i].key) <= LV_S3XML_TEXT_MAX);
		CHECK(!pg.next_token || strlen(pg.next_token) <= LV_S3XML_TEXT_MAX);
		lv__s3xml_list_page_dispose(&pg);
	} else {
		CHECK(err.code < 0 && err.message[0]);
		CHECK(pg.n == 0 && !pg.objs && !pg.next_token);
	}

	int rcs[NBATCH] = { 0 };
	size_t failed = 0;
	if (lv__s3xml_parse_delete(body, size, batch, NBATCH, rcs, &failed, &err) == 0) {
		size_t set = 0;
		for (size_t i = 0; i < NBATCH; i++) {
			CHECK(rcs[i] == 0 || rcs[i] == LV_ENOTFOUND || rcs[i] == LV_EIO);
			set += rcs[i] != 0;
		}
		CHECK(set <= failed);
	}

	char code[64];
	memset(code, 'x', sizeof code);
	lv__s3xml_error_code(body, size, code, sizeof code);
	CHECK(memchr(code, 0, sizeof code) != NULL);
	free(body);
	return 0;
}
