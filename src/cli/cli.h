/*
 * Internal header of the lancever CLI.  The CLI uses only the public API (include/lancever).
 *
 * Layout (each file includes only this header and the public API; no file calls "up"):
 *   main.c        the command table, global options, dispatch, help/version, output check
 *   help.c        usage, per-command help and the man page, all rendered from the tables
 *   args.c        argument parsing against the option tables, numbers, "did you mean"
 *   output.c      messages on stderr, stdout write errors (EPIPE)
 *   escape.c      escaping of names from disk (terminal text and JSON)
 *   open.c        opening a dataset with the global options, closing it with its warnings
 *   format*.c     --format csv|arrow: the writers (the option itself: args.c)
 *   records.c     version records: JSON object, table, --stats report
 *   refs.c        VERSION refs (number, tag, BRANCH:VERSION, latest~N) and a version's tags
 *   select.c      the list options of versions and history (--limit, --reverse, --since, --until)
 *   cmd_*.c       one command each (or a pair that share everything): parse, call, print
 *   term.c        the pager, colour, --bytes/--progress (global options of the interface)
 *   width.c       display width of table cells, readable sizes
 *   progress.c    the progress line / JSON lines on stderr, the ticker
 *   hint.c        "did you mean db/t.lance?"; examples.c the EXAMPLES table of help and man
 *   completion.c  lancever completion bash|zsh|fish; format_html.c history --format html
 *
 * Conventions: a command returns its exit status (0 ok, 1 error, 2 usage error).  With
 * --json, stdout holds one JSON value on success and nothing on failure (the message is on
 * stderr).  Every string that comes from disk is printed through lvcli_esc (text) or
 * lvcli_json_str (JSON).
 */
#ifndef LVCLI_H
#define LVCLI_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <lancever/lancever.h>

/* ---- the command and option tables (help.c renders them, args.c parses with them) ---- */

enum lvcli_optkind {
	LVCLI_FLAG,     /* sets a bool to true */
	LVCLI_FLAG_OFF, /* sets a bool to false */
	LVCLI_NUMBER,   /* a strict decimal number in min..max into a uint64_t */
	LVCLI_DURATION, /* lv_parse_duration (14days, 1h 30min, 36h) into an int64_t of milliseconds */
	LVCLI_FORMAT,   /* json, table, csv or arrow into an int (enum lvcli_format; format.c) */
	LVCLI_STRING,   /* the value as given, into a const char * (the command checks it) */
};

typedef struct lvcli_opt {
	const char *name;  /* "--threads" */
	const char *value; /* the value's name ("N"), NULL for a flag */
	const char *help;  /* one sentence */
	int kind;          /* enum lvcli_optkind */
	uint64_t min, max; /* LVCLI_NUMBER */
	size_t off;        /* offset of the destination in lvcli_args */
} lvcli_opt;

typedef struct lvcli_cmd {
	const char *name;        /* "versions" */
	const char *args;        /* positional arguments, "DATASET TIME" */
	const char *summary;     /* one line, for the command list */
	const char *description; /* a paragraph, for `help CMD` and the man page */
	const lvcli_opt *opts;   /* terminated by an entry with name NULL */
	int (*run)(int argc, char **argv);
	bool dataset;            /* takes DATASET: the global dataset options apply */
} lvcli_cmd;

/* Each command file defines its table entry. */
extern const lvcli_cmd lvcli_cmd_versions, lvcli_cmd_history, lvcli_cmd_checkpoint,
	lvcli_cmd_asof, lvcli_cmd_show, lvcli_cmd_diff, lvcli_cmd_cleanup, lvcli_cmd_expire,
	lvcli_cmd_info, lvcli_cmd_tags, lvcli_cmd_check, lvcli_cmd_inspect, lvcli_cmd_watch;
/* completion.c's entry (lancever completion SHELL). */
extern const lvcli_cmd lvcli_cmd_completion;
/* cmd_inspect.c's entry point (its table entry names it). */
int lvcli_inspect(int argc, char **argv);

/* The global options (main.c strips them wherever they appear). */
typedef struct lvcli_global {
	const char *name, *alias, *value, *help;
} lvcli_global;

