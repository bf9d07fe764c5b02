#!/bin/sh
# Workspaces (tests/integration/workspace.py) under the docker-cli backend; skips (77) when it is
# not usable here, with the reason. BRIG_WS_HOOKS_ONLY: the tests of docker-cli's own workspace
# hooks; the core's expiry, path and isolation logic runs in the docker-api and gVisor suites.
BRIG_WS_HOOKS_ONLY=1 BRIG_TEST_BACKEND=docker-cli exec python3 "${top_srcdir:-.}/tests/integration/workspace.py"
