#!/bin/sh
# The escape-attempt suite and the host-leak check against the Docker Engine API backend (runc).
BRIG_TEST_BACKEND=docker-api exec python3 "${top_srcdir:-.}/tests/integration/escape.py"
