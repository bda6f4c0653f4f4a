/*
 * Unit test of the Lance file layer's schema cache (src/lib/lancefile/schcache.c) with the
 * lancefile fuzz corpus (fuzz/corpora/lancefile): every file gives the same answers
 * (strict, partial, and strict after partial) with the cache cleared before each read as
 * after the other files went through it, twice (many schemas in one process, entries
 * replaced all the time; a partial parse is never stored for a strict read).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#ifndef LV_TEST_HOOKS
#define LV_TEST_HOOKS 1
#endif
#include "lancefile/lf_file.h"
#include "lancefile/schcache.h"
#include "support/lftext.h"
#include "support/testutil.h"

static lv__lf_schcache_stats stats(void)
{
	lv__lf_schcache_stats s;
	lv__lf_schcache_stat(&s);
	return s;
}

typedef struct answer {
	int strict, partial; /* return codes */
	char *s, *p;         /* descriptions when 0 */
} answer;

static char *read_tu_lf_describe(const uint8_t *b, size_t n, unsigned flags, int *rc)
{
	lv_lancefile *f = NULL;
	lv_error e = { 0 };
	*rc = lv_lancefile_read_ex(&f, b, n, "fuzz.lance", flags, &e);
	char *d = *rc ? NULL : tu_lf_describe(f);
	lv_lancefile_free(f);
	return d;
}

/* fresh: the cache cleared before each read (both are parses), the number stored added
 * to *stored. */
static answer answer_of(const uint8_t *b, size_t n, bool fresh, uint64_t *stored)
{
	answer a;
	if (fresh)
		lv__lf_schcache_clear();
	a.s = read_tu_lf_describe(b, n, 0, &a.strict);
	if (fresh) {
		*stored += stats().stores;
		lv__lf_schcache_clear();
	}
	a.p = read_tu_lf_describe(b, n, LV_LANCEFILE_READ_PARTIAL, &a.partial);
	if (fresh)
		*stored += stats().stores;
	int rc; /* strict after partial: a partial parse must not have been stored for it */
	char *s = read_tu_lf_describe(b, n, 0, &rc);
	if (rc != a.strict || (s && strcmp(s, a.s)))
		fail_msg("a strict read after a partial one: %d, want %d", rc, a.strict);
	free(s);
	return a;
}

static void same_answer(const char *name, const answer *want, const answer *got)
{
	if (want->strict != got->strict || want->partial != got->partial ||
	    (want->s && strcmp(want->s, got->s)) || (want->p && strcmp(want->p, got->p)))
		fail_msg("%s: another answer with the cache (%d/%d, want %d/%d)", name, got->strict,
			 got->partial, want->strict, want->partial);
}

/* Every corpus file (fuzz/corpora/lancefile) read strictly, partially and strictly again,
 * with the cache cleared before each read and then after the others filled it: the same
 * answers. */
static void test_corpus_same_answers(void **st)
{
	(void)st;
	const char *dir = LV_SOURCE_DIR "/fuzz/corpora/lancefile";
	char **names = tu_list_dir(dir);
	size_t nf = tu_list_len(names);
	assert_true(nf > 100);
	struct file { uint8_t *b; size_t n; answer a; } *fs = calloc(nf, sizeof *fs);
	assert_non_null(fs);
	uint64_t stored = 0;
	for (size_t i = 0; i < nf; i++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		fs[i].b = tu_read_file(path, &fs[i].n);
		fs[i].a = answer_of(fs[i].b, fs[i].n, true, &stored);
	}
	lv__lf_schcache_clear();
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < nf; i++) {
			answer a = answer_of(fs[i].b, fs[i].n, false, NULL);
			same_answer(names[i], &fs[i].a, &a);
			free(a.s);
			free(a.p);
		}
	assert_true(stats().hits > 0 && stored > 10);
	for (size_t i = 0; i < nf; i++) {
		free(fs[i].a.s);
		free(fs[i].a.p);
		free(fs[i].b);
	}
	free(fs);
	tu_free_list(names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_same_answers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
