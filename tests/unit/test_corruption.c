/*
 * Corruption sweep through the public API on real files:
 *   - every manifest of a LanceDB-written dataset (Lance 8.0.0, inline transactions),
 *   - a real LanceDB transaction file (a _transactions/ .txn file) read by a manifest
 *     that has no inline copy (older writers),
 *   - a checkpoint lancever wrote for that dataset, covering versions whose
 *     manifests were then removed.
 * Each file gets every byte XOR 0xFF, a seeded sample of single-bit flips (all
 * of them with LV_CORRUPTION_DENSE=1) and every truncation (every 7th byte and
 * truncation, 64 bit flips with LV_CORRUPTION_QUICK=1, for valgrind).  For each case,
 * versions(), history(), the as-of timeline and show (lv_version_get) run, and:
 *   - an error must name the corrupted file;
 *   - checkpoint: the answer must be exactly the intact checkpoint's or exactly
 *     the no-checkpoint answer (the degradation ladder), never an error;
 *   - manifest / transaction file (Lance has no checksum, so a flipped counter
 *     is undetectable): rows of other versions must be unchanged, the
 *     manifest-derived columns of a transaction-file case must be unchanged,
 *     and the four APIs must agree with each other.  What real Lance says
 *     about the same corrupted manifests is tests/interop/test_corruption.mjs.
 * The outcome classes and their counts are printed.
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

#include "support/corrupt.h"
#include "support/memcopy.h"
#include "support/synth.h"
#include "support/testutil.h"
#include "util/util.h"

static lv_error err;
#define CHECK(expr) TU_CHECK(err, expr)

#define SEED 20261203u
#define NBITS 1024 /* seeded single-bit flips per file (all of them when dense) */

static size_t nbits(void) { return cm_dense() ? SIZE_MAX : cm_quick() ? 64 : NBITS; }
/* every byte and every truncation; every 7th under LV_CORRUPTION_QUICK (valgrind) */
static size_t stride(void) { return cm_quick() && !cm_dense() ? 7 : 1; }

/* ---- the answer of every public read API, as one canonical string ---- */

static void row(lv__dbuf *b, const lv_version_info *v)
{
	lv__dbuf_printf(b, "%llu %lld %llu %llu %llu %llu %llu %llu %llu t%d c%d u=%s r=%d/%llu op=%s p=%s\n",
		       (unsigned long long)v->version, (long long)v->timestamp_millis,
		       (unsigned long long)v->total_fragments, (unsigned long long)v->total_data_files,
		       (unsigned long long)v->total_files_size, (unsigned long long)v->total_deletion_files,
		       (unsigned long long)v->total_data_file_rows,
		       (unsigned long long)v->total_deletion_file_rows, (unsigned long long)v->total_rows,
		       v->is_tagged, v->is_cleaned_up, v->transaction_uuid ? v->transaction_uuid : "-",
		       v->has_read_version, (unsigned long long)v->read_version,
		       v->operation_type ? v->operation_type : "-", v->transaction_properties);
}

typedef struct probe_set {
	int64_t ts[64];
	size_t n;
} probe_set;

typedef struct answer {
	char *versions, *history, *timeline, *show; /* "ERR" when the call failed */
	int errors;       /* calls that failed */
	int unnamed;      /* failures whose message does not name the file */
	int rung;         /* versions()'s rung (-1 on error) */
	char first_err[256];
} answer;

static void answer_free(answer *a)
{
	free(a->versions);
	free(a->history);
	free(a->timeline);
	free(a->show);
}

static char *list_str(const lv_version_list *l)
{
	lv__dbuf b;
	lv__dbuf_init(&b, 0);
	for (size_t i = 0; i < lv_version_list_count(l); i++)
		row(&b, lv_version_list_get(l, i));
	lv__dbuf_addc(&b, 0);
	char *s = lv__dbuf_take_str(&b);
	assert_non_null(s);
	return s;
}

static void failed(answer *a, const lv_error *e, const char *name)
{
	a->errors++;
	if (!strstr(e->message, name))
		a->unnamed++;
	if (!a->first_err[0])
		snprintf(a->first_err, sizeof a->first_err, "%s", e->message);
}

