#!/bin/sh
# The controls suite against the gVisor backend (runsc-seccomp); skips (77) when gVisor is not
# usable here, with the reason.
# One gVisor suite at a time (Makefile.am: two on the 2-core host overran their bounds).
BRIG_TEST_BACKEND=gvisor BRIG_TEST_LOCKS=gvisor exec python3 "${top_srcdir:-.}/tests/integration/controls.py"
