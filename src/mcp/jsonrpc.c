/* jsonrpc.c - JSON-RPC 2.0 framing, parsing and writing for the MCP stdio transport
 * (see jsonrpc.h for the rules). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h> /* isfinite: a macro, no libm */
#include <stdio.h>
#include <string.h>

#include "jsonrpc.h"

/* ---- framing --------------------------------------------------------------------------- */

void jsonrpc_lines_init(jsonrpc_lines *l, size_t max_line)
{
	sb_init(&l->buf);
	l->start = 0;
	l->scanned = 0;
	l->max_line = max_line ? max_line : JSONRPC_DEFAULT_MAX_LINE;
	l->discarding = false;
	l->eof = false;
}

void jsonrpc_lines_free(jsonrpc_lines *l)
{
	sb_free(&l->buf);
	l->start = l->scanned = 0;
}

/* Drop consumed bytes so the buffer never holds more than one partial line. */
static void lines_compact(jsonrpc_lines *l)
{
	if (l->start == 0)
		return;
	size_t rest = l->buf.len - l->start;
	if (rest)
		memmove(l->buf.data, l->buf.data + l->start, rest);
	l->buf.len = rest;
	l->buf.data[rest] = '\0';
	l->start = 0;
}

void jsonrpc_lines_feed(jsonrpc_lines *l, const void *data, size_t n)
{
	const char *p = data;
	if (l->discarding) {
		const char *nl = memchr(p, '\n', n);
		if (!nl)
			return; /* still inside the oversized line */
		l->discarding = false;
		n -= (size_t)(nl + 1 - p);
		p = nl + 1;
	}
	lines_compact(l);
	if (n)
		sb_append(&l->buf, p, n);
}

void jsonrpc_lines_finish(jsonrpc_lines *l)
{
	l->eof = true;
}

static bool is_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

jsonrpc_line_status jsonrpc_lines_next(jsonrpc_lines *l, const char **line, size_t *len)
{
	for (;;) {
		if (l->discarding || !l->buf.data || l->start >= l->buf.len)
			return JSONRPC_LINE_NONE;
		char *base = l->buf.data + l->start;
		size_t avail = l->buf.len - l->start;
		char *nl = memchr(base + l->scanned, '\n', avail - l->scanned);
		size_t n;
		if (nl) {
			n = (size_t)(nl - base);
			l->start += n + 1;
			l->scanned = 0;
		} else if (avail > l->max_line + 1) {
			/* No newline within the limit (+1 for a CR before the newline): report
			 * once, then drop everything up to the next newline as it arrives. */
			l->start = l->buf.len;
			l->scanned = 0;
			l->discarding = !l->eof;
			return JSONRPC_LINE_OVERSIZED;
		} else if (l->eof) {
			n = avail; /* a last line without its newline */
			l->start = l->buf.len;
			l->scanned = 0;
		} else {
			l->scanned = avail;
			return JSONRPC_LINE_NONE;
		}
		if (n && base[n - 1] == '\r')
			n--;
		if (n > l->max_line)
			return JSONRPC_LINE_OVERSIZED;
		if (is_blank(base, n))
			continue;
		base[n] = '\0'; /* overwrites the '\r' or '\n' (or the buffer's own NUL) */
		*line = base;
		*len = n;
		return JSONRPC_LINE_OK;
	}
}

/* ---- parsing --------------------------------------------------------------------------- */

/* Raw text of the top-level "id" member (the last one, as json-c keeps the last duplicate), and
 * the checks json-c does not make: no raw control character inside a string, no character
 * outside strings that cannot occur in strict JSON (quotes ', NaN, Infinity).  The line is
 * valid UTF-8; anything else malformed is left to json-c.  Returns 0, or -1 with *bad_at. */
static int scan_line(const char *s, size_t len, const char **id_raw, size_t *id_len, size_t *bad_at)
{
	int depth = 0;
	bool in_str = false, expect_key = false, key_is_id = false, in_id_value = false;
	size_t key_start = 0, value_start = 0;
	*id_raw = NULL;
	*id_len = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (in_str) {
			if (c < 0x20) {
				*bad_at = i;
				return -1;
			}
			if (c == '\\') {
				i++;
			} else if (c == '"') {
				in_str = false;
				if (depth == 1 && expect_key) {
					const char *k = s + key_start;
					size_t kn = i + 1 - key_start;
					if (memchr(k, '\\', kn)) {
						/* an escaped key such as "\u0069d": let json-c
						 * decode it */
						cleanup_free char *kc = xstrndup(k, kn);
						json_object *dk = json_tokener_parse(kc);
						key_is_id =
							dk &&
							json_object_is_type(dk, json_type_string) &&
							strcmp(json_object_get_string(dk), "id") ==
								0;
						json_object_put(dk);
					} else {
						key_is_id = kn == 4 && memcmp(k, "\"id\"", 4) == 0;
					}
					expect_key = false;
				}
			}
			continue;
		}
		switch (c) {
		case '"':
			in_str = true;
			key_start = i;
			break;
		case '{':
		case '[':
			depth++;
			if (depth == 1)
				expect_key = c == '{';
			break;
		case ':':
			if (depth == 1) {
				value_start = i + 1;
				in_id_value = key_is_id;
			}
			break;
		case ',':
		case '}':
		case ']':
			if (depth == 1 && in_id_value) {
				size_t a = value_start, b = i;
				while (a < b && strchr(" \t\r\n", s[a]))
					a++;
				while (b > a && strchr(" \t\r\n", s[b - 1]))
					b--;
				*id_raw = s + a;
				*id_len = b - a;
				in_id_value = false;
			}
			if (c == ',') {
				if (depth == 1)
					expect_key = true;
			} else {
				depth--;
			}
			break;
		default:
			/* json-c takes 'single quotes', NaN and Infinity even in strict mode */
			if (!strchr(" \t\r\n-+.0123456789eEtrufalsn", c) || c == '\0') {
				*bad_at = i;
				return -1;
			}
			break;
		}
	}
	return 0;
}

