/*
 * Damaged-state sweep (issue 13's reliability campaign).
 *
 * A dataset with cleaned-up history (1..10, cleanup to 5 -> checkpoint 10;
 * 11..15, cleanup to 3 -> checkpoint 15; archive segments of 4 versions, so
 * 1-4, 5-8 and 9-12 are sealed; tags on 13 and 14; a branch forked at 13 with
 * two versions of its own).  Each of its files that history depends on --
 * every checkpoint, archive segment, live manifest, tag and branch file -- is
 * damaged in turn (emptied, cut in half, one byte flipped at several places),
 * and every command's library call runs on the damaged copy:
 *   versions, history, show (each version), asof (each commit time), tags,
 *   check, checkpoint, cleanup.
 * Each answer must be one of: correct; incomplete with a warning on the
 * dataset that names the damaged file or a gap covering what is missing; or
 * an error naming the damaged file.  Anything else is a silent wrong answer
 * and fails the test.  The writers (checkpoint, cleanup) must never reduce the
 * versions that some record still holds, and the damaged bytes must survive
 * (under their name or kept aside).  Counts are printed for RELIABILITY.md.
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

#include "core/checkpoint/checkpoint_internal.h"
#include "format/refs.h"
#include "support/memcopy.h"
#include "support/synth.h"
#include "support/testutil.h"

#define CHECK(expr) TU_CHECK(err, expr)
#define BASE_MS 1700000000000LL
#define NV 15

static lv_error err;

typedef struct stats {
	unsigned cases, rejected, answers, correct, warned, failed_naming, silent, writes, kept;
} stats;
static stats S;
static bool must_warn; /* the damaged file is one a reader rejects */
static uint64_t seg_first, seg_last; /* when it is an archive segment: its range (else 0, 0) */

static void commit(lv_storage *st, uint64_t v)
{
	synth_commit c = { .version = v, .ts_ms = BASE_MS + 1000 * (int64_t)v, .read_version = v - 1 };
	CHECK(synth_write(st, &c));
}

static void cleanup_retain(lv_storage *st, int64_t n)
{
	lv_dataset *ds = tu_open(st);
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.retain_versions = n;
	p.error_if_tagged_old_versions = false;
	p.now_ms = BASE_MS + 10000000;
	lv_checkpoint_config seg4 = LV_CHECKPOINT_CONFIG_INIT;
	seg4.archive_segment_rows = 4;
	p.checkpoint = &seg4;
	CHECK(lv_cleanup(ds, &p, NULL, &err));
	lv_dataset_free(ds);
}

static lv_storage *build(void)
{
	lv_storage *st = tu_mem();
	for (uint64_t v = 1; v <= 10; v++)
		commit(st, v);
	cleanup_retain(st, 5);
	for (uint64_t v = 11; v <= NV; v++)
		commit(st, v);
	cleanup_retain(st, 3);
	CHECK(synth_tag(st, "t13", 13));
	CHECK(synth_tag(st, "t14", 14));
	const char *br = "{\"parentBranch\": null, \"parentVersion\": 13, \"createAt\": 1700000100, "
			 "\"manifestSize\": 300, \"metadata\": {}}";
	CHECK(lv_storage_write(st, "_refs/branches/b.json", br, strlen(br), &err));
	lv_storage *sub = NULL;
	CHECK(lv_storage_sub(&sub, st, "tree/b", &err));
	for (uint64_t v = 14; v <= 15; v++) {
		synth_commit c = { .version = v, .ts_ms = BASE_MS + 500000 + (int64_t)v, .read_version = v - 1,
				   .uuid = v == 14 ? "b-14" : "b-15" };
		CHECK(synth_write(sub, &c));
	}
	lv_storage_free(sub);
	return st;
}

/* ---- the store's files ---- */

/* The files history depends on: checkpoints, manifests, tags, branch files, branch manifests. */
static char **targets(lv_storage *st)
{
	char **out = tu_list_paths(st, "", true);
	size_t w = 0;
	for (size_t i = 0; out[i]; i++) {
		char *p = out[i];
		bool want = (!strncmp(p, "_checkpoints/", 13) && strstr(p, ".lance") &&
			     !strstr(p, ".lock")) ||
			    (strstr(p, "_versions/") && strstr(p, ".manifest")) ||
			    !strncmp(p, "_refs/", 6);
		if (want)
			out[w++] = p;
		else
			free(p);
	}
	out[w] = NULL;
	return out;
}

