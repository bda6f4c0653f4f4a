/*
 * Pure parts of the cloud backends: AWS shared-file profiles (INI), credential
 * documents (IMDS/container JSON, credential_process JSON, STS XML), Azure List
 * Blobs pages and Shared Key strings-to-sign, object keys from URIs, and the
 * storage-option bag.  No network: the servers are faked in tests/interop.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "aws/creds.h"
#include "aws/profile.h"
#include "azure/az_int.h"
#include "core/stores.h"
#include "objstore/options.h"
#include "objstore/uri.h"
#include "objstore/xml.h"
#include "storage/backends.h"
#include "util/util.h"

static const char INI[] =
	"# comment\n"
	"[default]\n"
	"aws_access_key_id = AKIADEFAULT\n"
	"aws_secret_access_key=secret-default\n"
	"\n"
	"[profile dev]\n"
	"region = eu-west-1\n"
	"s3 =\n"
	"  endpoint_url = http://nested/\n"
	"endpoint_url = http://dev:9000\n"
	"  ; indented comment\n"
	"[dev]\n"
	"region = wrong-section\n";

static void t_ini(void **state)
{
	(void)state;
	lv__aws_profile p;
	memset(&p, 0, sizeof p);
	lv_error e = { 0 };
	assert_int_equal(lv__aws_ini_section(&p, INI, strlen(INI), "profile dev", "cfg", &e), 0);
	assert_true(p.found);
	assert_string_equal(lv__aws_profile_get(&p, "region", NULL), "eu-west-1");
	/* the indented sub-property of "s3 =" is skipped: the top-level key counts */
	assert_string_equal(lv__aws_profile_get(&p, "endpoint_url", NULL), "http://dev:9000");
	assert_null(lv__aws_profile_get(&p, "aws_access_key_id", NULL));
	/* a second file read later does not override keys already present */
	const char *cred = "[profile dev]\nregion = other\naws_access_key_id = AKIADEV\n";
	const char *file = NULL;
	assert_int_equal(lv__aws_ini_section(&p, cred, strlen(cred), "profile dev", "cred", &e), 0);
	assert_string_equal(lv__aws_profile_get(&p, "region", &file), "eu-west-1");
	assert_string_equal(file, "cfg");
	assert_string_equal(lv__aws_profile_get(&p, "aws_access_key_id", &file), "AKIADEV");
	assert_string_equal(file, "cred");
	lv__aws_profile_dispose(&p);
	memset(&p, 0, sizeof p);
	assert_int_equal(lv__aws_ini_section(&p, INI, strlen(INI), "missing", "cfg", &e), 0);
	assert_false(p.found);
	assert_int_equal(p.n, 0);
	lv__aws_profile_dispose(&p);
}

