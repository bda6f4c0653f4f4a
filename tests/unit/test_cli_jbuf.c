/*
 * The CLI's JSON buffer (src/cli/jbuf.c), compiled into this test with a stand-in for
 * escape.c's lvcli_json_strn that marks what it is given: which strings are copied as they
 * are (every byte printable ASCII other than " and \, checked 8 bytes at a time), which go
 * to the escaper, in what order the pieces reach the stream whatever the buffer's size and
 * fill, and the digits of numbers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/cli/jbuf.c"

/* escape.c's writer, as this test sees it: <E:bytes> */
void lvcli_json_strn(FILE *f, const char *s, size_t n)
{
	fputs("<E:", f);
	fwrite(s, 1, n, f);
	fputc('>', f);
}

/* output.c's note of a failed write, as this test sees it */
static FILE *noted_f;
static int noted_e;
void lvcli_note_write_error(FILE *f, int e)
{
	noted_f = f;
	noted_e = e;
}

static bool plain_ref(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] >= 0x80 || s[i] == '"' || s[i] == '\\')
			return false;
	return true;
}

/* Every length to 40, every position, each byte that is not plain and its neighbours. */
static void t_plain_positions(void **state)
{
	(void)state;
	static const unsigned char bad[] = { 0x00, 0x01, 0x1f, '"', '\\', 0x80, 0xc3, 0xff };
	static const unsigned char good[] = { 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7e, 0x7f, 'a', '0' };
	char s[48];
	for (size_t n = 0; n <= 40; n++) {
		memset(s, 'x', sizeof s);
		assert_true(lvcli_json_plain(s, n));
		for (size_t i = 0; i < n; i++) {
			for (size_t b = 0; b < sizeof bad; b++) {
				memset(s, 'x', sizeof s);
				s[i] = (char)bad[b];
				assert_false(lvcli_json_plain(s, n));
				/* a bad byte just past the end is not read as part of the string */
				memset(s, 'x', sizeof s);
				s[n] = (char)bad[b];
				assert_true(lvcli_json_plain(s, n));
			}
			for (size_t g = 0; g < sizeof good; g++) {
				memset(s, 'x', sizeof s);
				s[i] = (char)good[g];
				assert_true(lvcli_json_plain(s, n));
			}
		}
	}
}

/* Random strings of bytes near the edges of the plain range agree with a byte-by-byte check. */
static void t_plain_random(void **state)
{
	(void)state;
	static const unsigned char pool[] = { 0x00, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x5b, 0x5c,
					      0x5d, 0x7f, 0x80, 0x81, 0xa0, 0xdf, 0xfe, 0xff, 'a' };
	unsigned char s[64];
	srand(30);
	for (int t = 0; t < 200000; t++) {
		size_t n = (size_t)rand() % sizeof s;
		int rare = rand() % 4; /* mostly plain strings with a few other bytes */
		for (size_t i = 0; i < n; i++)
			s[i] = rand() % 16 < rare ? pool[(size_t)rand() % sizeof pool] : (unsigned char)(0x20 + rand() % 0x60);
		assert_int_equal(lvcli_json_plain((const char *)s, n), plain_ref(s, n));
	}
}

static char *run(size_t cap, size_t fill, void (*put)(lvcli_jbuf *), size_t *len);

static const char *one_str;
static void put_one(lvcli_jbuf *j) { lvcli_jb_str(j, one_str); }

/* lvcli_jb_str, whose check is fused with the copy (16 bytes at a time where SSE2 is, else
 * 8): every length to 40, a byte that is not plain at every position goes to the escaper
 * whole, a plain string is copied between quotes. */
static void t_str_positions(void **state)
{
	(void)state;
	static const unsigned char bad[] = { 0x01, 0x1f, '"', '\\', 0x80, 0xc3, 0xff };
	char s[48], want[64];
	for (size_t n = 0; n <= 40; n++) {
		for (size_t i = 0; i <= n; i++) {
			for (size_t b = 0; b < (i < n ? sizeof bad : 1); b++) {
				memset(s, 'x', n);
				s[n] = 0;
				if (i < n)
					s[i] = (char)bad[b];
				snprintf(want, sizeof want, i < n ? "<E:%s>" : "\"%s\"", s);
				one_str = s;
				size_t len = 0;
				char *got = run(4096, 4096 - n - 12, put_one, &len); /* near the end too */
				assert_int_equal(len, 4096 - n - 12 + strlen(want));
				assert_memory_equal(got + 4096 - n - 12, want, strlen(want));
				free(got);
			}
		}
	}
}

