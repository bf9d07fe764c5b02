/* output.h - what the MCP server writes: protocol messages on the client's stream (one line
 * each, whole, from any thread) and log lines on stderr.  Used by the method handlers
 * (methods.c) and by the workers that answer tool calls (calls.c). */
#ifndef BRIG_MCP_OUTPUT_H
#define BRIG_MCP_OUTPUT_H

#include <json-c/json.h>

#include "mcp/jsonrpc.h"

/* One diagnostic line on stderr, "brig mcp: ..." (one fprintf, so lines from several threads
 * do not mix). */
void mcp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Write msg (consumed); a broken stream is logged unless the client just went away. */
void mcp_send(jsonrpc_writer *out, json_object *msg);
/* The response {id, result}; result is consumed (NULL: an empty result). */
void mcp_send_result(jsonrpc_writer *out, json_object *id, json_object *result);
/* The error response {id, error:{code, message[, data]}}; data is consumed. */
void mcp_send_error(jsonrpc_writer *out, json_object *id, int code, json_object *data,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif /* BRIG_MCP_OUTPUT_H */
