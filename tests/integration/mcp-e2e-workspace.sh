#!/bin/sh
# Workspaces through `brig mcp` with the official MCP TypeScript SDK v2 client: create, write a
# CSV, run pandas + matplotlib on it in the data image, read the chart back as image content,
# list, delete, the audit lines (tests/mcp/e2e-workspace.mjs, through mcp-e2e.sh).
BRIG_MCP_E2E_SCRIPT=e2e-workspace.mjs exec sh "${top_srcdir:-.}/tests/integration/mcp-e2e.sh"
