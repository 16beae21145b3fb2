#!/bin/sh
# The Windows build of the CLI and the demo, under Wine (make test-windows; tools/test_windows.sh sets
# WINE, WIN, BUILD and the Wine prefix): every zoo model run on the CPU backend by opara.exe and by this
# machine's native opara on the same default inputs (symbolic dims 128), outputs compared (NMSE <= 1e-8,
# the zoo's bound against ONNX Runtime, whose agreement with the native build the Linux suites check); a
# model under a non-ASCII file name (UTF-8 arguments through wmain and _wfopen); a missing file's
# message; and the demo end to end. SKIPs when the zoo (make zoo) or numpy is missing.
WINE=${WINE:-wine}
WIN=${WIN:-build/windows}
BUILD=${BUILD:-build}
ZOO=${ZOO:-build/zoo}
PY=${PY:-/usr/bin/python3} # Debian's, where test-setup installs python3-numpy
out="$WIN/zoo"
pass=0 fail=0 skip=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

# same_outputs DIR_A DIR_B: every .npy of A present in B with the same shape and NMSE <= 1e-8
same_outputs() {
    "$PY" - "$1" "$2" <<'PY'
import glob, os, sys
import numpy as np
a_dir, b_dir = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(a_dir, "*.npy")))
if not files:
    print("  no outputs in", a_dir); sys.exit(1)
for f in files:
    a = np.load(f).astype(np.float64)
    b = np.load(os.path.join(b_dir, os.path.basename(f))).astype(np.float64)
    if a.shape != b.shape:
        print("  %s: shape %s vs %s" % (os.path.basename(f), a.shape, b.shape)); sys.exit(1)
    nmse = float(((a - b) ** 2).sum() / max((a ** 2).sum(), 1e-30))
    print("  %s: shape %s, max |diff| %.3g, NMSE %.3g" % (os.path.basename(f), a.shape, float(np.abs(a - b).max()) if a.size else 0.0, nmse))
    if not nmse <= 1e-8:
        sys.exit(1)
PY
}

rm -rf "$out"
mkdir -p "$out"
if [ ! -f "$ZOO/zoo.tsv" ]; then
    echo "SKIP zoo runs: no $ZOO/zoo.tsv (make zoo)"; skip=$((skip + 1))
elif ! "$PY" -c "import numpy" 2>/dev/null; then
    echo "SKIP zoo runs: $PY cannot import numpy"; skip=$((skip + 1))
else
    for model in $(tail -n +2 "$ZOO/zoo.tsv" | cut -f 1); do
        file="$ZOO/$model.onnx"
        [ -f "$file" ] || { echo "SKIP $model: $file missing"; skip=$((skip + 1)); continue; }
        if ! "$BUILD/opara" run "$file" --backend cpu --iters 1 --default-dim 128 --output-dir "$out/$model/linux" >"$out/$model.linux.log" 2>&1; then
            echo "SKIP $model: the native CLI cannot run it"; skip=$((skip + 1)); continue
        fi
        if "$WINE" "$WIN/opara.exe" run "$file" --backend cpu --iters 1 --default-dim 128 --output-dir "$out/$model/windows" \
            >"$out/$model.windows.log" 2>&1 && same_outputs "$out/$model/linux" "$out/$model/windows"; then
            ok "zoo $model: opara.exe on Wine equals the native build"
        else
            bad "zoo $model (logs $out/$model.*.log)"; tail -n 5 "$out/$model.windows.log"
        fi
    done
fi

# a non-ASCII file name, converted to .opara and run from there
uname="$out/modèle_ü_模型"
if [ -f "$ZOO/squeezenet.onnx" ] && cp "$ZOO/squeezenet.onnx" "$uname.onnx" &&
    "$WINE" "$WIN/opara.exe" convert "$uname.onnx" "$uname.opara" >"$out/utf8.log" 2>&1 &&
    [ -s "$uname.opara" ] &&
    "$WINE" "$WIN/opara.exe" run "$uname.opara" --backend cpu --iters 1 --output-dir "$out/utf8_out" >>"$out/utf8.log" 2>&1 &&
    [ -f "$out/utf8_out/logits.npy" ]; then
    ok "a model under a UTF-8 name is converted, saved and run"
elif [ ! -f "$ZOO/squeezenet.onnx" ]; then
    echo "SKIP utf8 name: no $ZOO/squeezenet.onnx"; skip=$((skip + 1))
else
    bad "a model under a UTF-8 name (log $out/utf8.log)"; tail -n 5 "$out/utf8.log"
fi

# a missing model: non-zero exit and the name in the message
if "$WINE" "$WIN/opara.exe" run "$out/absent.onnx" >"$out/absent.log" 2>&1; then
    bad "a missing model exits 0"
elif grep -q "absent.onnx" "$out/absent.log"; then
    ok "a missing model is named in the error: $(head -n 1 "$out/absent.log")"
else
    bad "a missing model's message: $(cat "$out/absent.log")"
fi

# the demo (make demo's program) end to end: both plans and the same logits
if "$WINE" "$WIN/demo.exe" >"$out/demo.log" 2>&1 && grep -q "both plans give the same logits" "$out/demo.log"; then
    ok "demo.exe: $(grep -E '^(sequential|opara) ' "$out/demo.log" | tr -s ' ' | tr '\n' ';')"
else
    bad "demo.exe (log $out/demo.log)"; tail -n 8 "$out/demo.log"
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
