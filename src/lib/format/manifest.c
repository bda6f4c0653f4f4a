/*
 * Manifest parser.  One streaming pass over the Manifest message computes the
 * summary counters and reports referenced files; nothing is materialised.
 * Every span is checked by the wire reader; every wire type is checked
 * against the field's declared type so a corrupt file cannot be read as
 * something else silently.
 */
#include "format/manifest.h"

#include <stdio.h>
#include <string.h>

#include "util/util.h"
#include "wire/pb.h"

#define MAX_MANIFEST_BYTES ((size_t)1 << 32)

static int corrupt(lv_error *err, const char *name, const char *what)
{
	return lv__err(err, LV_ECORRUPT, "manifest %s: %s", name, what);
}

static lv__sv sv_of(const lv__pb_field *f)
{
	lv__sv s = { (const char *)f->data, f->len };
	return s;
}

/*
 * Lance decodes manifests with prost, which refuses a `string` field that is
 * not UTF-8, a known field with the wrong wire type and a packed list whose
 * last varint runs past its end.  We check the same for every field we know,
 * including the schema (which we otherwise never need), so that a corrupt
 * manifest Lance cannot open is an error here too rather than a plausible
 * answer.  Unknown fields are skipped, as prost does.
 */
static bool is_utf8(const lv__pb_field *f) { return lv__utf8_valid(f->data, f->len); }

/* A LEN field that must hold a well-formed message: every field parses. */
static bool message_ok(const lv__pb_field *f)
{
	lv__pb r = lv__pb_sub(f);
	lv__pb_field g;
	int rc;
	while ((rc = lv__pb_next(&r, &g)) > 0) {
	}
	return rc == 0;
}

/* Packed varints: each at most 10 bytes, the last one complete. */
static bool packed_ok(const lv__pb_field *f)
{
	if (f->wire != LV_PB_LEN)
		return true;
	size_t run = 0;
	for (size_t i = 0; i < f->len; i++) {
		if (f->data[i] & 0x80) {
			if (++run >= 10)
				return false;
		} else {
			run = 0;
		}
	}
	return run == 0;
}

/* A map entry {1: key, 2: value} (or any message of string fields); `strings` is a bit
 * mask of the field numbers (1..31) that are `string` and must be UTF-8; others are bytes. */
static bool strings_ok(const lv__pb_field *f, uint32_t strings)
{
	lv__pb r = lv__pb_sub(f);
	lv__pb_field g;
	int rc;
	while ((rc = lv__pb_next(&r, &g)) > 0) {
		if (g.num < 32 && (strings >> g.num) & 1) {
			if (g.wire != LV_PB_LEN || !is_utf8(&g))
				return false;
		}
	}
	return rc == 0;
}

/* One lance.file.Field (Lance table format: lance.file.Field). */
static bool schema_field_ok(const lv__pb_field *f)
{
	lv__pb r = lv__pb_sub(f);
	lv__pb_field g;
	int rc;
	while ((rc = lv__pb_next(&r, &g)) > 0) {
		switch (g.num) {
		case 1: case 3: case 4: case 6: case 7: case 12:
			if (g.wire != LV_PB_VARINT)
				return false;
			break;
		case 2: case 5: case 9:
			if (g.wire != LV_PB_LEN || !is_utf8(&g))
				return false;
			break;
		case 8:
			if (g.wire != LV_PB_LEN || !message_ok(&g))
				return false;
			break;
		case 10: /* metadata map<string, bytes> */
			if (g.wire != LV_PB_LEN || !strings_ok(&g, 1u << 1))
				return false;
			break;
		default:
			break;
		}
	}
	return rc == 0;
}

#define EXPECT(f, w, what)                              \
	do {                                            \
		if ((f)->wire != (w))                   \
			return corrupt(err, name, what); \
	} while (0)

