/* test_mcp.c - the MCP server driven over pipes, with a fake run/status (mcp_hooks) so that
 * lifecycle, errors, arguments, progress, queueing, cancellation and shutdown are tested
 * deterministically without a container engine; plus the run_code outputSchema checked
 * against a real brig_result_to_json() object, both ways.  The real runs are covered by
 * tests/mcp/e2e.mjs with the official SDK. */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <regex.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "cunit_main.h"
#include "mcp/era.h"
#include "mcp/jsonrpc.h"
#include "mcp/server.h"
#include "mcp/tools.h"

/* ---- a tiny JSON Schema checker (the keywords our schemas use) --------------------------- */

static bool type_ok(json_object *v, const char *t)
{
	if (strcmp(t, "null") == 0)
		return v == NULL;
	if (!v)
		return false;
	if (strcmp(t, "string") == 0)
		return json_object_is_type(v, json_type_string);
	if (strcmp(t, "integer") == 0)
		return json_object_is_type(v, json_type_int);
	if (strcmp(t, "number") == 0)
		return json_object_is_type(v, json_type_int) ||
		       json_object_is_type(v, json_type_double);
	if (strcmp(t, "boolean") == 0)
		return json_object_is_type(v, json_type_boolean);
	if (strcmp(t, "object") == 0)
		return json_object_is_type(v, json_type_object);
	if (strcmp(t, "array") == 0)
		return json_object_is_type(v, json_type_array);
	return false;
}

/* Returns NULL when v validates, else the path that failed (static buffer). */
static const char *validate(json_object *schema, json_object *v, const char *path)
{
	static char where[256];
	json_object *k = NULL;
	if (json_object_object_get_ex(schema, "type", &k)) {
		bool ok = false;
		if (json_object_is_type(k, json_type_string))
			ok = type_ok(v, json_object_get_string(k));
		else
			for (size_t i = 0; i < json_object_array_length(k); i++)
				ok = ok || type_ok(v, json_object_get_string(
							      json_object_array_get_idx(k, i)));
		if (!ok) {
			snprintf(where, sizeof where, "%s: type", path);
			return where;
		}
	}
	if (json_object_object_get_ex(schema, "enum", &k)) {
		bool ok = false;
		for (size_t i = 0; i < json_object_array_length(k); i++)
			ok = ok || (v && json_object_equal(v, json_object_array_get_idx(k, i)));
		if (!ok) {
			snprintf(where, sizeof where, "%s: enum", path);
			return where;
		}
	}
	if (json_object_object_get_ex(schema, "minimum", &k) && v &&
	    json_object_get_double(v) < json_object_get_double(k)) {
		snprintf(where, sizeof where, "%s: minimum", path);
		return where;
	}
	if (json_object_object_get_ex(schema, "pattern", &k) && v &&
	    json_object_is_type(v, json_type_string)) {
		regex_t re;
		CU_ASSERT_FATAL(regcomp(&re, json_object_get_string(k), REG_EXTENDED | REG_NOSUB) ==
				0);
		int m = regexec(&re, json_object_get_string(v), 0, NULL, 0);
		regfree(&re);
		if (m) {
			snprintf(where, sizeof where, "%s: pattern", path);
			return where;
		}
	}
	if (json_object_object_get_ex(schema, "required", &k)) {
		for (size_t i = 0; i < json_object_array_length(k); i++) {
			const char *name = json_object_get_string(json_object_array_get_idx(k, i));
			if (!json_object_object_get_ex(v, name, NULL)) {
				snprintf(where, sizeof where, "%s.%s: required", path, name);
				return where;
			}
		}
	}
	json_object *props = NULL;
	if (v && json_object_is_type(v, json_type_object) &&
	    json_object_object_get_ex(schema, "properties", &props)) {
		json_object_object_foreach(props, name, sub)
		{
			json_object *pv = NULL;
			if (json_object_object_get_ex(v, name, &pv)) {
				char p[200];
				snprintf(p, sizeof p, "%s.%s", path, name);
				const char *bad = validate(sub, pv, p);
				if (bad)
					return bad;
			}
		}
	}
	if (v && json_object_is_type(v, json_type_array) &&
	    json_object_object_get_ex(schema, "items", &k)) {
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			char p[200];
			snprintf(p, sizeof p, "%s[%zu]", path, i);
			const char *bad = validate(k, json_object_array_get_idx(v, i), p);
			if (bad)
				return bad;
		}
	}
	return NULL;
}

/* ---- a fake sandbox --------------------------------------------------------------------- */

typedef struct fake {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int runs, running, max_running, cancels, statuses;
	bool release;
	bool bad_options;     /* the server passed options that loosen anything */
	char traceparent[80]; /* of the last run, "" for none */
} fake;

static fake F;

static void fake_reset(void)
{
	pthread_mutex_lock(&F.lock);
	F.runs = F.running = F.max_running = F.cancels = F.statuses = 0;
	F.release = false;
	F.bad_options = false;
	F.traceparent[0] = '\0';
	pthread_mutex_unlock(&F.lock);
}

static void fake_release(void)
{
	pthread_mutex_lock(&F.lock);
	F.release = true;
	pthread_cond_broadcast(&F.cond);
	pthread_mutex_unlock(&F.lock);
}

static int fake_get(int *field)
{
	pthread_mutex_lock(&F.lock);
	int v = *field;
	pthread_mutex_unlock(&F.lock);
	return v;
}

/* Wait until *field reaches want (or 5 s pass). */
static bool fake_wait(int *field, int want)
{
	for (int i = 0; i < 500; i++) {
		if (fake_get(field) >= want)
			return true;
		usleep(10000);
	}
	return false;
}

static void set_str(char **dst, size_t *len, const char *s)
{
	*dst = xstrdup(s);
	if (len)
		*len = strlen(s);
}

/* "print TEXT", "exit N", "block", "refuse", "binary": what the fake program does. */
static int fake_run(void *data, brig_ctx *ctx, const brig_request *req, const brig_run_options *o,
		    brig_result *res, brig_error **err)
{
	(void)data;
	(void)ctx;
	cleanup_free char *code = xstrndup(req->code, req->code_len);
	pthread_mutex_lock(&F.lock);
	F.runs++;
	F.running++;
	if (F.running > F.max_running)
		F.max_running = F.running;
	if (!o || o->struct_size != sizeof *o || o->timeout_mode != BRIG_TIMEOUT_REFUSE ||
	    !o->front_door || strcmp(o->front_door, "mcp") || o->cancel_fd < 0)
		F.bad_options = true;
	snprintf(F.traceparent, sizeof F.traceparent, "%s", o->traceparent ? o->traceparent : "");
	pthread_mutex_unlock(&F.lock);

	int rc = 0;
	size_t size = res->struct_size;
	memset(res, 0, sizeof *res);
	res->struct_size = size;
	res->language = req->language;
	set_str(&res->image, NULL, "brig/python:test");
	set_str(&res->backend, NULL, "fake");
	set_str(&res->runtime, NULL, "runc");
	set_str(&res->container, NULL, "brig-0123456789abcdef");
	sha256_hex(req->code, req->code_len, res->code_sha256);
	res->verdict = BRIG_VERDICT_SUCCESS;
	res->duration_ms = 12;
	if (strncmp(code, "print ", 6) == 0) {
		cleanup_free char *line = xasprintf("%s\n", code + 6);
		set_str(&res->stdout_data, &res->stdout_len, line);
	} else if (strncmp(code, "exit ", 5) == 0) {
		long n = 0;
		parse_long(code + 5, 0, 255, &n);
		res->exit_code = (int)n;
		res->verdict = n ? BRIG_VERDICT_ERROR : BRIG_VERDICT_SUCCESS;
		set_str(&res->stderr_data, &res->stderr_len, "failed\n");
	} else if (strcmp(code, "block") == 0) {
		/* until released or cancelled */
		for (;;) {
			struct pollfd p = { .fd = o->cancel_fd, .events = POLLIN };
			if (o->cancel_fd >= 0 && poll(&p, 1, 10) == 1) {
				res->verdict = BRIG_VERDICT_CANCELLED;
				res->exit_code = 137;
				pthread_mutex_lock(&F.lock);
				F.cancels++;
				pthread_mutex_unlock(&F.lock);
				break;
			}
			pthread_mutex_lock(&F.lock);
			bool rel = F.release;
			pthread_mutex_unlock(&F.lock);
			if (rel)
				break;
		}
		set_str(&res->stdout_data, &res->stdout_len, "released\n");
	} else if (strcmp(code, "refuse") == 0) {
		brig_result_clear(res);
		rc = brig_fail(err, BRIG_E_REFUSED, 0,
			       "timeout 99 s is above the policy's max_timeout_seconds (30)");
	} else if (strcmp(code, "binary") == 0) {
		res->stdout_data = xstrndup("a\xff\0b\n", 5);
		res->stdout_len = 5;
	} else if (strcmp(code, "controls") == 0) {
		/* NUL, ESC and invalid UTF-8 in both streams */
		res->stdout_data = xstrndup("one\0two \x1b[2J\xfe three\n", 20);
		res->stdout_len = 20;
		res->stderr_data = xstrndup("err\0\x1b]0;pwned\x07 tail\xff", 20);
		res->stderr_len = 20;
	}
	if (rc == 0) {
		if (!res->stdout_data)
			set_str(&res->stdout_data, &res->stdout_len, "");
		if (!res->stderr_data)
			set_str(&res->stderr_data, &res->stderr_len, "");
	}
	pthread_mutex_lock(&F.lock);
	F.running--;
	pthread_mutex_unlock(&F.lock);
	return rc;
}