/* ---- metrics.c (ops): `lancever watch --metrics ADDR` ---- */
/*
 * Serves the watcher's statistics (lv_watch_snapshot_take) in the Prometheus text format on
 * ADDR ("HOST:PORT", loopback when HOST is omitted) from a thread of its own, until
 * lvcli_metrics_stop.  *out is the caller's.  0, or prints the error and returns exit
 * status 1 (an address that does not parse: 2).  cmd_watch.c calls it after lv_watch_open
 * and stops it after lv_watch_run returns.
 */
typedef struct lvcli_metrics lvcli_metrics;
int lvcli_metrics_start(lvcli_metrics **out, lv_watcher *w, const char *addr);
/* Stops serving and frees m.  Accepts NULL. */
void lvcli_metrics_stop(lvcli_metrics *m);

/* main.c's tables, for completion.c: the commands (n of them) and the global options
 * (terminated by an entry with name NULL). */
const lvcli_cmd *const *lvcli_commands(size_t *n);
const lvcli_global *lvcli_global_table(void);

/* ---- help.c ---- */

/* `lancever help`: the command list with every option, the global options, exit status. */
void lvcli_help_all(FILE *f, const lvcli_cmd *const *cmds, size_t n, const lvcli_global *g);
/* `lancever help CMD` / `lancever CMD --help`. */
void lvcli_help_cmd(FILE *f, const lvcli_cmd *c, const lvcli_global *g);
/* The one-line synopsis "versions DATASET [--json] ..." (for usage errors). */
void lvcli_synopsis(FILE *f, const lvcli_cmd *c);
/* `lancever help --man`: the manual page (roff), from the same tables. */
void lvcli_man(FILE *f, const lvcli_cmd *const *cmds, size_t n, const lvcli_global *g);

/* ---- args.c: arguments ---- */

/* Every option value a command may take; 0 / false / -1 = not given (see lvcli_parse). */
typedef struct lvcli_args {
	const char *pos[4]; /* the positional arguments, and the first one too many (for its message) */
	int npos;
	bool json, csv, stats, strict, disable, dry_run, list, delete_unverified, no_checkpoint;
	bool salvage;
	bool error_if_tagged; /* true unless --no-error-if-tagged-old-versions */
	uint64_t threads, retain_versions, max_entries, max_files;
	int64_t older_than_ms; /* -1 = not given */
	int format;            /* enum lvcli_format, 0 = not given */
	bool no_archive;
	uint64_t limit, segment_rows, delete_rate_limit;
	const char *since, *until; /* versions/history --since/--until, as given (select.c) */
	bool reverse;              /* versions/history --reverse */
	int64_t keep_one_per_ms; /* -1 = not given */
	uint64_t vers[2];        /* VERSION / A, B: set by the command's check */
	int64_t when_ms;         /* TIME: set by the command's check */
	const char *versions;    /* cleanup --versions LIST, as given */
	const char *before;      /* cleanup/expire --before-version REF, as given (refs.c) */
	bool explain;            /* cleanup --explain */
	bool clean_referenced;   /* cleanup --clean-referenced-branches */
	uint64_t max_candidates; /* cleanup --max-candidates (0 = not given) */
	/* watch (0 / NULL / false = not given) */
	int64_t flush_ms, min_interval_ms, max_interval_ms, discover_ms;
	bool once, no_notify;
	const char *shard, *log_format, *metrics;
} lvcli_args;

/*
 * Parses argv (argv[0] is the command name) against c's options and positional
 * arguments.  Returns 0, or the exit status of a usage error (2) after printing it:
 * unknown option (with "did you mean"), missing value, bad number or duration,
 * missing or extra positional arguments.  "--opt=value" is accepted too.  "--" ends the
 * options: every later word is a positional argument (a DATASET named "-x").
 */
int lvcli_parse(int argc, char **argv, const lvcli_cmd *c, lvcli_args *a);
/* The one number rule of the CLI: decimal digits only -- no sign, no spaces, not
 * empty, no 0x/exponent -- and at most max.  True and *out set, or false. */
