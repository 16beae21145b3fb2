#!/bin/sh
# make kernel-report: registers, shared memory and local memory (stack frame + spills) of every
# kernel entry point in src/cuda/kernels/*.cu for sm_75, 80, 86, 87, 89 and 90, from ptxas -v on the
# PTX that nvcc generates for each architecture. Needs the CUDA toolkit (OPARA_CUDA_HOME, default
# /usr/local/cuda); without it prints why and exits 0.
CUDA_HOME=${OPARA_CUDA_HOME:-/usr/local/cuda}
NVCC="$CUDA_HOME/bin/nvcc"; PTXAS="$CUDA_HOME/bin/ptxas"
ARCHS=${ARCHS:-"75 80 86 87 89 90"}
OUT=${BUILD:-build}/kernel-report
if [ ! -x "$NVCC" ] || [ ! -x "$PTXAS" ]; then
    echo "kernel-report: skipped: nvcc/ptxas not found under $CUDA_HOME (set OPARA_CUDA_HOME)"
    exit 0
fi
mkdir -p "$OUT"
printf '%-28s %-14s %-6s %5s %9s %7s\n' kernel file arch regs smem_bytes local
status=0
for cu in src/cuda/kernels/*.cu; do
    base=$(basename "$cu" .cu)
    for arch in $ARCHS; do
        ptx="$OUT/$base.sm_$arch.ptx"
        if ! "$NVCC" -ptx -arch=sm_$arch -Isrc/cuda/kernels "$cu" -o "$ptx" 2>"$OUT/$base.sm_$arch.err"; then
            echo "FAIL nvcc $cu sm_$arch"; sed 's/^/  /' "$OUT/$base.sm_$arch.err"; status=1; continue
        fi
        "$PTXAS" -v -arch=sm_$arch "$ptx" -o /dev/null 2>&1 | awk -v file="$base.cu" -v arch="sm_$arch" '
            /Compiling entry function/ { match($0, /'"'"'[^'"'"']*'"'"'/); name = substr($0, RSTART + 1, RLENGTH - 2) }
            /bytes stack frame/ { local = $1 + $5 + $9 }
            /Used [0-9]+ registers/ {
                regs = $0; sub(/.*Used /, "", regs); sub(/ registers.*/, "", regs)
                smem = 0
                if (match($0, /[0-9]+ bytes smem/)) { smem = substr($0, RSTART, RLENGTH); sub(/ bytes smem/, "", smem) }
                printf "%-28s %-14s %-6s %5s %9s %7s\n", name, file, arch, regs, smem, local
            }'
    done
done
exit $status
