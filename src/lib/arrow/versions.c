/*
 * Arrow export of version lists: lv_versions_arrow_stream,
 * lv_history_arrow_stream, lv_version_list_arrow_stream.
 *
 * Invariants: the stream works on its own copy of the rows (the 22 exported
 * fields, strings in one block), so it never depends on the lv_version_list
 * it came from; column order, types and nullability are those documented in
 * lancever/arrow.h, the first 15 being the checkpoint file's schema (its Int64
 * timestamp_millis exported as timestamp[ms, tz=UTC], the same int64 values).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow_internal.h"
#include "util/util.h"

enum {
	C_VERSION, C_TS, C_FRAGS, C_DFILES, C_FSIZE, C_DELFILES, C_DFROWS, C_DELROWS, C_ROWS,
	C_TAGGED, C_CLEANED, C_UUID, C_READV, C_OP, C_PROPS,
	C_MPATH, C_MSIZE, C_WLIB, C_WVER, C_DFMT, C_BRANCH, C_NIDX, C_NCOLS
};

static const lv__acol COLS[C_NCOLS] = {
	{ "version", LV__A_U64, false },
	{ "timestamp_millis", LV__A_TS_MS, false },
	{ "total_fragments", LV__A_U64, false },
	{ "total_data_files", LV__A_U64, false },
	{ "total_files_size", LV__A_U64, false },
	{ "total_deletion_files", LV__A_U64, false },
	{ "total_data_file_rows", LV__A_U64, false },
	{ "total_deletion_file_rows", LV__A_U64, false },
	{ "total_rows", LV__A_U64, false },
	{ "is_tagged", LV__A_BOOL, false },
	{ "is_cleaned_up", LV__A_BOOL, false },
	{ "transaction_uuid", LV__A_UTF8, true },
	{ "read_version", LV__A_U64, true },
	{ "operation_type", LV__A_UTF8, true },
	{ "transaction_properties", LV__A_UTF8, false },
	{ "manifest_path", LV__A_UTF8, true },
	{ "manifest_size", LV__A_U64, true },
	{ "writer_library", LV__A_UTF8, true },
	{ "writer_version", LV__A_UTF8, true },
	{ "data_format", LV__A_UTF8, true },
	{ "branch", LV__A_UTF8, true },
	{ "num_indices", LV__A_U64, true },
};
_Static_assert(C_NCOLS == LV_ARROW_VERSION_COLUMNS, "arrow.h documents 22 columns");

static bool cell_of(const lv_version_info *r, size_t col, lv__aval *v)
{
	const uint64_t counters[] = { r->total_fragments, r->total_data_files, r->total_files_size,
				      r->total_deletion_files, r->total_data_file_rows,
				      r->total_deletion_file_rows, r->total_rows };
	/* A live row answered from a checkpoint has its manifest's name (and size, when the
	 * listing gives it) but no other manifest details. */
	bool listed = r->has_manifest_details || (!r->is_cleaned_up && r->manifest_path);
	if (col == C_MPATH)
		return listed && lv__acell_str(r->manifest_path, v);
	if (col == C_MSIZE) {
		v->u = r->manifest_size;
		return r->has_manifest_details || (listed && r->manifest_size);
	}
	if (col >= C_MPATH && !r->has_manifest_details)
		return false;
	switch (col) {
	case C_VERSION: v->u = r->version; return true;
	case C_TS: v->i = r->timestamp_millis; return true;
	case C_TAGGED: v->b = r->is_tagged; return true;
	case C_CLEANED: v->b = r->is_cleaned_up; return true;
	case C_UUID: return lv__acell_str(r->transaction_uuid, v);
	case C_READV: v->u = r->read_version; return r->has_read_version;
	case C_OP: return lv__acell_str(r->operation_type, v);
	case C_PROPS: return lv__acell_str(r->transaction_properties ? r->transaction_properties : "{}", v);
	case C_WLIB: return lv__acell_str(r->writer_library, v);
	case C_WVER: return lv__acell_str(r->writer_version, v);
	case C_DFMT: return lv__acell_str(r->data_format, v);
	case C_BRANCH: return lv__acell_str(r->branch, v);
	case C_NIDX: v->u = r->num_indices; return true;
	default: v->u = counters[col - C_FRAGS]; return true;
	}
}

static bool get_cell(const void *rows, size_t row, size_t col, lv__aval *v)
{
	return cell_of(&((const lv_version_info *)((const lv__arows *)rows)->rows)[row], col, v);
}