bool lvcli_parse_u64_strict(const char *s, uint64_t max, uint64_t *out);
/* A number argument in min..max; 0, or prints a usage error naming `what` (the option, or
 * "show: VERSION") and returns its exit status, 2. */
int lvcli_parse_number(const char *what, const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* A TIME argument (lv_parse_time: ISO 8601, @MS, MS, now, "3 days ago"); 0, or prints a usage
 * error naming `what` and the text as given and returns 2. */
int lvcli_parse_time(const char *what, const char *s, int64_t *ms);
/* "missing value for OPT" (an option given last without its value); returns 2. */
int lvcli_missing_value(const char *opt);
/* "CMD: unknown option 'X'" with "did you mean" from c's options; returns 2. */
int lvcli_unknown_option(const lvcli_cmd *c, const char *opt);
/* The closest of n names to s, if close enough to be a likely typo; else NULL. */
const char *lvcli_did_you_mean(const char *s, const char *const *names, size_t n);

/* --max-entries, --max-files, --no-archive, --segment-rows (those given) into c. */
void lvcli_checkpoint_options(const lvcli_args *a, lv_checkpoint_config *c);

/* ---- output.c: messages and stdout's write errors ---- */
/* The exit status when stdout's reader went away and SIGPIPE is blocked (128 + SIGPIPE, what a
 * shell shows for a process SIGPIPE killed). */
#define LVCLI_EXIT_PIPE 141
/* 0 if stdout has had no write error, else the errno of the failed write (EPIPE when its
 * reader is gone, EIO if that cannot be known). */
int lvcli_stdout_error(void);
/* A write to f failed with errno e: remembered for lvcli_stdout_error when f is stdout (a
 * failed write that bypassed stdio's buffer leaves no bytes whose retry would say why). */
void lvcli_note_write_error(FILE *f, int e);
/*
 * e == EPIPE (stdout's reader went away, SIGPIPE ignored): ends the process silently as
 * SIGPIPE's default action does, as git does: SIGPIPE restored to its default and raised
 * (a shell shows status 141); _exit(LVCLI_EXIT_PIPE) if it is blocked.  Any other e: returns.
 */
void lvcli_check_pipe(int e);
/* Prints "lancever: <message> (<LV_CODE>)" on stderr (escaped); returns exit status 1. */
int lvcli_fail(const lv_error *err);
/* Prints "lancever: <formatted>" on stderr; returns exit status 2. */
int lvcli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same with a va_list (term.c: the one place a usage error is worded). */
int lvcli_vusage_error(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* ---- term.c: the pager, colour, --bytes, --progress (global options of the interface) ---- */
enum lvcli_color_mode { LVCLI_COLOR_AUTO, LVCLI_COLOR_ALWAYS, LVCLI_COLOR_NEVER };
enum lvcli_progress_mode { LVCLI_PROGRESS_AUTO, LVCLI_PROGRESS_JSON, LVCLI_PROGRESS_NEVER };
typedef struct lvcli_ui_state {
	int color;     /* enum lvcli_color_mode */
	int progress;  /* enum lvcli_progress_mode */
	bool no_pager; /* --no-pager */
	bool bytes;    /* --bytes: sizes as raw numbers in text output */
} lvcli_ui_state;
extern lvcli_ui_state lvcli_ui;
/* argv[i] as one of --no-pager, --bytes, --color[=]WHEN, --progress[=]MODE: the number of words
 * it took (1 or 2), 0 if it is none of them, or minus the exit status of a usage error. */
int lvcli_ui_option(int argc, char **argv, int i);
/* Whether the original stdout / stderr is a terminal (decided before any pager). */
bool lvcli_stdout_tty(void);
bool lvcli_stderr_tty(void);
enum lvcli_sgr { LVCLI_RESET, LVCLI_DIM, LVCLI_YELLOW, LVCLI_RED };
/* The escape sequence for `what` on f (stdout or stderr) when colour is on there, else "". */
const char *lvcli_color(FILE *f, int what);
/* Starts the pager for command cmd (argv: its arguments) when the original stdout is a terminal,
 * the command lists, and neither --no-pager nor a pager of "" or "cat" says no. */
void lvcli_pager_start(const char *cmd, int argc, char **argv);
bool lvcli_pager_active(void);
/* After stdout is closed: waits for the pager to exit. */
void lvcli_pager_wait(void);
/* stdout's reader (the pager) went away: waits for it and ends with status 0; returns if
 * no pager runs. */
void lvcli_pager_gone(void);

/* ---- examples.c: the EXAMPLES table ---- */
/* "examples:" and cmd's examples (help CMD); nothing when it has none. */
void lvcli_examples_text(FILE *f, const char *cmd);
/* The same in roff for the man page. */
void lvcli_examples_man(FILE *f, const char *cmd);

/* ---- hint.c: "did you mean db/t.lance?" ---- */
/* The DATASET being opened (open.c); lvcli_fail's hint looks at it. */
void lvcli_hint_uri(const char *uri);
/* After a not-found error: when that DATASET is a database folder, or a table's name without
 * .lance, one line on stderr naming the table meant and the tables there. */
void lvcli_hint_dataset(void);

/* ---- width.c: display width, readable sizes ---- */
/* Columns a terminal gives code point c (0, 1 or 2: wide East Asian 2, combining marks 0). */
int lvcli_cp_width(uint32_t c);
/* Columns of the UTF-8 string s (a byte that is not UTF-8: 1), under any locale. */
size_t lvcli_width(const char *s);
/* s (already escaped), then spaces up to `width` columns. */
void lvcli_pad(FILE *f, const char *s, size_t width);
/* bytes as "68.4 MB" (powers of 1000), or the raw number with --bytes; returns buf. */
const char *lvcli_size(char *buf, size_t cap, uint64_t bytes);
/* The same in a sentence: "68.4 MB", or "71720000 bytes" with --bytes. */
const char *lvcli_size_words(char *buf, size_t cap, uint64_t bytes);

/* ---- escape.c: names from disk ---- */
/*
 * s made safe for a terminal: control characters, DEL, C1 controls and bytes that are
 * not UTF-8 become \xNN.  Returns s itself when nothing needs escaping, else a buffer
 * that stays valid for the next 7 calls.  NULL gives "-".
 */
const char *lvcli_esc(const char *s);
/* s as a JSON string literal (RFC 8259; bytes that are not UTF-8 become U+FFFD); NULL = null. */
void lvcli_json_str(FILE *f, const char *s);
void lvcli_json_strn(FILE *f, const char *s, size_t n);
/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlongs, no surrogates, at
 * most U+10FFFF; n bytes left, n >= 1), or 0. */
size_t lvcli_utf8_len(const unsigned char *p, size_t n);
/* s in roff (the man page): backslashes and hyphens escaped, a leading '.' or '\'' literal. */
void lvcli_roff(FILE *f, const char *s);
/* lvcli_esc(s), then spaces up to `width` characters (a table column of names). */
void lvcli_print_padded(FILE *f, const char *s, int width);
/* Releases lvcli_esc's buffers (at exit). */
void lvcli_esc_free(void);

/* ---- open.c: datasets and warnings ---- */

/* Set by main.c from the global options. */
#define LVCLI_MAX_STORAGE_OPTIONS 64
typedef struct lvcli_globals {
	const char *branch, *s3_endpoint, *s3_region;
	bool s3_allow_http, quiet, verbose;
	/* --storage-option KEY=VALUE, repeatable */
	const char *option_keys[LVCLI_MAX_STORAGE_OPTIONS], *option_values[LVCLI_MAX_STORAGE_OPTIONS];
	size_t noptions;
} lvcli_globals;
extern lvcli_globals lvcli_g;

/* The global options' storage options (--storage-option pairs, then the --s3-* flags); *out
 * NULL when none is given.  0, or an LV_* code with err set. */
int lvcli_storage_options(lv_storage_options **out, lv_error *err);
/*
 * Opens DATASET with the global options (the library names a local path that does not
 * exist, or is not a directory, as such).  0, or prints the error and returns exit status 1.
 */
int lvcli_open(lv_dataset **ds, const char *uri, int threads);
/* The same on `branch` (NULL = --branch's) instead of --branch. */
int lvcli_open_branch(lv_dataset **ds, const char *uri, int threads, const char *branch);
/* lvcli_parse, then lvcli_open of DATASET (the first argument): 0, or the exit status. */
int lvcli_start(int argc, char **argv, const lvcli_cmd *c, lvcli_args *a, lv_dataset **ds);
/* A command on one dataset: c's options parsed, `check` (may be NULL) checks the other
 * positional arguments (setting vers/when_ms), DATASET (pos[0]) is opened, `run` runs, and
 * the dataset is closed with its warnings printed (lvcli_close).  Returns the exit status. */
int lvcli_run_dataset(int argc, char **argv, const lvcli_cmd *c, int (*check)(lvcli_args *a),
		      int (*run)(const lvcli_args *a, lv_dataset *ds));
/* A command on one dataset, defined in one place: `static int cmd_NAME(argc, argv)`
 * (lvcli_run_dataset with CHECK and RUN) and its table entry lvcli_cmd_NAME, named "NAME",
 * with the positional ARGS, SUMMARY, DESCRIPTION and the options NAME_opts. */
#define LVCLI_DATASET_CMD(NAME, CHECK, RUN, ARGS, SUMMARY, DESCRIPTION)                     \
	static int cmd_##NAME(int argc, char **argv)                                        \
	{                                                                                   \
		return lvcli_run_dataset(argc, argv, &lvcli_cmd_##NAME, CHECK, RUN);        \
	}                                                                                   \
	const lvcli_cmd lvcli_cmd_##NAME = { #NAME, ARGS, SUMMARY, DESCRIPTION, NAME##_opts, \
					     cmd_##NAME, true }
/* Prints the dataset's warnings on stderr, once each ("lancever: warning: ...", unless
 * --quiet; vanished manifests as one summary line), then frees it. */
void lvcli_close(lv_dataset *ds);
/* `,"warnings":[...]` for a --json report (the leading comma included). */
void lvcli_json_warnings(FILE *f, const lv_dataset *ds);

/* ---- refs.c: VERSION as people write it (docs/cli.md, "Versions (refs)") ---- */

enum lvcli_ref_kind { LVCLI_REF_NUMBER = 1, LVCLI_REF_TAG, LVCLI_REF_LATEST };
typedef struct lvcli_ref {
	const char *text;    /* as typed (for messages) */
	int kind;            /* enum lvcli_ref_kind */
	const char *tag;     /* LVCLI_REF_TAG: the name (inside text) */
	uint64_t version;    /* LVCLI_REF_NUMBER */
	uint64_t back;       /* LVCLI_REF_LATEST: latest~back */
	char branch[256];    /* BRANCH: given, else "" (in the struct: a ref may be copied) */
} lvcli_ref;
/* Syntax only (before the dataset is opened): 0, or a usage error naming `what` (2). */
int lvcli_ref_parse(const char *what, const char *s, lvcli_ref *r);
/* --before-version's REF: as lvcli_ref_parse, and a number must be >= 1. */
int lvcli_before_parse(const char *s, lvcli_ref *r);

/* What resolving refs needs: the dataset (and the branch it is on), read once. */
typedef struct lvcli_refctx {
	lv_dataset *ds;      /* the dataset in use (borrowed, or `own`) */
	lv_dataset *own;     /* a branch this context opened (closed by lvcli_refctx_free) */
	const char *uri, *cmd;
	const char *branch;  /* the branch of ds; NULL = main */
	bool may_switch;     /* a ref on another branch opens it (show); else it is an error */
	lv_refs *refs;           /* loaded by this context (freed by it) */
	const lv_refs *borrowed; /* or a version list's (lv_version_list_refs): used before loading */
	bool refs_tried, have_latest;
	uint64_t latest;
	uint64_t requests, bytes_read; /* what reading the refs cost (--stats) */
} lvcli_refctx;
void lvcli_refctx_init(lvcli_refctx *c, lv_dataset *ds, const char *uri, const char *cmd, bool may_switch);
void lvcli_refctx_free(lvcli_refctx *c);
/* Tag names from `l` (lv_version_list_refs) unless this context loaded its own: no second load. */
void lvcli_refctx_borrow(lvcli_refctx *c, const lv_version_list *l);
/* Adds what reading the refs cost to a --stats report (the tag names are read beside it). */
void lvcli_refctx_report(const lvcli_refctx *c, lv_history_report *r);
/* The dataset's refs (loaded once); NULL after printing the error. */
const lv_refs *lvcli_refctx_refs(lvcli_refctx *c);
/* The version r names (c->ds may become the ref's branch when c->may_switch); 0, or prints an
 * error naming r->text and returns 1. */
int lvcli_ref_resolve(lvcli_refctx *c, const lvcli_ref *r, uint64_t *out);
/* --before-version's ref resolved on ds's branch (cleanup and expire: no switching) into
 * *out; 0, or 1 after the error. */
int lvcli_before_resolve(lv_dataset *ds, const char *uri, const char *cmd, const lvcli_ref *r,
			 uint64_t *out);
/* The names of the tags on v of c's branch (at most max; borrowed from c); none unless
 * v->is_tagged, so the refs are read only when some version is tagged. */
size_t lvcli_tags_of(lvcli_refctx *c, const lv_version_info *v, const char **names, size_t max);
/* The tag names comma-separated for a table cell (escaped, "" if none; c may be NULL). */
void lvcli_tags_text(char *buf, size_t cap, lvcli_refctx *c, const lv_version_info *v);

/* ---- select.c: --since, --until, --limit, --reverse of versions and history ---- */

typedef struct lvcli_bound {
	bool given, is_time;
	const char *text;  /* as typed */
	int64_t ms;        /* is_time */
	lvcli_ref ref;     /* else */
	uint64_t version;  /* the ref resolved */
} lvcli_bound;
typedef struct lvcli_select {
	lvcli_bound since, until; /* inclusive */
	uint64_t limit;           /* the newest N of what the bounds keep; 0 = all */
	bool reverse;             /* newest first (the default: oldest first) */
} lvcli_select;
/* The options' syntax (before opening): 0 or a usage error (2). */
int lvcli_select_parse(const lvcli_args *a, lvcli_select *s);
/* The refs of the bounds resolved on c's branch: 0, or 1 after the error. */
int lvcli_select_resolve(lvcli_select *s, lvcli_refctx *c);
/* Whether v is within the bounds. */
bool lvcli_select_keep(const lvcli_select *s, const lv_version_info *v);
/* Prints what s selects of l (a table with its gaps in place, or a JSON array); the exit
 * status. */
int lvcli_select_print(FILE *f, const lv_version_list *l, const lvcli_select *s, bool json,
		       bool show_cleaned, lvcli_refctx *tags);
/* Whether any of the four options was given. */
bool lvcli_select_any(const lvcli_select *s);
/* --format csv|arrow of what s selects of l, in version order (lv_version_list_select; --reverse
 * is refused before: an exported list is sorted by version); the exit status. */
int lvcli_select_emit(const lvcli_args *a, const lv_version_list *l, const lvcli_select *s,
		      const char *kind, lvcli_refctx *tags);
/* The options' table rows (versions, history). */
#define LVCLI_OPT_LIST(WHAT)                                                                       \
	{ "--limit", "N", "only the newest N " WHAT " (after --since/--until)", LVCLI_NUMBER, 1,      \
	  UINT32_MAX, offsetof(lvcli_args, limit) },                                               \
	{ "--reverse", NULL, "newest first (the default is oldest first, by version)", LVCLI_FLAG, 0, \
	  0, offsetof(lvcli_args, reverse) },                                                      \
	{ "--since", "V|TIME", "only versions from V on (a version, tag, BRANCH:V, latest~N), or "  \
	  "committed at or after TIME (2026-12-02, @MILLISECONDS, '3 days ago')", LVCLI_STRING, 0, 0, \
	  offsetof(lvcli_args, since) },                                                           \
	{ "--until", "V|TIME", "only versions up to V, or committed at or before TIME (as --since)", \
	  LVCLI_STRING, 0, 0, offsetof(lvcli_args, until) }

/* ---- format*.c: --format json|table|csv|arrow (versions, history, tags, cleanup) ---- */

/* json is the commands' own --json and table their default; csv and arrow are written from
 * the library's Arrow C stream export (lancever/arrow.h), so they carry the same columns. */
enum lvcli_format { LVCLI_FMT_TABLE = 1, LVCLI_FMT_JSON, LVCLI_FMT_CSV, LVCLI_FMT_ARROW, LVCLI_FMT_HTML };
/* The archive options of checkpoint, cleanup, expire and info (checkpoint/compose.c). */
#define LVCLI_OPT_NO_ARCHIVE                                                                       \
	{ "--no-archive", NULL, "record only the newest --max-entries versions (the proposal's "     \
	  "behaviour): older ones leave the history once their manifests are removed, instead of "  \
	  "being sealed into archive segments", LVCLI_FLAG, 0, 0, offsetof(lvcli_args, no_archive) }
#define LVCLI_OPT_SEGMENT_ROWS                                                                     \
	{ "--segment-rows", "N", "versions per archive segment (default 4096, at most --max-entries)", \
	  LVCLI_NUMBER, 1, INT64_MAX, offsetof(lvcli_args, segment_rows) }
#define LVCLI_OPT_FORMAT                                                                          \
	{ "--format", "F", "output as table (the default), json (the same as --json), csv, or arrow " \
	  "(an Arrow IPC stream: redirect it to a file or a pipe); history also html (a page with a " \
	  "timeline)", LVCLI_FORMAT, 0, 0,                                                          \
	  offsetof(lvcli_args, format) }

/* Stores --format's value (args.c: the parser's); 0 or the exit status of a usage error. */
int lvcli_format_set(const char *opt, const char *v, int *dst);
/* After parsing: --json with another format, or arrow to a terminal, is a usage error (2);
 * --format json sets a->json.  0 otherwise. */
int lvcli_format_check(const lvcli_cmd *c, lvcli_args *a);
/* True when a->format is csv or arrow (the command then writes through lvcli_emit_*). */
bool lvcli_format_stream(const lvcli_args *a);
/* Export options: batch_rows from LANCEVER_ARROW_BATCH_ROWS (a test knob; unset = default). */
const lv_arrow_options *lvcli_arrow_options(void);
/* The same with another default batch size (history's stream: LVCLI_STREAM_BATCH_ROWS, so it
 * holds about as much as --json does); LANCEVER_ARROW_BATCH_ROWS still overrides it. */
const lv_arrow_options *lvcli_arrow_options_rows(size_t batch_rows);
#define LVCLI_STREAM_BATCH_ROWS 8192
/* Writes the stream (taking it) to stdout as a->format says; returns the exit status. */
int lvcli_emit_stream(const lvcli_args *a, struct ArrowArrayStream *s);
/* The same for a version list's stream with the command's tags (may be NULL): the output gains
 * a tags column (format_tags.c). */
int lvcli_emit_stream_tags(const lvcli_args *a, struct ArrowArrayStream *s, lvcli_refctx *tags);
/* The same for a version list (kind "versions" or "history"). */
int lvcli_emit_list(const lvcli_args *a, const lv_version_list *l, const char *kind,
		    lvcli_refctx *tags);
/* The writers: 0 or an LV_* status with err set; both take the stream. */
int lvcli_write_csv(struct ArrowArrayStream *s, FILE *f, lv_error *err);
/* The same, with the header line only when `header` (a part of a longer CSV after the first). */
int lvcli_write_csv_part(struct ArrowArrayStream *s, FILE *f, bool header, lv_error *err);
/* One CSV field (RFC 4180): quoted when empty or holding a comma, a quote, CR or LF, quotes
 * doubled; the bytes as they are (no terminal escaping). */
void lvcli_csv_field(FILE *f, const char *s, size_t n);
int lvcli_write_arrow(struct ArrowArrayStream *s, FILE *f, lv_error *err);
/* format_tags.c: `out` is `in` (taken) with the tags column appended to its schema and batches,
 * when in's schema is a version list's; else out is in, unchanged.  0, or LV_ENOMEM / LV_EIO
 * (err set; `in` released). */
int lvcli_tags_stream(struct ArrowArrayStream *out, struct ArrowArrayStream *in, lvcli_refctx *tags,
		      lv_error *err);
/* The tag names of `version` (is_tagged as the list says) joined with "," into buf (cap bytes,
 * cut short with "..." when longer); the length (0: none). */
size_t lvcli_tags_join(lvcli_refctx *tags, uint64_t version, bool is_tagged, char *buf, size_t cap);

/* format_html.c: history --format html, streamed from lv_history_each with options o and the
 * selection's bounds (sel may be NULL); the exit status. */
int lvcli_history_html(FILE *f, lv_dataset *ds, const char *uri, const lv_history_options *o,
		       const lvcli_select *sel, lvcli_refctx *refs);

/* ---- records.c ---- */

/* One version as a JSON object: always the same keys (null where unknown); LanceDB's
 * listVersions() record (version, timestamp, metadata) and ours; "tags" from `tags` (may be
 * NULL: none known). */
void lvcli_print_version_json(FILE *f, const lv_version_info *v, lvcli_refctx *tags);
/* The JSON array (one record a line) of the versions l[idx[0..k)] (reversed when `reverse`),
 * written in 64 KiB pieces under one lock of f; 1 after saying so when out of memory. */
int lvcli_print_versions_json(FILE *f, const lv_version_list *l, const size_t *idx, size_t k,
			      bool reverse, lvcli_refctx *tags);
/* The same keys without the braces (for a report that adds its own). */
void lvcli_print_version_fields(FILE *f, const lv_version_info *v, lvcli_refctx *tags);
/* The table a row at a time (history streams it): header, row, a gap marked in place. */
void lvcli_print_table_header(FILE *f, bool show_cleaned);
void lvcli_print_table_row(FILE *f, const lv_version_info *v, bool show_cleaned, lvcli_refctx *tags);
/* A gap's row: with `ds` (may be NULL), the reason a capture's gap note gives, if one does. */
void lvcli_print_table_gap(FILE *f, uint64_t first, uint64_t last, lv_dataset *ds);
/* --stats: where a history answer came from and what it cost (stderr). */
void lvcli_print_report(const lv_history_report *r);
void lvcli_format_time(char *buf, size_t cap, int64_t ms);

/* ---- progress.c: progress on long work (stderr) ---- */

typedef struct lvcli_progress {
	char phase[64];   /* the phase last drawn */
	uint64_t total;   /* its total (a phase that comes again with another total is a new one) */
	int64_t last_ms;  /* when (monotonic clock) */
	int64_t start_ms; /* when the phase began (its rate and ETA) */
	bool drawn;       /* a terminal line is showing (cleared by "done" or lvcli_progress_end) */
	int64_t run_ms;   /* the first call (a terminal draws nothing before the delay) */
} lvcli_progress;
/* Milliseconds of work before a terminal shows a progress line (LANCEVER_PROGRESS_DELAY_MS). */
#define LVCLI_PROGRESS_DELAY_MS 500
/* Whether progress is shown: --progress=json, or auto with stderr a terminal and no --quiet. */
bool lvcli_progress_on(void);
/* Draws "phase done/total  41% 12.3k/s ETA 9s" (a JSON line with --progress=json): a new phase
 * and a phase's last step always, the steps between at most LVCLI_PROGRESS_HZ times a second;
 * phase "done" clears the line.  Nothing unless lvcli_progress_on(). */
#define LVCLI_PROGRESS_HZ 4
void lvcli_progress_draw(lvcli_progress *p, const char *phase, uint64_t done, uint64_t total);
/* Clears a terminal line the work left showing (it failed before "done"); nothing otherwise. */
void lvcli_progress_end(lvcli_progress *p);
/* An lv_progress_cb drawing into the lvcli_progress its payload points to. */
void lvcli_progress_cb(const char *phase, uint64_t done, uint64_t total, void *payload);
/* Work the library reports no steps of: after a second, "phase [count] ... 3s" redrawn (a JSON
 * line a second with --progress=json) until lvcli_ticker_stop clears it. */
void lvcli_ticker_start(const char *phase);
void lvcli_ticker_stop(void);
/* The items the ticker's work has done so far (shown beside its phase; any thread). */
void lvcli_ticker_count(uint64_t n);

#endif