static bool is_integral(json_object *v)
{
	if (json_object_is_type(v, json_type_int))
		return true;
	if (json_object_is_type(v, json_type_double)) {
		double d = json_object_get_double(v);
		double a = d < 0 ? -d : d;
		if (!isfinite(d))
			return false;
		/* every double from 2^53 on is an integer; below, the cast is exact */
		return a >= 9007199254740992.0 || (double)(int64_t)d == d;
	}
	return false;
}

/* A copy of a valid id that serializes as its raw text, so that it is echoed byte for byte
 * (json-c saturates integers beyond 64 bits and rewrites string escapes). */
static json_object *id_echo(json_object *id, const char *raw, size_t raw_len)
{
	json_object *copy;
	if (json_object_is_type(id, json_type_string))
		copy = json_object_new_string_len(json_object_get_string(id),
						  json_object_get_string_len(id));
	else if (json_object_is_type(id, json_type_int) && json_object_get_int64(id) == INT64_MAX)
		copy = json_object_new_uint64(json_object_get_uint64(id));
	else if (json_object_is_type(id, json_type_int))
		copy = json_object_new_int64(json_object_get_int64(id));
	else
		copy = json_object_new_double(json_object_get_double(id));
	if (!copy)
		abort();
	if (raw && raw_len)
		json_object_set_serializer(copy, json_object_userdata_to_json_string,
					   xstrndup(raw, raw_len), json_object_free_userdata);
	return copy;
}

static int msg_invalid(jsonrpc_msg *msg, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int msg_invalid(jsonrpc_msg *msg, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	msg->kind = JSONRPC_KIND_INVALID;
	msg->error_code = code;
	free(msg->error_message);
	msg->error_message = m;
	return code;
}

int jsonrpc_parse(const char *line, size_t len, jsonrpc_msg *msg)
{
	memset(msg, 0, sizeof *msg);
	size_t bad = 0;
	if (!utf8_valid(line, len, &bad))
		return msg_invalid(msg, JSONRPC_PARSE_ERROR,
				   "Parse error: invalid UTF-8 at byte %zu", bad);
	const char *id_raw;
	size_t id_len;
	if (scan_line(line, len, &id_raw, &id_len, &bad) < 0)
		return msg_invalid(msg, JSONRPC_PARSE_ERROR,
				   "Parse error: unexpected character at byte %zu", bad);
	const char *why = NULL;
	json_object *root = NULL;
	size_t where = 0;
	if (json_parse_strict(line, len, JSONRPC_MAX_DEPTH, &root, &why, &where) < 0)
		return msg_invalid(msg, JSONRPC_PARSE_ERROR, "Parse error: %s", why);
	msg->root = root;

	if (json_object_is_type(root, json_type_array))
		return msg_invalid(msg, JSONRPC_INVALID_REQUEST,
				   "Invalid Request: JSON-RPC batches (arrays) are not supported");
	if (!root || !json_object_is_type(root, json_type_object))
		return msg_invalid(msg, JSONRPC_INVALID_REQUEST,
				   "Invalid Request: a message must be a JSON object");

	json_object *id = NULL, *v = NULL;
	bool has_method = json_object_object_get_ex(root, "method", NULL);
	if (!has_method && (json_object_object_get_ex(root, "result", NULL) ||
			    json_object_object_get_ex(root, "error", NULL))) {
		/* A response (or something shaped like one): never answered, whatever its
		 * defects, so that two peers can never bounce errors at each other. */
		msg->kind = JSONRPC_KIND_RESPONSE;
		return 0;
	}
	bool has_id = json_object_object_get_ex(root, "id", &id);
	bool id_ok = has_id && (json_object_is_type(id, json_type_string) || is_integral(id));
	if (id_ok)
		msg->id = id_echo(id, id_raw, id_len);

	if (!json_object_object_get_ex(root, "jsonrpc", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), "2.0") != 0)
		return msg_invalid(msg, JSONRPC_INVALID_REQUEST,
				   "Invalid Request: \"jsonrpc\" must be \"2.0\"");
	if (has_id && !id_ok)
		return msg_invalid(msg, JSONRPC_INVALID_REQUEST,
				   "Invalid Request: \"id\" must be a string or an integer");

	if (json_object_object_get_ex(root, "method", &v)) {
		if (!json_object_is_type(v, json_type_string))
			return msg_invalid(msg, JSONRPC_INVALID_REQUEST,
					   "Invalid Request: \"method\" must be a string");
		msg->method = json_object_get_string(v);
		if (json_object_object_get_ex(root, "params", &v) && v) {
			/* null is taken as absent (some clients send it); other scalars are not
			 * structured values */
			if (!json_object_is_type(v, json_type_object) &&
			    !json_object_is_type(v, json_type_array))
				return msg_invalid(msg, JSONRPC_INVALID_REQUEST,
						   "Invalid Request: \"params\" must be an object");
			msg->params = v;
		}
		msg->kind = has_id ? JSONRPC_KIND_REQUEST : JSONRPC_KIND_NOTIFICATION;
		return 0;
	}
	return msg_invalid(msg, JSONRPC_INVALID_REQUEST, "Invalid Request: \"method\" is missing");
}

