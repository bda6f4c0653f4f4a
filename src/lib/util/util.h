/*
 * Internal utilities shared by every module, one header over files split by concern:
 * error setting and the log hook (common.c), allocation (alloc.c), checked arithmetic
 * (here), buffers (buf.c), UTF-8/JSON/number text (text.c), growable arrays and the
 * binary search over versions (array.c), clocks and the thread pool (thread.c).
 */
#ifndef LV_UTIL_H
#define LV_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <stdint.h>
#include <stdbool.h>

#include "lancever/common.h"

/* Sets err (if non-NULL) and returns `code`.  Messages are truncated to fit. */
int lv__err(lv_error *err, int code, const char *fmt, ...) LV_PRINTF(3, 4);
/* Prefixes an existing message with "prefix: " (keeps the code); returns err->code or code. */
int lv__err_prefix(lv_error *err, int code, const char *fmt, ...) LV_PRINTF(3, 4);

#define LV_TRY(expr)                      \
	do {                              \
		int lv__rc = (expr);      \
		if (lv__rc < 0)           \
			return lv__rc;    \
	} while (0)

static inline bool lv__add_overflow(size_t a, size_t b, size_t *out)
{
	return __builtin_add_overflow(a, b, out);
}
static inline bool lv__mul_overflow(size_t a, size_t b, size_t *out)
{
	return __builtin_mul_overflow(a, b, out);
}

/*
 * The library's allocator: every allocation of src/lib goes through these (never malloc,
 * calloc, realloc, strdup or aligned_alloc directly), so the allocation-failure hook can
 * fail any of them.  A size of 0 allocates 1 byte (a non-NULL result means success).  Free
 * with lv__free() (never free() directly: tests/arch/check_alloc.py; it would skip the block
 * cache).  Third-party libraries allocate with their own allocator
 * (jansson, zstd, libcurl, libcrypto: process-wide settings a library must not change; expat
 * takes the suite per parser and is given this one): RELIABILITY.md "Allocation failure".
 */
void *lv__malloc(size_t n);
void *lv__calloc(size_t n, size_t size);
void *lv__realloc(void *p, size_t n);
void *lv__reallocarray(void *p, size_t n, size_t size);
/* n bytes (rounded up to a multiple of align, a power of two) aligned to `align`. */
void *lv__aligned_alloc(size_t align, size_t n);
void lv__free(void *p);
/* The large-block cache (blocks.c) under the allocator above: blocks of LV__BLOCK_MIN bytes
 * (32 KiB) or more that lv__free gives back are kept (up to 64 blocks of at most 8 MiB,
 * 32 MiB in all, plus one block of up to 64 MiB whose pages the kernel may reclaim) for
 * the next large request.  take: a cached block of at least n usable bytes or
 * NULL; give: true if p is now the cache's; usable: malloc_usable_size (0 for NULL);
 * held: bytes (and blocks) held; release: frees every held block. */
#define LV__BLOCK_MIN ((size_t)32 << 10)
void *lv__blocks_take(size_t n);
bool lv__blocks_give(void *p);
size_t lv__blocks_usable(const void *p);
size_t lv__blocks_held(size_t *nblocks);
void lv__blocks_release(void);
#ifdef LV_TEST_HOOKS
/* Test hook: makes the nth allocation (1-based, counted from this call, all threads) fail
 * as if out of memory; 0 = never.  Returns the number of allocations counted since the
 * previous call. */
uint64_t lv__alloc_fail_at(uint64_t nth);
#endif
/* Copies n bytes of s into d (which has room for n + 1) and ends them with a 0 byte;
 * returns d (NULL if d is NULL: the allocation that made it failed). */
static inline void *lv__copyz(void *d, const void *s, size_t n)
{
	if (d) {
		if (n)
			memcpy(d, s, n);
		((char *)d)[n] = 0;
	}
	return d;
}
/* A malloc'd copy of n bytes followed by a 0 byte; NULL when out of memory. */
void *lv__memdupz(const void *s, size_t n);
/* out = a copy of b (0-terminated past its end, as read buffers are); LV_ENOMEM. */
int lv__buf_copy(lv_buf *out, const lv_buf *b);
char *lv__strdup(const char *s);
/* A malloc'd "dir/name" ("name" when dir is empty): a path built without printf; NULL on OOM. */
char *lv__join2(const char *dir, const char *name);
/* memcpy(d, s, n) as a call to the C library's: where the compiler would inline a copy of an
 * unknown small size as `rep movs` (slow to start), e.g. a file name into a path buffer. */
void lv__copy_bytes(void *d, const void *s, size_t n);
char *lv__strndup(const char *s, size_t n);
char *lv__sprintf(const char *fmt, ...) LV_PRINTF(1, 2); /* malloc'ed, NULL on OOM */
/* Zeroes a malloc'd string that may hold a secret (a key, token, SAS, signed URL), then frees
 * it; NULL is fine. */
void lv__free_secret(char *s);

