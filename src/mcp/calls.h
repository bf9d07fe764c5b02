/* calls.h - tool calls in flight: the call table, the two job queues that run them (jobq.h;
 * run_code: max_concurrent_runs workers; sandbox_status: one, never blocked by runs),
 * cancellation, progress notifications and the response a finished call sends.
 *
 * A call's life: the method handler (methods.c) checks the request, fills an mcp_call and
 * hands it to mcp_calls_submit, which sends progress 1 ("queued") and appends it to its
 * pool's job queue; a worker takes it (state RUNNING, cancel pipe created), sends progress 2,
 * runs it, unlinks it from the table and, unless it was cancelled, sends progress 3 and the
 * response.  A cancellation finds the call in the table: a queued call is removed and freed
 * on the spot; a running one gets a byte on its cancel pipe, which makes brig_run kill and
 * remove the container.  Either way no response is sent.  Because the worker unlinks the call
 * before it decides whether to answer, a cancel either suppresses the response or arrives
 * too late and is ignored as a cancel for a finished request, never both.
 *
 * Workers start when there is work and exit after WORKER_IDLE_MS without any.  Locking: one
 * mutex guards the table and the counters (a job queue has its own, taken inside it); no
 * thread writes to the client while holding it, so a client that reads slowly can stall
 * writers but never the bookkeeping.
 */
#ifndef BRIG_MCP_CALLS_H
#define BRIG_MCP_CALLS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "brig.h"
#include "jobq.h"
#include "mcp/jsonrpc.h"
#include "mcp/server.h"
#include "mcp/tools.h"

typedef struct mcp_calls mcp_calls;

typedef struct mcp_call {
	/* set by the submitter (mcp_call_new zeroes the rest); all owned by the call */
	mcp_tool tool;
	json_object *id;             /* echoed in the response */
	char *id_key;                /* jsonrpc_id_key(id), for cancellation */
	char *id_text;               /* the id as sent (at most 80 bytes), for log lines */
	json_object *progress_token; /* NULL: no progress notifications */
	brig_request req;            /* run_code: req.code points into code */
	char *code;
	char *workspace;   /* run_code: workspace_id, or NULL */
	json_object *args; /* a workspace tool's arguments (checked) */
	bool modern;       /* a 2026-07-28 request: the response is a modern result */
	char *traceparent; /* _meta.traceparent as sent (at most 56 bytes; checked by brig_run
			    * before it reaches the audit log), or NULL */
	/* owned by calls.c */
	struct mcp_call *next; /* the table: every call in flight */
	jobq_job job;          /* on its pool's job queue */
	struct call_pool *pool;
	int progress; /* last progress step sent */
	int state;    /* queued or running */
	bool cancelled;
	int cancel_pipe[2]; /* run_code while running: write end wakes brig_run */
	int64_t started_ms;
} mcp_call;

typedef struct mcp_calls_config {
	brig_ctx *ctx;
	mcp_hooks hooks; /* NULL members: the real library */
	const brig_policy_limits *lim;
	jsonrpc_writer *out;
	int queue_per_run; /* waiting calls allowed per concurrent run */
	bool quiet;        /* no per-call log lines */
	/* called (outside the lock) when the last call in flight has finished */
	void (*on_idle)(void *arg);
	void *arg;
} mcp_calls_config;

mcp_calls *mcp_calls_new(const mcp_calls_config *cfg);
/* Drop every queued call, cancel every running one (no responses), join the workers. */
void mcp_calls_stop(mcp_calls *calls);
/* After mcp_calls_stop. */
void mcp_calls_free(mcp_calls *calls);
/* The most calls that may wait for a run. */
int mcp_calls_max_queued(const mcp_calls *calls);
/* Whether a call with this id key is in flight. */
bool mcp_calls_has(mcp_calls *calls, const char *id_key);
/* Whether any call is in flight. */
bool mcp_calls_active(mcp_calls *calls);

mcp_call *mcp_call_new(mcp_tool tool);
void mcp_call_free(mcp_call *c);

/* Queue c (taking it over), or answer it at once with an isError result when the server is
 * busy or no worker can start. */
void mcp_calls_submit(mcp_calls *calls, mcp_call *c);

/* notifications/cancelled for this id key: "queued" (removed, never runs), "running"
 * (stopped, its container removed) or NULL (unknown or finished: ignored). */
const char *mcp_calls_cancel(mcp_calls *calls, const char *id_key);

#endif /* BRIG_MCP_CALLS_H */
