#!/bin/sh
# Compile matrix: opara.h with OPARA_IMPLEMENTATION must build warning-free as C99/C11 with gcc
# and clang, as C++11 with g++ and clang++, with OPARA_STATIC in two translation units, with
# OPARA_NO_STDIO, after other system headers, and src/ must build as separate files; with each
# feature macro (OPARA_NO_CUDA, OPARA_NO_ONNX, OPARA_NO_SIM, all three) and against the CPU-only
# header (gen_header --cpu-only, which `make header` writes to build/opara_cpu.h), where
# tests/compile/features.c checks that a CPU session runs and each compiled-out call fails
# cleanly; with private functions plain `static` (no unused attribute: a dead function fails the
# build); and, for the NEON paths, cross-compiled
# for aarch64 (run under qemu-user). Each program also runs. A compiler (or qemu-aarch64) that is
# not installed is a skip with its name.
# `sh tests/compile_matrix.sh windows` (make test-windows) builds the Windows cases instead: MinGW-w64
# gcc as C99 (also strict ANSI), C11 and g++ C++11, two static TUs, no stdio, src/ as separate files,
# the feature macros, dead code; each run under Wine; clang for the MinGW target compiles only (it
# lacks MinGW's libgcc to link).
BUILD=${BUILD:-build}
only=${1:-}
out="$BUILD/compile"
[ "$only" = windows ] && out="$BUILD/windows/compile"
mkdir -p "$out"
W="-Wall -Wextra -Wpedantic -Werror"
pass=0 fail=0 skip=0

runner="" # what runs the built program: nothing, or qemu-user for a cross build
run_case() { # name compiler args...
    name=$1; cc=$2; shift 2
    if ! command -v "$cc" >/dev/null 2>&1; then
        echo "SKIP $name: $cc is not installed"; skip=$((skip + 1)); return
    fi
    if "$cc" "$@" -o "$out/$name" >"$out/$name.log" 2>&1 && $runner "$out/$name" >>"$out/$name.log" 2>&1; then
        echo "ok   $name"; pass=$((pass + 1))
    else
        echo "FAIL $name: $cc $*"; sed 's/^/  /' "$out/$name.log" | head -n 20; fail=$((fail + 1))
    fi
}

INC="-I. -Itests/compile"
# the CPU-only header, as `make header` writes it (build/tools/gen_header: make check-header builds it)
if ! build/tools/gen_header --cpu-only --out "$out/opara_cpu.h"; then
    echo "FAIL gen_header --cpu-only: build/tools/gen_header missing or failing (make check-header builds it)"
    fail=$((fail + 1))
