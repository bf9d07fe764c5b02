#!/bin/sh
# A box never outlives brig (SIGKILLed brig run / brig mcp) by more than its limit plus a grace,
# and the next brig start leaves nothing behind: tests/integration/outlive.py.
# One gVisor suite at a time (Makefile.am).
BRIG_TEST_BACKEND=docker-api BRIG_TEST_LOCKS=gvisor exec python3 "${top_srcdir:-.}/tests/integration/outlive.py"