static int parse_deletion(const lv__pb_field *df, uint64_t frag_id, const char *name,
			  lv__deletion_ref *d, lv_error *err)
{
	lv__pb r = lv__pb_sub(df);
	lv__pb_field f;
	int rc;
	memset(d, 0, sizeof *d);
	d->fragment_id = frag_id;
	while ((rc = lv__pb_next(&r, &f)) > 0) {
		switch (f.num) {
		case 1:
			EXPECT(&f, LV_PB_VARINT, "bad DeletionFile.file_type");
			if (f.u > 1)
				return lv__err(err, LV_EUNSUPPORTED,
					       "manifest %s: unknown deletion file type %llu", name,
					       (unsigned long long)f.u);
			d->file_type = (uint32_t)f.u;
			break;
		case 2: EXPECT(&f, LV_PB_VARINT, "bad DeletionFile.read_version"); d->read_version = f.u; break;
		case 3: EXPECT(&f, LV_PB_VARINT, "bad DeletionFile.id"); d->id = f.u; break;
		case 4: EXPECT(&f, LV_PB_VARINT, "bad DeletionFile.num_deleted_rows"); d->num_deleted_rows = f.u; break;
		case 7:
			EXPECT(&f, LV_PB_VARINT, "bad DeletionFile.base_id");
			d->has_base_id = true;
			d->base_id = (uint32_t)f.u;
			break;
		default: break;
		}
	}
	return rc < 0 ? corrupt(err, name, "truncated DeletionFile") : 0;
}

static int parse_data_file(const lv__pb_field *df, const char *name, lv__data_file_ref *d,
			   lv_error *err)
{
	lv__pb r = lv__pb_sub(df);
	lv__pb_field f;
	int rc;
	memset(d, 0, sizeof *d);
	while ((rc = lv__pb_next(&r, &f)) > 0) {
		switch (f.num) {
		case 1:
			EXPECT(&f, LV_PB_LEN, "bad DataFile.path");
			if (!is_utf8(&f))
				return corrupt(err, name, "DataFile.path is not UTF-8");
			d->path = sv_of(&f);
			break;
		case 2:
		case 3:
			/* field ids / column indices: not needed for summaries; checked only */
			if ((f.wire != LV_PB_LEN && f.wire != LV_PB_VARINT) || !packed_ok(&f))
				return corrupt(err, name, "bad DataFile field list");
			break;
		case 4: case 5: EXPECT(&f, LV_PB_VARINT, "bad DataFile file version"); break;
		case 6: EXPECT(&f, LV_PB_VARINT, "bad DataFile.file_size_bytes"); d->file_size_bytes = f.u; break;
		case 7:
			EXPECT(&f, LV_PB_VARINT, "bad DataFile.base_id");
			d->has_base_id = true;
			d->base_id = (uint32_t)f.u;
			break;
		default: break;
		}
	}
	return rc < 0 ? corrupt(err, name, "truncated DataFile") : 0;
}

static int external_path(const lv__pb_field *ef, const char *name, const lv__manifest_visitor *vis,
			 lv_error *err)
{
	if (ef->wire != LV_PB_LEN)
		return corrupt(err, name, "bad ExternalFile");
	lv__pb r = lv__pb_sub(ef);
	lv__pb_field f;
	int rc;
	while ((rc = lv__pb_next(&r, &f)) > 0) {
		if (f.num == 1) {
			EXPECT(&f, LV_PB_LEN, "bad ExternalFile.path");
			if (!is_utf8(&f))
				return corrupt(err, name, "ExternalFile.path is not UTF-8");
			if (vis && vis->external_file) {
				int v = vis->external_file(sv_of(&f), vis->payload);
				if (v < 0)
					return v;
			}
		}
	}
	return rc < 0 ? corrupt(err, name, "truncated ExternalFile") : 0;
}

/*
 * One DataOverlayFile (DataFragment.overlays, field 11; Lance 11+, reader/writer flag 64): its
 * data file (field 1) is a referenced data file, reported to the visitor; the summary does not
 * count it (Lance 14's ManifestSummary counts the base files only: checked with pylance 14.0.2).
 * The coverage (2, 4) and committed_version (3) are not needed.
 */
