/* loader.h - dlopen the backend plugins and check their ABI before touching any hook. */
#ifndef BRIG_LOADER_H
#define BRIG_LOADER_H

#include "internal.h"

const brig_host_services *loader_host_services(void);
/* A diagnostic line on stderr, only with BRIG_DEBUG set (the library never prints else). */
void core_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Load one plugin from an absolute path into *out.  Refuses (BRIG_E_PLUGIN) a file that is not
 * a plugin, has no entry symbol, a wrong ABI major, or a table shorter than the required part. */
int loader_load_file(const char *path, loaded_backend *out, brig_error **err);
void loader_unload(loaded_backend *lb);
/* The plugin directory: $BRIG_BACKEND_DIR (secure_getenv) or the compiled-in default. */
const char *loader_backend_dir(void);
/* brig-init, the program every box runs as its PID 1, beside the plugin directory (DIR/..:
 * $(pkglibdir) when installed, backends/ in the build tree), owned and protected like a plugin.
 * Its path (malloc'ed), or NULL and why. */
char *loader_find_init(const char *dir, brig_error **err);
/* Load every *.so of dir (sorted).  Refused plugins are listed in *refused as "path: reason";
 * only an unreadable directory is an error. */
int loader_load_dir(const char *dir, loaded_backend **list, size_t *n, char ***refused,
		    brig_error **err);

#endif
