#!/bin/sh
# Runs the given aarch64 test binaries under qemu-user twice each: as they choose (NEON on every aarch64
# CPU) and with OPARA_CPU_ISA=portable (those after --once: once, as they choose), through tools/run_tests.sh (logs under $A64/test-logs), which
# prints each run's "N passed, N failed, N skipped" line and the overall one. Called by make test-aarch64.
QEMU=${QEMU_AARCH64:-qemu-aarch64}
SYSROOT=${AARCH64_SYSROOT:-/usr/aarch64-linux-gnu}
A64=${A64:-build/aarch64}
runs="$A64/run"
mkdir -p "$runs"
list=""
isas="neon portable"
for bin in "$@"; do
    if [ "$bin" = --once ]; then isas=neon; continue; fi # the rest: once, as they choose
    name=$(basename "$bin")
    for isa in $isas; do
        cap=$([ "$isa" = portable ] && echo portable)
        wrapper="$runs/$name-$isa"
        # one script per run: run_tests.sh names its log and its summary line after the file
        printf '#!/bin/sh\nOPARA_CPU_ISA=%s exec %s -L %s %s "$@"\n' "$cap" "$QEMU" "$SYSROOT" \
            "$(cd "$(dirname "$bin")" && pwd)/$name" >"$wrapper"
        chmod +x "$wrapper"
        list="$list $wrapper"
    done
done
TEST_LOGS="$A64/test-logs" sh tools/run_tests.sh $list