fi
# Windows: MinGW-w64, each program run under Wine (the prefix of tools/test_windows.sh when it set one)
windows_cases() {
    mw=x86_64-w64-mingw32-gcc
    L="-static"
    runner="${WINE:-wine}"
    run_case "mingw-gcc-c99.exe" $mw -std=c99 $W $INC tests/compile/impl.c $L
    run_case "mingw-gcc-c99-strict-ansi.exe" $mw -std=c99 -D__STRICT_ANSI__ $W $INC tests/compile/impl.c $L
    run_case "mingw-gcc-c11.exe" $mw -std=c11 $W $INC tests/compile/impl.c $L
    run_case "mingw-gcc-late-include.exe" $mw -std=c99 $W $INC tests/compile/late_include.c $L
    run_case "mingw-gcc-static-two-tu.exe" $mw -std=c99 $W $INC tests/compile/static_a.c tests/compile/static_b.c $L
    run_case "mingw-gcc-no-stdio.exe" $mw -std=c99 $W $INC tests/compile/no_stdio.c $L
    run_case "mingw-gcc-split-src.exe" $mw -std=c99 $W $INC -Isrc/api src/*/*.c tests/compile/split_main.c $L
    run_case "mingw-gcc-features-all-in.exe" $mw -std=c99 $W $INC tests/compile/features.c $L
    run_case "mingw-gcc-no-cuda-onnx-sim.exe" $mw -std=c99 $W $INC -DOPARA_NO_CUDA -DOPARA_NO_ONNX -DOPARA_NO_SIM \
        tests/compile/features.c $L
    run_case "mingw-gcc-dead-code.exe" $mw -std=c99 $W -Wunused-function -DOPARA__PRIVATE=static $INC tests/compile/impl.c $L
    run_case "mingw-g++-c++11.exe" x86_64-w64-mingw32-g++ -std=c++11 $W $INC tests/compile/impl.cpp $L
    runner=true # compile only
    run_case "mingw-clang-c99.o" clang --target=x86_64-w64-mingw32 -std=c99 $W $INC -c tests/compile/impl.c
    runner=""
}

if [ "$only" = windows ]; then
    windows_cases
    echo "compile-windows: $pass passed, $fail failed, $skip skipped"
    [ "$fail" -eq 0 ]
    exit
fi

for cc in gcc clang; do
    for std in c99 c11; do
        run_case "$cc-$std" $cc -std=$std $W $INC tests/compile/impl.c -lm -ldl -lpthread
    done
    run_case "$cc-c99-late-include" $cc -std=c99 $W $INC tests/compile/late_include.c -lm -ldl -lpthread
    run_case "$cc-static-two-tu" $cc -std=c99 $W $INC tests/compile/static_a.c tests/compile/static_b.c -lm -ldl -lpthread
    run_case "$cc-no-stdio" $cc -std=c99 $W $INC tests/compile/no_stdio.c -lm -ldl -lpthread
    run_case "$cc-split-src" $cc -std=c99 $W $INC -Isrc/api src/*/*.c tests/compile/split_main.c -lm -ldl -lpthread
    run_case "$cc-features-all-in" $cc -std=c99 $W $INC tests/compile/features.c -lm -ldl -lpthread
    for feature in CUDA ONNX SIM; do
        run_case "$cc-no-$feature" $cc -std=c99 $W $INC -DOPARA_NO_$feature tests/compile/features.c -lm -ldl -lpthread
    done
    run_case "$cc-no-cuda-onnx-sim" $cc -std=c99 $W $INC -DOPARA_NO_CUDA -DOPARA_NO_ONNX -DOPARA_NO_SIM \
        tests/compile/features.c -lm -ldl -lpthread
    run_case "$cc-cpu-header" $cc -std=c99 $W $INC -I"$out" -DFEATURES_HEADER tests/compile/features.c -lm -ldl -lpthread
    # dead code: private functions plain `static` without the unused attribute, so one that nothing
    # calls fails the build (OPARA__PRIVATE_TOOL marks the few that only tests and tools call)
    run_case "$cc-dead-code" $cc -std=c99 $W -Wunused-function -DOPARA__PRIVATE=static $INC tests/compile/impl.c -lm -ldl -lpthread
    run_case "$cc-dead-code-no-stdio" $cc -std=c99 $W -Wunused-function -DOPARA__PRIVATE=static $INC tests/compile/no_stdio.c \
        -lm -ldl -lpthread
done
# the README's one-line build of the smallest embedding, exactly as written there
run_case "readme-minimal" cc examples/minimal.c -lm -ldl -lpthread
for cxx in g++ clang++; do
    run_case "$cxx-c++11" $cxx -std=c++11 $W $INC tests/compile/impl.cpp -lm -ldl -lpthread
done
# aarch64 (the NEON kernels): tools/setup.sh aarch64 installs the cross compiler and qemu-user
if command -v qemu-aarch64 >/dev/null 2>&1; then
    runner="qemu-aarch64 -L ${AARCH64_SYSROOT:-/usr/aarch64-linux-gnu}"
    run_case "aarch64-gcc-c99" aarch64-linux-gnu-gcc -std=c99 $W $INC tests/compile/impl.c -lm -ldl -lpthread
    run_case "aarch64-gcc-split-src" aarch64-linux-gnu-gcc -std=c99 $W $INC -Isrc/api src/*/*.c tests/compile/split_main.c -lm -ldl -lpthread
    if command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then # clang links with the cross gcc's runtime files
        run_case "aarch64-clang-c99" clang --target=aarch64-linux-gnu -std=c99 $W $INC tests/compile/impl.c -lm -ldl -lpthread
    fi
    runner=""
else
    echo "SKIP aarch64: qemu-aarch64 is not installed"; skip=$((skip + 1))
fi
echo "compile-matrix: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