static int parse_overlay(const lv__pb_field *of, const char *name, const lv__manifest_visitor *vis,
			 lv_error *err)
{
	lv__pb r = lv__pb_sub(of);
	lv__pb_field f;
	int rc;
	while ((rc = lv__pb_next(&r, &f)) > 0) {
		if (f.num != 1)
			continue;
		EXPECT(&f, LV_PB_LEN, "bad DataOverlayFile.data_file");
		lv__data_file_ref d;
		LV_TRY(parse_data_file(&f, name, &d, err));
		if (vis && vis->data_file) {
			int v = vis->data_file(&d, vis->payload);
			if (v < 0)
				return v;
		}
	}
	return rc < 0 ? corrupt(err, name, "truncated DataOverlayFile") : 0;
}

/* One DataFragment: accumulate the summary as Lance's ManifestSummary does. */
static int parse_fragment(const lv__pb_field *ff, const char *name, const lv__manifest_visitor *vis,
			  lv__summary *s, lv_error *err)
{
	lv__pb r = lv__pb_sub(ff);
	lv__pb_field f;
	int rc;
	uint64_t id = 0, physical_rows = 0, num_files = 0;
	bool has_deletion = false;
	lv__deletion_ref del;
	memset(&del, 0, sizeof del);
	/* The deletion file may appear before the id; remember its span. */
	lv__pb_field del_field;
	memset(&del_field, 0, sizeof del_field);

	while ((rc = lv__pb_next(&r, &f)) > 0) {
		switch (f.num) {
		case 1: EXPECT(&f, LV_PB_VARINT, "bad DataFragment.id"); id = f.u; break;
		case 2: {
			EXPECT(&f, LV_PB_LEN, "bad DataFragment.files");
			lv__data_file_ref d;
			LV_TRY(parse_data_file(&f, name, &d, err));
			num_files++;
			s->total_files_size += d.file_size_bytes; /* 0 = unknown adds nothing */
			if (vis && vis->data_file) {
				int v = vis->data_file(&d, vis->payload);
				if (v < 0)
					return v;
			}
			break;
		}
		case 3:
			EXPECT(&f, LV_PB_LEN, "bad DataFragment.deletion_file");
			has_deletion = true; /* last one wins, as in proto3 */
			del_field = f;
			break;
		case 4: EXPECT(&f, LV_PB_VARINT, "bad DataFragment.physical_rows"); physical_rows = f.u; break;
		case 6: case 8: case 10:
			LV_TRY(external_path(&f, name, vis, err));
			break;
		case 5: case 7: case 9: EXPECT(&f, LV_PB_LEN, "bad DataFragment row sequence"); break;
		case 11:
			EXPECT(&f, LV_PB_LEN, "bad DataFragment.overlays");
			LV_TRY(parse_overlay(&f, name, vis, err));
			break;
		default: break;
		}
	}
	if (rc < 0)
		return corrupt(err, name, "truncated DataFragment");
	s->total_fragments++;
	s->total_data_files += num_files;
	if (has_deletion) {
		LV_TRY(parse_deletion(&del_field, id, name, &del, err));
		s->total_deletion_files++;
		s->total_deletion_file_rows += del.num_deleted_rows;
		if (vis && vis->deletion_file) {
			int v = vis->deletion_file(&del, vis->payload);
			if (v < 0)
				return v;
		}
	}
	/* num_rows(): unknown when physical_rows is 0, or a deletion file has no count. */
	if (physical_rows != 0) {
		if (!has_deletion)
			s->total_rows += physical_rows;
		else if (del.num_deleted_rows != 0)
			s->total_rows += physical_rows >= del.num_deleted_rows
						 ? physical_rows - del.num_deleted_rows
						 : 0;
	}
	return 0;
}

static int parse_pair(const lv__pb_field *f, lv__sv *a, lv__sv *b, uint32_t na, uint32_t nb)
{
	lv__pb r = lv__pb_sub(f);
	lv__pb_field g;
	int rc;
	a->p = b->p = "";
	a->n = b->n = 0;
	while ((rc = lv__pb_next(&r, &g)) > 0) {
		if (g.wire != LV_PB_LEN)
			continue;
		if (g.num == na)
			*a = sv_of(&g);
		else if (g.num == nb)
			*b = sv_of(&g);
	}
	return rc < 0 ? -1 : 0;
}

