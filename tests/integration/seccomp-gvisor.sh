#!/bin/sh
# The seccomp suite against the gvisor backend.
# One gVisor suite at a time (Makefile.am: two on the 2-core host overran their bounds).
BRIG_TEST_BACKEND=gvisor BRIG_TEST_LOCKS=gvisor exec python3 "${top_srcdir:-.}/tests/integration/seccomp.py"