static json_object *fake_status(void *data, brig_ctx *ctx)
{
	(void)data;
	(void)ctx;
	pthread_mutex_lock(&F.lock);
	F.statuses++;
	pthread_mutex_unlock(&F.lock);
	return json_tokener_parse(
		"{\"backends\":[{\"name\":\"docker-cli\",\"description\":\"d\",\"isolation\":"
		"\"container\","
		"\"available\":true,\"reason\":null,\"version\":\"27.0\",\"runtime\":\"runc\","
		"\"path\":\"/x\"},"
		"{\"name\":\"gvisor\",\"description\":\"g\",\"isolation\":\"gvisor\",\"available\":"
		"false,"
		"\"reason\":\"runsc is not "
		"registered\",\"version\":\"\",\"runtime\":\"runsc\",\"path\":\"/y\"}],"
		"\"refused_plugins\":[],\"backend_dir\":\"/x\",\"policy_backend\":\"auto\","
		"\"isolation_minimum\":\"container\",\"selected\":\"docker-cli\",\"isolation\":"
		"\"container\","
		"\"runtime\":\"runc\",\"selection_error\":null,"
		"\"images\":[{\"language\":\"python\",\"image\":\"brig/"
		"python:bookworm\",\"present\":true},"
		"{\"language\":\"node\",\"image\":\"brig/node:bookworm\",\"present\":false},"
		"{\"language\":\"shell\",\"image\":\"brig/shell:bookworm\",\"present\":null}]}");
}

static const mcp_hooks fake_hooks = { .run = fake_run, .status = fake_status };

/* ---- a client over pipes ---------------------------------------------------------------- */

typedef struct client {
	int to_srv, srv_in;    /* we write to_srv; the server reads srv_in */
	int from_srv, srv_out; /* the server writes srv_out; we read from_srv */
	int stop_r, stop_w;    /* shutdown_fd */
	brig_policy *policy;
	mcp_options opts;
	pthread_t thread;
	int rc;
	bool done;
	jsonrpc_lines lines;
	char *last; /* the raw text of the last message received */
} client;

static void *serve_thread(void *p)
{
	client *c = p;
	brig_error *err = NULL;
	c->rc = mcp_serve(NULL, c->srv_in, c->srv_out, &c->opts, &err);
	brig_error_free(err);
	close(c->srv_out); /* EOF for the reader once the server is gone */
	c->srv_out = -1;
	__atomic_store_n(&c->done, true, __ATOMIC_SEQ_CST);
	return NULL;
}

/* overrides: NULL-terminated key/value pairs for brig_policy_override */
static void client_start(client *c, const char *const *overrides, int queue_per_run,
			 size_t max_line)
{
	memset(c, 0, sizeof *c);
	int a[2], b[2], s[2];
	CU_ASSERT_FATAL(pipe2(a, O_CLOEXEC) == 0 && pipe2(b, O_CLOEXEC) == 0 &&
			pipe2(s, O_CLOEXEC) == 0);
	c->srv_in = a[0];
	c->to_srv = a[1];
	c->from_srv = b[0];
	c->srv_out = b[1];
	c->stop_r = s[0];
	c->stop_w = s[1];
	c->policy = brig_policy_new_default();
	for (const char *const *o = overrides; o && *o; o += 2) {
		bool loosened;
		brig_error *err = NULL;
		CU_ASSERT_FATAL(brig_policy_override(c->policy, o[0], o[1], &loosened, &err) == 0);
	}
	c->opts = (mcp_options){ .shutdown_fd = c->stop_r,
				 .policy = c->policy,
				 .hooks = &fake_hooks,
				 .queue_per_run = queue_per_run,
				 .max_line_bytes = max_line,
				 .quiet = true };
	jsonrpc_lines_init(&c->lines, 64 << 20);
	fake_reset();
	CU_ASSERT_FATAL(pthread_create(&c->thread, NULL, serve_thread, c) == 0);
}

static void client_send(client *c, const char *text)
{
	CU_ASSERT(write_all(c->to_srv, text, strlen(text)) == 0);
	CU_ASSERT(write_all(c->to_srv, "\n", 1) == 0);
}

