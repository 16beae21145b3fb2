#!/bin/sh
# How `opara run`, `plan` and `info` report trouble: every error once (the library's log line is not
# repeated by the CLI's own), a missing --input file as missing (not as malformed .npy), --batch on
# a model whose batch is fixed refused (it used to be ignored), and `info` on an .onnx showing its
# real size and no .opara hash (it used to print "0 bytes, hash 0000000000000000").
. "$(dirname "$0")/cli_test_lib.sh"
work="$BUILD/cli_errors_test"

require_opara
mkdir -p "$work"
rm -f "$work/missing.opara" "$work/missing.npy"
head -c 300 /dev/urandom > "$work/garbage.npy"

# once NAME PATTERN CMD...: CMD fails and PATTERN appears on exactly one line of its stderr
once() {
    name=$1 pattern=$2
    shift 2
    if "$@" > /dev/null 2> "$work/err"; then bad "$name: succeeded"; return; fi
    n=$(grep -c -- "$pattern" "$work/err")
    if [ "$n" -eq 1 ]; then ok "$name"
    else bad "$name: '$pattern' on $n lines: $(head -c 400 "$work/err")"; fi
}

once "a missing model is reported once" "missing.opara" "$opara" run "$work/missing.opara" --iters 1
once "a missing model says why" "No such file" "$opara" run "$work/missing.opara" --iters 1

# a FIFO is not a model: refused at once (opening it used to block until a writer came)
rm -f "$work/fifo.opara"
if mkfifo "$work/fifo.opara" 2>/dev/null && command -v timeout > /dev/null; then
    once "info on a FIFO is refused without blocking" "not a regular file" timeout 20 "$opara" info "$work/fifo.opara"
    rm -f "$work/fifo.opara"
else
    echo "SKIP the FIFO check: no mkfifo or timeout here"; skip=$((skip + 1))
fi
once "info on a directory says it is one" "is a directory" "$opara" info "$work"

model=${ZOO:-build/zoo}/squeezenet.onnx
if [ -f "$model" ]; then
    once "a missing --input file says so" "cannot read $work/missing.npy: No such file" \
        "$opara" run "$model" --backend cpu --iters 1 --input "input=$work/missing.npy"
    once "a malformed --input file says so" "cannot read $work/garbage.npy as .npy" \
        "$opara" run "$model" --backend cpu --iters 1 --input "input=$work/garbage.npy"
    # an output of the model fed back as its input: a run-time shape error, printed once
    rm -rf "$work/out"
    if "$opara" run "$model" --backend cpu --iters 1 --output-dir "$work/out" > /dev/null 2>&1 && [ -f "$work/out/logits.npy" ]; then
        once "a run error is printed once" "wrong shape" \
            "$opara" run "$model" --backend cpu --iters 1 --input "input=$work/out/logits.npy"
    else bad "squeezenet ran and wrote output.npy"; fi

    if "$opara" convert "$model" "$work/fixed.opara" --shape input=1,3,224,224 > /dev/null 2> "$work/err"; then
        once "run --batch 4 on a fixed-batch model is refused" "no symbolic batch" \
            "$opara" run "$work/fixed.opara" --backend cpu --iters 1 --batch 4
        once "plan --batch 4 on a fixed-batch model is refused" "no symbolic batch" \
            "$opara" plan "$work/fixed.opara" --batch 4
    else bad "convert --shape input=1,3,224,224: $(head -c 300 "$work/err")"; fi
    if "$opara" plan "$model" --batch 4 > /dev/null 2> "$work/err"; then ok "plan --batch 4 on a batched model runs"
    else bad "plan --batch 4 on a batched model: $(head -c 300 "$work/err")"; fi

    size=$(wc -c < "$model" | tr -d ' ')
    "$opara" info "$model" > "$work/info" 2>&1
    if grep -q "^$model: ONNX, $size bytes" "$work/info" && ! grep -q "hash 0000000000000000" "$work/info"; then
        ok "info on an .onnx prints its size and no hash"
    else bad "info on an .onnx: $(head -n 1 "$work/info")"; fi
    "$opara" info "$model" --json > "$work/info.json" 2>&1
    if grep -q "\"format\": \"onnx\", \"bytes\": $size, \"content_hash\": null" "$work/info.json"; then
        ok "info --json on an .onnx: format, size, no hash"
    else bad "info --json on an .onnx: $(head -n 1 "$work/info.json")"; fi
    # squeezenet's 1,233,288 weights (tests/zoo/zoo.tsv's params column) are all f32
    if grep -q "^weights by dtype (elements): f32 1233288$" "$work/info" &&
       grep -q "\"weights\": {\"f32\": 1233288}," "$work/info.json"; then
        ok "info lists the weights by dtype"
    else bad "info's weights: $(grep -i weights "$work/info" "$work/info.json")"; fi
    if [ -f "$work/fixed.opara" ] && "$opara" info "$work/fixed.opara" | grep -q "bytes, hash [0-9a-f]\{16\}" &&
       ! "$opara" info "$work/fixed.opara" | grep -q "hash 0000000000000000"; then
        ok "info on a .opara prints its hash"
    else bad "info on a .opara prints its hash"; fi
else
    echo "SKIP checks on a model: $model missing (make zoo)"; skip=$((skip + 1))
fi

# the fp16 zoo model: f16 I/O shown as such, its weights widened to f32 at import (docs/ARCHITECTURE.md)
model=${ZOO:-build/zoo}/squeezenet_fp16.onnx
if [ -f "$model" ]; then
    "$opara" info "$model" > "$work/info16" 2>&1
    if grep -q "^  input  *f16  *\[N, 3, 224, 224\]$" "$work/info16" && grep -q "^  logits  *f16 " "$work/info16" &&
       grep -q "^weights by dtype (elements): f32 1233288$" "$work/info16"; then
        ok "info on an fp16 model shows f16 I/O and its widened weights"
    else bad "info on an fp16 model: $(cat "$work/info16")"; fi
    # f16 inputs are filled with f16 values, outputs written as .npy '<f2' and read back as an input
    rm -rf "$work/out16"
    if "$opara" run "$model" --backend cpu --iters 1 --output-dir "$work/out16" > /dev/null 2>&1 &&
       head -c 100 "$work/out16/logits.npy" | grep -q "'descr': '<f2'"; then
        ok "run on an fp16 model writes its f16 output as <f2 .npy"
    else bad "run on an fp16 model: no <f2 logits.npy"; fi
else
    echo "SKIP checks on the fp16 model: $model missing (make zoo)"; skip=$((skip + 1))
fi
finish
