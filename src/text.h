/* text.h - the one UTF-8 validator and the one strict JSON parser, shared by the policy, the
 * seccomp files, the MCP server and the result's JSON.
 */
#ifndef BRIG_TEXT_H
#define BRIG_TEXT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (1..4; `avail` bytes readable), or 0 when the bytes
 * there are not one: no overlongs, no UTF-16 surrogates, nothing above U+10FFFF. */
size_t utf8_seq_len(const unsigned char *s, size_t avail);
/* Whether s[0..len) is valid UTF-8; on false, *bad_at (if not NULL) is the first bad byte. */
bool utf8_valid(const char *s, size_t len, size_t *bad_at);
/* s[0..len) with every byte that is not part of a valid sequence replaced by U+FFFD
 * (malloc'ed, NUL-terminated; *out_len its length if not NULL). */
char *utf8_sanitize(const char *s, size_t len, size_t *out_len);

/* Like utf8_sanitize, for program output shown as text (to a model, in a terminal): every control
 * character but LF and TAB is made visible instead of passed raw, so the result holds no NUL
 * and no escape sequence.  C0 controls become their Unicode Control Pictures (NUL -> U+2400,
 * ESC -> U+241B, CR -> U+240D), DEL becomes U+2421, and a C1 control (U+0080..U+009F)
 * becomes its 7-bit equivalent ESC + (code - 0x40) spelled with the picture (U+009B CSI ->
 * U+241B '[').  Invalid sequences become U+FFFD as above. */
char *utf8_visible(const char *s, size_t len, size_t *out_len);

/* Parse exactly one JSON value covering all of text[0..len): json-c's strict mode, valid UTF-8,
 * at most `depth` levels, no NUL byte, nothing after the value, and no NaN or Infinity
 * (json-c accepts both even in strict mode).  0 with *out (NULL for a JSON
 * null), or -1 with *why (a static string) and *where (the byte offset of the problem). */
int json_parse_strict(const char *text, size_t len, int depth, json_object **out, const char **why,
		      size_t *where);

#endif
