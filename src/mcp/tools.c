/* tools.c - definitions, argument checks and results of the MCP tools run_code and
 * sandbox_status.
 *
 * What the model controls is exactly run_code's three arguments: language, code and a
 * timeout.  Every other property of a run (image, mounts, environment, flags, network,
 * backend, limits) comes from the operator's policy; unknown arguments are refused, not
 * ignored, so a model that tries to pass one learns at once that it cannot.
 */
#include "config.h"

#include <limits.h>
#include <math.h> /* isfinite, NAN: macros, no libm */
#include <stdint.h>
#include <string.h>

#include "mcp/jsonrpc.h"
#include "mcp/server.h"
#include "lang.h"
#include "mcp/tools.h"

static const char *const tool_names[] = { "run_code",        "sandbox_status", "create_workspace",
					  "write_file",      "read_file",      "list_files",
					  "delete_workspace" };

int mcp_tool_lookup(const char *name)
{
	for (size_t i = 0; i < sizeof tool_names / sizeof tool_names[0]; i++)
		if (name && strcmp(name, tool_names[i]) == 0)
			return MCP_TOOL_IS_WORKSPACE(i) && !mcp_ws_max_transfer() ? -1 : (int)i;
	return -1;
}

/* ---- definitions ----------------------------------------------------------------------- */

/* Schemas are written with ' for " to keep them readable here (no text in them uses an
 * apostrophe).  A malformed literal is a bug the unit tests catch at once. */
static json_object *parse_static(const char *text)
{
	cleanup_free char *json = xstrdup(text);
	for (char *p = json; *p; p++)
		if (*p == '\'')
			*p = '"';
	json_object *o = json_tokener_parse(json);
	if (!o)
		abort();
	return o;
}

#define NULLABLE_STRING "{'type':['string','null']}"

/* The languages of brig's one language table (src/lang.c), for the schemas: the `enum` of
 * properties.language, and its description. */
static void set_languages(json_object *schema)
{
	json_object *props = NULL, *lang = NULL;
	if (!json_object_object_get_ex(schema, "properties", &props) ||
	    !json_object_object_get_ex(props, "language", &lang))
		abort(); /* a schema without it is a bug the unit tests catch at once */
	json_object *e = json_object_new_array();
	strbuf d;
	sb_init(&d);
	for (int l = 0; l < BRIG_LANG_COUNT; l++) {
		const lang_info *li = lang_get((brig_language)l);
		json_object_array_add(e, json_object_new_string(li->name));
		sb_printf(&d, "%s%s (%s)",
			  l == 0                     ? ""
			  : l + 1 == BRIG_LANG_COUNT ? " or "
						     : ", ",
			  li->name, li->description);
	}
	json_object_object_add(lang, "enum", e);
	json_object_object_add(lang, "description", json_object_new_string(d.data));
	sb_free(&d);
}

/* "use "python", "node" or "shell"", for messages to the model. */
static char *lang_hint(void)
{
	strbuf sb;
	sb_init(&sb);
	sb_puts(&sb, "use ");
	for (int l = 0; l < BRIG_LANG_COUNT; l++)
		sb_printf(&sb, "%s\"%s\"",
			  l == 0                     ? ""
			  : l + 1 == BRIG_LANG_COUNT ? " or "
						     : ", ",
			  lang_get((brig_language)l)->name);
	return sb_steal(&sb);
}

/* The result object of brig_result_to_json (src/result.c); tests/unit/test_mcp.c checks a
 * real result against it field by field, both ways.  No additionalProperties:false, so that a
 * field appended to the result later does not break clients that validate. */
