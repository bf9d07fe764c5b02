#!/bin/sh
# Workspaces (tests/integration/workspace.py) under the docker-api backend; skips (77) when it is
# not usable here, with the reason.
BRIG_TEST_BACKEND=docker-api exec python3 "${top_srcdir:-.}/tests/integration/workspace.py"
