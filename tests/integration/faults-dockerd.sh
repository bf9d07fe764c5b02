#!/bin/sh
# Fault tests (a private dockerd: stopped, killed, restarted; signals to brig; brig gc; a full
# audit log) for the docker-cli and docker-api backends.  Needs root; skips (77) otherwise.
exec python3 "${top_srcdir:-.}/tests/integration/faults.py"
