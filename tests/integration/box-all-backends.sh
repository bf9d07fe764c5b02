#!/bin/sh
# One owner of the box: explain, the engine's view of the running box and the audit line agree,
# under docker-cli, docker-api and gvisor (tests/integration/box.py).
# One gVisor suite at a time (Makefile.am).
BRIG_TEST_BACKEND=docker-api BRIG_TEST_LOCKS=gvisor exec python3 "${top_srcdir:-.}/tests/integration/box.py"
