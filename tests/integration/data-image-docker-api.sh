#!/bin/sh
# The data-science image (tests/integration/data-image.py) with its example policy, under the
# Docker Engine API backend (runc).
BRIG_TEST_BACKEND=docker-api exec python3 "${top_srcdir:-.}/tests/integration/data-image.py"
