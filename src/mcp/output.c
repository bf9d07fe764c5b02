/* output.c - protocol messages to the client and log lines to stderr (see output.h). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mcp/output.h"

void mcp_log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	/* one fprintf per line so that lines from several threads do not mix */
	fprintf(stderr, "brig mcp: %s\n", m);
	free(m);
}

void mcp_send(jsonrpc_writer *out, json_object *msg)
{
	if (jsonrpc_write(out, msg) < 0 && errno != EPIPE)
		mcp_log("cannot write to the client: %s", strerror(errno));
	json_object_put(msg);
}

void mcp_send_result(jsonrpc_writer *out, json_object *id, json_object *result)
{
	mcp_send(out, jsonrpc_result(id, result));
}

void mcp_send_error(jsonrpc_writer *out, json_object *id, int code, json_object *data,
		    const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	mcp_send(out, jsonrpc_error(id, code, m, data));
	free(m);
}
