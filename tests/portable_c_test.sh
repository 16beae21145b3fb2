#!/bin/sh
# MSVC compatibility as far as it can be checked without MSVC: tools/check_portable_c.py finds every
# GNU-only construct of opara.h outside a __GNUC__/__clang__ branch (the Windows build itself is
# tested with MinGW-w64 under Wine: make test-windows).
PY=/usr/bin/python3
if ! [ -x "$PY" ]; then
    echo "SKIP portable C check: $PY is not installed"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
exec "$PY" tools/check_portable_c.py opara.h
