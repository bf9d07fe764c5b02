#!/bin/sh
# Pinned images and `brig images` (tests/integration/images.py) under the gVisor backend
# (runsc-seccomp); skips (77) when gVisor is not usable here, with the reason.
BRIG_TEST_BACKEND=gvisor exec python3 "${top_srcdir:-.}/tests/integration/images.py"
