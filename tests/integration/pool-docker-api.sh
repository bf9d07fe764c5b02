#!/bin/sh
# The warm pool (tests/integration/pool.py) through `brig mcp` with the Docker Engine API backend.
BRIG_TEST_BACKEND=docker-api exec python3 "${top_srcdir:-.}/tests/integration/pool.py"
