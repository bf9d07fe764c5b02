/* wstools.c - the workspace tools of the MCP server: create_workspace, write_file, read_file,
 * list_files, delete_workspace (and run_code's workspace_id, tools.c).  Offered only when the
 * policy turns workspaces on.  Ids are minted by the server (128 random bits) and passed back
 * as ordinary tool arguments, as MCP 2026-07-28 asks of server state. */
#include "config.h"

#include <json-c/json.h>
#include <nettle/base64.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mcp/tools.h"
#include "text.h"
#include "util.h"

static long ws_transfer; /* the policy's workspaces.max_transfer_bytes; 0: workspaces off */

void mcp_ws_configure(const brig_policy *p)
{
	ws_transfer = 0;
	cleanup_free char *text = p ? brig_policy_to_json(p) : NULL;
	json_object *o = text ? json_tokener_parse(text) : NULL, *w = NULL, *v = NULL;
	if (json_object_object_get_ex(o, "workspaces", &w) &&
	    json_object_object_get_ex(w, "enabled", &v) && json_object_get_boolean(v) &&
	    json_object_object_get_ex(w, "max_transfer_bytes", &v))
		ws_transfer = (long)json_object_get_int64(v);
	json_object_put(o);
}

long mcp_ws_max_transfer(void)
{
	return ws_transfer;
}

/* ---- definitions ------------------------------------------------------------------------ */

static json_object *tool(const char *name, const char *title, const char *desc, const char *schema,
			 bool read_only, bool destructive)
{
	json_object *t = json_object_new_object();
	json_object_object_add(t, "name", json_object_new_string(name));
	json_object_object_add(t, "title", json_object_new_string(title));
	json_object_object_add(t, "description", json_object_new_string(desc));
	json_object *s = json_tokener_parse(schema);
	if (!s)
		abort(); /* a malformed literal: the unit tests catch it at once */
	json_object_object_add(t, "inputSchema", s);
	json_object *a = json_object_new_object();
	json_object_object_add(a, "title", json_object_new_string(title));
	json_object_object_add(a, "readOnlyHint", json_object_new_boolean(read_only));
	json_object_object_add(a, "destructiveHint", json_object_new_boolean(destructive));
	json_object_object_add(a, "idempotentHint", json_object_new_boolean(read_only));
	json_object_object_add(a, "openWorldHint", json_object_new_boolean(false));
	json_object_object_add(t, "annotations", a);
	return t;
}

#define WS_ID_PROP                                                              \
	"\"workspace_id\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{32}$\"," \
	"\"description\":\"The id create_workspace returned\"}"
#define PATH_PROP                                                                             \
	"\"path\":{\"type\":\"string\",\"maxLength\":1024,\"description\":\"Relative to the " \
	"workspace, plain components (no leading /, no . or ..)\"}"

