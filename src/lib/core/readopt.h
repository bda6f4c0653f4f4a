/*
 * A split history identity (issue 24): the newest head checkpoint carries one
 * dataset_created (B) while a complete, verified record of the history carries
 * another (A) -- what a writer that started a new identity on an incomplete
 * listing left behind.  lancever check reports it; check --salvage re-adopts A.
 */
#ifndef LV_CORE_READOPT_H
#define LV_CORE_READOPT_H

#include "core/dataset.h"
#include "core/manifests.h"

typedef struct lv__split {
	bool found;          /* a complete older identity to re-adopt */
	int64_t newer;       /* B: the newest usable head's dataset_created */
	int64_t older;       /* A: the identity to re-adopt */
	char head[96];       /* the newest usable head */
	char evidence[96];   /* the older head, or one of the segments, that carries A */
	uint64_t segments;   /* segments verified under A */
	char why_not[256];   /* found false but another identity seen: why it is not re-adopted */
} lv__split;

/*
 * Looks for a split identity.  A is taken from the segments the newest usable head's index
 * names (all valid, all carrying one dataset_created other than B), else from the newest
 * usable older head carrying another one (whose index's segments must all be valid under
 * it).  "Complete, verified": every segment those indexes name is there and reads as a valid
 * segment of A (checksum, name, rows in range), it agrees with the newest head's copy of
 * every row both hold, and no listed segment carries B.  Usable heads are confirmed by the
 * live manifests (the ladder's rule), so both identities describe this dataset's history.
 * 0 (out->found says), or LV_ENOMEM / a storage error of the listings.
 */
int lv__split_find(lv_dataset *ds, const lv__manifest_entry *live, size_t nlive, lv__split *out,
		   lv_error *err);

#endif
