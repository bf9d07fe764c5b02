#!/bin/sh
# `brig mcp` end to end with the official MCP TypeScript SDK client (tests/mcp/e2e.mjs) against
# the real dockerd.  e2e.mjs reports in TAP; this wrapper skips the whole file ("1..0 # SKIP
# reason") when it cannot run here.  scripts/test-all installs the client (npm ci in tests/mcp)
# and fails on this skip.
# Needs: node >= 18 (the SDK's own minimum; Debian 12's nodejs is 18.20), the SDK pinned by
# package-lock.json, a reachable dockerd with the brig/* images.  BRIG and BRIG_BACKEND_DIR come
# from AM_TESTS_ENVIRONMENT.
srcdir_mcp="${top_srcdir:-.}/tests/mcp"

skip() {
	echo "1..0 # SKIP $*"
	exit 0
}

command -v node >/dev/null 2>&1 || skip "node is not installed (the MCP SDK client needs node >= 18)"
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)
[ "${major:-0}" -ge 18 ] 2>/dev/null || skip "node ${major:-?} is too old (need >= 18)"
# The client's packages: beside e2e.mjs, or (a distcheck copy of the tree has none)
# $BRIG_MCP_NODE_MODULES, the source tree's, which scripts/test-all exports.
e2e="$srcdir_mcp/e2e.mjs"
modules="$srcdir_mcp/node_modules"
if [ ! -d "$modules" ] && [ -n "${BRIG_MCP_NODE_MODULES:-}" ]; then
	modules=$BRIG_MCP_NODE_MODULES
	work=$(mktemp -d "${TMPDIR:-/tmp}/brig-mcp-e2e.XXXXXX") || exit 1
	trap 'rm -rf "$work"' EXIT
	cp "$e2e" "$srcdir_mcp/package.json" "$work/" && ln -s "$modules" "$work/node_modules" || exit 1
	e2e="$work/e2e.mjs"
fi
[ -d "$modules/@modelcontextprotocol/sdk" ] ||
	skip "the MCP SDK is not installed: run 'npm ci' in $srcdir_mcp"
[ -d "$modules/ajv" ] || skip "ajv is not installed: run 'npm ci' in $srcdir_mcp"
command -v docker >/dev/null 2>&1 || skip "the docker CLI is not installed"
docker info >/dev/null 2>&1 || skip "dockerd is not reachable: $(docker info 2>&1 | tail -1)"
: "${BRIG:=${top_builddir:-.}/brig}"
if [ ! -x "$BRIG" ]; then
	echo "Bail out! $BRIG is not built"
	exit 1
fi
export BRIG
echo "# node $(node --version) ($(command -v node))"
# auto picks gVisor: one gVisor suite at a time (Makefile.am)
flock "${top_builddir:-.}/tests/integration/gvisor.lock" node "$e2e"
