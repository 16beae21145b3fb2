#!/usr/bin/env bash
# tools/gpu_check.sh [--emu] OUT_DIR -- the one-shot real-GPU check (`make gpu-check OUT=DIR`) and its
# emulator variant (`make gpu-check-emu OUT=DIR`, --emu). docs/GPU-CHECK.md says what it measures.
#
# Runs from a clean checkout with no network: installs nothing, never calls test-setup, builds only what it
# runs. Every step has a timeout and the whole run a time budget (GPU_CHECK_BUDGET_S: 480 s on a GPU, 1500 s
# on the emulator); a step that would start with less time left than it needs is skipped, and says so.
# Whatever happens, OUT_DIR ends up with results.json (every step's status, duration and reason, and every
# result), gpu_check.log, warnings.txt (our WARN/ERROR lines, emulator and driver diagnostics, test failures,
# deduplicated with counts), summary.txt and, when they exist, profile.json and test-logs.tar.gz.
#
# Knobs (mostly for testing this script): GPU_CHECK_PYTHON (the Python with torch), GPU_CHECK_BUDGET_S,
# GPU_CHECK_ONLY=step,step (run only those; the others are "skipped: not selected"), GPU_CHECK_INJECT=
# step:fail,step:hang (replace a step's command; merge:fail breaks the merge, leaving the shell's own
# results.json), GPU_CHECK_MAX_STEP_S (cap every step's timeout), GPU_CHECK_MODELS="a b", GPU_CHECK_BATCHES=1,8,
# GPU_CHECK_RUNS=N, GPU_CHECK_ZOO_TESTS=OPARA_CUDA_ZOO list (other models, batches, timed runs, zoo tests).
set -u
set -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
unset MAKEFLAGS MFLAGS MAKELEVEL # our own make calls pick their -j

EMU=0
SUB=""
case "${1:-}" in
--emu) EMU=1; shift ;;
--sub) SUB=${2:-}; shift 2 ;;
esac

# ---- helpers --------------------------------------------------------------------------------------------

