/* result.c - the result object: one shape for CLI --json, MCP structuredContent and the library. */
#include "config.h"

#include <json-c/json.h>
#include <string.h>

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
	memset(res, 0, sizeof *res);
	res->exit_code = -1;
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if invalid (overlongs and surrogates too). */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	size_t len;
	unsigned min;
	unsigned cp;
	if ((c & 0xE0) == 0xC0)
		len = 2, min = 0x80, cp = c & 0x1F;
	else if ((c & 0xF0) == 0xE0)
		len = 3, min = 0x800, cp = c & 0x0F;
	else if ((c & 0xF8) == 0xF0)
		len = 4, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

/* Program output is arbitrary bytes; JSON needs UTF-8: invalid bytes become U+FFFD. */
static json_object *json_bytes(const char *data, size_t len)
{
	const unsigned char *s = (const unsigned char *)(data ? data : "");
	strbuf sb;
	sb_init(&sb);
	size_t i = 0;
	while (i < len) {
		size_t l = utf8_seq_len(s + i, len - i);
		if (l == 0) {
			sb_append(&sb, "\xEF\xBF\xBD", 3);
			i++;
		} else {
			sb_append(&sb, s + i, l);
			i += l;
		}
	}
	json_object *o = json_object_new_string_len(sb.data ? sb.data : "", (int)sb.len);
	sb_free(&sb);
	return o;
}

static json_object *json_str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

char *brig_result_to_json(const brig_result *res, bool pretty)
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
	int flags = JSON_C_TO_STRING_NOSLASHESCAPE |
		    (pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
			    : JSON_C_TO_STRING_PLAIN);
	char *s = xstrdup(json_object_to_json_string_ext(o, flags));
	json_object_put(o);
	return s;
}