static int parse_message(const lv__pb_field *top, const char *name, const lv__manifest_visitor *vis,
			 lv__manifest *m, lv_error *err)
{
	lv__pb r = lv__pb_sub(top);
	lv__pb_field f;
	int rc;
	while ((rc = lv__pb_next(&r, &f)) > 0) {
		switch (f.num) {
		case 1:
			EXPECT(&f, LV_PB_LEN, "bad fields");
			if (!schema_field_ok(&f))
				return corrupt(err, name, "malformed schema Field");
			m->num_fields++;
			break;
		case 4: EXPECT(&f, LV_PB_VARINT, "bad version_aux_data"); break;
		case 5:
			if (f.wire != LV_PB_LEN || !strings_ok(&f, 1u << 1))
				return corrupt(err, name, "bad schema_metadata");
			break;
		case 19:
			if (f.wire != LV_PB_LEN || !strings_ok(&f, 1u << 1 | 1u << 2))
				return corrupt(err, name, "bad table_metadata");
			break;
		case 2:
			EXPECT(&f, LV_PB_LEN, "bad fragments");
			LV_TRY(parse_fragment(&f, name, vis, &m->summary, err));
			break;
		case 3: EXPECT(&f, LV_PB_VARINT, "bad version"); m->version = f.u; break;
		case 6:
			EXPECT(&f, LV_PB_VARINT, "bad index_section");
			m->has_index_section = true;
			m->index_section = f.u;
			break;
		case 7: {
			EXPECT(&f, LV_PB_LEN, "bad timestamp");
			lv__pb t = lv__pb_sub(&f);
			lv__pb_field g;
			int trc;
			m->has_timestamp = true;
			m->ts_seconds = 0;
			m->ts_nanos = 0;
			while ((trc = lv__pb_next(&t, &g)) > 0) {
				if (g.wire != LV_PB_VARINT)
					return corrupt(err, name, "bad timestamp field");
				if (g.num == 1)
					m->ts_seconds = (int64_t)g.u;
				else if (g.num == 2)
					m->ts_nanos = (int32_t)(uint32_t)g.u;
			}
			if (trc < 0)
				return corrupt(err, name, "truncated timestamp");
			break;
		}
		case 8:
			EXPECT(&f, LV_PB_LEN, "bad tag");
			if (!is_utf8(&f))
				return corrupt(err, name, "tag is not UTF-8");
			m->tag = sv_of(&f);
			break;
		case 9: EXPECT(&f, LV_PB_VARINT, "bad reader_feature_flags"); m->reader_flags = f.u; break;
		case 10: EXPECT(&f, LV_PB_VARINT, "bad writer_feature_flags"); m->writer_flags = f.u; break;
		case 11:
			EXPECT(&f, LV_PB_VARINT, "bad max_fragment_id");
			m->has_max_fragment_id = true;
			m->max_fragment_id = (uint32_t)f.u;
			break;
		case 12:
			EXPECT(&f, LV_PB_LEN, "bad transaction_file");
			if (!is_utf8(&f))
				return corrupt(err, name, "transaction_file is not UTF-8");
			m->transaction_file = sv_of(&f);
			break;
		case 13:
			EXPECT(&f, LV_PB_LEN, "bad writer_version");
			if (parse_pair(&f, &m->writer_library, &m->writer_version, 1, 2) < 0 ||
			    !strings_ok(&f, 1u << 1 | 1u << 2 | 1u << 3 | 1u << 4))
				return corrupt(err, name, "malformed writer_version");
			break;
		case 14: EXPECT(&f, LV_PB_VARINT, "bad next_row_id"); m->next_row_id = f.u; break;
		case 15:
			EXPECT(&f, LV_PB_LEN, "bad data_format");
			if (parse_pair(&f, &m->data_format_file, &m->data_format_version, 1, 2) < 0 ||
			    !strings_ok(&f, 1u << 1 | 1u << 2))
				return corrupt(err, name, "malformed data_format");
			break;
		case 16: {
			EXPECT(&f, LV_PB_LEN, "bad config");
			lv__sv k, v;
			if (parse_pair(&f, &k, &v, 1, 2) < 0 || !strings_ok(&f, 1u << 1 | 1u << 2))
				return corrupt(err, name, "malformed config entry");
			m->num_config++;
			break;
		}
		case 18:
			EXPECT(&f, LV_PB_LEN, "bad base_paths");
			if (!strings_ok(&f, 1u << 2 | 1u << 4))
				return corrupt(err, name, "malformed base_paths entry");
			m->num_base_paths++;
			break;
		case 20:
			EXPECT(&f, LV_PB_LEN, "bad branch");
			if (!is_utf8(&f))
				return corrupt(err, name, "branch is not UTF-8");
			m->has_branch = true;
			m->branch = sv_of(&f);
			break;
		case 21: /* Lance 8 and 12; Lance 14 calls it transaction_section_deprecated */
		case 23: /* Lance 14 writes the offset here (and not in 21); it wins over 21 */
			EXPECT(&f, LV_PB_VARINT, "bad transaction_section");
			if (f.num == 23 || !m->transaction_section_v14) {
				m->has_transaction_section = true;
				m->transaction_section = f.u;
				m->transaction_section_v14 = f.num == 23;
			}
			break;
		default: break; /* unknown fields are skipped (forward compatibility) */
		}
	}
	if (rc < 0)
		return corrupt(err, name, "truncated or malformed Manifest message");
	m->summary.total_data_file_rows = m->summary.total_rows + m->summary.total_deletion_file_rows;
	return 0;
}