/* What the buffer writes, with the buffer size `cap` and `fill` bytes put first. */
static char *run(size_t cap, size_t fill, void (*put)(lvcli_jbuf *), size_t *len)
{
	char *out = NULL;
	FILE *f = open_memstream(&out, len);
	assert_non_null(f);
	char *buf = malloc(cap);
	assert_non_null(buf);
	lvcli_jbuf j;
	lvcli_jb_init(&j, f, buf, cap);
	for (size_t i = 0; i < fill; i++)
		lvcli_jb_c(&j, '.');
	put(&j);
	lvcli_jb_flush(&j);
	fclose(f);
	free(buf);
	return out;
}

static char long_plain[5000];

static void put_mix(lvcli_jbuf *j)
{
	LVCLI_JB_LIT(j, "{\"a\":");
	lvcli_jb_str(j, "plain text, 8+ bytes");
	LVCLI_JB_LIT(j, ",\"b\":");
	lvcli_jb_str(j, "tab\there");
	lvcli_jb_c(j, ',');
	lvcli_jb_str(j, NULL);
	lvcli_jb_c(j, ',');
	lvcli_jb_str(j, "");
	lvcli_jb_c(j, ',');
	lvcli_jb_str(j, "q\"");
	lvcli_jb_c(j, ',');
	lvcli_jb_str(j, "caf\xc3\xa9");
	lvcli_jb_c(j, ',');
	lvcli_jb_u64(j, 1234567890123);
	lvcli_jb_c(j, ',');
	lvcli_jb_i64(j, INT64_MIN);
	lvcli_jb_c(j, ',');
	lvcli_jb_str(j, long_plain); /* longer than most buffers: the escaper's */
	lvcli_jb_c(j, '|');
	lvcli_jb_put(j, long_plain, 300); /* longer than the smallest buffer: written through */
	lvcli_jb_put(j, long_plain, 200); /* shorter: buffered, after a flush when it must */
	LVCLI_JB_LIT(j, "}");
}

/* What put_mix writes with a buffer of cap bytes: the long string is copied as it is when it
 * fits (with its quotes and 8 bytes of slack), else written by the escaper. */
static char *mix_want(size_t cap, size_t *wlen)
{
	char *want = NULL;
	FILE *f = open_memstream(&want, wlen);
	fputs("{\"a\":\"plain text, 8+ bytes\",\"b\":<E:tab\there>,null,\"\",<E:q\">,<E:caf\xc3\xa9>,"
	      "1234567890123,-9223372036854775808,", f);
	fprintf(f, strlen(long_plain) + 10 <= cap ? "\"%s\"" : "<E:%s>", long_plain);
	fprintf(f, "|%.300s%.200s}", long_plain, long_plain);
	fclose(f);
	return want;
}

/* Every buffer size from the minimum up, every fill: the same bytes in the same order. */
static void t_buffer_boundaries(void **state)
{
	(void)state;
	memset(long_plain, 'L', sizeof long_plain - 1);
	long_plain[sizeof long_plain - 1] = 0;
	static const size_t caps[] = { LVCLI_JB_MIN, LVCLI_JB_MIN + 1, LVCLI_JB_MIN + 7, 301, 512,
				       4096, 5008, 5009, 5010, 65536 };
	for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
		size_t wlen = 0;
		char *want = mix_want(caps[c], &wlen);
		for (size_t fill = 0; fill < caps[c] && fill < 300; fill += (caps[c] > 4096 ? 37 : 1)) {
			size_t len = 0;
			char *got = run(caps[c], fill, put_mix, &len);
			assert_int_equal(len, fill + wlen);
			for (size_t i = 0; i < fill; i++)
				assert_int_equal(got[i], '.');
			assert_memory_equal(got + fill, want, wlen);
			free(got);
		}
		free(want);
	}
}

static uint64_t num;
static void put_u64(lvcli_jbuf *j) { lvcli_jb_u64(j, num); }
static void put_i64(lvcli_jbuf *j) { lvcli_jb_i64(j, (int64_t)num); }