now_ms() { local t=${EPOCHREALTIME/./}; echo $((10#$t / 1000)); }

json_str() { # a JSON string literal of $1 (control characters dropped)
    local s=$1
    s=${s//\\/\\\\}
    s=${s//\"/\\\"}
    s=${s//$'\n'/\\n}
    s=${s//$'\t'/ }
    s=$(printf '%s' "$s" | tr -d '\000-\010\013-\037')
    printf '"%s"' "$s"
}

# ---- sub-steps (run by the steps below under their timeouts) ----------------------------------------------

# --sub python: the Python that has torch, torchvision and onnx (else one with torch, else none): prints its path.
find_python() {
    local c p list=() want='import importlib.util as u, sys; sys.exit(0 if all(u.find_spec(m) for m in sys.argv[1:]) else 1)'
    [ -n "${GPU_CHECK_PYTHON:-}" ] && list+=("$GPU_CHECK_PYTHON")
    for c in python3 python; do p=$(command -v "$c" 2>/dev/null) && list+=("$p"); done
    [ -n "${CONDA_PREFIX:-}" ] && list+=("$CONDA_PREFIX/bin/python")
    [ -n "${VIRTUAL_ENV:-}" ] && list+=("$VIRTUAL_ENV/bin/python")
    list+=(/opt/conda/bin/python /usr/local/bin/python3 /usr/bin/python3)
    for p in /opt/*/bin/python3 /opt/*/.venv/bin/python3 /opt/*/venv/bin/python3 /root/*/bin/python3 /root/.*/bin/python3 /home/*/*/bin/python3 /workspace/*/bin/python3; do
        [ -x "$p" ] && list+=("$p")
    done
    for mods in "torch torchvision onnx" "torch"; do
        for p in "${list[@]}"; do
            # shellcheck disable=SC2086
            [ -x "$p" ] && timeout 30 "$p" -c "$want" $mods 2>/dev/null && { echo "$p"; return 0; }
        done
    done
    return 1
}

# --sub zoo PY MODEL...: export the zoo models that build/zoo lacks (a model already there is reused), in
# parallel, then zoo.tsv when it is missing. Never touches a model that exists (build/zoo may be shared).
sub_zoo() {
    local py=$1 m pids=() fail=0
    shift
    mkdir -p build/zoo
    for m in "$@"; do
        if [ -f "build/zoo/$m.onnx" ] && [ -f "build/zoo/$m/input_0.pb" ]; then
            echo "zoo: $m reused (build/zoo/$m.onnx)"
            continue
        fi
        ( "$py" -B tests/zoo/export.py "$m" "build/zoo/$m.onnx" && "$py" -B tests/zoo/make_inputs.py build/zoo "$m" ) &
        pids+=($!)
    done
    for m in "${pids[@]}"; do wait "$m" || fail=1; done
    if [ ! -f build/zoo/zoo.tsv ]; then "$py" -B tests/zoo/zoo_table.py build/zoo build/zoo/zoo.tsv || fail=1; fi
    for m in "$@"; do [ -f "build/zoo/$m.onnx" ] || { echo "zoo: $m missing after export" >&2; fail=1; }; done
    return $fail
}

# --sub facts FILE: machine facts (text; results.json embeds them).
sub_facts() {
    {
        echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "host: $(uname -a)"
        echo "cpus: $(nproc 2>/dev/null)"
        echo "memory: $(free -g 2>/dev/null | awk '/^Mem:/ {print $2 " GiB total, " $7 " GiB available"}')"
        echo "cpu model: $(awk -F: '/model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null)"
        echo "git: $(git rev-parse HEAD 2>/dev/null) $(git status --porcelain 2>/dev/null | wc -l | tr -d ' ') changed files"
        echo "cc: $(${CC:-cc} --version 2>/dev/null | head -n 1)"
        echo "nvcc: $( (command -v nvcc || ls /usr/local/cuda/bin/nvcc) 2>/dev/null | head -n 1) $( (nvcc --version || /usr/local/cuda/bin/nvcc --version) 2>/dev/null | tail -n 2 | tr '\n' ' ')"
        echo "CUDA_HOME: ${CUDA_HOME:-} CONDA_PREFIX: ${CONDA_PREFIX:-} VIRTUAL_ENV: ${VIRTUAL_ENV:-}"
        echo "LD_LIBRARY_PATH: ${LD_LIBRARY_PATH:-}"
        echo "OPARA_*: $(env | grep '^OPARA_' | tr '\n' ' ')"
        echo "ldconfig: $(ldconfig -p 2>/dev/null | grep -E 'libcuda\.so|libcublas\.so|libcudnn\.so|libnvrtc\.so|libcupti\.so' | awk '{print $NF}' | tr '\n' ' ')"
        echo "---- nvidia-smi"
        if command -v nvidia-smi >/dev/null 2>&1; then
            timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit,pstate,temperature.gpu,mig.mode.current --format=csv 2>&1
            timeout 20 nvidia-smi 2>&1
        else
            echo "nvidia-smi: not found"
        fi
    } >"$1" 2>&1
    return 0
}

case "$SUB" in
python) find_python; exit $? ;;
zoo) sub_zoo "$@"; exit $? ;;
facts) sub_facts "$@"; exit $? ;;
"") ;;
*) echo "gpu_check.sh: unknown --sub $SUB" >&2; exit 2 ;;
esac

# ---- configuration ----------------------------------------------------------------------------------------

OUT=${1:-}
if [ -z "$OUT" ]; then echo "usage: tools/gpu_check.sh [--emu] OUT_DIR" >&2; exit 2; fi
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || { echo "gpu_check.sh: cannot create $OUT" >&2; exit 2; }
BUILD=${BUILD:-build}
SCRATCH=$ROOT/$BUILD/gpu-check
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH/log" "$SCRATCH/frag"
STEPS=$SCRATCH/steps.jsonl
: >"$STEPS"
NPROC=$(nproc 2>/dev/null || echo 4)
START_MS=$(now_ms)

if [ "$EMU" = 1 ]; then
    VARIANT=emu
    BUDGET_S=${GPU_CHECK_BUDGET_S:-1500}
    MODELS="squeezenet deepfm"
    BATCHES=1
    RUNS=5
    WARMUP=1
    PROFILE_MODEL=squeezenet
    THREAD_MODEL=squeezenet
    ZOO_TESTS="squeezenet:1:1,deepfm:1:1"
    TEST_BINS_FP32="$BUILD/tests/test_cuda_loader $BUILD/tests/test_cuda_dnn_run $BUILD/tests/test_cuda_zoo"
    TEST_BINS_TF32="$BUILD/tests/test_cuda_zoo"
    export OPARA_CUDA_DRIVER=${OPARA_CUDA_DRIVER:-$ROOT/$BUILD/cudaemu/libcuda.so.1}
    export OPARA_CUBLAS=${OPARA_CUBLAS:-$ROOT/$BUILD/cudaemu/libcublas.so}
    export OPARA_CUDNN=${OPARA_CUDNN:-$ROOT/$BUILD/cudaemu/libcudnn.so}
    export OPARA_EMU_DEVICE=${OPARA_EMU_DEVICE:-h100} # TF32 rounding where the emulator models it
else
    VARIANT=gpu
    BUDGET_S=${GPU_CHECK_BUDGET_S:-480}
    MODELS="googlenet inception_v3 resnet50 squeezenet bert_base"
    BATCHES=1,8
    RUNS=100
    WARMUP=10
    PROFILE_MODEL=googlenet
    THREAD_MODEL=googlenet
    ZOO_TESTS="squeezenet:1:5,deepfm:1:5,deepfm:4:5,googlenet:1:1,resnet50:1:1,bert_base:1:1:g"
    TEST_BINS_FP32="" # all of test-gpu
    TEST_BINS_TF32="$BUILD/tests/test_cuda_backend $BUILD/tests/test_cuda_cudnn $BUILD/tests/test_cuda_dnn_run $BUILD/tests/test_cuda_zoo"
fi
# for testing this script: other models, batches, run counts
MODELS=${GPU_CHECK_MODELS:-$MODELS}
BATCHES=${GPU_CHECK_BATCHES:-$BATCHES}
RUNS=${GPU_CHECK_RUNS:-$RUNS}
ZOO_TESTS=${GPU_CHECK_ZOO_TESTS:-$ZOO_TESTS}
ZOO_MODELS=$(echo "$MODELS deepfm" | tr ' ' '\n' | sort -u | tr '\n' ' ')
RESERVE_S=25 # merge and packaging
DEADLINE_MS=$((START_MS + (BUDGET_S - RESERVE_S) * 1000))

left_s() { local l=$(((DEADLINE_MS - $(now_ms)) / 1000)); [ "$l" -lt 0 ] && l=0; echo "$l"; }
# seconds a program may plan with inside a step capped at $1 (its own --max-seconds): two thirds of its timeout
plan_s() { local l; l=$(left_s); [ "$l" -gt "$1" ] && l=$1; echo $((l * 2 / 3)); }
selected() { [ -z "${GPU_CHECK_ONLY:-}" ] || [[ ",$GPU_CHECK_ONLY," == *",$1,"* ]]; }
injected() { [[ ",${GPU_CHECK_INJECT:-}," == *",$1:$2,"* ]]; }

STEP_NO=0
record() { # name status seconds rc timeout_s reason
    printf '{"name": %s, "status": %s, "seconds": %s, "rc": %s, "timeout_s": %s, "reason": %s}\n' \
        "$(json_str "$1")" "$(json_str "$2")" "$3" "$4" "$5" "$(json_str "$6")" >>"$STEPS"
}

# run_step NAME MIN_S MAX_S -- COMMAND...: stdout to frag/NAME.out, stderr to frag/NAME.err, both into the log.
run_step() {
    local name=$1 min=$2 max=$3 left t rc t0 secs status reason chunk
    shift 4
    STEP_NO=$((STEP_NO + 1))
    chunk=$SCRATCH/log/$(printf '%02d' $STEP_NO)-$name.txt
    if ! selected "$name"; then
        record "$name" skipped 0 null null "not selected (GPU_CHECK_ONLY=$GPU_CHECK_ONLY)"
        return 0
    fi
    left=$(left_s)
    if [ "$left" -lt "$min" ]; then
        record "$name" skipped 0 null null "out of time: ${left} s left of the ${BUDGET_S} s budget, the step needs ${min} s"
        echo "==== $name: skipped, ${left} s left, needs ${min} s" >"$chunk"
        return 0
    fi
    t=$max
    [ "$left" -lt "$t" ] && t=$left
    [ -n "${GPU_CHECK_MAX_STEP_S:-}" ] && [ "$GPU_CHECK_MAX_STEP_S" -lt "$t" ] && t=$GPU_CHECK_MAX_STEP_S
    if injected "$name" fail; then set -- sh -c 'echo "injected failure (GPU_CHECK_INJECT)" >&2; exit 3'; fi
    if injected "$name" hang; then set -- sleep 100000; fi
    echo "gpu-check: $name (timeout ${t} s, ${left} s left)" >&2
    t0=$(now_ms)
    timeout -k 10 "$t" "$@" >"$SCRATCH/frag/$name.out" 2>"$SCRATCH/frag/$name.err"
    rc=$?
    secs=$(awk -v a="$t0" -v b="$(now_ms)" 'BEGIN {printf "%.1f", (b - a) / 1000}')
    if [ $rc -eq 0 ]; then
        status=ok reason=""
    elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        status=timeout reason="killed after its ${t} s timeout"
    else
        status=failed
        reason=$(grep -v '^[[:space:]]*$' "$SCRATCH/frag/$name.err" | grep -vE '^opara: info:|^gpu-check: ' | tail -n 3 |
            cut -c1-400 | tr '\n' ' ')
        [ -z "$reason" ] && reason=$(grep -v '^[[:space:]]*$' "$SCRATCH/frag/$name.out" | tail -n 2 | cut -c1-400 | tr '\n' ' ')
        reason="exit $rc: $reason"
    fi
    record "$name" "$status" "$secs" "$rc" "$t" "$reason"
    {
        echo "==== $name: $status in ${secs} s (rc $rc, timeout ${t} s): $*"
        echo "---- stdout"
        head -c 3000000 "$SCRATCH/frag/$name.out"
        echo "---- stderr"
        head -c 3000000 "$SCRATCH/frag/$name.err"
    } >"$chunk"
    echo "gpu-check: $name $status (${secs} s)" >&2
    return $rc
}

# ---- the steps -------------------------------------------------------------------------------------------

echo "gpu-check ($VARIANT): budget ${BUDGET_S} s, results in $OUT" >&2
run_step facts 1 30 -- "$0" --sub facts "$SCRATCH/frag/facts.txt"
run_step python 1 120 -- "$0" --sub python
PY=$(head -n 1 "$SCRATCH/frag/python.out" 2>/dev/null)
PY_ANY=${PY:-$(command -v python3 || echo /usr/bin/python3)}

# Build, zoo export and PyTorch's environment at once (CPU work; nothing touches the GPU yet).
BUILD_TARGETS="gpu-check-build"
# Warnings are not fatal here: a newer compiler's new warning must not cost the one GPU session; the
# build step still counts and reports them (results.json build.compiler_warnings, warnings.txt).
NO_WERROR="WARN=-Wall -Wextra -Wpedantic"
[ "$EMU" = 1 ] && BUILD_TARGETS="gpu-check-build-emu"
run_step build 30 300 -- make --no-print-directory -j"$NPROC" BUILD="$BUILD" "$NO_WERROR" $BUILD_TARGETS &
BUILD_PID=$!
if [ -n "$PY" ]; then
    # shellcheck disable=SC2086
    run_step zoo 20 240 -- "$0" --sub zoo "$PY" $ZOO_MODELS &
    ZOO_PID=$!
    run_step torch-env 5 90 -- "$PY" tools/gpu_check_torch.py env &
    TENV_PID=$!
    wait $ZOO_PID $TENV_PID
else
    record zoo failed 0 null null "no Python with torch, torchvision and onnx found (set GPU_CHECK_PYTHON)"
    record torch-env failed 0 null null "no Python with torch found (set GPU_CHECK_PYTHON)"
    if [ -f build/zoo/zoo.tsv ]; then record zoo-reuse ok 0 0 null "build/zoo exists: its models are used as they are"; fi
fi
wait $BUILD_PID
STEP_NO=$((STEP_NO + 3)) # the background steps numbered their own chunks

# The loader's own search (nothing set on a GPU), then explicit paths for what it did not find.
run_step device-env 5 60 -- "$BUILD/gpu_check" env
LIB_NOTE=""
if [ "$EMU" = 0 ]; then
    wheel_lib() { # the first library named $1* that PyTorch's wheels or the toolkit hold
        local f
        f=$(grep -oE '"[^"]*/'"$1"'[^"/]*"' "$SCRATCH/frag/torch-env.out" 2>/dev/null | tr -d '"' | sort | head -n 1)
        [ -z "$f" ] && f=$(ls "${CUDA_HOME:-/usr/local/cuda}"/lib64/"$1"* 2>/dev/null | head -n 1)
        echo "$f"
    }
    if [ -z "${OPARA_CUDA_DRIVER:-}" ] && ! grep -q '"kind": "device".*"status": "ok"' "$SCRATCH/frag/device-env.out" 2>/dev/null; then
        for d in /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/cuda/compat /usr/lib/wsl/lib; do
            if [ -e "$d/libcuda.so.1" ]; then
                export OPARA_CUDA_DRIVER="$d/libcuda.so.1"
                LIB_NOTE=" OPARA_CUDA_DRIVER=$OPARA_CUDA_DRIVER (the loader did not find the driver)"
                break
            fi
        done
    fi
    loader_gemm=$(grep -o '"gemm": "[^"]*"' "$SCRATCH/frag/device-env.out" 2>/dev/null | head -n 1)
    for pair in OPARA_CUBLAS:libcublas.so.1 OPARA_CUDNN:libcudnn.so.9 OPARA_NVRTC:libnvrtc.so.1 OPARA_CUPTI:libcupti.so.1; do
        var=${pair%%:*} lib=${pair#*:}
        [ -n "${!var:-}" ] && continue
        path=$(wheel_lib "$lib")
        [ -z "$path" ] && continue
        # test-gpu needs explicit libraries (its tests default to the emulator's), and the later steps use the
        # same ones, so every number comes from one set of libraries; device-env above reported the loader's own
        export "$var=$path"
        LIB_NOTE="$LIB_NOTE $var=$path"
    done
    LIB_NOTE="loader alone: ${loader_gemm:-no session}; explicit for the steps below:${LIB_NOTE:- none found}"
    echo "$LIB_NOTE" >"$SCRATCH/frag/libraries.txt"
fi

TEST_ENV=(env OPARA_CUDA_ZOO="$ZOO_TESTS" TEST_TIMEOUT=300)
run_step test-gpu-fp32 30 200 -- "${TEST_ENV[@]}" TEST_LOGS="$SCRATCH/test-logs-fp32" make --no-print-directory test-gpu \
    BUILD="$BUILD" "$NO_WERROR" ${TEST_BINS_FP32:+CUDA_GPU_TESTS="$TEST_BINS_FP32"}

# FP32 (the targets) before TF32 everywhere: what the budget drops first is the TF32 half.
BENCH_CAP=75
[ "$EMU" = 1 ] && BENCH_CAP=300
for m in $MODELS; do
    run_step "bench-$m" 20 $BENCH_CAP -- "$BUILD/gpu_check" bench "$m" --batches "$BATCHES" --runs "$RUNS" \
        --warmup "$WARMUP" --precisions fp32 --max-seconds "$(plan_s $BENCH_CAP)"
done

TORCH_MODELS=$(echo $MODELS | tr ' ' ',')
if [ -n "$PY" ]; then
    compile_s=0
    [ "$(left_s)" -gt 200 ] && compile_s=60
    run_step torch 20 200 -- "$PY" tools/gpu_check_torch.py bench --models "$TORCH_MODELS" --batches "$BATCHES" \
        --precisions fp32,tf32 --runs "$RUNS" --warmup "$WARMUP" --compile-seconds $compile_s --max-seconds "$(plan_s 200)"
else
    record torch skipped 0 null null "no Python with torch found"
fi

run_step thread 10 90 -- "$BUILD/gpu_check" thread "$THREAD_MODEL"
run_step profile 10 120 -- "$BUILD/opara" run "build/zoo/$PROFILE_MODEL.onnx" --backend cuda --iters 20 \
    --profile-json "$SCRATCH/frag/profile.json"
if grep -qE '"name": "profile", "status": "(failed|timeout)"' "$STEPS"; then # CUPTI's record path never ran before
    run_step profile-no-cupti 10 120 -- env OPARA_CUPTI=none "$BUILD/opara" run "build/zoo/$PROFILE_MODEL.onnx" \
        --backend cuda --iters 20 --profile-json "$SCRATCH/frag/profile.json"
fi
for m in $MODELS; do
    run_step "bench-tf32-$m" 20 $BENCH_CAP -- "$BUILD/gpu_check" bench "$m" --batches "$BATCHES" --runs "$RUNS" \
        --warmup "$WARMUP" --precisions tf32 --tf32-modes gs --max-seconds "$(plan_s $BENCH_CAP)"
done
run_step test-gpu-tf32 30 150 -- "${TEST_ENV[@]}" TEST_LOGS="$SCRATCH/test-logs-tf32" OPARA_CUDA_PRECISION=tf32 \
    make --no-print-directory test-gpu BUILD="$BUILD" "$NO_WERROR" CUDA_GPU_TESTS="$TEST_BINS_TF32"

# ---- results ---------------------------------------------------------------------------------------------

cat "$SCRATCH"/log/*.txt >"$SCRATCH/gpu_check.log" 2>/dev/null
WALL_S=$(awk -v a="$START_MS" -v b="$(now_ms)" 'BEGIN {printf "%.1f", (b - a) / 1000}')
rm -f "$OUT/results.json" "$OUT/summary.txt" "$OUT/warnings.txt" "$OUT/profile.json" "$OUT/test-logs.tar.gz"
injected merge fail && PY_ANY=false
timeout -k 5 60 "$PY_ANY" -B tools/gpu_check_merge.py --variant "$VARIANT" --budget "$BUDGET_S" --wall "$WALL_S" \
    --models "$MODELS" --batches "$BATCHES" "$SCRATCH" "$OUT" 2>>"$SCRATCH/gpu_check.log"
MERGE_RC=$?
if [ ! -s "$OUT/results.json" ]; then # no Python, or the merge broke: the steps alone, from the shell
    {
        printf '{"schema": "opara-gpu-check/1", "variant": %s, "wall_s": %s, "budget_s": %s, ' \
            "$(json_str "$VARIANT")" "$WALL_S" "$BUDGET_S"
        printf '"merge": %s, "steps": [' "$(json_str "tools/gpu_check_merge.py failed (exit $MERGE_RC, $PY_ANY); only the step list")"
        sed '$!s/$/,/' "$STEPS"
        printf ']}\n'
    } >"$OUT/results.json"
fi
[ -f "$SCRATCH/frag/profile.json" ] && cp "$SCRATCH/frag/profile.json" "$OUT/profile.json"
cp "$SCRATCH/gpu_check.log" "$OUT/gpu_check.log"
if [ "$(stat -c %s "$OUT/gpu_check.log")" -gt 16000000 ]; then # keep the start and the end
    { head -c 8000000 "$SCRATCH/gpu_check.log"; echo; echo "[... cut to 16 MB ...]"; tail -c 7900000 "$SCRATCH/gpu_check.log"; } >"$OUT/gpu_check.log"
fi
logs=$(cd "$SCRATCH" && ls -d test-logs-* 2>/dev/null)
# shellcheck disable=SC2086
[ -n "$logs" ] && tar -czf "$OUT/test-logs.tar.gz" -C "$SCRATCH" $logs 2>/dev/null
[ -f "$OUT/test-logs.tar.gz" ] && [ "$(stat -c %s "$OUT/test-logs.tar.gz")" -gt 16000000 ] && rm -f "$OUT/test-logs.tar.gz"
echo "gpu-check ($VARIANT): done in ${WALL_S} s; $OUT:" >&2
ls -l "$OUT" >&2
[ -f "$OUT/summary.txt" ] && cat "$OUT/summary.txt" >&2
exit $MERGE_RC