int lv__manifest_parse(const uint8_t *file, size_t size, const char *name,
		       const lv__manifest_visitor *vis, lv__manifest *out, lv_error *err)
{
	memset(out, 0, sizeof *out);
	out->file = file;
	out->file_size = size;
	if (size < 16 + 4)
		return lv__err(err, LV_ECORRUPT, "manifest %s: file too short (%zu bytes)", name, size);
	if (size > MAX_MANIFEST_BYTES)
		return lv__err(err, LV_ELIMIT, "manifest %s: file too large (%zu bytes)", name, size);
	if (memcmp(file + size - 4, "LANC", 4) != 0)
		return corrupt(err, name, "missing LANC magic");
	uint64_t pos = lv__le64(file + size - 16);
	if (pos > size - 16 - 4)
		return lv__err(err, LV_ECORRUPT, "manifest %s: manifest position %llu out of range",
			       name, (unsigned long long)pos);
	uint32_t len = lv__le32(file + pos);
	if ((uint64_t)len != (uint64_t)size - 16 - pos - 4)
		return lv__err(err, LV_ECORRUPT,
			       "manifest %s: message length %u does not end at the footer", name, len);
	out->manifest_pos = pos;
	out->msg = file + pos + 4;
	out->msg_len = len;
	lv__pb_field top = { .num = 0, .wire = LV_PB_LEN, .data = out->msg, .len = len };
	LV_TRY(parse_message(&top, name, vis, out, err));
	/* A manifest named for a version must hold that version (a copy under another
	 * version's name would list one version twice, and a cleanup would plan on it). */
	const char *slash = name ? strrchr(name, '/') : NULL;
	uint64_t named;
	if (name && lv__version_name_parse(slash ? slash + 1 : name, &named) != LV_NAME_NONE &&
	    named != out->version)
		return lv__err(err, LV_ECORRUPT,
			       "manifest %s: holds version %llu but its name says %llu", name,
			       (unsigned long long)out->version, (unsigned long long)named);
	if (out->reader_flags & LV_FLAG_UNSTABLE_DATA_OVERLAY_FILES)
		return lv__err(err, LV_EUNSUPPORTED,
			       "manifest %s: reader feature flag 64 (data overlay files, unstable in "
			       "Lance; its release builds refuse them too) is not supported", name);
	if (!(out->reader_flags & LV_FLAG_MIXED_DATA_FILE_VERSIONS) !=
	    !(out->writer_flags & LV_FLAG_MIXED_DATA_FILE_VERSIONS))
		return corrupt(err, name, "only one of the mixed data-file-version reader and writer "
				"feature flags (256) is set");
	if (out->reader_flags & ~(uint64_t)LV_READER_FLAGS_KNOWN)
		return lv__err(err, LV_EUNSUPPORTED,
			       "manifest %s: unknown reader feature flags 0x%llx (lancever knows 0x%x)",
			       name, (unsigned long long)(out->reader_flags & ~(uint64_t)LV_READER_FLAGS_KNOWN),
			       LV_READER_FLAGS_KNOWN);
	return 0;
}

