#!/bin/sh
# The egress allowlist (tests/integration/egress.py) under the Engine API backend (runc).
BRIG_TEST_BACKEND=docker-api exec python3 "${top_srcdir:-.}/tests/integration/egress.py"
