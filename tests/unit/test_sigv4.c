/* Unit tests: AWS Signature Version 4 against AWS's published worked examples. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "aws/sigv4.h"

static void hex32(const uint8_t *b, char *out)
{
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

/* The IAM ListUsers example of the SigV4 documentation (AKIDEXAMPLE, 20150830T123600Z). */
static void test_iam_example(void **state)
{
	(void)state;
	uint8_t key[32];
	char hx[65];
	lv__sigv4_signing_key("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20150830", "us-east-1", "iam", key);
	hex32(key, hx);
	assert_string_equal(hx, "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9");
	lv__sigv4_header h[] = {
		{ "content-type", "application/x-www-form-urlencoded; charset=utf-8" },
		{ "host", "iam.amazonaws.com" },
		{ "x-amz-date", "20150830T123600Z" },
	};
	char empty[65];
	lv__sha256_hex("", 0, empty);
	assert_string_equal(empty, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	lv__sigv4_request r = { "GET", "/", "Action=ListUsers&Version=2010-05-08", h, 3, empty,
			       "20150830T123600Z", "us-east-1", "iam", "AKIDEXAMPLE",
			       "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
	char auth[1024];
	assert_int_equal(lv__sigv4_authorization(&r, auth, sizeof auth), 0);
	assert_string_equal(auth, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
				  "SignedHeaders=content-type;host;x-amz-date, "
				  "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7");
}

/* The S3 "GET object" example (examplebucket, range bytes=0-9, 20130524T000000Z). */
static void test_s3_get_example(void **state)
{
	(void)state;
	char empty[65];
	lv__sha256_hex("", 0, empty);
	lv__sigv4_header h[] = {
		{ "host", "examplebucket.s3.amazonaws.com" },
		{ "range", "bytes=0-9" },
		{ "x-amz-content-sha256", empty },
		{ "x-amz-date", "20130524T000000Z" },
	};
	lv__sigv4_request r = { "GET", "/test.txt", "", h, 4, empty, "20130524T000000Z", "us-east-1", "s3",
			       "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" };
	char auth[1024];
	assert_int_equal(lv__sigv4_authorization(&r, auth, sizeof auth), 0);
	assert_non_null(strstr(auth, "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"));
	assert_non_null(strstr(auth, "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date"));
}

static void test_uri_encode(void **state)
{
	(void)state;
	char *a = lv__aws_uri_encode("a b/c~d_e-f.g+h=i", 17, 1);
	assert_string_equal(a, "a%20b/c~d_e-f.g%2Bh%3Di");
	free(a);
	char *b = lv__aws_uri_encode("db/t.lance/", 11, 0);
	assert_string_equal(b, "db%2Ft.lance%2F");
	free(b);
	char *c = lv__aws_uri_encode("\xc3\xa9", 2, 0);
	assert_string_equal(c, "%C3%A9");
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_iam_example),
		cmocka_unit_test(test_s3_get_example),
		cmocka_unit_test(test_uri_encode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