/* Iterates repeated LEN field `num` of the manifest message, from byte offset *cursor. */
static int next_field_of(const lv__manifest *m, size_t *cursor, uint32_t num, lv__pb_field *out)
{
	if (*cursor > m->msg_len)
		return 0;
	lv__pb r = lv__pb_make(m->msg + *cursor, m->msg_len - *cursor);
	lv__pb_field f;
	int rc;
	while ((rc = lv__pb_next(&r, &f)) > 0) {
		if (f.num == num && f.wire == LV_PB_LEN) {
			*cursor = (size_t)(r.p - m->msg);
			*out = f;
			return 1;
		}
	}
	*cursor = m->msg_len + 1;
	return rc < 0 ? -1 : 0;
}

int lv__manifest_config_next(const lv__manifest *m, size_t *cursor, lv__sv *key, lv__sv *value)
{
	lv__pb_field f;
	int rc = next_field_of(m, cursor, 16, &f);
	if (rc <= 0)
		return rc;
	return parse_pair(&f, key, value, 1, 2) < 0 ? -1 : 1;
}

int lv__manifest_base_path_next(const lv__manifest *m, size_t *cursor, lv__base_path *out)
{
	lv__pb_field f;
	int rc = next_field_of(m, cursor, 18, &f);
	if (rc <= 0)
		return rc;
	memset(out, 0, sizeof *out);
	lv__pb r = lv__pb_sub(&f);
	lv__pb_field g;
	while ((rc = lv__pb_next(&r, &g)) > 0) {
		if (g.num == 1 && g.wire == LV_PB_VARINT)
			out->id = (uint32_t)g.u;
		else if (g.num == 2 && g.wire == LV_PB_LEN) {
			out->has_name = true;
			out->name = sv_of(&g);
		} else if (g.num == 3 && g.wire == LV_PB_VARINT)
			out->is_dataset_root = g.u != 0;
		else if (g.num == 4 && g.wire == LV_PB_LEN)
			out->path = sv_of(&g);
	}
	return rc < 0 ? -1 : 1;
}

/* Bounds-checked "u32 length + message" section at `off`, which must end before the manifest. */
static int section_at(const lv__manifest *m, uint64_t off, const char *name, const char *what,
		      const uint8_t **p, size_t *len, lv_error *err)
{
	if (off > m->manifest_pos || m->manifest_pos - off < 4)
		return lv__err(err, LV_ECORRUPT, "manifest %s: %s offset %llu out of range", name, what,
			       (unsigned long long)off);
	uint32_t n = lv__le32(m->file + off);
	if ((uint64_t)n > m->manifest_pos - off - 4)
		return lv__err(err, LV_ECORRUPT, "manifest %s: %s length %u overruns the manifest",
			       name, what, n);
	*p = m->file + off + 4;
	*len = n;
	return 0;
}

int lv__manifest_inline_txn(const lv__manifest *m, const char *name, const uint8_t **txn,
			    size_t *len, lv_error *err)
{
	if (!m->has_transaction_section)
		return LV_ENOTFOUND;
	return section_at(m, m->transaction_section, name, "transaction section", txn, len, err);
}

