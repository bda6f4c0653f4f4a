/* Unit tests: S3 response parsing (src/lib/objstore/xml.c), on real s3rver bodies and hostile ones. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "objstore/xml.h"
#include "support/testutil.h"
#include "util/util.h"

#define HEAD "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
#define LBR "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
#define OBJ(k) "<Contents><Key>" k "</Key><LastModified>2026-12-02T17:00:00.000Z</LastModified><Size>7</Size></Contents>"

static int parse(const char *body, lv__list_page *pg, lv_error *err)
{
	return lv__s3xml_parse_list(body, strlen(body), "S3 LIST t", pg, err);
}

static uint8_t *corpus_file(const char *name, size_t *n)
{
	char path[512];
	snprintf(path, sizeof path, "%s/fuzz/corpora/s3xml/%s", LV_SOURCE_DIR, name);
	return tu_read_file(path, n);
}

static void test_s3rver_listing(void **state)
{
	(void)state;
	size_t n;
	uint8_t *b = corpus_file("s3rver_list_page0.xml", &n);
	lv__list_page pg;
	lv_error err = { 0 };
	assert_int_equal(lv__s3xml_parse_list((const char *)b, n, "S3 LIST t", &pg, &err), 0);
	assert_int_equal(pg.n, 2);
	assert_true(pg.truncated);
	assert_non_null(pg.next_token);
	assert_true(!strncmp(pg.objs[0].key, "db/t.lance/_versions/", 21));
	assert_true(pg.objs[0].size > 0 && pg.objs[0].mtime_ms > 0);
	lv__list_page_dispose(&pg);
	free(b);
	b = corpus_file("s3rver_list_page1.xml", &n);
	assert_int_equal(lv__s3xml_parse_list((const char *)b, n, "S3 LIST t", &pg, &err), 0);
	assert_false(pg.truncated);
	lv__list_page_dispose(&pg);
	free(b);
}

static void test_listing_refusals(void **state)
{
	(void)state;
	static const struct { const char *body; int rc; const char *msg; } cases[] = {
		{ "", LV_ECORRUPT, "malformed XML" },
		{ "not xml at all", LV_ECORRUPT, "malformed XML" },
		{ HEAD LBR OBJ("a"), LV_ECORRUPT, "malformed XML" }, /* truncated */
		{ HEAD "<Error><Code>AccessDenied</Code></Error>", LV_ECORRUPT, "root element <Error>" },
		{ HEAD "<ListAllMyBucketsResult/>", LV_ECORRUPT, "root element" },
		{ HEAD "<!DOCTYPE x [<!ENTITY a \"" OBJ("k") "\">]>" LBR "&a;&a;</ListBucketResult>",
		  LV_ECORRUPT, "document type declaration" },
		{ HEAD LBR "<Contents><Key>a</Key><Size>-1</Size><LastModified>2026-12-02T17:00:00Z</LastModified></Contents></ListBucketResult>",
		  LV_ECORRUPT, "<Size> is not a number" },
		{ HEAD LBR "<Contents><Key>a</Key><Size>1</Size></Contents></ListBucketResult>",
		  LV_ECORRUPT, "no valid <LastModified>" },
		{ HEAD LBR "<Contents><Key>a</Key><Size>1</Size><LastModified>yesterday</LastModified></Contents></ListBucketResult>",
		  LV_ECORRUPT, "no valid <LastModified>" },
		{ HEAD LBR "<Contents><Key>a&#0;b</Key></Contents></ListBucketResult>", LV_ECORRUPT,
		  "malformed XML" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		lv__list_page pg;
		lv_error err = { 0 };
		int rc = parse(cases[i].body, &pg, &err);
		if (rc != cases[i].rc || !strstr(err.message, cases[i].msg) ||
		    strncmp(err.message, "S3 LIST t: ", 11))
			fail_msg("case %zu: rc %d, message '%s'", i, rc, err.message);
		assert_null(pg.objs);
		assert_null(pg.next_token);
	}
}