/* Runs versions, history, timeline probes and show for versions 0..max_v+1. */
static answer ask(lv_storage *st, const char *name, const probe_set *pr, uint64_t max_v)
{
	answer a = { 0 };
	a.rung = -1;
	lv_dataset *ds = NULL;
	/* One reader thread: the thread pool is tested elsewhere, and 8 thread starts per
	 * call would dominate tens of thousands of cases. */
	lv_open_options o = LV_OPEN_OPTIONS_INIT;
	o.threads = 1;
	CHECK(lv_dataset_open_storage(&ds, st, &o, &err));
	lv_version_list *l = NULL;
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	lv_error e = { 0 };
	if (lv_versions(&l, ds, &rep, &e) == 0) {
		a.versions = list_str(l);
		a.rung = rep.rung;
	} else {
		a.versions = strdup("ERR");
		failed(&a, &e, name);
	}
	lv_version_list_free(l);
	l = NULL;
	if (lv_history(&l, ds, &rep, &e) == 0)
		a.history = list_str(l);
	else {
		a.history = strdup("ERR");
		failed(&a, &e, name);
	}
	lv_version_list_free(l);
	lv_timeline *tl = NULL;
	if (lv_timeline_load(&tl, ds, &rep, &e) == 0) {
		lv__dbuf b;
		lv__dbuf_init(&b, 0);
		for (size_t i = 0; i < pr->n; i++)
			for (int strict = 0; strict < 2; strict++) {
				const lv_version_info *v = lv_timeline_as_of(tl, pr->ts[i], strict);
				lv__dbuf_printf(&b, "%llu ", v ? (unsigned long long)v->version : 0ull);
			}
		lv__dbuf_addc(&b, 0);
		a.timeline = lv__dbuf_take_str(&b);
		lv_timeline_free(tl);
	} else {
		a.timeline = strdup("ERR");
		failed(&a, &e, name);
	}
	lv__dbuf b;
	lv__dbuf_init(&b, 0);
	for (uint64_t v = 0; v <= max_v + 1; v++) {
		l = NULL;
		int rc = lv_version_get(&l, ds, v, &e);
		if (rc == 0)
			row(&b, lv_version_list_get(l, 0));
		else if (rc == LV_ENOTFOUND && strstr(e.message, "not found") && !strstr(e.message, name))
			lv__dbuf_printf(&b, "%llu NF\n", (unsigned long long)v);
		else {
			lv__dbuf_printf(&b, "%llu ERR\n", (unsigned long long)v);
			failed(&a, &e, name);
		}
		lv_version_list_free(l);
	}
	lv__dbuf_addc(&b, 0);
	a.show = lv__dbuf_take_str(&b);
	lv_dataset_free(ds);
	return a;
}

static bool same_answer(const answer *x, const answer *y)
{
	return !strcmp(x->versions, y->versions) && !strcmp(x->history, y->history) &&
	       !strcmp(x->timeline, y->timeline) && !strcmp(x->show, y->show);
}