/* ---- the truth ---- */

typedef struct truth {
	lv_version_info row[NV + 1];
	bool have[NV + 1];
	bool live[NV + 1];
	lv_version_list *hist;
} truth;

static void learn(lv_storage *st, truth *t)
{
	memset(t, 0, sizeof *t);
	lv_dataset *ds = tu_open(st);
	CHECK(lv_history(&t->hist, ds, NULL, &err));
	assert_int_equal(lv_version_list_count(t->hist), NV);
	for (size_t i = 0; i < lv_version_list_count(t->hist); i++) {
		const lv_version_info *v = lv_version_list_get(t->hist, i);
		t->row[v->version] = *v;
		t->have[v->version] = true;
		t->live[v->version] = !v->is_cleaned_up;
	}
	assert_int_equal(lv_dataset_warning_count(ds), 0);
	lv_dataset_free(ds);
}

static bool same_row(const lv_version_info *a, const lv_version_info *b)
{
	return a->version == b->version && a->timestamp_millis == b->timestamp_millis &&
	       a->total_rows == b->total_rows && a->total_fragments == b->total_fragments &&
	       a->is_tagged == b->is_tagged && a->is_cleaned_up == b->is_cleaned_up &&
	       a->read_version == b->read_version &&
	       !strcmp(a->transaction_properties, b->transaction_properties) &&
	       ((!a->transaction_uuid && !b->transaction_uuid) ||
		(a->transaction_uuid && b->transaction_uuid &&
		 !strcmp(a->transaction_uuid, b->transaction_uuid)));
}

/* Does a warning name `path` (or, if v != 0, a gap or uncertainty range hold v)? */
static bool warned(const lv_dataset *ds, const char *path, uint64_t v)
{
	for (size_t i = 0; i < lv_dataset_warning_count(ds); i++) {
		const lv_warning *w = lv_dataset_warning(ds, i);
		if (w->path && strstr(w->path, path) == w->path)
			return true;
		if (strstr(w->message, path))
			return true;
		if (v && w->first <= v && v <= w->last &&
		    (w->kind == LV_WARN_HISTORY_GAP || w->kind == LV_WARN_ANSWER_UNCERTAIN))
			return true;
	}
	return false;
}

/* Records one answer: correct, warned, failed naming the file, or silent (a failure). */
static void judge(const char *what, const char *damaged, const char *mode, int rc,
		  const lv_error *e, bool correct, bool warning)
{
	S.answers++;
	if (rc < 0) {
		if (strstr(e->message, damaged)) {
			S.failed_naming++;
			return;
		}
		fail_msg("%s on %s (%s): failed without naming it: %s", what, damaged, mode, e->message);
	}
	if (correct && !(must_warn && !warning)) {
		S.correct++;
		return;
	}
	if (warning) {
		S.warned++;
		return;
	}
	S.silent++;
	fail_msg("%s on %s (%s): a wrong answer with no warning", what, damaged, mode);
}

/* A row that may differ from the truth only because its own live manifest was damaged. */
static bool row_ok(const truth *t, const lv_version_info *v, const char *damaged)
{
	if (v->version > NV || !t->have[v->version])
		return false;
	if (v->manifest_path && !strcmp(v->manifest_path, damaged))
		return true; /* parsed from the damaged bytes: what Lance reads too */
	return same_row(v, &t->row[v->version]) ||
	       (t->live[v->version] && strstr(damaged, "_versions/") && v->is_tagged == t->row[v->version].is_tagged);
}

static void run_list(lv_storage *st, const truth *t, const char *damaged, const char *mode,
		     bool history)
{
	lv_dataset *ds = tu_open(st);
	lv_version_list *l = NULL;
	lv_error e = { 0 };
	int rc = history ? lv_history(&l, ds, NULL, &e) : lv_versions(&l, ds, NULL, &e);
	bool saved = must_warn; /* versions() reads no segment */
	must_warn = must_warn && !(seg_last && !history);
	bool correct = rc == 0, warning = !must_warn || warned(ds, damaged, 0);
	size_t want = 0;
	for (uint64_t v = 1; v <= NV; v++)
		want += history ? t->have[v] : t->live[v];
	if (rc == 0) {
		correct = lv_version_list_count(l) == want;
		for (size_t i = 0; i < lv_version_list_count(l); i++)
			correct = correct && row_ok(t, lv_version_list_get(l, i), damaged);
		/* every missing version, and every differing one, must be covered by a warning */
		for (uint64_t v = 1; v <= NV && !correct; v++) {
			if (!(history ? t->have[v] : t->live[v]))
				continue;
			const lv_version_info *got = NULL;
			for (size_t i = 0; i < lv_version_list_count(l); i++)
				if (lv_version_list_get(l, i)->version == v)
					got = lv_version_list_get(l, i);
			if (!got || !row_ok(t, got, damaged))
				warning = warning && warned(ds, damaged, v);
		}
	}
	judge(history ? "history" : "versions", damaged, mode, rc, &e, correct, warning);
	must_warn = saved;
	lv_version_list_free(l);
	lv_dataset_free(ds);
}

