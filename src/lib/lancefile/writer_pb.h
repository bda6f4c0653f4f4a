/*
 * The Lance file writer's protobuf messages (writer_pb.c), shared by writer.c: page encodings
 * (2.0 ArrayEncoding, 2.1 PageLayout), the Encoding{direct{Any}} wrapper and the helpers that
 * build a message inside-out in lv__dbufs.  A sub-message is consumed (disposed and reset)
 * by the call that embeds it; lv__dbuf errors are sticky and surface at the final take.
 */
#ifndef LV_LANCEFILE_WRITER_PB_H
#define LV_LANCEFILE_WRITER_PB_H

#include "lancefile/lf_internal.h"

/* Appends sub as field f of m; consumes sub. */
void lv__lf_w_sub(lv__dbuf *m, uint32_t f, lv__dbuf *sub);
/* Packed varints v[0..n) as field f (nothing when n is 0). */
void lv__lf_w_packed(lv__dbuf *m, uint32_t f, const uint64_t *v, size_t n);
/* 2.0 nullable{no_nulls{values: flat{bits, buffer idx}}} as field 2 of m. */
void lv__lf_w_a20_nonull(lv__dbuf *m, uint64_t bits, uint32_t idx);
/* 2.0 nullable{some_nulls{validity: flat{1, buf 0}, values: flat{bits, buf 1}}}. */
void lv__lf_w_a20_somenull(lv__dbuf *m, uint64_t bits);
/* 2.0 nullable{all_nulls}. */
void lv__lf_w_a20_allnull(lv__dbuf *m);
/* 2.0 binary{indices (u64, buf 0), bytes (buf 1), null_adjustment adj}. */
void lv__lf_w_a20_binary(lv__dbuf *m, uint64_t adj);
/* 2.1 PageLayout{mini_block_layout}; value_bits 0 = variable width (strings). */
void lv__lf_w_l21_miniblock(lv__dbuf *m, bool def, uint64_t value_bits, size_t items);
/* 2.1 PageLayout{full_zip_layout} of variable-width values. */
void lv__lf_w_l21_fullzip(lv__dbuf *m, bool def, size_t items);
/* 2.1 PageLayout{all_null_layout}. */
void lv__lf_w_l21_allnull(lv__dbuf *m);
/* Encoding{direct{encoding: Any{url, value}}} as field f of m; consumes value. */
void lv__lf_w_encoding(lv__dbuf *m, uint32_t f, const char *url, lv__dbuf *value);

#endif