json_object *mcp_run_code_output_schema(void)
{
	json_object *o = parse_static(
		"{'type':'object',"
		" 'properties':{"
		"  'language':{'type':'string'},"
		"  'image':{'type':['string','null'],'description':'Image the code ran in'},"
		"  'backend':{'type':['string','null'],"
		"   'description':'brig backend: docker-cli, docker-api or gvisor'},"
		"  'runtime':{'type':['string','null'],'description':'OCI runtime: runc, runsc'},"
		"  'exit_code':{'type':'integer','description':"
		"   'Exit status of the program; 137 when killed; -1 when it never ran'},"
		"  'verdict':{'type':'string',"
		"   'enum':['success','error','timeout','oom','output_limit','sandbox_error',"
		"           'cancelled'],"
		"   'description':'success: exit 0; error: non-zero exit; timeout, oom, "
		"output_limit: stopped at that limit; sandbox_error: the sandbox failed, "
		"not the program'},"
		"  'stdout':{'type':'string'},"
		"  'stderr':{'type':'string'},"
		"  'timed_out':{'type':'boolean'},"
		"  'output_truncated':{'type':'boolean'},"
		"  'oom_killed':{'type':'boolean'},"
		"  'duration_ms':{'type':'integer','minimum':0},"
		"  'error':{'type':['string','null'],"
		"   'description':'What failed, for sandbox_error'},"
		"  'notice':" NULLABLE_STRING ","
		"  'container':{'type':['string','null'],'description':'The (removed) container'},"
		"  'code_sha256':{'type':'string','pattern':'^[0-9a-f]{64}$'},"
		"  'pooled':{'type':'boolean','description':"
		"   'The container was started ahead by the warm pool (it still ran only this "
		"code, once)'},"
		"  'user':{'type':['string','null'],'description':"
		"   'The UID:GID the code ran as (a uid of its own per box under policy user "
		"auto)'},"
		"  'workspace':{'type':['string','null'],'description':"
		"   'The workspace the code ran in'},"
		"  'workspace_changes':{'type':['object','null'],'description':"
		"   'The files the run created or changed in the workspace (path, size; at most "
		"100 listed, count says how many) and the use of its quotas: files [{path, "
		"size}], count, used_bytes, size_bytes, used_files, max_files'},"
		"  'egress':{'type':['array','null'],'items':{'type':'object'},'description':"
		"   'With an egress allowlist: each request the proxy saw from this run (method, "
		"host, port, status, address, bytes_out, bytes_in, allowed, reason: why it was "
		"refused)'}"
		" },"
		" 'required':['language','image','backend','runtime','exit_code','verdict',"
		"             'stdout','stderr','timed_out','output_truncated','oom_killed',"
		"             'duration_ms','error','notice','container','code_sha256','pooled',"
		"             'user','workspace','workspace_changes','egress']}");
	set_languages(o);
	return o;
}

static json_object *status_output_schema(void)
{
	return parse_static(
		"{'type':'object',"
		" 'properties':{"
		"  'version':{'type':'string'},"
		"  'backends':{'type':'array','items':{'type':'object',"
		"   'properties':{'name':{'type':'string'},'isolation':{'type':'string'},"
		"                 'available':{'type':'boolean'},'reason':" NULLABLE_STRING "},"
		"   'required':['name','available']}},"
		"  'selected':{'type':['string','null'],"
		"   'description':'The backend runs use; null: none is usable'},"
		"  'isolation':" NULLABLE_STRING ","
		"  'runtime':" NULLABLE_STRING ","
		"  'selection_error':" NULLABLE_STRING ","
		"  'isolation_minimum':{'type':'string'},"
		"  'images':{'type':'array','items':{'type':'object',"
		"   'properties':{'language':{'type':'string'},'image':{'type':'string'},"
		"                 'present':{'type':['boolean','null']},"
		"                 'id':" NULLABLE_STRING ",'runtime':" NULLABLE_STRING ","
		"                 'libraries':" NULLABLE_STRING ",'pinned':{'type':'boolean'},"
		"                 'problem':" NULLABLE_STRING "},"
		"   'required':['language','image']}},"
		"  'limits':{'type':'object','properties':{"
		"   'timeout_seconds':{'type':'integer'},'max_timeout_seconds':{'type':'integer'},"
		"   'memory_mb':{'type':'integer'},'cpus':{'type':'number'},"
		"   'pids_limit':{'type':'integer'},'max_input_bytes':{'type':'integer'},"
		"   'max_output_bytes':{'type':'integer'},'network':{'type':'boolean'},"
		"   'max_concurrent_runs':{'type':'integer'}}},"
		"  'load':{'type':'object',"
		"          'properties':{'running':{'type':'integer'},'queued':{'type':'integer'}},"
		"          'required':['running','queued']},"
		"  'pool':{'type':'object','description':"
		"   'The warm pool: containers started ahead, each used for one run only',"
		"   'properties':{'warm_pool':{'type':'integer'},"
		"    'memory_budget_mb':{'type':'integer'},"
		"    'state':{'type':'string','enum':['off','starting','on','waiting','disabled']},"
		"    'languages':{'type':'object'}}}"
		" },"
		" 'required':['backends','selected','selection_error','images','limits','load']}");
}

