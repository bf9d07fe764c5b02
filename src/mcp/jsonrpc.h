/* jsonrpc.h - JSON-RPC 2.0 over newline-delimited streams (the MCP stdio transport), on json-c.
 *
 * Three small pieces, each usable on its own (and unit-tested that way):
 *   - framing: bytes in, complete lines out, with a hard maximum line length; an oversized line
 *     is reported once and discarded up to the next newline, so the peer cannot make us buffer
 *     without bound and the stream stays usable afterwards;
 *   - parsing: one line -> a classified message (request, notification, response) or a
 *     JSON-RPC error code (-32700 / -32600) plus the id to answer with;
 *   - writing: one message -> one line, whole, under a mutex (responses come from several
 *     threads).
 * Nothing here knows about MCP methods; see server.c.
 */
#ifndef BRIG_MCP_JSONRPC_H
#define BRIG_MCP_JSONRPC_H

#include <json-c/json.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "text.h"
#include "util.h"

/* Standard JSON-RPC 2.0 error codes. */
#define JSONRPC_PARSE_ERROR      -32700
#define JSONRPC_INVALID_REQUEST  -32600
#define JSONRPC_METHOD_NOT_FOUND -32601
#define JSONRPC_INVALID_PARAMS   -32602
#define JSONRPC_INTERNAL_ERROR   -32603
/* Implementation-defined server error (-32000..-32099): a request other than initialize or
 * ping arrived before initialize.  The value is LSP's ServerNotInitialized, which MCP clients
 * and their authors already know. */
#define JSONRPC_SERVER_NOT_INITIALIZED -32002

/* Default maximum length of one message line (without the newline). */
#define JSONRPC_DEFAULT_MAX_LINE ((size_t)4 << 20)
/* Maximum nesting depth accepted from the peer. */
#define JSONRPC_MAX_DEPTH 64

/* ---- framing --------------------------------------------------------------------------- */

typedef struct jsonrpc_lines {
	strbuf buf;      /* unconsumed bytes; buf.data[start..len) */
	size_t start;    /* first unconsumed byte */
	size_t scanned;  /* bytes after start already known to hold no newline */
	size_t max_line; /* longest acceptable line, without "\n" / "\r\n" */
	bool discarding; /* inside an oversized line: drop bytes up to the next newline */
	bool eof;        /* no more input: a final unterminated line is still returned */
} jsonrpc_lines;

typedef enum jsonrpc_line_status {
	JSONRPC_LINE_NONE = 0,      /* need more input (or, after eof, nothing left) */
	JSONRPC_LINE_OK = 1,        /* *line / *len hold one non-blank line, "\r" stripped */
	JSONRPC_LINE_OVERSIZED = 2, /* a line longer than max_line was (or is being) discarded */
} jsonrpc_line_status;

void jsonrpc_lines_init(jsonrpc_lines *l, size_t max_line);
void jsonrpc_lines_free(jsonrpc_lines *l);
/* Add input.  Call jsonrpc_lines_next() until it returns NONE after every feed, which keeps the
 * buffer below max_line + n bytes. */
void jsonrpc_lines_feed(jsonrpc_lines *l, const void *data, size_t n);
/* End of input: a pending unterminated line becomes a last line. */
void jsonrpc_lines_finish(jsonrpc_lines *l);
/* The next complete line.  The returned pointer is valid (and NUL-terminated) until the next
 * call to feed/next/free.  Blank lines (only spaces, tabs, CRs) are skipped. */
jsonrpc_line_status jsonrpc_lines_next(jsonrpc_lines *l, const char **line, size_t *len);

/* ---- parsing --------------------------------------------------------------------------- */

typedef enum jsonrpc_kind {
	JSONRPC_KIND_INVALID = 0,  /* error_code / error_message say why; id may be set */
	JSONRPC_KIND_REQUEST,      /* method + id (+ params) */
	JSONRPC_KIND_NOTIFICATION, /* method, no id (+ params) */
	JSONRPC_KIND_RESPONSE,     /* no method, result or error: a reply to us (we never ask);
				    * never answered, even when malformed */
} jsonrpc_kind;

