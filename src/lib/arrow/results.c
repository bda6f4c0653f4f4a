/*
 * Arrow export of the other results: tags and branches (lv_refs_arrow_stream)
 * and a cleanup's file list (lv_cleanup_files_arrow_stream).
 *
 * Invariants: like the version lists, each stream owns a copy of its rows
 * (fixed-size row structs, strings in one block), never the caller's objects.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "arrow/arrow_internal.h"
#include "util/abi.h"
#include "util/util.h"

/* ---- tags and branches ---- */

typedef struct ref_row {
	const char *kind, *name, *branch, *created_at;
	uint64_t version, manifest_size;
	char created_buf[32]; /* a branch's creation time as text */
} ref_row;

static const lv__acol REF_COLS[] = {
	{ "kind", LV__A_UTF8, false },         { "name", LV__A_UTF8, false },
	{ "version", LV__A_U64, false },       { "branch", LV__A_UTF8, true },
	{ "manifest_size", LV__A_U64, false }, { "created_at", LV__A_UTF8, true },
};

static bool ref_cell(const void *rows, size_t row, size_t col, lv__aval *v)
{
	const ref_row *r = &((const ref_row *)((const lv__arows *)rows)->rows)[row];
	switch (col) {
	case 0: return lv__acell_str(r->kind, v);
	case 1: return lv__acell_str(r->name, v);
	case 2: v->u = r->version; return true;
	case 3: return lv__acell_str(r->branch, v);
	case 4: v->u = r->manifest_size; return true;
	default: return lv__acell_str(r->created_at, v);
	}
}

/* RFC 3339 UTC seconds of a unix time, or NULL when unknown (0) or unrepresentable. */
static const char *branch_time(ref_row *r, int64_t secs)
{
	time_t t = (time_t)secs;
	struct tm tm;
	if (secs == 0 || !gmtime_r(&t, &tm) ||
	    !strftime(r->created_buf, sizeof r->created_buf, "%Y-%m-%dT%H:%M:%SZ", &tm))
		return NULL;
	return r->created_buf;
}

int lv_refs_arrow_stream(struct ArrowArrayStream *out, const lv_refs *refs,
			 const lv_arrow_options *opts, lv_error *err)
{
	if (!out || !refs)
		return lv__err(err, LV_EINVALID, "arrow: NULL stream or refs");
	size_t nt = lv_refs_tag_count(refs), nb = lv_refs_branch_count(refs), bytes = 1;
	for (size_t i = 0; i < nt; i++) {
		const lv_tag *t = lv_refs_tag(refs, i);
		bytes += lv__arows_slen(t->name) + lv__arows_slen(t->branch) + lv__arows_slen(t->created_at);
	}
	for (size_t i = 0; i < nb; i++)
		bytes += lv__arows_slen(lv_refs_branch(refs, i)->name) + lv__arows_slen(lv_refs_branch(refs, i)->parent_branch);
	lv__arows *rs = lv__arows_new(nt + nb, sizeof(ref_row), bytes);
	if (!rs)
		return lv__err(err, LV_ENOMEM, "arrow: out of memory copying %zu refs", nt + nb);
	ref_row *rows = rs->rows;
	for (size_t i = 0; i < nt; i++) {
		const lv_tag *t = lv_refs_tag(refs, i);
		rows[i] = (ref_row){ .kind = "tag", .name = lv__arows_keep(rs, t->name), .version = t->version,
				     .branch = lv__arows_keep(rs, t->branch), .manifest_size = t->manifest_size,
				     .created_at = lv__arows_keep(rs, t->created_at) };
	}
	for (size_t i = 0; i < nb; i++) {
		const lv_branch *b = lv_refs_branch(refs, i);
		ref_row *r = &rows[nt + i];
		*r = (ref_row){ .kind = "branch", .name = lv__arows_keep(rs, b->name),
				.version = b->parent_version, .branch = lv__arows_keep(rs, b->parent_branch),
				.manifest_size = b->manifest_size };
		r->created_at = branch_time(r, b->create_at);
	}
	const char *k[] = { "lancever:kind" }, *v[] = { "refs" };
	lv__asource src = { .cols = REF_COLS, .ncols = sizeof REF_COLS / sizeof REF_COLS[0],
			    .get = ref_cell, .rows = rs, .nrows = nt + nb, .free_rows = lv__arows_free,
			    .metadata = lv__arrow_metadata(k, v, 1) };
	if (!src.metadata) {
		lv__arrow_source_dispose(&src);
		return lv__err(err, LV_ENOMEM, "arrow: out of memory");
	}
	return lv__arrow_stream_new(out, &src, opts, err);
}

