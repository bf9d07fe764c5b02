#!/bin/sh
# The front doors and the documentation's claims about them (tests/integration/frontdoor.py);
# its runs use the Docker Engine API backend (runc).
BRIG_TEST_BACKEND=docker-api exec python3 "${top_srcdir:-.}/tests/integration/frontdoor.py"