/* The string fields of a row that the export keeps. */
#define ROW_STRINGS(r)                                                                     \
	{ &(r)->transaction_uuid, &(r)->operation_type, &(r)->transaction_properties,       \
	  &(r)->manifest_path, &(r)->writer_library, &(r)->writer_version, &(r)->data_format, \
	  &(r)->branch }

/* The string bytes the rows keep. */
static size_t rows_bytes(const lv_version_info *rows, size_t n)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++) {
		lv_version_info tmp = rows[i];
		const char **f[] = ROW_STRINGS(&tmp);
		for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
			total += lv__arows_slen(*f[k]);
	}
	return total;
}

/* Copies n rows (without the config maps) to v's rows from `at`, strings into its block. */
static void put_rows(lv__arows *v, size_t at, const lv_version_info *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		lv_version_info *r = &((lv_version_info *)v->rows)[at + i];
		*r = rows[i];
		r->num_config = 0;
		r->config_keys = r->config_values = NULL;
		const char **f[] = ROW_STRINGS(r);
		for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
			*f[k] = lv__arows_keep(v, *f[k]);
	}
}

/* Copies the list's rows: lv_version_info structs whose strings point into the block; NULL on
 * OOM. */
static lv__arows *copy_rows(const lv_version_list *list, size_t n)
{
	const lv_version_info *rows = lv_version_list_get(list, 0);
	lv__arows *v = lv__arows_new(n, sizeof(lv_version_info), 1 + rows_bytes(rows, n));
	if (v)
		put_rows(v, 0, rows, n);
	return v;
}

/* "[[first,last],...]" for the list's gaps (the list may be NULL: none); NULL on OOM. */
static char *gaps_json(const lv_version_list *list)
{
	lv__dbuf b;
	lv__dbuf_init(&b, 0);
	lv__dbuf_addc(&b, '[');
	for (size_t i = 0; i < lv_version_list_gap_count(list); i++) {
		uint64_t first = 0, last = 0;
		if (lv_version_list_gap(list, i, &first, &last))
			lv__dbuf_printf(&b, "%s[%" PRIu64 ",%" PRIu64 "]", i ? "," : "", first, last);
	}
	lv__dbuf_addc(&b, ']');
	return lv__dbuf_take_str(&b);
}

int lv_version_list_arrow_stream(struct ArrowArrayStream *out, const lv_version_list *list,
				 const char *kind, const lv_arrow_options *opts, lv_error *err)
{
	if (!out || !list)
		return lv__err(err, LV_EINVALID, "arrow: NULL stream or list");
	size_t n = lv_version_list_count(list);
	char *gaps = gaps_json(list);
	const char *keys[] = { "lancever:kind", "lancever:gaps" };
	const char *vals[] = { kind ? kind : "versions", gaps ? gaps : "" };
	lv__asource src = { .cols = COLS, .ncols = C_NCOLS, .get = get_cell,
			    .rows = copy_rows(list, n), .nrows = n, .free_rows = lv__arows_free,
			    .metadata = gaps ? lv__arrow_metadata(keys, vals, 2) : NULL };
	lv__free(gaps);
	if (!src.rows || !src.metadata) {
		lv__arrow_source_dispose(&src);
		return lv__err(err, LV_ENOMEM, "arrow: out of memory copying %zu versions", n);
	}
	return lv__arrow_stream_new(out, &src, opts, err);
}

/* ---- a history cursor, exported a window at a time ---- */

/* The window: the cursor's list as it came (no copy), or, after a batch that the byte
 * bound cut short, a copy of the rows left with the next ones. */
typedef struct hwin {
	lv_history_cursor *c;
	lv_version_list *l; /* the rows, or NULL: they are in a */
	lv__arows *a;
} hwin;

static bool hwin_cell(const void *rows, size_t row, size_t col, lv__aval *v)
{
	const hwin *w = rows;
	return cell_of(w->l ? lv_version_list_get(w->l, row) : (const lv_version_info *)w->a->rows + row,
		       col, v);
}

static void hwin_drop(hwin *w)
{
	lv_version_list_free(w->l);
	lv__arows_free(w->a);
	w->l = NULL;
	w->a = NULL;
}

static void hwin_free(void *rows)
{
	hwin *w = rows;
	if (!w)
		return;
	lv_history_cursor_free(w->c);
	hwin_drop(w);
	lv__arrow_free(w);
}

static int errno_of(int code)
{
	return code == LV_ENOMEM ? ENOMEM : EIO;
}

