/* server.c - the MCP server: lifecycle, method dispatch, worker pools, cancellation, progress
 * and shutdown (see server.h for the threading model, brig-mcp(1) for the protocol).
 *
 * Locking: one mutex (srv->lock) guards the call table, both pools' queues and counters and
 * the stopping flag; the writer has its own mutex, and no thread writes while holding
 * srv->lock, so a client that reads slowly can stall writers but never the bookkeeping.
 *
 * A call's life: the reader checks it, sends progress 1 ("queued"), appends it to a pool's
 * queue; a worker takes it (state RUNNING, cancel pipe created), sends progress 2, runs it,
 * unlinks it from the table and, unless it was cancelled, sends progress 3 and the response.
 * A cancellation finds the call in the table: a queued call is removed and freed on the spot;
 * a running one gets a byte on its cancel pipe, which makes brig_run kill and remove the
 * container.  Either way no response is sent.  Because the worker unlinks the call before it
 * decides whether to answer, a cancel either suppresses the response or arrives too late and
 * is ignored as a cancel for a finished request, never both.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mcp/jsonrpc.h"
#include "mcp/server.h"
#include "mcp/tools.h"

const char *const mcp_protocol_versions[] = { "2025-11-25", "2025-06-18", "2025-03-26",
					      "2024-11-05", NULL };

/* Waiting sandbox_status calls allowed (they do not count against max_concurrent_runs). */
#define AUX_QUEUE_MAX 8
/* Once no call has been in flight for this long, the freed heap of the calls goes back to the
 * kernel: idle RSS stays idle RSS.  Again 4x, 16x and 64x later: the warm pool refills in the
 * background after a call, and its threads' malloc caches only return to the heap when they
 * exit, idle (they cannot trim after their own exit). */
#define TRIM_AFTER_MS 1000
#define TRIM_LAST_MS  (64 * TRIM_AFTER_MS)
/* A worker thread with no call for this long exits (before the trim, so that its malloc cache
 * is back in the heap by then): an idle server is its reader thread alone. */
#define WORKER_IDLE_MS 500

typedef enum call_state { CALL_QUEUED, CALL_RUNNING } call_state;

struct call_pool;

typedef struct mcp_call {
	struct mcp_call *next;  /* srv->calls: every call in flight */
	struct mcp_call *qnext; /* the pool's queue, while queued */
	struct call_pool *pool;
	json_object *id;             /* echoed in the response */
	char *id_key;                /* jsonrpc_id_key(id), for cancellation */
	char *id_text;               /* the id as sent, for log lines */
	json_object *progress_token; /* NULL: no progress notifications */
	int progress;                /* last progress step sent */
	mcp_tool tool;
	brig_request req; /* run_code: req.code points into code */
	char *code;
	call_state state;
	bool cancelled;
	int cancel_pipe[2]; /* run_code while running: write end wakes brig_run */
	int64_t started_ms;
} mcp_call;

typedef struct call_pool {
	const char *name;
	struct mcp_server *srv;
	worker_slot *workers; /* started on demand, up to n_threads; they exit when idle */
	int n_threads;
	int n_live;    /* workers not exited */
	int n_waiting; /* of them, waiting for a call */
	mcp_call *head, *tail;
	int queued;
	int max_queued;
	int running;
	pthread_cond_t cond;
} call_pool;

typedef struct mcp_server {
	brig_ctx *ctx;
	brig_policy_limits lim;
	mcp_hooks hooks;
	bool quiet;
	jsonrpc_writer out;
	pthread_mutex_t lock;
	mcp_call *calls;
	call_pool runs; /* run_code: max_concurrent_runs workers */
	call_pool aux;  /* sandbox_status: one worker, never blocked by runs */
	bool stopping;
	int64_t trim_at;   /* when to hand freed heap back (0: nothing to do) */
	int64_t trim_step; /* ms from the last activity to trim_at */
	bool initialized;  /* initialize answered */
	bool client_ready; /* notifications/initialized received (informational: requests are
			    * served once initialize is answered, as lenient clients expect) */
	char *instructions;
} mcp_server;

