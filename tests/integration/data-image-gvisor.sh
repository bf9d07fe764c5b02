#!/bin/sh
# The data-science image (tests/integration/data-image.py) with its example policy, under the
# gVisor backend (runsc-seccomp); skips (77) when gVisor is not usable here, with the reason.
# One gVisor suite at a time (Makefile.am).
BRIG_TEST_BACKEND=gvisor BRIG_TEST_LOCKS=gvisor exec python3 "${top_srcdir:-.}/tests/integration/data-image.py"
