#!/bin/sh
# The controls suite against the Docker Engine API backend (runc).
BRIG_TEST_BACKEND=docker-api exec python3 "${top_srcdir:-.}/tests/integration/controls.py"
