#ifndef LV_CRC32C_H
#define LV_CRC32C_H
#include <stddef.h>
#include <stdint.h>
/* CRC-32C (Castagnoli), reflected, init/xorout 0xffffffff; chain by passing the previous value. */
uint32_t lv__crc32c(uint32_t crc, const void *data, size_t n);
#endif