static json_object *annotations(const char *title, bool read_only, bool idempotent, bool open_world)
{
	json_object *a = json_object_new_object();
	json_object_object_add(a, "title", json_object_new_string(title));
	json_object_object_add(a, "readOnlyHint", json_object_new_boolean(read_only));
	/* Neither tool changes anything outside its own throwaway container. */
	json_object_object_add(a, "destructiveHint", json_object_new_boolean(false));
	json_object_object_add(a, "idempotentHint", json_object_new_boolean(idempotent));
	json_object_object_add(a, "openWorldHint", json_object_new_boolean(open_world));
	return a;
}

static json_object *run_code_tool(const brig_policy_limits *lim)
{
	json_object *t = json_object_new_object();
	json_object_object_add(t, "name", json_object_new_string("run_code"));
	json_object_object_add(t, "title", json_object_new_string("Run code in a sandbox"));
	cleanup_free char *desc = xasprintf(
		"Run a Python 3, Node.js or POSIX shell program in a fresh, hardened, "
		"throwaway container and get back its exit code, stdout and stderr. Every call "
		"starts from a clean sandbox: nothing persists between calls, the root "
		"filesystem is read-only (only /tmp is writable, and it is noexec), the program "
		"runs as an unprivileged user, and %s. Limits set by the operator: wall time %d s "
		"by default and at most %d s (timeout_seconds may choose any value from 1 to %d; "
		"a larger value is refused, never silently shortened), %d MiB of memory, %g CPU, "
		"%ld bytes of code, %ld bytes of stdout and stderr together (a program that "
		"prints more is stopped and its output truncated). Print everything you need to "
		"see. isError is true when the program exits non-zero, times out, runs out of "
		"memory, exceeds the output limit or the sandbox itself fails; "
		"structuredContent.verdict says which.",
		lim->network ? "it has network access" : "there is no network access",
		lim->timeout_seconds, lim->max_timeout_seconds, lim->max_timeout_seconds,
		lim->memory_mb, lim->cpus, lim->max_input_bytes, lim->max_output_bytes);
	json_object_object_add(t, "description", json_object_new_string(desc));

	/* maxLength counts characters, the policy counts bytes: the schema states the bound for
	 * ASCII and brig_run enforces the byte limit. */
	cleanup_free char *in = xasprintf(
		"{'type':'object',"
		" 'properties':{"
		"  'language':{'type':'string'},"
		"  'code':{'type':'string','maxLength':%ld,"
		"   'description':'The complete program source, at most %ld bytes of UTF-8'},"
		"  'timeout_seconds':{'type':'integer','minimum':1,'maximum':%d,'default':%d,"
		"   'description':'Wall-time limit in seconds (default %d, at most %d)'}"
		" },"
		" 'required':['language','code'],"
		" 'additionalProperties':false}",
		lim->max_input_bytes, lim->max_input_bytes, lim->max_timeout_seconds,
		lim->timeout_seconds, lim->timeout_seconds, lim->max_timeout_seconds);
	json_object *in_schema = parse_static(in);
	set_languages(in_schema);
	if (mcp_ws_max_transfer()) {
		json_object *props = NULL;
		json_object_object_get_ex(in_schema, "properties", &props);
		json_object_object_add(
			props, "workspace_id",
			parse_static("{'type':'string','pattern':'^[0-9a-f]{32}$',"
				     "'description':'Run in this workspace (create_workspace): its "
				     "files are at /workspace, where the program starts'}"));
	}
	json_object_object_add(t, "inputSchema", in_schema);
	json_object_object_add(t, "outputSchema", mcp_run_code_output_schema());
	/* Not read-only (it runs a program), not destructive (nothing outside the throwaway
	 * container changes), not idempotent (programs may be random or time-dependent), open
	 * world only when the policy gives the box a network. */
	json_object_object_add(t, "annotations",
			       annotations("Run code in a sandbox", false, false, lim->network));
	return t;
}

