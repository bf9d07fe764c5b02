#!/bin/sh
# `brig mcp` end to end with the official v2 MCP SDK client (@modelcontextprotocol/client): its
# legacy, auto and pinned 2026-07-28 modes and raw 2026-07-28 JSON-RPC probes
# (tests/mcp/e2e-2026.mjs), through mcp-e2e.sh.
BRIG_MCP_E2E_SCRIPT=e2e-2026.mjs exec sh "${top_srcdir:-.}/tests/integration/mcp-e2e.sh"