long lv__manifest_indices(const lv__manifest *m, const char *name, lv__index_cb cb, void *payload,
			  lv_error *err)
{
	if (!m->has_index_section)
		return 0;
	const uint8_t *p = NULL;
	size_t n = 0;
	LV_TRY(section_at(m, m->index_section, name, "index section", &p, &n, err));
	lv__pb r = lv__pb_make(p, n);
	lv__pb_field f;
	int rc;
	long count = 0;
	while ((rc = lv__pb_next(&r, &f)) > 0) {
		if (f.num != 1)
			continue;
		if (f.wire != LV_PB_LEN)
			return corrupt(err, name, "bad IndexSection entry");
		lv__index_ref idx;
		memset(&idx, 0, sizeof idx);
		lv__pb ir = lv__pb_sub(&f);
		lv__pb_field g;
		int irc;
		while ((irc = lv__pb_next(&ir, &g)) > 0) {
			if (g.num == 1 && g.wire == LV_PB_LEN) {
				lv__pb ur = lv__pb_sub(&g);
				lv__pb_field u;
				int urc;
				while ((urc = lv__pb_next(&ur, &u)) > 0)
					if (u.num == 1 && u.wire == LV_PB_LEN) {
						if (u.len != 16)
							return corrupt(err, name, "index uuid is not 16 bytes");
						memcpy(idx.uuid, u.data, 16);
						idx.has_uuid = true;
					}
				if (urc < 0)
					return corrupt(err, name, "truncated index uuid");
			} else if (g.num == 3 && g.wire == LV_PB_LEN) {
				idx.name = sv_of(&g);
			} else if (g.num == 4 && g.wire == LV_PB_VARINT) {
				idx.dataset_version = g.u;
			} else if (g.num == 9 && g.wire == LV_PB_VARINT) {
				idx.has_base_id = true;
				idx.base_id = (uint32_t)g.u;
			}
		}
		if (irc < 0)
			return corrupt(err, name, "truncated IndexMetadata");
		if (!idx.has_uuid)
			return corrupt(err, name, "index without uuid");
		count++;
		if (cb) {
			int v = cb(&idx, payload);
			if (v < 0)
				return v;
		}
	}
	if (rc < 0)
		return corrupt(err, name, "truncated index section");
	return count;
}

/* ---- transactions ---- */

/*
 * Transaction.operation oneof members by field number (protos/transaction.proto):
 * 100..114 as of Lance 8, 115 DataOverlay (Lance 9.1+, unstable; still the last in
 * Lance 12).  Fields 200 and 202 are reserved (former blob ops).  Any other member
 * 100..199 is a newer operation: named "Unknown(N)", never an error.
 */
static const char *const op_names[] = {
	"Append", "Delete", "Overwrite", "CreateIndex", "Rewrite", "Merge", "Restore",
	"ReserveFragments", "Update", "Project", "UpdateConfig", "DataReplacement",
	"UpdateMemWalState", "Clone", "UpdateBases", "DataOverlay",
};
#define OP_FIRST 100u
#define OP_LAST_KNOWN (OP_FIRST + sizeof op_names / sizeof op_names[0] - 1)
#define OP_LIMIT 200u /* operation members are 100..199 */

const char *lv__txn_op_name(uint32_t field)
{
	if (field < OP_FIRST || field > OP_LAST_KNOWN)
		return NULL;
	return op_names[field - OP_FIRST];
}

int lv__txn_parse(const uint8_t *msg, size_t len, const char *name, lv__txn *out, lv_error *err)
{
	memset(out, 0, sizeof *out);
	out->msg = msg;
	out->msg_len = len;
	out->uuid.p = out->tag.p = "";
	lv__pb r = lv__pb_make(msg, len);
	lv__pb_field f;
	int rc;
	while ((rc = lv__pb_next(&r, &f)) > 0) {
		switch (f.num) {
		case 1:
			if (f.wire != LV_PB_VARINT)
				goto bad;
			out->read_version = f.u;
			break;
		case 2:
			if (f.wire != LV_PB_LEN)
				goto bad;
			if (!is_utf8(&f))
				goto bad;
			out->uuid.p = (const char *)f.data;
			out->uuid.n = f.len;
			break;
		case 3:
			if (f.wire != LV_PB_LEN || !is_utf8(&f))
				goto bad;
			out->tag.p = (const char *)f.data;
			out->tag.n = f.len;
			break;
		case 4: {
			if (f.wire != LV_PB_LEN)
				goto bad;
			lv__sv k, v;
			if (parse_pair(&f, &k, &v, 1, 2) < 0 || !strings_ok(&f, 1u << 1 | 1u << 2))
				goto bad;
			out->num_properties++;
			break;
		}
		default:
			if (f.num >= OP_FIRST && f.num < OP_LIMIT) {
				if (f.wire != LV_PB_LEN)
					goto bad;
				out->op_field = f.num; /* oneof: last one wins */
			}
			break;
		}
	}
	if (rc < 0)
		goto bad;
	if (!out->op_field)
		return lv__err(err, LV_ECORRUPT, "transaction %s: no operation", name);
	out->op_name = lv__txn_op_name(out->op_field);
	if (!out->op_name) {
		snprintf(out->op_buf, sizeof out->op_buf, "Unknown(%u)", (unsigned)out->op_field);
		out->op_name = out->op_buf;
	}
	return 0;
bad:
	return lv__err(err, LV_ECORRUPT, "transaction %s: truncated or malformed", name);
}

