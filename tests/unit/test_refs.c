/*
 * Tag and branch ref files: the pure parsers (both tag shapes, types, limits)
 * and the loader over in-memory, fault-injecting and custom storages.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/refs.h"
#include "lancever/sys/storage.h"
#include <lancever/sys/testing.h>
#include "util/util.h"

static int parse_tag(const char *json, lv_tag *t, lv_error *e)
{
	return lv__tag_parse((const uint8_t *)json, strlen(json), "v1", t, e);
}

static int parse_branch(const char *json, lv_branch *b, lv_error *e)
{
	return lv__branch_parse((const uint8_t *)json, strlen(json), "feat/x", b, e);
}

/* The tag / branch a ref file that parses describes (the test fails if it does not). */
static lv_tag tag_of(const char *json)
{
	lv_error e = { 0 };
	lv_tag t;
	assert_int_equal(parse_tag(json, &t, &e), 0);
	return t;
}

static lv_branch branch_of(const char *json)
{
	lv_error e = { 0 };
	lv_branch b;
	assert_int_equal(parse_branch(json, &b, &e), 0);
	return b;
}

static void t_tag_old_shape(void **state)
{
	(void)state;
	lv_tag t = tag_of("{\"branch\": null, \"version\": 3, \"manifestSize\": 512}");
	assert_string_equal(t.name, "v1");
	assert_null(t.branch);
	assert_int_equal(t.version, 3);
	assert_int_equal(t.manifest_size, 512);
	assert_null(t.created_at);
	assert_null(t.updated_at);
	assert_string_equal(t.metadata, "{}"); /* absent: Lance's empty map */
	lv__tag_dispose(&t);

	t = tag_of("{\"branch\":\"feat/x\",\"version\":0}");
	assert_string_equal(t.branch, "feat/x");
	assert_int_equal(t.version, 0);
	assert_int_equal(t.manifest_size, 0); /* unknown */
	lv__tag_dispose(&t);
	lv__tag_dispose(NULL);
}

static void t_tag_lance8_shape(void **state)
{
	(void)state;
	lv_tag t = tag_of("{\"branch\": null, \"version\": 2, "
			  "\"createdAt\": \"2025-11-03T10:21:33.123456Z\", "
			  "\"updatedAt\": \"2025-11-04T08:00:00Z\", \"manifestSize\": 476, "
			  "\"metadata\": {}}");
	assert_int_equal(t.version, 2);
	assert_int_equal(t.manifest_size, 476);
	assert_string_equal(t.created_at, "2025-11-03T10:21:33.123456Z");
	assert_string_equal(t.updated_at, "2025-11-04T08:00:00Z");
	assert_null(t.branch);
	lv__tag_dispose(&t);
}

static void t_unknown_keys(void **state)
{
	(void)state;
	lv_tag t = tag_of("{\"version\": 9, \"futureField\": [1, {\"x\": null}], "
			  "\"metadata\": {\"k\": \"v\"}, \"createdAt\": null}");
	assert_int_equal(t.version, 9);
	assert_null(t.created_at);
	assert_string_equal(t.metadata, "{\"k\":\"v\"}");
	lv__tag_dispose(&t);
	t = tag_of("{\"version\": 1, \"metadata\": {\"z\": \"1\", \"a\": \"b\"}}");
	assert_string_equal(t.metadata, "{\"a\":\"b\",\"z\":\"1\"}"); /* compact, keys sorted */
	lv__tag_dispose(&t);
	t = tag_of("{\"version\": 1, \"metadata\": null}");
	assert_string_equal(t.metadata, "{}");
	lv__tag_dispose(&t);
	lv_error e = { 0 };
	assert_int_equal(parse_tag("{\"version\": 1, \"metadata\": [\"k\"]}", &t, &e), LV_ECORRUPT);
	assert_non_null(strstr(e.message, "metadata"));
	lv_branch b = branch_of("{\"parentVersion\": 1, \"new\": true, \"identifier\": "
				"{\"uuid\": \"x\", \"n\": [1,2]}}");
	assert_int_equal(b.parent_version, 1);
	assert_int_equal(b.create_at, 0);
	assert_null(b.parent_branch);
	lv__branch_dispose(&b);
}