void mcp_ws_tools_add(json_object *arr)
{
	if (!ws_transfer)
		return;
	json_object_array_add(
		arr, tool("create_workspace", "Create a workspace",
			  "Create a workspace: a private directory whose files live across "
			  "run_code calls (pass its workspace_id to run_code; the program starts "
			  "in it, at /workspace) until it is deleted, unused for its idle TTL, or "
			  "its lifetime ends. It has a size and a file quota; files in it cannot "
			  "be executed. Returns the id, the limits and when it expires.",
			  "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
			  false, false));
	cleanup_free char *wdesc = xasprintf(
		"Write a file into a workspace (missing directories are made; an existing file "
		"is replaced). content is text, or base64 when encoding is \"base64\". At most "
		"%ld bytes.",
		ws_transfer);
	json_object_array_add(
		arr, tool("write_file", "Write a file to a workspace", wdesc,
			  "{\"type\":\"object\",\"properties\":{" WS_ID_PROP "," PATH_PROP
			  ",\"content\":{\"type\":\"string\"},\"encoding\":{\"type\":\"string\","
			  "\"enum\":[\"text\",\"base64\"],\"default\":\"text\"}},"
			  "\"required\":[\"workspace_id\",\"path\",\"content\"],"
			  "\"additionalProperties\":false}",
			  false, false));
	cleanup_free char *rdesc = xasprintf(
		"Read a file of a workspace. Text comes back as text; PNG, JPEG, GIF and WebP "
		"images as image content (you see the picture); other binary files as a base64 "
		"resource with a MIME type. At most %ld bytes.",
		ws_transfer);
	json_object_array_add(arr, tool("read_file", "Read a file from a workspace", rdesc,
					"{\"type\":\"object\",\"properties\":{" WS_ID_PROP
					"," PATH_PROP "},\"required\":[\"workspace_id\",\"path\"],"
					"\"additionalProperties\":false}",
					true, false));
	json_object_array_add(
		arr, tool("list_files", "List the files of a workspace",
			  "List a workspace's files (path, type, size, modification time) and "
			  "how much of its size and file quotas is used.",
			  "{\"type\":\"object\",\"properties\":{" WS_ID_PROP
			  "},\"required\":[\"workspace_id\"],\"additionalProperties\":false}",
			  true, false));
	json_object_array_add(
		arr, tool("delete_workspace", "Delete a workspace",
			  "Delete a workspace and every file in it, now.",
			  "{\"type\":\"object\",\"properties\":{" WS_ID_PROP
			  "},\"required\":[\"workspace_id\"],\"additionalProperties\":false}",
			  false, true));
}

/* ---- arguments ---------------------------------------------------------------------------- */

