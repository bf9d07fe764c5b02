/* methods.c - the MCP methods (brig-mcp(1)): in the legacy era initialize, ping, tools/list,
 * tools/call and the notifications initialized and cancelled; in the modern era (2026-07-28)
 * server/discover, tools/list, tools/call and notifications/cancelled, every request checked
 * for its _meta envelope.  Tool calls are checked here and run by calls.c. */
#include "config.h"

#include <string.h>

#include "mcp/methods.h"
#include "mcp/output.h"
#include "mcp/server.h"
#include "mcp/tools.h"

static json_object *obj_get(json_object *o, const char *key)
{
	json_object *v = NULL;
	if (o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v))
		return v;
	return NULL;
}

static void handle_initialize(mcp_session *s, jsonrpc_msg *m)
{
	if (s->initialized) {
		mcp_send_error(s->out, m->id, JSONRPC_INVALID_REQUEST, NULL,
			       "Invalid Request: the session is already initialized");
		return;
	}
	json_object *pv = obj_get(m->params, "protocolVersion");
	if (!m->params || !json_object_is_type(m->params, json_type_object) || !pv ||
	    !json_object_is_type(pv, json_type_string)) {
		mcp_send_error(
			s->out, m->id, JSONRPC_INVALID_PARAMS, NULL,
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
	json_object_object_add(r, "capabilities", mcp_server_capabilities());
	json_object_object_add(r, "serverInfo", mcp_server_info());
	json_object_object_add(r, "instructions", json_object_new_string(s->instructions));
	s->initialized = true;
	s->era = MCP_ERA_LEGACY;
	if (s->era_fixed)
		s->era_fixed(s->arg);
	json_object *ci = obj_get(m->params, "clientInfo");
	json_object *cn = obj_get(ci, "name"), *cv = obj_get(ci, "version");
	mcp_log("client %.64s %.32s asked for protocol %.32s, speaking %s",
		cn && json_object_is_type(cn, json_type_string) ? json_object_get_string(cn) : "?",
		cv && json_object_is_type(cv, json_type_string) ? json_object_get_string(cv) : "?",
		asked, version);
	mcp_send_result(s->out, m->id, r);
}

static void handle_tools_list(mcp_session *s, jsonrpc_msg *m)
{
	json_object *cursor = obj_get(m->params, "cursor");
	if (cursor) {
		/* one page only: no cursor was ever handed out, so any cursor is invalid */
		mcp_send_error(s->out, m->id, JSONRPC_INVALID_PARAMS, NULL,
			       "Invalid params: unknown cursor");
		return;
	}
	json_object *r = json_object_new_object();
	/* built per tools/list (rare): as a tree it would keep ~60 KiB of small hash tables
	 * resident for the server's whole life (issue 7) */
	json_object *tools = mcp_tools_json(s->lim);
	if (s->era == MCP_ERA_MODERN) {
		json_object_object_add(r, "tools", mcp_modern_tools(tools));
		mcp_send_result(s->out, m->id, mcp_modern_cacheable(r));
		return;
	}
	json_object_object_add(r, "tools", tools);
	mcp_send_result(s->out, m->id, r);
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
	json_object *copy = NULL;
	if (json_object_is_type(t, json_type_int) && json_object_deep_copy(t, &copy, NULL) == 0)
		return copy;
	return NULL;
}

/* The W3C trace context parent of the request (_meta.traceparent), when it is a string: a
 * well-formed one is 55 characters, so a longer one is cut to 56 and still refused. */
static char *traceparent(json_object *params)
{
	json_object *t = obj_get(obj_get(params, "_meta"), "traceparent");
	if (!t || !json_object_is_type(t, json_type_string))
		return NULL;
	const char *v = json_object_get_string(t);
	return xstrndup(v, strnlen(v, 56));
}

static void handle_tools_call(mcp_session *s, jsonrpc_msg *m)
{
	json_object *p = m->params;
	if (!p || !json_object_is_type(p, json_type_object)) {
		mcp_send_error(
			s->out, m->id, JSONRPC_INVALID_PARAMS, NULL,
			"Invalid params: tools/call needs an object with name and arguments");
		return;
	}
	json_object *name = obj_get(p, "name");
	if (!name || !json_object_is_type(name, json_type_string)) {
		mcp_send_error(s->out, m->id, JSONRPC_INVALID_PARAMS, NULL,
			       "Invalid params: tools/call needs params.name (a string)");
		return;
	}
	int tool = mcp_tool_lookup(json_object_get_string(name));
	if (tool < 0) {
		mcp_send_error(s->out, m->id, JSONRPC_INVALID_PARAMS, NULL, "Unknown tool: %.128s",
			       json_object_get_string(name));
		return;
	}
	json_object *args = obj_get(p, "arguments");
	if (args && !json_object_is_type(args, json_type_object)) {
		mcp_send_error(s->out, m->id, JSONRPC_INVALID_PARAMS, NULL,
			       "Invalid params: tools/call params.arguments must be an object");
		return;
	}
	cleanup_free char *key = jsonrpc_id_key(m->id);
	if (mcp_calls_has(s->calls, key)) {
		mcp_send_error(s->out, m->id, JSONRPC_INVALID_REQUEST, NULL,
			       "Invalid Request: id %s is already in use by a request in progress",
			       key);
		return;
	}

	/* Bad arguments are the model's to fix: a tool result with isError, not a protocol error.
	 */
	mcp_call *c = mcp_call_new((mcp_tool)tool);
	cleanup_json json_object *empty = json_object_new_object();
	char *bad = tool == MCP_TOOL_RUN_CODE     ? mcp_run_code_args(args ? args : empty, &c->req,
								  &c->code, &c->workspace)
		    : MCP_TOOL_IS_WORKSPACE(tool) ? mcp_ws_args((mcp_tool)tool, args ? args : empty)
						  : mcp_status_args(args);
	if (!bad && MCP_TOOL_IS_WORKSPACE(tool))
		c->args = json_object_get(args ? args : empty);
	if (bad) {
		if (!s->quiet)
			mcp_log("call %.80s: bad arguments: %s", jsonrpc_to_string(m->id, NULL),
				bad);
		json_object *r = mcp_tool_result(bad, NULL, true);
		mcp_send_result(s->out, m->id, s->era == MCP_ERA_MODERN ? mcp_modern_result(r) : r);
		free(bad);
		mcp_call_free(c);
		return;
	}
	const char *idt = jsonrpc_to_string(m->id, NULL);
	c->id_text = xstrndup(idt, strnlen(idt, 80)); /* xstrndup copies exactly n bytes */
	c->id = steal_pointer(&m->id);
	c->id_key = steal_pointer(&key);
	c->progress_token = progress_token(p);
	c->traceparent = traceparent(p);
	c->modern = s->era == MCP_ERA_MODERN;
	mcp_calls_submit(s->calls, c);
}

static void handle_cancelled(mcp_session *s, jsonrpc_msg *m)
{
	json_object *rid = obj_get(m->params, "requestId");
	cleanup_free char *key = jsonrpc_id_key(rid);
	if (!key)
		return; /* malformed: ignored, as the spec asks */
	json_object *reason = obj_get(m->params, "reason");
	const char *what = mcp_calls_cancel(s->calls, key);
	if (!s->quiet || what)
		mcp_log("cancel for %s request %.80s%s%.200s", what ? what : "unknown or finished",
			jsonrpc_to_string(rid, NULL),
			reason && json_object_is_type(reason, json_type_string) ? ": " : "",
			reason && json_object_is_type(reason, json_type_string)
				? json_object_get_string(reason)
				: "");
}

/* The 2025 revisions (and requests before any era is fixed that claim none). */
static void handle_legacy(mcp_session *s, jsonrpc_msg *m)
{
	const char *method = m->method;
	if (strcmp(method, "ping") == 0) {
		mcp_send_result(s->out, m->id, NULL); /* always, even before initialize */
		return;
	}
	if (strcmp(method, "initialize") == 0) {
		handle_initialize(s, m);
		return;
	}
	if (!s->initialized) {
		/* -32002 rather than -32600: the request is well formed, only too early; a
		 * distinct code lets a client tell "initialize first" from a broken message. */
		mcp_send_error(s->out, m->id, JSONRPC_SERVER_NOT_INITIALIZED, NULL,
			       "Server not initialized: send initialize first");
		return;
	}
	if (m->params && !json_object_is_type(m->params, json_type_object)) {
		mcp_send_error(s->out, m->id, JSONRPC_INVALID_PARAMS, NULL,
			       "Invalid params: must be an object");
		return;
	}
	if (strcmp(method, "tools/list") == 0)
		handle_tools_list(s, m);
	else if (strcmp(method, "tools/call") == 0)
		handle_tools_call(s, m);
	else
		mcp_send_error(s->out, m->id, JSONRPC_METHOD_NOT_FOUND, NULL,
			       "Method not found: %.128s", method);
}

/* 2026-07-28: a request with a valid envelope (checked by the caller). */
static void handle_modern(mcp_session *s, jsonrpc_msg *m)
{
	const char *method = m->method;
	if (strcmp(method, "server/discover") == 0)
		mcp_send_result(s->out, m->id, mcp_discover_result(s->instructions));
	else if (strcmp(method, "tools/list") == 0)
		handle_tools_list(s, m);
	else if (strcmp(method, "tools/call") == 0)
		handle_tools_call(s, m);
	else if (strcmp(method, "ping") == 0 || strcmp(method, "logging/setLevel") == 0)
		mcp_send_error(s->out, m->id, JSONRPC_METHOD_NOT_FOUND, NULL,
			       "Method not found: %s (removed in protocol revision %s)", method,
			       MCP_MODERN_LATEST);
	else
		mcp_send_error(s->out, m->id, JSONRPC_METHOD_NOT_FOUND, NULL,
			       "Method not found: %.128s", method);
}

/* The protocol version a legacy initialize asked for, if it named one. */
static const char *initialize_version(json_object *params)
{
	json_object *v = obj_get(params, "protocolVersion");
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static void handle_request(mcp_session *s, jsonrpc_msg *m)
{
	bool initialize = strcmp(m->method, "initialize") == 0;
	if (s->era == MCP_ERA_LEGACY) {
		handle_legacy(s, m); /* exactly as before 2026-07-28, _meta or not */
		return;
	}
	mcp_envelope env;
	mcp_envelope_read(m->params, &env);
	if (s->era == MCP_ERA_OPEN) {
		/* initialize without a valid modern envelope opens the legacy era (once it is
		 * answered); so does nothing else, but requests without an envelope get the
		 * legacy answers (ping, or "initialize first") */
		if (env.status == MCP_ENVELOPE_NONE ||
		    (initialize && env.status != MCP_ENVELOPE_OK)) {
			handle_legacy(s, m);
			return;
		}
		if (env.status != MCP_ENVELOPE_OK) { /* a refused probe fixes nothing */
			mcp_send(s->out, mcp_envelope_error(m->id, &env));
			return;
		}
		s->era = MCP_ERA_MODERN;
		mcp_log("client %.64s %.32s speaks protocol %s (per-request _meta)",
			env.client_name ? env.client_name : "?",
			env.client_version ? env.client_version : "?", env.version);
		if (s->era_fixed)
			s->era_fixed(s->arg);
	}
	if (initialize && env.status != MCP_ENVELOPE_OK) {
		/* the handshake is gone in this era, and this process serves no other */
		mcp_send(s->out, mcp_unsupported_version(m->id, initialize_version(m->params)));
		return;
	}
	if (env.status != MCP_ENVELOPE_OK) {
		mcp_send(s->out, mcp_envelope_error(m->id, &env));
		return;
	}
	handle_modern(s, m);
}

static void handle_notification(mcp_session *s, jsonrpc_msg *m)
{
	if (strcmp(m->method, "notifications/initialized") == 0)
		s->client_ready = true;
	else if (strcmp(m->method, "notifications/cancelled") == 0)
		handle_cancelled(s, m); /* both eras; it fixes none */
	/* anything else (notifications/roots/list_changed, ...) is ignored, never answered */
}

void mcp_handle_line(mcp_session *s, const char *line, size_t len)
{
	jsonrpc_msg m;
	int rc = jsonrpc_parse(line, len, &m);
	if (rc) {
		mcp_log("answered %d: %s", rc, m.error_message);
		mcp_send(s->out, jsonrpc_error(m.id, rc, m.error_message, NULL));
	} else if (m.kind == JSONRPC_KIND_REQUEST) {
		handle_request(s, &m);
	} else if (m.kind == JSONRPC_KIND_NOTIFICATION) {
		handle_notification(s, &m);
	} else {
		mcp_log("ignored a response: this server sends no requests");
	}
	jsonrpc_msg_clear(&m);
}
