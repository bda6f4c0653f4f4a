/* Internal header of the lancever CLI.  The CLI uses only the public API. */
#ifndef LVCLI_H
#define LVCLI_H

#include <stdio.h>
#include <lancever/lancever.h>

/* Each sub-command: argv[0] is the sub-command name.  Returns the process exit code. */
int lvcli_versions(int argc, char **argv);
int lvcli_inspect(int argc, char **argv);
int lvcli_tags(int argc, char **argv);
int lvcli_history(int argc, char **argv);
int lvcli_checkpoint(int argc, char **argv);
int lvcli_asof(int argc, char **argv);
int lvcli_show(int argc, char **argv);
int lvcli_diff(int argc, char **argv);
int lvcli_cleanup(int argc, char **argv);
int lvcli_info(int argc, char **argv);
int lvcli_check(int argc, char **argv);

/* --branch NAME, accepted by every dataset command (main.c strips it). */
extern const char *lvcli_branch;
/* --s3-endpoint, --s3-region, --s3-allow-http (main.c strips them). */
extern const char *lvcli_s3_endpoint, *lvcli_s3_region;
extern bool lvcli_s3_allow_http;
/* --quiet / -q (main.c strips it): silence warnings on stderr. */
extern bool lvcli_quiet;

/* "DATASET [positional...] [--json] [--stats] [--strict] [--max-entries N] [--max-files N]
 * [--disable]" arguments (args.c).  Returns 0, or the exit code of a usage error. */
typedef struct lvcli_args {
	const char *pos[4];
	int npos;
	bool json, stats, strict;
	int64_t max_entries, max_files;
	int enabled;
} lvcli_args;
int lvcli_parse_args(int argc, char **argv, lvcli_args *a, int want_pos, const char *usage);
/* The one number rule of the CLI (args.c): decimal digits only -- no sign, no spaces, not
 * empty, no 0x/exponent -- and at most max.  True and *out set, or false. */
bool lvcli_parse_u64_strict(const char *s, uint64_t max, uint64_t *out);
/* A number argument in min..max; 0, or prints a usage error naming `what` (the option, or
 * "show: VERSION") and returns its exit code, 2. */
int lvcli_parse_number(const char *what, const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* A positive integer option value (1..INT64_MAX); 0, or the exit code of a usage error. */
int lvcli_parse_i64_pos(const char *opt, const char *v, int64_t *out);
/* "missing value for OPT" (an option given last without its value); returns 2. */
int lvcli_missing_value(const char *opt);

/* Shared printers (cmd_versions.c). */
void lvcli_print_version_json(FILE *f, const lv_version_info *v);
void lvcli_print_table(FILE *f, const lv_version_list *l, bool show_cleaned);
void lvcli_print_report(const lv_history_report *r, const lv_version_list *l);
void lvcli_format_time(char *buf, size_t cap, int64_t ms);
int lvcli_open_dataset(lv_dataset **ds, const char *uri, int threads, lv_error *err);
/* Prints the dataset's warnings on stderr ("lancever: warning: ...", unless --quiet), then frees it. */
void lvcli_close(lv_dataset *ds);

/* Prints "lancever: <message>" to stderr and returns exit code 1. */
int lvcli_fail(const lv_error *err);
int lvcli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Writes s as a JSON string literal (escaping as RFC 8259 requires). */
void lvcli_json_str(FILE *f, const char *s);
void lvcli_json_strn(FILE *f, const char *s, size_t n);

#endif