static const char *str_arg(json_object *args, const char *key)
{
	json_object *v = NULL;
	return json_object_object_get_ex(args, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

char *mcp_ws_args(mcp_tool t, json_object *args)
{
	static const char *const allowed[][5] = {
		[MCP_TOOL_CREATE_WORKSPACE] = { NULL },
		[MCP_TOOL_WRITE_FILE] = { "workspace_id", "path", "content", "encoding", NULL },
		[MCP_TOOL_READ_FILE] = { "workspace_id", "path", NULL },
		[MCP_TOOL_LIST_FILES] = { "workspace_id", NULL },
		[MCP_TOOL_DELETE_WORKSPACE] = { "workspace_id", NULL },
	};
	json_object_object_foreach(args, key, val)
	{
		(void)val;
		bool ok = false;
		for (int i = 0; allowed[t][i]; i++)
			ok = ok || strcmp(allowed[t][i], key) == 0;
		if (!ok)
			return xasprintf(
				"Unknown argument \"%.64s\". The workspace's limits are set "
				"by the operator and cannot be chosen.",
				key);
	}
	for (int i = 0; allowed[t][i] && i < 3; i++) {
		if (strcmp(allowed[t][i], "encoding") == 0)
			continue;
		if (!str_arg(args, allowed[t][i]))
			return xasprintf("Missing argument \"%s\" (a string).", allowed[t][i]);
	}
	const char *enc = str_arg(args, "encoding");
	json_object *v = NULL;
	if (json_object_object_get_ex(args, "encoding", &v) &&
	    (!enc || (strcmp(enc, "text") != 0 && strcmp(enc, "base64") != 0)))
		return xstrdup("Argument \"encoding\" must be \"text\" or \"base64\".");
	return NULL;
}

/* ---- calls -------------------------------------------------------------------------------- */

static json_object *failure(const brig_error *e)
{
	const char *m = e && e->message ? e->message : "unknown error";
	cleanup_free char *text = NULL;
	switch (e ? e->status : BRIG_E_SANDBOX) {
	case BRIG_E_NOT_FOUND:
		text = xasprintf("%s. Create a new workspace with create_workspace.", m);
		break;
	case BRIG_E_USAGE:
	case BRIG_E_REFUSED:
		text = xasprintf("Refused: %s.", m);
		break;
	default:
		text = xasprintf("The sandbox failed: %s.", m);
		break;
	}
	return mcp_tool_result(text, NULL, true);
}

static char *b64_encode(const char *data, size_t len)
{
	char *out = xmalloc(BASE64_ENCODE_RAW_LENGTH(len) + 1);
	base64_encode_raw(out, len, (const uint8_t *)data);
	out[BASE64_ENCODE_RAW_LENGTH(len)] = '\0';
	return out;
}

static int b64_decode(const char *s, char **out, size_t *len)
{
	size_t n = strlen(s);
	uint8_t *buf = xmalloc(BASE64_DECODE_LENGTH(n) + 1);
	struct base64_decode_ctx c;
	base64_decode_init(&c);
	size_t got = BASE64_DECODE_LENGTH(n);
	if (!base64_decode_update(&c, &got, buf, n, s) || !base64_decode_final(&c)) {
		free(buf);
		return -1;
	}
	*out = (char *)buf;
	*len = got;
	return 0;
}

/* An image a client can show, by its signature, or NULL. */
static const char *image_type(const char *d, size_t n)
{
	if (n >= 8 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0)
		return "image/png";
	if (n >= 3 && memcmp(d, "\xff\xd8\xff", 3) == 0)
		return "image/jpeg";
	if (n >= 6 && (memcmp(d, "GIF87a", 6) == 0 || memcmp(d, "GIF89a", 6) == 0))
		return "image/gif";
	if (n >= 12 && memcmp(d, "RIFF", 4) == 0 && memcmp(d + 8, "WEBP", 4) == 0)
		return "image/webp";
	return NULL;
}

static json_object *read_result(const char *id, const char *path, const char *data, size_t len)
{
	json_object *r = json_object_new_object(), *content = json_object_new_array();
	json_object *block = json_object_new_object();
	const char *img = image_type(data, len);
	cleanup_free char *note = NULL;
	if (img) {
		cleanup_free char *b = b64_encode(data, len);
		json_object_object_add(block, "type", json_object_new_string("image"));
		json_object_object_add(block, "data", json_object_new_string(b));
		json_object_object_add(block, "mimeType", json_object_new_string(img));
		note = xasprintf("%s: %s, %zu bytes", path, img, len);
	} else if (utf8_valid(data, len, NULL) && !memchr(data, '\0', len)) {
		json_object_object_add(block, "type", json_object_new_string("text"));
		json_object_object_add(block, "text", json_object_new_string_len(data, (int)len));
	} else {
		cleanup_free char *b = b64_encode(data, len);
		cleanup_free char *uri = xasprintf("workspace://%s/%s", id, path);
		json_object *res = json_object_new_object();
		json_object_object_add(res, "uri", json_object_new_string(uri));
		json_object_object_add(res, "mimeType",
				       json_object_new_string("application/octet-stream"));
		json_object_object_add(res, "blob", json_object_new_string(b));
		json_object_object_add(block, "type", json_object_new_string("resource"));
		json_object_object_add(block, "resource", res);
		note = xasprintf("%s: binary, %zu bytes (base64 in the resource)", path, len);
	}
	if (note) {
		json_object *t = json_object_new_object();
		json_object_object_add(t, "type", json_object_new_string("text"));
		json_object_object_add(t, "text", json_object_new_string(note));
		json_object_array_add(content, t);
	}
	json_object_array_add(content, block);
	json_object_object_add(r, "content", content);
	json_object_object_add(r, "isError", json_object_new_boolean(false));
	return r;
}

static char *list_text(json_object *o)
{
	strbuf sb;
	sb_init(&sb);
	json_object *files = NULL, *v = NULL;
	if (json_object_object_get_ex(o, "files", &files))
		for (size_t i = 0; i < json_object_array_length(files); i++) {
			json_object *f = json_object_array_get_idx(files, i), *p = NULL, *t = NULL,
				    *s = NULL;
			json_object_object_get_ex(f, "path", &p);
			json_object_object_get_ex(f, "type", &t);
			json_object_object_get_ex(f, "size", &s);
			sb_printf(&sb, "%s %lld %s\n", json_object_get_string(t),
				  (long long)json_object_get_int64(s), json_object_get_string(p));
		}
	long long used = 0, size = 0, uf = 0, mf = 0;
	if (json_object_object_get_ex(o, "used_bytes", &v))
		used = json_object_get_int64(v);
	if (json_object_object_get_ex(o, "size_bytes", &v))
		size = json_object_get_int64(v);
	if (json_object_object_get_ex(o, "used_files", &v))
		uf = json_object_get_int64(v);
	if (json_object_object_get_ex(o, "max_files", &v))
		mf = json_object_get_int64(v);
	sb_printf(&sb, "Quotas used: %lld of %lld bytes, %lld of %lld files.", used, size, uf, mf);
	return sb_steal(&sb);
}

json_object *mcp_ws_call(brig_ctx *ctx, mcp_tool t, json_object *args)
{
	brig_error *e = NULL;
	const char *id = str_arg(args, "workspace_id"), *path = str_arg(args, "path");
	json_object *out = NULL;
	switch (t) {
	case MCP_TOOL_CREATE_WORKSPACE: {
		json_object *info = NULL;
		if (brig_workspace_create(ctx, "mcp", &info, &e) < 0)
			break;
		json_object *v = NULL;
		long long f[4] = { 0 };
		static const char *const k[] = { "size_mb", "max_files", "idle_ttl_seconds",
						 "expires" };
		for (int i = 0; i < 4; i++)
			if (json_object_object_get_ex(info, k[i], &v))
				f[i] = json_object_get_int64(v);
		json_object_object_get_ex(info, "id", &v);
		cleanup_free char *text = xasprintf(
			"Workspace %s created: %lld MiB, %lld files at most, ended after %lld s "
			"unused and at the latest in %lld s. Pass workspace_id to run_code (the "
			"program starts in /workspace), write_file, read_file and list_files.",
			json_object_get_string(v), f[0], f[1], f[2], f[3] - (long long)time(NULL));
		out = mcp_tool_result(text, info, false);
		break;
	}
	case MCP_TOOL_WRITE_FILE: {
		const char *content = str_arg(args, "content"), *enc = str_arg(args, "encoding");
		char *data = NULL;
		size_t len = 0;
		if (enc && strcmp(enc, "base64") == 0) {
			if (b64_decode(content, &data, &len) < 0)
				return mcp_tool_result("Argument \"content\" is not valid base64.",
						       NULL, true);
		} else {
			len = strlen(content);
			data = xstrndup(content, len);
		}
		int r = brig_workspace_put(ctx, id, path, data, len, "mcp", &e);
		free(data);
		if (r == 0) {
			cleanup_free char *text = xasprintf("Wrote %zu bytes to %s.", len, path);
			out = mcp_tool_result(text, NULL, false);
		}
		break;
	}
	case MCP_TOOL_READ_FILE: {
		char *data = NULL;
		size_t len = 0;
		if (brig_workspace_get(ctx, id, path, &data, &len, "mcp", &e) == 0)
			out = read_result(id, path, data, len);
		free(data);
		break;
	}
	case MCP_TOOL_LIST_FILES: {
		json_object *o = NULL;
		if (brig_workspace_files(ctx, id, "mcp", &o, &e) == 0) {
			cleanup_free char *text = list_text(o);
			out = mcp_tool_result(text, o, false);
		}
		break;
	}
	case MCP_TOOL_DELETE_WORKSPACE:
		if (brig_workspace_remove(ctx, id, "mcp", &e) == 0)
			out = mcp_tool_result("Workspace deleted.", NULL, false);
		break;
	default:
		return mcp_tool_result("Not a workspace tool.", NULL, true);
	}
	if (!out)
		out = failure(e);
	brig_error_free(e);
	return out;
}
