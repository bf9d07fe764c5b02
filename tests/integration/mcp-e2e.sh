#!/bin/sh
# `brig mcp` end to end with an official MCP TypeScript SDK client against the real dockerd:
# by default the v1 client (tests/mcp/e2e.mjs, the 2025 revisions); mcp-e2e-2026.sh runs the v2
# client in its legacy, auto and pinned 2026-07-28 modes plus raw JSON-RPC probes
# (tests/mcp/e2e-2026.mjs) through this wrapper, mcp-e2e-workspace.sh the v2 client on the
# workspace tools (tests/mcp/e2e-workspace.mjs).  The script reports in TAP; this wrapper skips
# the whole file ("1..0 # SKIP reason") when it cannot run here.  scripts/test-all installs the
# clients (npm ci in tests/mcp) and fails on this skip.
# Needs: node >= 18 for the v1 SDK (its own minimum), >= 20 for the v2 one; the SDKs pinned by
# package-lock.json; a reachable dockerd with the brig/* images.  BRIG and BRIG_BACKEND_DIR come
# from AM_TESTS_ENVIRONMENT.
srcdir_mcp="${top_srcdir:-.}/tests/mcp"
script=${BRIG_MCP_E2E_SCRIPT:-e2e.mjs}
case $script in
e2e-2026.mjs | e2e-workspace.mjs) need_node=20 sdk=@modelcontextprotocol/client ;;
*) need_node=18 sdk=@modelcontextprotocol/sdk ;;
esac

skip() {
	echo "1..0 # SKIP $*"
	exit 0
}

# a stage of scripts/test-all may leave this suite out (BRIG_TEST_CUT, as brigtest.py reads it)
suite=mcp-${script%.mjs}
for cut in ${BRIG_TEST_CUT:-}; do
	[ "$cut" != "$suite" ] || skip "${BRIG_TEST_CUT_WHY:-cut from this run (BRIG_TEST_CUT)}"
done

command -v node >/dev/null 2>&1 || skip "node is not installed (the MCP SDK client needs node >= $need_node)"
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)
[ "${major:-0}" -ge "$need_node" ] 2>/dev/null || skip "node ${major:-?} is too old (need >= $need_node)"
# The client's packages: beside the scripts, or (a distcheck copy of the tree has none)
# $BRIG_MCP_NODE_MODULES, the source tree's, which scripts/test-all exports.
dir="$srcdir_mcp"
modules="$srcdir_mcp/node_modules"
if [ ! -d "$modules" ] && [ -n "${BRIG_MCP_NODE_MODULES:-}" ]; then
	modules=$BRIG_MCP_NODE_MODULES
	dir=$(mktemp -d "${TMPDIR:-/tmp}/brig-mcp-e2e.XXXXXX") || exit 1
	trap 'rm -rf "$dir"' EXIT
	cp "$srcdir_mcp"/*.mjs "$srcdir_mcp/package.json" "$dir/" && ln -s "$modules" "$dir/node_modules" || exit 1
fi
for pkg in "$sdk" ajv; do
	[ -d "$modules/$pkg" ] || skip "$pkg is not installed: run 'npm ci' in $srcdir_mcp"
done
command -v docker >/dev/null 2>&1 || skip "the docker CLI is not installed"
docker info >/dev/null 2>&1 || skip "dockerd is not reachable: $(docker info 2>&1 | tail -1)"
: "${BRIG:=${top_builddir:-.}/brig}"
if [ ! -x "$BRIG" ]; then
	echo "Bail out! $BRIG is not built"
	exit 1
fi
export BRIG
echo "# node $(node --version) ($(command -v node)), $script"
# auto picks gVisor: one gVisor suite at a time (Makefile.am)
flock "${top_builddir:-.}/tests/integration/gvisor.lock" node "$dir/$script"