static void client_sendf(client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void client_sendf(client *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	CU_ASSERT_FATAL(vasprintf(&s, fmt, ap) >= 0);
	va_end(ap);
	client_send(c, s);
	free(s);
}

/* The next message from the server, or NULL after timeout_ms / EOF. */
static json_object *client_recv(client *c, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	for (;;) {
		const char *line;
		size_t len;
		if (jsonrpc_lines_next(&c->lines, &line, &len) == JSONRPC_LINE_OK) {
			free(c->last);
			c->last = xstrndup(line, len);
			json_object *o = json_tokener_parse(line);
			CU_ASSERT_PTR_NOT_NULL(o);
			return o;
		}
		int left = (int)(deadline - now_ms());
		if (left <= 0)
			return NULL;
		struct pollfd p = { .fd = c->from_srv, .events = POLLIN };
		if (poll(&p, 1, left) <= 0)
			return NULL;
		char buf[65536];
		ssize_t n = read(c->from_srv, buf, sizeof buf);
		if (n <= 0)
			return NULL;
		jsonrpc_lines_feed(&c->lines, buf, (size_t)n);
	}
}

/* EOF on the server's stdin; it must stop within a few seconds. */
static void client_stop(client *c)
{
	if (c->to_srv >= 0)
		close(c->to_srv);
	c->to_srv = -1;
	int64_t t0 = now_ms();
	while (!__atomic_load_n(&c->done, __ATOMIC_SEQ_CST) && now_ms() - t0 < 5000)
		usleep(5000);
	CU_ASSERT(__atomic_load_n(&c->done, __ATOMIC_SEQ_CST));
	fake_release(); /* never leave a thread behind, even when the test failed */
	pthread_join(c->thread, NULL);
	CU_ASSERT_EQUAL(c->rc, 0);
	/* nothing may be left unread but what the test chose to ignore */
	close(c->from_srv);
	close(c->srv_in);
	close(c->stop_r);
	close(c->stop_w);
	jsonrpc_lines_free(&c->lines);
	free(c->last);
	brig_policy_free(c->policy);
}

static json_object *path(json_object *o, const char *p)
{
	char key[64];
	while (o && *p) {
		size_t n = strcspn(p, ".");
		snprintf(key, sizeof key, "%.*s", (int)n, p);
		p += n + (p[n] == '.');
		if (json_object_is_type(o, json_type_array)) {
			long i = 0;
			CU_ASSERT_FATAL(parse_long(key, 0, 1000, &i));
			o = json_object_array_get_idx(o, (size_t)i);
		} else if (!json_object_object_get_ex(o, key, &o)) {
			return NULL;
		}
	}
	return o;
}

static const char *pstr(json_object *o, const char *p)
{
	json_object *v = path(o, p);
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

static int64_t pint(json_object *o, const char *p)
{
	json_object *v = path(o, p);
	return v ? json_object_get_int64(v) : -999999;
}

static bool pbool(json_object *o, const char *p)
{
	json_object *v = path(o, p);
	return v && json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

/* Send a request and return the response to it (notifications before it are skipped). */
static json_object *call(client *c, const char *line)
{
	client_send(c, line);
	json_object *o;
	while ((o = client_recv(c, 5000)) && path(o, "method"))
		json_object_put(o);
	CU_ASSERT_PTR_NOT_NULL(o);
	return o;
}

static void init_session(client *c)
{
	json_object *r =
		call(c, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
			"{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
			"\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}");
	CU_ASSERT_STRING_EQUAL(pstr(r, "result.protocolVersion"), "2025-11-25");
	json_object_put(r);
	client_send(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

#define RUN(id, args)                                                                        \
	"{\"jsonrpc\":\"2.0\",\"id\":" id ",\"method\":\"tools/call\",\"params\":{\"name\":" \
	"\"run_code\",\"arguments\":" args "}}"

/* ---- tests ------------------------------------------------------------------------------ */

static void test_lifecycle(void)
{
	client c;
	client_start(&c, NULL, 0, 0);
	/* ping works before initialize; other requests get -32002 */
	json_object *r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
	CU_ASSERT_STRING_EQUAL(jsonrpc_to_string(r, NULL),
			       "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
	json_object_put(r);
	r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
	CU_ASSERT_EQUAL(pint(r, "error.code"), JSONRPC_SERVER_NOT_INITIALIZED);
	json_object_put(r);
	r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\"}");
	CU_ASSERT_EQUAL(pint(r, "error.code"), JSONRPC_INVALID_PARAMS);
	json_object_put(r);
	/* a supported older version is echoed */
	r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"initialize\",\"params\":"
		     "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
		     "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
	CU_ASSERT_STRING_EQUAL(pstr(r, "result.protocolVersion"), "2025-06-18");
	CU_ASSERT_STRING_EQUAL(pstr(r, "result.serverInfo.name"), "brig");
	CU_ASSERT_STRING_EQUAL(pstr(r, "result.serverInfo.version"), brig_version());
	CU_ASSERT_PTR_NOT_NULL(path(r, "result.capabilities.tools"));
	CU_ASSERT_FALSE(pbool(r, "result.capabilities.tools.listChanged"));
	CU_ASSERT_PTR_NULL(path(r, "result.capabilities.resources"));
	CU_ASSERT(strlen(pstr(r, "result.instructions")) > 20);
	json_object_put(r);
	r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"initialize\",\"params\":"
		     "{\"protocolVersion\":\"2025-06-18\"}}");
	CU_ASSERT_EQUAL(pint(r, "error.code"), JSONRPC_INVALID_REQUEST);
	json_object_put(r);
	client_stop(&c);

	/* an unknown version gets the newest */
	client_start(&c, NULL, 0, 0);
	r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"i\",\"method\":\"initialize\",\"params\":"
		     "{\"protocolVersion\":\"1999-01-01\",\"capabilities\":{},"
		     "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
	CU_ASSERT_STRING_EQUAL(pstr(r, "result.protocolVersion"), MCP_PROTOCOL_LATEST);
	json_object_put(r);
	/* every supported version is accepted in a fresh session */
	client_stop(&c);
	for (const char *const *v = mcp_protocol_versions; *v; v++) {
		client_start(&c, NULL, 0, 0);
		client_sendf(&c,
			     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
			     "{\"protocolVersion\":\"%s\",\"capabilities\":{},"
			     "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
			     *v);
		r = client_recv(&c, 5000);
		CU_ASSERT_STRING_EQUAL(pstr(r, "result.protocolVersion"), *v);
		json_object_put(r);
		client_stop(&c);
	}
}

/* The workspace tools exist only when the policy turns workspaces on; run_code then takes a
 * workspace_id; a call's bad arguments are the model's to fix (isError, nothing ran). */
static void test_workspace_tools_list(void)
{
	client c;
	client_start(&c, NULL, 0, 0);
	init_session(&c);
	json_object *r =
		call(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{}}");
	CU_ASSERT_EQUAL(json_object_array_length(path(r, "result.tools")), 2);
	CU_ASSERT_PTR_NULL(path(r, "result.tools.0.inputSchema.properties.workspace_id"));
	json_object_put(r);
	r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
		     "{\"name\":\"create_workspace\",\"arguments\":{}}}");
	CU_ASSERT_PTR_NOT_NULL(path(r, "error")); /* no such tool */
	json_object_put(r);
	client_stop(&c);

	static const char *const on[] = { "workspaces.enabled", "true",
					  "workspaces.max_transfer_bytes", "5000", NULL };
	client_start(&c, on, 0, 0);
	init_session(&c);
	r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{}}");
	json_object *tools = path(r, "result.tools");
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(tools), 7);
	static const char *const names[] = { "run_code",         "sandbox_status",
					     "create_workspace", "write_file",
					     "read_file",        "list_files",
					     "delete_workspace" };
	for (size_t i = 0; i < 7; i++) {
		char k[32];
		snprintf(k, sizeof k, "%zu.name", i);
		CU_ASSERT_STRING_EQUAL(pstr(tools, k), names[i]);
		snprintf(k, sizeof k, "%zu.inputSchema.type", i);
		CU_ASSERT_STRING_EQUAL(pstr(tools, k), "object");
	}
	CU_ASSERT_STRING_EQUAL(pstr(tools, "0.inputSchema.properties.workspace_id.type"), "string");
	CU_ASSERT_TRUE(pbool(tools, "6.annotations.destructiveHint"));
	CU_ASSERT_TRUE(pbool(tools, "4.annotations.readOnlyHint"));
	CU_ASSERT_PTR_NOT_NULL(strstr(pstr(tools, "3.description"), "5000 bytes"));
	json_object_put(r);
	r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
		     "{\"name\":\"write_file\",\"arguments\":{\"workspace_id\":\"x\","
		     "\"path\":\"a\",\"content\":\"b\",\"mode\":\"0777\"}}}");
	CU_ASSERT_TRUE(pbool(r, "result.isError"));
	CU_ASSERT_PTR_NOT_NULL(strstr(pstr(r, "result.content.0.text"), "Unknown argument"));
	json_object_put(r);
	r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":"
		     "{\"name\":\"read_file\",\"arguments\":{\"workspace_id\":\"x\"}}}");
	CU_ASSERT_TRUE(pbool(r, "result.isError"));
	CU_ASSERT_PTR_NOT_NULL(strstr(pstr(r, "result.content.0.text"), "Missing argument"));
	json_object_put(r);
	r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":"
		     "{\"name\":\"write_file\",\"arguments\":{\"workspace_id\":\"x\","
		     "\"path\":\"a\",\"content\":\"b\",\"encoding\":\"hex\"}}}");
	CU_ASSERT_PTR_NOT_NULL(strstr(pstr(r, "result.content.0.text"), "encoding"));
	json_object_put(r);
	client_stop(&c);
	mcp_ws_configure(NULL); /* the next tests see the defaults */
}

static void test_tools_list(void)
{
	static const char *const ov[] = { "max_input_bytes", "1000", "max_timeout_seconds", "20",
					  NULL };
	client c;
	client_start(&c, ov, 0, 0);
	init_session(&c);
	json_object *r =
		call(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{}}");
	json_object *tools = path(r, "result.tools");
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(tools), 2);
	CU_ASSERT_STRING_EQUAL(pstr(tools, "0.name"), "run_code");
	CU_ASSERT_STRING_EQUAL(pstr(tools, "0.inputSchema.type"), "object");
	CU_ASSERT_EQUAL(pint(tools, "0.inputSchema.properties.code.maxLength"), 1000);
	CU_ASSERT_EQUAL(pint(tools, "0.inputSchema.properties.timeout_seconds.maximum"), 20);
	CU_ASSERT_EQUAL(pint(tools, "0.inputSchema.properties.timeout_seconds.minimum"), 1);
	CU_ASSERT_PTR_NOT_NULL(path(tools, "0.inputSchema.additionalProperties"));
	CU_ASSERT_FALSE(pbool(tools, "0.inputSchema.additionalProperties"));
	CU_ASSERT_EQUAL(
		json_object_array_length(path(tools, "0.inputSchema.properties.language.enum")), 3);
	CU_ASSERT_EQUAL(json_object_array_length(path(tools, "0.inputSchema.required")), 2);
	CU_ASSERT_STRING_EQUAL(pstr(tools, "0.outputSchema.type"), "object");
	CU_ASSERT_FALSE(pbool(tools, "0.annotations.readOnlyHint"));
	CU_ASSERT_PTR_NOT_NULL(path(tools, "0.annotations.destructiveHint"));
	CU_ASSERT_FALSE(pbool(tools, "0.annotations.destructiveHint"));
	CU_ASSERT_FALSE(pbool(tools, "0.annotations.idempotentHint"));
	CU_ASSERT_PTR_NOT_NULL(path(tools, "0.annotations.openWorldHint"));
	CU_ASSERT_FALSE(pbool(tools, "0.annotations.openWorldHint"));
	CU_ASSERT_STRING_EQUAL(pstr(tools, "1.name"), "sandbox_status");
	CU_ASSERT_TRUE(pbool(tools, "1.annotations.readOnlyHint"));
	CU_ASSERT_FALSE(pbool(tools, "1.inputSchema.additionalProperties"));
	CU_ASSERT_PTR_NULL(path(r, "result.nextCursor"));
	/* no schema carries $schema: the SDKs' default validators would refuse 2020-12 */
	CU_ASSERT_PTR_NULL(strstr(jsonrpc_to_string(r, NULL), "$schema"));
	json_object_put(r);
	r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/"
		     "list\",\"params\":{\"cursor\":\"x\"}}");
	CU_ASSERT_EQUAL(pint(r, "error.code"), JSONRPC_INVALID_PARAMS);
	json_object_put(r);
	client_stop(&c);

	/* the network hint follows the policy */
	static const char *const net[] = { "network", "true", NULL };
	client_start(&c, net, 0, 0);
	init_session(&c);
	r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
	CU_ASSERT_TRUE(pbool(r, "result.tools.0.annotations.openWorldHint"));
	json_object_put(r);
	client_stop(&c);
}

