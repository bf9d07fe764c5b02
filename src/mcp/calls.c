/* calls.c - tool calls in flight: table, worker pools, cancellation, progress, responses
 * (see calls.h for a call's life and the locking). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jobq.h"
#include "mcp/calls.h"
#include "mcp/era.h"
#include "mcp/output.h"

/* Waiting sandbox_status calls allowed (they do not count against max_concurrent_runs). */
#define AUX_QUEUE_MAX 8
/* A worker thread with no call for this long exits (before the server trims the heap, so that
 * its malloc cache is back in the heap by then): an idle server is its reader thread alone. */
#define WORKER_IDLE_MS 500

enum { CALL_QUEUED, CALL_RUNNING };

typedef struct call_pool {
	const char *name;
	struct mcp_calls *calls;
	jobq *q; /* its workers start on demand, up to n_threads, and exit when idle */
	int n_threads;
	int queued;
	int max_queued;
	int running;
} call_pool;

struct mcp_calls {
	mcp_calls_config cfg;
	pthread_mutex_t lock;
	mcp_call *table;
	call_pool runs; /* run_code: max_concurrent_runs workers */
	call_pool aux;  /* sandbox_status: one worker, never blocked by runs */
	bool stopping;
};

/* ---- calls ----------------------------------------------------------------------------- */

mcp_call *mcp_call_new(mcp_tool tool)
{
	mcp_call *c = xcalloc(1, sizeof *c);
	c->tool = tool;
	c->state = CALL_QUEUED;
	c->cancel_pipe[0] = c->cancel_pipe[1] = -1;
	return c;
}

void mcp_call_free(mcp_call *c)
{
	if (!c)
		return;
	if (c->id)
		json_object_put(c->id);
	if (c->progress_token)
		json_object_put(c->progress_token);
	free(c->id_key);
	free(c->id_text);
	free(c->code);
	free(c->workspace);
	if (c->args)
		json_object_put(c->args);
	free(c->traceparent);
	if (c->cancel_pipe[0] >= 0)
		close(c->cancel_pipe[0]);
	if (c->cancel_pipe[1] >= 0)
		close(c->cancel_pipe[1]);
	free(c);
}

/* Under the lock. */
static mcp_call *call_find(mcp_calls *calls, const char *key)
{
	for (mcp_call *c = calls->table; c; c = c->next)
		if (strcmp(c->id_key, key) == 0)
			return c;
	return NULL;
}

/* Under the lock. */
static void call_unlink(mcp_calls *calls, mcp_call *c)
{
	for (mcp_call **pp = &calls->table; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			c->next = NULL;
			return;
		}
}

/* Under the lock: make a running call's brig_run return at once. */
static void call_kick(mcp_call *c)
{
	if (c->cancel_pipe[1] >= 0)
		(void)!write(c->cancel_pipe[1], "x", 1); /* non-blocking; one byte is enough */
}

bool mcp_calls_has(mcp_calls *calls, const char *id_key)
{
	pthread_mutex_lock(&calls->lock);
	bool found = call_find(calls, id_key) != NULL;
	pthread_mutex_unlock(&calls->lock);
	return found;
}

bool mcp_calls_active(mcp_calls *calls)
{
	pthread_mutex_lock(&calls->lock);
	bool active = calls->table != NULL;
	pthread_mutex_unlock(&calls->lock);
	return active;
}

int mcp_calls_max_queued(const mcp_calls *calls)
{
	return calls->runs.max_queued;
}

/* The response to a call, in its era. */
static void respond(mcp_calls *calls, mcp_call *c, json_object *result)
{
	mcp_send_result(calls->cfg.out, c->id, c->modern ? mcp_modern_result(result) : result);
}

/* ---- progress -------------------------------------------------------------------------- */

/* notifications/progress for a call that asked for it; steps only ever increase and nothing
 * is sent for a cancelled call. */
