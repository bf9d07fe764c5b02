#!/bin/sh
# Workspaces (tests/integration/workspace.py) under the gvisor backend; skips (77) when it is
# not usable here, with the reason.  One gVisor suite at a time (Makefile.am).
BRIG_TEST_BACKEND=gvisor BRIG_TEST_LOCKS=gvisor exec python3 "${top_srcdir:-.}/tests/integration/workspace.py"
