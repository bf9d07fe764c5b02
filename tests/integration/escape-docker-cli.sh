#!/bin/sh
# The escape-attempt suite and the host-leak check against the Docker CLI backend (runc).
BRIG_TEST_BACKEND=docker-cli exec python3 "${top_srcdir:-.}/tests/integration/escape.py"
