/*
 * ArrowArrayStream over an lv__asource (Arrow C Stream Interface).
 *
 * Invariants: the stream owns its source; get_schema may be called any
 * number of times, each call exporting a fresh schema; get_next hands out
 * rows in order, in batches of at most batch_rows rows and (unless a single
 * row is bigger) batch_bytes string bytes, then signals the end with a
 * released array (release == NULL) on every later call.  A batch is a
 * self-contained export (table.c): it outlives the stream.  get_last_error
 * describes the most recent failed call and is NULL after a successful one.
 * A windowed source (src.more) is topped up before each batch to batch_rows rows
 * from the batch's first, so its batches are those of the whole list; once it fails,
 * every later get_next fails the same way (the stream is broken, never shortened).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow_internal.h"
#include "util/util.h"
#include "util/abi.h"

typedef struct astream {
	lv__asource src;
	size_t next; /* first row of the next batch */
	size_t batch_rows, batch_bytes;
	bool eof;    /* a windowed source has no more rows */
	int broken;  /* its refill failed: this errno, for every later get_next */
	bool failed;
	char error[256];
} astream;

void lv__arrow_source_dispose(lv__asource *src)
{
	if (src->free_rows)
		src->free_rows(src->rows);
	lv__arrow_free(src->metadata);
	memset(src, 0, sizeof *src);
}

static int fail(astream *s, int code, const char *what)
{
	s->failed = true;
	snprintf(s->error, sizeof s->error, "lancever arrow export: %s: %s", what,
		 code == ENOMEM	     ? "out of memory"
		 : code == EOVERFLOW ? "a string column exceeds 2 GiB in one batch"
				     : "invalid argument");
	return code;
}

static int get_schema(struct ArrowArrayStream *st, struct ArrowSchema *out)
{
	astream *s = st->private_data;
	s->failed = false;
	if (!out)
		return fail(s, EINVAL, "get_schema");
	int rc = lv__arrow_schema_export(out, s->src.cols, s->src.ncols, s->src.metadata);
	return rc ? fail(s, rc, "get_schema") : 0;
}

/* Rows in the batch starting at s->next (at least one). */
static size_t batch_count(const astream *s)
{
	size_t left = s->src.nrows - s->next, count = 0, bytes = 0;
	while (count < left && count < s->batch_rows) {
		size_t row_bytes = 0;
		for (size_t c = 0; c < s->src.ncols; c++) {
			lv__aval v = { 0 };
			if (s->src.cols[c].type == LV__A_UTF8 &&
			    s->src.get(s->src.rows, s->next + count, c, &v))
				row_bytes += v.n;
		}
		if (count > 0 && bytes + row_bytes > s->batch_bytes)
			break;
		bytes += row_bytes;
		count++;
	}
	return count;
}

static int get_next(struct ArrowArrayStream *st, struct ArrowArray *out)
{
	astream *s = st->private_data;
	s->failed = false;
	if (!out)
		return fail(s, EINVAL, "get_next");
	if (s->broken) {
		s->failed = true;
		return s->broken;
	}
	if (s->src.more && !s->eof && s->src.nrows - s->next < s->batch_rows) {
		char msg[200] = "";
		int rc = s->src.more(&s->src, s->next, s->batch_rows, &s->eof, msg, sizeof msg);
		if (rc) {
			snprintf(s->error, sizeof s->error, "lancever arrow export: get_next: %s", msg);
			s->failed = true;
			return s->broken = rc;
		}
		s->next = 0;
	}
	if (s->next >= s->src.nrows) {
		memset(out, 0, sizeof *out); /* end of stream: a released array */
		return 0;
	}
	size_t count = batch_count(s);
	int rc = lv__arrow_batch_export(out, &s->src, s->next, count);
	if (rc)
		return fail(s, rc, "get_next");
	s->next += count;
	return 0;
}

static const char *get_last_error(struct ArrowArrayStream *st)
{
	astream *s = st->private_data;
	return s->failed ? s->error : NULL;
}

static void release(struct ArrowArrayStream *st)
{
	astream *s = st->private_data;
	lv__arrow_source_dispose(&s->src);
	lv__arrow_free(s);
	st->release = NULL;
	lv__arrow_live_add(-1);
}

int lv__arrow_opts_check(const lv_arrow_options *opts, lv_error *err)
{
	return opts ? lv__struct_version("lv_arrow_options", opts->version, LV_ARROW_OPTIONS_VERSION,
					 LV_ARROW_OPTIONS_VERSION, err)
		    : 0;
}

int lv_arrow_options_init(lv_arrow_options *o, int version)
{
	static const lv_arrow_options defaults = LV_ARROW_OPTIONS_INIT;
	return lv__struct_init("lv_arrow_options", o, sizeof *o, &defaults, version,
				       LV_ARROW_OPTIONS_VERSION, LV_ARROW_OPTIONS_VERSION);
}

int lv__arrow_stream_new(struct ArrowArrayStream *out, lv__asource *src,
			 const lv_arrow_options *opts, lv_error *err)
{
	if (lv__arrow_opts_check(opts, err) < 0) {
		lv__arrow_source_dispose(src);
		return LV_EINVALID;
	}
	astream *s = lv__arrow_alloc(sizeof *s);
	if (!s) {
		lv__arrow_source_dispose(src);
		return lv__err(err, LV_ENOMEM, "arrow: out of memory creating a stream");
	}
	s->src = *src;
	memset(src, 0, sizeof *src);
	s->batch_rows = opts && opts->batch_rows ? opts->batch_rows : LV_ARROW_DEFAULT_BATCH_ROWS;
	s->batch_bytes = opts && opts->batch_bytes ? opts->batch_bytes : LV_ARROW_DEFAULT_BATCH_BYTES;
	if (s->batch_bytes > INT32_MAX)
		s->batch_bytes = INT32_MAX; /* Utf8 offsets are 32-bit */
	*out = (struct ArrowArrayStream){ .get_schema = get_schema, .get_next = get_next,
					  .get_last_error = get_last_error, .release = release,
					  .private_data = s };
	lv__arrow_live_add(1);
	return 0;
}
