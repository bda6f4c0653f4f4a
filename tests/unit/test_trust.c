/*
 * Unit tests for issue 13 (trust): history is never lost, and an answer that
 * may be incomplete says so.  Each test is the regression test of a repro from
 * the issue; each was checked to fail on the code before its fix.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include <lancever/lancever.h>
#include <lancever/sys/testing.h>

#include "support/synth.h"
#include "support/testutil.h"

#define CHECK(expr) TU_CHECK(err, expr)

static lv_error err;

/* Commits versions first..last (timestamps 1000*v past a fixed base). */
static void commit_range(lv_storage *st, uint64_t first, uint64_t last)
{
	CHECK(synth_range(st, first, last, 1700000000000LL));
}

/* The repro: 1..10, cleanup to 5; 11..15, cleanup to 3.  Two checkpoints (10, 15). */
static lv_storage *two_cleanups(void)
{
	lv_storage *st = synth_mem_series(10, 1700000000000LL);
	lv_dataset *ds = tu_open(st);
	tu_cleanup_retain(ds, 5, 1800000000000LL, NULL);
	commit_range(st, 11, 15);
	tu_cleanup_retain(ds, 3, 1800000000000LL, NULL);
	lv_dataset_free(ds);
	return st;
}

static void truncate_obj(lv_storage *st, const char *path, size_t n)
{
	lv_buf b = { 0 };
	CHECK(lv_storage_read(st, path, &b, &err));
	assert_true(b.size > n);
	CHECK(lv_storage_write(st, path, b.ptr, n, &err));
	lv_buf_dispose(&b);
}

static const lv_warning *find_warning(const lv_dataset *ds, int kind)
{
	for (size_t i = 0; i < lv_dataset_warning_count(ds); i++)
		if (lv_dataset_warning(ds, i)->kind == kind)
			return lv_dataset_warning(ds, i);
	return NULL;
}

#define CP15 "_checkpoints/00000000000000000015.lance"

/* A damaged newest checkpoint: history says which file was rejected and which versions
 * it cannot account for (before: versions 11-12 silently missing, exit 0). */