static json_object *status_tool(void)
{
	json_object *t = json_object_new_object();
	json_object_object_add(t, "name", json_object_new_string("sandbox_status"));
	json_object_object_add(t, "title", json_object_new_string("Sandbox status"));
	static const char desc[] =
		"Report whether the sandbox can run code: the container backends and whether "
		"each is usable (and why not), the backend and isolation level runs use, which "
		"language images are missing, the limits in force and how busy the server is. "
		"Takes no arguments; runs nothing.";
	json_object_object_add(t, "description", json_object_new_string(desc));
	json_object_object_add(t, "inputSchema",
			       parse_static("{'type':'object','properties':{},"
					    "'additionalProperties':false}"));
	json_object_object_add(t, "outputSchema", status_output_schema());
	json_object_object_add(t, "annotations", annotations("Sandbox status", true, true, false));
	return t;
}

json_object *mcp_tools_json(const brig_policy_limits *lim)
{
	json_object *arr = json_object_new_array();
	json_object_array_add(arr, run_code_tool(lim));
	json_object_array_add(arr, status_tool());
	mcp_ws_tools_add(arr);
	return arr;
}

char *mcp_instructions(const brig_policy_limits *lim)
{
	return xasprintf(
		"brig runs untrusted code in throwaway, locked-down containers. Use run_code to "
		"execute a Python, Node.js or shell program and see its exit code, stdout and "
		"stderr; every call is a fresh sandbox (%s, read-only filesystem except /tmp, at "
		"most %d s, %d MiB), so state does not carry over between calls and the program "
		"must print what you need. Use sandbox_status when runs fail with sandbox_error, "
		"to see what is missing on the host.",
		lim->network ? "with network access" : "no network", lim->max_timeout_seconds,
		lim->memory_mb);
}

/* ---- arguments ------------------------------------------------------------------------- */