static int hwin_more(lv__asource *src, size_t keep, size_t want, bool *eof, char *msg, size_t cap)
{
	hwin *w = src->rows;
	lv_error e = { 0 };
	lv_version_list *l = NULL;
	size_t nkeep = src->nrows - keep;
	if (nkeep == 0)
		hwin_drop(w); /* before the next rows are read: one window at a time */
	int rc = lv_history_cursor_next(w->c, want - nkeep, &l, NULL, &e);
	if (rc < 0) {
		snprintf(msg, cap, "%s", e.message);
		return errno_of(rc);
	}
	size_t m = lv_version_list_count(l), n = nkeep + m;
	*eof = l == NULL;
	src->nrows = n;
	if (nkeep == 0) {
		w->l = l;
		return 0;
	}
	const lv_version_info *old = w->l ? lv_version_list_get(w->l, keep) : (const lv_version_info *)w->a->rows + keep;
	const lv_version_info *add = m ? lv_version_list_get(l, 0) : NULL;
	lv__arows *v = lv__arows_new(n, sizeof(lv_version_info), 1 + rows_bytes(old, nkeep) + rows_bytes(add, m));
	if (v) {
		put_rows(v, 0, old, nkeep);
		put_rows(v, nkeep, add, m);
	}
	lv_version_list_free(l);
	hwin_drop(w);
	w->a = v;
	if (!v) {
		src->nrows = 0;
		snprintf(msg, cap, "out of memory");
		return ENOMEM;
	}
	return 0;
}

int lv_history_cursor_arrow_stream(struct ArrowArrayStream *out, lv_history_cursor *cursor,
				   const lv_arrow_options *opts, lv_history_report *report,
				   lv_error *err)
{
	if (!out || !cursor) {
		lv_history_cursor_free(cursor);
		return lv__err(err, LV_EINVALID, "arrow: NULL stream or cursor");
	}
	hwin *w = NULL;
	lv_version_list *gaps = NULL;
	int rc = lv__arrow_opts_check(opts, err);
	if (rc == 0)
		rc = lv_history_cursor_gaps(cursor, &gaps, report, err);
	if (rc < 0) {
		lv_history_cursor_free(cursor);
		return rc;
	}
	char *gj = gaps_json(gaps);
	lv_version_list_free(gaps);
	const char *keys[] = { "lancever:kind", "lancever:gaps" };
	const char *vals[] = { "history", gj ? gj : "" };
	lv__asource src = { .cols = COLS, .ncols = C_NCOLS, .get = hwin_cell, .free_rows = hwin_free,
			    .more = hwin_more, .metadata = gj ? lv__arrow_metadata(keys, vals, 2) : NULL };
	lv__free(gj);
	if ((w = lv__arrow_alloc(sizeof *w)) != NULL)
		w->c = cursor;
	else
		lv_history_cursor_free(cursor);
	src.rows = w;
	if (!src.rows || !src.metadata) {
		lv__arrow_source_dispose(&src);
		return lv__err(err, LV_ENOMEM, "arrow: out of memory starting a history stream");
	}
	return lv__arrow_stream_new(out, &src, opts, err);
}

typedef int (*list_fn)(lv_version_list **, lv_dataset *, lv_history_report *, lv_error *);

static int export_call(struct ArrowArrayStream *out, lv_dataset *ds, list_fn fn,
		       const char *kind, const lv_arrow_options *opts, lv_history_report *report,
		       lv_error *err)
{
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "arrow: NULL stream or dataset");
	LV_TRY(lv__arrow_opts_check(opts, err)); /* before the history is read, not after */
	lv_version_list *list = NULL;
	int rc = fn(&list, ds, report, err);
	if (rc == 0)
		rc = lv_version_list_arrow_stream(out, list, kind, opts, err);
	lv_version_list_free(list);
	return rc;
}

int lv_versions_arrow_stream(struct ArrowArrayStream *out, lv_dataset *ds,
			     const lv_arrow_options *opts, lv_history_report *report, lv_error *err)
{
	return export_call(out, ds, lv_versions, "versions", opts, report, err);
}

int lv_history_arrow_stream(struct ArrowArrayStream *out, lv_dataset *ds,
			    const lv_arrow_options *opts, lv_history_report *report, lv_error *err)
{
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "arrow: NULL stream or dataset");
	LV_TRY(lv__arrow_opts_check(opts, err)); /* before the history is read, not after */
	lv_history_cursor *c = NULL;
	LV_TRY(lv_history_cursor_open(&c, ds, NULL, err));
	return lv_history_cursor_arrow_stream(out, c, opts, report, err);
}
