/*
 * Branch names as Lance accepts them (issue 24): the rule (lv__branch_name_check) over ASCII and
 * Unicode names, the UTF-8 decoder and the alphanumeric table under it, the ref-file name
 * encoding, and opening a branch named "ünï" through the public API (its versions under
 * tree/ünï/, its ref file _refs/branches/%C3%BCn%C3%AF.json as Lance names it).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <lancever/lancever.h>

#include "format/refs.h"
#include "support/synth.h"
#include "support/testutil.h"
#include "util/util.h"

/* Lance 8 and 12 create these branches (tests/interop/test_branch_names.mjs checks the lists
 * against both): letters and digits of any script, Alphabetic marks (a Devanagari vowel sign,
 * U+0345), circled and Roman-numeral letters, '.', '-', '_' anywhere. */
static void t_accepted(void **state)
{
	(void)state;
	static const char *const ok[] = {
		"feat", "feat/x", "a.b", "a_b-c", ".x", "x.", "-x", "_x", "x.LOCK", "a.lock/b",
		"a/b/c", "ünï", "a/ünï", "ß", "ǅ", "ʰ", "ª", "²", "Ⅻ", "〇", "٣", "𝟘", "ー", "ゝ",
		"कि", "Ⓐ", "a\xcd\x85", "日本語/ブランチ", "Ελληνικά", "кириллица",
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		lv_error e = { 0 };
		if (lv__branch_name_check(ok[i], strlen(ok[i]), &e) != 0)
			fail_msg("'%s' refused: %s", ok[i], e.message);
	}
}

/* Lance refuses these; so does lancever, with a message saying which rule. */
static void t_refused(void **state)
{
	(void)state;
	static const struct {
		const char *name, *why;
	} bad[] = {
		{ "", "empty" },
		{ "/x", "starts or ends with '/'" },
		{ "x/", "starts or ends with '/'" },
		{ "a//b", "contains '//'" },
		{ "a..b", "contains '..'" },
		{ "../x", "contains '..'" },
		{ "x\\y", "contains '\\'" },
		{ "x.lock", "ends with '.lock'" },
		{ "ünï.lock", "ends with '.lock'" },
		{ ".", "a segment is '.'" },
		{ "a/./b", "a segment is '.'" },
		{ "a b", "U+0020 is not alphanumeric" },
		{ "x@{", "U+0040 is not alphanumeric" },
		{ "a:b", "U+003A" },
		{ "e\xf0\x9f\x99\x82", "U+1F642" },        /* an emoji */
		{ "x\xcc\x83", "U+0303" },                 /* a combining tilde (Mn, not Alphabetic) */
		{ "\xe3\x82\x9b", "U+309B" },              /* a kana voicing mark (Sk) */
		{ "a\xc2\xad" "b", "U+00AD" },             /* a soft hyphen (Cf) */
		{ "a\xe2\x80\x8d" "b", "U+200D" },         /* a zero-width joiner (Cf) */
		{ "a\x01", "U+0001" },                     /* a control character */
		{ "a\x7f", "U+007F" },
		{ "\xff", "not valid UTF-8" },
		{ "a\xc3", "not valid UTF-8" },            /* a truncated sequence */
		{ "\xc0\xaf", "not valid UTF-8" },         /* an overlong '/' */
		{ "\xed\xa0\x80", "not valid UTF-8" },     /* a surrogate */
		{ "\xf4\x90\x80\x80", "not valid UTF-8" }, /* beyond U+10FFFF */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		lv_error e = { 0 };
		int rc = lv__branch_name_check(bad[i].name, strlen(bad[i].name), &e);
		if (rc != LV_EINVALID || !strstr(e.message, bad[i].why) ||
		    strncmp(e.message, "invalid branch name '", 21))
			fail_msg("'%s': rc %d, message '%s', expected '%s'", bad[i].name, rc, e.message,
				 bad[i].why);
	}
	/* a NUL inside the name (a C string cannot carry one; a length can) */
	lv_error e = { 0 };
	assert_int_equal(lv__branch_name_check("ab\0cd", 5, &e), LV_EINVALID);
	assert_non_null(strstr(e.message, "U+0000"));
	/* the length bound, in bytes */
	char big[LV_BRANCH_NAME_MAX + 2];
	memset(big, 'a', sizeof big);
	assert_int_equal(lv__branch_name_check(big, LV_BRANCH_NAME_MAX, &e), 0);
	assert_int_equal(lv__branch_name_check(big, LV_BRANCH_NAME_MAX + 1, &e), LV_EINVALID);
	assert_non_null(strstr(e.message, "longer than"));
}

