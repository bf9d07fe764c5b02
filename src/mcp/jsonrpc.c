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

/* ---- UTF-8 ----------------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if the bytes there are not one. */
static size_t utf8_seq(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	size_t n;
	unsigned char lo = 0x80, hi = 0xBF; /* range of the second byte */
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		if (c == 0xE0)
			lo = 0xA0; /* no overlongs */
		else if (c == 0xED)
			hi = 0x9F; /* no UTF-16 surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		if (c == 0xF0)
			lo = 0x90; /* no overlongs */
		else if (c == 0xF4)
			hi = 0x8F; /* nothing above U+10FFFF */
	} else {
		return 0; /* continuation byte, C0/C1 overlong lead, F5..FF */
	}
	if (avail < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

bool jsonrpc_utf8_valid(const char *s, size_t len, size_t *bad_at)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	while (i < len) {
		if (u[i] < 0x80) {
			i++;
			continue;
		}
		size_t n = utf8_seq(u + i, len - i);
		if (!n) {
			if (bad_at)
				*bad_at = i;
			return false;
		}
		i += n;
	}
	return true;
}

/* Append the visible form of the control character cp: C0 controls as their Control
 * Pictures (U+2400 + cp), DEL as U+2421, C1 controls as their 7-bit equivalent, ESC (as
 * U+241B) followed by the character cp - 0x40 (U+009B CSI is ESC '['). */
static void append_control_picture(strbuf *sb, unsigned cp)
{
	char pic[4] = { '\xE2', '\x90', 0, 0 };
	if (cp < 0x20) {
		pic[2] = (char)(0x80 + cp);
		sb_append(sb, pic, 3);
	} else if (cp == 0x7F) {
		pic[2] = '\xA1';
		sb_append(sb, pic, 3);
	} else {
		pic[2] = (char)(0x80 + 0x1B);
		pic[3] = (char)(cp - 0x40);
		sb_append(sb, pic, 4);
	}
}

/* The code point of a control character that starts s (a valid sequence of n bytes), or -1:
 * C0 except LF and TAB, DEL, C1 (U+0080..U+009F). */
static int control_at(const unsigned char *s, size_t n)
{
	if (n == 1 && ((s[0] < 0x20 && s[0] != '\n' && s[0] != '\t') || s[0] == 0x7F))
		return s[0];
	if (n == 2 && s[0] == 0xC2 && s[1] < 0xA0)
		return s[1];
	return -1;
}

static char *utf8_clean(const char *s, size_t len, size_t *out_len, bool visible)
{
	const unsigned char *u = (const unsigned char *)s;
	strbuf sb;
	sb_init(&sb);
	size_t i = 0, run = 0; /* [run, i) is a valid stretch not yet copied */
	while (i < len) {
		size_t n = u[i] < 0x80 ? 1 : utf8_seq(u + i, len - i);
		int cp = n && visible ? control_at(u + i, n) : -1;
		if (n && cp < 0) {
			i += n;
			continue;
		}
		sb_append(&sb, s + run, i - run);
		if (n) {
			append_control_picture(&sb, (unsigned)cp);
			i += n;
		} else {
			sb_append(&sb, "\xEF\xBF\xBD", 3); /* U+FFFD REPLACEMENT CHARACTER */
			i++;
		}
		run = i;
	}
	sb_append(&sb, s + run, i - run);
	if (out_len)
		*out_len = sb.len;
	return sb_steal(&sb);
}

char *jsonrpc_utf8_sanitize(const char *s, size_t len, size_t *out_len)
{
	return utf8_clean(s, len, out_len, false);
}

char *jsonrpc_utf8_visible(const char *s, size_t len, size_t *out_len)
{
	return utf8_clean(s, len, out_len, true);
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

/* Parse exactly one JSON value covering all of s[0..len) into *out (NULL for JSON null).
 * Returns 0, or -1 with *why set. */
static int parse_whole(const char *s, size_t len, json_object **out, const char **why)
{
	*out = NULL;
	if (len > INT32_MAX - 1) {
		*why = "message too large";
		return -1;
	}
	struct json_tokener *tok = json_tokener_new_ex(JSONRPC_MAX_DEPTH);
	if (!tok)
		abort();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	json_object *o = json_tokener_parse_ex(tok, s, (int)len);
	enum json_tokener_error e = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	if (e == json_tokener_continue && end == len) {
		/* A bare number at the end of the input needs a terminator; a NUL ends input. */
		o = json_tokener_parse_ex(tok, "", 1);
		e = json_tokener_get_error(tok);
		end = len;
	}
	int rc = 0;
	if (e != json_tokener_success) {
		*why = e == json_tokener_continue ? "unexpected end of input"
						  : json_tokener_error_desc(e);
		rc = -1;
	} else if (end != len) {
		/* json-c stopped early: an embedded NUL byte */
		*why = "unexpected data after the JSON value";
		rc = -1;
	}
	if (rc < 0 && o) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	*out = o;
	return rc;
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
	if (!jsonrpc_utf8_valid(line, len, &bad))
		return msg_invalid(msg, JSONRPC_PARSE_ERROR,
				   "Parse error: invalid UTF-8 at byte %zu", bad);
	const char *id_raw;
	size_t id_len;
	if (scan_line(line, len, &id_raw, &id_len, &bad) < 0)
		return msg_invalid(msg, JSONRPC_PARSE_ERROR,
				   "Parse error: unexpected character at byte %zu", bad);
	const char *why = NULL;
	json_object *root = NULL;
	if (parse_whole(line, len, &root, &why) < 0)
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
