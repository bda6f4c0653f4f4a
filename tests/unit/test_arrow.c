/*
 * The Arrow C Stream export (lancever/arrow.h) seen from a consumer: every
 * stream is walked end to end and every column, type, flag, null and row is
 * checked against the lv_version_list the library returns for the same call;
 * release callbacks are counted (each object released exactly once, by its
 * parent or by the consumer, in any order) and lv_arrow_live_objects() must be
 * back at zero; an allocation-failure sweep fails every allocation in turn.
 * Under the ASan build (tests/run-all.sh) leaks and double frees also fail.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <lancever/lancever.h>
#include <lancever/arrow.h>
#include <lancever/sys/arrow.h>

#include "support/arrowds.h"
#include "support/memcopy.h"
#include "support/testutil.h"

#define CHECK(expr) TU_CHECK(err, expr)

static lv_error err;

/* ---- release accounting: the consumer wraps every release callback it receives ---- */

static int n_stream_rel;
static void (*orig_stream_rel)(struct ArrowArrayStream *);

static void count_stream(struct ArrowArrayStream *s)
{
	n_stream_rel++;
	orig_stream_rel(s);
	assert_null(s->release);
}

static void wrap_stream(struct ArrowArrayStream *s)
{
	assert_non_null(s->release);
	orig_stream_rel = s->release;
	s->release = count_stream;
}

/*
 * n_<kind>_rel, count_<kind> and wrap_<kind> for a schema or an array (T): the parent's
 * release and its children's (one callback for all of them) are replaced by count_<kind>,
 * which counts the call, runs the original and checks that it marked the object released.
 */