char *mcp_run_code_args(json_object *args, brig_request *req, char **code, char **workspace)
{
	memset(req, 0, sizeof *req);
	*code = NULL;
	*workspace = NULL;
	json_object_object_foreach(args, key, val)
	{
		(void)val;
		if (strcmp(key, "workspace_id") == 0 && mcp_ws_max_transfer()) {
			if (!json_object_is_type(val, json_type_string))
				return xstrdup("Argument \"workspace_id\" must be a string: the id "
					       "create_workspace returned.");
			continue;
		}
		if (strcmp(key, "language") != 0 && strcmp(key, "code") != 0 &&
		    strcmp(key, "timeout_seconds") != 0)
			return xasprintf(
				"Unknown argument \"%.64s\": run_code takes only language, code "
				"and timeout_seconds. The image, network, mounts, environment "
				"and limits are set by the operator and cannot be chosen.",
				key);
	}
	json_object *v = NULL;
	cleanup_free char *hint = lang_hint();
	if (!json_object_object_get_ex(args, "language", &v) || !v)
		return xasprintf("Missing argument \"language\": %s.", hint);
	if (!json_object_is_type(v, json_type_string))
		return xasprintf("Argument \"language\" must be a string: %s.", hint);
	int lang = brig_language_parse(json_object_get_string(v));
	if (lang < 0)
		return xasprintf("Unsupported language \"%.64s\": %s.", json_object_get_string(v),
				 hint);

	if (!json_object_object_get_ex(args, "code", &v) || !v)
		return xstrdup("Missing argument \"code\": the program source, as a string.");
	if (!json_object_is_type(v, json_type_string))
		return xstrdup("Argument \"code\" must be a string: the program source.");
	json_object *code_v = v;
	size_t code_len = (size_t)json_object_get_string_len(code_v);

	long timeout = 0; /* 0: the policy's default */
	if (json_object_object_get_ex(args, "timeout_seconds", &v) && v) {
		double d = json_object_is_type(v, json_type_int) ? (double)json_object_get_int64(v)
			   : json_object_is_type(v, json_type_double) ? json_object_get_double(v)
								      : NAN;
		if (!isfinite(d) || d < 1 || (d < 1e15 && (double)(int64_t)d != d))
			return xstrdup(
				"Argument \"timeout_seconds\" must be a whole number of seconds, "
				"at least 1 (or left out for the default).");
		/* the upper bound is the policy's, checked (and audited) by brig_run */
		timeout = d > INT_MAX ? INT_MAX : (long)d;
	}
	if (json_object_object_get_ex(args, "workspace_id", &v) && v)
		*workspace = xstrdup(json_object_get_string(v));
	*code = xstrndup(json_object_get_string(code_v), code_len);
	req->language = (brig_language)lang;
	req->code = *code;
	req->code_len = code_len;
	req->timeout_seconds = (int)timeout;
	return NULL;
}

char *mcp_status_args(json_object *args)
{
	if (args && json_object_object_length(args) > 0)
		return xstrdup("sandbox_status takes no arguments.");
	return NULL;
}

/* ---- results --------------------------------------------------------------------------- */

json_object *mcp_tool_result(const char *text, json_object *structured, bool is_error)
{
	json_object *r = json_object_new_object();
	json_object *content = json_object_new_array();
	json_object *block = json_object_new_object();
	json_object_object_add(block, "type", json_object_new_string("text"));
	json_object_object_add(block, "text", json_object_new_string(text));
	json_object_array_add(content, block);
	json_object_object_add(r, "content", content);
	if (structured)
		json_object_object_add(r, "structuredContent", structured);
	json_object_object_add(r, "isError", json_object_new_boolean(is_error));
	return r;
}

static void append_stream(strbuf *sb, const char *name, const char *data, size_t len)
{
	if (len == 0) {
		sb_printf(sb, "\n--- %s (empty) ---\n", name);
		return;
	}
	sb_printf(sb, "\n--- %s ---\n", name);
	/* The text is what the model reads: a NUL must not end it (the rest of the output would
	 * vanish from the text while structuredContent still has it) and an escape sequence must
	 * not reach a terminal that shows it, so control characters are made visible. */
	size_t n = 0;
	cleanup_free char *clean = utf8_visible(data, len, &n);
	sb_append(sb, clean, n);
	if (clean[n - 1] != '\n')
		sb_puts(sb, "\n");
}