static void t_branch(void **state)
{
	(void)state;
	lv_branch b = branch_of("{\"parentBranch\": \"main2\", \"parentVersion\": 4, "
				"\"createAt\": 1762165293, \"manifestSize\": 630, "
				"\"identifier\": {\"a\": 1}, \"metadata\": {}}");
	assert_string_equal(b.name, "feat/x");
	assert_string_equal(b.parent_branch, "main2");
	assert_int_equal(b.parent_version, 4);
	assert_int_equal(b.create_at, 1762165293);
	assert_int_equal(b.manifest_size, 630);
	lv__branch_dispose(&b);
	lv__branch_dispose(NULL);

	char *n = lv__ref_name_decode("bugfix%2Fissue-123%2fdeep%2", 27);
	assert_string_equal(n, "bugfix/issue-123/deep%2");
	free(n);
	/* object_store never encodes 'A', so "%41" cannot be Lance's: kept as it is */
	n = lv__ref_name_decode("plain%41", 8);
	assert_string_equal(n, "plain%41");
	free(n);
	/* what LanceDB 0.31 writes for a tag named "ünïcode" (and '%' itself is %25) */
	n = lv__ref_name_decode("%C3%BCn%C3%AFcode", 17);
	assert_string_equal(n, "\xc3\xbc" "n" "\xc3\xaf" "code");
	free(n);
	n = lv__ref_name_decode("a%25b%7Cc%0A%00", 15);
	assert_string_equal(n, "a%b|c\n%00");
	free(n);
}

static void expect_tag_corrupt(const char *json, const char *needle)
{
	lv_error e = { 0 };
	lv_tag t;
	int rc = parse_tag(json, &t, &e);
	if (rc != LV_ECORRUPT)
		fail_msg("tag %s: got %d (%s)", json, rc, e.message);
	assert_int_equal(e.code, LV_ECORRUPT);
	assert_null(t.name);
	if (needle && !strstr(e.message, needle))
		fail_msg("tag %s: message \"%s\" lacks \"%s\"", json, e.message, needle);
}

static void expect_branch_corrupt(const char *json)
{
	lv_error e = { 0 };
	lv_branch b;
	int rc = parse_branch(json, &b, &e);
	if (rc != LV_ECORRUPT)
		fail_msg("branch %s: got %d (%s)", json, rc, e.message);
	assert_null(b.name);
}

static void t_malformed(void **state)
{
	(void)state;
	expect_tag_corrupt("", "invalid JSON");
	expect_tag_corrupt("{", "invalid JSON");
	expect_tag_corrupt("{\"version\": 1,}", "invalid JSON");
	expect_tag_corrupt("{\"version\": 1} trailing", "invalid JSON");
	expect_tag_corrupt("[1, 2]", "not a JSON object");
	expect_tag_corrupt("{\"version\": 1, \"version\": 2}", NULL); /* duplicate key */
	expect_tag_corrupt("{\"version\": 1, \"branch\": \"a\\u0000b\"}", NULL);
	expect_tag_corrupt("{\"version\": 1, \"branch\": \"\xff\xfe\"}", NULL); /* bad UTF-8 */
	expect_branch_corrupt("nope");
	expect_branch_corrupt("\"string\"");
	/* embedded NUL in the bytes */
	lv_error e = { 0 };
	lv_tag t;
	assert_int_equal(lv__tag_parse((const uint8_t *)"{\"version\":1}\0", 14, "x", &t, &e),
			 LV_ECORRUPT);
}

static void t_wrong_types(void **state)
{
	(void)state;
	expect_tag_corrupt("{\"version\": \"3\"}", "\"version\"");
	expect_tag_corrupt("{\"version\": 3.0}", "\"version\"");
	expect_tag_corrupt("{\"version\": true}", "\"version\"");
	expect_tag_corrupt("{\"version\": [3]}", "\"version\"");
	expect_tag_corrupt("{\"version\": 3, \"branch\": 5}", "\"branch\"");
	expect_tag_corrupt("{\"version\": 3, \"branch\": {}}", "\"branch\"");
	expect_tag_corrupt("{\"version\": 3, \"manifestSize\": \"476\"}", "\"manifestSize\"");
	expect_tag_corrupt("{\"version\": 3, \"createdAt\": 1762165293}", "\"createdAt\"");
	expect_tag_corrupt("{\"version\": 3, \"updatedAt\": false}", "\"updatedAt\"");
	expect_branch_corrupt("{\"parentVersion\": \"1\"}");
	expect_branch_corrupt("{\"parentVersion\": 1, \"parentBranch\": 2}");
	expect_branch_corrupt("{\"parentVersion\": 1, \"createAt\": \"2025-01-01\"}");
	expect_branch_corrupt("{\"parentVersion\": 1, \"createAt\": 1.5}");
	expect_branch_corrupt("{\"parentVersion\": 1, \"manifestSize\": null, \"x\": 1, "
			      "\"createAt\": []}");
}

