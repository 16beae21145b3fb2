#!/bin/sh
# Numeric options of every subcommand (tools/cli_args.c): a value that is not wholly a number in
# the option's range is refused with a message naming the option and the value; a good value gets
# past the options (to the missing model's error).
BUILD=${BUILD:-build}
opara="$BUILD/opara"
work="$BUILD/cli_args_test"
none="$work/missing.opara"
pass=0 fail=0 skip=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

if [ ! -x "$opara" ]; then
    echo "FAIL $opara missing (make $opara)"; echo "0 passed, 1 failed, 0 skipped"; exit 1
fi
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

accepted plan --memory-budget 1.15 "$none"
accepted plan --memory-budget 0 "$none"
accepted plan --batch 4 "$none"
accepted run --iters 3 "$none"
accepted run --memory-budget 2.5e0 "$none"
accepted bench --stream-cap 4 "$none" --sim rtx2080s

model=${ZOO:-build/zoo}/squeezenet.onnx
if [ -f "$model" ]; then
    if "$opara" bench "$model" --sim rtx2080s --batch 1,x > /dev/null 2> "$work/err"; then bad "bench --batch 1,x accepted"
    elif grep -q -- "--batch takes .*'x'" "$work/err"; then ok "bench --batch 1,x refused at its bad item"
    else bad "bench --batch 1,x: stderr lacks the option: $(head -c 300 "$work/err")"; fi
    if "$opara" plan "$model" --memory-budget 1.15 2>&1 | grep -q "1.15 x sequential"; then
        ok "plan --memory-budget 1.15 reaches the plan"
    else bad "plan --memory-budget 1.15 reaches the plan"; fi
else
    echo "SKIP checks on a model: $model missing (make zoo)"; skip=$((skip + 1))
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