static void test_protocol_errors(void)
{
	client c;
	client_start(&c, NULL, 0, 0);
	init_session(&c);
	struct {
		const char *line;
		int code;
		const char *id; /* serialized */
	} cases[] = {
		{ "garbage", JSONRPC_PARSE_ERROR, "null" },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1", JSONRPC_PARSE_ERROR,
		  "null" },
		{ "[{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}]", JSONRPC_INVALID_REQUEST,
		  "null" },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":null}", JSONRPC_INVALID_REQUEST,
		  "null" },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"nope\",\"id\":7}", JSONRPC_METHOD_NOT_FOUND,
		  "7" },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"resources/list\",\"id\":\"r\"}",
		  JSONRPC_METHOD_NOT_FOUND, "\"r\"" },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"id\":8}",
		  JSONRPC_INVALID_PARAMS, "8" },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"id\":9,\"params\":[1]}",
		  JSONRPC_INVALID_PARAMS, "9" },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"tools/"
		  "call\",\"id\":10,\"params\":{\"name\":\"rm\"}}",
		  JSONRPC_INVALID_PARAMS, "10" },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"tools/"
		  "call\",\"id\":11,\"params\":{\"name\":3}}",
		  JSONRPC_INVALID_PARAMS, "11" },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"tools/"
		  "call\",\"id\":12,\"params\":{\"name\":\"run_code\",\"arguments\":\"x\"}}",
		  JSONRPC_INVALID_PARAMS, "12" },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":13,\"params\":\"x\"}",
		  JSONRPC_INVALID_REQUEST, "13" },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":\"a\\\"\\u00e9\\n\"x\"}",
		  JSONRPC_PARSE_ERROR, "null" },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"nope\",\"id\":\"a\\\"\\u00e9\\n\"}",
		  JSONRPC_METHOD_NOT_FOUND, "\"a\\\"\\u00e9\\n\"" },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"nope\",\"id\":123456789012345678901234567890}",
		  JSONRPC_METHOD_NOT_FOUND, "123456789012345678901234567890" },
		{ "\xff\xfe", JSONRPC_PARSE_ERROR, "null" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		client_send(&c, cases[i].line);
		json_object *r = client_recv(&c, 5000);
		CU_ASSERT_PTR_NOT_NULL_FATAL(r);
		if (pint(r, "error.code") != cases[i].code)
			fprintf(stderr, "\n%s -> %s\n", cases[i].line, jsonrpc_to_string(r, NULL));
		CU_ASSERT_EQUAL(pint(r, "error.code"), cases[i].code);
		CU_ASSERT(strlen(pstr(r, "error.message")) > 0);
		/* the raw text of the id as sent */
		const char *s = c.last;
		cleanup_free char *want = xasprintf("{\"jsonrpc\":\"2.0\",\"id\":%s,", cases[i].id);
		if (strncmp(s, want, strlen(want)))
			fprintf(stderr, "\nwant %s\ngot  %s\n", want, s);
		CU_ASSERT_NSTRING_EQUAL(s, want, strlen(want));
		json_object_put(r);
	}
	/* notifications and responses are never answered: the next message is the ping's */
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}");
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
			"cancelled\",\"params\":{\"requestId\":999}}");
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}");
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}");
	client_send(&c,
		    "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-1,\"message\":\"x\"}}");
	client_send(&c, "");
	client_send(&c, "   \r");
	json_object *r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"method\":\"ping\"}");
	CU_ASSERT_STRING_EQUAL(pstr(r, "id"), "last");
	json_object_put(r);
	client_stop(&c);
}

static void test_bad_arguments(void)
{
	client c;
	client_start(&c, NULL, 0, 0);
	init_session(&c);
	const char *bad[][2] = {
		{ RUN("1", "{\"language\":\"ruby\",\"code\":\"x\"}"), "Unsupported language" },
		{ RUN("2", "{\"language\":\"python\"}"), "Missing argument \"code\"" },
		{ RUN("3", "{\"code\":\"x\"}"), "Missing argument \"language\"" },
		{ RUN("4", "{\"language\":\"python\",\"code\":\"x\",\"image\":\"evil\"}"),
		  "Unknown argument \"image\"" },
		{ RUN("5", "{\"language\":\"python\",\"code\":\"x\",\"network\":true}"),
		  "Unknown argument \"network\"" },
		{ RUN("6", "{\"language\":\"python\",\"code\":\"x\",\"timeout_seconds\":0}"),
		  "timeout_seconds" },
		{ RUN("7", "{\"language\":\"python\",\"code\":\"x\",\"timeout_seconds\":\"5\"}"),
		  "timeout_seconds" },
		{ RUN("8", "{\"language\":\"python\",\"code\":\"x\",\"timeout_seconds\":1.5}"),
		  "timeout_seconds" },
		{ RUN("9", "{\"language\":\"python\",\"code\":42}"), "must be a string" },
		{ RUN("10", "{}"), "Missing argument" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/"
		  "call\",\"params\":{\"name\":\"run_code\"}}",
		  "Missing argument" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/"
		  "call\",\"params\":{\"name\":\"sandbox_status\",\"arguments\":{\"x\":1}}}",
		  "no arguments" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		json_object *r = call(&c, bad[i][0]);
		CU_ASSERT_PTR_NULL(path(r, "error"));
		CU_ASSERT_TRUE(pbool(r, "result.isError"));
		CU_ASSERT_STRING_EQUAL(pstr(r, "result.content.0.type"), "text");
		if (!strstr(pstr(r, "result.content.0.text"), bad[i][1]))
			fprintf(stderr, "\n%s -> %s\n", bad[i][0], jsonrpc_to_string(r, NULL));
		CU_ASSERT_PTR_NOT_NULL(strstr(pstr(r, "result.content.0.text"), bad[i][1]));
		CU_ASSERT_PTR_NULL(path(r, "result.structuredContent"));
		json_object_put(r);
	}
	CU_ASSERT_EQUAL(fake_get(&F.runs), 0);
	/* aliases are accepted; a null timeout is the default */
	json_object *r = call(&c, RUN("20", "{\"language\":\"javascript\",\"code\":\"print "
					    "hi\",\"timeout_seconds\":null}"));
	CU_ASSERT_FALSE(pbool(r, "result.isError"));
	CU_ASSERT_STRING_EQUAL(pstr(r, "result.structuredContent.language"), "node");
	json_object_put(r);
	/* a refusal by the policy (too long, timeout too high) comes back as isError with the
	 * limits */
	r = call(&c,
		 RUN("21", "{\"language\":\"python\",\"code\":\"refuse\",\"timeout_seconds\":99}"));
	CU_ASSERT_TRUE(pbool(r, "result.isError"));
	CU_ASSERT_PTR_NOT_NULL(strstr(pstr(r, "result.content.0.text"), "Refused"));
	CU_ASSERT_PTR_NOT_NULL(strstr(pstr(r, "result.content.0.text"), "from 1 to 30"));
	json_object_put(r);
	pthread_mutex_lock(&F.lock);
	CU_ASSERT_FALSE(F.bad_options);
	pthread_mutex_unlock(&F.lock);
	client_stop(&c);
}

static void test_run_results(void)
{
	client c;
	client_start(&c, NULL, 0, 0);
	init_session(&c);
	json_object *schema = mcp_run_code_output_schema();

	json_object *r = call(&c, RUN("1", "{\"language\":\"python\",\"code\":\"print hello\"}"));
	CU_ASSERT_FALSE(pbool(r, "result.isError"));
	CU_ASSERT_PTR_NOT_NULL(path(r, "result.isError"));
	json_object *sc = path(r, "result.structuredContent");
	const char *bad = validate(schema, sc, "structuredContent");
	CU_ASSERT_PTR_NULL(bad);
	CU_ASSERT_STRING_EQUAL(pstr(sc, "verdict"), "success");
	CU_ASSERT_STRING_EQUAL(pstr(sc, "stdout"), "hello\n");
	CU_ASSERT_PTR_NOT_NULL(strstr(pstr(r, "result.content.0.text"), "exited with code 0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(pstr(r, "result.content.0.text"), "hello"));
	json_object_put(r);

	r = call(&c, RUN("2", "{\"language\":\"shell\",\"code\":\"exit 3\"}"));
	CU_ASSERT_TRUE(pbool(r, "result.isError"));
	sc = path(r, "result.structuredContent");
	CU_ASSERT_PTR_NULL(validate(schema, sc, "structuredContent"));
	CU_ASSERT_STRING_EQUAL(pstr(sc, "verdict"), "error");
	CU_ASSERT_EQUAL(pint(sc, "exit_code"), 3);
	CU_ASSERT_PTR_NOT_NULL(strstr(pstr(r, "result.content.0.text"), "exited with code 3"));
	CU_ASSERT_PTR_NOT_NULL(strstr(pstr(r, "result.content.0.text"), "failed"));
	json_object_put(r);

	/* program output that is not UTF-8 still travels as valid JSON */
	r = call(&c, RUN("3", "{\"language\":\"python\",\"code\":\"binary\"}"));
	sc = path(r, "result.structuredContent");
	CU_ASSERT_PTR_NULL(validate(schema, sc, "structuredContent"));
	const char *out = pstr(sc, "stdout");
	CU_ASSERT_TRUE(utf8_valid(out, strlen(out), NULL));
	json_object_put(r);

	/* NUL, ESC and invalid UTF-8 in stdout and stderr: the text carries all of it, visibly */
	r = call(&c, RUN("5", "{\"language\":\"shell\",\"code\":\"controls\"}"));
	const char *text = pstr(r, "result.content.0.text");
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "--- stdout ---\none\xe2\x90\x80two \xe2\x90\x9b[2J"
					    "\xef\xbf\xbd three\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "--- stderr ---\nerr\xe2\x90\x80\xe2\x90\x9b]0;pwned"
					    "\xe2\x90\x87 tail\xef\xbf\xbd\n"));
	for (const char *p = text; *p; p++) /* no control character but the newlines */
		CU_ASSERT((unsigned char)*p >= 0x20 || *p == '\n');
	/* structuredContent keeps the bytes as they were (invalid UTF-8 replaced) */
	json_object *so = path(r, "result.structuredContent.stdout");
	CU_ASSERT_EQUAL(json_object_get_string_len(so), 22);
	CU_ASSERT_EQUAL(memcmp(json_object_get_string(so), "one\0two \x1b[2J", 12), 0);
	json_object_put(r);

	/* sandbox_status: status + limits + load, as text and structured */
	r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":"
		     "{\"name\":\"sandbox_status\",\"arguments\":{}}}");
	CU_ASSERT_FALSE(pbool(r, "result.isError"));
	CU_ASSERT_STRING_EQUAL(pstr(r, "result.structuredContent.selected"), "docker-cli");
	CU_ASSERT_EQUAL(pint(r, "result.structuredContent.limits.max_timeout_seconds"), 30);
	CU_ASSERT_EQUAL(pint(r, "result.structuredContent.load.running"), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(pstr(r, "result.content.0.text"), "MISSING"));
	CU_ASSERT_PTR_NOT_NULL(strstr(pstr(r, "result.content.0.text"), "runsc is not registered"));
	/* and it matches its own outputSchema */
	json_object *tools = mcp_tools_json(&(brig_policy_limits){ .max_concurrent_runs = 1 });
	CU_ASSERT_PTR_NULL(validate(path(tools, "1.outputSchema"),
				    path(r, "result.structuredContent"), "status"));
	json_object_put(tools);
	json_object_put(r);

	json_object_put(schema);
	client_stop(&c);
}

