/*
 * The built-in storage backends (stores.c).  lv__stores_builtin() registers
 * them once (thread-safe); every path that parses an address calls it first.
 */
#ifndef LV_CORE_STORES_H
#define LV_CORE_STORES_H

void lv__stores_builtin(void);

#endif
