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
# --shape and --default-dim on every subcommand that loads a model. tests/data/symbolic_relu.onnx is
# Relu over x[N, C] with both dims symbolic (written with onnx.helper: make_tensor_value_info("x",
# FLOAT, ["N", "C"]), opset 13): N is the batch, C must be sized on the command line.
sym=tests/data/symbolic_relu.onnx
expect_fail "info without a size for C names the dim and both options" "dim 1 ('C') is symbolic.*--shape.*--default-dim" \
    "$opara" info "$sym"
for cmd in info plan; do
    if "$opara" $cmd "$sym" --default-dim 3 > "$work/out" 2> "$work/err"; then ok "$cmd --default-dim sizes C"
    else bad "$cmd --default-dim: $(head -c 300 "$work/err")"; fi
done
if "$opara" info "$sym" --shape x=2,5 2> "$work/err" | grep -q "y .*\[2, 5\]"; then ok "info --shape x=2,5 gives y [2, 5]"
else bad "info --shape x=2,5: $(head -c 300 "$work/err")"; fi
if "$opara" plan "$sym" --shape x=1,7 --json 2> "$work/err" | grep -q '"strategy":"opara"'; then ok "plan --shape"
else bad "plan --shape: $(head -c 300 "$work/err")"; fi
if "$opara" run "$sym" --default-dim 4 --iters 1 --backend cpu > /dev/null 2> "$work/err"; then ok "run --default-dim"
else bad "run --default-dim: $(head -c 300 "$work/err")"; fi
if "$opara" run "$sym" --shape x=2,6 --iters 1 --backend cpu > /dev/null 2> "$work/err"; then ok "run --shape"
else bad "run --shape: $(head -c 300 "$work/err")"; fi
expect_fail "run --default-dim without a number names the option" "default-dim takes an integer" \
    "$opara" run "$sym" --default-dim C
expect_fail "plan --shape without a value says so" "shape needs a value" "$opara" plan "$sym" --shape
if "$opara" convert "$sym" "$work/sym.opara" --default-dim 3 > /dev/null 2> "$work/err"; then
    for cmd in info plan run; do
        expect_fail "$cmd refuses --default-dim on a .opara file" "fixed by .opara convert" \
            "$opara" $cmd "$work/sym.opara" --default-dim 3
    done
else bad "convert --default-dim: $(head -c 300 "$work/err")"; fi
finish
