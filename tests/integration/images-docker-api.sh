#!/bin/sh
# Pinned images and `brig images` (tests/integration/images.py) under the Docker Engine API
# backend (runc).
BRIG_TEST_BACKEND=docker-api exec python3 "${top_srcdir:-.}/tests/integration/images.py"