static void send_progress(mcp_calls *calls, mcp_call *c, int step, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void send_progress(mcp_calls *calls, mcp_call *c, int step, const char *fmt, ...)
{
	if (!c->progress_token)
		return;
	pthread_mutex_lock(&calls->lock);
	bool skip = c->cancelled || step <= c->progress;
	if (!skip)
		c->progress = step;
	pthread_mutex_unlock(&calls->lock);
	if (skip)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	json_object *p = json_object_new_object();
	json_object_object_add(p, "progressToken", json_object_get(c->progress_token));
	json_object_object_add(p, "progress", json_object_new_int(step));
	json_object_object_add(p, "total", json_object_new_int(3));
	json_object_object_add(p, "message", json_object_new_string(m));
	free(m);
	mcp_send(calls->cfg.out, jsonrpc_notification("notifications/progress", p));
}

/* ---- work ------------------------------------------------------------------------------ */

static json_object *do_status(mcp_calls *calls)
{
	const mcp_calls_config *cfg = &calls->cfg;
	json_object *st = cfg->hooks.status ? cfg->hooks.status(cfg->hooks.data, cfg->ctx)
					    : brig_status_object(cfg->ctx);
	pthread_mutex_lock(&calls->lock);
	int running = calls->runs.running, queued = calls->runs.queued;
	pthread_mutex_unlock(&calls->lock);
	return mcp_status_result(st, cfg->lim, running, queued);
}

/* Run the call; NULL when it was cancelled (no response). */
static json_object *do_run(mcp_calls *calls, mcp_call *c)
{
	const mcp_calls_config *cfg = &calls->cfg;
	brig_run_options o = {
		.struct_size = sizeof o,
		.cancel_fd = c->cancel_pipe[0],
		.front_door = "mcp",
		/* A request may only shorten: above max_timeout_seconds it is refused with the
		 * limit in the message, so the model learns it instead of getting less time than
		 * it asked for without noticing. */
		.timeout_mode = BRIG_TIMEOUT_REFUSE,
		.traceparent = c->traceparent,
		.workspace = c->workspace,
	};
	brig_result res = { .struct_size = sizeof res };
	brig_error *err = NULL;
	int r = cfg->hooks.run ? cfg->hooks.run(cfg->hooks.data, cfg->ctx, &c->req, &o, &res, &err)
			       : brig_run(cfg->ctx, &c->req, &o, &res, &err);
	pthread_mutex_lock(&calls->lock);
	bool cancelled = c->cancelled;
	pthread_mutex_unlock(&calls->lock);
	json_object *out = NULL;
	if (cancelled) {
		if (!cfg->quiet)
			mcp_log("call %s: cancelled after %lld ms", c->id_text,
				(long long)(now_ms() - c->started_ms));
	} else if (r < 0) {
		if (!cfg->quiet)
			mcp_log("call %s: not run: %s", c->id_text,
				err && err->message ? err->message : "unknown error");
		out = mcp_run_failure(err, cfg->lim);
	} else {
		if (!cfg->quiet)
			mcp_log("call %s: %s, exit %d, %lld ms", c->id_text,
				brig_verdict_name(res.verdict), res.exit_code, res.duration_ms);
		out = mcp_run_result(&res, cfg->lim, c->req.timeout_seconds);
	}
	brig_error_free(err);
	brig_result_clear(&res);
	return out;
}

#define CALL_OF(j) ((mcp_call *)((char *)(j)-offsetof(mcp_call, job)))

/* Under the lock: a queued call starts running. */
static void call_start(call_pool *pool, mcp_call *c)
{
	pool->queued--;
	pool->running++;
	if (c->tool == MCP_TOOL_RUN_CODE && pipe2(c->cancel_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		/* cancellation then only suppresses the response */
		mcp_log("call %s: no cancel pipe: %s", c->id_text, strerror(errno));
		c->cancel_pipe[0] = c->cancel_pipe[1] = -1;
	}
	c->state = CALL_RUNNING;
	c->started_ms = now_ms();
}

/* The job of a call: a worker of its pool's queue runs it (without the lock). */
static void call_job_run(jobq_job *job)
{
	mcp_call *c = CALL_OF(job);
	call_pool *pool = c->pool;
	mcp_calls *calls = pool->calls;
	pthread_mutex_lock(&calls->lock);
	call_start(pool, c);
	/* a cancel that came as the worker took it off the queue: nothing runs */
	bool cancelled = c->cancelled;
	pthread_mutex_unlock(&calls->lock);

	json_object *result = NULL;
	if (!cancelled) {
		send_progress(calls, c, 2, "%s",
			      c->tool == MCP_TOOL_RUN_CODE ? "running" : "probing");
		result = c->tool == MCP_TOOL_RUN_CODE ? do_run(calls, c)
			 : MCP_TOOL_IS_WORKSPACE(c->tool)
				 ? mcp_ws_call(calls->cfg.ctx, c->tool, c->args)
				 : do_status(calls);
	}

	pthread_mutex_lock(&calls->lock);
	pool->running--;
	call_unlink(calls, c);
	bool idle = !calls->table;
	bool answer = result && !c->cancelled;
	pthread_mutex_unlock(&calls->lock);
	if (idle && calls->cfg.on_idle)
		calls->cfg.on_idle(calls->cfg.arg);
	if (answer) {
		send_progress(calls, c, 3, "finished");
		respond(calls, c, result);
	} else if (result) {
		json_object_put(result);
	}
	mcp_call_free(c);
}

/* The queue dropped it unrun (mcp_calls_stop): no response, as for any cancelled call. */
static void call_job_drop(jobq_job *job)
{
	mcp_call *c = CALL_OF(job);
	mcp_calls *calls = c->pool->calls;
	pthread_mutex_lock(&calls->lock);
	c->pool->queued--;
	call_unlink(calls, c);
	pthread_mutex_unlock(&calls->lock);
	mcp_call_free(c);
}

static void pool_init(mcp_calls *calls, call_pool *pool, const char *name, int n, int max_queued)
{
	pool->name = name;
	pool->calls = calls;
	pool->n_threads = n;
	pool->max_queued = max_queued;
	char thread_name[16];
	snprintf(thread_name, sizeof thread_name, "brig-%s", name);
	jobq_config qc = { .name = thread_name, .max_workers = n, .idle_ms = WORKER_IDLE_MS };
	pool->q = jobq_new(&qc);
}

/* ---- the table ------------------------------------------------------------------------- */

mcp_calls *mcp_calls_new(const mcp_calls_config *cfg)
{
	mcp_calls *calls = xcalloc(1, sizeof *calls);
	calls->cfg = *cfg;
	pthread_mutex_init(&calls->lock, NULL);
	int runs = cfg->lim->max_concurrent_runs > 0 ? cfg->lim->max_concurrent_runs : 1;
	int per = cfg->queue_per_run > 0 ? cfg->queue_per_run : 4;
	pool_init(calls, &calls->runs, "run", runs, per * runs);
	pool_init(calls, &calls->aux, "status", 1, AUX_QUEUE_MAX);
	return calls;
}

void mcp_calls_submit(mcp_calls *calls, mcp_call *c)
{
	const mcp_calls_config *cfg = &calls->cfg;
	/* workspace tools start boxes: they wait with the runs */
	call_pool *pool = c->tool == MCP_TOOL_RUN_CODE || MCP_TOOL_IS_WORKSPACE(c->tool)
				  ? &calls->runs
				  : &calls->aux;
	pthread_mutex_lock(&calls->lock);
	bool waits = pool->queued + pool->running >= pool->n_threads;
	bool full = pool->queued >= pool->max_queued;
	int running = pool->running, queued = pool->queued;
	pthread_mutex_unlock(&calls->lock);
	if (full) {
		cleanup_free char *text = xasprintf(
			"The server is busy: %d calls are in progress and %d more are waiting, the "
			"most it allows. Nothing ran; retry when some have finished.",
			running, queued);
		if (!cfg->quiet)
			mcp_log("call %s: refused, server busy", c->id_text);
		respond(calls, c, mcp_tool_result(text, NULL, true));
		mcp_call_free(c);
		return;
	}
	if (!cfg->quiet) {
		if (c->tool == MCP_TOOL_RUN_CODE)
			mcp_log("call %s: run_code %s, %zu bytes, timeout %d", c->id_text,
				brig_language_name(c->req.language), c->req.code_len,
				c->req.timeout_seconds ? c->req.timeout_seconds
						       : cfg->lim->timeout_seconds);
		else
			mcp_log("call %s: %s", c->id_text,
				MCP_TOOL_IS_WORKSPACE(c->tool) ? "workspace tool"
							       : "sandbox_status");
	}
	/* Sent before the call is visible to the workers, so "queued" always comes first.  Only
	 * the reader thread submits, so the capacity checked above can only have grown since. */
	send_progress(calls, c, 1, "%s", waits ? "queued behind other calls" : "queued");
	pthread_mutex_lock(&calls->lock);
	c->pool = pool;
	c->job.run = call_job_run;
	c->job.drop = call_job_drop;
	int e = calls->stopping ? ESHUTDOWN : jobq_submit(pool->q, &c->job);
	if (e == 0) {
		c->next = calls->table;
		calls->table = c;
		pool->queued++;
	}
	pthread_mutex_unlock(&calls->lock);
	if (e) {
		cleanup_free char *text = xasprintf(
			"The server cannot start a worker thread (%s). Nothing ran; retry "
			"later.",
			strerror(e));
		mcp_log("call %s: refused: no %s worker thread: %s", c->id_text, pool->name,
			strerror(e));
		respond(calls, c, mcp_tool_result(text, NULL, true));
		mcp_call_free(c);
	}
}

const char *mcp_calls_cancel(mcp_calls *calls, const char *id_key)
{
	pthread_mutex_lock(&calls->lock);
	mcp_call *c = call_find(calls, id_key);
	mcp_call *drop = NULL;
	const char *what = NULL;
	if (c) {
		c->cancelled = true;
		if (c->state == CALL_QUEUED && jobq_cancel(c->pool->q, &c->job)) {
			c->pool->queued--;
			call_unlink(calls, c);
			drop = c;
			what = "queued";
		} else { /* running, or starting: it sees `cancelled` before it runs anything */
			call_kick(c);
			what = "running";
		}
	}
	pthread_mutex_unlock(&calls->lock);
	mcp_call_free(drop);
	return what;
}

void mcp_calls_stop(mcp_calls *calls)
{
	pthread_mutex_lock(&calls->lock);
	calls->stopping = true;
	int cancelled = 0;
	for (mcp_call *c = calls->table; c; c = c->next) {
		c->cancelled = true;
		cancelled++;
		if (c->state == CALL_RUNNING)
			call_kick(c);
	}
	pthread_mutex_unlock(&calls->lock);
	if (cancelled)
		mcp_log("shutting down: cancelling %d call%s", cancelled,
			cancelled == 1 ? "" : "s");
	/* the queued calls are dropped, the running ones end (cancelled: no response) */
	jobq_stop(calls->runs.q);
	jobq_stop(calls->aux.q);
}

void mcp_calls_free(mcp_calls *calls)
{
	if (!calls)
		return;
	jobq_free(calls->runs.q);
	jobq_free(calls->aux.q);
	pthread_mutex_destroy(&calls->lock);
	free(calls);
}
