#!/bin/sh
# The seccomp suite against the gvisor backend.
# One gVisor suite at a time (Makefile.am: two on the 2-core host overran their bounds).
BRIG_TEST_BACKEND=gvisor exec flock "${top_builddir:-.}/tests/integration/gvisor.lock" \
	python3 "${top_srcdir:-.}/tests/integration/seccomp.py"
