#!/bin/sh
# The egress allowlist (tests/integration/egress.py) under the Engine API backend (runc).  One
# egress suite at a time (egress-gvisor.sh says why).
BRIG_TEST_BACKEND=docker-api BRIG_TEST_LOCKS=egress exec python3 "${top_srcdir:-.}/tests/integration/egress.py"
