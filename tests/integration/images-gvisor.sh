#!/bin/sh
# Pinned images and `brig images` (tests/integration/images.py) under the gVisor backend
# (runsc-seccomp); skips when gVisor is not usable here, with the reason.
# One gVisor suite at a time (Makefile.am).
BRIG_TEST_BACKEND=gvisor BRIG_TEST_LOCKS=gvisor exec python3 "${top_srcdir:-.}/tests/integration/images.py"
