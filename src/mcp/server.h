/* server.h - the MCP server behind `brig mcp`: JSON-RPC over stdio, tools run_code and
 * sandbox_status, concurrent runs with cancellation and progress.  See brig-mcp(1).
 *
 * Threads: the caller's thread reads and answers everything that is quick (initialize, ping,
 * tools/list, argument errors, cancellations); tools/call work goes to worker threads, at most
 * the policy's max_concurrent_runs runs at once, more waiting in a bounded queue.  The reader
 * never waits for a run, so ping and cancellation are served while code runs.
 */
#ifndef BRIG_MCP_SERVER_H
#define BRIG_MCP_SERVER_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "brig.h"

/* The MCP protocol revisions brig speaks, newest first. */
extern const char *const mcp_protocol_versions[];
#define MCP_PROTOCOL_LATEST "2025-11-25"

/* Replacements for the two calls into libbrig, so tests can drive the protocol, queueing and
 * cancellation without a container engine.  NULL members mean the real brig_run /
 * brig_status_json. */
typedef struct mcp_hooks {
	int (*run)(void *data, brig_ctx *ctx, const brig_request *req, const brig_run_options *opts,
		   brig_result *res, brig_error **err);
	struct json_object *(*status)(void *data, brig_ctx *ctx); /* a tree (never NULL) */
	void *data;
} mcp_hooks;

typedef struct mcp_options {
	size_t max_line_bytes;     /* longest message accepted; 0: 4 MiB, or more when the policy's
				    * max_input_bytes needs it */
	int queue_per_run;         /* waiting calls allowed per concurrent run; 0: 4 */
	int shutdown_fd;           /* -1, or an fd that becomes readable to shut down (the
				    * signal handler's self-pipe) */
	const brig_policy *policy; /* NULL: brig_ctx_policy(ctx) */
	const mcp_hooks *hooks;    /* NULL: the real library */
	bool quiet;                /* no per-call log lines on stderr */
	/* Start ctx's warm pool (brig_ctx_start_warm_pool) once the opening message fixes the
	 * era (initialize, or a modern request), not before: an auto-negotiating client probes
	 * with server/discover on a throwaway process, and a pool started for it would leave its
	 * containers behind when the client kills that process. */
	bool warm_pool;
} mcp_options;

/* Serve MCP on in_fd/out_fd until in_fd reaches EOF, shutdown_fd becomes readable or out_fd
 * breaks.  On the way out every queued call is dropped and every running one cancelled (its
 * container removed by brig_run); no response is sent for them.  Returns 0 after an orderly
 * shutdown, or a negative brig_status (read error, thread creation) with *err.
 * The caller must ignore SIGPIPE (a client that goes away must not kill the server). */
int mcp_serve(brig_ctx *ctx, int in_fd, int out_fd, const mcp_options *opts, brig_error **err);

/* The tools/list array for these limits (new reference), and the outputSchema of run_code;
 * exposed for the unit tests that keep schema and result in sync. */
json_object *mcp_tools_json(const brig_policy_limits *lim);
json_object *mcp_run_code_output_schema(void);

#endif /* BRIG_MCP_SERVER_H */
