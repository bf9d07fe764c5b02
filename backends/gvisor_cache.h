/* gvisor_cache.h - a passed gVisor smoke test, remembered across brig processes (see
 * gvisor_cache.c for the key, the place and the rules). */
#ifndef BRIG_GVISOR_CACHE_H
#define BRIG_GVISOR_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "dock.h"

/* The key of a probe of the registered runtime `rt` on the engine at `socket` (version text
 * `engine_version`) with the smoke image `image`; NULL when the runtime cannot be keyed (no
 * binary of its own here): then nothing is cached. */
char *gv_cache_key(const char *socket, const char *engine_version, const dock_runtime *rt,
		   const char *image);
/* A passed probe of `key` younger than the TTL: true, and its version text in `version`. */
bool gv_cache_load(const char *key, char *version, size_t version_len);
/* Remember a passed probe of `key` with its version text. */
void gv_cache_store(const char *key, const char *version);

#endif
