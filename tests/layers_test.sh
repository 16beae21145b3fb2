#!/bin/sh
# Layers call only downward: src/ is in layer folders (tests/layers.py lists them bottom-up); no
# module calls a folder above its own or a peer folder, and no two modules reach each other through
# private calls. Calls planted upward, sideways, and a module outside the folders are caught.
BUILD=${BUILD:-build}
work="$BUILD/layers_test"
pass=0 fail=0 skip=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP layers: python3 not installed"; skip=4
else
    if out=$(python3 tests/layers.py src 2>&1); then ok "src/ modules call only downward (no cycle)"
    else bad "src/ modules call only downward: $out"; fi
    rm -rf "$work" && mkdir -p "$work" && cp -R src/. "$work"/
    printf 'static void opara__planted(void) { opara_session_destroy(0); opara__session_get_parts(0, 0); }\n' >> "$work/core/opara_util.c"
    if out=$(python3 tests/layers.py "$work" 2>&1); then bad "a planted upward call is caught"
    elif echo "$out" | grep -q "opara_session.c and opara_util.c\|opara_util.c and opara_session.c"; then ok "a planted upward call is caught, naming both modules"
    else bad "a planted upward call is caught, naming both modules: $out"; fi
    rm -rf "$work" && mkdir -p "$work" && cp -R src/. "$work"/
    printf 'static int opara__planted(void) { return opara__cudnn_out_of_memory(0); }\n' >> "$work/cpu/opara_cpu_math.c"
    if out=$(python3 tests/layers.py "$work" 2>&1); then bad "a planted call between peer layers (cpu/ -> cuda/) is caught"
    elif echo "$out" | grep -q "opara_cpu_math.c (cpu/) calls opara_cuda_cudnn.c (cuda/, a peer"; then ok "a planted call between peer layers (cpu/ -> cuda/) is caught"
    else bad "a planted call between peer layers (cpu/ -> cuda/) is caught: $out"; fi
    rm -rf "$work" && mkdir -p "$work" && cp -R src/. "$work"/ && cp "$work/core/opara_log.c" "$work/opara_stray.c"
    if out=$(python3 tests/layers.py "$work" 2>&1); then bad "a module outside the layer folders is refused"
    elif echo "$out" | grep -q "opara_stray.c is in no layer folder"; then ok "a module outside the layer folders is refused"
    else bad "a module outside the layer folders is refused: $out"; fi
fi
echo "layers: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