static void t_numbers(void **state)
{
	(void)state;
	expect_tag_corrupt("{\"version\": -1}", "non-negative");
	expect_tag_corrupt("{\"version\": 1, \"manifestSize\": -5}", "non-negative");
	expect_branch_corrupt("{\"parentVersion\": -2}");
	expect_branch_corrupt("{\"parentVersion\": 1, \"createAt\": -1}");
	/* beyond int64: refused rather than wrapped */
	expect_tag_corrupt("{\"version\": 18446744073709551615}", NULL);
	expect_tag_corrupt("{\"version\": 99999999999999999999999}", NULL);
	expect_tag_corrupt("{\"version\": 1e30}", NULL);
	lv_tag t = tag_of("{\"version\": 9223372036854775807}");
	assert_int_equal(t.version, 9223372036854775807ull);
	lv__tag_dispose(&t);
}

static void t_missing_version(void **state)
{
	(void)state;
	expect_tag_corrupt("{}", "missing \"version\"");
	expect_tag_corrupt("{\"branch\": null, \"manifestSize\": 476}", "missing \"version\"");
	expect_tag_corrupt("{\"version\": null}", "missing \"version\"");
	expect_branch_corrupt("{\"parentBranch\": null, \"createAt\": 1}");
}

static char *oversize_json(size_t *len)
{
	/* valid JSON, just too big: {"version":1,"pad":"xxxx..."} */
	size_t n = LV_REFS_FILE_MAX + 100;
	char *s = malloc(n + 1);
	assert_non_null(s);
	memset(s, 'x', n);
	memcpy(s, "{\"version\":1,\"pad\":\"", 20);
	memcpy(s + n - 2, "\"}", 2);
	s[n] = 0;
	*len = n;
	return s;
}

static void t_oversize(void **state)
{
	(void)state;
	size_t n;
	char *s = oversize_json(&n);
	lv_error e = { 0 };
	lv_tag t;
	lv_branch b;
	assert_int_equal(lv__tag_parse((const uint8_t *)s, n, "big", &t, &e), LV_ELIMIT);
	assert_int_equal(lv__branch_parse((const uint8_t *)s, n, "big", &b, &e), LV_ELIMIT);
	free(s);
}

/* ---- loader ---- */

static void put(lv_storage *st, const char *path, const char *text)
{
	lv_error e = { 0 };
	assert_int_equal(lv_storage_write(st, path, text, strlen(text), &e), 0);
}