int lv__txn_property_next(const lv__txn *t, size_t *cursor, lv__sv *key, lv__sv *value)
{
	if (*cursor > t->msg_len)
		return 0;
	lv__pb r = lv__pb_make(t->msg + *cursor, t->msg_len - *cursor);
	lv__pb_field f;
	int rc;
	while ((rc = lv__pb_next(&r, &f)) > 0) {
		if (f.num == 4 && f.wire == LV_PB_LEN) {
			*cursor = (size_t)(r.p - t->msg);
			return parse_pair(&f, key, value, 1, 2) < 0 ? -1 : 1;
		}
	}
	*cursor = t->msg_len + 1;
	return rc < 0 ? -1 : 0;
}

/* ---- commit time ---- */

int64_t lv__manifest_ts_millis(const lv__manifest *m, int64_t *nanos)
{
	/* chrono's NaiveDateTime range: -262143-01-01T00:00:00 .. +262142-12-31T23:59:59
	 * (computed per call: a lazily filled static was a data race between reader threads, and
	 * a thread could see max_s set before min_s) */
	const int64_t min_s = lv__days_from_civil(-262143, 1, 1) * 86400;
	const int64_t max_s = lv__days_from_civil(262143, 1, 1) * 86400 - 1;
	unsigned __int128 total = (unsigned __int128)(__int128)m->ts_seconds * 1000000000u +
				  (unsigned __int128)(__int128)m->ts_nanos;
	int64_t sec = (int64_t)(uint64_t)(total / 1000000000u);
	int64_t sub = (int64_t)(total % 1000000000u);
	if (nanos)
		*nanos = (int64_t)(uint64_t)total;
	if (sec < min_s || sec > max_s) {
		if (nanos)
			*nanos = 0;
		return 0;
	}
	/*
	 * LanceDB hands JavaScript a Date made from the time in microseconds as a
	 * double, divided by 1000; Date truncates the fraction.  Up to year ~2255
	 * that is exactly floor(nanos / 1e6); beyond, the microseconds no longer
	 * fit a double exactly and can round up to the next millisecond, which
	 * listVersions() shows (crafted manifests in tests/interop/test_corruption.mjs).
	 */
	int64_t micros = sec * 1000000 + sub / 1000; /* |sec| <= 8.3e12: no overflow */
	return (int64_t)((double)micros / 1000.0);
}

/* ---- version file names ---- */

int lv__version_name_parse(const char *name, uint64_t *version)
{
	size_t n = strlen(name);
	static const char suffix[] = ".manifest";
	const size_t sl = sizeof suffix - 1;
	if (n <= sl || memcmp(name + n - sl, suffix, sl) != 0 || name[0] == 'd')
		return LV_NAME_NONE;
	size_t stem = n - sl;
	uint64_t v;
	if (!lv__parse_u64(name, stem, &v))
		return LV_NAME_NONE;
	if (stem == 20) {
		*version = UINT64_MAX - v;
		return LV_NAME_V2;
	}
	*version = v;
	return LV_NAME_V1;
}

void lv__version_path(char *buf, size_t cap, uint64_t version, int scheme)
{
	if (scheme == LV_NAME_V2)
		snprintf(buf, cap, "_versions/%020llu.manifest",
			 (unsigned long long)(UINT64_MAX - version));
	else
		snprintf(buf, cap, "_versions/%llu.manifest", (unsigned long long)version);
}