/* Probes: every commit time -1/0/+1 and the extremes. */
static probe_set probes_of(lv_storage *st)
{
	probe_set p = { .n = 0 };
	lv_dataset *ds = tu_open(st);
	lv_version_list *l = tu_history(ds, NULL);
	for (size_t i = 0; i < lv_version_list_count(l) && p.n + 3 < 62; i++) {
		int64_t t = lv_version_list_get(l, i)->timestamp_millis;
		p.ts[p.n++] = t - 1;
		p.ts[p.n++] = t;
		p.ts[p.n++] = t + 1;
	}
	p.ts[p.n++] = INT64_MIN;
	p.ts[p.n++] = INT64_MAX;
	lv_version_list_free(l);
	lv_dataset_free(ds);
	return p;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* ---- checkpoint ---- */

#define CKPT "_checkpoints/00000000000000000006.lance"

static void test_checkpoint_sweep(void **state)
{
	(void)state;
	lv_storage *st = tu_mem_copy("lance8/t.lance");
	assert_string_equal(tu_checkpoint(st).path, CKPT);
	/* versions 1 and 2 cleaned up: only the checkpoint still knows them */
	char p[128];
	CHECK(lv_storage_delete(st, synth_manifest_path(p, sizeof p, 1), &err));
	CHECK(lv_storage_delete(st, synth_manifest_path(p, sizeof p, 2), &err));
	lv_buf ck = { 0 };
	CHECK(lv_storage_read(st, CKPT, &ck, &err));
	probe_set pr = probes_of(st);
	answer intact = ask(st, CKPT, &pr, 6);
	assert_int_equal(intact.errors, 0);
	assert_int_equal(intact.rung, LV_RUNG_NEWEST_CHECKPOINT);
	CHECK(lv_storage_delete(st, CKPT, &err));
	answer none = ask(st, CKPT, &pr, 6);
	assert_int_equal(none.errors, 0);
	assert_int_equal(none.rung, LV_RUNG_MANIFESTS);
	assert_false(same_answer(&intact, &none)); /* the sweep can tell the two apart */

	cm_case *cases = NULL;
	size_t n = cm_cases(ck.size, SEED, nbits(), stride(), &cases);
	assert_true(n > 0);
	uint8_t *bad = malloc(ck.size);
	size_t count[3][2] = { { 0 } }; /* [kind][0 = intact answer, 1 = fell back to manifests] */
	for (size_t i = 0; i < n; i++) {
		size_t len = cm_apply(ck.ptr, ck.size, &cases[i], bad);
		CHECK(lv_storage_write(st, CKPT, bad, len, &err));
		answer a = ask(st, CKPT, &pr, 6);
		char nm[64];
		if (a.errors)
			fail_msg("checkpoint %s: error instead of falling back: %s", cm_name(&cases[i], nm, sizeof nm),
				 a.first_err);
		if (same_answer(&a, &intact))
			count[cases[i].kind][0]++;
		else if (same_answer(&a, &none))
			count[cases[i].kind][1]++;
		else
			fail_msg("checkpoint %s: answer is neither the checkpoint's nor the manifests'\n%s",
				 cm_name(&cases[i], nm, sizeof nm), a.history);
		answer_free(&a);
	}
	static const char *kn[3] = { "xor", "bit", "trunc" };
	for (int k = 0; k < 3; k++)
		print_message("checkpoint %s (%zu bytes): %zu cases, %zu same as intact, %zu fell back to manifests\n",
			      kn[k], ck.size, count[k][0] + count[k][1], count[k][0], count[k][1]);
	/* Every truncation is detected; flips go undetected only in padding / unused bytes. */
	assert_int_equal(count[CM_TRUNC][0], 0);
	assert_true(count[CM_XOR][1] > ck.size / stride() / 2);
	free(bad);
	free(cases);
	answer_free(&intact);
	answer_free(&none);
	lv_buf_dispose(&ck);
	lv_storage_free(st);
}

/* ---- manifests ---- */

typedef struct vlist_rows {
	char **rows; /* one string per version line */
	size_t n;
} vlist_rows;

/* Splits a list string into lines; the line for `own` (by manifest version) is dropped. */
static char *without_version(const char *s, uint64_t own)
{
	lv__dbuf b;
	lv__dbuf_init(&b, 0);
	const char *p = s;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p + 1) : strlen(p);
		if (strtoull(p, NULL, 10) != own)
			lv__dbuf_add(&b, p, n);
		p += n;
	}
	lv__dbuf_addc(&b, 0);
	char *r = lv__dbuf_take_str(&b);
	assert_non_null(r);
	return r;
}

/* Every line of `others` appears in `ans`, which has at most one line more. */
static bool others_intact(const char *ans, const char *others)
{
	size_t na = 0, no = 0;
	for (const char *p = ans; *p; p++)
		na += *p == '\n';
	const char *p = others;
	while (*p) {
		const char *e = strchr(p, '\n');
		char line[4096];
		snprintf(line, sizeof line, "%.*s", (int)(e - p + 1), p);
		/* match whole lines only */
		const char *h = ans;
		bool found = false;
		while ((h = strstr(h, line)) != NULL) {
			if (h == ans || h[-1] == '\n') {
				found = true;
				break;
			}
			h++;
		}
		if (!found)
			return false;
		no++;
		p = e + 1;
	}
	return na <= no + 1;
}

enum { MC_ERROR, MC_SAME, MC_OWN_ROW, MC_COUNT };