static void test_progress(void)
{
	client c;
	client_start(&c, NULL, 0, 0);
	init_session(&c);
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
			"\"_meta\":{\"progressToken\":\"tok\"},\"name\":\"run_code\","
			"\"arguments\":{\"language\":\"python\",\"code\":\"print p\"}}}");
	int step = 0;
	json_object *r;
	while ((r = client_recv(&c, 5000)) && path(r, "method")) {
		CU_ASSERT_STRING_EQUAL(pstr(r, "method"), "notifications/progress");
		CU_ASSERT_STRING_EQUAL(pstr(r, "params.progressToken"), "tok");
		CU_ASSERT(pint(r, "params.progress") > step);
		step = (int)pint(r, "params.progress");
		CU_ASSERT_EQUAL(pint(r, "params.total"), 3);
		CU_ASSERT(strlen(pstr(r, "params.message")) > 0);
		json_object_put(r);
	}
	CU_ASSERT_EQUAL(step, 3);
	CU_ASSERT_PTR_NOT_NULL(path(r, "result"));
	json_object_put(r);
	/* an integer token is echoed as such */
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
			"\"_meta\":{\"progressToken\":42},\"name\":\"sandbox_status\"}}");
	r = client_recv(&c, 5000);
	CU_ASSERT_EQUAL(pint(r, "params.progressToken"), 42);
	json_object_put(r);
	while ((r = client_recv(&c, 5000)) && path(r, "method"))
		json_object_put(r);
	json_object_put(r);
	client_stop(&c);
}

static void test_cancel(void)
{
	static const char *const ov[] = { "max_concurrent_runs", "1", NULL };
	client c;
	client_start(&c, ov, 0, 0);
	init_session(&c);
	/* call 1 runs and blocks; call 2 waits in the queue */
	client_send(&c, RUN("1", "{\"language\":\"python\",\"code\":\"block\"}"));
	CU_ASSERT_TRUE(fake_wait(&F.running, 1));
	client_send(&c, RUN("\"two\"", "{\"language\":\"python\",\"code\":\"print 2\"}"));
	/* ping is answered while code runs */
	json_object *r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}");
	CU_ASSERT_STRING_EQUAL(pstr(r, "id"), "p");
	json_object_put(r);
	/* cancel the queued one: it never runs and gets no response */
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
			"{\"requestId\":\"two\",\"reason\":\"changed my mind\"}}");
	/* cancel the running one: the run sees its cancel fd at once */
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
			"{\"requestId\":1}}");
	CU_ASSERT_TRUE(fake_wait(&F.cancels, 1));
	/* the next message is the ping's, not a response to 1 or "two" */
	r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"after\",\"method\":\"ping\"}");
	CU_ASSERT_STRING_EQUAL(pstr(r, "id"), "after");
	json_object_put(r);
	CU_ASSERT_EQUAL(fake_get(&F.runs), 1);
	/* a late cancel for a finished call is ignored; the server carries on */
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
			"{\"requestId\":1}}");
	r = call(&c, RUN("3", "{\"language\":\"python\",\"code\":\"print 3\"}"));
	CU_ASSERT_EQUAL(pint(r, "id"), 3);
	CU_ASSERT_STRING_EQUAL(pstr(r, "result.structuredContent.stdout"), "3\n");
	json_object_put(r);
	CU_ASSERT_PTR_NULL(client_recv(&c, 200));
	client_stop(&c);
}

static void test_queue_and_busy(void)
{
	/* 2 at once, 2 x 1 waiting: the fifth concurrent call is refused as busy */
	static const char *const ov[] = { "max_concurrent_runs", "2", NULL };
	client c;
	client_start(&c, ov, 1, 0);
	init_session(&c);
	for (int i = 1; i <= 4; i++) {
		client_sendf(&c, RUN("%d", "{\"language\":\"python\",\"code\":\"block\"}"), i);
		if (i == 2)
			CU_ASSERT_TRUE(fake_wait(&F.running, 2));
	}
	json_object *r = call(&c, RUN("5", "{\"language\":\"python\",\"code\":\"print x\"}"));
	CU_ASSERT_EQUAL(pint(r, "id"), 5);
	CU_ASSERT_TRUE(pbool(r, "result.isError"));
	CU_ASSERT_PTR_NOT_NULL(strstr(pstr(r, "result.content.0.text"), "busy"));
	json_object_put(r);
	/* a duplicate id in flight is refused */
	r = call(&c, RUN("1", "{\"language\":\"python\",\"code\":\"print x\"}"));
	CU_ASSERT_EQUAL(pint(r, "error.code"), JSONRPC_INVALID_REQUEST);
	json_object_put(r);
	/* status is not stuck behind the runs */
	r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/"
		     "call\",\"params\":{\"name\":\"sandbox_status\"}}");
	CU_ASSERT_EQUAL(pint(r, "result.structuredContent.load.running"), 2);
	CU_ASSERT_EQUAL(pint(r, "result.structuredContent.load.queued"), 2);
	json_object_put(r);
	fake_release();
	bool seen[5] = { false };
	for (int i = 0; i < 4; i++) {
		r = client_recv(&c, 5000);
		CU_ASSERT_PTR_NOT_NULL_FATAL(r);
		int64_t id = pint(r, "id");
		CU_ASSERT(id >= 1 && id <= 4);
		if (id >= 1 && id <= 4) {
			CU_ASSERT_FALSE(seen[id]);
			seen[id] = true;
		}
		CU_ASSERT_STRING_EQUAL(pstr(r, "result.structuredContent.stdout"), "released\n");
		json_object_put(r);
	}
	CU_ASSERT_EQUAL(fake_get(&F.max_running), 2);
	CU_ASSERT_EQUAL(fake_get(&F.runs), 4);
	client_stop(&c);
}

