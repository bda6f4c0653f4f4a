/*
 * Schema and record-batch export (Arrow C Data Interface) for a table
 * described by lv__acol columns and a cell getter.
 *
 * Invariants:
 *  - Every exported object owns its memory: a parent's block holds only its
 *    own buffer pointers and its children's structs; each child array's block
 *    holds its buffers.  So a consumer may move a child out of its parent and
 *    keep it after releasing the parent (the spec's "move" of children), and
 *    releases may come in any order.
 *  - A release callback releases the children still owned (release != NULL),
 *    frees its block, sets its own release to NULL and counts one object gone.
 *  - Buffers are 64-byte aligned; a column without nulls has no validity
 *    buffer (NULL, null_count 0); Utf8 uses 32-bit offsets starting at 0.
 */
#include <stdint.h>
#include <string.h>

#include "arrow/arrow_internal.h"

static const char *const FORMATS[] = { [LV__A_U64] = "L", [LV__A_I64] = "l",
				       [LV__A_BOOL] = "b", [LV__A_UTF8] = "u",
				       [LV__A_TS_MS] = "tsm:UTC" };

static size_t round64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

/* ---- metadata blob: int32 n, then n × (int32 len, key bytes, int32 len, value bytes) ---- */

static void put_i32(char **p, int32_t v)
{
	memcpy(*p, &v, 4);
	*p += 4;
}

char *lv__arrow_metadata(const char *const *keys, const char *const *values, size_t n)
{
	size_t total = 4;
	for (size_t i = 0; i < n; i++) {
		size_t kl = strlen(keys[i]), vl = strlen(values[i]);
		if (kl > INT32_MAX || vl > INT32_MAX || total > SIZE_MAX / 2)
			return NULL;
		total += 8 + kl + vl;
	}
	if (n > INT32_MAX)
		return NULL;
	char *md = lv__arrow_alloc(total), *p = md;
	if (!md)
		return NULL;
	put_i32(&p, (int32_t)n);
	for (size_t i = 0; i < n; i++) {
		size_t kl = strlen(keys[i]), vl = strlen(values[i]);
		put_i32(&p, (int32_t)kl);
		memcpy(p, keys[i], kl);
		p += kl;
		put_i32(&p, (int32_t)vl);
		memcpy(p, values[i], vl);
		p += vl;
	}
	return md;
}

/* Length in bytes of a metadata blob we encoded (0 for NULL). */
static size_t metadata_len(const char *md)
{
	if (!md)
		return 0;
	int32_t n, l;
	const char *p = md;
	memcpy(&n, p, 4);
	p += 4;
	for (int32_t i = 0; i < 2 * n; i++) {
		memcpy(&l, p, 4);
		p += 4 + l;
	}
	return (size_t)(p - md);
}

/* The release callback of each exported type, for parents and children alike (a child has
 * no children; a child schema has no block): see the invariants above. */
#define RELEASE_FN(NAME, TYPE)                                           \
	static void NAME(struct TYPE *x)                                 \
	{                                                                \
		for (int64_t i = 0; i < x->n_children; i++)              \
			if (x->children[i]->release)                     \
				x->children[i]->release(x->children[i]); \
		lv__arrow_free(x->private_data);                         \
		x->release = NULL;                                       \
		lv__arrow_live_add(-1);                                  \
	}
RELEASE_FN(schema_release, ArrowSchema)
RELEASE_FN(array_release, ArrowArray)

/* ---- schema ---- */

int lv__arrow_schema_export(struct ArrowSchema *out, const lv__acol *cols, size_t ncols,
			    const char *metadata)
{
	size_t ptrs = ncols * sizeof(struct ArrowSchema *);
	size_t kids = ncols * sizeof(struct ArrowSchema);
	size_t mdl = metadata_len(metadata);
	uint8_t *block = lv__arrow_alloc(ptrs + kids + mdl);
	if (!block)
		return ENOMEM;
	struct ArrowSchema **ptr = (struct ArrowSchema **)block;
	struct ArrowSchema *kid = (struct ArrowSchema *)(block + ptrs);
	char *md = mdl ? (char *)block + ptrs + kids : NULL;
	if (mdl)
		memcpy(md, metadata, mdl);
	for (size_t i = 0; i < ncols; i++) {
		kid[i] = (struct ArrowSchema){
			.format = FORMATS[cols[i].type],
			.name = cols[i].name,
			.flags = cols[i].nullable ? ARROW_FLAG_NULLABLE : 0,
			.release = schema_release,
		};
		ptr[i] = &kid[i];
	}
	*out = (struct ArrowSchema){ .format = "+s", .name = "", .metadata = md,
				     .n_children = (int64_t)ncols, .children = ptr,
				     .release = schema_release, .private_data = block };
	lv__arrow_live_add(1 + (int64_t)ncols);
	return 0;
}

/* ---- record batches ---- */

