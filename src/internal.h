/* internal.h - libbrig's private structures: the context, loaded plugins, selection. */
#ifndef BRIG_INTERNAL_H
#define BRIG_INTERNAL_H

#include <json-c/json.h>
#include <pthread.h>

#include "audit.h"
#include "brig-backend.h"
#include "brig.h"
#include "policy.h"
#include "spec.h"
#include "util.h"

/* A plugin that loaded and passed the ABI checks. */
typedef struct loaded_backend {
	char *path;
	void *handle;
	const brig_backend *be;
	char *runtime; /* the OCI runtime the host runs it with (its default, or the policy's
			* gvisor_runtime): fixed for the context */
	/* probe.c: the last answer and how long it holds, under probe_lock */
	pthread_mutex_t probe_lock;
	brig_probe_info info;
	int64_t checked_at;  /* monotonic ms of the last probe; 0: never */
	int64_t valid_until; /* monotonic ms; INT64_MAX: until probe_invalidate */
	int backoff_ms;      /* how long the next negative answer holds */
} loaded_backend;

typedef struct brig_pool brig_pool;

struct brig_ctx {
	brig_policy *policy;
	loaded_backend *backends;
	size_t n_backends;
	char **refused; /* "path: reason" for plugins that were not loaded */
	audit_log *audit;
	pthread_mutex_t lock; /* audit, run slots */
	pthread_cond_t slot_free;
	int running;          /* brig_run calls holding a slot (max_concurrent_runs) */
	brig_pool *pool;      /* the warm pool (pool.h), NULL when off */
	bool use_probe_cache; /* take a verification other processes remembered (not doctor) */
	char *init;           /* brig-init on the host; NULL (see init_error): runs are refused */
	char *init_error;
	char install[17];        /* this installation (its plugin directory): label brig.install */
	const char *warnings[4]; /* brig_ctx_warnings, NULL-terminated (borrowed) */
	bool reaped;             /* reap_at_start ran */
	bool spares;             /* brig_ctx_set_spares: cold runs with egress use spare holders */
	struct spare_state *spare; /* what spare_detach does at brig_ctx_free (spare.h) */
};

/* A hook the plugin's table is long enough to have (appended hooks are checked by size). */
#define BE_HAS(be, field)  BRIG_HAS_FIELD(be, brig_backend, field)
#define BE_HOOK(be, field) (BE_HAS(be, field) ? (be)->field : NULL)

/* run.c: one of the context's max_concurrent_runs slots (0, BRIG_E_BUSY, BRIG_E_CANCELLED) */
int run_slot_take(brig_ctx *ctx, int cancel_fd, int wait_ms, brig_error **err);
void run_slot_release(brig_ctx *ctx);
/* run.c: the proxy of egress `e` is up and answering (its configuration written, the
 * backend's egress_ensure): before a run's box, or a warm box, is started */
int run_egress_up(const loaded_backend *lb, const brig_egress *e, brig_error **err);
/* run.c: the network holder of a box with egress (brig_spec.net_holder) started, before the
 * box is created; removed, after the box is.  Neither does anything without a holder. */
int run_holder_up(const loaded_backend *lb, const brig_spec *spec, brig_error **err);
void run_holder_down(const loaded_backend *lb, const brig_spec *spec);

/* dispatch.c */
/* The backend the policy selects (backend name / auto, isolation minimum); never a silent
 * fallback: when `auto` could not use a stronger backend than the one it chose, *fallback (if
 * not NULL) says which and why (malloc'ed), else it is NULL. */
int dispatch_select(brig_ctx *ctx, loaded_backend **out, char **fallback, brig_error **err);
/* The target (runtime, isolation) of boxes for backend lb. */
spec_target dispatch_target(const brig_ctx *ctx, const loaded_backend *lb);
/* The features a spec needs that lb lacks, or 0. */
uint32_t dispatch_missing_features(const loaded_backend *lb, const brig_spec *spec,
				   bool cancellable);
/* Why lb refuses spec ("backend B cannot <what>: it lacks support for ..."), malloc'ed, or
 * NULL when it lacks nothing the spec needs. */
char *dispatch_refusal(const loaded_backend *lb, const brig_spec *spec, bool cancellable,
		       const char *what);

#endif
