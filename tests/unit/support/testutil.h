/* Shared helpers for cmocka unit tests. */
#ifndef LV_TESTUTIL_H
#define LV_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lancever/checkpoint.h"
#include "lancever/cleanup.h"
#include "lancever/dataset.h"
#include "lancever/storage.h"

/* Fails the current cmocka test, with the lv_error's message, when EXPR (a
 * lancever call returning an int status) is not 0.  ERR is the lv_error the
 * call was given. */
#define TU_CHECK(err, expr)                                                  \
	do {                                                                 \
		int rc_ = (expr);                                            \
		if (rc_ != 0)                                                \
			fail_msg("%s -> %d: %s", #expr, rc_, (err).message); \
	} while (0)

/* Reads a whole file (malloc'ed, caller frees); fails the test if unreadable. */
uint8_t *tu_read_file(const char *path, size_t *size);
/* Writes `text` to a file (created or truncated); fails the test if it cannot. */
void tu_write_file(const char *path, const char *text);
/* printf into one of 8 rotating static buffers of 13,000 bytes (a path or a shell command). */
char *tu_fmt(const char *fmt, ...);
/* Runs a shell command; fails the test unless it exits 0. */
void tu_sh(const char *cmd);
/* Path of a fixture under tests/fixtures (static buffer, rotates among 4). */
const char *tu_fixture(const char *rel);
/* Lists file names in a directory, sorted (NULL-terminated array; free with tu_free_list). */
char **tu_list_dir(const char *dir);
void tu_free_list(char **l);
/* The number of names in a list of tu_list_dir() or tu_list_paths(). */
size_t tu_list_len(char *const *l);
/* Makes a fresh temporary directory (static buffer). */
const char *tu_tmpdir(void);
/* rm -rf */
void tu_rmrf(const char *path);
/* A new, empty in-memory store; fails the test on error. */
lv_storage *tu_mem(void);
/* The paths of the objects under `dir` of `st` (recursive or not), sorted (NULL-terminated
 * array; free with tu_free_list); fails the test on error. */
char **tu_list_paths(lv_storage *st, const char *dir, bool recursive);
/* A dataset opened on `st` with default options; fails the test on error. */
lv_dataset *tu_open(lv_storage *st);
/* Writes a checkpoint of `st` with the default config (through a dataset opened for it);
 * fails the test on error. */
lv_checkpoint_result tu_checkpoint(lv_storage *st);
/* The policy of tu_cleanup_retain (for a test that wants the call's status itself). */
lv_cleanup_policy tu_retain_policy(int64_t n, int64_t now_ms, const lv_checkpoint_config *cfg);
/* Cleans up all but the newest n versions of `ds`, tagged ones too, as at now_ms (0: the
 * clock's time), with the checkpoint config `cfg` (NULL: the default); fails the test on error. */
lv_cleanup_stats tu_cleanup_retain(lv_dataset *ds, int64_t n, int64_t now_ms, const lv_checkpoint_config *cfg);
/* A checkpoint written on another thread: tu_checkpoint_job_run (a pthread start routine)
 * opens a dataset on `st` with default options, writes a checkpoint with `cfg` (NULL: the
 * default) and keeps the status in rc and the error in err. */
typedef struct tu_checkpoint_job {
	lv_storage *st;
	const lv_checkpoint_config *cfg;
	int rc;
	lv_error err;
} tu_checkpoint_job;
void *tu_checkpoint_job_run(void *job);
/* lv_versions() / lv_history() of `ds` (report: may be NULL); fails the test on error. */
lv_version_list *tu_versions(lv_dataset *ds, lv_history_report *report);
lv_version_list *tu_history(lv_dataset *ds, lv_history_report *report);
/* The number of live versions lv_versions() lists for `ds`; fails the test on error. */
size_t tu_count_versions(lv_dataset *ds);
/* Asserts that the history of `st` (a dataset opened on it with default options) has n rows,
 * answered from `rung` (an LV_RUNG_*). */
void tu_expect_history_rung(lv_storage *st, int rung, size_t n);
/* Asserts that the history of `ds` holds versions 1..n in order, version v cleaned up
 * exactly when cleaned[v] (cleaned has n + 1 entries). */
void tu_expect_history(lv_dataset *ds, uint64_t n, const bool *cleaned);
/* The whole object at `path` of `st`; fails the test on error. */
lv_buf tu_read(lv_storage *st, const char *path);
/* xorshift64 over *state: the same sequence for the same seed on every machine. */
uint64_t tu_rng(uint64_t *state);
/* The k-th (0-based) occurrence of the n bytes of needle in b, or NULL. */
uint8_t *tu_nth(lv_buf *b, const void *needle, size_t n, int k);
/* LeakSanitizer's recoverable check in a sanitized build (nonzero: a leak), else 0. */
int tu_leak_check(void);

#endif
