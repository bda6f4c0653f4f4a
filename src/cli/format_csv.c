/*
 * --format csv: an Arrow C stream written as CSV (RFC 4180 quoting, "\n" line
 * ends).  One header line of column names, then one line per row.  A null is
 * an empty field; an empty string is "" (quoted), so the two stay apart;
 * strings holding a comma, a quote, CR or LF are quoted with quotes doubled;
 * booleans are true/false; integers are decimal, and so are timestamps
 * (milliseconds since the epoch, the column timestamp_millis).  Reads the columns
 * the library exports (UInt64, Int64, Timestamp(ms, UTC), Boolean, Utf8), honouring
 * array offsets.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static bool is_valid(const struct ArrowArray *a, int64_t i)
{
	const uint8_t *v = a->buffers[0];
	return !v || a->null_count == 0 || ((v[i / 8] >> (i % 8)) & 1);
}

/* A cell with a control character, shown on a terminal: escaped as the CLI's text output is
 * (lvcli_esc), so no byte from disk reaches a terminal raw; a file or a pipe gets the bytes. */
static bool tty_unsafe(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return isatty(fileno(f));
	return false;
}

void lvcli_csv_field(FILE *f, const char *s, size_t n)
{
	if (n && !memchr(s, ',', n) && !memchr(s, '"', n) && !memchr(s, '\n', n) &&
	    !memchr(s, '\r', n)) {
		fwrite(s, 1, n, f);
		return;
	}
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			fputc('"', f);
		fputc(s[i], f);
	}
	fputc('"', f);
}

static void csv_string(FILE *f, const char *s, size_t n)
{
	if (tty_unsafe(f, s, n)) {
		char *copy = strndup(s, n);
		const char *e = copy ? lvcli_esc(copy) : "?";
		lvcli_csv_field(f, e, strlen(e));
		free(copy);
		return;
	}
	lvcli_csv_field(f, s, n);
}

/* One cell; the column's format was checked by check_schema. */
static void csv_cell(FILE *f, const char *format, const struct ArrowArray *a, int64_t i)
{
	if (!is_valid(a, i))
		return;
	switch (format[0]) {
	case 'L':
		fprintf(f, "%" PRIu64, ((const uint64_t *)a->buffers[1])[i]);
		break;
	case 'l':
	case 't': /* "tsm:UTC" */
		fprintf(f, "%" PRId64, ((const int64_t *)a->buffers[1])[i]);
		break;
	case 'b':
		fputs((((const uint8_t *)a->buffers[1])[i / 8] >> (i % 8)) & 1 ? "true" : "false", f);
		break;
	default: {
		const int32_t *o = a->buffers[1];
		csv_string(f, (const char *)a->buffers[2] + o[i], (size_t)(o[i + 1] - o[i]));
	}
	}
}

static int check_schema(const struct ArrowSchema *s, lv_error *err)
{
	if (strcmp(s->format, "+s"))
		goto bad;
	for (int64_t c = 0; c < s->n_children; c++) {
		const char *fmt = s->children[c]->format;
		if (strcmp(fmt, "L") && strcmp(fmt, "l") && strcmp(fmt, "tsm:UTC") && strcmp(fmt, "b") && strcmp(fmt, "u"))
			goto bad;
	}
	return 0;
bad:
	snprintf(err->message, sizeof err->message, "csv: unsupported column type");
	return err->code = LV_EUNSUPPORTED;
}

static int stream_failed(struct ArrowArrayStream *s, lv_error *err)
{
	const char *m = s->get_last_error(s);
	snprintf(err->message, sizeof err->message, "csv: %s", m ? m : "stream error");
	return err->code = LV_EIO;
}

static int write_rows(struct ArrowArrayStream *s, const struct ArrowSchema *schema, FILE *f,
		      lv_error *err)
{
	for (;;) {
		struct ArrowArray b;
		if (s->get_next(s, &b))
			return stream_failed(s, err);
		if (!b.release)
			return 0;
		for (int64_t k = 0; k < b.length; k++) {
			for (int64_t c = 0; c < b.n_children; c++) {
				const struct ArrowArray *a = b.children[c];
				if (c)
					fputc(',', f);
				csv_cell(f, schema->children[c]->format, a, a->offset + b.offset + k);
			}
			fputc('\n', f);
		}
		b.release(&b);
		if (ferror(f) && f == stdout) /* a reader that went away: stop now, quietly */
			lvcli_check_pipe(lvcli_stdout_error());
	}
}

int lvcli_write_csv(struct ArrowArrayStream *s, FILE *f, lv_error *err)
{
	return lvcli_write_csv_part(s, f, true, err);
}

int lvcli_write_csv_part(struct ArrowArrayStream *s, FILE *f, bool header, lv_error *err)
{
	struct ArrowSchema schema = { 0 };
	int rc = s->get_schema(s, &schema) ? stream_failed(s, err) : 0;
	if (rc == 0 && (rc = check_schema(&schema, err)) == 0) {
		for (int64_t c = 0; header && c < schema.n_children; c++) {
			if (c)
				fputc(',', f);
			const char *name = schema.children[c]->name;
			csv_string(f, name, strlen(name));
		}
		if (header)
			fputc('\n', f);
		rc = write_rows(s, &schema, f, err);
	}
	if (schema.release)
		schema.release(&schema);
	s->release(s);
	return rc;
}
