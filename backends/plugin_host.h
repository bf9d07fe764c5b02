/* plugin_host.h - a plugin's side of the host services (brig-backend.h): errors are made with
 * the host's constructor and diagnostics go through the host's logger, because a plugin never
 * prints.  Without a host (unit tests) errors fall back to util.h's constructor.
 */
#ifndef BRIG_PLUGIN_HOST_H
#define BRIG_PLUGIN_HOST_H

#include "brig-backend.h"

/* Remember the host's table; called by the plugin's entry point. */
void plugin_host_set(const brig_host_services *host);
/* Like brig_fail(): replace *err (if err) with a new error and return status. */
int plugin_fail(brig_error **err, int status, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Mark *err (just made) transient - the engine is not reachable now, it may be later - and
 * return status: `return plugin_transient(err, plugin_fail(err, ...));`. */
int plugin_transient(brig_error **err, int status);
/* Free an error this plugin received from its own helpers (same libc allocator as the host). */
void plugin_error_free(brig_error *e);
void plugin_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline void cleanup_errorp(brig_error **e)
{
	plugin_error_free(*e);
}
#define cleanup_error __attribute__((cleanup(cleanup_errorp)))

#endif