static void test_history_warns_on_damaged_checkpoint(void **state)
{
	(void)state;
	lv_storage *st = two_cleanups();
	truncate_obj(st, CP15, 1000);
	lv_dataset *ds = tu_open(st);
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	lv_version_list *h = tu_history(ds, &rep);
	assert_int_equal(rep.rung, LV_RUNG_OLDER_CHECKPOINT);
	const lv_warning *w = find_warning(ds, LV_WARN_CHECKPOINT_REJECTED);
	assert_non_null(w);
	assert_string_equal(w->path, CP15);
	assert_non_null(strstr(w->message, CP15));
	w = find_warning(ds, LV_WARN_HISTORY_GAP);
	assert_non_null(w);
	assert_int_equal(w->first, 11);
	assert_int_equal(w->last, 12);
	assert_int_equal(lv_version_list_gap_count(h), 1);
	uint64_t a, b;
	assert_true(lv_version_list_gap(h, 0, &a, &b));
	assert_int_equal(a, 11);
	assert_int_equal(b, 12);
	assert_int_equal(rep.unrecorded_versions, 2);
	assert_true(rep.warnings >= 2);
	lv_version_list_free(h);

	/* As of a time inside the gap: the answer (10) may be wrong, and says so. */
	lv_dataset_clear_warnings(ds);
	assert_int_equal(lv_dataset_warning_count(ds), 0);
	lv_version_list *one = NULL;
	CHECK(lv_version_as_of(&one, ds, 1700000000000LL + 11500, false, &rep, &err));
	assert_int_equal(lv_version_list_get(one, 0)->version, 10);
	w = find_warning(ds, LV_WARN_ANSWER_UNCERTAIN);
	assert_non_null(w);
	assert_int_equal(w->first, 11);
	assert_int_equal(w->last, 12);
	lv_version_list_free(one);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* One malformed tag file must not untag every version (before: all is_tagged = false). */
static void test_malformed_tag_keeps_other_tags(void **state)
{
	(void)state;
	lv_storage *st = synth_mem_series(8, 1700000000000LL);
	CHECK(synth_tag(st, "good", 3));
	const char *bad = "{\"version\": 6,";
	CHECK(lv_storage_write(st, "_refs/tags/bad.json", bad, strlen(bad), &err));
	lv_dataset *ds = tu_open(st);
	for (int pass = 0; pass < 2; pass++) { /* from manifests, then from a checkpoint */
		lv_history_report rep = LV_HISTORY_REPORT_INIT;
		lv_version_list *l = tu_versions(ds, &rep);
		assert_int_equal(lv_version_list_count(l), 8);
		for (size_t i = 0; i < 8; i++)
			assert_int_equal(lv_version_list_get(l, i)->is_tagged, i == 2);
		const lv_warning *w = find_warning(ds, LV_WARN_TAG_UNREADABLE);
		assert_non_null(w);
		assert_string_equal(w->path, "_refs/tags/bad.json");
		lv_version_list_free(l);
		lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
		CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	}
	/* The reader API also lists the good tag and names the bad file. */
	lv_refs *refs = NULL;
	CHECK(lv_refs_load(&refs, ds, &err));
	assert_int_equal(lv_refs_tag_count(refs), 1);
	assert_int_equal(lv_refs_unreadable_count(refs), 1);
	assert_string_equal(lv_refs_unreadable(refs, 0)->path, "_refs/tags/bad.json");
	lv_refs_free(refs);
	/* Cleanup still refuses: it must know every tag. */
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.retain_versions = 2;
	p.now_ms = 1800000000000LL;
	lv_error e = { 0 };
	assert_true(lv_cleanup(ds, &p, NULL, &e) < 0);
	assert_non_null(strstr(e.message, "bad.json"));
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static void mkdirs(const char *p)
{
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", p);
	for (char *s = buf + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(buf, 0755);
			*s = '/';
		}
	mkdir(buf, 0755);
}

/* X/tree/t is a branch of X only if X's _refs/branches registers t (before: any X with a
 * _versions/ directory, even empty, made t its branch: t's own tags were ignored). */
static void test_tree_path_is_branch_only_when_registered(void **state)
{
	(void)state;
	char root[512], inner[600], path[700];
	snprintf(root, sizeof root, "%s/X", tu_tmpdir());
	snprintf(inner, sizeof inner, "%s/tree/t", root);
	snprintf(path, sizeof path, "%s/_versions", root);
	mkdirs(path);
	mkdirs(inner);
	lv_storage *st = NULL;
	CHECK(lv_storage_open(&st, inner, NULL, &err));
	commit_range(st, 1, 4);
	CHECK(synth_tag(st, "own", 2));
	lv_storage_free(st);

	lv_dataset *ds = NULL;
	CHECK(lv_dataset_open(&ds, inner, NULL, &err));
	lv_version_list *l = tu_versions(ds, NULL);
	assert_int_equal(lv_version_list_count(l), 4);
	assert_true(lv_version_list_get(l, 1)->is_tagged);
	assert_null(lv_version_list_get(l, 1)->branch);
	lv_version_list_free(l);
	lv_dataset_free(ds);
	tu_rmrf(root);
}

/* Versions that some readable file (checkpoint, kept-aside file or manifest) records. */
static size_t recorded_versions(lv_storage *st)
{
	lv_dataset *ds = tu_open(st);
	lv_version_list *h = tu_history(ds, NULL);
	size_t n = lv_version_list_count(h);
	lv_version_list_free(h);
	lv_dataset_free(ds);
	return n;
}

static bool same_bytes(lv_storage *st, const char *path, const lv_buf *want)
{
	lv_buf b = { 0 };
	if (lv_storage_read(st, path, &b, &err) != 0)
		return false;
	bool same = b.size == want->size && !memcmp(b.ptr, want->ptr, b.size);
	lv_buf_dispose(&b);
	return same;
}

typedef struct names { char v[16][128]; size_t n; } names;

static int name_cb(const lv_list_entry *e, void *p)
{
	names *n = p;
	if (n->n < 16)
		snprintf(n->v[n->n++], sizeof n->v[0], "%s", e->path);
	return 0;
}

static const char *find_aside(lv_storage *st, names *n)
{
	n->n = 0;
	CHECK(lv_storage_list(st, "_checkpoints", false, name_cb, n, &err));
	for (size_t i = 0; i < n->n; i++)
		if (strstr(n->v[i], ".damaged-"))
			return n->v[i];
	return NULL;
}

/* The repro: the damaged only record of versions 6-12 is moved aside byte for byte,
 * never replaced; the new file keeps every row still readable (1-10 from the older
 * checkpoint, 13-15 from manifests) and the gap 11-12 is a warning.  Before: the damaged
 * file was overwritten, and with it the only record of 11-12. */
static void test_writer_keeps_damaged_checkpoint(void **state)
{
	(void)state;
	lv_storage *st = two_cleanups();
	truncate_obj(st, CP15, 1000);
	lv_buf damaged = { 0 };
	CHECK(lv_storage_read(st, CP15, &damaged, &err));
	size_t before = recorded_versions(st);
	assert_int_equal(before, 13); /* 1-10 and 13-15 */

	lv_dataset *ds = tu_open(st);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	assert_true(r.written);
	assert_int_equal(r.files_quarantined, 1);
	assert_int_equal(r.unrecorded_versions, 2);
	assert_int_equal(r.entries, 13);
	assert_non_null(find_warning(ds, LV_WARN_CHECKPOINT_DAMAGED));
	const lv_warning *g = find_warning(ds, LV_WARN_HISTORY_GAP);
	assert_non_null(g);
	assert_int_equal(g->first, 11);
	assert_int_equal(g->last, 12);
	names n;
	const char *aside = find_aside(st, &n);
	assert_non_null(aside);
	assert_true(same_bytes(st, aside, &damaged));
	assert_true(recorded_versions(st) >= before);

	/* Later writes and cleanups never remove the kept file, whatever max_checkpoint_files. */
	commit_range(st, 16, 20);
	lv_checkpoint_config cfg = LV_CHECKPOINT_CONFIG_INIT;
	cfg.max_checkpoint_files = 1;
	CHECK(lv_checkpoint_write(ds, &cfg, NULL, 0, &r, &err));
	assert_true(r.files_pruned >= 1);
	tu_cleanup_retain(ds, 2, 1800000000000LL, NULL);
	assert_true(same_bytes(st, aside, &damaged));
	assert_int_equal(recorded_versions(st), 18); /* 1-10, 13-20 */
	lv_buf_dispose(&damaged);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* A checkpoint that cannot be read at all (I/O): its name is never written over, and nothing
 * is pruned while it exists.  Before: the writer replaced it and pruned the older file. */
static void test_writer_never_replaces_unreadable(void **state)
{
	(void)state;
	lv_storage *mem = two_cleanups();
	lv_buf orig = { 0 };
	CHECK(lv_storage_read(mem, CP15, &orig, &err));
	lv_storage *st = NULL;
	lv_fault_spec f = { LV_FAULT_READ, 1, true, LV_FAULT_FAIL, "00000000000000000015.lance" };
	CHECK(lv_storage_fault_wrap(&st, mem, &f, &err));
	lv_dataset *ds = tu_open(st);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	lv_error e = { 0 };
	/* Same latest version: the file would be written over.  Refused, naming it. */
	assert_int_equal(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &e), LV_EIO);
	assert_non_null(strstr(e.message, CP15));
	/* Newer versions: a new file is written, and neither 15 nor 10 is pruned. */
	commit_range(st, 16, 17);
	lv_checkpoint_config cfg = LV_CHECKPOINT_CONFIG_INIT;
	cfg.max_checkpoint_files = 1;
	CHECK(lv_checkpoint_write(ds, &cfg, NULL, 0, &r, &err));
	assert_true(r.written);
	assert_int_equal(r.files_pruned, 0);
	lv_fault_spec none = { 0, 0, false, LV_FAULT_FAIL, NULL };
	CHECK(lv_storage_fault_set(st, &none, &err));
	assert_true(same_bytes(st, CP15, &orig));
	uint64_t size;
	CHECK(lv_storage_head(st, "_checkpoints/00000000000000000010.lance", &size, NULL, &err));
	lv_buf_dispose(&orig);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* Rows of every usable checkpoint are merged when a newer one is rejected (here an older
 * file holds rows the newest usable one trimmed). */
static void test_writer_merges_older_usable(void **state)
{
	(void)state;
	lv_storage *st = synth_mem_series(10, 1700000000000LL);
	lv_dataset *ds = tu_open(st);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	lv_checkpoint_config keep = LV_CHECKPOINT_CONFIG_INIT;
	keep.max_checkpoint_files = 10;
	keep.archive = 0; /* the proposal's trimming (with the archive, segments keep 1-12) */
	CHECK(lv_checkpoint_write(ds, &keep, NULL, 0, &r, &err)); /* 10: rows 1-10 */
	commit_range(st, 11, 12);
	lv_checkpoint_config small = keep;
	small.max_entries = 6;
	CHECK(lv_checkpoint_write(ds, &small, NULL, 0, &r, &err)); /* 12: rows 7-12 */
	assert_int_equal(r.entries, 6);
	commit_range(st, 13, 15);
	CHECK(lv_checkpoint_write(ds, &keep, NULL, 0, &r, &err)); /* 15: rows 7-15 */
	for (uint64_t v = 1; v <= 12; v++) { /* Lance's own cleanup: manifests gone, no record */
		char path[96];
		CHECK(lv_storage_delete(st, synth_manifest_path(path, sizeof path, v), &err));
	}
	truncate_obj(st, CP15, 500);
	CHECK(lv_checkpoint_write(ds, &keep, NULL, 0, &r, &err));
	assert_int_equal(r.entries, 15); /* 1-6 from 10, 7-12 from 12, 13-15 from manifests */
	assert_int_equal(r.unrecorded_versions, 0);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* A manifest whose name and content disagree (v1's bytes under v15's name) is corrupt, named
 * in the error, and cleanup stops.  Before: version 1 was listed twice and a dry run planned
 * to delete the file. */
static void test_manifest_name_must_match_content(void **state)
{
	(void)state;
	lv_storage *st = synth_mem_series(14, 1700000000000LL);
	char p1[96], p15[96];
	lv_buf b = { 0 };
	CHECK(lv_storage_read(st, synth_manifest_path(p1, sizeof p1, 1), &b, &err));
	CHECK(lv_storage_write(st, synth_manifest_path(p15, sizeof p15, 15), b.ptr, b.size, &err));
	lv_buf_dispose(&b);
	lv_dataset *ds = tu_open(st);
	lv_version_list *l = NULL;
	lv_error e = { 0 };
	assert_int_equal(lv_versions(&l, ds, NULL, &e), LV_ECORRUPT);
	assert_non_null(strstr(e.message, p15));
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.retain_versions = 2;
	p.dry_run = true;
	p.now_ms = 1800000000000LL;
	memset(&e, 0, sizeof e);
	assert_int_equal(lv_cleanup(ds, &p, NULL, &e), LV_ECORRUPT);
	assert_non_null(strstr(e.message, p15));
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* A checkpoint whose checksum no longer holds is moved aside; `check --salvage` gives back
 * the rows nothing else records (11-12), and deletes nothing. */
static void test_check_salvages_rows(void **state)
{
	(void)state;
	lv_storage *st = two_cleanups();
	lv_buf b = { 0 };
	CHECK(lv_storage_read(st, CP15, &b, &err));
	uint8_t *k = memmem(b.ptr, b.size, "crc32c:", 7);
	assert_non_null(k);
	k[7] = k[7] == '0' ? '1' : '0';
	CHECK(lv_storage_write(st, CP15, b.ptr, b.size, &err));
	lv_dataset *ds = tu_open(st);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	assert_int_equal(r.files_quarantined, 1);
	assert_int_equal(r.unrecorded_versions, 2);

	lv_check *c = NULL;
	CHECK(lv_check_run(&c, ds, NULL, &err));
	assert_true(lv_check_problems(c) >= 2); /* the kept-aside file and the gap */
	bool aside = false, gap = false;
	for (size_t i = 0; i < lv_check_count(c); i++) {
		const lv_check_item *it = lv_check_get(c, i);
		if (it->kind == LV_CHECK_KEPT_ASIDE) {
			aside = true;
			assert_int_equal(it->status, LV_ECORRUPT);
			assert_int_equal(it->rows, 15);
			assert_int_equal(it->salvageable, 2);
		}
		if (it->kind == LV_CHECK_GAP) {
			gap = true;
			assert_int_equal(it->first, 11);
			assert_int_equal(it->last, 12);
		}
	}
	assert_true(aside && gap);
	lv_check_free(c);

	lv_check_options o = LV_CHECK_OPTIONS_INIT;
	o.salvage = true;
	CHECK(lv_check_run(&c, ds, &o, &err));
	assert_int_equal(lv_check_salvaged(c), 2);
	lv_check_free(c);
	lv_version_list *h = tu_history(ds, NULL);
	assert_int_equal(lv_version_list_count(h), 15);
	assert_int_equal(lv_version_list_gap_count(h), 0);
	assert_int_equal(lv_version_list_get(h, 10)->version, 11);
	assert_true(lv_version_list_get(h, 10)->is_cleaned_up);
	lv_version_list_free(h);
	names n;
	const char *kept = find_aside(st, &n);
	assert_non_null(kept);
	assert_true(same_bytes(st, kept, &b));
	lv_buf_dispose(&b);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/*
 * An as-of answer read from a live manifest (no checkpoint) carries no pointer into the
 * read plan, which is freed before the answer is returned: its manifest details (config map,
 * writer, branch) used to dangle (ASan: heap-use-after-free in the Arrow export of the
 * answer, found through the Python package).
 */
static void test_asof_answer_owns_its_strings(void **state)
{
	(void)state;
	lv_storage *st = NULL;
	CHECK(lv_storage_mem_new(&st, &err));
	static const char *const cfg[] = { "lance.auto_cleanup.interval", "20", NULL };
	for (uint64_t v = 1; v <= 3; v++) {
		synth_commit c = { .version = v, .ts_ms = 1700000000000LL + 1000 * (int64_t)v,
				   .read_version = v - 1, .config = cfg };
		CHECK(synth_write(st, &c));
	}
	lv_dataset *ds = tu_open(st);
	lv_version_list *l = NULL;
	CHECK(lv_version_as_of(&l, ds, 1700000000000LL + 2500, false, NULL, &err));
	const lv_version_info *vi = lv_version_list_get(l, 0);
	assert_int_equal(vi->version, 2);
	assert_false(vi->has_manifest_details);
	assert_int_equal(vi->num_config, 0);
	assert_null(vi->config_keys);
	assert_null(vi->writer_version);
	assert_non_null(vi->manifest_path);
	assert_non_null(strstr(vi->manifest_path, "_versions/"));
	struct ArrowArrayStream s;
	CHECK(lv_version_list_arrow_stream(&s, l, NULL, NULL, &err));
	s.release(&s);
	lv_version_list_free(l);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_history_warns_on_damaged_checkpoint),
		cmocka_unit_test(test_malformed_tag_keeps_other_tags),
		cmocka_unit_test(test_tree_path_is_branch_only_when_registered),
		cmocka_unit_test(test_writer_keeps_damaged_checkpoint),
		cmocka_unit_test(test_writer_never_replaces_unreadable),
		cmocka_unit_test(test_writer_merges_older_usable),
		cmocka_unit_test(test_manifest_name_must_match_content),
		cmocka_unit_test(test_check_salvages_rows),
		cmocka_unit_test(test_asof_answer_owns_its_strings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
