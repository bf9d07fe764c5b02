#!/bin/sh
# The warm pool (tests/integration/pool.py) through `brig mcp` with the gvisor backend (runsc).
BRIG_TEST_BACKEND=gvisor exec python3 "${top_srcdir:-.}/tests/integration/pool.py"