static void test_shutdown_eof(void)
{
	client c;
	client_start(&c, NULL, 0, 0);
	init_session(&c);
	client_send(&c, RUN("1", "{\"language\":\"python\",\"code\":\"block\"}"));
	client_send(&c, RUN("2", "{\"language\":\"python\",\"code\":\"block\"}"));
	CU_ASSERT_TRUE(fake_wait(&F.running, 2));
	int64_t t0 = now_ms();
	close(c.to_srv);
	c.to_srv = -1;
	/* the runs are cancelled, no responses are written, the server returns */
	CU_ASSERT_PTR_NULL(client_recv(&c, 5000));
	CU_ASSERT(now_ms() - t0 < 3000);
	CU_ASSERT_EQUAL(fake_get(&F.cancels), 2);
	client_stop(&c);
}

static void test_shutdown_signal(void)
{
	static const char *const ov[] = { "max_concurrent_runs", "1", NULL };
	client c;
	client_start(&c, ov, 0, 0);
	init_session(&c);
	client_send(&c, RUN("1", "{\"language\":\"python\",\"code\":\"block\"}"));
	CU_ASSERT_TRUE(fake_wait(&F.running, 1));
	client_send(&c, RUN("2", "{\"language\":\"python\",\"code\":\"block\"}")); /* queued */
	usleep(50000);
	CU_ASSERT(write(c.stop_w, "s", 1) == 1); /* what the SIGTERM handler does */
	CU_ASSERT_PTR_NULL(client_recv(&c, 5000));
	CU_ASSERT_EQUAL(fake_get(&F.cancels), 1);
	CU_ASSERT_EQUAL(fake_get(&F.runs), 1);
	client_stop(&c);
}

static void test_oversized_and_partial(void)
{
	client c;
	client_start(&c, NULL, 0, 1024);
	init_session(&c);
	/* a 1 MB line is answered once and discarded; the server carries on */
	size_t n = 1 << 20;
	char *big = xmalloc(n + 1);
	memset(big, 'x', n);
	big[n] = '\0';
	client_send(&c, big);
	free(big);
	json_object *r = client_recv(&c, 5000);
	CU_ASSERT_EQUAL(pint(r, "error.code"), JSONRPC_INVALID_REQUEST);
	CU_ASSERT_TRUE(json_object_object_get_ex(r, "id", NULL)); /* "id":null */
	json_object_put(r);
	/* a message split across writes, with CRLF */
	const char *msg = "{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"ping\"}\r\n";
	for (const char *p = msg; *p; p++) {
		CU_ASSERT(write(c.to_srv, p, 1) == 1);
		if (*p == ',')
			usleep(20000);
	}
	r = client_recv(&c, 5000);
	CU_ASSERT_EQUAL(pint(r, "id"), 77);
	json_object_put(r);
	client_stop(&c);
}

/* ---- the 2026-07-28 era -------------------------------------------------------------------- */

#define ENVELOPE                                                      \
	"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"," \
	"\"io.modelcontextprotocol/clientCapabilities\":{},"          \
	"\"io.modelcontextprotocol/clientInfo\":{\"name\":\"modern\",\"version\":\"2\"}"
#define META "\"_meta\":{" ENVELOPE "}"
#define MODERN(id, method, params) \
	"{\"jsonrpc\":\"2.0\",\"id\":" id ",\"method\":\"" method "\",\"params\":{" params "}}"
#define MRUN(id, args) \
	MODERN(id, "tools/call", "\"name\":\"run_code\",\"arguments\":" args "," META)

/* A result of the modern era: resultType complete, brig named in _meta. */
static void assert_modern_result(json_object *r)
{
	CU_ASSERT_PTR_NULL(path(r, "error"));
	CU_ASSERT_STRING_EQUAL(pstr(r, "result.resultType"), "complete");
	json_object *meta = path(r, "result._meta");
	json_object *info = NULL;
	CU_ASSERT_TRUE(
		json_object_object_get_ex(meta, "io.modelcontextprotocol/serverInfo", &info));
	CU_ASSERT_STRING_EQUAL(pstr(info, "name"), "brig");
	CU_ASSERT_STRING_EQUAL(pstr(info, "version"), brig_version());
}

static void assert_unsupported(json_object *r, const char *requested)
{
	CU_ASSERT_EQUAL(pint(r, "error.code"), -32022);
	CU_ASSERT_EQUAL(json_object_array_length(path(r, "error.data.supported")), 1);
	CU_ASSERT_STRING_EQUAL(pstr(r, "error.data.supported.0"), "2026-07-28");
	if (requested) {
		CU_ASSERT_STRING_EQUAL(pstr(r, "error.data.requested"), requested);
	} else {
		CU_ASSERT_PTR_NULL(path(r, "error.data.requested"));
	}
}

/* server/discover answers before and without initialize; after it the era is modern and
 * initialize is refused; the 2025 methods ping and logging/setLevel are gone. */
static void test_modern_discover(void)
{
	client c;
	client_start(&c, NULL, 0, 0);
	json_object *r = call(&c, MODERN("1", "server/discover", META));
	assert_modern_result(r);
	CU_ASSERT_EQUAL(json_object_array_length(path(r, "result.supportedVersions")), 1);
	CU_ASSERT_STRING_EQUAL(pstr(r, "result.supportedVersions.0"), "2026-07-28");
	CU_ASSERT_FALSE(pbool(r, "result.capabilities.tools.listChanged"));
	CU_ASSERT_PTR_NOT_NULL(path(r, "result.capabilities.tools"));
	CU_ASSERT_PTR_NULL(path(r, "result.capabilities.logging"));
	CU_ASSERT(strlen(pstr(r, "result.instructions")) > 20);
	CU_ASSERT_EQUAL(pint(r, "result.ttlMs"), MCP_CACHE_TTL_MS);
	CU_ASSERT_STRING_EQUAL(pstr(r, "result.cacheScope"), "private");
	CU_ASSERT_PTR_NULL(path(r, "result.protocolVersion"));
	json_object_put(r);
	/* the reverse order: initialize after discover is the other era */
	r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":"
		     "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
		     "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
	assert_unsupported(r, "2025-11-25");
	json_object_put(r);
	r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\"}");
	assert_unsupported(r, NULL);
	json_object_put(r);
	static const char *const gone[] = { "ping", "logging/setLevel", "resources/list", NULL };
	for (const char *const *g = gone; *g; g++) {
		cleanup_free char *line =
			xasprintf("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"%s\",\"params\":{"
				  "\"level\":\"debug\"," META "}}",
				  *g);
		r = call(&c, line);
		CU_ASSERT_EQUAL(pint(r, "error.code"), JSONRPC_METHOD_NOT_FOUND);
		json_object_put(r);
	}
	/* discover again: still the same */
	r = call(&c, MODERN("5", "server/discover", META));
	assert_modern_result(r);
	json_object_put(r);
	client_stop(&c);
}

/* Every modern request needs its envelope: -32602 when it is missing or malformed, -32022
 * for an unsupported version; a refused opening request fixes no era. */