/* Sizes of one column's buffers over the batch's rows. */
typedef struct col_plan {
	size_t nulls, validity, values, data; /* data: Utf8 bytes */
} col_plan;

static int plan_column(const lv__asource *src, size_t c, size_t first, size_t count, col_plan *p)
{
	memset(p, 0, sizeof *p);
	const lv__acol *col = &src->cols[c];
	for (size_t r = first; r < first + count; r++) {
		lv__aval v = { 0 };
		bool present = src->get(src->rows, r, c, &v);
		if (!present && col->nullable)
			p->nulls++;
		else if (present && col->type == LV__A_UTF8)
			p->data += v.n;
	}
	if (p->data > INT32_MAX)
		return EOVERFLOW;
	p->validity = p->nulls ? (count + 7) / 8 : 0;
	switch (col->type) {
	case LV__A_BOOL:
		p->values = (count + 7) / 8;
		break;
	case LV__A_UTF8:
		p->values = 4 * (count + 1);
		break;
	default:
		p->values = 8 * count;
	}
	return 0;
}

static void set_bit(uint8_t *bits, size_t i)
{
	bits[i / 8] |= (uint8_t)(1u << (i % 8));
}

/* Writes the column's cells into its buffers (zeroed by the allocator). */
static void fill_column(const lv__asource *src, size_t c, size_t first, size_t count,
			uint8_t *validity, uint8_t *values, uint8_t *data)
{
	const lv__acol *col = &src->cols[c];
	int32_t off = 0;
	for (size_t k = 0; k < count; k++) {
		lv__aval v = { 0 };
		bool present = src->get(src->rows, first + k, c, &v);
		if (validity && present)
			set_bit(validity, k);
		if (!present) {
			if (col->type == LV__A_UTF8)
				memcpy(values + 4 * (k + 1), &off, 4);
			continue;
		}
		switch (col->type) {
		case LV__A_U64:
			memcpy(values + 8 * k, &v.u, 8);
			break;
		case LV__A_I64:
		case LV__A_TS_MS:
			memcpy(values + 8 * k, &v.i, 8);
			break;
		case LV__A_BOOL:
			if (v.b)
				set_bit(values, k);
			break;
		case LV__A_UTF8:
			memcpy(data + off, v.s, v.n);
			off += (int32_t)v.n;
			memcpy(values + 4 * (k + 1), &off, 4);
			break;
		}
	}
}

/* Allocates and fills one child array; 0 or ENOMEM. */
static int export_column(struct ArrowArray *out, const lv__asource *src, size_t c, size_t first,
			 size_t count, const col_plan *p)
{
	int nbuf = src->cols[c].type == LV__A_UTF8 ? 3 : 2;
	size_t hdr = round64(3 * sizeof(void *));
	size_t vo = hdr, va = vo + round64(p->validity), da = va + round64(p->values);
	uint8_t *block = lv__arrow_alloc(da + p->data);
	if (!block)
		return ENOMEM;
	const void **bufs = (const void **)block;
	uint8_t *validity = p->nulls ? block + vo : NULL;
	fill_column(src, c, first, count, validity, block + va, block + da);
	bufs[0] = validity;
	bufs[1] = block + va;
	bufs[2] = block + da;
	*out = (struct ArrowArray){ .length = (int64_t)count, .null_count = (int64_t)p->nulls,
				    .n_buffers = nbuf, .buffers = bufs,
				    .release = array_release, .private_data = block };
	lv__arrow_live_add(1);
	return 0;
}

int lv__arrow_batch_export(struct ArrowArray *out, const lv__asource *src, size_t first,
			   size_t count)
{
	size_t n = src->ncols;
	size_t hdr = round64(sizeof(void *)), ptrs = n * sizeof(struct ArrowArray *);
	uint8_t *block = lv__arrow_alloc(hdr + ptrs + n * sizeof(struct ArrowArray));
	if (!block)
		return ENOMEM;
	struct ArrowArray **ptr = (struct ArrowArray **)(block + hdr);
	struct ArrowArray *kid = (struct ArrowArray *)(block + hdr + ptrs);
	*out = (struct ArrowArray){ .length = (int64_t)count, .n_buffers = 1,
				    .n_children = (int64_t)n, .buffers = (const void **)block,
				    .children = ptr, .release = array_release,
				    .private_data = block };
	int rc = 0;
	size_t done = 0;
	for (; done < n && rc == 0; done++) {
		col_plan p;
		ptr[done] = &kid[done];
		rc = plan_column(src, done, first, count, &p);
		if (rc == 0)
			rc = export_column(&kid[done], src, done, first, count, &p);
	}
	if (rc) {
		/* kid[] was zeroed: the failed child and those after it have no release. */
		for (size_t i = 0; i < done; i++)
			if (kid[i].release)
				array_release(&kid[i]);
		lv__arrow_free(block);
		out->release = NULL;
		return rc;
	}
	lv__arrow_live_add(1);
	return 0;
}