static void run_show_asof(lv_storage *st, const truth *t, const char *damaged, const char *mode)
{
	lv_dataset *ds = tu_open(st);
	for (uint64_t v = 1; v <= NV; v++) {
		/* asof at each commit time: the answer is v */
		lv_version_list *one = NULL;
		lv_error e = { 0 };
		lv_dataset_clear_warnings(ds);
		int rc = lv_version_as_of(&one, ds, t->row[v].timestamp_millis, false, NULL, &e);
		bool correct = rc == 0 && lv_version_list_get(one, 0)->version == v;
		if (rc == LV_ENOTFOUND) /* no version at all: only acceptable with a warning */
			rc = 0;
		bool saved_asof = must_warn; /* as-of reads only the segment that holds the answer */
		must_warn = must_warn && (!seg_last || (v >= seg_first && v <= seg_last));
		judge("asof", damaged, mode, rc, &e, correct,
		      must_warn ? warned(ds, damaged, 0) : warned(ds, damaged, v));
		must_warn = saved_asof;
		lv_version_list_free(one);
		/* show: live versions from their manifest, others from history */
		lv_error e2 = { 0 };
		lv_version_list *l = NULL;
		lv_dataset_clear_warnings(ds);
		rc = t->live[v] ? lv_version_get(&l, ds, v, &e2) : lv_history(&l, ds, NULL, &e2);
		const lv_version_info *got = NULL;
		for (size_t i = 0; rc == 0 && i < lv_version_list_count(l); i++)
			if (lv_version_list_get(l, i)->version == v)
				got = lv_version_list_get(l, i);
		correct = got && (t->live[v] ? got->total_rows == t->row[v].total_rows ||
						       !strcmp(got->manifest_path, damaged)
					     : row_ok(t, got, damaged));
		if (t->live[v] && rc == 0 && got && strcmp(got->manifest_path, damaged))
			correct = correct && !strcmp(got->transaction_uuid, t->row[v].transaction_uuid);
		/* a live version is shown from its manifest alone: no checkpoint is consulted */
		bool saved = must_warn;
		must_warn = must_warn && (!t->live[v] || strncmp(damaged, "_checkpoints/", 13));
		judge("show", damaged, mode, rc, &e2, correct,
		      must_warn ? warned(ds, damaged, 0) : warned(ds, damaged, v));
		must_warn = saved;
		lv_version_list_free(l);
	}
	lv_dataset_free(ds);
}

static void run_tags(lv_storage *st, const char *damaged, const char *mode)
{
	lv_dataset *ds = tu_open(st);
	lv_refs *r = NULL;
	lv_error e = { 0 };
	int rc = lv_refs_load(&r, ds, &e);
	bool correct = rc == 0 && lv_refs_tag_count(r) == 2 && lv_refs_branch_count(r) == 1;
	bool saved = must_warn; /* tags reads no checkpoint */
	must_warn = must_warn && !strncmp(damaged, "_refs/", 6);
	judge("tags", damaged, mode, rc, &e, correct, warned(ds, damaged, 0));
	must_warn = saved;
	lv_refs_free(r);
	lv_dataset_free(ds);
}

static void run_check(lv_storage *st, const char *damaged, const char *mode, bool changed)
{
	lv_dataset *ds = tu_open(st);
	lv_check *c = NULL;
	lv_error e = { 0 };
	int rc = lv_check_run(&c, ds, NULL, &e);
	bool named = false;
	for (size_t i = 0; rc == 0 && i < lv_check_count(c); i++) {
		const lv_check_item *it = lv_check_get(c, i);
		named |= it->path && strstr(it->path, damaged) == it->path && it->status;
	}
	/* A damaged history file that check does not name must be one nothing could tell apart
	 * (a flip the format tolerates); check is correct when it names it or nothing changed. */
	bool correct = rc == 0 && (named || !changed || lv_check_problems(c) == 0);
	judge("check", damaged, mode, rc, &e, correct, named);
	lv_check_free(c);
	lv_dataset_free(ds);
}

