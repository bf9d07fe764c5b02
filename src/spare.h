/* spare.h - spare network holders: a one-shot run with egress takes a holder started ahead.
 *
 * A box with egress runs in its network holder's namespace; the engine takes ~600 ms to start a
 * container on the internal network.  With spares on (brig_ctx_set_spares: `brig run`), the
 * context remembers the holders its runs used; brig_ctx_free hands them to a detached process
 * that removes them and starts SPARE_COUNT spares of the same configuration, so that the next
 * run's box claims one (renamed to its holder's name) between its creation and its start.
 *
 * A spare is the holder spec with its owner and box labels taken out (spec_holder_to_spare),
 * keyed by SPEC_SPARE_LABEL=<key>: sha256 of the uid, the installation, brig's version, a
 * random lock domain kept in the cache directory beside the claim lock, and the holder's whole
 * configuration but its name, labels and program.  Only processes that share that directory's
 * lock share spares; claims are serialized by it.
 */
#ifndef BRIG_SPARE_H
#define BRIG_SPARE_H

#include <stdbool.h>

#include "internal.h"

#define SPARE_COUNT 2 /* spares kept per configuration */

typedef struct spare_state spare_state;

/* The key of `holder`'s configuration ("<64 hex>", malloc'ed), or NULL when the cache directory
 * cannot hold the lock domain. */
char *spare_key(const brig_ctx *ctx, const brig_spec *holder);
/* With spares on: claim a running spare for `holder` (renamed to its name).  true when one was;
 * false when none (or spares are off, or the backend cannot). */
bool spare_claim(brig_ctx *ctx, const loaded_backend *lb, const brig_spec *holder);
/* After a cold run whose box had `box->net_holder` (spares on): its removal is left to
 * spare_detach, and with `ran` (the holder ran: its proxy and network were found good) the
 * spares of its configuration, taking the holder spec out of `box`. */
void spare_after_run(brig_ctx *ctx, const loaded_backend *lb, brig_spec *box, bool ran);
/* brig_ctx_free: the holders used removed, and spares started, by a detached grandchild. */
void spare_detach(brig_ctx *ctx);
void spare_state_free(spare_state *s);
/* brig gc: wait for spares being started, then remove this lock domain's unclaimed spares. */
int spare_gc(brig_ctx *ctx, const loaded_backend *lb, int *removed);

#endif /* BRIG_SPARE_H */
