/* methods.h - the MCP methods brig mcp serves, in the era the opening message fixed (era.h):
 * one parsed line in, the answer (or a tool call handed to calls.c) out.  Everything here
 * runs on the reader thread; only tool calls go to workers. */
#ifndef BRIG_MCP_METHODS_H
#define BRIG_MCP_METHODS_H

#include <stdbool.h>
#include <stddef.h>

#include "brig.h"
#include "mcp/calls.h"
#include "mcp/era.h"
#include "mcp/jsonrpc.h"

/* What the method handlers know of the connection. */
typedef struct mcp_session {
	const brig_policy_limits *lim;
	jsonrpc_writer *out;
	mcp_calls *calls;
	bool quiet;
	char *instructions; /* for the model; owned */
	mcp_era era;        /* fixed by the opening message (era.h) */
	bool initialized;   /* legacy: initialize answered */
	bool client_ready;  /* notifications/initialized received (informational: requests are
			     * served once initialize is answered, as lenient clients expect) */
	void (*era_fixed)(void *arg); /* called once, when the era is fixed */
	void *arg;
} mcp_session;

/* Answer one line of input (a complete message, without its newline). */
void mcp_handle_line(mcp_session *s, const char *line, size_t len);

#endif /* BRIG_MCP_METHODS_H */
