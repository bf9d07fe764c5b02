#!/bin/sh
# The escape-attempt suite and the host-leak check against the gVisor backend (runsc-seccomp);
# skips (77) when gVisor is not usable here, with the reason.  escape.py holds gVisor's known
# gaps and its whole-sandbox OOM kill (see there).
# One gVisor suite at a time (Makefile.am: two on the 2-core host overran their bounds).
BRIG_TEST_BACKEND=gvisor BRIG_TEST_LOCKS=gvisor exec python3 "${top_srcdir:-.}/tests/integration/escape.py"