static void test_modern_envelope_errors(void)
{
	client c;
	client_start(&c, NULL, 0, 0);
	struct {
		const char *line;
		int code;
		const char *key; /* data.envelope.key for -32602 */
	} cases[] = {
		{ MODERN("1", "tools/list",
			 "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2030-01-01\","
			 "\"io.modelcontextprotocol/clientCapabilities\":{}}"),
		  -32022, NULL },
		{ MODERN("2", "server/discover",
			 "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2025-11-25\","
			 "\"io.modelcontextprotocol/clientCapabilities\":{}}"),
		  -32022, NULL },
		{ MODERN("3", "tools/list",
			 "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}"),
		  JSONRPC_INVALID_PARAMS, "io.modelcontextprotocol/clientCapabilities" },
		{ MODERN("4", "tools/list",
			 "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":28,"
			 "\"io.modelcontextprotocol/clientCapabilities\":{}}"),
		  JSONRPC_INVALID_PARAMS, "io.modelcontextprotocol/protocolVersion" },
		{ MODERN("5", "tools/list",
			 "\"_meta\":{" ENVELOPE ",\"io.modelcontextprotocol/logLevel\":\"loud\"}"),
		  JSONRPC_INVALID_PARAMS, "io.modelcontextprotocol/logLevel" },
		{ MODERN("6", "tools/list",
			 "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
			 "\"io.modelcontextprotocol/clientCapabilities\":[],"
			 "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"x\"}}"),
		  JSONRPC_INVALID_PARAMS, "io.modelcontextprotocol/clientCapabilities" },
		{ MODERN("7", "tools/list",
			 "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
			 "\"io.modelcontextprotocol/clientCapabilities\":{},"
			 "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"x\"}}"),
		  JSONRPC_INVALID_PARAMS, "io.modelcontextprotocol/clientInfo" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_object *r = call(&c, cases[i].line);
		if (pint(r, "error.code") != cases[i].code)
			fprintf(stderr, "\n%s -> %s\n", cases[i].line, c.last);
		CU_ASSERT_EQUAL(pint(r, "error.code"), cases[i].code);
		if (cases[i].key) {
			CU_ASSERT_STRING_EQUAL(pstr(r, "error.data.envelope.key"), cases[i].key);
		} else {
			assert_unsupported(r, i == 0 ? "2030-01-01" : "2025-11-25");
		}
		json_object_put(r);
	}
	/* none of them fixed the era: the handshake still works, and the process is legacy */
	init_session(&c);
	json_object *r = call(&c, MODERN("8", "server/discover", META));
	CU_ASSERT_EQUAL(pint(r, "error.code"), JSONRPC_METHOD_NOT_FOUND);
	json_object_put(r);
	/* a legacy session serves tools/list as before, _meta or not */
	r = call(&c, MODERN("9", "tools/list", META));
	CU_ASSERT_EQUAL(json_object_array_length(path(r, "result.tools")), 2);
	CU_ASSERT_PTR_NULL(path(r, "result.resultType"));
	CU_ASSERT_PTR_NULL(path(r, "result.ttlMs"));
	CU_ASSERT_PTR_NULL(path(r, "result._meta"));
	CU_ASSERT_PTR_NULL(strstr(c.last, "$schema"));
	json_object_put(r);
	client_stop(&c);

	/* in a modern process a request without its envelope is refused */
	client_start(&c, NULL, 0, 0);
	r = call(&c, MODERN("1", "tools/list", META));
	assert_modern_result(r);
	json_object_put(r);
	r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
	CU_ASSERT_EQUAL(pint(r, "error.code"), JSONRPC_INVALID_PARAMS);
	CU_ASSERT_STRING_EQUAL(pstr(r, "error.data.envelope.key"),
			       "io.modelcontextprotocol/protocolVersion");
	CU_ASSERT_STRING_EQUAL(pstr(r, "error.data.envelope.problem"), "missing");
	json_object_put(r);
	r = call(&c, MODERN("3", "tools/call",
			    "\"name\":\"run_code\",\"arguments\":{\"language\":\"python\","
			    "\"code\":\"print x\"},\"_meta\":{\"progressToken\":1}"));
	CU_ASSERT_EQUAL(pint(r, "error.code"), JSONRPC_INVALID_PARAMS);
	json_object_put(r);
	r = call(&c, MODERN("4", "tools/list",
			    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2025-06-18\","
			    "\"io.modelcontextprotocol/clientCapabilities\":{}}"));
	assert_unsupported(r, "2025-06-18");
	json_object_put(r);
	CU_ASSERT_EQUAL(fake_get(&F.runs), 0);
	client_stop(&c);
}

/* tools/list and tools/call in the modern shape; progress only with a progressToken, never a
 * log message (even when the request asks for a log level); cancellation as in 2025. */
static void test_modern_tools(void)
{
	static const char *const ov[] = { "max_concurrent_runs", "1", NULL };
	client c;
	client_start(&c, ov, 0, 0);
	json_object *r = call(&c, MODERN("1", "tools/list", META));
	assert_modern_result(r);
	CU_ASSERT_EQUAL(pint(r, "result.ttlMs"), MCP_CACHE_TTL_MS);
	CU_ASSERT_STRING_EQUAL(pstr(r, "result.cacheScope"), "private");
	json_object *tools = path(r, "result.tools");
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(tools), 2);
	CU_ASSERT_STRING_EQUAL(pstr(tools, "0.name"), "run_code");
	CU_ASSERT_STRING_EQUAL(pstr(tools, "1.name"), "sandbox_status");
	for (int i = 0; i < 2; i++) {
		json_object *t = json_object_array_get_idx(tools, (size_t)i);
		CU_ASSERT_STRING_EQUAL(pstr(t, "inputSchema.$schema"),
				       "https://json-schema.org/draft/2020-12/schema");
		CU_ASSERT_STRING_EQUAL(pstr(t, "outputSchema.$schema"),
				       "https://json-schema.org/draft/2020-12/schema");
	}
	/* deterministic: the same bytes every time */
	cleanup_free char *first = xstrdup(c.last);
	json_object_put(r);
	r = call(&c, MODERN("2", "tools/list", META));
	CU_ASSERT_STRING_EQUAL(strstr(c.last, "\"result\""), strstr(first, "\"result\""));
	json_object_put(r);

	/* a run: no progressToken, no notification before the response; a log level asked
	 * for, and still no notifications/message */
	client_send(&c, MODERN("3", "tools/call",
			       "\"name\":\"run_code\",\"arguments\":{\"language\":\"python\","
			       "\"code\":\"print hi\"},\"_meta\":{" ENVELOPE
			       ",\"io.modelcontextprotocol/logLevel\":\"debug\"}"));
	r = client_recv(&c, 5000);
	CU_ASSERT_PTR_NULL(path(r, "method"));
	CU_ASSERT_EQUAL(pint(r, "id"), 3);
	assert_modern_result(r);
	CU_ASSERT_FALSE(pbool(r, "result.isError"));
	CU_ASSERT_STRING_EQUAL(pstr(r, "result.structuredContent.stdout"), "hi\n");
	CU_ASSERT_PTR_NOT_NULL(strstr(pstr(r, "result.content.0.text"), "exited with code 0"));
	json_object_put(r);
	/* with a progressToken: 1, 2, 3, then the response */
	client_send(
		&c,
		MODERN("4", "tools/call",
		       "\"name\":\"sandbox_status\",\"_meta\":{\"progressToken\":\"t\"," ENVELOPE
		       "}"));
	int step = 0;
	while ((r = client_recv(&c, 5000)) && path(r, "method")) {
		CU_ASSERT_STRING_EQUAL(pstr(r, "method"), "notifications/progress");
		CU_ASSERT_EQUAL(pint(r, "params.progress"), ++step);
		json_object_put(r);
	}
	CU_ASSERT_EQUAL(step, 3);
	assert_modern_result(r);
	CU_ASSERT_STRING_EQUAL(pstr(r, "result.structuredContent.selected"), "docker-cli");
	json_object_put(r);
	/* bad arguments and an unknown tool */
	r = call(&c, MRUN("5", "{\"language\":\"cobol\",\"code\":\"x\"}"));
	assert_modern_result(r);
	CU_ASSERT_TRUE(pbool(r, "result.isError"));
	json_object_put(r);
	r = call(&c, MODERN("6", "tools/call", "\"name\":\"rm\"," META));
	CU_ASSERT_EQUAL(pint(r, "error.code"), JSONRPC_INVALID_PARAMS);
	json_object_put(r);
	/* cancellation: the running call stops, the queued one never runs, no responses */
	client_send(&c, MRUN("7", "{\"language\":\"python\",\"code\":\"block\"}"));
	CU_ASSERT_TRUE(fake_wait(&F.running, 1));
	client_send(&c, MRUN("8", "{\"language\":\"python\",\"code\":\"print 8\"}"));
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
			"{\"requestId\":8," META "}}");
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
			"{\"requestId\":7}}");
	CU_ASSERT_TRUE(fake_wait(&F.cancels, 1));
	r = call(&c, MODERN("9", "server/discover", META));
	CU_ASSERT_EQUAL(pint(r, "id"), 9);
	json_object_put(r);
	CU_ASSERT_EQUAL(fake_get(&F.runs), 2);
	CU_ASSERT_PTR_NULL(client_recv(&c, 200));
	client_stop(&c);
}

