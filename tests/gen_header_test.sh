#!/bin/sh
# tools/gen_header: deterministic output, stale-header detection naming the line, a clear error
# for an include outside the manifest, LF-only output from CRLF sources.
BUILD=${BUILD:-build}
gen="build/tools/gen_header"
work="$BUILD/gen_header_test"
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

rm -rf "$work" && mkdir -p "$work"
cp -r src tools LICENSE opara_cuda.h "$work"/ 2>/dev/null

"$gen" --root "$work" --out "$work/a.h" && "$gen" --root "$work" --out "$work/b.h"
if cmp -s "$work/a.h" "$work/b.h" && cmp -s "$work/a.h" opara.h; then ok "regeneration is byte-identical to the committed opara.h"
else bad "regeneration is byte-identical to the committed opara.h"; fi

echo "/* an edit */" >> "$work/src/opara_log.c"
out=$("$gen" --root "$work" --check --out "$work/a.h" 2>&1); rc=$?
if [ $rc -ne 0 ] && echo "$out" | grep -q "stale" && echo "$out" | grep -q "first difference at line [0-9]" &&
   echo "$out" | grep -q "an edit"; then ok "a stale header fails --check and names the line"
else bad "a stale header fails --check and names the line: rc=$rc $out"; fi

cp src/opara_log.c "$work/src/opara_log.c"
printf '#include "opara_nowhere.h"\n' >> "$work/src/opara_log.c"
out=$("$gen" --root "$work" --out "$work/c.h" 2>&1); rc=$?
if [ $rc -ne 0 ] && echo "$out" | grep -q 'opara_log.c includes "opara_nowhere.h", which is not in the manifest'; then
    ok "an include outside the manifest is an error naming it"
else bad "an include outside the manifest is an error naming it: rc=$rc $out"; fi

cp src/opara_log.c "$work/src/opara_log.c"
sed 's/$/\r/' src/opara_util.c > "$work/src/opara_util.c"
"$gen" --root "$work" --out "$work/d.h"
if ! grep -q "$(printf '\r')" "$work/d.h" && cmp -s "$work/d.h" opara.h; then ok "CRLF sources give the same LF-only header"
else bad "CRLF sources give the same LF-only header"; fi

echo "gen-header: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
