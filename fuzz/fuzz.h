/*
 * What the fuzz targets share: the libFuzzer entry point and CHECK, a property
 * every input must keep.  A failed CHECK names the target (FUZZ_NAME, defined
 * before this header is included), the line and the condition, and aborts, so
 * libFuzzer and the replay driver (standalone_driver.c) both stop on it.
 */
#ifndef LV_FUZZ_H
#define LV_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                     \
	do {                                                                         \
		if (!(c)) {                                                          \
			fprintf(stderr, "%s: property failed at line %d: %s\n", FUZZ_NAME, \
				__LINE__, #c);                                       \
			abort();                                                     \
		}                                                                    \
	} while (0)

#endif
