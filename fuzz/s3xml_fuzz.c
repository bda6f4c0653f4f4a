/*
 * libFuzzer target: S3 response parsing (src/lib/objstore/xml.c), the code every
 * S3 LIST, DeleteObjects and error answer goes through.  Each input is parsed
 * as a ListObjectsV2 page, as a DeleteObjects result for a fixed batch of
 * keys, and as an error body; every listed key goes through the filter that
 * decides what a listing delivers, for several prefixes.  Properties: results
 * are bounded by the input (objects, text lengths); a delivered path is the
 * key minus the store prefix, lies below the listed prefix and is a valid
 * relative path (no "..", ".", empty segments or control characters: it cannot
 * lead outside the prefix); per-key delete results are only ever the
 * documented codes; the error code is short, NUL-terminated and printable.  The same bytes
 * are also parsed as an Azure List Blobs page, an STS answer and a credentials document.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws/creds.h"
#include "objstore/xml.h"
#include "storage/storage_int.h"

#define FUZZ_NAME "s3xml_fuzz"
#include "fuzz.h"

static const char *const batch[] = {
	"db/t.lance/_versions/18446744073709551614.manifest",
	"db/t.lance/data/a.lance",
	"db/t.lance/_transactions/0-x.txn",
	"k",
};
#define NBATCH (sizeof batch / sizeof batch[0])

/* Listings as s3.c makes them: (key prefix listed, bytes of the store prefix + '/'). */
static const struct { const char *kprefix; size_t strip; } listings[] = {
	{ "db/t.lance/_versions/", 11 },
	{ "db/t.lance/", 11 },
	{ "", 0 },
	{ "_versions/", 0 },
};

static void check_rel(const char *key)
{
	for (size_t i = 0; i < sizeof listings / sizeof listings[0]; i++)
		for (int recursive = 0; recursive < 2; recursive++) {
			const char *kp = listings[i].kprefix, *rel = NULL;
			size_t kl = strlen(kp);
			lv_error err = { 0 };
			int k = lv__list_rel(key, kp, listings[i].strip, recursive, "S3 LIST fuzz",
						   &rel, &err);
			CHECK(k == 1 || k == 0 || (k == LV_ECORRUPT && err.message[0]));
			for (const char *m = err.message; *m; m++)
				CHECK((unsigned char)*m >= 0x20 && (unsigned char)*m < 0x7f);
			if (k == 0) {
				size_t n = strlen(key);
				CHECK(!strncmp(key, kp, kl));
				CHECK(n == kl || key[n - 1] == '/' || (!recursive && strchr(key + kl, '/')));
			} else if (k == 1) {
				CHECK(!strncmp(key, kp, kl) && strlen(key) > kl);
				CHECK(rel == key + listings[i].strip);
				CHECK(recursive || !strchr(key + kl, '/'));
				CHECK(lv__path_check(rel, false, "fuzz", &err) == 0);
			}
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exact-size heap copy, not NUL-terminated, so ASan sees any read past the end. */
	char *body = malloc(size ? size : 1);
	if (!body)
		return 0;
	memcpy(body, data, size);

	lv__list_page pg;
	lv_error err = { 0 };
	if (lv__s3xml_parse_list(body, size, "S3 LIST fuzz", &pg, &err) == 0) {
		CHECK(pg.n <= size / 8); /* "<Contents><Key></Key></Contents>" at least */
		for (size_t i = 0; i < pg.n; i++) {
			CHECK(pg.objs[i].key && strlen(pg.objs[i].key) <= LV_S3XML_TEXT_MAX);
			check_rel(pg.objs[i].key);
		}
		CHECK(!pg.next_token || strlen(pg.next_token) <= LV_S3XML_TEXT_MAX);
		lv__list_page_dispose(&pg);
	} else {
		CHECK(err.code < 0 && err.message[0]);
		CHECK(pg.n == 0 && !pg.objs && !pg.next_token);
	}

	/* the same input as an Azure List Blobs page, an STS answer and a credentials document */
	if (lv__azxml_parse_list(body, size, "Azure LIST fuzz", &pg, &err) == 0) {
		for (size_t i = 0; i < pg.n; i++) {
			CHECK(pg.objs[i].key && strlen(pg.objs[i].key) <= LV_S3XML_TEXT_MAX);
			check_rel(pg.objs[i].key);
		}
		CHECK(!pg.truncated || pg.next_token);
		lv__list_page_dispose(&pg);
	} else {
		CHECK(err.code < 0 && err.message[0]);
	}
	lv__aws_creds *cr = NULL;
	if (lv__aws_parse_sts_creds(body, size, "sts", &cr, &err) == 0)
		CHECK(cr && cr->akid[0] && cr->secret[0] && cr->token);
	else
		CHECK(!cr && err.code < 0);
	lv__aws_creds_release(cr);
	cr = NULL;
	if (lv__aws_parse_json_creds(body, size, size & 1, "creds", &cr, &err) == 0)
		CHECK(cr && cr->akid[0] && cr->secret[0]);
	else
		CHECK(!cr && err.code < 0);
	lv__aws_creds_release(cr);

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
	for (const char *c = code; *c; c++)
		CHECK((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
		      *c == '.' || *c == '_' || *c == '-');

	/* the raw input as a key, too (NUL-terminated copy, first 512 bytes) */
	char key[513];
	size_t kn = size < 512 ? size : 512;
	memcpy(key, data, kn);
	key[kn] = 0;
	check_rel(key);
	free(body);
	return 0;
}