/* Versions some record holds: history's rows plus rows damaged files kept aside still hold. */
static size_t recoverable(lv_storage *st)
{
	lv_dataset *ds = tu_open(st);
	lv_version_list *h = NULL;
	lv_error e = { 0 };
	size_t n = 0;
	if (lv_history(&h, ds, NULL, &e) == 0)
		n = lv_version_list_count(h);
	lv_check *c = NULL;
	if (lv_check_run(&c, ds, NULL, &e) == 0)
		for (size_t i = 0; i < lv_check_count(c); i++)
			n += lv_check_get(c, i)->salvageable;
	lv_check_free(c);
	lv_version_list_free(h);
	lv_dataset_free(ds);
	return n;
}

/* Are the bytes `want` still somewhere in the store (under their name or kept aside)? */
static bool bytes_survive(lv_storage *st, const char *path, const lv_buf *want)
{
	char **all = tu_list_paths(st, "", true);
	bool found = false;
	for (size_t i = 0; all[i] && !found; i++) {
		if (strstr(all[i], path) != all[i])
			continue;
		lv_buf b = { 0 };
		CHECK(lv_storage_read(st, all[i], &b, &err));
		found = b.size == want->size && !memcmp(b.ptr, want->ptr, b.size);
		lv_buf_dispose(&b);
	}
	tu_free_list(all);
	return found;
}

static void run_writer(lv_storage *st, const char *damaged, const lv_buf *bytes, const char *mode,
		       bool cleanup)
{
	size_t before = recoverable(st);
	lv_dataset *ds = tu_open(st);
	lv_error e = { 0 };
	int rc;
	if (cleanup) {
		lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
		p.retain_versions = 1;
		p.error_if_tagged_old_versions = false;
		p.now_ms = BASE_MS + 10000000;
		rc = lv_cleanup(ds, &p, NULL, &e);
	} else {
		rc = lv_checkpoint_write(ds, NULL, NULL, 0, NULL, &e);
	}
	lv_dataset_free(ds);
	S.writes++;
	if (rc < 0 && !strstr(e.message, damaged))
		fail_msg("%s on %s (%s): failed without naming it: %s", cleanup ? "cleanup" : "checkpoint",
			 damaged, mode, e.message);
	size_t after = recoverable(st);
	if (after < before)
		fail_msg("%s on %s (%s): recoverable versions %zu -> %zu", cleanup ? "cleanup" : "checkpoint",
			 damaged, mode, before, after);
	if (!bytes_survive(st, damaged, bytes))
		fail_msg("%s on %s (%s): the damaged bytes are gone", cleanup ? "cleanup" : "checkpoint",
			 damaged, mode);
	S.kept++;
}

/*
 * Would a reader reject these bytes?  Decided independently of the code under
 * test's warnings: the checkpoint codec / ref parsers on the damaged bytes.
 * When it would, every read that needs it must say so (a warning or an error
 * naming it), even if the answer happens to be right.  Readers need the newest
 * checkpoint and every ref file; an older checkpoint is read only when newer
 * ones fail (check and the writers' pruning read it, and are judged apart).
 */
static bool rejected(const char *path, const lv_buf *b)
{
	lv_error e = { 0 };
	if (!strncmp(path, "_checkpoints/archive/", 21)) { /* a segment: every history reader needs it */
		lv_version_list *rows = NULL;
		int rc = lv__cp_decode_rows(b->ptr, b->size, path, true, &rows, NULL, &e);
		lv_version_list_free(rows);
		return rc < 0;
	}
	if (!strncmp(path, "_checkpoints/", 13)) {
		if (strcmp(path, "_checkpoints/00000000000000000015.lance"))
			return false; /* not the newest: readers do not need it */
		lv_version_list *rows = NULL;
		int rc = lv__cp_decode_rows(b->ptr, b->size, path, true, &rows, NULL, &e);
		uint64_t named = strtoull(path + 13, NULL, 10);
		bool bad = rc < 0 || lv_version_list_count(rows) == 0 ||
			   lv_version_list_get(rows, lv_version_list_count(rows) - 1)->version != named;
		lv_version_list_free(rows);
		return bad;
	}
	if (!strncmp(path, "_refs/tags/", 11)) {
		lv_tag t;
		bool bad = lv__tag_parse(b->ptr, b->size, "t", &t, &e) < 0;
		if (!bad)
			lv__tag_dispose(&t);
		return bad;
	}
	if (!strncmp(path, "_refs/branches/", 15)) {
		lv_branch br;
		bool bad = lv__branch_parse(b->ptr, b->size, "b", &br, &e) < 0;
		if (!bad)
			lv__branch_dispose(&br);
		return bad;
	}
	return false; /* manifests: a reader fails naming it, or parses it as Lance does */
}


