/*
 * Synthetic Lance dataset generator for the checkpoint benchmarks.
 *
 *   gen_dataset OUTDIR --versions N --fragments F [--start V] [--data-file PATH]
 *               [--data-rows R] [--base-ms T] [--recorded] [--record-batch N] [--dated]
 *
 * Writes OUTDIR/_versions/ manifests for versions V..V+N-1 (V = --start, default 1),
 * V2 names, each shaped like a Lance 8.0.0 manifest:
 *   - schema id int64, val double, name string (lance.file.Field: name, id,
 *     parent_id = -1, logical_type, nullable, encoding),
 *   - F fragments, each one DataFile {50-char path "<24 bits><26 hex>.lance",
 *     fields [0,1,2], column_indices [0,1,2], major 2, minor 1, file_size_bytes}
 *     and physical_rows (~83 bytes per fragment, as in real manifests),
 *   - timestamp T + 1000 * version ms (default T = 1700000000000),
 *   - max_fragment_id, writer_version lance/8.0.0, data_format lance/2.1,
 *   - an inline Transaction (Overwrite with the schema for version 1, else Append;
 *     read_version = version - 1, uuid derived from the version), the manifest's
 *     transaction_section pointing at it, and the same bytes in
 *     _transactions/{read_version}-{uuid}.txn,
 *   - footer u64 manifest_pos | u16 0 | u16 2 | "LANC"; and latest_version_hint.json.
 * Every version has the same F fragments (a benchmark shape, not a real history).
 *
 * --recorded: versions 1..V-1 are history only, as if a cleanup had removed them
 * after a checkpoint recorded them: their rows (exactly what their manifests would
 * say) are written by lancever's own checkpoint writer, a batch at a time
 * (lv__cp_write_extra; --record-batch rows, default 200000, the batch's newest
 * version having a manifest while it is written), so the head and the archive segments are the ones
 * lancever writes; only versions V.. have manifests.  This is how a history of
 * ten million versions fits on a disk with fewer inodes than that.
 *
 * --dated: each version's transaction file is dated (its mtime) half a second before its
 * commit time, as in a table written at that pace.  Without it the files carry the time they
 * were written, later than every version's timestamp, so cleanup's age cutoff (the earliest
 * kept version) keeps all of them.
 *
 * --data-file PATH copies a real Lance data file (e.g. a 1-row table written by
 * LanceDB with the same schema) into OUTDIR/data/ and points every fragment at it,
 * with physical_rows = --data-rows (default 1), so that LanceDB can open and read the
 * dataset.  Without it the fragments name files that do not exist (enough for
 * listing versions, not for reading rows).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <lancever/lancever.h>

#include "core/checkpoint/checkpoint_internal.h"
#include "util/util.h"
#include "wire/pb.h"

typedef struct gen_opts {
	const char *out;
	uint64_t versions;
	uint64_t fragments;
	uint64_t start;
	const char *data_file;
	uint64_t data_rows;
	int64_t base_ms;
	int recorded;
	int dated;
	uint64_t record_batch;
} gen_opts;

static void usage(void)
{
	fprintf(stderr, "usage: gen_dataset OUTDIR --versions N --fragments F [--start V]\n"
			"                   [--data-file PATH] [--data-rows R] [--base-ms T] [--recorded]\n"
			"                   [--record-batch N] [--dated]\n");
	exit(2);
}

static uint64_t parse_u64(const char *opt, const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s ? s : "", &end, 10);
	if (!s || !*s || *end || errno || s[0] == '-') {
		fprintf(stderr, "gen_dataset: %s: not a number: %s\n", opt, s ? s : "(missing)");
		exit(2);
	}
	return (uint64_t)v;
}

static uint64_t mix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

static int mkdirs(const char *path)
{
	char buf[4096];
	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return -1;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0777) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0777) && errno != EEXIST ? -1 : 0;
}

static void die_oom(const lv__dbuf *b)
{
	if (b->oom) {
		fprintf(stderr, "gen_dataset: out of memory\n");
		exit(1);
	}
}

/* Writes a whole file from up to four pieces. */
static void write_file(const char *path, const void *a, size_t na, const void *b, size_t nb,
		       const void *c, size_t nc, const void *d, size_t nd)
{
	FILE *f = fopen(path, "wb");
	if (!f) {
		fprintf(stderr, "gen_dataset: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	if ((na && fwrite(a, 1, na, f) != na) || (nb && fwrite(b, 1, nb, f) != nb) ||
	    (nc && fwrite(c, 1, nc, f) != nc) || (nd && fwrite(d, 1, nd, f) != nd) || fclose(f)) {
		fprintf(stderr, "gen_dataset: writing %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

/* Sets a file's access and modification times to ms (since the epoch). */
static void date_file(const char *path, int64_t ms)
{
	struct timespec t[2] = { { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 } };
	t[1] = t[0];
	if (utimensat(AT_FDCWD, path, t, 0) != 0) {
		fprintf(stderr, "gen_dataset: dating %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static void add_field(lv__dbuf *b, uint32_t num, const char *name, uint64_t id, const char *type, uint64_t encoding)
{
	lv__dbuf f;
	lv__dbuf_init(&f, 0);
	lv__pbw_str(&f, 2, name);
	lv__pbw_u64(&f, 3, id);
	lv__pbw_u64_always(&f, 4, UINT64_MAX); /* parent_id -1: a 10-byte varint */
	lv__pbw_str(&f, 5, type);
	lv__pbw_u64(&f, 6, 1);                 /* nullable */
	lv__pbw_u64(&f, 7, encoding);          /* 1 plain, 2 var-binary (as Lance writes) */
	die_oom(&f);
	lv__pbw_bytes(b, num, f.ptr, f.len);
	lv__dbuf_dispose(&f);
}

/* The schema as repeated Field number `num` (Manifest.fields = 1, Overwrite.schema = 2). */
static void add_schema(lv__dbuf *b, uint32_t num)
{
	add_field(b, num, "id", 0, "int64", 1);
	add_field(b, num, "val", 1, "double", 1);
	add_field(b, num, "name", 2, "string", 2);
}

/* Copies the data file into OUTDIR/data/; returns its size and its name in `name`. */
static uint64_t copy_data_file(const gen_opts *o, char *name, size_t cap)
{
	const char *base = strrchr(o->data_file, '/');
	base = base ? base + 1 : o->data_file;
	if (snprintf(name, cap, "%s", base) >= (int)cap) {
		fprintf(stderr, "gen_dataset: data file name too long\n");
		exit(2);
	}
	lv__dbuf b;
	lv__dbuf_init(&b, 0);
	FILE *f = fopen(o->data_file, "rb");
	if (!f) {
		fprintf(stderr, "gen_dataset: %s: %s\n", o->data_file, strerror(errno));
		exit(1);
	}
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		lv__dbuf_add(&b, chunk, n);
	fclose(f);
	die_oom(&b);
	char path[4096];
	snprintf(path, sizeof path, "%s/data/%s", o->out, name);
	write_file(path, b.ptr, b.len, NULL, 0, NULL, 0, NULL, 0);
	uint64_t size = b.len;
	lv__dbuf_dispose(&b);
	return size;
}

/* The schema and fragments: identical in every version, encoded once. */
static void build_body(lv__dbuf *body, const gen_opts *o, const char *data_name, uint64_t data_size)
{
	add_schema(body, 1);
	static const uint8_t idx[3] = { 0, 1, 2 };
	for (uint64_t i = 0; i < o->fragments; i++) {
		char name[256];
		if (data_name) {
			snprintf(name, sizeof name, "%s", data_name);
		} else {
			/* 24 binary digits + 26 hex digits + ".lance", like Lance's names */
			uint64_t h = mix(i), h2 = mix(i ^ 0xABCDEFull), h3 = mix(i + 77);
			for (int k = 0; k < 24; k++)
				name[k] = (char)('0' + ((h >> k) & 1));
			snprintf(name + 24, sizeof name - 24, "%016" PRIx64 "%010" PRIx64 ".lance", h2,
				 (uint64_t)(h3 & 0xFFFFFFFFFFu));
		}
		lv__dbuf df, frag;
		lv__dbuf_init(&df, 0);
		lv__pbw_str(&df, 1, name);
		lv__pbw_bytes(&df, 2, idx, 3);
		lv__pbw_bytes(&df, 3, idx, 3);
		lv__pbw_u64(&df, 4, 2);
		lv__pbw_u64(&df, 5, 1);
		lv__pbw_u64(&df, 6, data_name ? data_size : 900 + mix(i) % 100);
		lv__dbuf_init(&frag, 0);
		lv__pbw_u64(&frag, 1, i);
		lv__pbw_bytes(&frag, 2, df.ptr, df.len);
		lv__pbw_u64(&frag, 4, data_name ? o->data_rows : 1 + mix(i) % 5);
		die_oom(&df);
		die_oom(&frag);
		lv__pbw_bytes(body, 2, frag.ptr, frag.len);
		lv__dbuf_dispose(&df);
		lv__dbuf_dispose(&frag);
	}
	die_oom(body);
}

/* The transaction uuid of version v. */
static void uuid_of(uint64_t v, char *uuid, size_t cap)
{
	uint64_t h = mix(v * 31 + 7), h2 = mix(v * 131 + 3);
	snprintf(uuid, cap, "%08" PRIx64 "-%04" PRIx64 "-4%03" PRIx64 "-8%03" PRIx64 "-%012" PRIx64,
		 (uint64_t)(h >> 32), (uint64_t)((h >> 16) & 0xFFFFu), (uint64_t)(h & 0xFFFu),
		 (uint64_t)((h2 >> 52) & 0xFFFu), (uint64_t)(h2 & 0xFFFFFFFFFFFFu));
}

static void write_version(const gen_opts *o, const lv__dbuf *body, uint64_t v)
{
	char uuid[40], txname[96], path[4096];
	uuid_of(v, uuid, sizeof uuid);
	snprintf(txname, sizeof txname, "%" PRIu64 "-%s.txn", v - 1, uuid);

	lv__dbuf txn, op, man, ts, wv, fmt, file;
	lv__dbuf_init(&txn, 0);
	lv__pbw_u64(&txn, 1, v - 1);
	lv__pbw_str(&txn, 2, uuid);
	lv__dbuf_init(&op, 0);
	if (v == 1) {
		add_schema(&op, 2);             /* Overwrite {2 schema} */
		lv__pbw_bytes(&txn, 102, op.ptr, op.len);
	} else {
		lv__pbw_bytes(&txn, 100, "", 0); /* Append {} */
	}
	die_oom(&op);
	die_oom(&txn);

	/* The manifest after the shared body. */
	lv__dbuf_init(&man, 0);
	lv__pbw_u64_always(&man, 3, v);
	int64_t ms = o->base_ms + 1000 * (int64_t)v;
	lv__dbuf_init(&ts, 0);
	lv__pbw_u64(&ts, 1, (uint64_t)(ms / 1000));
	lv__pbw_u64(&ts, 2, (uint64_t)((ms % 1000) * 1000000 + (int64_t)(mix(v) % 1000000)));
	lv__pbw_bytes(&man, 7, ts.ptr ? ts.ptr : (const uint8_t *)"", ts.len);
	if (o->fragments)
		lv__pbw_u64_always(&man, 11, o->fragments - 1);
	lv__pbw_str(&man, 12, txname);
	lv__dbuf_init(&wv, 0);
	lv__pbw_str(&wv, 1, "lance");
	lv__pbw_str(&wv, 2, "8.0.0");
	lv__pbw_bytes(&man, 13, wv.ptr, wv.len);
	lv__dbuf_init(&fmt, 0);
	lv__pbw_str(&fmt, 1, "lance");
	lv__pbw_str(&fmt, 2, "2.1");
	lv__pbw_bytes(&man, 15, fmt.ptr, fmt.len);
	lv__pbw_u64_always(&man, 21, 0); /* transaction_section: the txn is at offset 0 */
	die_oom(&man);

	/* file = u32 len | txn | u32 len | body + man | u64 manifest_pos | u16 0 | u16 2 | LANC */
	lv__dbuf_init(&file, 0);
	lv__dbuf_add_u32le(&file, (uint32_t)txn.len);
	lv__dbuf_add(&file, txn.ptr, txn.len);
	uint64_t pos = file.len;
	uint64_t mlen = body->len + man.len;
	if (mlen > UINT32_MAX) {
		fprintf(stderr, "gen_dataset: manifest too large (%" PRIu64 " bytes)\n", mlen);
		exit(1);
	}
	lv__dbuf_add_u32le(&file, (uint32_t)mlen);
	lv__dbuf tail;
	lv__dbuf_init(&tail, 0);
	lv__dbuf_add(&tail, man.ptr, man.len);
	lv__dbuf_add_u64le(&tail, pos);
	lv__dbuf_add_u16le(&tail, 0);
	lv__dbuf_add_u16le(&tail, 2);
	lv__dbuf_add(&tail, "LANC", 4);
	die_oom(&file);
	die_oom(&tail);

	snprintf(path, sizeof path, "%s/_versions/%020" PRIu64 ".manifest", o->out, UINT64_MAX - v);
	write_file(path, file.ptr, file.len, body->ptr, body->len, tail.ptr, tail.len, NULL, 0);
	snprintf(path, sizeof path, "%s/_transactions/%s", o->out, txname);
	write_file(path, txn.ptr, txn.len, NULL, 0, NULL, 0, NULL, 0);
	if (o->dated)
		date_file(path, o->base_ms + 1000 * (int64_t)v - 500);

	lv__dbuf_dispose(&txn);
	lv__dbuf_dispose(&op);
	lv__dbuf_dispose(&man);
	lv__dbuf_dispose(&ts);
	lv__dbuf_dispose(&wv);
	lv__dbuf_dispose(&fmt);
	lv__dbuf_dispose(&file);
	lv__dbuf_dispose(&tail);
}

/* Removes version v's manifest and transaction file (written by write_version). */
static void remove_version(const gen_opts *o, uint64_t v)
{
	char uuid[40], path[4096];
	uuid_of(v, uuid, sizeof uuid);
	snprintf(path, sizeof path, "%s/_versions/%020" PRIu64 ".manifest", o->out, UINT64_MAX - v);
	if (remove(path))
		fprintf(stderr, "gen_dataset: remove %s: %s\n", path, strerror(errno)), exit(1);
	snprintf(path, sizeof path, "%s/_transactions/%" PRIu64 "-%s.txn", o->out, v - 1, uuid);
	if (remove(path))
		fprintf(stderr, "gen_dataset: remove %s: %s\n", path, strerror(errno)), exit(1);
}

/* Rows a batch: what a cleanup's checkpoint would hold for versions 1..start-1. */
#define RECORD_BATCH 200000

/*
 * Versions 1..o->start-1 as recorded history (see --recorded): rows exactly as
 * their manifests would give them, written by lancever's checkpoint writer.
 */
static void record_history(const gen_opts *o, const lv__dbuf *body, uint64_t data_size)
{
	uint64_t frag_size = 0, frag_rows = 0;
	for (uint64_t i = 0; i < o->fragments; i++) {
		frag_size += o->data_file ? data_size : 900 + mix(i) % 100;
		frag_rows += o->data_file ? o->data_rows : 1 + mix(i) % 5;
	}
	lv_error err = { 0 };
	lv_dataset *ds = NULL;
	if (lv_dataset_open(&ds, o->out, NULL, &err)) {
		fprintf(stderr, "gen_dataset: %s\n", err.message);
		exit(1);
	}
	uint64_t batch = o->record_batch;
	lv_version_info *rows = calloc(batch, sizeof *rows);
	char(*uuids)[40] = calloc(batch, sizeof *uuids);
	for (uint64_t first = 1; first < o->start; first += batch) {
		uint64_t n = o->start - first < batch ? o->start - first : batch;
		for (uint64_t i = 0; i < n; i++) {
			uint64_t v = first + i;
			lv_version_info *r = &rows[i];
			uuid_of(v, uuids[i], sizeof uuids[i]);
			*r = (lv_version_info){ .version = v, .timestamp_millis = o->base_ms + 1000 * (int64_t)v,
						 .total_fragments = o->fragments, .total_data_files = o->fragments,
						 .total_files_size = frag_size, .total_data_file_rows = frag_rows,
						 .total_rows = frag_rows, .transaction_uuid = uuids[i],
						 .has_read_version = true, .read_version = v - 1,
						 .operation_type = v == 1 ? "Overwrite" : "Append",
						 .transaction_properties = "{}" };
		}
		/* The batch's newest version stands committed while it is recorded: a writer seals
		 * only cells whose versions are all committed and skips empty ones, so versions not
		 * yet committed must not be seen as history that was never recorded. */
		write_version(o, body, first + n - 1);
		lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
		if (lv__cp_write_extra(ds, NULL, rows, (size_t)n, NULL, &r, &err)) {
			fprintf(stderr, "gen_dataset: recording versions %" PRIu64 "..: %s\n", first, err.message);
			exit(1);
		}
		remove_version(o, first + n - 1);
	}
	free(rows);
	free(uuids);
	lv_dataset_free(ds);
}

int main(int argc, char **argv)
{
	gen_opts o = { .start = 1, .data_rows = 1, .record_batch = RECORD_BATCH, .base_ms = 1700000000000ll };
	int have_v = 0, have_f = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--versions")) {
			o.versions = parse_u64(a, val), have_v = 1, i++;
		} else if (!strcmp(a, "--fragments")) {
			o.fragments = parse_u64(a, val), have_f = 1, i++;
		} else if (!strcmp(a, "--start")) {
			o.start = parse_u64(a, val), i++;
		} else if (!strcmp(a, "--data-rows")) {
			o.data_rows = parse_u64(a, val), i++;
		} else if (!strcmp(a, "--record-batch")) {
			o.record_batch = parse_u64(a, val), i++;
		} else if (!strcmp(a, "--recorded")) {
			o.recorded = 1;
		} else if (!strcmp(a, "--dated")) {
			o.dated = 1;
		} else if (!strcmp(a, "--base-ms")) {
			o.base_ms = (int64_t)parse_u64(a, val), i++;
		} else if (!strcmp(a, "--data-file")) {
			if (!val)
				usage();
			o.data_file = val, i++;
		} else if (a[0] == '-' || o.out) {
			usage();
		} else {
			o.out = a;
		}
	}
	if (!o.out || !have_v || !have_f || o.start == 0 || o.record_batch == 0)
		usage();

	char path[4096];
	const char *subdirs[] = { "_versions", "_transactions", "data" };
	for (size_t k = 0; k < 3; k++) {
		snprintf(path, sizeof path, "%s/%s", o.out, subdirs[k]);
		if (mkdirs(path)) {
			fprintf(stderr, "gen_dataset: mkdir %s: %s\n", path, strerror(errno));
			return 1;
		}
	}
	char data_name[256];
	uint64_t data_size = 0;
	if (o.data_file)
		data_size = copy_data_file(&o, data_name, sizeof data_name);

	lv__dbuf body;
	lv__dbuf_init(&body, 0);
	build_body(&body, &o, o.data_file ? data_name : NULL, data_size);
	uint64_t last = o.start + o.versions - 1;
	if (o.recorded && o.start > 1)
		record_history(&o, &body, data_size);
	for (uint64_t v = o.start; v <= last; v++)
		write_version(&o, &body, v);
	if (o.versions) {
		char hint[64];
		int n = snprintf(hint, sizeof hint, "{\"version\":%" PRIu64 "}", last);
		snprintf(path, sizeof path, "%s/_versions/latest_version_hint.json", o.out);
		write_file(path, hint, (size_t)n, NULL, 0, NULL, 0, NULL, 0);
	}
	fprintf(stderr, "gen_dataset: %s: versions %" PRIu64 "..%" PRIu64 ", %" PRIu64
		" fragments, manifest body %zu bytes\n", o.out, o.start, last, o.fragments, body.len);
	lv__dbuf_dispose(&body);
	return 0;
}
