#!/bin/sh
# tools/gen_header: deterministic output, stale-header detection naming the line, a clear error
# for an include outside the manifest, LF-only output from CRLF sources, the feature macros' guards,
# the NVRTC companion left as an include, and the CPU-only header (--cpu-only).
BUILD=${BUILD:-build}
gen="build/tools/gen_header"
work="$BUILD/gen_header_test"
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

rm -rf "$work" && mkdir -p "$work"
cp -r src tools LICENSE opara_dl.h opara_cuda.h "$work"/ 2>/dev/null

"$gen" --root "$work" --out "$work/a.h" && "$gen" --root "$work" --out "$work/b.h"
if cmp -s "$work/a.h" "$work/b.h" && cmp -s "$work/a.h" opara.h; then ok "regeneration is byte-identical to the committed opara.h"
else bad "regeneration is byte-identical to the committed opara.h"; fi

echo "/* an edit */" >> "$work/src/core/opara_log.c"
out=$("$gen" --root "$work" --check --out "$work/a.h" 2>&1); rc=$?
if [ $rc -ne 0 ] && echo "$out" | grep -q "stale" && echo "$out" | grep -q "first difference at line [0-9]" &&
   echo "$out" | grep -q "an edit"; then ok "a stale header fails --check and names the line"
else bad "a stale header fails --check and names the line: rc=$rc $out"; fi

cp src/core/opara_log.c "$work/src/core/opara_log.c"
printf '#include "opara_nowhere.h"\n' >> "$work/src/core/opara_log.c"
out=$("$gen" --root "$work" --out "$work/c.h" 2>&1); rc=$?
if [ $rc -ne 0 ] && echo "$out" | grep -q 'opara_log.c includes "opara_nowhere.h", which is not in the manifest'; then
    ok "an include outside the manifest is an error naming it"
else bad "an include outside the manifest is an error naming it: rc=$rc $out"; fi

cp src/core/opara_log.c "$work/src/core/opara_log.c"
sed 's/$/\r/' src/core/opara_util.c > "$work/src/core/opara_util.c"
"$gen" --root "$work" --out "$work/d.h"
if ! grep -q "$(printf '\r')" "$work/d.h" && cmp -s "$work/d.h" opara.h; then ok "CRLF sources give the same LF-only header"
else bad "CRLF sources give the same LF-only header"; fi

# feature parts: each file of a part that a macro compiles out is wrapped in that macro's guard
wrapped=1
for pair in OPARA_NO_CUDA:src/cuda/opara_backend_cuda.c OPARA_NO_CUDA:src/cuda/kernels/opara_ptx.h OPARA_NO_ONNX:src/onnx/opara_onnx.c \
            OPARA_NO_ONNX:src/onnx/opara_onnx_tensor.c OPARA_NO_ONNX:src/onnx/opara_onnx_fold.c \
            OPARA_NO_ONNX:src/onnx/opara_pb.c OPARA_NO_SIM:src/sim/opara_sim.c; do
    macro=${pair%%:*} file=${pair#*:}
    grep -B1 -x "/\* ==== BEGIN $file ==== \*/" "$work/a.h" | head -n 1 | grep -qx "#ifndef $macro" || wrapped=0
    grep -A1 -x "/\* ==== END $file ==== \*/" "$work/a.h" | tail -n 1 | grep -qx "#endif /\* $macro \*/" || wrapped=0
done
if [ $wrapped -eq 1 ] && ! grep -B1 -x "/\* ==== BEGIN src/api/opara_session.c ==== \*/" "$work/a.h" | grep -q "#ifndef"; then
    ok "a feature's files are wrapped in #ifndef OPARA_NO_<feature>, the core's are not"
else bad "a feature's files are wrapped in #ifndef OPARA_NO_<feature>, the core's are not"; fi

# cold code: the set-up files run at -O1 under GCC -O2 (OPARA__COLD_BEGIN/END inside their markers); the kernels'
# files and the executor keep the program's level
cold=1
for file in src/onnx/opara_onnx.c src/plan/opara_sched.c src/api/opara_session.c src/sim/opara_sim.c src/cuda/opara_cuda_lower.c; do
    grep -A1 -x "/\* ==== BEGIN $file ==== \*/" "$work/a.h" | tail -n 1 | grep -qx "OPARA__COLD_BEGIN" || cold=0
    grep -B1 -x "/\* ==== END $file ==== \*/" "$work/a.h" | head -n 1 | grep -qx "OPARA__COLD_END" || cold=0
done
for file in src/cpu/opara_cpu_gemm.c src/cpu/opara_cpu_conv.c src/cpu/opara_cpu_winograd.c src/cpu/opara_cpu_math.c src/cpu/opara_cpu_kernels.c \
            src/cpu/opara_cpu_base.c src/cpu/opara_backend_cpu.c src/core/opara_thread.c src/core/opara_util.c; do
    grep -A1 -x "/\* ==== BEGIN $file ==== \*/" "$work/a.h" | grep -q "OPARA__COLD" && cold=0
done
if [ $cold -eq 1 ] && grep -q '_Pragma("GCC optimize (\\"O1\\")")' "$work/a.h"; then
    ok "the set-up files are compiled at -O1 (OPARA__COLD_BEGIN), the kernels' and the executor's are not"
else bad "the set-up files are compiled at -O1 (OPARA__COLD_BEGIN), the kernels' and the executor's are not"; fi

# the NVRTC sources stay in their companion: opara.h includes it, never inlines it
if grep -qx '#  include "opara_nvrtc.h"' "$work/a.h" && ! grep -q "opara__kernel_sources\[\] =" "$work/a.h" &&
   ! grep -q "opara__kernel_dialect\[\] =" "$work/a.h"; then ok "the companion opara_nvrtc.h is included, not inlined"
else bad "the companion opara_nvrtc.h is included, not inlined"; fi

# --cpu-only: OPARA_NO_CUDA defined before anything else, the CUDA files left out, the rest as in opara.h
"$gen" --root "$work" --cpu-only --out "$work/cpu.h"
if sed -n 1,8p "$work/cpu.h" | grep -qx "#define OPARA_NO_CUDA" &&
   grep -qx "/\* ==== src/cuda/opara_backend_cuda.c left out (OPARA_NO_CUDA) ==== \*/" "$work/cpu.h" &&
   ! grep -q "BEGIN src/cuda/opara_backend_cuda.c\|BEGIN src/cuda/kernels/opara_ptx.h\|opara__ptx_elementwise" "$work/cpu.h" &&
   grep -q "BEGIN src/onnx/opara_onnx.c" "$work/cpu.h" && [ "$(wc -c < "$work/cpu.h")" -lt "$(wc -c < "$work/a.h")" ]; then
    ok "--cpu-only defines OPARA_NO_CUDA and leaves the CUDA files out"
else bad "--cpu-only defines OPARA_NO_CUDA and leaves the CUDA files out"; fi

echo "gen-header: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
