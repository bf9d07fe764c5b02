#!/bin/sh
# The seccomp suite against the gvisor backend.
BRIG_TEST_BACKEND=gvisor exec python3 "${top_srcdir:-.}/tests/integration/seccomp.py"