/* What every damaged answer must be: an error naming the file, the same in versions, history
 * and timeline (all read every manifest, so all fail alike): MC_ERROR; else MC_SAME for the
 * pristine answer, or -1 for a changed one (the caller judges the change). */
static int judge(const answer *a, const answer *pristine, const char *what)
{
	if (a->unnamed)
		fail_msg("%s: error does not name the file: %s", what, a->first_err);
	if (a->errors) {
		if (strcmp(a->versions, "ERR") || strcmp(a->history, "ERR") || strcmp(a->timeline, "ERR"))
			fail_msg("%s: some calls failed, others did not (%s)", what, a->first_err);
		return MC_ERROR;
	}
	return same_answer(a, pristine) ? MC_SAME : -1;
}

/* Self-consistency of a successful answer with all manifests live: history == versions, show == rows. */
static void consistent(const answer *a, const char *what)
{
	if (strcmp(a->versions, a->history))
		fail_msg("%s: history differs from versions", what);
	/* every row of versions appears in show */
	const char *p = a->versions;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = (size_t)(e - p + 1);
		char line[4096];
		snprintf(line, sizeof line, "%.*s", (int)n, p);
		if (!strstr(a->show, line))
			fail_msg("%s: show disagrees with versions on %s", what, line);
		p += n;
	}
}

/* What may change in an answer judge() leaves to the caller; fails the test on more. */
typedef void (*own_part_check)(const answer *a, const char *what, const void *arg);

/*
 * Each corruption case (cm_cases with `seed`) of the file at `path` of `st`, whose pristine
 * bytes are orig[0..size), written in turn and the answer judged (a case is named "<label>
 * <case>"): an error naming the file, the pristine answer, or a consistent answer in which
 * only what own() allows changed.  Counts the classes in cls[]; returns the number of cases.
 */
static size_t sweep_file(lv_storage *st, const char *path, const uint8_t *orig, size_t size,
			 uint64_t seed, const probe_set *pr, uint64_t max_v, const answer *pristine,
			 const char *label, own_part_check own, const void *arg, size_t cls[MC_COUNT])
{
	cm_case *cases = NULL;
	size_t n = cm_cases(size, seed, nbits(), stride(), &cases);
	uint8_t *bad = malloc(size);
	for (size_t i = 0; i < n; i++) {
		char nm[64], what[200];
		snprintf(what, sizeof what, "%s %s", label, cm_name(&cases[i], nm, sizeof nm));
		size_t len = cm_apply(orig, size, &cases[i], bad);
		CHECK(lv_storage_write(st, path, bad, len, &err));
		answer a = ask(st, base_name(path), pr, max_v);
		int k = judge(&a, pristine, what);
		if (k >= 0) {
			cls[k]++;
		} else {
			own(&a, what, arg);
			consistent(&a, what);
			cls[MC_OWN_ROW]++;
		}
		answer_free(&a);
	}
	free(bad);
	free(cases);
	return n;
}

/* Undetectable without a checksum; other versions must be untouched (the corrupted manifest's
 * row may even claim another version number). */
static void other_rows_unchanged(const answer *a, const char *what, const void *others_pristine)
{
	if (!others_intact(a->versions, others_pristine))
		fail_msg("%s: rows of other versions changed:\n%s", what, a->versions);
}

static void test_manifest_sweep(void **state)
{
	(void)state;
	lv_storage *st = tu_mem_copy("lance8/t.lance");
	probe_set pr = probes_of(st);
	answer pristine = ask(st, "-", &pr, 6);
	assert_int_equal(pristine.errors, 0);
	size_t total[MC_COUNT] = { 0 }, changed_own_fields = 0;
	for (uint64_t v = 1; v <= 6; v++) {
		char path[128];
		synth_manifest_path(path, sizeof path, v);
		lv_buf m = { 0 };
		CHECK(lv_storage_read(st, path, &m, &err));
		char *others_pristine = without_version(pristine.versions, v);
		char label[64];
		snprintf(label, sizeof label, "manifest v%llu", (unsigned long long)v);
		size_t cls[MC_COUNT] = { 0 };
		size_t n = sweep_file(st, path, m.ptr, m.size, SEED + v, &pr, 6, &pristine, label,
				      other_rows_unchanged, others_pristine, cls);
		CHECK(lv_storage_write(st, path, m.ptr, m.size, &err));
		print_message("manifest v%llu (%zu bytes, %zu cases): %zu error naming the file, %zu same answer, "
			      "%zu only its own row changed\n", (unsigned long long)v, m.size, n, cls[MC_ERROR],
			      cls[MC_SAME], cls[MC_OWN_ROW]);
		for (int k = 0; k < MC_COUNT; k++)
			total[k] += cls[k];
		(void)changed_own_fields;
		free(others_pristine);
		lv_buf_dispose(&m);
	}
	print_message("manifests total: %zu errors, %zu same, %zu own row changed\n", total[MC_ERROR],
		      total[MC_SAME], total[MC_OWN_ROW]);
	assert_true(total[MC_ERROR] > 0);
	answer_free(&pristine);
	lv_storage_free(st);
}

