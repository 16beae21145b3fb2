#!/bin/sh
# The command-line tools, the benchmarks and the examples use only the public API of opara.h:
# 1. no file under tools/ or examples/ names a private function, type or macro (opara__*, OPARA__*),
#    except the build-time generators that do not link the library and the exemptions below;
# 2. each program builds with the implementation in a translation unit of its own (private
#    functions are `static` there, as in every amalgamated build) and only the public declarations
#    in view: a private name would not compile, a private symbol would not link.
# Exempt: tools/gen_header.c and tools/embed_kernels.c, the build-time generators (they write
# opara.h; they do not link it).
BUILD=${BUILD:-build}
out="$BUILD/tools_public"
CC=${CC:-cc}
W="-std=c99 -Wall -Wextra -Wpedantic -Werror -O1"
pass=0 fail=0 skip=0

ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

exempt() {
    case "$1" in
        tools/gen_header.c | tools/embed_kernels.c) return 0 ;;
    esac
    return 1
}

# ---- 1. no private names --------------------------------------------------------------------------
count=0
for f in $(find tools examples -type f | sort); do
    exempt "$f" && continue
    n=$(grep -c -E 'opara__|OPARA__' "$f")
    if [ "$n" -ne 0 ]; then
        bad "$f names private parts of the library:"
        grep -n -E 'opara__|OPARA__' "$f" | head -n 5 | sed 's/^/  /'
        count=$((count + n))
    fi
done
[ "$count" -eq 0 ] && ok "no opara__/OPARA__ name in tools/ (the generators aside) or examples/"

# ---- 2. every program against the public declarations only ----------------------------------------
# A copy of the sources with their `#define OPARA_IMPLEMENTATION` dropped, laid out like the tree
# so that their relative includes ("../opara.h", "cli_run.c", "../tests/ort/ort_api.h") resolve.
rm -rf "$out"
mkdir -p "$out/tools" "$out/examples" "$out/tests/ort"
cp opara.h opara_dl.h opara_cuda.h "$out/"
cp tests/ort/ort_api.h "$out/tests/ort/"
cp tests/cuda_zoo_util.h "$out/tests/"
for f in tools/*.c tools/*.h examples/*.c examples/*.h; do
    exempt "$f" && continue
    sed 's/^#define OPARA_IMPLEMENTATION$//' "$f" > "$out/$f"
done
printf '#define OPARA_IMPLEMENTATION\n#include "opara.h"\n' > "$out/impl.c"
if ! $CC $W -c "$out/impl.c" -I"$out" -o "$out/impl.o" > "$out/impl.log" 2>&1; then
    bad "the implementation alone does not compile"; sed 's/^/  /' "$out/impl.log" | head -n 20
else
    for prog in tools/opara.c tools/bench_load.c tools/bench_cpu.c tools/bench_sched.c tools/gpu_check.c examples/minimal.c \
        examples/demo.c; do
        name=$(basename "$prog" .c)
        if grep -q '^#define OPARA_IMPLEMENTATION$' "$prog" && [ -f "$out/$prog" ] &&
           $CC $W -I"$out" -I"$out/tests" "$out/$prog" "$out/impl.o" -o "$out/$name" -lm -ldl -lpthread > "$out/$name.log" 2>&1; then
            ok "$prog builds on the public API alone (implementation linked, private functions static)"
        else
            bad "$prog does not build on the public API alone"; grep -E 'error|undefined' "$out/$name.log" | head -n 10 | sed 's/^/  /'
        fi
    done
fi
# the check must be able to fail: a program that reaches a private function does not build
printf '#include "opara.h"\nint main(void) { return (int)opara__now_ns(); }\n' > "$out/private_probe.c"
if $CC $W -I"$out" "$out/private_probe.c" "$out/impl.o" -o "$out/private_probe" -lm -ldl -lpthread > "$out/probe.log" 2>&1; then
    bad "a program calling a private function built: the check above proves nothing"
else
    ok "a program calling a private function does not build"
fi

echo "tools-public-api: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
