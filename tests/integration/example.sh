#!/bin/sh
# The example program links libbrig through pkg-config (the build tree's brig-uninstalled.pc)
# and runs a snippet in a real container.  Reports in TAP (Makefile.am).
: "${top_srcdir:=.}" "${top_builddir:=.}"
if ! docker version >/dev/null 2>&1; then
    echo "1..0 # SKIP dockerd is not reachable"
    exit 0
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
n=0
failed=0
# check NAME COMMAND...: one TAP line; the command's output as diagnostics when it failed
check() {
    name=$1
    shift
    n=$((n + 1))
    if "$@" >"$out/check" 2>&1; then
        echo "ok $n - $name"
    else
        echo "not ok $n - $name"
        sed 's/^/# /' "$out/check"
        failed=$((failed + 1))
    fi
}
flags=$(PKG_CONFIG_PATH="$top_builddir" pkg-config --cflags --libs brig)
in_build_tree() {
    case $flags in *"$top_builddir"*) return 0 ;; esac
    echo "pkg-config did not find the build tree's brig: $flags"
    return 1
}
check "pkg-config finds the build tree's brig" in_build_tree
# BRIG_SAN_FLAGS: a sanitizer build's libbrig needs the program linked with the same runtime
# shellcheck disable=SC2086 # the flags are words
check "examples/hello.c compiles with -Wall -Wextra -Werror" \
    ${CC:-cc} -Wall -Wextra -Werror ${BRIG_SAN_FLAGS:-} "$top_srcdir/examples/hello.c" $flags -o "$out/hello"
run_hello() {
    LD_LIBRARY_PATH="$top_builddir/.libs" "$out/hello" >"$out/log" 2>&1
    rc=$?
    cat "$out/log"
    [ $rc -eq 0 ] && grep -q '^hello from 3\.' "$out/log" && grep -q '^verdict success, exit 0' "$out/log"
}
check "hello runs python in a box: 'hello from 3.', verdict success" run_hello
echo "1..$n"
[ $failed -eq 0 ]
