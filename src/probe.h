/* probe.h - what the host knows of each backend: its probe's answer with an expiry, and, for a
 * backend that claims gVisor isolation, a smoke box run through it that proves the claim. */
#ifndef BRIG_PROBE_H
#define BRIG_PROBE_H

#include <stdbool.h>

#include "internal.h"

/* The backend's availability now: a cached answer while it is valid, else a fresh probe (and
 * verification).  A positive answer holds until probe_invalidate(); a negative one is asked
 * again after a short back-off (1 s, doubling up to PROBE_BACKOFF_MAX_MS), so a long-lived
 * process recovers when dockerd comes up or a slow smoke test passes later.  *snap (if not
 * NULL) receives a copy of the answer.  Thread-safe; concurrent callers of one backend wait
 * for one probe. */
bool probe_backend(brig_ctx *ctx, loaded_backend *lb, brig_probe_info *snap);
/* A run through this backend failed in a way that may mean the runtime went away (the engine
 * restarted, a transient sandbox error): the next selection probes again. */
void probe_invalidate(loaded_backend *lb);
/* The last answer, without probing (status pages): false if never probed. */
bool probe_last(loaded_backend *lb, brig_probe_info *snap);

#define PROBE_BACKOFF_MIN_MS 1000
#define PROBE_BACKOFF_MAX_MS 5000

/* brig's small state shared between processes of one user ($BRIG_CACHE_DIR, /run/brig for
 * root, else $XDG_RUNTIME_DIR/brig), mode 0700, created if missing; NULL if none fits. */
char *cache_dir(void);

/* probe_cache.c: a passed verification shared between processes (see there).  The key is NULL
 * when the backend could not name the runtime for sure (nothing is cached then). */
char *probe_cache_key(const char *backend, const brig_probe_info *info, const brig_spec *smoke);
bool probe_cache_load(const char *key, char *version, size_t version_len);
void probe_cache_store(const char *key, const char *version);

#endif