static void test_listing_long_text(void **state)
{
	(void)state;
	lv__dbuf b;
	lv__dbuf_init(&b, 0);
	lv__dbuf_adds(&b, HEAD LBR "<Contents><Key>");
	for (int i = 0; i < LV_S3XML_TEXT_MAX + 1; i++)
		lv__dbuf_addc(&b, 'k');
	lv__dbuf_adds(&b, "</Key></Contents></ListBucketResult>");
	lv__list_page pg;
	lv_error err = { 0 };
	assert_int_equal(lv__s3xml_parse_list((const char *)b.ptr, b.len, "S3 LIST t", &pg, &err),
			 LV_ELIMIT);
	assert_non_null(strstr(err.message, "longer than"));
	/* exactly at the limit is fine */
	b.len = 0;
	lv__dbuf_adds(&b, HEAD LBR "<Contents><Key>");
	for (int i = 0; i < LV_S3XML_TEXT_MAX; i++)
		lv__dbuf_addc(&b, 'k');
	lv__dbuf_adds(&b, "</Key><LastModified>2026-12-02T17:00:00Z</LastModified></Contents></ListBucketResult>");
	assert_int_equal(lv__s3xml_parse_list((const char *)b.ptr, b.len, "S3 LIST t", &pg, &err), 0);
	assert_int_equal(pg.n, 1);
	assert_int_equal(strlen(pg.objs[0].key), LV_S3XML_TEXT_MAX);
	lv__list_page_dispose(&pg);
	lv__dbuf_dispose(&b);
}

