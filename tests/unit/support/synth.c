#include "support/synth.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "support/testutil.h"
#include "util/util.h"
#include "wire/pb.h"

static int add_map(lv__dbuf *b, uint32_t field, const char *const *kv)
{
	for (size_t i = 0; kv && kv[i]; i += 2) {
		lv__dbuf e;
		lv__dbuf_init(&e, 0);
		lv__pbw_str(&e, 1, kv[i]);
		lv__pbw_str(&e, 2, kv[i + 1]);
		int rc = lv__pbw_bytes(b, field, e.ptr ? e.ptr : (uint8_t *)"", e.len);
		lv__dbuf_dispose(&e);
		if (rc)
			return rc;
	}
	return 0;
}

const char *synth_manifest_path(char *buf, size_t cap, uint64_t version)
{
	snprintf(buf, cap, "_versions/%020llu.manifest", (unsigned long long)(UINT64_MAX - version));
	return buf;
}

void synth_add_manifest(lv__dbuf *file, const lv__dbuf *man)
{
	uint64_t pos = file->len;
	lv__dbuf_add_u32le(file, (uint32_t)man->len);
	lv__dbuf_add(file, man->ptr, man->len);
	lv__dbuf_add_u64le(file, pos);
	lv__dbuf_add_u16le(file, 0);
	lv__dbuf_add_u16le(file, 2);
	lv__dbuf_add(file, "LANC", 4);
}

int synth_write(lv_storage *st, const synth_commit *c)
{
	char uuid[64], path[96], txname[128];
	if (c->uuid)
		snprintf(uuid, sizeof uuid, "%s", c->uuid);
	else
		snprintf(uuid, sizeof uuid, "00000000-0000-4000-8000-%012llu", (unsigned long long)c->version);
	snprintf(txname, sizeof txname, "%llu-%s.txn", (unsigned long long)c->read_version, uuid);

	lv__dbuf txn, man, frag, df, ts, file;
	lv__dbuf_init(&txn, 0);
	lv__pbw_u64(&txn, 1, c->read_version);
	lv__pbw_str(&txn, 2, uuid);
	add_map(&txn, 4, c->props);
	lv__pbw_bytes(&txn, c->op_field ? c->op_field : 100, "", 0);

	lv__dbuf_init(&df, 0);
	lv__pbw_str(&df, 1, c->data_path ? c->data_path : "data.lance");
	lv__pbw_u64(&df, 6, 1000 + c->version);
	lv__dbuf_init(&frag, 0);
	lv__pbw_bytes(&frag, 2, df.ptr, df.len);
	lv__pbw_u64(&frag, 4, c->rows ? c->rows : c->version * 10);
	if (c->overlay_path) { /* DataOverlayFile{1: DataFile{1: path, 6: size}, 3: version} */
		lv__dbuf odf, ov;
		lv__dbuf_init(&odf, 0);
		lv__dbuf_init(&ov, 0);
		lv__pbw_str(&odf, 1, c->overlay_path);
		lv__pbw_u64(&odf, 6, 77);
		lv__pbw_bytes(&ov, 1, odf.ptr, odf.len);
		lv__pbw_u64(&ov, 3, c->version);
		lv__pbw_bytes(&frag, 11, ov.ptr, ov.len);
		lv__dbuf_dispose(&odf);
		lv__dbuf_dispose(&ov);
	}
	lv__dbuf_init(&ts, 0);
	lv__pbw_u64(&ts, 1, (uint64_t)(c->ts_ms / 1000));
	lv__pbw_u64(&ts, 2, (uint64_t)((c->ts_ms % 1000) * 1000000));

	lv__dbuf_init(&man, 0);
	lv__pbw_bytes(&man, 2, frag.ptr, frag.len);
	lv__pbw_u64_always(&man, 3, c->version);
	lv__pbw_bytes(&man, 7, ts.ptr ? ts.ptr : (uint8_t *)"", ts.len);
	lv__pbw_str(&man, 12, txname);
	if (c->reader_flags)
		lv__pbw_u64(&man, 9, c->reader_flags);
	if (c->writer_flags)
		lv__pbw_u64(&man, 10, c->writer_flags);
	add_map(&man, 16, c->config);
	if (!c->txn_file_only)
		lv__pbw_u64_always(&man, 21, 0);

	lv__dbuf_init(&file, 0);
	if (!c->txn_file_only) {
		lv__dbuf_add_u32le(&file, (uint32_t)txn.len);
		lv__dbuf_add(&file, txn.ptr, txn.len);
	}
	synth_add_manifest(&file, &man);

	if (c->scheme == 3)
		snprintf(path, sizeof path, "_versions/d%llu.manifest",
			 (unsigned long long)(c->version | (1ull << 63)));
	else if (c->scheme == 1)
		snprintf(path, sizeof path, "_versions/%llu.manifest", (unsigned long long)c->version);
	else
		synth_manifest_path(path, sizeof path, c->version);
	lv_error err = { 0 };
	char txpath[160];
	snprintf(txpath, sizeof txpath, "_transactions/%s", txname);
	int rc = lv_storage_write(st, txpath, txn.ptr, txn.len, &err);
	if (rc == 0)
		rc = lv_storage_create(st, path, file.ptr, file.len, &err);
	lv__dbuf_dispose(&txn);
	lv__dbuf_dispose(&man);
	lv__dbuf_dispose(&frag);
	lv__dbuf_dispose(&df);
	lv__dbuf_dispose(&ts);
	lv__dbuf_dispose(&file);
	return rc;
}

int synth_series(lv_storage *st, uint64_t n, int64_t base_ms)
{
	return synth_range(st, 1, n, base_ms);
}

int synth_range(lv_storage *st, uint64_t first, uint64_t last, int64_t base_ms)
{
	for (uint64_t v = first; v <= last; v++) {
		synth_commit c = { .version = v, .ts_ms = base_ms + 1000 * (int64_t)v, .read_version = v - 1 };
		int rc = synth_write(st, &c);
		if (rc)
			return rc;
	}
	return 0;
}

lv_storage *synth_mem_series(uint64_t n, int64_t base_ms)
{
	lv_error e = { 0 };
	lv_storage *st = tu_mem();
	TU_CHECK(e, synth_series(st, n, base_ms));
	return st;
}

int synth_tag(lv_storage *st, const char *name, uint64_t version)
{
	char path[256], body[256];
	snprintf(path, sizeof path, "_refs/tags/%s.json", name);
	int n = snprintf(body, sizeof body,
			 "{\n  \"branch\": null,\n  \"version\": %llu,\n  \"manifestSize\": 100,\n  \"metadata\": {}\n}",
			 (unsigned long long)version);
	lv_error err = { 0 };
	return lv_storage_write(st, path, body, (size_t)n, &err);
}
