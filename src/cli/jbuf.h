/*
 * JSON text assembled in a buffer and handed to stdio in large pieces (jbuf.c): the writer of
 * the version records (records.c), ~880 bytes each, 10,000 of them for `versions --json`.
 *
 * Invariants: the bytes reach f in the order they were put; b[0 .. p - b) is what has been put
 * and not yet written; p never passes end.  Whatever writes to f directly (a string
 * that needs escaping, a piece larger than the buffer) is preceded by lvcli_jb_flush.  A
 * string goes into the buffer as-is only when every byte is printable ASCII other than " and
 * \ (what lvcli_json_strn would write unchanged); any other string is written by
 * lvcli_json_strn (escape.c), so the text is byte-for-byte what lvcli_json_strn writes.
 */
#ifndef LVCLI_JBUF_H
#define LVCLI_JBUF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct lvcli_jbuf {
	FILE *f;
	char *b, *end; /* the buffer, LVCLI_JB_MIN bytes or more */
	char *p;       /* the next free byte of b */
} lvcli_jbuf;

#define LVCLI_JB_MIN 256

void lvcli_jb_flush(lvcli_jbuf *j);
/* n bytes when fewer than n are free: flushes, then buffers them or writes them to f. */
void lvcli_jb_write(lvcli_jbuf *j, const void *s, size_t n);
/* A JSON string of s (or null when s is NULL). */
void lvcli_jb_str(lvcli_jbuf *j, const char *s);
void lvcli_jb_u64_slow(lvcli_jbuf *j, uint64_t v);
void lvcli_jb_i64(lvcli_jbuf *j, int64_t v);
/* v's decimal digits at o (at most 20 bytes); returns their end. */
char *lvcli_jb_dec(char *o, uint64_t v);
/* The same for a signed v (a '-' and at most 20 digits: INT64_MIN too). */
char *lvcli_jb_idec(char *o, int64_t v);
/* v's decimal digits ending at end (at most 20 bytes before it); returns the first. */
char *lvcli_jb_digits(char *end, uint64_t v);
/* Is every byte of s[0..n) printable ASCII other than " and \ ? */
bool lvcli_json_plain(const char *s, size_t n);

/* Writes to f through buf[0..cap) (cap >= LVCLI_JB_MIN). */
static inline void lvcli_jb_init(lvcli_jbuf *j, FILE *f, char *buf, size_t cap)
{
	j->f = f;
	j->b = j->p = buf;
	j->end = buf + cap;
}

static inline size_t lvcli_jb_free(const lvcli_jbuf *j)
{
	return (size_t)(j->end - j->p);
}

/* n bytes of s; inlined, so a literal's copy is a few moves. */
static inline void lvcli_jb_put(lvcli_jbuf *j, const void *s, size_t n)
{
	if (n > lvcli_jb_free(j)) {
		lvcli_jb_write(j, s, n);
		return;
	}
	memcpy(j->p, s, n);
	j->p += n;
}

static inline void lvcli_jb_c(lvcli_jbuf *j, char c)
{
	if (j->p == j->end)
		lvcli_jb_flush(j);
	*j->p++ = c;
}

/* Decimal digits, without printf (one digit inline). */
static inline void lvcli_jb_u64(lvcli_jbuf *j, uint64_t v)
{
	if (v < 10)
		lvcli_jb_c(j, (char)('0' + v));
	else
		lvcli_jb_u64_slow(j, v);
}

/* A string literal (its length known at compile time). */
#define LVCLI_JB_LIT(j, s) lvcli_jb_put(j, "" s, sizeof(s) - 1)

#endif
