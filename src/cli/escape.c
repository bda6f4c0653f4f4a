/*
 * Escaping of names that come from disk: for a terminal (lvcli_esc) and as JSON
 * strings (lvcli_json_strn), both over one UTF-8 rule (RFC 3629, lvcli_utf8_len, which
 * the metrics endpoint's label escaping uses too).
 *
 * Invariants: what lvcli_esc returns never holds a control character, DEL, a C1
 * control or a byte that is not UTF-8; what lvcli_json_strn writes is a valid JSON
 * string whatever the input (bytes that are not UTF-8 become U+FFFD).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- escaping ---- */

size_t lvcli_utf8_len(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	size_t len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
		     : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (len == 0 || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) || (c == 0xf0 && p[1] < 0x90) ||
	    (c == 0xf4 && p[1] > 0x8f))
		return 0;
	return len;
}

/* Bytes of the next character to show as-is (0: show p[0] as \xNN); *esc = 2 for a C1
 * control (two bytes, both shown escaped). */
static size_t plain_len(const unsigned char *p, size_t n, int *esc)
{
	*esc = 0;
	if (p[0] < 0x20 || p[0] == 0x7f)
		return 0;
	size_t l = lvcli_utf8_len(p, n);
	if (l == 2 && p[0] == 0xc2 && p[1] < 0xa0) {
		*esc = 2;
		return 0;
	}
	return l;
}

#define ESC_SLOTS 8
static char *esc_buf[ESC_SLOTS];
static size_t esc_cap[ESC_SLOTS];
static unsigned esc_next;

const char *lvcli_esc(const char *s)
{
	if (!s)
		return "-";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0;
	int e;
	while (i < n) {
		size_t l = plain_len(p + i, n - i, &e);
		if (!l)
			break;
		i += l;
	}
	if (i == n)
		return s;
	unsigned k = esc_next++ % ESC_SLOTS;
	if (esc_cap[k] < n * 4 + 1) {
		char *nb = realloc(esc_buf[k], n * 4 + 1);
		if (!nb)
			return "(out of memory)";
		esc_buf[k] = nb;
		esc_cap[k] = n * 4 + 1;
	}
	char *o = esc_buf[k];
	memcpy(o, s, i);
	o += i;
	while (i < n) {
		size_t l = plain_len(p + i, n - i, &e);
		if (l) {
			memcpy(o, p + i, l);
			o += l;
			i += l;
			continue;
		}
		for (int b = 0; b < (e ? e : 1); b++, i++)
			o += sprintf(o, "\\x%02x", p[i]);
	}
	*o = 0;
	return esc_buf[k];
}

void lvcli_print_padded(FILE *f, const char *s, int width)
{
	lvcli_pad(f, lvcli_esc(s), width < 0 ? 0 : (size_t)width); /* columns, not bytes (width.c) */
}

void lvcli_esc_free(void)
{
	for (unsigned k = 0; k < ESC_SLOTS; k++) {
		free(esc_buf[k]);
		esc_buf[k] = NULL;
		esc_cap[k] = 0;
	}
}

void lvcli_json_strn(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	flockfile(f); /* the calls below skip their own lock */
	putc_unlocked('"', f);
	for (size_t i = 0; i < n;) {
		size_t run = 0; /* printable ASCII needing no escape: written as one piece */
		while (i + run < n && p[i + run] >= 0x20 && p[i + run] < 0x80 && p[i + run] != '"' &&
		       p[i + run] != '\\')
			run++;
		if (run) {
			fwrite_unlocked(p + i, 1, run, f);
			i += run;
			continue;
		}
		unsigned char c = p[i];
		if (c == '"' || c == '\\') {
			putc_unlocked('\\', f);
			putc_unlocked(c, f);
		} else if (c == '\n') {
			fputs_unlocked("\\n", f);
		} else if (c == '\t') {
			fputs_unlocked("\\t", f);
		} else if (c == '\r') {
			fputs_unlocked("\\r", f);
		} else if (c < 0x20) {
			fprintf(f, "\\u%04x", c);
		} else if (c >= 0x80) {
			size_t l = lvcli_utf8_len(p + i, n - i);
			if (l == 0) {
				fputs_unlocked("\\ufffd", f); /* as the library's escaper does */
				i++;
			} else {
				fwrite_unlocked(p + i, 1, l, f);
				i += l;
			}
			continue;
		} else {
			putc_unlocked(c, f);
		}
		i++;
	}
	putc_unlocked('"', f);
	funlockfile(f);
}

void lvcli_roff(FILE *f, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", f);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

void lvcli_json_str(FILE *f, const char *s)
{
	if (!s)
		fputs("null", f);
	else
		lvcli_json_strn(f, s, strlen(s));
}

