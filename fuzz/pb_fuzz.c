/*
 * libFuzzer target: the protobuf wire reader and writer (src/lib/wire).
 *
 * Reader: the input is walked field by field; every LEN field is also read
 * as a packed repeated varint and descended into as a nested message (depth
 * bounded).  Properties: no field reaches outside its span; a span that
 * reports an error is left at its end; fields are consumed in order and each
 * field's bytes are accounted for exactly.
 * Writer: every field of a well-formed message that the writer can encode
 * (VARINT, LEN) is re-encoded; reading the re-encoding gives the same
 * fields, and when the input used minimal varints the bytes are identical.
 * The first 8 bytes also round-trip as a varint.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "wire/pb.h"

#define MAX_DEPTH 8

#define FUZZ_NAME "pb_fuzz"
#include "fuzz.h"

static void count_cb(uint64_t v, void *arg)
{
	(void)v;
	(*(long *)arg)++;
}

/* Walks a message; returns true if it parsed to its end without error. */
static bool walk(const uint8_t *p, size_t n, int depth)
{
	lv__pb r = lv__pb_make(p, n);
	const uint8_t *end = p + n;
	lv__pb_field f;
	for (;;) {
		const uint8_t *before = r.p;
		int rc = lv__pb_next(&r, &f);
		if (rc == 0) {
			CHECK(r.p == end && lv__pb_done(&r));
			return true;
		}
		if (rc < 0) {
			CHECK(r.p == end && lv__pb_done(&r));
			return false;
		}
		CHECK(rc == 1);
		CHECK(r.p > before && r.p <= end);
		CHECK(f.num >= 1 && f.num <= 0x1fffffff);
		/* the field's bytes: its key, then its value (varints may be non-minimal) */
		size_t used = (size_t)(r.p - before);
		size_t key = lv__pb_varint_size(((uint64_t)f.num << 3) | (uint64_t)f.wire);
		switch (f.wire) {
		case LV_PB_VARINT:
			CHECK(used >= key + lv__pb_varint_size(f.u) && used <= 20);
			break;
		case LV_PB_I64:
			CHECK(used >= key + 8 && used <= 18);
			break;
		case LV_PB_I32:
			CHECK(used >= key + 4 && used <= 14 && f.u <= UINT32_MAX);
			break;
		case LV_PB_LEN: {
			CHECK(used >= key + lv__pb_varint_size(f.len) + f.len);
			CHECK(f.data + f.len == r.p);
			CHECK(f.data >= p && f.data + f.len <= end);
			long cnt = 0;
			long k = lv__pb_repeated_varint(&f, count_cb, &cnt);
			CHECK(k == -1 || k == cnt);
			CHECK(k <= (long)f.len);
			if (depth < MAX_DEPTH)
				(void)walk(f.data, f.len, depth + 1);
			break;
		}
		default:
			CHECK(0);
		}
		if (f.wire == LV_PB_VARINT) {
			long cnt = 0;
			CHECK(lv__pb_repeated_varint(&f, count_cb, &cnt) == 1 && cnt == 1);
		}
	}
}

/* Re-encodes VARINT and LEN fields; false if the message has fixed-width fields or is malformed. */
static bool reencode(const uint8_t *p, size_t n, lv__dbuf *out)
{
	lv__pb r = lv__pb_make(p, n);
	lv__pb_field f;
	int rc;
	while ((rc = lv__pb_next(&r, &f)) == 1) {
		if (f.wire == LV_PB_VARINT)
			CHECK(lv__pbw_u64_always(out, f.num, f.u) == 0);
		else if (f.wire == LV_PB_LEN)
			CHECK(lv__pbw_bytes(out, f.num, f.data, f.len) == 0);
		else
			return false;
	}
	return rc == 0;
}