static void mcp_log(const mcp_server *srv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void mcp_log(const mcp_server *srv, const char *fmt, ...)
{
	(void)srv;
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	/* one fprintf per line so that lines from several threads do not mix */
	fprintf(stderr, "brig mcp: %s\n", m);
	free(m);
}

/* ---- output ---------------------------------------------------------------------------- */

static void send_msg(mcp_server *srv, json_object *msg)
{
	if (jsonrpc_write(&srv->out, msg) < 0 && errno != EPIPE)
		mcp_log(srv, "cannot write to the client: %s", strerror(errno));
	json_object_put(msg);
}

static void send_result(mcp_server *srv, json_object *id, json_object *result)
{
	send_msg(srv, jsonrpc_result(id, result));
}

static void send_error(mcp_server *srv, json_object *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void send_error(mcp_server *srv, json_object *id, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	send_msg(srv, jsonrpc_error(id, code, m, NULL));
	free(m);
}

/* notifications/progress for a call that asked for it; steps only ever increase and nothing
 * is sent for a cancelled call. */
static void send_progress(mcp_server *srv, mcp_call *c, int step, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void send_progress(mcp_server *srv, mcp_call *c, int step, const char *fmt, ...)
{
	if (!c->progress_token)
		return;
	pthread_mutex_lock(&srv->lock);
	bool skip = c->cancelled || step <= c->progress;
	if (!skip)
		c->progress = step;
	pthread_mutex_unlock(&srv->lock);
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
	send_msg(srv, jsonrpc_notification("notifications/progress", p));
}

/* ---- calls ----------------------------------------------------------------------------- */

static void call_free(mcp_call *c)
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
	if (c->cancel_pipe[0] >= 0)
		close(c->cancel_pipe[0]);
	if (c->cancel_pipe[1] >= 0)
		close(c->cancel_pipe[1]);
	free(c);
}

/* Under srv->lock. */
static mcp_call *call_find(mcp_server *srv, const char *key)
{
	for (mcp_call *c = srv->calls; c; c = c->next)
		if (strcmp(c->id_key, key) == 0)
			return c;
	return NULL;
}

/* Under srv->lock. */
static void call_unlink(mcp_server *srv, mcp_call *c)
{
	for (mcp_call **pp = &srv->calls; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			c->next = NULL;
			return;
		}
}

/* Under srv->lock. */
static void queue_remove(call_pool *pool, mcp_call *c)
{
	mcp_call *prev = NULL;
	for (mcp_call *q = pool->head; q; prev = q, q = q->qnext)
		if (q == c) {
			if (prev)
				prev->qnext = c->qnext;
			else
				pool->head = c->qnext;
			if (pool->tail == c)
				pool->tail = prev;
			c->qnext = NULL;
			pool->queued--;
			return;
		}
}

/* Under srv->lock: make a running call's brig_run return at once. */
static void call_kick(mcp_call *c)
{
	if (c->cancel_pipe[1] >= 0)
		(void)!write(c->cancel_pipe[1], "x", 1); /* non-blocking; one byte is enough */
}

/* ---- work ------------------------------------------------------------------------------ */

static json_object *do_status(mcp_server *srv)
{
	char *js = NULL;
	brig_error *err = NULL;
	int r = srv->hooks.status ? srv->hooks.status(srv->hooks.data, srv->ctx, &js, &err)
				  : brig_status_json(srv->ctx, &js, &err);
	if (r < 0) {
		cleanup_free char *text =
			xasprintf("The sandbox status could not be determined: %s.",
				  err && err->message ? err->message : "unknown error");
		brig_error_free(err);
		free(js);
		return mcp_tool_result(text, NULL, true);
	}
	brig_error_free(err);
	pthread_mutex_lock(&srv->lock);
	int running = srv->runs.running, queued = srv->runs.queued;
	pthread_mutex_unlock(&srv->lock);
	json_object *res = mcp_status_result(js, &srv->lim, running, queued);
	free(js);
	return res;
}

/* Run the call; NULL when it was cancelled (no response). */
static json_object *do_run(mcp_server *srv, mcp_call *c)
{
	brig_run_options o = {
		.struct_size = sizeof o,
		.cancel_fd = c->cancel_pipe[0],
		.front_door = "mcp",
		/* A request may only shorten: above max_timeout_seconds it is refused with the
		 * limit in the message, so the model learns it instead of getting less time than
		 * it asked for without noticing. */
		.timeout_mode = BRIG_TIMEOUT_REFUSE,
	};
	brig_result res = { .struct_size = sizeof res };
	brig_error *err = NULL;
	int r = srv->hooks.run ? srv->hooks.run(srv->hooks.data, srv->ctx, &c->req, &o, &res, &err)
			       : brig_run(srv->ctx, &c->req, &o, &res, &err);
	pthread_mutex_lock(&srv->lock);
	bool cancelled = c->cancelled;
	pthread_mutex_unlock(&srv->lock);
	json_object *out = NULL;
	if (cancelled) {
		if (!srv->quiet)
			mcp_log(srv, "call %s: cancelled after %lld ms", c->id_text,
				(long long)(now_ms() - c->started_ms));
	} else if (r < 0) {
		if (!srv->quiet)
			mcp_log(srv, "call %s: not run: %s", c->id_text,
				err && err->message ? err->message : "unknown error");
		out = mcp_run_failure(err, &srv->lim);
	} else {
		if (!srv->quiet)
			mcp_log(srv, "call %s: %s, exit %d, %lld ms", c->id_text,
				brig_verdict_name(res.verdict), res.exit_code, res.duration_ms);
		out = mcp_run_result(&res, &srv->lim, c->req.timeout_seconds);
	}
	brig_error_free(err);
	brig_result_clear(&res);
	return out;
}

static void *pool_main(void *arg)
{
	worker_slot *w = arg;
	call_pool *pool = w->owner;
	mcp_server *srv = pool->srv;
	int64_t idle_since = 0;
	pthread_mutex_lock(&srv->lock);
	for (;;) {
		if (srv->stopping)
			break;
		if (!pool->head) {
			int64_t now = now_ms();
			if (!idle_since)
				idle_since = now;
			if (now - idle_since >= WORKER_IDLE_MS)
				break;
			pool->n_waiting++;
			cond_wait_until(&pool->cond, &srv->lock, idle_since + WORKER_IDLE_MS);
			pool->n_waiting--;
			continue;
		}
		idle_since = 0;
		mcp_call *c = pool->head;
		pool->head = c->qnext;
		if (!pool->head)
			pool->tail = NULL;
		c->qnext = NULL;
		pool->queued--;
		pool->running++;
		if (c->tool == MCP_TOOL_RUN_CODE &&
		    pipe2(c->cancel_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
			/* cancellation then only suppresses the response */
			mcp_log(srv, "call %s: no cancel pipe: %s", c->id_text, strerror(errno));
			c->cancel_pipe[0] = c->cancel_pipe[1] = -1;
		}
		c->state = CALL_RUNNING;
		c->started_ms = now_ms();
		pthread_mutex_unlock(&srv->lock);

		send_progress(srv, c, 2, "%s",
			      c->tool == MCP_TOOL_RUN_CODE ? "running" : "probing");
		json_object *result =
			c->tool == MCP_TOOL_RUN_CODE ? do_run(srv, c) : do_status(srv);

		pthread_mutex_lock(&srv->lock);
		pool->running--;
		call_unlink(srv, c);
		if (!srv->calls)
			srv->trim_at = now_ms() + (srv->trim_step = TRIM_AFTER_MS);
		bool answer = result && !c->cancelled;
		pthread_mutex_unlock(&srv->lock);
		if (answer) {
			send_progress(srv, c, 3, "finished");
			send_result(srv, c->id, result);
		} else if (result) {
			json_object_put(result);
		}
		call_free(c);
		pthread_mutex_lock(&srv->lock);
	}
	pool->n_live--;
	w->state = WORKER_DONE;
	pthread_mutex_unlock(&srv->lock);
	return NULL;
}

static void pool_init(mcp_server *srv, call_pool *pool, const char *name, int n, int max_queued)
{
	pool->name = name;
	pool->srv = srv;
	pool->n_threads = n;
	pool->max_queued = max_queued;
	pool->workers = xcalloc((size_t)n, sizeof *pool->workers);
	cond_init_monotonic(&pool->cond);
}

/* Before a call is queued: make sure a worker will take it - one is waiting for each call
 * already queued and this one, or a new one starts.  Locked.  0, or an errno when there is no
 * worker at all and none can be started. */
static int pool_reserve(call_pool *pool)
{
	if (pool->queued + 1 <= pool->n_waiting || pool->n_live >= pool->n_threads)
		return 0;
	int e = worker_spawn(pool->workers, pool->n_threads, 0, pool_main, pool);
	if (e == 0)
		pool->n_live++;
	return pool->n_live > 0 ? 0 : e;
}

/* Join every worker: srv->stopping is set, so none starts any more. */
static void pool_join(call_pool *pool)
{
	for (int i = 0; i < pool->n_threads; i++)
		if (pool->workers[i].state != WORKER_FREE)
			pthread_join(pool->workers[i].thread, NULL);
	free(pool->workers);
	pool->workers = NULL;
	pthread_cond_destroy(&pool->cond);
}

/* ---- methods --------------------------------------------------------------------------- */

static json_object *obj_get(json_object *o, const char *key)
{
	json_object *v = NULL;
	if (o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v))
		return v;
	return NULL;
}

static void handle_initialize(mcp_server *srv, jsonrpc_msg *m)
{
	if (srv->initialized) {
		send_error(srv, m->id, JSONRPC_INVALID_REQUEST,
			   "Invalid Request: the session is already initialized");
		return;
	}
	json_object *pv = obj_get(m->params, "protocolVersion");
	if (!m->params || !json_object_is_type(m->params, json_type_object) || !pv ||
	    !json_object_is_type(pv, json_type_string)) {
		send_error(srv, m->id, JSONRPC_INVALID_PARAMS,
			   "Invalid params: initialize needs params.protocolVersion (a string)");
		return;
	}
	const char *asked = json_object_get_string(pv);
	const char *version = MCP_PROTOCOL_LATEST; /* not supported: offer the newest */
	for (const char *const *v = mcp_protocol_versions; *v; v++)
		if (strcmp(asked, *v) == 0)
			version = *v;
	json_object *r = json_object_new_object();
	json_object_object_add(r, "protocolVersion", json_object_new_string(version));
	json_object *caps = json_object_new_object();
	json_object *tools = json_object_new_object();
	json_object_object_add(tools, "listChanged", json_object_new_boolean(false));
	json_object_object_add(caps, "tools", tools);
	json_object_object_add(r, "capabilities", caps);
	json_object *info = json_object_new_object();
	json_object_object_add(info, "name", json_object_new_string("brig"));
	json_object_object_add(info, "title", json_object_new_string("brig code sandbox"));
	json_object_object_add(info, "version", json_object_new_string(brig_version()));
	json_object_object_add(r, "serverInfo", info);
	json_object_object_add(r, "instructions", json_object_new_string(srv->instructions));
	srv->initialized = true;
	json_object *ci = obj_get(m->params, "clientInfo");
	json_object *cn = obj_get(ci, "name"), *cv = obj_get(ci, "version");
	mcp_log(srv, "client %.64s %.32s asked for protocol %.32s, speaking %s",
		cn && json_object_is_type(cn, json_type_string) ? json_object_get_string(cn) : "?",
		cv && json_object_is_type(cv, json_type_string) ? json_object_get_string(cv) : "?",
		asked, version);
	send_result(srv, m->id, r);
}

static void handle_tools_list(mcp_server *srv, jsonrpc_msg *m)
{
	json_object *cursor = obj_get(m->params, "cursor");
	if (cursor) {
		/* one page only: no cursor was ever handed out, so any cursor is invalid */
		send_error(srv, m->id, JSONRPC_INVALID_PARAMS, "Invalid params: unknown cursor");
		return;
	}
	json_object *r = json_object_new_object();
	/* built per tools/list (rare): as a tree it would keep ~60 KiB of small hash tables
	 * resident for the server's whole life */
	json_object_object_add(r, "tools", mcp_tools_json(&srv->lim));
	send_result(srv, m->id, r);
}

/* A progress token is a string or an integer; copied so the call owns it. */
static json_object *progress_token(json_object *params)
{
	json_object *t = obj_get(obj_get(params, "_meta"), "progressToken");
	if (!t)
		return NULL;
	if (json_object_is_type(t, json_type_string))
		return json_object_new_string_len(json_object_get_string(t),
						  json_object_get_string_len(t));
	if (json_object_is_type(t, json_type_int))
		return json_tokener_parse(json_object_to_json_string(t));
	return NULL;
}

static void handle_tools_call(mcp_server *srv, jsonrpc_msg *m)
{
	json_object *p = m->params;
	if (!p || !json_object_is_type(p, json_type_object)) {
		send_error(srv, m->id, JSONRPC_INVALID_PARAMS,
			   "Invalid params: tools/call needs an object with name and arguments");
		return;
	}
	json_object *name = obj_get(p, "name");
	if (!name || !json_object_is_type(name, json_type_string)) {
		send_error(srv, m->id, JSONRPC_INVALID_PARAMS,
			   "Invalid params: tools/call needs params.name (a string)");
		return;
	}
	int tool = mcp_tool_lookup(json_object_get_string(name));
	if (tool < 0) {
		send_error(srv, m->id, JSONRPC_INVALID_PARAMS, "Unknown tool: %.128s",
			   json_object_get_string(name));
		return;
	}
	json_object *args = obj_get(p, "arguments");
	if (args && !json_object_is_type(args, json_type_object)) {
		send_error(srv, m->id, JSONRPC_INVALID_PARAMS,
			   "Invalid params: tools/call params.arguments must be an object");
		return;
	}
	cleanup_free char *key = jsonrpc_id_key(m->id);
	pthread_mutex_lock(&srv->lock);
	bool dup = call_find(srv, key) != NULL;
	pthread_mutex_unlock(&srv->lock);
	if (dup) {
		send_error(srv, m->id, JSONRPC_INVALID_REQUEST,
			   "Invalid Request: id %s is already in use by a request in progress",
			   key);
		return;
	}

	/* Bad arguments are the model's to fix: a tool result with isError, not a protocol error.
	 */
	mcp_call *c = xcalloc(1, sizeof *c);
	c->cancel_pipe[0] = c->cancel_pipe[1] = -1;
	c->tool = (mcp_tool)tool;
	cleanup_json json_object *empty = json_object_new_object();
	char *bad = tool == MCP_TOOL_RUN_CODE
			    ? mcp_run_code_args(args ? args : empty, &c->req, &c->code)
			    : mcp_status_args(args);
	if (bad) {
		if (!srv->quiet)
			mcp_log(srv, "call %.80s: bad arguments: %s",
				jsonrpc_to_string(m->id, NULL), bad);
		send_result(srv, m->id, mcp_tool_result(bad, NULL, true));
		free(bad);
		call_free(c);
		return;
	}

	call_pool *pool = tool == MCP_TOOL_RUN_CODE ? &srv->runs : &srv->aux;
	pthread_mutex_lock(&srv->lock);
	bool waits = pool->queued + pool->running >= pool->n_threads;
	bool full = pool->queued >= pool->max_queued;
	int running = pool->running, queued = pool->queued;
	pthread_mutex_unlock(&srv->lock);
	if (full) {
		cleanup_free char *text = xasprintf(
			"The server is busy: %d calls are in progress and %d more are waiting, the "
			"most it allows. Nothing ran; retry when some have finished.",
			running, queued);
		if (!srv->quiet)
			mcp_log(srv, "call %.80s: refused, server busy",
				jsonrpc_to_string(m->id, NULL));
		send_result(srv, m->id, mcp_tool_result(text, NULL, true));
		call_free(c);
		return;
	}
	const char *idt = jsonrpc_to_string(m->id, NULL);
	c->id_text = xstrndup(idt, strnlen(idt, 80)); /* xstrndup copies exactly n bytes */
	c->id = steal_pointer(&m->id);
	c->id_key = steal_pointer(&key);
	c->pool = pool;
	c->progress_token = progress_token(p);
	if (!srv->quiet) {
		if (tool == MCP_TOOL_RUN_CODE)
			mcp_log(srv, "call %s: run_code %s, %zu bytes, timeout %d", c->id_text,
				brig_language_name(c->req.language), c->req.code_len,
				c->req.timeout_seconds ? c->req.timeout_seconds
						       : srv->lim.timeout_seconds);
		else
			mcp_log(srv, "call %s: sandbox_status", c->id_text);
	}
	/* Sent before the call is visible to the workers, so "queued" always comes first.  Only
	 * this thread enqueues, so the capacity checked above can only have grown since. */
	send_progress(srv, c, 1, "%s", waits ? "queued behind other calls" : "queued");
	pthread_mutex_lock(&srv->lock);
	int e = pool_reserve(pool);
	if (e) {
		pthread_mutex_unlock(&srv->lock);
		cleanup_free char *text = xasprintf(
			"The server cannot start a worker thread (%s). Nothing ran; retry "
			"later.",
			strerror(e));
		mcp_log(srv, "call %s: refused: no %s worker thread: %s", c->id_text, pool->name,
			strerror(e));
		send_result(srv, c->id, mcp_tool_result(text, NULL, true));
		call_free(c);
		return;
	}
	c->next = srv->calls;
	srv->calls = c;
	if (pool->tail)
		pool->tail->qnext = c;
	else
		pool->head = c;
	pool->tail = c;
	pool->queued++;
	pthread_cond_signal(&pool->cond);
	pthread_mutex_unlock(&srv->lock);
}

static void handle_cancelled(mcp_server *srv, jsonrpc_msg *m)
{
	json_object *rid = obj_get(m->params, "requestId");
	cleanup_free char *key = jsonrpc_id_key(rid);
	if (!key)
		return; /* malformed: ignored, as the spec asks */
	json_object *reason = obj_get(m->params, "reason");
	pthread_mutex_lock(&srv->lock);
	mcp_call *c = call_find(srv, key);
	mcp_call *drop = NULL;
	const char *what = "unknown or finished";
	if (c) {
		c->cancelled = true;
		if (c->state == CALL_QUEUED) {
			queue_remove(c->pool, c);
			call_unlink(srv, c);
			drop = c;
			what = "queued";
		} else {
			call_kick(c);
			what = "running";
		}
	}
	pthread_mutex_unlock(&srv->lock);
	call_free(drop);
	if (!srv->quiet || c)
		mcp_log(srv, "cancel for %s request %.80s%s%.200s", what,
			jsonrpc_to_string(rid, NULL),
			reason && json_object_is_type(reason, json_type_string) ? ": " : "",
			reason && json_object_is_type(reason, json_type_string)
				? json_object_get_string(reason)
				: "");
}

static void handle_request(mcp_server *srv, jsonrpc_msg *m)
{
	const char *method = m->method;
	if (strcmp(method, "ping") == 0) {
		send_result(srv, m->id, NULL); /* always, even before initialize */
		return;
	}
	if (strcmp(method, "initialize") == 0) {
		handle_initialize(srv, m);
		return;
	}
	if (!srv->initialized) {
		/* -32002 rather than -32600: the request is well formed, only too early; a
		 * distinct code lets a client tell "initialize first" from a broken message. */
		send_error(srv, m->id, JSONRPC_SERVER_NOT_INITIALIZED,
			   "Server not initialized: send initialize first");
		return;
	}
	if (m->params && !json_object_is_type(m->params, json_type_object)) {
		send_error(srv, m->id, JSONRPC_INVALID_PARAMS, "Invalid params: must be an object");
		return;
	}
	if (strcmp(method, "tools/list") == 0)
		handle_tools_list(srv, m);
	else if (strcmp(method, "tools/call") == 0)
		handle_tools_call(srv, m);
	else
		send_error(srv, m->id, JSONRPC_METHOD_NOT_FOUND, "Method not found: %.128s",
			   method);
}

static void handle_notification(mcp_server *srv, jsonrpc_msg *m)
{
	if (strcmp(m->method, "notifications/initialized") == 0)
		srv->client_ready = true;
	else if (strcmp(m->method, "notifications/cancelled") == 0)
		handle_cancelled(srv, m);
	/* anything else (notifications/roots/list_changed, ...) is ignored, never answered */
}

static void handle_line(mcp_server *srv, const char *line, size_t len)
{
	jsonrpc_msg m;
	int rc = jsonrpc_parse(line, len, &m);
	if (rc) {
		mcp_log(srv, "answered %d: %s", rc, m.error_message);
		send_msg(srv, jsonrpc_error(m.id, rc, m.error_message, NULL));
	} else if (m.kind == JSONRPC_KIND_REQUEST) {
		handle_request(srv, &m);
	} else if (m.kind == JSONRPC_KIND_NOTIFICATION) {
		handle_notification(srv, &m);
	} else {
		mcp_log(srv, "ignored a response: this server sends no requests");
	}
	jsonrpc_msg_clear(&m);
}

static void handle_lines(mcp_server *srv, jsonrpc_lines *lines)
{
	const char *line;
	size_t len;
	jsonrpc_line_status st;
	while ((st = jsonrpc_lines_next(lines, &line, &len)) != JSONRPC_LINE_NONE) {
		if (st == JSONRPC_LINE_OK) {
			handle_line(srv, line, len);
		} else {
			/* -32600, not -32700: nothing was parsed, the message was refused for its
			 * size.  Its id cannot be known, hence null. */
			mcp_log(srv, "discarded a message longer than %zu bytes", lines->max_line);
			send_msg(srv,
				 jsonrpc_error(NULL, JSONRPC_INVALID_REQUEST,
					       "Invalid Request: message too long (discarded)",
					       json_object_new_int64((int64_t)lines->max_line)));
		}
	}
}

/* ---- lifecycle ------------------------------------------------------------------------- */

/* Drop every queued call, cancel every running one, stop and join the workers. */
static void server_stop(mcp_server *srv)
{
	pthread_mutex_lock(&srv->lock);
	srv->stopping = true;
	mcp_call *drop = NULL, *keep = NULL;
	int cancelled = 0;
	for (mcp_call *c = srv->calls, *next; c; c = next) {
		next = c->next;
		c->cancelled = true;
		cancelled++;
		if (c->state == CALL_QUEUED) {
			c->next = drop;
			drop = c;
		} else {
			call_kick(c);
			c->next = keep;
			keep = c;
		}
	}
	srv->calls = keep;
	call_pool *pools[] = { &srv->runs, &srv->aux };
	for (size_t i = 0; i < 2; i++) {
		pools[i]->head = pools[i]->tail = NULL;
		pools[i]->queued = 0;
		pthread_cond_broadcast(&pools[i]->cond);
	}
	pthread_mutex_unlock(&srv->lock);
	if (cancelled)
		mcp_log(srv, "shutting down: cancelling %d call%s", cancelled,
			cancelled == 1 ? "" : "s");
	for (mcp_call *c = drop, *next; c; c = next) {
		next = c->next;
		call_free(c);
	}
	pool_join(&srv->runs);
	pool_join(&srv->aux);
}

/* ms until the heap is due to be trimmed, -1 for never. */
static int trim_timeout(mcp_server *srv)
{
	pthread_mutex_lock(&srv->lock);
	int64_t at = srv->trim_at;
	pthread_mutex_unlock(&srv->lock);
	if (!at)
		return -1;
	int64_t left = at - now_ms();
	return left < 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int)left;
}

static void trim_if_idle(mcp_server *srv)
{
	pthread_mutex_lock(&srv->lock);
	bool due = srv->trim_at && now_ms() >= srv->trim_at && !srv->calls;
	if (due && srv->trim_step < TRIM_LAST_MS) {
		int64_t last_activity = srv->trim_at - srv->trim_step;
		srv->trim_step *= 4;
		srv->trim_at = last_activity + srv->trim_step;
	} else if (due || srv->calls) {
		srv->trim_at = 0; /* a call in flight sets it again when it ends */
	}
	pthread_mutex_unlock(&srv->lock);
#ifdef __GLIBC__
	if (due)
		malloc_trim(0);
#endif
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
			mcp_log(srv, "shutdown requested");
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
			mcp_log(srv, "stdin closed");
			break;
		}
		jsonrpc_lines_feed(&lines, buf, (size_t)got);
		handle_lines(srv, &lines);
		if (jsonrpc_writer_broken(&srv->out)) {
			mcp_log(srv, "the client stopped reading (stdout closed)");
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
	return need > JSONRPC_DEFAULT_MAX_LINE ? need : JSONRPC_DEFAULT_MAX_LINE;
}

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
	brig_policy_get_limits(pol, &srv->lim);
	if (opts->hooks)
		srv->hooks = *opts->hooks;
	srv->quiet = opts->quiet;
	jsonrpc_writer_init(&srv->out, out_fd);
	pthread_mutex_init(&srv->lock, NULL);
	srv->instructions = mcp_instructions(&srv->lim);

	int runs = srv->lim.max_concurrent_runs > 0 ? srv->lim.max_concurrent_runs : 1;
	int per = opts->queue_per_run > 0 ? opts->queue_per_run : 4;
	pool_init(srv, &srv->runs, "run", runs, per * runs);
	pool_init(srv, &srv->aux, "status", 1, AUX_QUEUE_MAX);
	mcp_log(srv, "serving MCP on stdio: up to %d concurrent runs, %d more queued", runs,
		per * runs);
	/* the start-up (the warm pool filling) is activity too */
	srv->trim_at = now_ms() + (srv->trim_step = TRIM_AFTER_MS);
	int rc = read_loop(srv, in_fd, opts->shutdown_fd, max_line(opts, &srv->lim), err);
	server_stop(srv);
	mcp_log(srv, "stopped");
	free(srv->instructions);
	pthread_mutex_destroy(&srv->lock);
	jsonrpc_writer_destroy(&srv->out);
	free(srv);
	return rc;
}
