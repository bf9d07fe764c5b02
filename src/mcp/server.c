/* server.c - the MCP server's life: set-up, the reader loop over stdin, handing freed heap
 * back when idle, and shutdown (see server.h for the threading model, brig-mcp(1) for the
 * protocol).  The methods are in methods.c, the tool calls in flight in calls.c.
 */
#include "config.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "mcp/calls.h"
#include "mcp/methods.h"
#include "mcp/output.h"
#include "mcp/server.h"
#include "mcp/tools.h"

const char *const mcp_protocol_versions[] = { "2025-11-25", "2025-06-18", "2025-03-26",
					      "2024-11-05", NULL };

/* Once no call has been in flight for this long, the freed heap of the calls goes back to the
 * kernel: idle RSS stays idle RSS.  Again 4x, 16x and 64x later: the warm pool refills in the
 * background after a call, and its threads' malloc caches only return to the heap when they
 * exit, idle (they cannot trim after their own exit). */
#define TRIM_AFTER_MS 1000
#define TRIM_LAST_MS  (64 * TRIM_AFTER_MS)

typedef struct mcp_server {
	brig_ctx *ctx; /* NULL with test hooks */
	const mcp_options *opts;
	brig_policy_limits lim;
	jsonrpc_writer out;
	mcp_calls *calls;
	mcp_session session;
	pthread_mutex_t trim_lock;
	int64_t trim_at;   /* when to hand freed heap back (0: nothing to do) */
	int64_t trim_step; /* ms from the last activity to trim_at */
} mcp_server;

/* ---- handing freed heap back ----------------------------------------------------------- */

/* Activity ended (the start-up, or the last call in flight): trim after TRIM_AFTER_MS. */
static void trim_schedule(void *arg)
{
	mcp_server *srv = arg;
	pthread_mutex_lock(&srv->trim_lock);
	srv->trim_at = now_ms() + (srv->trim_step = TRIM_AFTER_MS);
	pthread_mutex_unlock(&srv->trim_lock);
}

/* ms until the heap is due to be trimmed, -1 for never. */
static int trim_timeout(mcp_server *srv)
{
	pthread_mutex_lock(&srv->trim_lock);
	int64_t at = srv->trim_at;
	pthread_mutex_unlock(&srv->trim_lock);
	if (!at)
		return -1;
	int64_t left = at - now_ms();
	return left < 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int)left;
}

static void trim_if_idle(mcp_server *srv)
{
	bool active = mcp_calls_active(srv->calls);
	pthread_mutex_lock(&srv->trim_lock);
	bool due = srv->trim_at && now_ms() >= srv->trim_at && !active;
	if (due && srv->trim_step < TRIM_LAST_MS) {
		int64_t last_activity = srv->trim_at - srv->trim_step;
		srv->trim_step *= 4;
		srv->trim_at = last_activity + srv->trim_step;
	} else if (due || active) {
		srv->trim_at = 0; /* a call in flight sets it again when it ends */
	}
	pthread_mutex_unlock(&srv->trim_lock);
#ifdef __GLIBC__
	if (due)
		malloc_trim(0);
#endif
}

/* The era is fixed: a client is here to stay, the warm pool may start. */
static void era_fixed(void *arg)
{
	mcp_server *srv = arg;
	brig_error *err = NULL;
	if (srv->opts->warm_pool && srv->ctx && brig_ctx_start_warm_pool(srv->ctx, &err) < 0)
		mcp_log("the warm pool cannot start (runs start their containers on demand): %s",
			err && err->message ? err->message : "unknown error");
	brig_error_free(err);
}

/* ---- reading --------------------------------------------------------------------------- */

static void handle_lines(mcp_server *srv, jsonrpc_lines *lines)
{
	const char *line;
	size_t len;
	jsonrpc_line_status st;
	while ((st = jsonrpc_lines_next(lines, &line, &len)) != JSONRPC_LINE_NONE) {
		if (st == JSONRPC_LINE_OK) {
			mcp_handle_line(&srv->session, line, len);
		} else {
			/* -32600, not -32700: nothing was parsed, the message was refused for its
			 * size.  Its id cannot be known, hence null. */
			mcp_log("discarded a message longer than %zu bytes", lines->max_line);
			mcp_send(&srv->out,
				 jsonrpc_error(NULL, JSONRPC_INVALID_REQUEST,
					       "Invalid Request: message too long (discarded)",
					       json_object_new_int64((int64_t)lines->max_line)));
		}
	}
}

