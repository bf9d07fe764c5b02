#!/bin/sh
# `brig mcp` end to end with the official MCP TypeScript SDK clients against the real dockerd:
# the v1 client (tests/mcp/e2e.mjs, the 2025 revisions) and the v2 client in its legacy, auto
# and pinned 2026-07-28 modes plus raw JSON-RPC probes (tests/mcp/e2e-2026.mjs).
# Automake convention: 0 passed, 1 failed, 77 skipped (the reason printed).
# Needs: node >= 20, `npm ci` in tests/mcp (the SDKs pinned by package-lock.json), a reachable
# dockerd with the brig/* images.  BRIG and BRIG_BACKEND_DIR come from AM_TESTS_ENVIRONMENT.
srcdir_mcp="${top_srcdir:-.}/tests/mcp"

skip() {
	echo "SKIP: $*"
	exit 77
}

command -v node >/dev/null 2>&1 || skip "node is not installed (the MCP SDK clients need node >= 20)"
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)
[ "${major:-0}" -ge 20 ] 2>/dev/null || skip "node ${major:-?} is too old (need >= 20)"
for pkg in @modelcontextprotocol/sdk @modelcontextprotocol/client ajv; do
	[ -d "$srcdir_mcp/node_modules/$pkg" ] || skip "$pkg is not installed: run 'npm ci' in $srcdir_mcp"
done
command -v docker >/dev/null 2>&1 || skip "the docker CLI is not installed"
docker info >/dev/null 2>&1 || skip "dockerd is not reachable: $(docker info 2>&1 | tail -1)"
: "${BRIG:=${top_builddir:-.}/brig}"
[ -x "$BRIG" ] || { echo "FAIL: $BRIG is not built"; exit 1; }
export BRIG
status=0
echo "# v1 SDK client (2025 revisions)"
node "$srcdir_mcp/e2e.mjs" || status=1
echo "# v2 SDK client (legacy, auto, pinned 2026-07-28) and raw 2026-07-28 probes"
node "$srcdir_mcp/e2e-2026.mjs" || status=1
exit $status
