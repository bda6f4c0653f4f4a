/*
 * lancever/sys/arrow.h - test hooks of the Arrow export (lancever/arrow.h).
 *
 * For tests that check the export's memory discipline: how many exported
 * objects are alive, and an injected allocation failure.  Both are
 * process-wide atomic counters (no locks; safe after fork()).
 */
#ifndef LANCEVER_SYS_ARROW_H
#define LANCEVER_SYS_ARROW_H

#include "../arrow.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Exported objects not yet released: every stream, schema and array the
 * export handed out, children included (a child counts once, whether its
 * parent or the consumer released it).  0 when a consumer released all.  Errors: none.
 */
LV_EXTERN int64_t lv_arrow_live_objects(void);

/**
 * Makes the `nth` memory allocation (1-based, counted from this call) of the
 * Arrow export and the IPC writer fail as if out of memory; 0 = never.
 * Returns the number of allocations counted since the previous call.  Errors: none.
 */
LV_EXTERN uint64_t lv_arrow_fail_alloc_at(uint64_t nth);

#ifdef __cplusplus
}
#endif
#endif