/* Read until EOF, shutdown_fd or a broken output; returns 0 or a negative status. */
static int read_loop(mcp_server *srv, int in_fd, int shutdown_fd, size_t max_line, brig_error **err)
{
	jsonrpc_lines lines;
	jsonrpc_lines_init(&lines, max_line);
	cleanup_free char *buf = xmalloc(65536);
	int rc = 0;
	for (;;) {
		struct pollfd pfd[2] = { { .fd = in_fd, .events = POLLIN },
					 { .fd = shutdown_fd, .events = POLLIN } };
		int n = poll(pfd, shutdown_fd >= 0 ? 2 : 1, trim_timeout(srv));
		if (n == 0) {
			trim_if_idle(srv);
			continue;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = brig_fail(err, BRIG_E_SYSTEM, errno, "mcp: poll");
			break;
		}
		if (shutdown_fd >= 0 && pfd[1].revents) {
			mcp_log("shutdown requested");
			break;
		}
		if (!pfd[0].revents)
			continue;
		ssize_t got = read(in_fd, buf, 65536);
		if (got < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			rc = brig_fail(err, BRIG_E_SYSTEM, errno, "mcp: reading stdin");
			break;
		}
		if (got == 0) {
			jsonrpc_lines_finish(&lines);
			handle_lines(srv, &lines);
			mcp_log("stdin closed");
			break;
		}
		jsonrpc_lines_feed(&lines, buf, (size_t)got);
		handle_lines(srv, &lines);
		if (jsonrpc_writer_broken(&srv->out)) {
			mcp_log("the client stopped reading (stdout closed)");
			break;
		}
	}
	jsonrpc_lines_free(&lines);
	return rc;
}

/* The longest message accepted: the option, else 4 MiB, raised when the policy allows more code
 * than that can carry (JSON may spell every byte of it as a 6-character \u escape). */
static size_t max_line(const mcp_options *opts, const brig_policy_limits *lim)
{
	if (opts->max_line_bytes)
		return opts->max_line_bytes;
	size_t need = (size_t)lim->max_input_bytes * 6 + ((size_t)1 << 20);
	/* write_file: a file of max_transfer_bytes as escaped JSON text (or base64) */
	size_t ws = (size_t)mcp_ws_max_transfer() * 6 + ((size_t)1 << 20);
	need = ws > need ? ws : need;
	return need > JSONRPC_DEFAULT_MAX_LINE ? need : JSONRPC_DEFAULT_MAX_LINE;
}

/* ---- lifecycle ------------------------------------------------------------------------- */

int mcp_serve(brig_ctx *ctx, int in_fd, int out_fd, const mcp_options *opts, brig_error **err)
{
	static const mcp_options defaults = { .shutdown_fd = -1 };
	if (!opts)
		opts = &defaults;
	const brig_policy *pol = opts->policy ? opts->policy : ctx ? brig_ctx_policy(ctx) : NULL;
	if (!pol)
		return brig_fail(err, BRIG_E_USAGE, 0, "mcp_serve: no policy");
	if ((!ctx && (!opts->hooks || !opts->hooks->run || !opts->hooks->status)))
		return brig_fail(err, BRIG_E_USAGE, 0, "mcp_serve: no context");

	mcp_server *srv = xcalloc(1, sizeof *srv);
	srv->ctx = ctx;
	srv->opts = opts;
	brig_policy_get_limits(pol, &srv->lim);
	mcp_ws_configure(pol);
	jsonrpc_writer_init(&srv->out, out_fd);
	pthread_mutex_init(&srv->trim_lock, NULL);
	mcp_calls_config cc = { .ctx = ctx,
				.lim = &srv->lim,
				.out = &srv->out,
				.queue_per_run = opts->queue_per_run,
				.quiet = opts->quiet,
				.on_idle = trim_schedule,
				.arg = srv };
	if (opts->hooks)
		cc.hooks = *opts->hooks;
	srv->calls = mcp_calls_new(&cc);
	srv->session = (mcp_session){ .lim = &srv->lim,
				      .out = &srv->out,
				      .calls = srv->calls,
				      .quiet = opts->quiet,
				      .instructions = mcp_instructions(&srv->lim),
				      .era_fixed = era_fixed,
				      .arg = srv };

	int runs = srv->lim.max_concurrent_runs > 0 ? srv->lim.max_concurrent_runs : 1;
	mcp_log("serving MCP on stdio: up to %d concurrent runs, %d more queued", runs,
		mcp_calls_max_queued(srv->calls));
	trim_schedule(srv); /* the start-up (the warm pool filling) is activity too */
	int rc = read_loop(srv, in_fd, opts->shutdown_fd, max_line(opts, &srv->lim), err);
	mcp_calls_stop(srv->calls);
	mcp_log("stopped");
	mcp_calls_free(srv->calls);
	free(srv->session.instructions);
	pthread_mutex_destroy(&srv->trim_lock);
	jsonrpc_writer_destroy(&srv->out);
	free(srv);
	return rc;
}