/* ---- damage ---- */

enum { D_EMPTY, D_HALF, D_FLIP };

static const char *damage(lv_storage *st, const char *path, int mode, size_t at, char *name,
			  size_t cap, lv_buf *out)
{
	lv_buf b = { 0 };
	CHECK(lv_storage_read(st, path, &b, &err));
	size_t n = b.size;
	if (mode == D_EMPTY)
		n = 0, snprintf(name, cap, "emptied");
	else if (mode == D_HALF)
		n = b.size / 2, snprintf(name, cap, "cut to %zu bytes", n);
	else
		b.ptr[at] ^= 0xA5, snprintf(name, cap, "byte %zu flipped", at);
	CHECK(lv_storage_write(st, path, b.ptr, n, &err));
	out->ptr = b.ptr;
	out->size = n;
	return name;
}

static void sweep_one(lv_storage *base, const truth *t, const char *path, int mode, size_t at)
{
	lv_storage *st = tu_mem_clone(base);
	char name[64];
	lv_buf bytes = { 0 };
	damage(st, path, mode, at, name, sizeof name, &bytes);
	lv_buf orig = { 0 };
	CHECK(lv_storage_read(base, path, &orig, &err));
	bool changed = orig.size != bytes.size || memcmp(orig.ptr, bytes.ptr, bytes.size);
	must_warn = rejected(path, &bytes);
	seg_first = seg_last = 0;
	if (!strncmp(path, "_checkpoints/archive/", 21)) {
		seg_first = strtoull(path + 21, NULL, 10);
		seg_last = strtoull(path + 42, NULL, 10);
	}
	S.rejected += must_warn;
	lv_buf_dispose(&orig);
	S.cases++;
	run_list(st, t, path, name, false);
	run_list(st, t, path, name, true);
	run_show_asof(st, t, path, name);
	run_tags(st, path, name);
	run_check(st, path, name, changed);
	run_writer(st, path, &bytes, name, false);
	lv_storage_free(st);
	st = tu_mem_clone(base);
	lv_buf_dispose(&bytes);
	damage(st, path, mode, at, name, sizeof name, &bytes);
	run_writer(st, path, &bytes, name, true);
	lv_buf_dispose(&bytes);
	lv_storage_free(st);
}

static void test_damaged_state_sweep(void **state)
{
	(void)state;
	lv_storage *base = build();
	truth t;
	learn(base, &t);
	char **f = targets(base);
	size_t nfiles = tu_list_len(f);
	assert_true(nfiles >= 12);
	size_t nseg = 0;
	for (size_t i = 0; f[i]; i++)
		nseg += !strncmp(f[i], "_checkpoints/archive/", 21);
	assert_int_equal(nseg, 3); /* 1-4, 5-8, 9-12 */
	for (size_t i = 0; f[i]; i++) {
		lv_buf b = { 0 };
		CHECK(lv_storage_read(base, f[i], &b, &err));
		size_t size = b.size;
		lv_buf_dispose(&b);
		sweep_one(base, &t, f[i], D_EMPTY, 0);
		sweep_one(base, &t, f[i], D_HALF, 0);
		for (int k = 1; k <= 8 && size; k++) /* flips spread over the file, footer included */
			sweep_one(base, &t, f[i], D_FLIP, (size - 1) * (size_t)k / 8);
	}
	tu_free_list(f);
	printf("damage sweep: %zu files, %u damaged states (%u a reader rejects); %u answers: %u correct, %u with a warning "
	       "naming what is missing, %u errors naming the file, %u silent; %u writes, recoverable "
	       "history never reduced and damaged bytes kept in %u\n",
	       nfiles, S.cases, S.rejected, S.answers, S.correct, S.warned, S.failed_naming, S.silent, S.writes, S.kept);
	assert_int_equal(S.silent, 0);
	lv_version_list_free(t.hist);
	lv_storage_free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_damaged_state_sweep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