static void test_list_rel(void **state)
{
	(void)state;
	static const struct {
		const char *key, *kprefix;
		size_t strip;
		bool recursive;
		int rc;
		const char *rel; /* rc 1 */
	} cases[] = {
		{ "db/t.lance/_versions/1.manifest", "db/t.lance/_versions/", 11, false, 1, "_versions/1.manifest" },
		{ "db/t.lance/data/x/y.lance", "db/t.lance/data/", 11, true, 1, "data/x/y.lance" },
		{ "db/t.lance/data/x/y.lance", "db/t.lance/data/", 11, false, 0, NULL },
		{ "db/t.lance/_versions/", "db/t.lance/_versions/", 11, false, 0, NULL },
		{ "db/t.lance/data/dir/", "db/t.lance/data/", 11, true, 0, NULL },
		{ "_versions/1.manifest", "_versions/", 0, false, 1, "_versions/1.manifest" },
		/* hostile */
		{ "db/t.lance/_versions/../../../etc/passwd", "db/t.lance/_versions/", 11, true, LV_ECORRUPT, NULL },
		{ "db/t.lance/_versions/..", "db/t.lance/_versions/", 11, false, LV_ECORRUPT, NULL },
		/* checked even where a non-recursive listing would skip it */
		{ "db/t.lance/_versions/../../x", "db/t.lance/_versions/", 11, false, LV_ECORRUPT, NULL },
		{ "db/t.lance/_versions/a/../", "db/t.lance/_versions/", 11, true, LV_ECORRUPT, NULL },
		{ "db/t.lance/_versions/.", "db/t.lance/_versions/", 11, false, LV_ECORRUPT, NULL },
		{ "db/t.lance/_versions//x", "db/t.lance/_versions/", 11, true, LV_ECORRUPT, NULL },
		{ "/etc/passwd", "db/t.lance/_versions/", 11, false, LV_ECORRUPT, NULL },
		{ "db/other/_versions/1.manifest", "db/t.lance/_versions/", 11, false, LV_ECORRUPT, NULL },
		{ "db/t.lance/_versions/a\tb", "db/t.lance/_versions/", 11, false, LV_ECORRUPT, NULL },
		{ "db/t.lance/_versions/a\\..\\b", "db/t.lance/_versions/", 11, false, LV_ECORRUPT, NULL },
		{ "db/t.lance", "db/t.lance/", 11, false, LV_ECORRUPT, NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *rel = NULL;
		lv_error err = { 0 };
		int rc = lv__list_rel(cases[i].key, cases[i].kprefix, cases[i].strip,
					    cases[i].recursive, "S3 LIST t", &rel, &err);
		if (rc != cases[i].rc)
			fail_msg("case %zu (%s): rc %d, expected %d (%s)", i, cases[i].key, rc, cases[i].rc,
				 err.message);
		if (rc == 1)
			assert_string_equal(rel, cases[i].rel);
		if (rc < 0) {
			assert_non_null(strstr(err.message, "S3 LIST t: the server listed key '"));
			for (const char *m = err.message; *m; m++)
				assert_true((unsigned char)*m >= 0x20 && (unsigned char)*m < 0x7f);
		}
	}
}

static void test_delete_results(void **state)
{
	(void)state;
	const char *keys[] = { "b", "a", "c", "a" };
	int rcs[4] = { 0 };
	size_t failed;
	lv_error err = { 0 };
	const char *body = HEAD "<DeleteResult><Deleted><Key>b</Key></Deleted>"
			   "<Error><Key>a</Key><Code>NoSuchKey</Code></Error>"
			   "<Error><Key>c</Key><Code>AccessDenied</Code></Error>"
			   "<Error><Key>zzz</Key><Code>InternalError</Code></Error></DeleteResult>";
	assert_int_equal(lv__s3xml_parse_delete(body, strlen(body), keys, 4, rcs, &failed, &err), 0);
	assert_int_equal(rcs[0], 0);
	assert_int_equal(rcs[1], LV_ENOTFOUND);
	assert_int_equal(rcs[2], LV_EIO);
	assert_int_equal(rcs[3], LV_ENOTFOUND);
	assert_int_equal(failed, 3);
	/* real s3rver answers */
	size_t n;
	uint8_t *b = corpus_file("s3rver_delete_verbose.xml", &n);
	memset(rcs, 0, sizeof rcs);
	assert_int_equal(lv__s3xml_parse_delete((const char *)b, n, keys, 4, rcs, &failed, &err), 0);
	assert_int_equal(failed, 0);
	free(b);
	/* refusals */
	const char *bad[] = { "", "<Error><Code>x</Code></Error>", "<DeleteResult>",
			      "<!DOCTYPE d><DeleteResult/>" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(lv__s3xml_parse_delete(bad[i], strlen(bad[i]), keys, 4, rcs, NULL, &err),
				 LV_ECORRUPT);
		assert_non_null(strstr(err.message, "S3 DELETE (batch of 4): malformed response"));
	}
}

static void test_error_code(void **state)
{
	(void)state;
	char code[64];
	size_t n;
	uint8_t *b = corpus_file("s3rver_error_signature.xml", &n);
	lv__s3xml_error_code((const char *)b, n, code, sizeof code);
	assert_string_equal(code, "SignatureDoesNotMatch");
	free(b);
	const char *evil = "<Error><Code>\x1b[31mRed</Code></Error>";
	lv__s3xml_error_code(evil, strlen(evil), code, sizeof code);
	assert_string_equal(code, "");
	char big[200];
	snprintf(big, sizeof big, "<Code>%0100d</Code>", 0);
	lv__s3xml_error_code(big, strlen(big), code, sizeof code);
	assert_string_equal(code, "");
	/* not NUL-terminated, code at the very end */
	const char nt[] = { '<', 'C', 'o', 'd', 'e', '>', 'X', '<', '/', 'C', 'o', 'd', 'e', '>' };
	lv__s3xml_error_code(nt, sizeof nt, code, sizeof code);
	assert_string_equal(code, "X");
	lv__s3xml_error_code(nt, sizeof nt - 1, code, sizeof code);
	assert_string_equal(code, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_s3rver_listing),
		cmocka_unit_test(test_listing_refusals),
		cmocka_unit_test(test_listing_long_text),
		cmocka_unit_test(test_list_rel),
		cmocka_unit_test(test_delete_results),
		cmocka_unit_test(test_error_code),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
