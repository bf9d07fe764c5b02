/* text.c - UTF-8 and strict JSON (see text.h). */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "util.h"

size_t utf8_seq_len(const unsigned char *s, size_t avail)
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

bool utf8_valid(const char *s, size_t len, size_t *bad_at)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	while (i < len) {
		size_t n = u[i] < 0x80 ? 1 : utf8_seq_len(u + i, len - i);
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

/* s with invalid bytes as U+FFFD and, when `visible`, control characters as pictures. */
static char *utf8_clean(const char *s, size_t len, size_t *out_len, bool visible)
{
	const unsigned char *u = (const unsigned char *)s;
	strbuf sb;
	sb_init(&sb);
	size_t i = 0, run = 0; /* [run, i) is a valid stretch not yet copied */
	while (i < len) {
		size_t n = u[i] < 0x80 ? 1 : utf8_seq_len(u + i, len - i);
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

char *utf8_sanitize(const char *s, size_t len, size_t *out_len)
{
	return utf8_clean(s ? s : "", len, out_len, false);
}

char *utf8_visible(const char *s, size_t len, size_t *out_len)
{
	return utf8_clean(s, len, out_len, true);
}

/* json-c takes the literals NaN and Infinity even in strict mode: they are not JSON.  (A number
 * too large for a double, 1e999, is JSON; it becomes infinite, and the caller's range check
 * refuses it with the key's name.) */
static bool has_nonfinite(json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_double: {
		if (isfinite(json_object_get_double(o)))
			return false;
		const char *text = json_object_to_json_string(o); /* the source text it came from */
		text += *text == '-';
		return !(*text >= '0' && *text <= '9');
	}
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(o); i++)
			if (has_nonfinite(json_object_array_get_idx(o, i)))
				return true;
		return false;
	case json_type_object: {
		json_object_object_foreach(o, k, v)
		{
			(void)k;
			if (has_nonfinite(v))
				return true;
		}
		return false;
	}
	default:
		return false;
	}
}

int json_parse_strict(const char *text, size_t len, int depth, json_object **out, const char **why,
		      size_t *where)
{
	*out = NULL;
	*where = 0;
	const char *nul = memchr(text, '\0', len);
	if (nul) {
		*why = "NUL byte";
		*where = (size_t)(nul - text);
		return -1;
	}
	if (len >= INT_MAX - 1) {
		*why = "too large";
		return -1;
	}
	json_tokener *tok = json_tokener_new_ex(depth);
	if (!tok)
		abort();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	json_object *o = json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error e = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	if (e == json_tokener_continue && end == len) {
		/* a number or literal at the very end needs a terminator: the NUL ends the input */
		o = json_tokener_parse_ex(tok, "", 1);
		e = json_tokener_get_error(tok);
		end = len;
	}
	int rc = 0;
	if (e != json_tokener_success) {
		*why = e == json_tokener_continue ? "unexpected end of input"
						  : json_tokener_error_desc(e);
		*where = end;
		rc = -1;
	} else if (end != len) {
		*why = "unexpected data after the JSON value";
		*where = end;
		rc = -1;
	} else if (has_nonfinite(o)) {
		*why = "NaN or Infinity (not JSON)";
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
