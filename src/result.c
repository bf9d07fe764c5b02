/* result.c - the result object: one shape for CLI --json, MCP structuredContent and the library. */
#include "config.h"

#include <json-c/json.h>
#include <string.h>

#include "brig-spec.h"
#include "text.h"
#include "util.h"

void brig_result_clear(brig_result *res)
{
	if (!res)
		return;
	free(res->image);
	free(res->backend);
	free(res->runtime);
	free(res->stdout_data);
	free(res->stderr_data);
	free(res->error);
	free(res->notice);
	free(res->container);
	if (res->struct_size >= offsetof(brig_result, user) + sizeof res->user)
		free(res->user);
	if (BRIG_HAS_FIELD(res, brig_result, workspace_changes)) {
		free(res->workspace);
		free(res->workspace_changes);
	}
	if (BRIG_HAS_FIELD(res, brig_result, egress))
		free(res->egress);
	size_t size = res->struct_size;
	memset(res, 0, size < sizeof *res && size ? size : sizeof *res);
	res->struct_size = size;
	res->exit_code = -1;
}

/* Program output is arbitrary bytes; JSON needs UTF-8: invalid bytes become U+FFFD. */
static json_object *json_bytes(const char *data, size_t len)
{
	size_t n = 0;
	cleanup_free char *clean = utf8_sanitize(data, len, &n);
	return json_object_new_string_len(clean, (int)n);
}

static json_object *json_str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

json_object *brig_result_to_object(const brig_result *res)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "language",
			       json_object_new_string(brig_language_name(res->language)));
	json_object_object_add(o, "image", json_str_or_null(res->image));
	json_object_object_add(o, "backend", json_str_or_null(res->backend));
	json_object_object_add(o, "runtime", json_str_or_null(res->runtime));
	json_object_object_add(o, "exit_code", json_object_new_int(res->exit_code));
	json_object_object_add(o, "verdict",
			       json_object_new_string(brig_verdict_name(res->verdict)));
	json_object_object_add(o, "stdout", json_bytes(res->stdout_data, res->stdout_len));
	json_object_object_add(o, "stderr", json_bytes(res->stderr_data, res->stderr_len));
	json_object_object_add(o, "timed_out", json_object_new_boolean(res->timed_out));
	json_object_object_add(o, "output_truncated",
			       json_object_new_boolean(res->output_truncated));
	json_object_object_add(o, "oom_killed", json_object_new_boolean(res->oom_killed));
	json_object_object_add(o, "duration_ms", json_object_new_int64(res->duration_ms));
	json_object_object_add(o, "error", json_str_or_null(res->error));
	json_object_object_add(o, "notice", json_str_or_null(res->notice));
	json_object_object_add(o, "container", json_str_or_null(res->container));
	json_object_object_add(o, "code_sha256", json_object_new_string(res->code_sha256));
	json_object_object_add(o, "pooled", json_object_new_boolean(res->pooled));
	json_object_object_add(o, "user",
			       res->struct_size >= offsetof(brig_result, user) + sizeof res->user &&
					       res->user
				       ? json_object_new_string(res->user)
				       : NULL);
	bool ws = BRIG_HAS_FIELD(res, brig_result, workspace_changes);
	json_object_object_add(o, "workspace",
			       ws && res->workspace ? json_object_new_string(res->workspace)
						    : NULL);
	json_object_object_add(
		o, "workspace_changes",
		ws && res->workspace_changes ? json_tokener_parse(res->workspace_changes) : NULL);
	json_object_object_add(o, "egress",
			       BRIG_HAS_FIELD(res, brig_result, egress) && res->egress
				       ? json_tokener_parse(res->egress)
				       : NULL);
	return o;
}

char *brig_result_to_json(const brig_result *res, bool pretty)
{
	json_object *o = brig_result_to_object(res);
	int flags = JSON_C_TO_STRING_NOSLASHESCAPE |
		    (pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
			    : JSON_C_TO_STRING_PLAIN);
	char *s = xstrdup(json_object_to_json_string_ext(o, flags));
	json_object_put(o);
	return s;
}
