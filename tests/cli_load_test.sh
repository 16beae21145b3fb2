#!/bin/sh
# Every subcommand picks the loader the same way (tools/cli_load.c): the .opara magic first, then a
# name ending in .opara (its "bad magic" error, not a protobuf one), else ONNX.
. "$(dirname "$0")/cli_test_lib.sh"
work="$BUILD/cli_load_test"

require_opara
mkdir -p "$work"
head -c 300 /dev/urandom > "$work/garbage.opara"
cp "$work/garbage.opara" "$work/garbage.bin"

# expect_fail NAME PATTERN CMD...: CMD exits non-zero and its stderr contains PATTERN
expect_fail() {
    name=$1 pattern=$2
    shift 2
    if "$@" > /dev/null 2> "$work/err"; then bad "$name: succeeded on a corrupt file"
    elif grep -q "$pattern" "$work/err"; then ok "$name"
    else bad "$name: stderr lacks '$pattern': $(head -c 300 "$work/err")"; fi
}

for cmd in info plan; do
    expect_fail "$cmd garbage.opara names the magic" "magic" "$opara" $cmd "$work/garbage.opara"
done
expect_fail "run garbage.opara names the magic" "magic" "$opara" run "$work/garbage.opara" --iters 1
expect_fail "info garbage.bin is read as ONNX" "ONNX" "$opara" info "$work/garbage.bin"

model=${ZOO:-build/zoo}/squeezenet.onnx
if [ -f "$model" ]; then
    if "$opara" convert "$model" "$work/squeezenet.model" > /dev/null 2>&1 &&
       "$opara" info "$work/squeezenet.model" 2>&1 | grep -q "^nodes: 39"; then
        ok "a .opara file under another name is found by its magic"
    else bad "a .opara file under another name is found by its magic"; fi
    if "$opara" info "$model" 2>&1 | grep -q "^nodes: 39"; then ok "an .onnx file loads as ONNX"
    else bad "an .onnx file loads as ONNX"; fi
else
    echo "SKIP squeezenet checks: $model missing (make zoo)"; skip=$((skip + 1))
fi
finish
