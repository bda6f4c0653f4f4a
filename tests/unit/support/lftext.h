/*
 * Everything a reader can ask of a decoded Lance file (version, rows, fields, columns with
 * their logical types, errors and every cell, metadata), as one text: two reads that give
 * the same answer give the same text.  Binary values and arrays are written in hex, so the
 * text holds no NUL and compares with strcmp.
 */
#ifndef LV_TEST_LFTEXT_H
#define LV_TEST_LFTEXT_H

#include "lancever/lancefile.h"

/* The text (malloc'd: the caller frees it); fails the test when out of memory. */
char *tu_lf_describe(const lv_lancefile *f);

#endif
