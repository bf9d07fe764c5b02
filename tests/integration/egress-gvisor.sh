#!/bin/sh
# The egress allowlist (tests/integration/egress.py) under the gVisor backend: egress boxes run
# under runsc-egress (--network=host in the box's own namespace; scripts/setup-host).  One
# gVisor suite at a time (Makefile.am), and one egress suite at a time: each ends with
# `brig gc` of every idle proxy, which would take the other's between its runs.
BRIG_TEST_BACKEND=gvisor BRIG_TEST_LOCKS="gvisor egress" exec python3 "${top_srcdir:-.}/tests/integration/egress.py"
