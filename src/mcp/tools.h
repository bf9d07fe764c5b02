/* tools.h - the two MCP tools: their definitions (schemas, annotations), argument checks and
 * results.  No I/O and no threads here: server.c calls these. */
#ifndef BRIG_MCP_TOOLS_H
#define BRIG_MCP_TOOLS_H

#include <json-c/json.h>
#include <stdbool.h>

#include "brig.h"

typedef enum mcp_tool {
	MCP_TOOL_RUN_CODE = 0,
	MCP_TOOL_SANDBOX_STATUS = 1,
} mcp_tool;

/* The tool with this name, or -1. */
int mcp_tool_lookup(const char *name);

/* Check run_code's arguments (an object; the caller handles NULL as {}).  On success fills
 * *req with a copy of the code in *code (caller frees) and returns NULL; otherwise returns a
 * message for the model saying what to change (caller frees).  Limits the policy enforces
 * itself (code size, maximum timeout) are left to brig_run, so refusals are audited. */
char *mcp_run_code_args(json_object *args, brig_request *req, char **code);
/* sandbox_status takes no arguments: NULL, or a message. */
char *mcp_status_args(json_object *args);

/* A CallToolResult: {content:[{type:text,text}], structuredContent?, isError}.  Owns
 * structured. */
json_object *mcp_tool_result(const char *text, json_object *structured, bool is_error);
/* The result of a run that reached the sandbox: text summary + the result object. */
json_object *mcp_run_result(const brig_result *res, const brig_policy_limits *lim, int timeout);
/* brig_run refused or failed before running (negative status): isError with the reason. */
json_object *mcp_run_failure(const brig_error *err, const brig_policy_limits *lim);
/* sandbox_status: brig_status_json's object plus the limits in force and the server's load. */
json_object *mcp_status_result(json_object *status, const brig_policy_limits *lim, int running,
			       int queued);

/* The initialize result's instructions for the model. */
char *mcp_instructions(const brig_policy_limits *lim);

#endif /* BRIG_MCP_TOOLS_H */
