#!/bin/sh
# The failure paths of tools/gpu_check.sh (`make gpu-check`), on the emulator variant with few steps: a step
# that fails, a step that hangs past its timeout, a budget that runs out, and a merge that breaks each still
# leave a complete results.json (every step with its status, duration and reason), the log and the warnings
# digest, at most 8 files of at most 16 MB. Needs the emulator and build/gpu_check (make test builds them).
BUILD=${BUILD:-build}
cd "$(dirname "$0")/.." || exit 1
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
PY=$(command -v python3 || echo /usr/bin/python3)

if [ ! -x "$BUILD/gpu_check" ] || [ ! -f "$BUILD/cudaemu/libcuda.so.1" ] || ! "$PY" -c 'import json' 2>/dev/null; then
    echo "SKIP gpu_check_test: needs $BUILD/gpu_check, the emulator and python3"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
T=$BUILD/gpu-check-test
rm -rf "$T"
mkdir -p "$T"

# check NAME OUT_DIR PYTHON-ASSERTIONS: the assertions see `r` (results.json) and `steps` (name -> step)
check() {
    if "$PY" - "$2" <<EOF >"$T/$1.check" 2>&1; then ok "$1"; else bad "$1"; sed 's/^/    /' "$T/$1.check"; fi
import json, os, sys
out = sys.argv[1]
files = os.listdir(out)
assert "results.json" in files and "gpu_check.log" in files, files
assert len(files) <= 8, files
for f in files:
    assert os.path.getsize(os.path.join(out, f)) <= 16_000_000, f
r = json.load(open(os.path.join(out, "results.json")))
steps = {s["name"]: s for s in r["steps"]}
for s in r["steps"]:
    assert s["status"] in ("ok", "failed", "timeout", "skipped"), s
    assert isinstance(s["seconds"], (int, float)), s
    assert s["status"] == "ok" or s["reason"], s
$3
EOF
}

# A: one step fails, one hangs; the others are not selected
GPU_CHECK_ONLY=facts,python,device-env,bench-deepfm,thread,profile GPU_CHECK_INJECT=thread:fail,profile:hang \
    GPU_CHECK_MAX_STEP_S=25 bash tools/gpu_check.sh --emu "$T/a" >"$T/a.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then ok "a failing step makes the run fail (exit $rc)"; else bad "a failing step makes the run fail (exit 0)"; fi
have_zoo=0
[ -f build/zoo/deepfm.onnx ] && have_zoo=1
check failing-and-hanging-steps "$T/a" "
want = ['facts', 'python', 'build', 'device-env', 'test-gpu-fp32', 'bench-squeezenet', 'bench-deepfm', 'torch', 'thread',
        'profile', 'test-gpu-tf32']
assert all(w in steps for w in want), sorted(steps)
assert steps['thread']['status'] == 'failed' and 'injected failure' in steps['thread']['reason'], steps['thread']
assert steps['profile']['status'] == 'timeout' and steps['profile']['timeout_s'] <= 25, steps['profile']
assert steps['build']['status'] == 'skipped' and 'not selected' in steps['build']['reason'], steps['build']
assert steps['device-env']['status'] == 'ok', steps['device-env']
if $have_zoo:
    assert steps['bench-deepfm']['status'] == 'ok', steps['bench-deepfm']
    assert any(t['model'] == 'deepfm' and t['ours_graph_ms'] for t in r['table']), r['table']
t = {x['name'].split(',')[0]: x for x in r['targets']}
assert any(x['status'] == 'fail' and 'not measured' in x['detail'] for x in r['targets']), r['targets']
assert r['ok'] is False and 'thread failed' in r['verdict'], r['verdict']
assert os.path.exists(os.path.join(out, 'warnings.txt')) and os.path.exists(os.path.join(out, 'summary.txt'))
"

# B: the budget runs out: later steps are skipped with the reason
GPU_CHECK_BUDGET_S=27 GPU_CHECK_ONLY=facts,python,device-env,thread bash tools/gpu_check.sh --emu "$T/b" >"$T/b.log" 2>&1
check budget-runs-out "$T/b" "
short = [s for s in r['steps'] if s['reason'].startswith('out of time')]
assert short, r['steps']
assert r['budget_s'] == 27
"

# C: the merge breaks: the shell writes the step list itself
GPU_CHECK_ONLY=facts GPU_CHECK_INJECT=merge:fail bash tools/gpu_check.sh --emu "$T/c" >"$T/c.log" 2>&1
check merge-breaks "$T/c" "
assert 'failed' in r['merge'], r
assert steps['facts']['status'] == 'ok' and steps['build']['status'] == 'skipped', steps
"

echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