static void t_load(void **state)
{
	(void)state;
	lv_error e = { 0 };
	lv_storage *st = NULL;
	lv_refs *r = NULL;
	assert_int_equal(lv_storage_mem_new(&st, &e), 0);

	/* no _refs at all: empty, not an error */
	assert_int_equal(lv__refs_load_storage(&r, st, &e), 0);
	assert_int_equal(lv_refs_tag_count(r), 0);
	assert_int_equal(lv_refs_branch_count(r), 0);
	assert_null(lv_refs_tag(r, 0));
	lv_refs_free(r);

	put(st, "_refs/tags/zeta.json", "{\"branch\":null,\"version\":5,\"manifestSize\":10}");
	put(st, "_refs/tags/alpha.json",
	    "{\"branch\": \"feat/x\", \"version\": 2, \"createdAt\": \"2025-11-03T10:21:33Z\", "
	    "\"updatedAt\": \"2025-11-03T10:21:33Z\", \"manifestSize\": 476, \"metadata\": {}}");
	put(st, "_refs/tags/mid.json", "{\"version\": 3}");
	put(st, "_refs/tags/readme.txt", "not a tag");
	put(st, "_refs/tags/.json", "{\"version\": 1}");
	put(st, "_refs/tags/nested/deep.json", "{\"version\": 1}");
	put(st, "_refs/branches/feat%2Fx.json",
	    "{\"parentBranch\":null,\"parentVersion\":4,\"createAt\":1762165293,"
	    "\"manifestSize\":630,\"identifier\":{},\"metadata\":{}}");
	put(st, "_refs/branches/feat%2Fx%2Fsub.json",
	    "{\"parentBranch\":\"feat/x\",\"parentVersion\":1,\"createAt\":1762165300}");
	put(st, "_refs/branches/alpha.json", "{\"parentBranch\":null,\"parentVersion\":0}");

	assert_int_equal(lv__refs_load_storage(&r, st, &e), 0);
	assert_int_equal(lv_refs_tag_count(r), 3);
	assert_string_equal(lv_refs_tag(r, 0)->name, "alpha");
	assert_string_equal(lv_refs_tag(r, 0)->branch, "feat/x");
	assert_string_equal(lv_refs_tag(r, 0)->created_at, "2025-11-03T10:21:33Z");
	assert_string_equal(lv_refs_tag(r, 1)->name, "mid");
	assert_string_equal(lv_refs_tag(r, 2)->name, "zeta");
	assert_int_equal(lv_refs_tag(r, 2)->version, 5);
	assert_int_equal(lv_refs_tag(r, 2)->manifest_size, 10);
	assert_null(lv_refs_tag(r, 3));
	assert_int_equal(lv_refs_branch_count(r), 3);
	assert_string_equal(lv_refs_branch(r, 0)->name, "alpha");
	assert_string_equal(lv_refs_branch(r, 1)->name, "feat/x");
	assert_int_equal(lv_refs_branch(r, 1)->parent_version, 4);
	assert_int_equal(lv_refs_branch(r, 1)->create_at, 1762165293);
	assert_string_equal(lv_refs_branch(r, 2)->name, "feat/x/sub");
	assert_string_equal(lv_refs_branch(r, 2)->parent_branch, "feat/x");
	assert_null(lv_refs_branch(r, 3));
	lv_refs_free(r);
	lv_refs_free(NULL);
	assert_int_equal(lv_refs_tag_count(NULL), 0);

	/* one malformed file fails the load and is named */
	put(st, "_refs/branches/broken.json", "{\"parentVersion\": \"x\"}");
	r = (lv_refs *)1;
	assert_int_equal(lv__refs_load_storage(&r, st, &e), LV_ECORRUPT);
	assert_null(r);
	assert_non_null(strstr(e.message, "_refs/branches/broken.json"));
	assert_non_null(strstr(e.message, "parentVersion"));
	lv_error e2 = { 0 };
	assert_int_equal(lv_storage_delete(st, "_refs/branches/broken.json", &e2), 0);

	put(st, "_refs/tags/bad.json", "{\"version\": -3}");
	assert_int_equal(lv__refs_load_storage(&r, st, &e), LV_ECORRUPT);
	assert_non_null(strstr(e.message, "_refs/tags/bad.json"));
	assert_int_equal(lv_storage_delete(st, "_refs/tags/bad.json", &e2), 0);

	/* oversize file: a limit, named, without reading it all */
	size_t n;
	char *big = oversize_json(&n);
	assert_int_equal(lv_storage_write(st, "_refs/tags/big.json", big, n, &e2), 0);
	free(big);
	lv_storage_reset_stats(st);
	assert_int_equal(lv__refs_load_storage(&r, st, &e), LV_ELIMIT);
	assert_non_null(strstr(e.message, "_refs/tags/big.json"));
	lv_storage_stats ss = LV_STORAGE_STATS_INIT;
	lv_storage_get_stats(st, &ss);
	assert_true(ss.bytes_read <= LV_REFS_FILE_MAX + 1 + 4096);
	assert_int_equal(lv_storage_delete(st, "_refs/tags/big.json", &e2), 0);

	/* storage failures propagate */
	lv_storage *shim = NULL;
	lv_fault_spec spec = { .ops = LV_FAULT_READ, .nth = 2, .kind = LV_FAULT_FAIL };
	assert_int_equal(lv_storage_fault_wrap(&shim, st, &spec, &e), 0);
	assert_int_equal(lv__refs_load_storage(&r, shim, &e), LV_EIO);
	spec.ops = LV_FAULT_LIST;
	spec.nth = 2; /* the branches listing */
	assert_int_equal(lv_storage_fault_set(shim, &spec, &e), 0);
	assert_int_equal(lv__refs_load_storage(&r, shim, &e), LV_EIO);
	/* a corrupted read is reported as corruption, naming the file */
	spec.ops = LV_FAULT_READ;
	spec.nth = 1;
	spec.kind = LV_FAULT_SHORT;
	assert_int_equal(lv_storage_fault_set(shim, &spec, &e), 0);
	assert_int_equal(lv__refs_load_storage(&r, shim, &e), LV_ECORRUPT);
	assert_non_null(strstr(e.message, "_refs/tags/alpha.json"));
	lv_storage_free(shim);

	assert_int_equal(lv__refs_load_storage(&r, NULL, &e), LV_EINVALID);
	assert_int_equal(lv__refs_load_storage(NULL, st, &e), LV_EINVALID);
}

