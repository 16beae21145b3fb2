#!/bin/sh
# Installs the Debian and npm packages that test suites and benchmarks use, when this machine
# lets us (root with apt-get/npm); otherwise says what is missing so the suites can skip with
# that reason. Idempotent and quiet when everything is present.
#   tools/setup.sh apt PKG...        install Debian packages that are missing
#   tools/setup.sh npm DIR PKG...    npm-install packages into DIR (node_modules under it)
#   tools/setup.sh aarch64           the aarch64 cross compiler and qemu-user (make test-aarch64)
#   tools/setup.sh windows           MinGW-w64 and Wine (make test-windows)
set -u
mode=${1:-}
shift || true

can_root() { [ "$(id -u)" = "0" ]; }

case "$mode" in
aarch64)
    exec sh "$0" apt gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
    ;;
windows)
    exec sh "$0" apt gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64 wine wine64
    ;;
apt)
    missing=""
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
    done
    [ -z "$missing" ] && exit 0
    if ! can_root || ! command -v apt-get >/dev/null 2>&1; then
        echo "setup: cannot install$missing (needs root and apt-get)"
        exit 1
    fi
    echo "setup: installing$missing"
    stamp=/var/lib/apt/periodic/opara-update-stamp
    if [ ! -f "$stamp" ] || [ -n "$(find "$stamp" -mmin +720 2>/dev/null)" ]; then
        apt-get update -qq >/dev/null 2>&1 && mkdir -p "$(dirname "$stamp")" && touch "$stamp"
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1 || {
        echo "setup: apt-get install$missing failed"
        exit 1
    }
    ;;
npm)
    dir=$1
    shift
    missing=""
    for p in "$@"; do
        [ -d "$dir/node_modules/$p" ] || missing="$missing $p"
    done
    [ -z "$missing" ] && exit 0
    if ! command -v npm >/dev/null 2>&1; then
        echo "setup: cannot install$missing (npm is not installed)"
        exit 1
    fi
    echo "setup: npm installing$missing into $dir"
    mkdir -p "$dir"
    ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$dir" --no-audit --no-fund --silent $missing >/dev/null 2>&1 || {
        echo "setup: npm install$missing failed"
        exit 1
    }
    ;;
*)
    echo "usage: tools/setup.sh apt PKG... | npm DIR PKG... | aarch64 | windows"
    exit 2
    ;;
esac