/* ---- a real transaction file, read by a manifest without an inline copy ---- */

/* The manifest-derived part of a row: version .. total_rows (the first 9 fields). */
static void manifest_part(const char *rowstr, char *out, size_t cap)
{
	const char *p = rowstr;
	for (int f = 0; f < 9 && p; f++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	size_t n = p ? (size_t)(p - rowstr) : strlen(rowstr);
	snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), rowstr);
}

/* Only the transaction columns may change: mpart is the pristine manifest_part(). */
static void manifest_columns_unchanged(const answer *a, const char *what, const void *mpart)
{
	char part[512];
	manifest_part(a->versions, part, sizeof part);
	if (strcmp(part, mpart))
		fail_msg("%s: manifest columns changed: %s", what, a->versions);
}

static void test_txn_file_sweep(void **state)
{
	(void)state;
	/* the largest transaction file LanceDB wrote for t.lance */
	char dir[512];
	snprintf(dir, sizeof dir, "%s", tu_fixture("lance8/t.lance/_transactions"));
	char **names = tu_list_dir(dir);
	uint8_t *txn = NULL;
	size_t txn_size = 0;
	for (char **q = names; *q; q++) {
		char p[1024];
		snprintf(p, sizeof p, "%s/%s", dir, *q);
		size_t n;
		uint8_t *b = tu_read_file(p, &n);
		if (n > txn_size) {
			free(txn);
			txn = b;
			txn_size = n;
		} else {
			free(b);
		}
	}
	tu_free_list(names);
	assert_true(txn_size > 0);

	lv_storage *st = tu_mem();
	synth_commit c = { .version = 1, .ts_ms = 1700000001000, .txn_file_only = 1 };
	CHECK(synth_write(st, &c));
	names = NULL;
	lv_dataset *ds = tu_open(st);
	lv_version_list *l = tu_versions(ds, NULL);
	assert_false(lv_version_list_get(l, 0)->transaction_inline);
	char tpath[400];
	snprintf(tpath, sizeof tpath, "_transactions/%s", lv_version_list_get(l, 0)->transaction_file);
	lv_version_list_free(l);
	lv_dataset_free(ds);
	CHECK(lv_storage_write(st, tpath, txn, txn_size, &err));

	probe_set pr = probes_of(st);
	answer pristine = ask(st, "-", &pr, 1);
	assert_int_equal(pristine.errors, 0);
	if (strstr(pristine.versions, "op=-"))
		fail_msg("the real transaction file was not read: %s", pristine.versions);
	char mpart[512];
	manifest_part(pristine.versions, mpart, sizeof mpart);

	size_t cls[MC_COUNT] = { 0 };
	size_t n = sweep_file(st, tpath, txn, txn_size, SEED, &pr, 1, &pristine, "transaction file",
			      manifest_columns_unchanged, mpart, cls);
	print_message("transaction file (%zu bytes, %zu cases): %zu error naming the file, %zu same answer, "
		      "%zu transaction columns changed\n", txn_size, n, cls[MC_ERROR], cls[MC_SAME],
		      cls[MC_OWN_ROW]);
	assert_true(cls[MC_ERROR] > 0);
	free(txn);
	answer_free(&pristine);
	lv_storage_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checkpoint_sweep),
		cmocka_unit_test(test_manifest_sweep),
		cmocka_unit_test(test_txn_file_sweep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