void jsonrpc_msg_clear(jsonrpc_msg *msg)
{
	if (msg->root)
		json_object_put(msg->root);
	if (msg->id)
		json_object_put(msg->id);
	free(msg->error_message);
	memset(msg, 0, sizeof *msg);
}

char *jsonrpc_id_key(json_object *id)
{
	if (!id)
		return NULL;
	if (json_object_is_type(id, json_type_string)) {
		strbuf sb;
		sb_init(&sb);
		sb_puts(&sb, "s:");
		sb_append(&sb, json_object_get_string(id), (size_t)json_object_get_string_len(id));
		return sb_steal(&sb);
	}
	if (json_object_is_type(id, json_type_int)) {
		if (json_object_get_int64(id) == INT64_MAX &&
		    json_object_get_uint64(id) > INT64_MAX)
			return xasprintf("i:%" PRIu64, json_object_get_uint64(id));
		return xasprintf("i:%" PRId64, json_object_get_int64(id));
	}
	if (is_integral(id)) {
		double d = json_object_get_double(id);
		if (d >= -9.2e18 && d <= 9.2e18)
			return xasprintf("i:%" PRId64, (int64_t)d);
		return xasprintf("i:%.0f", d);
	}
	return NULL;
}

/* ---- building -------------------------------------------------------------------------- */

static json_object *envelope(void)
{
	json_object *o = json_object_new_object();
	if (!o)
		abort();
	json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
	return o;
}

json_object *jsonrpc_result(json_object *id, json_object *result)
{
	json_object *o = envelope();
	json_object_object_add(o, "id", id ? json_object_get(id) : NULL);
	json_object_object_add(o, "result", result ? result : json_object_new_object());
	return o;
}

json_object *jsonrpc_error(json_object *id, int code, const char *message, json_object *data)
{
	json_object *o = envelope();
	json_object_object_add(o, "id", id ? json_object_get(id) : NULL);
	json_object *e = json_object_new_object();
	json_object_object_add(e, "code", json_object_new_int(code));
	json_object_object_add(e, "message", json_object_new_string(message));
	if (data)
		json_object_object_add(e, "data", data);
	json_object_object_add(o, "error", e);
	return o;
}

json_object *jsonrpc_notification(const char *method, json_object *params)
{
	json_object *o = envelope();
	json_object_object_add(o, "method", json_object_new_string(method));
	if (params)
		json_object_object_add(o, "params", params);
	return o;
}

/* ---- writing --------------------------------------------------------------------------- */

const char *jsonrpc_to_string(json_object *obj, size_t *len)
{
	size_t n = 0;
	const char *s = json_object_to_json_string_length(
		obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	if (len)
		*len = n;
	return s;
}

void jsonrpc_writer_init(jsonrpc_writer *w, int fd)
{
	w->fd = fd;
	w->broken = false;
	pthread_mutex_init(&w->lock, NULL);
}

void jsonrpc_writer_destroy(jsonrpc_writer *w)
{
	pthread_mutex_destroy(&w->lock);
}

int jsonrpc_write(jsonrpc_writer *w, json_object *msg)
{
	size_t n = 0;
	const char *s = jsonrpc_to_string(msg, &n);
	/* json-c escapes every control character inside strings, so s holds no newline: one
	 * message is one line.  Copy to append the newline and write it in one go. */
	cleanup_free char *line = xmalloc(n + 1);
	memcpy(line, s, n);
	line[n] = '\n';
	pthread_mutex_lock(&w->lock);
	int r = -1;
	if (w->broken) {
		errno = EPIPE;
	} else if (write_all(w->fd, line, n + 1) < 0) {
		w->broken = true;
	} else {
		r = 0;
	}
	int saved = errno;
	pthread_mutex_unlock(&w->lock);
	errno = saved;
	return r;
}

bool jsonrpc_writer_broken(jsonrpc_writer *w)
{
	pthread_mutex_lock(&w->lock);
	bool b = w->broken;
	pthread_mutex_unlock(&w->lock);
	return b;
}
