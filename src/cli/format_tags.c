/*
 * The tags column of --format arrow (issue 29): a version list's Arrow stream (the library's,
 * columns version and is_tagged among them) passed on with one more column, tags: Utf8,
 * nullable, the version's tag names joined with "," as the table's TAGS column joins them
 * (the names as they are), null when it has none.  The library's 22 columns stay as they are,
 * so a consumer of lv_*_arrow_stream sees no change; only the CLI's output gains the column.
 *
 * Invariants: the wrapper moves the library's children into schemas and batches of its own (the
 * Arrow C Data Interface's move: the struct copied, the original marked released), so every
 * object it hands out is released by its own callback, in any order; a failure of the inner
 * stream is passed on with its message; the tag names come from the command's refs
 * (lvcli_tags_of), read only when a version is tagged.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct tstream {
	struct ArrowArrayStream in;
	lvcli_refctx *tags;
	int64_t vcol, tcol; /* the version and is_tagged columns */
	char error[300];
} tstream;

size_t lvcli_tags_join(lvcli_refctx *tags, uint64_t version, bool is_tagged, char *buf, size_t cap)
{
	lv_version_info v = { .version = version, .is_tagged = is_tagged };
	const char *names[16];
	size_t n = tags ? lvcli_tags_of(tags, &v, names, 16) : 0, len = 0;
	buf[0] = 0;
	for (size_t i = 0; i < n && len + 1 < cap; i++) {
		int w = snprintf(buf + len, cap - len, "%s%s", i ? "," : "", names[i]);
		len += w < 0 ? 0 : (size_t)w;
	}
	if (len >= cap) { /* cut short */
		len = cap - 1;
		if (cap > 4)
			memcpy(buf + cap - 4, "...", 4);
	}
	return len;
}

/* ---- the schema: the library's children moved into one more ---- */

static void child_schema_release(struct ArrowSchema *s)
{
	s->release = NULL;
}

static void schema_release(struct ArrowSchema *s)
{
	for (int64_t i = 0; i < s->n_children; i++) {
		if (s->children[i]->release)
			s->children[i]->release(s->children[i]);
		free(s->children[i]);
	}
	free(s->children);
	free((void *)s->name);
	free((void *)s->metadata);
	s->release = NULL;
}

/* Bytes of a C Data Interface metadata blob (int32 count, then length-prefixed pairs). */
static size_t metadata_size(const char *m)
{
	int32_t n, len;
	size_t at = 4;
	memcpy(&n, m, 4);
	for (int32_t i = 0; i < 2 * n; i++) {
		memcpy(&len, m + at, 4);
		at += 4 + (size_t)len;
	}
	return at;
}

/* The columns `name` of a struct schema, or -1. */
static int64_t column(const struct ArrowSchema *s, const char *name)
{
	for (int64_t c = 0; c < s->n_children; c++)
		if (s->children[c]->name && !strcmp(s->children[c]->name, name))
			return c;
	return -1;
}

static int move_schema(struct ArrowSchema *out, struct ArrowSchema *in)
{
	int64_t n = in->n_children;
	size_t msize = in->metadata ? metadata_size(in->metadata) : 0;
	*out = (struct ArrowSchema){ .format = "+s", .flags = in->flags, .n_children = n + 1,
				     .release = schema_release };
	out->children = calloc((size_t)n + 1, sizeof *out->children);
	out->name = strdup(in->name ? in->name : "");
	out->metadata = msize ? malloc(msize) : NULL;
	for (int64_t i = 0; out->children && i <= n; i++)
		out->children[i] = calloc(1, sizeof **out->children);
	bool ok = out->children && out->name && (!msize || out->metadata);
	for (int64_t i = 0; ok && i <= n; i++)
		ok = out->children[i] != NULL;
	if (!ok) {
		out->n_children = out->children ? n + 1 : 0;
		schema_release(out);
		in->release(in);
		return ENOMEM;
	}
	if (msize)
		memcpy((void *)out->metadata, in->metadata, msize);
	for (int64_t i = 0; i < n; i++) { /* moved: the original is marked released */
		*out->children[i] = *in->children[i];
		in->children[i]->release = NULL;
	}
	*out->children[n] = (struct ArrowSchema){ .format = "u", .name = "tags",
						  .flags = ARROW_FLAG_NULLABLE,
						  .release = child_schema_release };
	in->release(in);
	return 0;
}

/* ---- a batch: the library's children and the tags array ---- */

typedef struct tags_bufs {
	uint8_t *valid;
	int32_t *offsets;
	char *data;
	const void *buffers[3];
} tags_bufs;

static void tags_release(struct ArrowArray *a)
{
	tags_bufs *t = a->private_data;
	free(t->valid);
	free(t->offsets);
	free(t->data);
	free(t);
	a->release = NULL;
}

static void batch_release(struct ArrowArray *a)
{
	for (int64_t i = 0; i < a->n_children; i++) {
		if (a->children[i]->release)
			a->children[i]->release(a->children[i]);
		free(a->children[i]);
	}
	free(a->children);
	free(a->buffers);
	a->release = NULL;
}

