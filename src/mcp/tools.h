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
	/* the workspace tools (wstools.c), offered when the policy turns workspaces on */
	MCP_TOOL_CREATE_WORKSPACE = 2,
	MCP_TOOL_WRITE_FILE = 3,
	MCP_TOOL_READ_FILE = 4,
	MCP_TOOL_LIST_FILES = 5,
	MCP_TOOL_DELETE_WORKSPACE = 6,
} mcp_tool;

#define MCP_TOOL_IS_WORKSPACE(t) ((t) >= MCP_TOOL_CREATE_WORKSPACE)

/* The tool with this name, or -1. */
int mcp_tool_lookup(const char *name);

/* Check run_code's arguments (an object; the caller handles NULL as {}).  On success fills
 * *req with a copy of the code in *code (caller frees) and returns NULL; otherwise returns a
 * message for the model saying what to change (caller frees).  Limits the policy enforces
 * itself (code size, maximum timeout) are left to brig_run, so refusals are audited. */
char *mcp_run_code_args(json_object *args, brig_request *req, char **code, char **workspace);
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

/* ---- workspaces (wstools.c) ---- */
/* Read the policy's workspaces object: the workspace tools exist only when it is on. */
void mcp_ws_configure(const brig_policy *p);
/* workspaces.max_transfer_bytes, or 0 when workspaces are off. */
long mcp_ws_max_transfer(void);
/* Append the workspace tools' definitions (nothing when off). */
void mcp_ws_tools_add(json_object *arr);
/* Check a workspace tool's arguments: NULL, or a message for the model. */
char *mcp_ws_args(mcp_tool t, json_object *args);
/* Do it: a CallToolResult. */
json_object *mcp_ws_call(brig_ctx *ctx, mcp_tool t, json_object *args);

/* The initialize result's instructions for the model. */
char *mcp_instructions(const brig_policy_limits *lim);

#endif /* BRIG_MCP_TOOLS_H */
