#!/bin/sh
# The seccomp suite against the Docker CLI backend (runc).
BRIG_TEST_BACKEND=docker-cli exec python3 "${top_srcdir:-.}/tests/integration/seccomp.py"