/* _meta.traceparent reaches brig_run (which records it in the audit line, below) */
static void test_trace_context(void)
{
	client c;
	client_start(&c, NULL, 0, 0);
	init_session(&c);
	static const char tp[] = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
	json_object *r =
		call(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
			 "{\"name\":\"run_code\",\"arguments\":{\"language\":\"shell\","
			 "\"code\":\"print x\"},\"_meta\":{\"traceparent\":"
			 "\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\","
			 "\"tracestate\":\"k=v\",\"baggage\":\"user=me\"}}}");
	CU_ASSERT_FALSE(pbool(r, "result.isError"));
	json_object_put(r);
	pthread_mutex_lock(&F.lock);
	CU_ASSERT_STRING_EQUAL(F.traceparent, tp);
	pthread_mutex_unlock(&F.lock);
	/* not a string, or absent: none */
	r = call(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
		     "{\"name\":\"run_code\",\"arguments\":{\"language\":\"shell\","
		     "\"code\":\"print x\"},\"_meta\":{\"traceparent\":7}}}");
	json_object_put(r);
	pthread_mutex_lock(&F.lock);
	CU_ASSERT_STRING_EQUAL(F.traceparent, "");
	pthread_mutex_unlock(&F.lock);
	client_stop(&c);
}

/* The audit line records a well-formed traceparent's trace id and parent span id, and nothing
 * of a malformed one. */
static void test_audit_trace_ids(void)
{
	char dir[] = "/tmp/brig-test-audit-XXXXXX";
	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	cleanup_free char *file = xasprintf("%s/audit.jsonl", dir);
	audit_log *a = NULL;
	brig_error *err = NULL;
	CU_ASSERT_FATAL(audit_open(file, &a, &err) == 0);
	static const char *const cases[][3] = {
		/* traceparent, trace_id, parent_span_id (NULL: none recorded) */
		{ "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		  "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331" },
		{ "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00",
		  "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331" },
		{ NULL, NULL, NULL },
		{ "", NULL, NULL },
		{ "00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01", NULL, NULL },
		{ "00-00000000000000000000000000000000-b7ad6b7169203331-01", NULL, NULL },
		{ "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", NULL, NULL },
		{ "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", NULL, NULL },
		{ "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-", NULL, NULL },
		{ "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-1", NULL, NULL },
		{ "00_0af7651916cd43dd8448eb211c80319c_b7ad6b7169203331_01", NULL, NULL },
		{ "00-0af7651916cd43dd8448eb211c8031\"}-b7ad6b7169203331-01", NULL, NULL },
		{ "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333\n-01", NULL, NULL },
		{ "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0g", NULL, NULL },
	};
	size_t n = sizeof cases / sizeof cases[0];
	for (size_t i = 0; i < n; i++) {
		audit_entry e = { .front_door = "mcp",
				  .language = BRIG_LANG_SHELL,
				  .code_sha256 = "0",
				  .refusal = "test",
				  .traceparent = cases[i][0] };
		CU_ASSERT(audit_append(a, &e, &err) == 0);
	}
	audit_close(a);
	FILE *f = fopen(file, "re");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	char line[4096];
	for (size_t i = 0; i < n && fgets(line, sizeof line, f); i++) {
		json_object *o = json_tokener_parse(line);
		CU_ASSERT_PTR_NOT_NULL_FATAL(o);
		CU_ASSERT_TRUE(json_object_object_get_ex(o, "trace_id", NULL));
		CU_ASSERT_TRUE(json_object_object_get_ex(o, "parent_span_id", NULL));
		json_object *t = path(o, "trace_id"), *p = path(o, "parent_span_id");
		if (cases[i][1]) {
			CU_ASSERT_STRING_EQUAL(pstr(o, "trace_id"), cases[i][1]);
			CU_ASSERT_STRING_EQUAL(pstr(o, "parent_span_id"), cases[i][2]);
		} else {
			if (t || p)
				fprintf(stderr, "\nrecorded from %s\n", cases[i][0]);
			CU_ASSERT_PTR_NULL(t);
			CU_ASSERT_PTR_NULL(p);
		}
		json_object_put(o);
	}
	fclose(f);
	unlink(file);
	rmdir(dir);
}

/* The outputSchema and brig_result_to_json() must describe the same object: every field of a
 * real result is declared with a matching type, and every declared field is there. */
static void test_schema_matches_result(void)
{
	json_object *schema = mcp_run_code_output_schema();
	brig_result res = { .struct_size = sizeof res };
	res.language = BRIG_LANG_NODE;
	res.image = xstrdup("brig/node:bookworm");
	res.backend = xstrdup("docker-cli");
	res.runtime = xstrdup("runc");
	res.exit_code = 137;
	res.verdict = BRIG_VERDICT_OOM;
	res.stdout_data = xstrdup("out");
	res.stdout_len = 3;
	res.stderr_data = xstrdup("");
	res.oom_killed = true;
	res.duration_ms = 1234;
	res.notice = xstrdup("timeout clamped");
	res.container = xstrdup("brig-0011223344556677");
	sha256_hex("x", 1, res.code_sha256);
	for (int variant = 0; variant < 2; variant++) {
		cleanup_free char *js = brig_result_to_json(&res, variant == 1);
		json_object *o = json_tokener_parse(js);
		CU_ASSERT_PTR_NOT_NULL_FATAL(o);
		const char *bad = validate(schema, o, "result");
		if (bad)
			fprintf(stderr, "\n%s\n", bad);
		CU_ASSERT_PTR_NULL(bad);
		json_object *props = path(schema, "properties");
		json_object_object_foreach(o, key, val)
		{
			(void)val;
			if (!json_object_object_get_ex(props, key, NULL))
				fprintf(stderr, "\nresult field %s is not in the outputSchema\n",
					key);
			CU_ASSERT_TRUE(json_object_object_get_ex(props, key, NULL));
		}
		CU_ASSERT_EQUAL(json_object_object_length(o), json_object_object_length(props));
		CU_ASSERT_EQUAL(json_object_array_length(path(schema, "required")),
				json_object_object_length(props));
		json_object_put(o);
		/* second round: the nullable fields null */
		free(res.notice);
		res.notice = NULL;
		free(res.image);
		res.image = NULL;
		free(res.error);
		res.error = xstrdup("daemon gone");
		res.verdict = BRIG_VERDICT_SANDBOX_ERROR;
	}
	brig_result_clear(&res);
	/* every verdict name is in the enum */
	json_object *en = path(schema, "properties.verdict.enum");
	for (int v = BRIG_VERDICT_SUCCESS; v <= BRIG_VERDICT_CANCELLED; v++) {
		bool found = false;
		for (size_t i = 0; i < json_object_array_length(en); i++)
			found = found ||
				strcmp(json_object_get_string(json_object_array_get_idx(en, i)),
				       brig_verdict_name((brig_verdict)v)) == 0;
		CU_ASSERT_TRUE(found);
	}
	json_object_put(schema);
}

static CU_TestInfo tests[] = {
	{ "lifecycle: ping, initialize, versions, -32002", test_lifecycle },
	{ "tools/list: schemas and annotations from the policy", test_tools_list },
	{ "workspace tools: offered only when on, arguments checked", test_workspace_tools_list },
	{ "protocol errors and ids, the server survives", test_protocol_errors },
	{ "bad arguments are isError results", test_bad_arguments },
	{ "run results and sandbox_status", test_run_results },
	{ "progress notifications", test_progress },
	{ "cancellation of queued and running calls", test_cancel },
	{ "bounded queue, busy, ping while running", test_queue_and_busy },
	{ "shutdown on EOF cancels runs", test_shutdown_eof },
	{ "shutdown on signal", test_shutdown_signal },
	{ "oversized and partial lines", test_oversized_and_partial },
	{ "outputSchema matches brig_result_to_json", test_schema_matches_result },
	{ "_meta.traceparent reaches brig_run", test_trace_context },
	{ "2026-07-28: server/discover, one era per process", test_modern_discover },
	{ "2026-07-28: envelope errors, refused probes fix no era", test_modern_envelope_errors },
	{ "2026-07-28: tools, progress, no log messages, cancel", test_modern_tools },
	{ "audit: trace ids of a well-formed traceparent only", test_audit_trace_ids },
	CU_TEST_INFO_NULL,
};

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	pthread_mutex_init(&F.lock, NULL);
	pthread_cond_init(&F.cond, NULL);
	int r = brig_cunit_run("mcp", tests);
	pthread_cond_destroy(&F.cond);
	pthread_mutex_destroy(&F.lock);
	return r;
}
