#!/bin/sh
# Runs every test binary or script given, keeps each output under $BUILD/test-logs (or $TEST_LOGS), and ends
# with one overall "N passed, N failed, N skipped" line summed from each one's closing line.
# A program that exits non-zero, or ends without a closing line, counts as one failure.
# TEST_TIMEOUT=S (with coreutils' timeout) stops a test after S seconds: a failure (exit 124).
BUILD=${BUILD:-build}
logs=${TEST_LOGS:-$BUILD/test-logs}
limit=""
if [ -n "${TEST_TIMEOUT:-}" ] && command -v timeout >/dev/null 2>&1; then limit="timeout -k 5 $TEST_TIMEOUT"; fi
mkdir -p "$logs"
total_pass=0 total_fail=0 total_skip=0 broken=""
for t in "$@"; do
    name=$(basename "$t")
    log="$logs/$name.log"
    case "$t" in
        *.sh) $limit sh "$t" >"$log" 2>&1 ;;
        *) $limit "$t" >"$log" 2>&1 ;;
    esac
    rc=$?
    summary=$(grep -E '^([A-Za-z-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    if [ "$rc" -ne 0 ]; then grep -E '^(FAIL|SKIP) |^  ' "$log" | head -n 60; else grep -E '^SKIP ' "$log"; fi
    if [ -z "$summary" ]; then
        echo "$name: no closing line (exit $rc); see $log"
        tail -n 15 "$log"
        total_fail=$((total_fail + 1)); broken="$broken $name"
        continue
    fi
    p=$(echo "$summary" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+')
    f=$(echo "$summary" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+')
    s=$(echo "$summary" | grep -oE '[0-9]+ skipped' | grep -oE '[0-9]+')
    s=${s:-0}
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    printf '%-32s %s\n' "$name" "$summary"
    total_pass=$((total_pass + p)); total_fail=$((total_fail + f)); total_skip=$((total_skip + s))
    [ "$f" -ne 0 ] && broken="$broken $name"
done
[ -n "$broken" ] && echo "failing:$broken (logs in $logs)"
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
