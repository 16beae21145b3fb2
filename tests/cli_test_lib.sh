# Shared by the CLI test scripts (sourced): the counters, ok/bad, the opara binary check and the
# summary line every test ends with.
BUILD=${BUILD:-build}
opara="$BUILD/opara"
pass=0 fail=0 skip=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

# require_opara: exits (one failure) when the binary is missing
require_opara() {
    if [ ! -x "$opara" ]; then
        echo "FAIL $opara missing (make $opara)"; echo "0 passed, 1 failed, 0 skipped"; exit 1
    fi
}

# finish: the summary line, and the exit status
finish() {
    echo "$pass passed, $fail failed, $skip skipped"
    [ "$fail" -eq 0 ]
}
