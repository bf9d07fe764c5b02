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

/* Parse exactly one JSON value covering all of text[0..len): json-c's strict mode, valid UTF-8,
 * at most `depth` levels, no NUL byte, nothing after the value, and no NaN or Infinity
 * (json-c accepts both even in strict mode).  0 with *out (NULL for a JSON
 * null), or -1 with *why (a static string) and *where (the byte offset of the problem). */
int json_parse_strict(const char *text, size_t len, int depth, json_object **out, const char **why,
		      size_t *where);

#endif
