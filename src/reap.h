/* reap.h - removing the boxes of dead brig processes (see reap.c for what counts). */
#ifndef BRIG_REAP_H
#define BRIG_REAP_H

#include <stdbool.h>

#include "internal.h"

/* A box named as brig names its boxes, whose owner label names a gone process of this pid
 * namespace. */
bool reap_box_orphaned(const char *name, const char *owner);
/* Remove this installation's orphaned boxes through lb; the count in *removed. */
int reap_orphans(brig_ctx *ctx, loaded_backend *lb, int *removed, brig_error **err);
/* The same, once per context and at most once a minute per user and installation, failures
 * only logged: every brig start cleans up after the brig processes that were killed. */
void reap_at_start(brig_ctx *ctx, loaded_backend *lb);

#endif
