#!/bin/sh
# The warm pool (tests/integration/pool.py) through `brig mcp` with the gvisor backend (runsc).
# One gVisor suite at a time (Makefile.am: two on the 2-core host overran their bounds).
BRIG_TEST_BACKEND=gvisor BRIG_TEST_LOCKS=gvisor exec python3 "${top_srcdir:-.}/tests/integration/pool.py"
