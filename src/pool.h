/* pool.h - the warm pool: per context and language, up to `warm_pool` containers already
 * STARTED with exactly the box the next run of that language gets, each with its interpreter
 * blocked reading the code from stdin.
 *
 * Besides, per workspace a call ended in, one container started with exactly the box the next
 * run in that workspace gets (its volume, its uid), handed to a run in that workspace only.
 *
 * Rules: a container runs untrusted code once and is never reused; the pool never
 * holds more than warm_pool idle (or starting) containers per language, one per workspace;
 * idle + starting + running containers times memory_mb, plus the size of each workspace with
 * a pooled container, stay within memory_budget_mb, or the pool stops refilling; the containers
 * carry the brig labels (brig gc removes them when their owner died); brig_ctx_free removes them
 * all before it returns.  A run whose spec no longer matches the idle containers' box (a changed
 * seccomp profile file) drains that language. The policy of a context is immutable: a new policy is
 * a new context with a new pool.  The pool follows the dispatcher's choice of backend (it changes
 * when probes expire), draining the containers of a backend runs no longer get.
 *
 * Steps on the pool's job queue (jobq.h; at most POOL_WORKERS at once) refill in the
 * background and remove used and drained containers, removals first.
 */
#ifndef BRIG_POOL_H
#define BRIG_POOL_H

#include <stdbool.h>

#include <json-c/json.h>

#include "internal.h"

#define POOL_WORKERS 4

typedef struct pool_entry pool_entry;

/* The pool of ctx, its first steps queued; NULL when the policy's warm_pool is 0.  Never
 * blocks: the backend is chosen (and probed) by the steps, again and again. */
brig_pool *pool_new(brig_ctx *ctx);
/* Stop refilling, remove every container (idle, starting, used), join the threads. */
void pool_free(brig_pool *pool);

/* An idle container of backend lb whose box is exactly spec's, or NULL (pool NULL, empty, or
 * of another box: then that language is drained and refilled with the current box). */
pool_entry *pool_take(brig_pool *pool, const loaded_backend *lb, brig_language lang,
		      const brig_spec *spec);
/* The box it was started with; the caller sets this run's stdin and timeout on it. */
brig_spec *pool_entry_spec(pool_entry *e);
void *pool_entry_handle(const pool_entry *e);
/* A taken container is done with (run or not): removed in the background. */
void pool_release(brig_pool *pool, pool_entry *e);

/* A call in workspace `id` (of `size_mb`, idle TTL idle_ttl_s) ended: keep one box for it, of
 * `lang`, the box a cold run of `lang` in it would get (one per workspace: a box of another
 * language goes).  An idle one is dropped after min(60 s, half the idle TTL); pool_take hands it
 * to a run in that workspace only.  While it is pooled or starting, the workspace's size counts
 * in the memory budget (tmpfs is RAM). */
void pool_want_workspace(brig_pool *pool, const loaded_backend *lb, brig_language lang,
			 const char *id, long size_mb, long idle_ttl_s);
/* The workspace ends: its idle box (if any) goes to removal, one starting is removed once
 * started. */
void pool_drop_workspace(brig_pool *pool, const char *id);

/* Runs in flight on the context (pooled or not) count against the memory budget. */
void pool_run_begin(brig_pool *pool);
void pool_run_end(brig_pool *pool);

/* {"warm_pool","memory_budget_mb","state","backend","reason","running","removing",
 *  "languages":{"python":{"idle","starting","error"},...},
 *  "workspaces":{"idle","starting","wanted","memory_mb"},"taken","started","drained"} */
json_object *pool_status_json(brig_pool *pool, const brig_policy *policy);

/* Tests and benchmarks: wait until `lang` has at least `n` idle containers; false on
 * timeout or when the pool cannot fill. */
bool pool_wait_idle(brig_pool *pool, brig_language lang, int n, int timeout_ms);

#endif
