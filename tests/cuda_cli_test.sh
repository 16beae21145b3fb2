#!/bin/sh
# `opara run --backend cuda` with OPARA_CUDA_DRIVER, OPARA_CUBLAS and OPARA_CUDNN pointing into the
# emulator (build/cudaemu) writes the same outputs as `--backend cpu`: every .npy of the CPU run has
# a CUDA twin of the same dtype and shape with NMSE <= 1e-8 (numpy reads both files, not opara).
# Models: squeezenet (Conv, pooling, Concat) and deepfm (int64 inputs, Gather, Gemm through cuBLAS).
. "$(dirname "$0")/cli_test_lib.sh"
emu="$BUILD/cudaemu"
work="$BUILD/cuda_cli_test"
py=/usr/bin/python3

if [ ! -x "$opara" ] || [ ! -f "$emu/libcuda.so.1" ]; then
    echo "FAIL $opara or $emu/libcuda.so.1 missing (make $opara cudaemu)"; echo "0 passed, 1 failed, 0 skipped"; exit 1
fi
if ! "$py" -c "import numpy" 2>/dev/null; then
    echo "SKIP numpy not importable by $py (apt-get install python3-numpy)"; echo "0 passed, 0 failed, 1 skipped"; exit 0
fi

# compare CPU_DIR CUDA_DIR: prints one line per output, exits 1 on a mismatch or a missing output
compare() {
    "$py" - "$1" "$2" <<'PY'
import os, sys
import numpy as np
cpu_dir, cuda_dir = sys.argv[1], sys.argv[2]
names = sorted(n for n in os.listdir(cpu_dir) if n.endswith(".npy"))
bad = not names
for n in names:
    ref = np.load(os.path.join(cpu_dir, n))
    path = os.path.join(cuda_dir, n)
    if not os.path.exists(path):
        print("  %s: missing from the CUDA run" % n); bad = True; continue
    got = np.load(path)
    if got.dtype != ref.dtype or got.shape != ref.shape:
        print("  %s: %s%s vs CPU %s%s" % (n, got.dtype, got.shape, ref.dtype, ref.shape)); bad = True; continue
    r, g = ref.astype(np.float64), got.astype(np.float64)
    den = float(np.sum(r * r))
    nmse = float(np.sum((r - g) ** 2)) / den if den > 0 else float(np.sum((r - g) ** 2))
    print("  %s %s %s: NMSE vs CPU %.2e" % (n, ref.dtype, ref.shape, nmse))
    if not nmse <= 1e-8: bad = True
sys.exit(1 if bad else 0)
PY
}

for model in squeezenet deepfm; do
    file="build/zoo/$model.onnx"
    if [ ! -f "$file" ]; then
        echo "SKIP $model: $file missing (make zoo)"; skip=$((skip + 1)); continue
    fi
    rm -rf "$work/$model" && mkdir -p "$work/$model/cpu" "$work/$model/cuda"
    "$opara" run "$file" --backend cpu --iters 1 --output-dir "$work/$model/cpu" >"$work/$model/cpu.log" 2>&1
    rc_cpu=$?
    OPARA_CUDA_DRIVER="$emu/libcuda.so.1" OPARA_CUBLAS="$emu/libcublas.so" OPARA_CUDNN="$emu/libcudnn.so" \
        "$opara" run "$file" --backend cuda --iters 1 --output-dir "$work/$model/cuda" >"$work/$model/cuda.log" 2>&1
    rc_cuda=$?
    if [ $rc_cpu -ne 0 ] || [ $rc_cuda -ne 0 ]; then
        bad "$model: opara run failed (cpu $rc_cpu, cuda $rc_cuda)"; tail -n 5 "$work/$model/cpu.log" "$work/$model/cuda.log"
        continue
    fi
    if ! grep -q "backend cuda" "$work/$model/cuda.log"; then
        bad "$model: --backend cuda did not run on CUDA: $(head -n 3 "$work/$model/cuda.log")"; continue
    fi
    if out=$(compare "$work/$model/cpu" "$work/$model/cuda"); then
        ok "$model: opara run --backend cuda (emulator) outputs match --backend cpu"; echo "$out"
    else
        bad "$model: outputs differ"; echo "$out"
    fi
done
finish