static void t_json_creds(void **state)
{
	(void)state;
	lv_error e = { 0 };
	lv__aws_creds *c = NULL;
	const char *imds = "{\"Code\":\"Success\",\"AccessKeyId\":\"ASIA1\",\"SecretAccessKey\":\"s3cr3t\","
			   "\"Token\":\"tok\",\"Expiration\":\"2030-01-02T03:04:05Z\"}";
	assert_int_equal(lv__aws_parse_json_creds(imds, strlen(imds), false, "imds", &c, &e), 0);
	assert_string_equal(c->akid, "ASIA1");
	assert_string_equal(c->token, "tok");
	assert_int_equal(c->expires_ms, 1893553445000LL);
	lv__aws_creds_release(c);
	/* credential_process: Version 1 required, SessionToken, no Expiration = long-term */
	const char *proc = "{\"Version\":1,\"AccessKeyId\":\"AKIA\",\"SecretAccessKey\":\"s3cr3t\"}";
	assert_int_equal(lv__aws_parse_json_creds(proc, strlen(proc), true, "proc", &c, &e), 0);
	assert_null(c->token);
	assert_int_equal(c->expires_ms, 0);
	lv__aws_creds_release(c);
	static const struct {
		const char *body;
		bool process;
		int rc;
		const char *msg;
	} bad[] = {
		{ "<html>", false, LV_ECORRUPT, "not a JSON object" },
		{ "[1]", false, LV_ECORRUPT, "not a JSON object" },
		{ "{\"Code\":\"Failure\"}", false, LV_EIO, "Code Failure" },
		{ "{\"AccessKeyId\":\"A\"}", false, LV_ECORRUPT, "no AccessKeyId and SecretAccessKey" },
		{ "{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"s3cr3t\",\"Expiration\":\"soon\"}", false,
		  LV_ECORRUPT, "Expiration" },
		{ "{\"Version\":2,\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"s3cr3t\"}", true, LV_ECORRUPT,
		  "Version" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		c = (lv__aws_creds *)1;
		assert_int_equal(lv__aws_parse_json_creds(bad[i].body, strlen(bad[i].body), bad[i].process,
							  "src", &c, &e), bad[i].rc);
		assert_null(c);
		assert_non_null(strstr(e.message, bad[i].msg));
		assert_null(strstr(e.message, "s3cr3t"));
	}
}

static void t_sts(void **state)
{
	(void)state;
	lv_error e = { 0 };
	lv__aws_creds *c = NULL;
	const char *ok = "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>"
			 "<AccessKeyId>ASIA2</AccessKeyId><SecretAccessKey>s3cr3t</SecretAccessKey>"
			 "<SessionToken>tok</SessionToken><Expiration>2030-01-02T03:04:05Z</Expiration>"
			 "</Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";
	assert_int_equal(lv__aws_parse_sts_creds(ok, strlen(ok), "sts", &c, &e), 0);
	assert_string_equal(c->akid, "ASIA2");
	assert_int_equal(c->expires_ms, 1893553445000LL);
	lv__aws_creds_release(c);
	const char *wrong = "<ErrorResponse><Error><Code>X</Code></Error></ErrorResponse>";
	assert_int_equal(lv__aws_parse_sts_creds(wrong, strlen(wrong), "sts", &c, &e), LV_ECORRUPT);
	const char *partial = "<AssumeRoleWithWebIdentityResponse><AccessKeyId>A</AccessKeyId>"
			      "<SecretAccessKey>s3cr3t</SecretAccessKey></AssumeRoleWithWebIdentityResponse>";
	assert_int_equal(lv__aws_parse_sts_creds(partial, strlen(partial), "sts", &c, &e), LV_ECORRUPT);
	assert_null(strstr(e.message, "s3cr3t"));
	const char *dtd = "<!DOCTYPE x [<!ENTITY a \"b\">]><AssumeRoleWithWebIdentityResponse/>";
	assert_int_equal(lv__aws_parse_sts_creds(dtd, strlen(dtd), "sts", &c, &e), LV_ECORRUPT);
}

static void t_azure_list(void **state)
{
	(void)state;
	lv_error e = { 0 };
	lv__list_page pg;
	const char *body =
		"<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults ServiceEndpoint=\"x\">"
		"<Prefix>p/</Prefix><Blobs><Blob><Name>p/a b</Name><Properties>"
		"<Last-Modified>Fri, 04 Dec 2026 11:49:34 GMT</Last-Modified><Content-Length>12</Content-Length>"
		"</Properties></Blob><BlobPrefix><Name>p/dir/</Name></BlobPrefix></Blobs>"
		"<NextMarker>m2</NextMarker></EnumerationResults>";
	assert_int_equal(lv__azxml_parse_list(body, strlen(body), "Azure LIST p", &pg, &e), 0);
	assert_int_equal(pg.n, 1);
	assert_string_equal(pg.objs[0].key, "p/a b");
	assert_int_equal(pg.objs[0].size, 12);
	assert_int_equal(pg.objs[0].mtime_ms, 1796384974000LL);
	assert_true(pg.truncated);
	assert_string_equal(pg.next_token, "m2");
	lv__list_page_dispose(&pg);
	const char *last = "<EnumerationResults><Blobs/><NextMarker/></EnumerationResults>";
	assert_int_equal(lv__azxml_parse_list(last, strlen(last), "w", &pg, &e), 0);
	assert_false(pg.truncated);
	lv__list_page_dispose(&pg);
	const char *nosize = "<EnumerationResults><Blobs><Blob><Name>a</Name><Properties>"
			     "<Last-Modified>Fri, 04 Dec 2026 11:49:34 GMT</Last-Modified></Properties>"
			     "</Blob></Blobs></EnumerationResults>";
	assert_int_equal(lv__azxml_parse_list(nosize, strlen(nosize), "w", &pg, &e), LV_ECORRUPT);
	assert_int_equal(lv__azxml_parse_list("<ListBucketResult/>", 19, "w", &pg, &e), LV_ECORRUPT);
}

static void t_azure_sts(void **state)
{
	(void)state;
	lv__az_param ps[] = { { "comp", "list" }, { "prefix", "a b/" }, { "restype", "container" } };
	const char *xms[] = { "x-ms-date:Fri, 04 Dec 2026 11:49:34 GMT", "x-ms-version:2021-08-06" };
	char *s = lv__az_string_to_sign("GET", "acct", "/acct/cont", ps, 3, 0, NULL, false, xms, 2);
	assert_string_equal(s, "GET\n\n\n\n\n\n\n\n\n\n\n\n"
			       "x-ms-date:Fri, 04 Dec 2026 11:49:34 GMT\nx-ms-version:2021-08-06\n"
			       "/acct/acct/cont\ncomp:list\nprefix:a b/\nrestype:container");
	free(s);
	s = lv__az_string_to_sign("PUT", "acct", "/cont/a%20b", NULL, 0, 5, "application/octet-stream",
				  true, xms, 1);
	assert_string_equal(s, "PUT\n\n\n5\n\napplication/octet-stream\n\n\n\n*\n\n\n"
			       "x-ms-date:Fri, 04 Dec 2026 11:49:34 GMT\n/acct/cont/a%20b");
	free(s);
	char *enc = lv__az_encode("d ir/é+%", true);
	assert_string_equal(enc, "d%20ir/%C3%A9%2B%25");
	free(enc);
}

/* The address of "<scheme>://b/<in>" with object_key_encoding `enc` (NULL: not set). */
static lv_storage_options *bag; /* the last parse's options (the address borrows them) */

static int parse(lv__address *a, const char *scheme, const char *in, const char *enc, lv_error *e)
{
	lv__stores_builtin();
	lv_storage_options *o = NULL;
	lv_storage_options_free(bag);
	assert_int_equal(lv_storage_options_new(&o, e), 0);
	if (enc)
		assert_int_equal(lv_storage_options_set(o, "object_key_encoding", enc, e), 0);
	char *uri = lv__sprintf("%s://b/%s", scheme, in);
	assert_non_null(uri);
	bag = o;
	int rc = lv__address_parse(a, uri, o, e);
	a->uri = NULL;
	free(uri);
	return rc;
}

/* The key prefix of s3:// URI path `in` with object_key_encoding `enc` (NULL: not set) is
 * `want`, and the other spelling is `want_alt` (NULL: none). */
static void expect_key_prefix(const char *in, const char *enc, const char *want, const char *want_alt)
{
	lv_error e = { 0 };
	char *k = NULL, *alt = NULL;
	lv__address a;
	assert_int_equal(parse(&a, "s3", in, enc, &e), 0);
	assert_int_equal(lv__uri_key_prefix(a.root, a.root_raw, &a.opts, &k, &alt, &e), 0);
	assert_string_equal(k, want);
	if (want_alt)
		assert_string_equal(alt, want_alt);
	else
		assert_null(alt);
	free(k);
	free(alt);
	lv__address_dispose(&a);
}

static void t_uri_keys(void **state)
{
	(void)state;
	lv_error e = { 0 };
	char *k = NULL;
	lv__address a;
	/* Lance 8 (LanceDB 0.31): the URL path, percent-encoded, '%' kept */
	const char *in = "dïr with space+plus%25/db/";
	expect_key_prefix(in, "encoded", "d%C3%AFr%20with%20space+plus%25/db", NULL);
	expect_key_prefix("q\"u`o{t}e<>|^~!$&'()*,;=@:[]", "encoded", "q%22u%60o%7Bt%7De%3C%3E|^~!$&'()*,;=@:[]", NULL);
	/* Lance 12 (LanceDB 0.39), the default: raw characters, escapes decoded; Lance 8's the other */
	expect_key_prefix(in, NULL, "dïr with space+plus%/db", "d%C3%AFr%20with%20space+plus%25/db");
	expect_key_prefix(in, "decoded", "dïr with space+plus%/db", NULL); /* explicit: no other */
	expect_key_prefix("plain/db", NULL, "plain/db", NULL);
	expect_key_prefix("a%zz%4", NULL, "a%zz%4", NULL); /* not escapes: kept */
	assert_int_equal(parse(&a, "s3", in, "both", &e), 0);
	assert_int_equal(lv__uri_key_prefix(a.root, a.root_raw, &a.opts, &k, NULL, &e), LV_EINVALID);
	assert_null(k);
	lv__address_dispose(&a);
	/* a query or fragment is refused by the parser, for every object store */
	assert_int_equal(parse(&a, "s3", "a?b", NULL, &e), LV_EINVALID);
	lv__address_dispose(&a);
	assert_int_equal(parse(&a, "az", "a#b", NULL, &e), LV_EINVALID);
	assert_non_null(strstr(e.message, "az://"));
	lv__address_dispose(&a);
	lv_storage_options_free(bag);
	bag = NULL;
}

/* The one parser: forms, the container and host, file:// decoding, unknown schemes. */
static void t_address(void **state)
{
	(void)state;
	lv_error e = { 0 };
	lv__address a;
	lv__stores_builtin();
	assert_int_equal(lv__address_parse(&a, "AZ://cont@acct.dfs.core.windows.net/p%20q/", NULL, &e), 0);
	assert_string_equal(a.scheme, "az");
	assert_int_equal(a.form, LV__ADDR_BUCKET);
	assert_string_equal(a.container, "cont");
	assert_string_equal(a.host, "acct.dfs.core.windows.net");
	assert_string_equal(a.root, "p q");
	assert_string_equal(a.root_raw, "p%20q");
	lv__address_dispose(&a);
	assert_int_equal(lv__address_parse(&a, "file:///d%C3%AF/x/tree/b", NULL, &e), 0);
	assert_int_equal(a.form, LV__ADDR_PATH);
	assert_string_equal(a.root, "/dï/x/tree/b");
	assert_int_equal(a.tree, strlen("/dï/x"));
	lv__address_dispose(&a);
	assert_int_equal(lv__address_parse(&a, "file:///a%zz", NULL, &e), LV_EINVALID);
	lv__address_dispose(&a);
	assert_int_equal(lv__address_parse(&a, "file:///a%00", NULL, &e), LV_EINVALID);
	lv__address_dispose(&a);
	assert_int_equal(lv__address_parse(&a, "/x/tree/", NULL, &e), 0);
	assert_int_equal(a.tree, 0); /* no name after tree/ */
	lv__address_dispose(&a);
	assert_int_equal(lv__address_parse(&a, "gs://secret-bucket/x", NULL, &e), LV_EUNSUPPORTED);
	assert_null(strstr(e.message, "secret"));
	lv__address_dispose(&a);
	assert_int_equal(lv__address_parse(&a, "s3+ddb://b/x", NULL, &e), LV_EUNSUPPORTED);
	lv__address_dispose(&a);
	/* one scheme, one backend */
	assert_int_equal(lv__backend_register(&lv__backend_s3), LV_EEXISTS);
	assert_ptr_equal(lv__backend_find("s3"), &lv__backend_s3);
	assert_null(lv__backend_find("gs"));
}

static void t_optbag(void **state)
{
	(void)state;
	lv_error e = { 0 };
	const char *keys[] = { "AWS_Region", "timeout", "flag", "n", "region" };
	const char *vals[] = { "eu-1", "1m30s", "Yes", "7", "ignored-the-first-pair-wins" };
	lv_storage_options *o = NULL;
	assert_int_equal(lv_storage_options_new(&o, &e), 0);
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(lv_storage_options_set(o, keys[i], vals[i], &e), 0);
	assert_int_equal(lv_storage_options_set(o, "", "v", &e), LV_EINVALID);
	assert_int_equal(lv_storage_options_set(o, "k", NULL, &e), LV_EINVALID);
	assert_int_equal(lv_storage_options_set(NULL, "k", "v", &e), LV_EINVALID);
	lv__optbag b;
	assert_int_equal(lv__optbag_init(&b, o, &e), 0);
	assert_string_equal(lv__opt_get(&b, LV_OPT("aws_region", "region")), "eu-1");
	int64_t ms = 0;
	assert_int_equal(lv__opt_ms(&b, LV_OPT("timeout"), NULL, 1000, 86400000, &ms, &e), 0);
	assert_int_equal(ms, 90000);
	bool f = false;
	assert_int_equal(lv__opt_bool(&b, LV_OPT("flag"), NULL, false, &f, &e), 0);
	assert_true(f);
	assert_int_equal(lv__opt_leftover(&b, "s3://", &e), LV_EINVALID);
	assert_non_null(strstr(e.message, "'n'"));
	uint64_t n = 0;
	assert_int_equal(lv__opt_u64(&b, LV_OPT("n"), NULL, 0, 5, &n, &e), LV_EINVALID);
	assert_int_equal(lv__opt_u64(&b, LV_OPT("n"), NULL, 0, 9, &n, &e), 0);
	assert_int_equal(n, 7);
	assert_int_equal(lv__opt_leftover(&b, "s3://", &e), 0);
	lv__optbag_dispose(&b);
	lv_storage_options_free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_ini),	cmocka_unit_test(t_json_creds), cmocka_unit_test(t_sts),
		cmocka_unit_test(t_azure_list), cmocka_unit_test(t_azure_sts),	cmocka_unit_test(t_uri_keys),
		cmocka_unit_test(t_optbag),	cmocka_unit_test(t_address),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