/* In a workspace: which files the run created or changed (read them with read_file). */
static void workspace_text(strbuf *sb, const brig_result *r)
{
	if (!r->workspace)
		return;
	json_object *o = r->workspace_changes ? json_tokener_parse(r->workspace_changes) : NULL;
	json_object *files = NULL, *count = NULL;
	if (!json_object_object_get_ex(o, "files", &files) ||
	    !json_object_object_get_ex(o, "count", &count)) {
		sb_printf(sb, "\nWorkspace %s (list_files shows its files).", r->workspace);
		json_object_put(o);
		return;
	}
	size_t n = json_object_array_length(files);
	sb_printf(sb, "\nWorkspace %s: %s", r->workspace,
		  n ? "files created or changed by this run: " : "no file created or changed.");
	for (size_t i = 0; i < n; i++) {
		json_object *f = json_object_array_get_idx(files, i), *p = NULL, *s = NULL;
		json_object_object_get_ex(f, "path", &p);
		json_object_object_get_ex(f, "size", &s);
		cleanup_free char *path = utf8_visible(json_object_get_string(p),
						       (size_t)json_object_get_string_len(p), NULL);
		sb_printf(sb, "%s%s (%lld bytes)", i ? ", " : "", path,
			  (long long)json_object_get_int64(s));
	}
	if ((int64_t)n < json_object_get_int64(count))
		sb_printf(sb, " and %lld more",
			  (long long)(json_object_get_int64(count) - (int64_t)n));
	json_object_put(o);
}

/* With egress: what the proxy refused (a policy block, not a network failure), at most 10. */
static void egress_text(strbuf *sb, const brig_result *r)
{
	json_object *a = r->egress ? json_tokener_parse(r->egress) : NULL;
	size_t n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
	size_t shown = 0, refused = 0;
	for (size_t i = 0; i < n; i++) {
		json_object *d = json_object_array_get_idx(a, i), *h, *p, *why;
		if (!json_object_object_get_ex(d, "reason", &why) || !why)
			continue;
		refused++;
		if (shown == 10 || !json_object_object_get_ex(d, "host", &h) ||
		    !json_object_object_get_ex(d, "port", &p))
			continue;
		cleanup_free char *host = utf8_visible(json_object_get_string(h),
						       (size_t)json_object_get_string_len(h), NULL);
		sb_printf(sb, "%s%s:%d (%s)",
			  shown++ ? ", "
				  : "\nRefused by the egress policy (not a network failure): ",
			  host, json_object_get_int(p), json_object_get_string(why));
	}
	if (refused > shown)
		sb_printf(sb, " and %zu more", refused - shown);
	json_object_put(a);
}

/* One sentence the model can act on, then the facts, then the output. */
static char *run_text(const brig_result *r, const brig_policy_limits *lim, int timeout)
{
	strbuf sb;
	sb_init(&sb);
	switch (r->verdict) {
	case BRIG_VERDICT_SUCCESS:
		sb_puts(&sb, "The program exited with code 0.");
		break;
	case BRIG_VERDICT_ERROR:
		sb_printf(&sb, "The program exited with code %d.", r->exit_code);
		break;
	case BRIG_VERDICT_TIMEOUT:
		sb_printf(&sb,
			  "The program was stopped at the time limit (%d s) before it finished.",
			  timeout > 0 ? timeout : lim->timeout_seconds);
		break;
	case BRIG_VERDICT_OOM:
		sb_printf(&sb, "The program was killed: it ran out of memory (limit %d MiB).",
			  lim->memory_mb);
		break;
	case BRIG_VERDICT_OUTPUT_LIMIT:
		sb_printf(&sb,
			  "The program was stopped: its output exceeded %ld bytes (truncated).",
			  lim->max_output_bytes);
		break;
	case BRIG_VERDICT_SANDBOX_ERROR:
		sb_printf(&sb, "The sandbox failed, not the program (it may not have run): %s",
			  r->error ? r->error : "no reason given");
		break;
	case BRIG_VERDICT_CANCELLED:
		sb_puts(&sb, "The run was cancelled.");
		break;
	}
	sb_printf(&sb, "\n[%s, image %s, backend %s, runtime %s, %lld ms]",
		  brig_language_name(r->language), r->image ? r->image : "?",
		  r->backend ? r->backend : "?", r->runtime ? r->runtime : "?", r->duration_ms);
	if (r->notice)
		sb_printf(&sb, "\nNote: %s", r->notice);
	if (r->output_truncated && r->verdict != BRIG_VERDICT_OUTPUT_LIMIT)
		sb_puts(&sb, "\nThe output was truncated.");
	workspace_text(&sb, r);
	egress_text(&sb, r);
	sb_puts(&sb, "\n");
	append_stream(&sb, "stdout", r->stdout_data, r->stdout_len);
	append_stream(&sb, "stderr", r->stderr_data, r->stderr_len);
	return sb_steal(&sb);
}