/* The tags of rows [0, n) of the batch (rows before `skip`, the batch's offset, are null). */
static int tags_array(tstream *t, const struct ArrowArray *b, int64_t n, int64_t skip,
		      struct ArrowArray *out)
{
	const struct ArrowArray *va = b->children[t->vcol], *ta = b->children[t->tcol];
	tags_bufs *tb = calloc(1, sizeof *tb);
	size_t cap = 1024, used = 0;
	int64_t nulls = 0;
	if (!tb || !(tb->valid = calloc((size_t)n / 8 + 1, 1)) ||
	    !(tb->offsets = calloc((size_t)n + 1, sizeof *tb->offsets)) || !(tb->data = malloc(cap)))
		goto oom;
	for (int64_t k = 0; k < n; k++) {
		char name[1024];
		size_t len = 0;
		if (k >= skip) {
			int64_t vi = va->offset + k, ti = ta->offset + k;
			bool tagged = (((const uint8_t *)ta->buffers[1])[ti / 8] >> (ti % 8)) & 1;
			len = lvcli_tags_join(t->tags, ((const uint64_t *)va->buffers[1])[vi], tagged, name,
					      sizeof name);
		}
		if (used + len > (size_t)INT32_MAX)
			goto oom;
		if (used + len > cap) {
			char *nd = realloc(tb->data, cap = 2 * (used + len));
			if (!nd)
				goto oom;
			tb->data = nd;
		}
		memcpy(tb->data + used, name, len);
		used += len;
		tb->offsets[k + 1] = (int32_t)used;
		if (len)
			tb->valid[k / 8] |= (uint8_t)(1u << (k % 8));
		else
			nulls++;
	}
	tb->buffers[0] = tb->valid;
	tb->buffers[1] = tb->offsets;
	tb->buffers[2] = tb->data;
	*out = (struct ArrowArray){ .length = n, .null_count = nulls, .n_buffers = 3,
				    .buffers = tb->buffers, .release = tags_release, .private_data = tb };
	return 0;
oom:
	if (tb) {
		free(tb->valid);
		free(tb->offsets);
		free(tb->data);
	}
	free(tb);
	return ENOMEM;
}

static int move_batch(tstream *t, struct ArrowArray *out, struct ArrowArray *in)
{
	int64_t n = in->n_children, rows = in->offset + in->length;
	*out = (struct ArrowArray){ .length = in->length, .offset = in->offset, .n_buffers = 1,
				    .n_children = n + 1, .release = batch_release };
	out->buffers = calloc(1, sizeof *out->buffers);
	out->children = calloc((size_t)n + 1, sizeof *out->children);
	bool ok = out->buffers && out->children && in->null_count == 0;
	for (int64_t i = 0; ok && i <= n; i++)
		ok = (out->children[i] = calloc(1, sizeof **out->children)) != NULL;
	if (ok && tags_array(t, in, rows, in->offset, out->children[n]) != 0)
		ok = false;
	if (!ok) {
		out->n_children = out->children ? n + 1 : 0;
		batch_release(out);
		in->release(in);
		return ENOMEM;
	}
	for (int64_t i = 0; i < n; i++) {
		*out->children[i] = *in->children[i];
		in->children[i]->release = NULL;
	}
	in->release(in);
	return 0;
}

/* ---- the stream ---- */

static int t_get_schema(struct ArrowArrayStream *st, struct ArrowSchema *out)
{
	tstream *t = st->private_data;
	struct ArrowSchema in;
	int rc = t->in.get_schema(&t->in, &in);
	return rc ? rc : move_schema(out, &in);
}

static int t_get_next(struct ArrowArrayStream *st, struct ArrowArray *out)
{
	tstream *t = st->private_data;
	struct ArrowArray in;
	int rc = t->in.get_next(&t->in, &in);
	if (rc)
		return rc;
	if (!in.release) {
		*out = in; /* the end */
		return 0;
	}
	return move_batch(t, out, &in);
}

static const char *t_get_last_error(struct ArrowArrayStream *st)
{
	tstream *t = st->private_data;
	const char *m = t->in.get_last_error(&t->in);
	return m ? m : "lancever: out of memory adding the tags column";
}

static void t_release(struct ArrowArrayStream *st)
{
	tstream *t = st->private_data;
	t->in.release(&t->in);
	free(t);
	st->release = NULL;
}

int lvcli_tags_stream(struct ArrowArrayStream *out, struct ArrowArrayStream *in, lvcli_refctx *tags,
		      lv_error *err)
{
	struct ArrowSchema s = { 0 };
	int64_t vcol = -1, tcol = -1;
	if (tags && in->get_schema(in, &s) == 0) {
		vcol = column(&s, "version");
		tcol = column(&s, "is_tagged");
		if (column(&s, "tags") >= 0 || (vcol >= 0 && strcmp(s.children[vcol]->format, "L")) ||
		    (tcol >= 0 && strcmp(s.children[tcol]->format, "b")))
			vcol = -1;
	}
	if (s.release)
		s.release(&s);
	if (vcol < 0 || tcol < 0) { /* not a version list: as it is */
		*out = *in;
		in->release = NULL;
		return 0;
	}
	tstream *t = calloc(1, sizeof *t);
	if (!t) {
		in->release(in);
		snprintf(err->message, sizeof err->message, "out of memory");
		return err->code = LV_ENOMEM;
	}
	*t = (tstream){ .in = *in, .tags = tags, .vcol = vcol, .tcol = tcol };
	in->release = NULL;
	*out = (struct ArrowArrayStream){ .get_schema = t_get_schema, .get_next = t_get_next,
					  .get_last_error = t_get_last_error, .release = t_release,
					  .private_data = t };
	return 0;
}