static void roundtrip(const uint8_t *p, size_t n)
{
	lv__dbuf b;
	lv__dbuf_init(&b, 0);
	if (reencode(p, n, &b)) {
		/* The writer never produces more bytes than a reader accepted. */
		CHECK(b.len <= n);
		if (b.len == n)
			CHECK(n == 0 || !memcmp(b.ptr, p, n));
		lv__pb a = lv__pb_make(p, n), c = lv__pb_make(b.ptr, b.len);
		lv__pb_field fa, fc;
		int ra, rc;
		while ((ra = lv__pb_next(&a, &fa)) == 1) {
			rc = lv__pb_next(&c, &fc);
			CHECK(rc == 1 && fa.num == fc.num && fa.wire == fc.wire && fa.u == fc.u &&
			      fa.len == fc.len && (!fa.len || !memcmp(fa.data, fc.data, fa.len)));
		}
		CHECK(ra == 0 && lv__pb_next(&c, &fc) == 0);
	}
	lv__dbuf_dispose(&b);
}

static void writer_helpers(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < 8 && i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	uint32_t num = (uint32_t)(v % 0x1fffffff) + 1;
	lv__dbuf b;
	lv__dbuf_init(&b, 0);
	CHECK(lv__pbw_varint(&b, v) == 0);
	CHECK(b.len == lv__pb_varint_size(v) && b.len <= 10);
	lv__pb r = lv__pb_make(b.ptr, b.len);
	uint64_t back;
	CHECK(lv__pb_varint(&r, &back) && back == v && lv__pb_done(&r));
	/* omitted-if-zero/empty helpers and the field forms */
	b.len = 0;
	CHECK(lv__pbw_u64(&b, num, v) == 0);
	CHECK((v == 0) == (b.len == 0));
	size_t slen = n > 8 ? n - 8 : 0;
	char *s = lv__strndup((const char *)p + (n > 8 ? 8 : n), slen);
	CHECK(s != NULL);
	CHECK(lv__pbw_str(&b, num, s) == 0);
	CHECK(lv__pbw_bytes(&b, num, p, n) == 0);
	CHECK(lv__pbw_tag(&b, num, LV_PB_I32) == 0);
	CHECK(lv__dbuf_add_u32le(&b, (uint32_t)v) == 0);
	CHECK(lv__pbw_tag(&b, num, LV_PB_I64) == 0);
	CHECK(lv__dbuf_add_u64le(&b, v) == 0);
	r = lv__pb_make(b.ptr, b.len);
	lv__pb_field f;
	if (v) {
		CHECK(lv__pb_next(&r, &f) == 1 && f.num == num && f.wire == LV_PB_VARINT && f.u == v);
	}
	if (s[0]) {
		CHECK(lv__pb_next(&r, &f) == 1 && f.num == num && f.wire == LV_PB_LEN &&
		      f.len == strlen(s) && !memcmp(f.data, s, f.len));
	}
	CHECK(lv__pb_next(&r, &f) == 1 && f.num == num && f.wire == LV_PB_LEN && f.len == n &&
	      (!n || !memcmp(f.data, p, n)));
	CHECK(lv__pb_next(&r, &f) == 1 && f.num == num && f.wire == LV_PB_I32 && f.u == (uint32_t)v);
	CHECK(lv__pb_next(&r, &f) == 1 && f.num == num && f.wire == LV_PB_I64 && f.u == v);
	CHECK(lv__pb_next(&r, &f) == 0);
	free(s);
	lv__dbuf_dispose(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exact-size heap copy, so ASan sees any read past the end. */
	uint8_t *p = malloc(size ? size : 1);
	if (!p)
		return 0;
	if (size)
		memcpy(p, data, size);
	(void)walk(p, size, 0);
	roundtrip(p, size);
	lv__pb r = lv__pb_make(p, size);
	uint64_t v;
	while (!lv__pb_done(&r) && lv__pb_varint(&r, &v))
		;
	writer_helpers(p, size);
	free(p);
	return 0;
}