static void t_utf8_decode(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		size_t len;
		uint32_t cp;
	} cases[] = {
		{ "A", 1, 0x41 },
		{ "\xc3\xbc", 2, 0xFC },
		{ "\xe0\xa4\x95", 3, 0x915 },
		{ "\xf0\x9f\x99\x82", 4, 0x1F642 },
		{ "\xf4\x8f\xbf\xbf", 4, 0x10FFFF },
		{ "\xc1\xbf", 0, 0 },     /* overlong */
		{ "\xe0\x9f\xbf", 0, 0 }, /* overlong */
		{ "\xed\xbf\xbf", 0, 0 }, /* surrogate */
		{ "\x80", 0, 0 },         /* a continuation byte first */
		{ "\xf8\x88\x80\x80\x80", 0, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint32_t cp = 0;
		size_t l = lv__utf8_decode(cases[i].s, strlen(cases[i].s), &cp);
		assert_int_equal(l, cases[i].len);
		if (l)
			assert_int_equal(cp, cases[i].cp);
	}
	uint32_t cp = 0;
	assert_int_equal(lv__utf8_decode("\xc3\xbc", 1, &cp), 0); /* cut short by n */
}

static void t_alnum_table(void **state)
{
	(void)state;
	static const uint32_t yes[] = { '0', '9', 'A', 'Z', 'a', 'z', 0xAA, 0xB2, 0xC0, 0xFC, 0x345,
					0x915, 0x93F, 0x1C5, 0x2B0, 0x24B6, 0x2160, 0x3007, 0x30FC,
					0x4E00, 0x1D7D8, 0x20000 };
	static const uint32_t no[] = { 0, '/', '.', '-', '_', ' ', '@', 0x7F, 0xAD, 0xD7, 0xF7, 0x303,
				       0x309B, 0x200D, 0x1F642, 0xD800, 0x10FFFF, 0x110000 };
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		if (!lv__unicode_alnum(yes[i]))
			fail_msg("U+%04X should be alphanumeric", (unsigned)yes[i]);
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		if (lv__unicode_alnum(no[i]))
			fail_msg("U+%04X should not be alphanumeric", (unsigned)no[i]);
}

static void t_encode(void **state)
{
	(void)state;
	static const struct {
		const char *name, *file;
	} cases[] = {
		{ "feat", "feat" },
		{ "feat/x", "feat%2Fx" },
		{ "ünï", "%C3%BCn%C3%AF" },
		{ "a/ünï", "a%2F%C3%BCn%C3%AF" },
		{ "a.b-c_d", "a.b-c_d" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *f = lv__ref_name_encode(cases[i].name, strlen(cases[i].name));
		assert_string_equal(f, cases[i].file);
		char *back = lv__ref_name_decode(f, strlen(f));
		assert_string_equal(back, cases[i].name);
		free(f);
		free(back);
	}
}

/* A branch "ünï" as Lance lays it out, opened through the public API. */
static void t_open_unicode_branch(void **state)
{
	(void)state;
	lv_storage *root = tu_mem(), *sub = NULL;
	lv_error e = { 0 };
	assert_int_equal(lv_storage_sub(&sub, root, "tree/ünï", &e), 0);
	assert_int_equal(synth_series(root, 3, 1700000000000), 0);
	assert_int_equal(synth_series(sub, 5, 1700000000000), 0);
	lv_open_options o = LV_OPEN_OPTIONS_INIT;
	o.branch = "ünï";
	lv_dataset *ds = NULL;
	lv_version_list *l = NULL;
	lv_storage_free(sub);
	const char *json = "{\"parentBranch\":null,\"parentVersion\":2,\"createAt\":1,\"manifestSize\":1}";
	assert_int_equal(lv_storage_write(root, "_refs/branches/%C3%BCn%C3%AF.json", json, strlen(json), &e), 0);
	assert_int_equal(lv_dataset_open_storage(&ds, root, &o, &e), 0);
	assert_int_equal(lv_versions(&l, ds, NULL, &e), 0);
	assert_int_equal(lv_version_list_count(l), 5);
	lv_version_list_free(l);
	lv_dataset_free(ds);
	/* an unregistered Unicode branch is named with its encoded ref file */
	o.branch = "ärger";
	assert_int_equal(lv_dataset_open_storage(&ds, root, &o, &e), 0);
	assert_int_equal(lv_versions(&l, ds, NULL, &e), LV_ENOTFOUND);
	assert_non_null(strstr(e.message, "branch 'ärger' is not registered (no _refs/branches/%C3%A4rger.json)"));
	lv_dataset_free(ds);
	/* a name Lance refuses is refused before anything is read */
	o.branch = "e\xf0\x9f\x99\x82";
	assert_int_equal(lv_dataset_open_storage(&ds, root, &o, &e), LV_EINVALID);
	assert_null(ds);
	lv_storage_free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_accepted),	 cmocka_unit_test(t_refused),
		cmocka_unit_test(t_utf8_decode), cmocka_unit_test(t_alnum_table),
		cmocka_unit_test(t_encode),	 cmocka_unit_test(t_open_unicode_branch),
	};
	return cmocka_run_group_tests_name("branch_names", tests, NULL, NULL);
}