#define RELEASE_COUNTER(kind, T)                                                       \
	static int n_##kind##_rel;                                                     \
	static void (*orig_##kind##_rel)(T *), (*orig_##kind##_child_rel)(T *);        \
	static void count_##kind(T *x)                                                 \
	{                                                                              \
		n_##kind##_rel++;                                                      \
		(x->n_children ? orig_##kind##_rel : orig_##kind##_child_rel)(x);      \
		assert_null(x->release);                                               \
	}                                                                              \
	static void wrap_##kind(T *x)                                                  \
	{                                                                              \
		orig_##kind##_rel = x->release;                                        \
		for (int64_t i = 0; i < x->n_children; i++) {                          \
			orig_##kind##_child_rel = x->children[i]->release;             \
			x->children[i]->release = count_##kind;                        \
		}                                                                      \
		x->release = count_##kind;                                             \
	}

RELEASE_COUNTER(schema, struct ArrowSchema)
RELEASE_COUNTER(array, struct ArrowArray)

static void reset_counts(void)
{
	n_stream_rel = n_schema_rel = n_array_rel = 0;
}

/* Releases a schema and its stream: then no exported object may be left alive. */
static void release_all(struct ArrowSchema *schema, struct ArrowArrayStream *s)
{
	schema->release(schema);
	s->release(s);
	assert_int_equal(lv_arrow_live_objects(), 0);
}

/* ---- checking values ---- */

static bool valid(const struct ArrowArray *a, int64_t k)
{
	const uint8_t *v = a->buffers[0];
	int64_t i = a->offset + k;
	return !v || ((v[i / 8] >> (i % 8)) & 1);
}

static void check_cell(const struct ArrowArray *a, int64_t k, const lv_version_info *v, size_t c)
{
	ads_cell e = ads_expect(v, c);
	const char *name = ads_columns[c].name;
	if (e.null) {
		if (valid(a, k))
			fail_msg("v%llu %s: expected null", (unsigned long long)v->version, name);
		return;
	}
	if (!valid(a, k))
		fail_msg("v%llu %s: unexpected null", (unsigned long long)v->version, name);
	int64_t i = a->offset + k;
	switch (ads_columns[c].format[0]) {
	case 'L':
		assert_int_equal(((const uint64_t *)a->buffers[1])[i], e.u);
		break;
	case 't': /* "tsm:UTC": int64 milliseconds */
		assert_int_equal(((const int64_t *)a->buffers[1])[i], e.i);
		break;
	case 'b':
		assert_int_equal((((const uint8_t *)a->buffers[1])[i / 8] >> (i % 8)) & 1, e.b);
		break;
	default: {
		const int32_t *o = a->buffers[1];
		size_t n = (size_t)(o[i + 1] - o[i]);
		if (n != strlen(e.s) || memcmp((const char *)a->buffers[2] + o[i], e.s, n))
			fail_msg("v%llu %s: '%.*s' != '%s'", (unsigned long long)v->version, name,
				 (int)n, (const char *)a->buffers[2] + o[i], e.s);
	}
	}
}

/* Layout rules of one column array (C Data Interface). */
static void check_column_layout(const struct ArrowArray *a, size_t c, int64_t rows)
{
	bool utf8 = ads_columns[c].format[0] == 'u';
	assert_int_equal(a->length, rows);
	assert_int_equal(a->offset, 0);
	assert_int_equal(a->n_buffers, utf8 ? 3 : 2);
	assert_int_equal(a->n_children, 0);
	assert_null(a->dictionary);
	assert_non_null(a->release);
	int64_t nulls = 0;
	for (int64_t k = 0; k < rows; k++)
		nulls += !valid(a, k);
	assert_int_equal(a->null_count, nulls);
	if (!ads_columns[c].nullable)
		assert_null(a->buffers[0]);
	for (int b = 0; b < a->n_buffers; b++)
		assert_int_equal((uintptr_t)a->buffers[b] % 8, 0);
	if (utf8)
		assert_int_equal(((const int32_t *)a->buffers[1])[0], 0);
}

static void check_schema(const struct ArrowSchema *s, const char *kind, const lv_version_list *l)
{
	assert_string_equal(s->format, "+s");
	assert_int_equal(s->n_children, LV_ARROW_VERSION_COLUMNS);
	assert_null(s->dictionary);
	for (size_t c = 0; c < LV_ARROW_VERSION_COLUMNS; c++) {
		const struct ArrowSchema *f = s->children[c];
		assert_string_equal(f->name, ads_columns[c].name);
		assert_string_equal(f->format, ads_columns[c].format);
		assert_int_equal(f->flags, ads_columns[c].nullable ? ARROW_FLAG_NULLABLE : 0);
		assert_int_equal(f->n_children, 0);
		assert_non_null(f->release);
	}
	char *k = ads_metadata_get(s->metadata, "lancever:kind");
	char *g = ads_metadata_get(s->metadata, "lancever:gaps");
	assert_non_null(k);
	assert_non_null(g);
	assert_string_equal(k, kind);
	char want[256] = "[";
	for (size_t i = 0; i < lv_version_list_gap_count(l); i++) {
		uint64_t a, b;
		assert_true(lv_version_list_gap(l, i, &a, &b));
		snprintf(want + strlen(want), sizeof want - strlen(want), "%s[%llu,%llu]", i ? "," : "",
			 (unsigned long long)a, (unsigned long long)b);
	}
	strcat(want, "]");
	assert_string_equal(g, want);
	free(k);
	free(g);
}

/*
 * Walks `st` to the end, checking every batch against `l`; batches of at most
 * `batch_rows`.  Releases everything.  Returns the number of batches.
 */
static size_t walk(struct ArrowArrayStream *st, const lv_version_list *l, const char *kind,
		   size_t batch_rows)
{
	reset_counts();
	assert_int_equal(lv_arrow_live_objects(), 1); /* the stream alone */
	wrap_stream(st);
	struct ArrowSchema schema;
	assert_int_equal(st->get_schema(st, &schema), 0);
	assert_null(st->get_last_error(st));
	wrap_schema(&schema);
	check_schema(&schema, kind, l);
	size_t row = 0, batches = 0, n = lv_version_list_count(l);
	for (size_t i = 0; i < n; i++) /* the entries are one array (dataset.h; the Python package reads it so) */
		assert_ptr_equal(lv_version_list_get(l, i), lv_version_list_get(l, 0) + i);
	for (;;) {
		struct ArrowArray b;
		memset(&b, 0xAB, sizeof b);
		assert_int_equal(st->get_next(st, &b), 0);
		if (!b.release)
			break;
		wrap_array(&b);
		batches++;
		assert_string_equal(schema.format, "+s");
		assert_int_equal(b.n_children, LV_ARROW_VERSION_COLUMNS);
		assert_int_equal(b.n_buffers, 1);
		assert_null(b.buffers[0]);
		assert_int_equal(b.null_count, 0);
		assert_int_equal(b.offset, 0);
		assert_true(b.length >= 1 && (size_t)b.length <= batch_rows);
		for (size_t c = 0; c < LV_ARROW_VERSION_COLUMNS; c++) {
			check_column_layout(b.children[c], c, b.length);
			for (int64_t k = 0; k < b.length; k++)
				check_cell(b.children[c], k, lv_version_list_get(l, row + (size_t)k), c);
		}
		row += (size_t)b.length;
		b.release(&b);
		assert_null(b.release);
	}
	assert_int_equal(row, n);
	/* The end stays the end. */
	struct ArrowArray again;
	assert_int_equal(st->get_next(st, &again), 0);
	assert_null(again.release);
	schema.release(&schema);
	st->release(st);
	assert_null(st->release);
	assert_int_equal(n_stream_rel, 1);
	assert_int_equal(n_schema_rel, 1 + LV_ARROW_VERSION_COLUMNS);
	assert_int_equal(n_array_rel, (int)batches * (1 + LV_ARROW_VERSION_COLUMNS));
	assert_int_equal(lv_arrow_live_objects(), 0);
	return batches;
}

/* ---- tests ---- */

static void test_history_every_batch_size(void **state)
{
	(void)state;
	ads_fixture fx = ads_open();
	assert_int_equal(lv_version_list_count(fx.l), 14);
	assert_int_equal(lv_version_list_gap_count(fx.l), 1);
	const size_t sizes[] = { 1, 3, 5, 13, 14, 15, 0 };
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		lv_arrow_options o = LV_ARROW_OPTIONS_INIT;
		o.batch_rows = sizes[i];
		struct ArrowArrayStream s;
		lv_history_report rep = LV_HISTORY_REPORT_INIT;
		CHECK(lv_history_arrow_stream(&s, fx.ds, &o, &rep, &err));
		assert_int_equal(rep.rung, LV_RUNG_NEWEST_CHECKPOINT);
		size_t rows = sizes[i] ? sizes[i] : LV_ARROW_DEFAULT_BATCH_ROWS;
		assert_int_equal(walk(&s, fx.l, "history", rows), (14 + rows - 1) / rows);
	}
	ads_close(&fx);
}

static void test_versions_and_real_lance(void **state)
{
	(void)state;
	const char *fixtures[] = { NULL, "lance8/t.lance", "lance8/v1.lance" };
	for (size_t f = 0; f < 3; f++) {
		lv_storage *st = f ? tu_mem_copy(fixtures[f]) : ads_dataset();
		lv_dataset *ds = tu_open(st);
		lv_version_list *l = tu_versions(ds, NULL);
		assert_true(lv_version_list_count(l) >= 2);
		struct ArrowArrayStream s;
		CHECK(lv_versions_arrow_stream(&s, ds, NULL, NULL, &err));
		assert_int_equal(walk(&s, l, "versions", LV_ARROW_DEFAULT_BATCH_ROWS), 1);
		lv_arrow_options o = { LV_ARROW_OPTIONS_VERSION, 2, 0 };
		CHECK(lv_version_list_arrow_stream(&s, l, "history", &o, &err));
		lv_version_list *l2 = NULL; /* the stream must not depend on the list */
		CHECK(lv_versions(&l2, ds, NULL, &err));
		lv_version_list_free(l);
		walk(&s, l2, "history", 2);
		lv_version_list_free(l2);
		lv_dataset_free(ds);
		lv_storage_free(st);
	}
}

/* Batches outlive the stream and the schema; children can be moved out; any order. */
static void test_release_in_any_order(void **state)
{
	(void)state;
	ads_fixture fx = ads_open();
	reset_counts();
	lv_arrow_options o = { LV_ARROW_OPTIONS_VERSION, 4, 0 };
	struct ArrowArrayStream s;
	CHECK(lv_history_arrow_stream(&s, fx.ds, &o, NULL, &err));
	struct ArrowSchema schema;
	assert_int_equal(s.get_schema(&s, &schema), 0);
	struct ArrowArray b[4];
	for (int i = 0; i < 4; i++)
		assert_int_equal(s.get_next(&s, &b[i]), 0);
	int64_t live = lv_arrow_live_objects();
	assert_int_equal(live, 1 + (1 + 22) + 4 * (1 + 22));
	s.release(&s);
	/* Move child 13 (operation_type) out of the schema and of batch 0. */
	struct ArrowSchema op_field = *schema.children[13];
	schema.children[13]->release = NULL;
	schema.release(&schema);
	struct ArrowArray op_col = *b[0].children[13];
	b[0].children[13]->release = NULL;
	b[0].release(&b[0]);
	assert_string_equal(op_field.name, "operation_type");
	for (int64_t k = 0; k < op_col.length; k++)
		check_cell(&op_col, k, lv_version_list_get(fx.l, (size_t)k), 13);
	for (int i = 3; i >= 1; i--) { /* reverse order, after the stream */
		for (size_t c = 0; c < 22; c++)
			for (int64_t k = 0; k < b[i].length; k++)
				check_cell(b[i].children[c], k, lv_version_list_get(fx.l, 4 * (size_t)i + (size_t)k), c);
		b[i].release(&b[i]);
	}
	assert_int_equal(lv_arrow_live_objects(), 2);
	op_col.release(&op_col);
	op_field.release(&op_field);
	assert_int_equal(lv_arrow_live_objects(), 0);
	ads_close(&fx);
}

/* batch_bytes bounds the string bytes of a batch; a bigger single row gets its own. */
static void test_batch_bytes(void **state)
{
	(void)state;
	ads_fixture fx = ads_open();
	lv_arrow_options o = { LV_ARROW_OPTIONS_VERSION, 0, 1000 };
	struct ArrowArrayStream s;
	CHECK(lv_version_list_arrow_stream(&s, fx.l, "history", &o, &err));
	size_t row = 0;
	for (;;) {
		struct ArrowArray b;
		assert_int_equal(s.get_next(&s, &b), 0);
		if (!b.release)
			break;
		size_t bytes = 0;
		for (size_t c = 0; c < 22; c++)
			if (ads_columns[c].format[0] == 'u') {
				const int32_t *off = b.children[c]->buffers[1];
				bytes += (size_t)off[b.length];
			}
		bool has_big = false; /* v7 holds a 3000-byte property */
		for (int64_t k = 0; k < b.length; k++)
			has_big |= lv_version_list_get(fx.l, row + (size_t)k)->version == 7;
		if (has_big)
			assert_int_equal(b.length, 1);
		else
			assert_true(bytes <= 1000);
		row += (size_t)b.length;
		b.release(&b);
	}
	assert_int_equal(row, 14);
	s.release(&s);
	assert_int_equal(lv_arrow_live_objects(), 0);
	ads_close(&fx);
}

/* Walks a stream to the end; returns the first failing callback's status (0 if none). */
static int walk_until_failure(struct ArrowArrayStream *s)
{
	struct ArrowSchema schema;
	int rc = s->get_schema(s, &schema);
	if (rc == 0)
		schema.release(&schema);
	for (int guard = 0; rc == 0 && guard < 100; guard++) {
		struct ArrowArray b;
		rc = s->get_next(s, &b);
		if (rc || !b.release)
			break;
		b.release(&b);
	}
	if (rc) {
		const char *m = s->get_last_error(s);
		assert_non_null(m);
		assert_non_null(strstr(m, "out of memory"));
		assert_int_equal(rc, ENOMEM);
	}
	return rc;
}

/* Every allocation of the export fails in turn: a clean error each time, nothing leaked. */
static void test_allocation_failures(void **state)
{
	(void)state;
	ads_fixture fx = ads_open();
	lv_arrow_options o = { LV_ARROW_OPTIONS_VERSION, 5, 0 };
	uint64_t nth = 1, failures = 0;
	for (;; nth++) {
		lv_arrow_fail_alloc_at(nth);
		struct ArrowArrayStream s;
		lv_error e = { 0 };
		int rc = lv_version_list_arrow_stream(&s, fx.l, "history", &o, &e);
		if (rc) {
			assert_int_equal(rc, LV_ENOMEM);
			assert_non_null(strstr(e.message, "out of memory"));
		} else {
			rc = walk_until_failure(&s);
			s.release(&s);
		}
		assert_int_equal(lv_arrow_live_objects(), 0);
		uint64_t seen = lv_arrow_fail_alloc_at(0);
		if (rc == 0 && seen < nth)
			break; /* the whole walk made fewer than nth allocations */
		assert_true(rc != 0);
		failures++;
	}
	assert_true(failures >= 10);
	ads_close(&fx);
}

static void test_bad_arguments(void **state)
{
	(void)state;
	lv_storage *st = ads_dataset();
	lv_dataset *ds = tu_open(st);
	struct ArrowArrayStream s = { 0 };
	assert_int_equal(lv_history_arrow_stream(NULL, ds, NULL, NULL, &err), LV_EINVALID);
	assert_int_equal(lv_history_arrow_stream(&s, NULL, NULL, NULL, &err), LV_EINVALID);
	assert_int_equal(lv_version_list_arrow_stream(&s, NULL, NULL, NULL, &err), LV_EINVALID);
	lv_arrow_options bad = { 99, 0, 0 };
	lv_storage_stats st0 = LV_STORAGE_STATS_INIT, st1 = LV_STORAGE_STATS_INIT;
	lv_storage_get_stats(st, &st0);
	assert_int_equal(lv_versions_arrow_stream(&s, ds, &bad, NULL, &err), LV_EINVALID);
	assert_non_null(strstr(err.message, "lv_arrow_options: version 99"));
	lv_storage_get_stats(st, &st1);
	assert_int_equal(st1.requests, st0.requests); /* refused before the history is read */
	assert_null(s.release); /* nothing written on failure */
	assert_int_equal(lv_arrow_live_objects(), 0);
	CHECK(lv_versions_arrow_stream(&s, ds, NULL, NULL, &err));
	assert_int_equal(s.get_next(&s, NULL), EINVAL);
	assert_non_null(s.get_last_error(&s));
	assert_int_equal(s.get_schema(&s, NULL), EINVAL);
	struct ArrowSchema schema;
	assert_int_equal(s.get_schema(&s, &schema), 0);
	assert_null(s.get_last_error(&s)); /* cleared by a successful call */
	release_all(&schema, &s);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* Tags and branches: one row each, from lv_refs. */
static void test_refs(void **state)
{
	(void)state;
	lv_storage *st = ads_dataset();
	lv_dataset *ds = tu_open(st);
	lv_refs *r = NULL;
	CHECK(lv_refs_load(&r, ds, &err));
	assert_int_equal(lv_refs_tag_count(r), 1);
	struct ArrowArrayStream s;
	CHECK(lv_refs_arrow_stream(&s, r, NULL, &err));
	lv_refs_free(r);
	struct ArrowSchema schema;
	assert_int_equal(s.get_schema(&s, &schema), 0);
	const char *names[] = { "kind", "name", "version", "branch", "manifest_size", "created_at" };
	const char *formats[] = { "u", "u", "L", "u", "L", "u" };
	assert_int_equal(schema.n_children, 6);
	for (int i = 0; i < 6; i++) {
		assert_string_equal(schema.children[i]->name, names[i]);
		assert_string_equal(schema.children[i]->format, formats[i]);
	}
	struct ArrowArray b;
	assert_int_equal(s.get_next(&s, &b), 0);
	assert_int_equal(b.length, 1);
	const struct ArrowArray *kind = b.children[0], *name = b.children[1], *ver = b.children[2];
	assert_memory_equal((const char *)kind->buffers[2], "tag", 3);
	assert_memory_equal((const char *)name->buffers[2], "keep", 4);
	assert_int_equal(((const uint64_t *)ver->buffers[1])[0], 4);
	assert_false(valid(b.children[3], 0)); /* main */
	b.release(&b);
	assert_int_equal(s.get_next(&s, &b), 0);
	assert_null(b.release);
	release_all(&schema, &s);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static void test_cleanup_files(void **state)
{
	(void)state;
	lv_cleanup_file f[] = { { "data/a.lance", LV_KIND_DATA, 100, "unreferenced" },
				{ "_versions/x.manifest", LV_KIND_MANIFEST, 7, NULL } };
	lv_cleanup_stats stats = { .version = LV_CLEANUP_STATS_VERSION, .versions_total = 9, .versions_removed = 2, .versions_archived = 9 };
	stats.files_removed[LV_KIND_DATA] = 1;
	stats.bytes_removed[LV_KIND_DATA] = 100;
	struct ArrowArrayStream s;
	CHECK(lv_cleanup_files_arrow_stream(&s, f, 2, &stats, true, NULL, &err));
	f[0].path = "changed"; /* the stream copied its rows */
	struct ArrowSchema schema;
	assert_int_equal(s.get_schema(&s, &schema), 0);
	char *v = ads_metadata_get(schema.metadata, "lancever:versions_removed");
	char *d = ads_metadata_get(schema.metadata, "lancever:dry_run");
	char *c = ads_metadata_get(schema.metadata, "lancever:checkpoint");
	assert_string_equal(v, "2");
	assert_string_equal(d, "true");
	assert_string_equal(c, "");
	free(v);
	free(d);
	free(c);
	struct ArrowArray b;
	assert_int_equal(s.get_next(&s, &b), 0);
	assert_int_equal(b.length, 2);
	const int32_t *po = b.children[0]->buffers[1];
	assert_int_equal(po[1], 12);
	assert_memory_equal(b.children[0]->buffers[2], "data/a.lance", 12);
	const int32_t *ko = b.children[1]->buffers[1];
	assert_memory_equal((const char *)b.children[1]->buffers[2] + ko[1], "manifest", 8);
	assert_int_equal(((const uint64_t *)b.children[2]->buffers[1])[1], 7);
	const int32_t *ro = b.children[3]->buffers[1];
	assert_int_equal(ro[2] - ro[1], 0); /* a NULL reason is "" */
	b.release(&b);
	release_all(&schema, &s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_history_every_batch_size),
		cmocka_unit_test(test_versions_and_real_lance),
		cmocka_unit_test(test_release_in_any_order),
		cmocka_unit_test(test_batch_bytes),
		cmocka_unit_test(test_allocation_failures),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_refs),
		cmocka_unit_test(test_cleanup_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
