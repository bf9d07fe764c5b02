#!/bin/sh
# `brig mcp` end to end with the official MCP TypeScript SDK client (tests/mcp/e2e.mjs) against
# the real dockerd.  Automake convention: 0 passed, 1 failed, 77 skipped (the reason printed).
# Needs: node >= 20, `npm ci` in tests/mcp (the SDK pinned by package-lock.json), a reachable
# dockerd with the brig/* images.  BRIG and BRIG_BACKEND_DIR come from AM_TESTS_ENVIRONMENT.
srcdir_mcp="${top_srcdir:-.}/tests/mcp"

skip() {
	echo "SKIP: $*"
	exit 77
}

command -v node >/dev/null 2>&1 || skip "node is not installed (the MCP SDK client needs node >= 20)"
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)
[ "${major:-0}" -ge 20 ] 2>/dev/null || skip "node ${major:-?} is too old (need >= 20)"
[ -d "$srcdir_mcp/node_modules/@modelcontextprotocol/sdk" ] ||
	skip "the MCP SDK is not installed: run 'npm ci' in $srcdir_mcp"
[ -d "$srcdir_mcp/node_modules/ajv" ] || skip "ajv is not installed: run 'npm ci' in $srcdir_mcp"
command -v docker >/dev/null 2>&1 || skip "the docker CLI is not installed"
docker info >/dev/null 2>&1 || skip "dockerd is not reachable: $(docker info 2>&1 | tail -1)"
: "${BRIG:=${top_builddir:-.}/brig}"
[ -x "$BRIG" ] || { echo "FAIL: $BRIG is not built"; exit 1; }
export BRIG
exec node "$srcdir_mcp/e2e.mjs"
