#!/bin/sh
# Workspaces (tests/integration/workspace.py) under the docker-cli backend; skips (77) when it is
# not usable here, with the reason.
BRIG_TEST_BACKEND=docker-cli exec python3 "${top_srcdir:-.}/tests/integration/workspace.py"