json_object *mcp_run_result(const brig_result *res, const brig_policy_limits *lim, int timeout)
{
	cleanup_free char *text = run_text(res, lim, timeout);
	return mcp_tool_result(text, brig_result_to_object(res),
			       res->verdict != BRIG_VERDICT_SUCCESS);
}

json_object *mcp_run_failure(const brig_error *err, const brig_policy_limits *lim)
{
	const char *msg = err && err->message ? err->message : "unknown error";
	cleanup_free char *text = NULL;
	switch (err ? err->status : BRIG_E_SANDBOX) {
	case BRIG_E_REFUSED:
		text = xasprintf(
			"Refused by the sandbox policy, nothing ran: %s. The limits are: code "
			"at most %ld bytes, timeout_seconds from 1 to %d.",
			msg, lim->max_input_bytes, lim->max_timeout_seconds);
		break;
	case BRIG_E_USAGE:
		text = xasprintf("Invalid request, nothing ran: %s.", msg);
		break;
	case BRIG_E_UNAVAILABLE:
		text = err && err->transient
			       ? xasprintf(
					 "The sandbox is not available right now, nothing ran: %s. "
					 "This can pass by itself (the container engine may be "
					 "starting): retrying in a few seconds may help "
					 "(sandbox_status has details).",
					 msg)
			       : xasprintf(
					 "The sandbox is not available on this host, nothing ran: "
					 "%s. This needs the operator; retrying will not help "
					 "(sandbox_status has details).",
					 msg);
		break;
	case BRIG_E_AUDIT:
		text = xasprintf(
			"The run could not be recorded in the operator's audit log, so its "
			"result is withheld: %s.",
			msg);
		break;
	case BRIG_E_BUSY:
		text = xasprintf("The sandbox is busy, nothing ran: %s. Retry later.", msg);
		break;
	default:
		text = xasprintf("The sandbox failed, nothing ran: %s.", msg);
		break;
	}
	return mcp_tool_result(text, NULL, true);
}

static const char *str_or(json_object *o, const char *key, const char *dflt)
{
	json_object *v = NULL;
	if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return dflt;
}