/* ---- cleanup files ---- */

/* The columns of the CLI's JSON "files" (one name per field): a manifest's version, null for
 * other files. */
static const lv__acol FILE_COLS[] = {
	{ "path", LV__A_UTF8, false },
	{ "kind", LV__A_UTF8, false },
	{ "size_bytes", LV__A_U64, false },
	{ "version", LV__A_U64, true },
	{ "reason", LV__A_UTF8, false },
};

static bool file_cell(const void *rows, size_t row, size_t col, lv__aval *v)
{
	const lv_cleanup_file *f = &((const lv_cleanup_file *)((const lv__arows *)rows)->rows)[row];
	switch (col) {
	case 0: return lv__acell_str(f->path, v);
	case 1: return lv__acell_str(lv_file_kind_name(f->kind), v);
	case 2: v->u = f->size; return true;
	case 3: return f->kind == LV_KIND_MANIFEST && lv_manifest_path_version(f->path, &v->u);
	default: return lv__acell_str(f->reason ? f->reason : "", v);
	}
}

/* The stats as schema metadata (NULL on OOM). */
static char *cleanup_metadata(const lv_cleanup_stats *s, bool dry_run)
{
	if (!s) {
		const char *k[] = { "lancever:kind", "lancever:dry_run" };
		const char *v[] = { "cleanup_files", dry_run ? "true" : "false" };
		return lv__arrow_metadata(k, v, 2);
	}
	uint64_t files = 0, bytes = 0;
	for (int i = 0; i < LV_KIND_COUNT; i++) {
		files += s->files_removed[i];
		bytes += s->bytes_removed[i];
	}
	char num[5][24];
	snprintf(num[0], sizeof num[0], "%" PRIu64, s->versions_total);
	snprintf(num[1], sizeof num[1], "%" PRIu64, s->versions_removed);
	snprintf(num[2], sizeof num[2], "%" PRIu64, s->versions_archived);
	snprintf(num[3], sizeof num[3], "%" PRIu64, files);
	snprintf(num[4], sizeof num[4], "%" PRIu64, bytes);
	const char *k[] = { "lancever:kind", "lancever:dry_run", "lancever:versions_total",
			    "lancever:versions_removed", "lancever:versions_archived",
			    "lancever:checkpoint", "lancever:files_removed", "lancever:bytes_removed" };
	const char *v[] = { "cleanup_files", dry_run ? "true" : "false", num[0], num[1], num[2],
			    s->checkpoint_written ? s->checkpoint_path : "", num[3], num[4] };
	return lv__arrow_metadata(k, v, sizeof k / sizeof k[0]);
}

int lv_cleanup_files_arrow_stream(struct ArrowArrayStream *out, const lv_cleanup_file *files,
				  size_t nfiles, const lv_cleanup_stats *stats, bool dry_run,
				  const lv_arrow_options *opts, lv_error *err)
{
	if (!out || (!files && nfiles))
		return lv__err(err, LV_EINVALID, "arrow: NULL stream or files");
	if (stats)
		LV_TRY(lv__struct_version("lv_cleanup_stats", stats->version, LV_CLEANUP_STATS_VERSION,
					  LV_CLEANUP_STATS_VERSION, err));
	size_t bytes = 1;
	for (size_t i = 0; i < nfiles; i++) {
		if (!files[i].path)
			return lv__err(err, LV_EINVALID, "arrow: cleanup file %zu has no path", i);
		bytes += lv__arows_slen(files[i].path) + lv__arows_slen(files[i].reason);
	}
	lv__arows *rs = lv__arows_new(nfiles, sizeof(lv_cleanup_file), bytes);
	if (!rs)
		return lv__err(err, LV_ENOMEM, "arrow: out of memory copying %zu files", nfiles);
	lv_cleanup_file *rows = rs->rows;
	for (size_t i = 0; i < nfiles; i++)
		rows[i] = (lv_cleanup_file){ .path = lv__arows_keep(rs, files[i].path), .kind = files[i].kind,
					     .size = files[i].size,
					     .reason = lv__arows_keep(rs, files[i].reason) };
	lv__asource src = { .cols = FILE_COLS, .ncols = sizeof FILE_COLS / sizeof FILE_COLS[0],
			    .get = file_cell, .rows = rs, .nrows = nfiles,
			    .free_rows = lv__arows_free, .metadata = cleanup_metadata(stats, dry_run) };
	if (!src.metadata) {
		lv__arrow_source_dispose(&src);
		return lv__err(err, LV_ENOMEM, "arrow: out of memory");
	}
	return lv__arrow_stream_new(out, &src, opts, err);
}
