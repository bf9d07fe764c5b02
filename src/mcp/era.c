/* era.c - the 2026-07-28 per-request envelope and the shape of modern results (see era.h). */
#include "config.h"

#include <string.h>

#include "mcp/era.h"
#include "mcp/jsonrpc.h"
#include "mcp/server.h"

const char *const mcp_modern_versions[] = { MCP_MODERN_LATEST, NULL };

#define KEY_VERSION      "io.modelcontextprotocol/protocolVersion"
#define KEY_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define KEY_CLIENT_INFO  "io.modelcontextprotocol/clientInfo"
#define KEY_LOG_LEVEL    "io.modelcontextprotocol/logLevel"
#define KEY_SERVER_INFO  "io.modelcontextprotocol/serverInfo"
#define DIALECT_2020_12  "https://json-schema.org/draft/2020-12/schema"

static const char *const log_levels[] = { "debug",    "info",  "notice",    "warning", "error",
					  "critical", "alert", "emergency", NULL };

static json_object *obj_get(json_object *o, const char *key)
{
	json_object *v = NULL;
	if (o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v))
		return v;
	return NULL;
}

static const char *str_get(json_object *o, const char *key)
{
	json_object *v = obj_get(o, key);
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static bool listed(const char *s, const char *const *list)
{
	for (; s && *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

static void invalid(mcp_envelope *env, const char *key, const char *problem)
{
	env->status = MCP_ENVELOPE_INVALID;
	env->key = key;
	env->problem = problem;
}

void mcp_envelope_read(json_object *params, mcp_envelope *env)
{
	memset(env, 0, sizeof *env);
	json_object *meta = obj_get(params, "_meta");
	/* the claim is the protocol-version key: without it a request is not a modern one */
	if (!meta || !json_object_is_type(meta, json_type_object) ||
	    !json_object_object_get_ex(meta, KEY_VERSION, NULL))
		return;
	env->version = str_get(meta, KEY_VERSION);
	if (!env->version) {
		invalid(env, KEY_VERSION, "expected a protocol version string");
		return;
	}
	json_object *caps = obj_get(meta, KEY_CAPABILITIES);
	if (!json_object_object_get_ex(meta, KEY_CAPABILITIES, NULL)) {
		invalid(env, KEY_CAPABILITIES, "missing");
		return;
	}
	if (!caps || !json_object_is_type(caps, json_type_object)) {
		invalid(env, KEY_CAPABILITIES, "expected an object");
		return;
	}
	json_object *info = obj_get(meta, KEY_CLIENT_INFO);
	if (json_object_object_get_ex(meta, KEY_CLIENT_INFO, NULL)) {
		env->client_name = str_get(info, "name");
		env->client_version = str_get(info, "version");
		if (!env->client_name || !env->client_version) {
			invalid(env, KEY_CLIENT_INFO,
				"expected an object with name and version strings");
			return;
		}
	}
	if (json_object_object_get_ex(meta, KEY_LOG_LEVEL, NULL) &&
	    !listed(str_get(meta, KEY_LOG_LEVEL), log_levels)) {
		invalid(env, KEY_LOG_LEVEL, "expected a logging level (debug .. emergency)");
		return;
	}
	env->status = listed(env->version, mcp_modern_versions) ? MCP_ENVELOPE_OK
								: MCP_ENVELOPE_UNSUPPORTED;
}

json_object *mcp_unsupported_version(json_object *id, const char *requested)
{
	json_object *data = json_object_new_object();
	json_object *supported = json_object_new_array();
	for (const char *const *v = mcp_modern_versions; *v; v++)
		json_object_array_add(supported, json_object_new_string(*v));
	json_object_object_add(data, "supported", supported);
	if (requested)
		json_object_object_add(data, "requested", json_object_new_string(requested));
	cleanup_free char *msg =
		requested ? xasprintf("Unsupported protocol version: %.64s", requested)
			  : xstrdup("Unsupported protocol version: the request did not name a "
				    "protocol version");
	return jsonrpc_error(id, MCP_UNSUPPORTED_PROTOCOL_VERSION, msg, data);
}

json_object *mcp_envelope_error(json_object *id, const mcp_envelope *env)
{
	if (env->status == MCP_ENVELOPE_UNSUPPORTED)
		return mcp_unsupported_version(id, env->version);
	const char *key = env->status == MCP_ENVELOPE_NONE ? KEY_VERSION : env->key;
	const char *problem = env->status == MCP_ENVELOPE_NONE ? "missing" : env->problem;
	json_object *issue = json_object_new_object();
	json_object_object_add(issue, "key", json_object_new_string(key));
	json_object_object_add(issue, "problem", json_object_new_string(problem));
	json_object *data = json_object_new_object();
	json_object_object_add(data, "envelope", issue);
	cleanup_free char *msg =
		env->status == MCP_ENVELOPE_NONE
			? xstrdup("Invalid params: the request is missing the per-request _meta of "
				  "protocol revision " MCP_MODERN_LATEST " (" KEY_VERSION
				  ", " KEY_CAPABILITIES ")")
			: xasprintf("Invalid params: invalid _meta for protocol revision "
				    "%s: %s: %s",
				    MCP_MODERN_LATEST, key, problem);
	return jsonrpc_error(id, JSONRPC_INVALID_PARAMS, msg, data);
}

json_object *mcp_server_info(void)
{
	json_object *info = json_object_new_object();
	json_object_object_add(info, "name", json_object_new_string("brig"));
	json_object_object_add(info, "title", json_object_new_string("brig code sandbox"));
	json_object_object_add(info, "version", json_object_new_string(brig_version()));
	return info;
}

json_object *mcp_server_capabilities(void)
{
	/* tools only, and the list never changes while the server runs; no logging, sampling or
	 * roots (deprecated by 2026-07-28, and brig never used them) */
	json_object *caps = json_object_new_object();
	json_object *tools = json_object_new_object();
	json_object_object_add(tools, "listChanged", json_object_new_boolean(false));
	json_object_object_add(caps, "tools", tools);
	return caps;
}

static json_object *modern(json_object *result, bool cacheable)
{
	json_object_object_add(result, "resultType", json_object_new_string("complete"));
	if (cacheable) {
		json_object_object_add(result, "ttlMs", json_object_new_int(MCP_CACHE_TTL_MS));
		json_object_object_add(result, "cacheScope", json_object_new_string("private"));
	}
	json_object *meta = obj_get(result, "_meta");
	if (!meta) {
		meta = json_object_new_object();
		json_object_object_add(result, "_meta", meta);
	}
	json_object_object_add(meta, KEY_SERVER_INFO, mcp_server_info());
	return result;
}

json_object *mcp_modern_result(json_object *result)
{
	return modern(result ? result : json_object_new_object(), false);
}

json_object *mcp_modern_cacheable(json_object *result)
{
	return modern(result, true);
}

json_object *mcp_discover_result(const char *instructions)
{
	json_object *r = json_object_new_object();
	json_object *versions = json_object_new_array();
	for (const char *const *v = mcp_modern_versions; *v; v++)
		json_object_array_add(versions, json_object_new_string(*v));
	json_object_object_add(r, "supportedVersions", versions);
	json_object_object_add(r, "capabilities", mcp_server_capabilities());
	json_object_object_add(r, "instructions", json_object_new_string(instructions));
	return mcp_modern_cacheable(r);
}

json_object *mcp_modern_tools(json_object *tools)
{
	/* Without $schema a 2026-07-28 schema is 2020-12 already; naming it keeps a validator
	 * from guessing.  (The 2025 revisions get none: their SDKs validate with draft-07.) */
	for (size_t i = 0; i < json_object_array_length(tools); i++) {
		json_object *t = json_object_array_get_idx(tools, i);
		static const char *const schemas[] = { "inputSchema", "outputSchema" };
		for (size_t k = 0; k < 2; k++) {
			json_object *s = obj_get(t, schemas[k]);
			if (s)
				json_object_object_add(s, "$schema",
						       json_object_new_string(DIALECT_2020_12));
		}
	}
	return tools;
}
