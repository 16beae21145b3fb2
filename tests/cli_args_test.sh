#!/bin/sh
# Numeric and named options of every subcommand (tools/cli_args.c): a value that is not wholly a
# number in the option's range (or, for --precision, not exactly a precision name) is refused with a
# message naming the option and the value; a good value gets
# past the options (to the missing model's error). `opara run --input NAME=FILE.npy` must name an
# input of the model, once, with a readable file (never a silent run on random data).
. "$(dirname "$0")/cli_test_lib.sh"
work="$BUILD/cli_args_test"
none="$work/missing.opara"

require_opara
mkdir -p "$work"
rm -f "$none"

# refused CMD OPTION VALUE [ARGS...]: exits non-zero naming OPTION and 'VALUE'
refused() {
    cmd=$1 opt=$2 value=$3
    shift 3
    if "$opara" $cmd "$@" "$opt" "$value" > /dev/null 2> "$work/err"; then bad "$cmd $opt '$value' accepted"
    elif grep -q -- "$opt takes .*'$value'" "$work/err"; then ok "$cmd $opt '$value' refused"
    else bad "$cmd $opt '$value': stderr lacks the option: $(head -c 300 "$work/err")"; fi
}

# accepted CMD OPTION VALUE [ARGS...]: the run gets as far as loading the missing model
accepted() {
    cmd=$1 opt=$2 value=$3
    shift 3
    "$opara" $cmd "$@" "$opt" "$value" > /dev/null 2> "$work/err"
    if grep -q -- "$opt" "$work/err"; then bad "$cmd $opt '$value' refused: $(head -c 300 "$work/err")"
    elif grep -q "missing.opara" "$work/err"; then ok "$cmd $opt '$value' accepted"
    else bad "$cmd $opt '$value': no error about the model: $(head -c 300 "$work/err")"; fi
}

for v in abc 1.15x 1,15 -1 nan 1e400 2e6 ""; do refused plan --memory-budget "$v" "$none"; done
for v in abc 1.15x -0.5; do refused run --memory-budget "$v" "$none"; done
for v in 0 2x -3 99999999999 " "; do refused plan --batch "$v" "$none"; done
refused plan --default-dim 4.5 "$none"
refused run --iters ten "$none"
refused run --iters 0 "$none"
refused run --threads -1 "$none"
refused run --batch 1e3 "$none"
refused bench --stream-cap -3 "$none" --sim rtx2080s
refused bench --default-dim x "$none" --sim rtx2080s
refused convert --default-dim q "$none" "$work/out.opara"
for v in fp16 FP32 tf "" "fp32 "; do refused run --precision "$v" "$none"; done

accepted plan --memory-budget 1.15 "$none"
accepted plan --memory-budget 0 "$none"
accepted plan --batch 4 "$none"
accepted run --iters 3 "$none"
accepted run --memory-budget 2.5e0 "$none"
accepted bench --stream-cap 4 "$none" --sim rtx2080s
accepted run --precision fp32 "$none"
accepted run --precision tf32 "$none"

model=${ZOO:-build/zoo}/squeezenet.onnx
if [ -f "$model" ]; then
    if "$opara" bench "$model" --sim rtx2080s --batch 1,x > /dev/null 2> "$work/err"; then bad "bench --batch 1,x accepted"
    elif grep -q -- "--batch takes .*'x'" "$work/err"; then ok "bench --batch 1,x refused at its bad item"
    else bad "bench --batch 1,x: stderr lacks the option: $(head -c 300 "$work/err")"; fi
    # input_refused NAME PATTERN SPEC...: `opara run` with these --input specs fails, stderr has PATTERN
    input_refused() {
        name=$1 pattern=$2
        shift 2
        if "$opara" run "$model" --backend cpu --iters 1 "$@" > /dev/null 2> "$work/err"; then bad "$name: ran"
        elif grep -q -- "$pattern" "$work/err"; then ok "$name"
        else bad "$name: stderr lacks '$pattern': $(head -c 300 "$work/err")"; fi
    }
    input_refused "--input of an unknown name lists the inputs" "no input of that name; its inputs: input" --input data=x.npy
    input_refused "--input without =FILE" "NAME=FILE.npy, not 'input'" --input input
    input_refused "--input without a name" "NAME=FILE.npy, not '=x.npy'" --input =x.npy
    input_refused "--input given twice" "given twice" --input input=a.npy --input input=b.npy
    input_refused "--input of a missing file" "cannot read $work/missing.npy" --input "input=$work/missing.npy"
    if "$opara" plan "$model" --memory-budget 1.15 2>&1 | grep -q "1.15 x sequential"; then
        ok "plan --memory-budget 1.15 reaches the plan"
    else bad "plan --memory-budget 1.15 reaches the plan"; fi
else
    echo "SKIP checks on a model: $model missing (make zoo)"; skip=$((skip + 1))
fi
# A model with more inputs than --input options may be given (20): the last one read from a file
# (the inputs used to be indexed into a 16-entry array: out of bounds under `make test SAN=1`); the
# other 19 inputs are pseudo-random in [-1, 1], so the sum lies within 1000 +- 19.
py=/usr/bin/python3
if "$py" -c "import onnx, numpy" 2>/dev/null; then
    "$py" - "$work" <<'PY'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper
work = sys.argv[1]
names = ["in%d" % i for i in range(20)]
inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in names]
nodes, acc = [], names[0]
for i, n in enumerate(names[1:]):
    out = "sum%d" % i
    nodes.append(helper.make_node("Add", [acc, n], [out]))
    acc = out
graph = helper.make_graph(nodes, "many_inputs", inputs, [helper.make_tensor_value_info(acc, TensorProto.FLOAT, [2, 3])])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), work + "/many_inputs.onnx")
np.save(work + "/in19.npy", np.full((2, 3), 1000.0, dtype=np.float32))
PY
    rm -rf "$work/many_out"
    if "$opara" run "$work/many_inputs.onnx" --backend cpu --iters 1 --input "in19=$work/in19.npy" \
           --output-dir "$work/many_out" > /dev/null 2> "$work/err" &&
       "$py" -c "import numpy as np, sys; y = np.load(sys.argv[1]); sys.exit(0 if (y > 980).all() and (y < 1020).all() else 1)" \
           "$work/many_out/sum18.npy"; then
        ok "--input feeds input 20 of 20 (its 1000s reach the sum)"
    else bad "--input feeds input 20 of 20: $(head -c 300 "$work/err")"; fi
else
    echo "SKIP the 20-input model: python3 onnx/numpy missing (make test-setup)"; skip=$((skip + 1))
fi
finish