typedef struct jsonrpc_msg {
	jsonrpc_kind kind;
	json_object *root;   /* owned: the whole message (NULL after a parse error) */
	json_object *id;     /* owned: the id to answer with, serializing exactly as received;
			      * NULL when absent or unusable (answer with null) */
	const char *method;  /* borrowed from root */
	json_object *params; /* borrowed from root; NULL when absent */
	int error_code;      /* KIND_INVALID: JSONRPC_PARSE_ERROR or JSONRPC_INVALID_REQUEST */
	char *error_message; /* KIND_INVALID: owned, for the error response */
} jsonrpc_msg;

/* Classify one line.  Always fills *msg (clear it with jsonrpc_msg_clear); returns 0 for a
 * well-formed message, else the JSON-RPC error code to answer with (also in msg->error_code).
 *
 * Rules (JSON-RPC 2.0 as narrowed by MCP):
 *   - not strict UTF-8, not exactly one JSON value, too deep          -> -32700, id null
 *   - an array (a batch: not supported since MCP 2025-06-18)          -> -32600, id null
 *   - not an object, "jsonrpc" != "2.0", method not a string or missing
 *     (and no result/error), params neither object nor array (null is
 *     taken as absent)                                                -> -32600
 *   - id present but not a string or an integer (null, 1.5, bool,
 *     object, array; 2.0 and 1e3 are integers, as in JSON Schema)    -> -32600, id null
 * The id of an otherwise invalid request is echoed when it is itself valid.  "id null" follows
 * JSON-RPC 2.0; MCP 2025-11-25's schema would rather omit the id, and its TypeScript SDK drops
 * such a message either way (it cannot match it to a request). */
int jsonrpc_parse(const char *line, size_t len, jsonrpc_msg *msg);
void jsonrpc_msg_clear(jsonrpc_msg *msg);

/* UTF-8 checks and the visible form of output: src/text.h. */

/* A stable key for an id, to match notifications/cancelled against requests in flight:
 * "s:" + the string for strings, "i:" + the decimal value for integers; NULL for other types.
 * Caller frees. */
char *jsonrpc_id_key(json_object *id);

/* ---- building -------------------------------------------------------------------------- */

/* {"jsonrpc":"2.0","id":id,"result":result}.  Takes a new reference to id and ownership of
 * result. */
json_object *jsonrpc_result(json_object *id, json_object *result);
/* {"jsonrpc":"2.0","id":id|null,"error":{"code","message"[,"data"]}}; owns data. */
json_object *jsonrpc_error(json_object *id, int code, const char *message, json_object *data);
/* {"jsonrpc":"2.0","method":method[,"params":params]}; owns params. */
json_object *jsonrpc_notification(const char *method, json_object *params);

/* ---- writing --------------------------------------------------------------------------- */

typedef struct jsonrpc_writer {
	int fd;
	pthread_mutex_t lock;
	bool broken; /* a write failed (peer gone): every later write fails at once */
} jsonrpc_writer;

void jsonrpc_writer_init(jsonrpc_writer *w, int fd);
void jsonrpc_writer_destroy(jsonrpc_writer *w);
/* Serialize msg as one line ending in "\n" and write it whole.  Thread-safe.  Does not take
 * ownership.  Returns 0, or -1 (errno set) when the stream is broken. */
int jsonrpc_write(jsonrpc_writer *w, json_object *msg);
bool jsonrpc_writer_broken(jsonrpc_writer *w);

/* The one-line serialization used on the wire (no pretty printing, "/" not escaped); the
 * string belongs to obj. */
const char *jsonrpc_to_string(json_object *obj, size_t *len);

/* cleanup attribute for json objects */
static inline void cleanup_jsonp(json_object **o)
{
	if (*o)
		json_object_put(*o);
}
#define cleanup_json __attribute__((cleanup(cleanup_jsonp)))

#endif /* BRIG_MCP_JSONRPC_H */
