#!/bin/sh
# Runs the Windows test programs under Wine through tools/run_tests.sh (logs under $WIN/test-logs): the
# compile matrix's Windows cases, each unit test, the ONNX node tests, then tests/windows_zoo_test.sh
# (the CLI on every zoo model against this machine's native build, and the demo). Wine gets its own prefix under $WIN, made once here (about 10 s), so the user's
# ~/.wine is never touched, and no debug chatter, Mono or Gecko prompts. Called by make test-windows.
WINE=${WINE:-wine}
WIN=${WIN:-build/windows}
BUILD=${BUILD:-build}
WINEPREFIX="$(mkdir -p "$WIN/wine" && cd "$WIN/wine" && pwd)"
WINEDEBUG=-all
WINEDLLOVERRIDES="mscoree,mshtml="
export WINE WIN BUILD WINEPREFIX WINEDEBUG WINEDLLOVERRIDES
"$WINE" cmd /c exit >/dev/null 2>&1 || true # creates the prefix before the first timed program
# One wineserver for the whole run: left to itself it exits a few seconds after each program, and a
# program starting just then loses its connection ("wine client error: recvmsg: Connection reset").
WINESERVER=${WINESERVER:-wineserver}
if command -v "$WINESERVER" >/dev/null 2>&1; then
    "$WINESERVER" -p
    trap '"$WINESERVER" -k >/dev/null 2>&1' EXIT
fi
runs="$WIN/run"
mkdir -p "$runs"
list=""
for exe in "$@"; do
    name=$(basename "$exe" .exe)
    wrapper="$runs/$name"
    # one script per program: run_tests.sh names its log and its summary line after the file
    printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$WINE" "$(cd "$(dirname "$exe")" && pwd)/$name.exe" >"$wrapper"
    chmod +x "$wrapper"
    list="$list $wrapper"
done
# the compile matrix's Windows cases (MinGW gcc/g++/clang, each feature macro), as one more program
printf '#!/bin/sh\nexec sh tests/compile_matrix.sh windows\n' >"$runs/compile_windows"
chmod +x "$runs/compile_windows"
# the ONNX node tests on the CPU backend (the data as make conformance has it)
data=${CONF_DATA:-/usr/share/libonnx-testdata/data}
if [ -d "$data/node" ]; then
    printf '#!/bin/sh\nexec "%s" "%s" --data "%s"\n' "$WINE" "$(cd "$WIN" && pwd)/conformance.exe" "$data" >"$runs/conformance"
else
    printf '#!/bin/sh\necho "SKIP conformance: no ONNX test data in %s (make conformance installs libonnx-testdata)"\necho "0 passed, 0 failed, 1 skipped"\n' "$data" >"$runs/conformance"
fi
chmod +x "$runs/conformance"
TEST_LOGS="$WIN/test-logs" sh tools/run_tests.sh "$runs/compile_windows" $list "$runs/conformance" tests/windows_zoo_test.sh
rc=$?
exit $rc
