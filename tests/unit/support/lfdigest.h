/*
 * The committed corpora of real Lance files (tests/fixtures/lance12, lance14): each
 * directory's index.json lists, per file, the version, row count and, per column, what the
 * writing peer itself read back (type, null count, FNV-1a 64 digest of every cell, as the
 * make_fixtures scripts compute it) or, for a column lancever does not decode by design,
 * "type": "undecoded" with a piece of the reason it must give.
 */
#ifndef LV_TEST_LFDIGEST_H
#define LV_TEST_LFDIGEST_H

#include <stddef.h>

/* Reads every file of DIR/index.json (strictly, or partially when the index names an
 * undecoded column) and fails the test on any difference; at least min_files files. */
void lfd_check_index(const char *dir, size_t min_files);

#endif
