#!/bin/sh
# A box never outlives brig (SIGKILLed brig run / brig mcp) by more than its limit plus a grace,
# and the next brig start leaves nothing behind: tests/integration/outlive.py.
BRIG_TEST_BACKEND=docker-api exec python3 "${top_srcdir:-.}/tests/integration/outlive.py"
