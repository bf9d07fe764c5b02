/* internal.h - libbrig's private structures: the context, loaded plugins, selection. */
#ifndef BRIG_INTERNAL_H
#define BRIG_INTERNAL_H

#include <pthread.h>

#include "audit.h"
#include "brig-backend.h"
#include "brig.h"
#include "policy.h"
#include "util.h"

/* A plugin that loaded and passed the ABI checks, with its probe cached for the process. */
typedef struct loaded_backend {
	char *path;
	void *handle;
	const brig_backend *be;
	pthread_once_t probe_once;
	brig_probe_info info; /* valid after probe_once ran */
	char *probe_error;    /* probe() itself failed */
} loaded_backend;

typedef struct brig_pool brig_pool;

struct brig_ctx {
	brig_policy *policy;
	loaded_backend *backends;
	size_t n_backends;
	char **refused; /* "path: reason" for plugins that were not loaded */
	audit_log *audit;
	pthread_mutex_t lock;
	brig_pool *pool; /* the warm pool (pool.h), NULL when off */
};

/* A hook the plugin's table is long enough to have (appended hooks are checked by size). */
#define BE_HAS(be, field)  ((be)->struct_size >= offsetof(brig_backend, field) + sizeof((be)->field))
#define BE_HOOK(be, field) (BE_HAS(be, field) ? (be)->field : NULL)

/* dispatch.c */
void backend_probe(loaded_backend *lb);
/* The backend the policy selects (backend name / auto, isolation minimum); never a fallback. */
int dispatch_select(brig_ctx *ctx, const brig_policy *p, loaded_backend **out, brig_error **err);

#endif
