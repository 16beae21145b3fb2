#!/bin/sh
# Layers call only downward: no two src/ modules reach each other through private calls
# (tests/layers.py, which `make test` runs through tests/layers_test.sh), and a call planted from the bottom layer to the top one is caught.
BUILD=${BUILD:-build}
work="$BUILD/layers_test"
pass=0 fail=0 skip=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP layers: python3 not installed"; skip=2
else
    if out=$(python3 tests/layers.py src 2>&1); then ok "src/ modules call only downward (no cycle)"
    else bad "src/ modules call only downward: $out"; fi
    rm -rf "$work" && mkdir -p "$work" && cp src/*.c "$work"/
    printf 'static void opara__planted(void) { opara_session_destroy(0); opara__session_get_parts(0, 0); }\n' >> "$work/opara_util.c"
    if out=$(python3 tests/layers.py "$work" 2>&1); then bad "a planted upward call is caught"
    elif echo "$out" | grep -q "opara_session.c and opara_util.c\|opara_util.c and opara_session.c"; then ok "a planted upward call is caught, naming both modules"
    else bad "a planted upward call is caught, naming both modules: $out"; fi
fi
echo "layers: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
