#!/bin/sh
# The example program links libbrig through pkg-config (the build tree's brig-uninstalled.pc)
# and runs a snippet in a real container.
set -eu
: "${top_srcdir:=.}" "${top_builddir:=.}"
if ! docker version >/dev/null 2>&1; then
    echo "SKIP: dockerd is not reachable"
    exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=$(PKG_CONFIG_PATH="$top_builddir" pkg-config --cflags --libs brig)
case $flags in *"$top_builddir"*) ;; *) echo "FAIL: pkg-config did not find the build tree's brig: $flags"; exit 1 ;; esac
# BRIG_SAN_FLAGS: a sanitizer build's libbrig needs the program linked with the same runtime
${CC:-cc} -Wall -Wextra -Werror ${BRIG_SAN_FLAGS:-} "$top_srcdir/examples/hello.c" $flags -o "$out/hello"
LD_LIBRARY_PATH="$top_builddir/.libs" "$out/hello" >"$out/log" 2>&1 || { cat "$out/log"; exit 1; }
cat "$out/log"
grep -q '^hello from 3\.' "$out/log"
grep -q '^verdict success, exit 0' "$out/log"
