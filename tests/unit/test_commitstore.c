/*
 * Unit tests: URIs of datasets that commit through an external commit store are
 * refused by name (storage/address.c), never opened as plain object stores and
 * never echoing the rest of the URI (which may hold secrets).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <lancever/lancever.h>

static void refused(const char *uri, const char *want, const char *secret)
{
	lv_storage *st = NULL;
	lv_error err = { 0 };
	assert_int_equal(lv_storage_open(&st, uri, NULL, &err), LV_EUNSUPPORTED);
	assert_null(st);
	if (!strstr(err.message, want))
		fail_msg("%s: message '%s' does not name '%s'", uri, err.message, want);
	if (secret && strstr(err.message, secret))
		fail_msg("%s: message '%s' echoes '%s'", uri, err.message, secret);
}

static void test_commit_store_uris(void **st)
{
	(void)st;
	refused("s3+ddb://bucket/db/t.lance?ddbTableName=SECRETTABLE", "DynamoDB commit store",
		"SECRETTABLE");
	refused("S3+DDB://bucket/t.lance", "DynamoDB", NULL);
	refused("gs+etcd://bucket/t.lance?token=SECRET", "external commit store (\"etcd\")", "SECRET");
	/* an unknown plain scheme keeps its own message */
	refused("gs://bucket/t.lance", "unsupported URI scheme", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commit_store_uris),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