/* A backend whose listing names a tag that is gone by the time it is read. */
static int g_list(void *impl, const char *dir, bool rec, lv_list_cb cb, void *pl, lv_error *err)
{
	if (strcmp(dir, "_refs/tags") != 0)
		return 0;
	lv_list_entry a = { "_refs/tags/ghost.json", 10, 0 }, b = { "_refs/tags/real.json", 14, 0 };
	int rc = cb(&a, pl);
	return rc ? rc : cb(&b, pl);
}
static int g_range(void *impl, const char *path, uint64_t off, uint64_t len, lv_buf *out,
		   lv_error *err)
{
	if (strstr(path, "ghost"))
		return lv__err(err, LV_ENOTFOUND, "read %s: gone", path);
	out->ptr = (uint8_t *)lv__strdup("{\"version\":14}");
	out->size = 14;
	return 0;
}
static int g_read(void *impl, const char *path, lv_buf *out, lv_error *err)
{
	return g_range(impl, path, 0, UINT64_MAX, out, err);
}
static int g_head(void *impl, const char *path, uint64_t *s, int64_t *m, lv_error *err)
{
	return LV_ENOTFOUND;
}
static int g_write(void *impl, const char *path, const void *d, size_t n, lv_error *err)
{
	return LV_EIO;
}
static int g_del(void *impl, const char *path, lv_error *err) { return LV_EIO; }

static void t_load_vanished(void **state)
{
	(void)state;
	lv_storage_ops ops = { LV_STORAGE_OPS_VERSION, g_list, g_read, g_range, g_head,
			       g_write, g_write, g_del, NULL, NULL, NULL, 0, NULL };
	lv_error e = { 0 };
	lv_storage *st = NULL;
	lv_refs *r = NULL;
	assert_int_equal(lv_storage_new(&st, &ops, NULL, "ghost://", &e), 0);
	assert_int_equal(lv__refs_load_storage(&r, st, &e), 0);
	assert_int_equal(lv_refs_tag_count(r), 1);
	assert_string_equal(lv_refs_tag(r, 0)->name, "real");
	assert_int_equal(lv_refs_tag(r, 0)->version, 14);
	lv_refs_free(r);
	lv_storage_free(st);
}

/* The checked-in seed corpus parses as intended. */
static void t_corpus(void **state)
{
	(void)state;
	static const struct {
		const char *file;
		int tag_rc, branch_rc;
	} cases[] = {
		{ "tag_old.json", 0, LV_ECORRUPT },
		{ "tag_lance8.json", 0, LV_ECORRUPT },
		{ "tag_on_branch.json", 0, LV_ECORRUPT },
		{ "branch_main.json", LV_ECORRUPT, 0 },
		{ "branch_nested.json", LV_ECORRUPT, 0 },
		{ "bad_negative.json", LV_ECORRUPT, LV_ECORRUPT },
		{ "bad_truncated.json", LV_ECORRUPT, LV_ECORRUPT },
	};
	lv_storage *st = NULL;
	lv_error e = { 0 };
	assert_int_equal(lv_storage_open(&st, LV_SOURCE_DIR "/fuzz/corpora/refs", NULL, &e), 0);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		lv_buf b = { 0 };
		assert_int_equal(lv_storage_read(st, cases[i].file, &b, &e), 0);
		lv_tag t;
		lv_branch br;
		int rc = lv__tag_parse(b.ptr, b.size, "t", &t, &e);
		if (rc != cases[i].tag_rc)
			fail_msg("%s as tag: %d (%s)", cases[i].file, rc, e.message);
		if (rc == 0)
			lv__tag_dispose(&t);
		rc = lv__branch_parse(b.ptr, b.size, "b", &br, &e);
		if (rc != cases[i].branch_rc)
			fail_msg("%s as branch: %d (%s)", cases[i].file, rc, e.message);
		if (rc == 0)
			lv__branch_dispose(&br);
		lv_buf_dispose(&b);
	}
	lv_storage_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_tag_old_shape), cmocka_unit_test(t_tag_lance8_shape),
		cmocka_unit_test(t_unknown_keys),  cmocka_unit_test(t_branch),
		cmocka_unit_test(t_malformed),	   cmocka_unit_test(t_wrong_types),
		cmocka_unit_test(t_numbers),	   cmocka_unit_test(t_missing_version),
		cmocka_unit_test(t_oversize),	   cmocka_unit_test(t_load),
		cmocka_unit_test(t_load_vanished), cmocka_unit_test(t_corpus),
	};
	return cmocka_run_group_tests_name("refs", tests, NULL, NULL);
}
