#!/bin/sh
# The seccomp suite against the docker-api backend.
BRIG_TEST_BACKEND=docker-api exec python3 "${top_srcdir:-.}/tests/integration/seccomp.py"