/*
 * Makes room for one more element in a growable array of `elem`-byte
 * elements holding n of *cap: returns `arr` if there is room, else the array
 * grown to double (at least `first`) elements, updating *cap.  NULL on OOM
 * (then `arr` and *cap are unchanged and still valid).
 */
void *lv__grow(void *arr, size_t *cap, size_t n, size_t elem, size_t first);

/* The last '/'-separated component of a path (borrowed pointer into it). */
static inline const char *lv__basename(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* A growable byte buffer with a hard cap (dynbuf-style). */
typedef struct lv__dbuf {
	uint8_t *ptr;
	size_t len;
	size_t cap;   /* allocated */
	size_t limit; /* hard cap; 0 = SIZE_MAX/2 */
	bool oom;     /* sticky: an append failed */
} lv__dbuf;

void lv__dbuf_init(lv__dbuf *b, size_t limit);
void lv__dbuf_dispose(lv__dbuf *b);
int lv__dbuf_reserve(lv__dbuf *b, size_t extra);
int lv__dbuf_add(lv__dbuf *b, const void *p, size_t n);
int lv__dbuf_addc(lv__dbuf *b, uint8_t c);
int lv__dbuf_adds(lv__dbuf *b, const char *s);
int lv__dbuf_printf(lv__dbuf *b, const char *fmt, ...) LV_PRINTF(2, 3);
int lv__dbuf_add_zeros(lv__dbuf *b, size_t n);
int lv__dbuf_add_u16le(lv__dbuf *b, uint16_t v);
int lv__dbuf_add_u32le(lv__dbuf *b, uint32_t v);
int lv__dbuf_add_u64le(lv__dbuf *b, uint64_t v);
/* Moves the bytes into an lv_buf (NUL-terminated one past size). */
int lv__dbuf_take(lv__dbuf *b, lv_buf *out);
/* Returns a NUL-terminated malloc'ed string and resets b (NULL on OOM). */
char *lv__dbuf_take_str(lv__dbuf *b);

/* JSON string escaping (RFC 8259): invalid UTF-8 bytes become U+FFFD. */
int lv__json_escape(lv__dbuf *b, const char *s, size_t n);
/* True if s[0, n) is valid UTF-8 (what protobuf `string` fields must hold). */
bool lv__utf8_valid(const void *s, size_t n);
/* The well-formed UTF-8 sequence at s[0, n) (n >= 1; RFC 3629: no overlong form, no surrogate,
 * at most U+10FFFF): its code point in *cp and its length 1..4, or 0 (*cp untouched). */
size_t lv__utf8_decode(const void *s, size_t n, uint32_t *cp);
/* Is cp alphanumeric as Rust's char::is_alphanumeric says (Unicode Alphabetic, or a Number
 * category), which is how Lance checks ref names?  (ualnum.c, a generated range table) */
bool lv__unicode_alnum(uint32_t cp);

/* Little-endian loads (no alignment requirement). */
static inline uint16_t lv__le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t lv__le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t lv__le64(const uint8_t *p)
{
	return (uint64_t)lv__le32(p) | ((uint64_t)lv__le32(p + 4) << 32);
}
/* Stores v little-endian at p (one store on little-endian hosts). */
static inline void lv__put_le64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, 8);
#else
	for (int j = 0; j < 8; j++)
		p[j] = (uint8_t)(v >> (8 * j));
#endif
}

/* Parses an unsigned decimal of exactly [s, s+n) without sign/space; false on overflow/junk. */
bool lv__parse_u64(const char *s, size_t n, uint64_t *out);

/* Days from 1970-01-01 to the proleptic Gregorian date y-m-d (m 1..12)
 * (util/timeparse.c). */
int64_t lv__days_from_civil(int64_t y, int64_t m, int64_t d);
/* lv_parse_time with "now" given (util/timeparse.c): what the public one does at
 * lv__now_ms(); the unit tests pin the clock. */
int lv__parse_time_at(const char *s, int64_t now_ms, int64_t *out, lv_error *err);

/* Current wall-clock time in ms. */
int64_t lv__now_ms(void);
/* Monotonic time in ns. */
uint64_t lv__mono_ns(void);

/* ---- thread pool: run fn(i, arg) for i in [0, n) on up to `threads` threads ---- */
typedef void (*lv__parallel_fn)(size_t i, void *arg);
/* Runs all items; returns 0, or LV_ENOMEM if threads could not be started (then runs serially). */
int lv__parallel_for(size_t n, int threads, lv__parallel_fn fn, void *arg);

/*
 * Binary search over n elements of `size` bytes, each holding a uint64_t key
 * `off` bytes in (e.g. a struct's version field): the index of the first
 * element whose key is >= `key` (n if none).  The elements must be sorted.
 */
size_t lv__lower_bound_u64(const void *base, size_t n, size_t size, size_t off, uint64_t key);

/* Delivers a message (formatted, cut at LV_ERROR_MESSAGE_MAX) to the handler installed with
 * lv_set_log_handler (lancever/common.h); nothing when none is.  Never include credentials. */
void lv__log(int level, const char *fmt, ...) LV_PRINTF(2, 3);

#endif
