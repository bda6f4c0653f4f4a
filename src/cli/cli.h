/* Internal header of the lancever CLI.  The CLI uses only the public API. */
#ifndef LVCLI_H
#define LVCLI_H

#include <stdio.h>
#include <lancever/lancever.h>

/* Each sub-command: argv[0] is the sub-command name.  Returns the process exit code. */
int lvcli_versions(int argc, char **argv);
int lvcli_inspect(int argc, char **argv);
int lvcli_tags(int argc, char **argv);

/* Prints "lancever: <message>" to stderr and returns exit code 1. */
int lvcli_fail(const lv_error *err);
int lvcli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Writes s as a JSON string literal (escaping as RFC 8259 requires). */
void lvcli_json_str(FILE *f, const char *s);
void lvcli_json_strn(FILE *f, const char *s, size_t n);

#endif