/* Digits at every length and its edges, signed and unsigned, as printf writes them, also
 * where the buffer is about to flush. */
static void t_numbers(void **state)
{
	(void)state;
	uint64_t vals[128];
	size_t nv = 0;
	vals[nv++] = 0;
	vals[nv++] = UINT64_MAX;
	vals[nv++] = (uint64_t)INT64_MAX;
	vals[nv++] = (uint64_t)INT64_MAX + 1;
	for (uint64_t p = 1, k = 0; k < 20; k++, p *= 10) {
		vals[nv++] = p;
		vals[nv++] = p - 1;
		vals[nv++] = p + 1;
		vals[nv++] = p * 3 + 7;
	}
	for (size_t i = 0; i < nv; i++) {
		for (size_t fill = LVCLI_JB_MIN - 24; fill <= LVCLI_JB_MIN; fill += 3) {
			char want[32], *got;
			size_t len;
			num = vals[i];
			snprintf(want, sizeof want, "%" PRIu64, vals[i]);
			got = run(LVCLI_JB_MIN, fill, put_u64, &len);
			assert_int_equal(len, fill + strlen(want));
			assert_memory_equal(got + fill, want, strlen(want));
			free(got);
			snprintf(want, sizeof want, "%" PRId64, (int64_t)vals[i]);
			got = run(LVCLI_JB_MIN, fill, put_i64, &len);
			assert_int_equal(len, fill + strlen(want));
			assert_memory_equal(got + fill, want, strlen(want));
			free(got);
		}
	}
}

/* A write that fails says why (what `versions --json > /dev/full` reports), whether the
 * piece was buffered by stdio or written past it. */
static void t_write_error(void **state)
{
	(void)state;
	static char buf[64 << 10];
	for (int big = 0; big < 3; big++) { /* through stdio, past it, straight to the descriptor */
		FILE *f = fopen("/dev/full", "w");
		assert_non_null(f);
		lvcli_jbuf j;
		lvcli_jb_init(&j, f, buf, big == 2 ? sizeof buf : LVCLI_JB_MIN);
		noted_f = NULL;
		noted_e = 0;
		memset(long_plain, 'L', sizeof long_plain - 1);
		for (int i = 0; i < 40; i++)
			lvcli_jb_put(&j, long_plain, big == 2 ? 4000 : big ? 300 : 200);
		lvcli_jb_flush(&j);
		assert_ptr_equal(noted_f, f);
		assert_int_equal(noted_e, ENOSPC);
		assert_true(ferror(f));
		fclose(f);
	}
}

/* Pieces of 16 KiB and more go to the descriptor after what stdio holds: the escaper's bytes
 * (stdio) and the buffer's pieces (write) land in order in a real file. */
static void t_direct_order(void **state)
{
	(void)state;
	char path[] = "/tmp/lv_jbufXXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	static char buf[64 << 10], big[20000];
	memset(big, 'B', sizeof big - 1);
	lvcli_jbuf j;
	lvcli_jb_init(&j, f, buf, sizeof buf);
	char *want = NULL;
	size_t wlen = 0;
	FILE *w = open_memstream(&want, &wlen);
	for (int k = 0; k < 30; k++) {
		lvcli_jb_str(&j, "esc\"aped"); /* stdio (the stand-in escaper) after a flush */
		fputs("<E:esc\"aped>", w);
		lvcli_jb_put(&j, big, sizeof big - 1 - (size_t)k); /* buffered, flushed in big pieces */
		fwrite(big, 1, sizeof big - 1 - (size_t)k, w);
		lvcli_jb_c(&j, (char)('a' + k % 26));
		fputc('a' + k % 26, w);
	}
	lvcli_jb_flush(&j);
	fclose(f);
	fclose(w);
	size_t glen = 0;
	FILE *r = fopen(path, "r");
	char *got = malloc(wlen + 1);
	glen = fread(got, 1, wlen + 1, r);
	fclose(r);
	unlink(path);
	assert_int_equal(glen, wlen);
	assert_memory_equal(got, want, wlen);
	free(got);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_plain_positions),
		cmocka_unit_test(t_plain_random),
		cmocka_unit_test(t_str_positions),
		cmocka_unit_test(t_buffer_boundaries),
		cmocka_unit_test(t_numbers),
		cmocka_unit_test(t_write_error),
		cmocka_unit_test(t_direct_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