static void status_text(strbuf *sb, json_object *st, const brig_policy_limits *lim, int running,
			int queued)
{
	const char *sel = str_or(st, "selected", NULL);
	if (sel)
		sb_printf(sb, "brig %s is ready: runs use backend %s (%s isolation, runtime %s).\n",
			  brig_version(), sel, str_or(st, "isolation", "?"),
			  str_or(st, "runtime", "?"));
	else
		sb_printf(sb, "brig %s cannot run code here: %s\n", brig_version(),
			  str_or(st, "selection_error", "no backend is available"));
	json_object *arr = NULL;
	if (json_object_object_get_ex(st, "backends", &arr) &&
	    json_object_is_type(arr, json_type_array)) {
		sb_puts(sb, "Backends:\n");
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			json_object *b = json_object_array_get_idx(arr, i);
			json_object *av = NULL;
			bool ok = json_object_object_get_ex(b, "available", &av) &&
				  json_object_get_boolean(av);
			sb_printf(sb, "  %s (%s): ", str_or(b, "name", "?"),
				  str_or(b, "isolation", "?"));
			if (ok)
				sb_printf(sb, "available, %s\n", str_or(b, "version", ""));
			else
				sb_printf(sb, "unavailable: %s\n",
					  str_or(b, "reason", "no reason given"));
		}
	}
	if (json_object_object_get_ex(st, "images", &arr) &&
	    json_object_is_type(arr, json_type_array)) {
		sb_puts(sb, "Images:\n");
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			json_object *im = json_object_array_get_idx(arr, i);
			json_object *pv = NULL;
			const char *state = "unknown";
			if (json_object_object_get_ex(im, "present", &pv) && pv)
				state = json_object_get_boolean(pv) ? "present" : "MISSING";
			sb_printf(sb, "  %s: %s (%s", str_or(im, "language", "?"),
				  str_or(im, "image", "?"), state);
			/* what the code will find in it, as the image's labels say */
			if (str_or(im, "runtime", NULL))
				sb_printf(sb, "; %s", str_or(im, "runtime", ""));
			if (str_or(im, "libraries", NULL))
				sb_printf(sb, "; %s", str_or(im, "libraries", ""));
			if (str_or(im, "problem", NULL))
				sb_printf(sb, "; unusable: %s", str_or(im, "problem", ""));
			sb_puts(sb, ")\n");
		}
	}
	sb_printf(sb,
		  "Limits: timeout %d s (at most %d s), memory %d MiB, %g CPU, code up to %ld "
		  "bytes, output up to %ld bytes, network %s, %d concurrent runs.\n",
		  lim->timeout_seconds, lim->max_timeout_seconds, lim->memory_mb, lim->cpus,
		  lim->max_input_bytes, lim->max_output_bytes, lim->network ? "on" : "off",
		  lim->max_concurrent_runs);
	sb_printf(sb, "Load: %d running, %d queued.\n", running, queued);
	json_object *pool = NULL, *langs = NULL;
	if (json_object_object_get_ex(st, "pool", &pool) &&
	    strcmp(str_or(pool, "state", "off"), "on") == 0 &&
	    json_object_object_get_ex(pool, "languages", &langs)) {
		sb_puts(sb, "Warm pool (containers started ahead, one run each):");
		json_object_object_foreach(langs, lang, v)
		{
			json_object *idle = NULL;
			json_object_object_get_ex(v, "idle", &idle);
			sb_printf(sb, " %s %d idle;", lang, json_object_get_int(idle));
		}
		sb_puts(sb, "\n");
	}
}

static json_object *limits_json(const brig_policy_limits *lim)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "timeout_seconds", json_object_new_int(lim->timeout_seconds));
	json_object_object_add(o, "max_timeout_seconds",
			       json_object_new_int(lim->max_timeout_seconds));
	json_object_object_add(o, "memory_mb", json_object_new_int(lim->memory_mb));
	json_object_object_add(o, "cpus", json_object_new_double(lim->cpus));
	json_object_object_add(o, "pids_limit", json_object_new_int(lim->pids_limit));
	json_object_object_add(o, "max_input_bytes", json_object_new_int64(lim->max_input_bytes));
	json_object_object_add(o, "max_output_bytes", json_object_new_int64(lim->max_output_bytes));
	json_object_object_add(o, "network", json_object_new_boolean(lim->network));
	json_object_object_add(o, "max_concurrent_runs",
			       json_object_new_int(lim->max_concurrent_runs));
	return o;
}

json_object *mcp_status_result(json_object *st, const brig_policy_limits *lim, int running,
			       int queued)
{
	if (!st || !json_object_is_type(st, json_type_object)) {
		json_object_put(st);
		return mcp_tool_result("The sandbox status could not be read (the library returned "
				       "no valid status).",
				       NULL, true);
	}
	json_object_object_add(st, "version", json_object_new_string(brig_version()));
	json_object_object_add(st, "limits", limits_json(lim));
	json_object *load = json_object_new_object();
	json_object_object_add(load, "running", json_object_new_int(running));
	json_object_object_add(load, "queued", json_object_new_int(queued));
	json_object_object_add(st, "load", load);
	strbuf sb;
	sb_init(&sb);
	status_text(&sb, st, lim, running, queued);
	cleanup_free char *text = sb_steal(&sb);
	return mcp_tool_result(text, st, false);
}
