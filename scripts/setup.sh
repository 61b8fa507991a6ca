#!/usr/bin/env bash
# Create .venv and install the project (and, with --test, test tools, Chromium and a CJK font).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
if [ "${1:-}" = "--test" ]; then
    .venv/bin/python -m pip install -q -e '.[test]'
    if [ ! -x /usr/bin/chromium ] || ! fc-list 2>/dev/null | grep -qi 'wqy\|noto sans cjk'; then
        SUDO=""
        if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
        $SUDO apt-get update -q || true
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium fonts-wqy-microhei
    fi
else
    .venv/bin/python -m pip install -q -e .
fi
# compile the engine's Numba kernels now, so that the first game and 'xiangqi engine' start at full strength
# (the test run compiles them once into its own cache before its workers start: tests/conftest.py)
if [ "${1:-}" != "--test" ]; then
    .venv/bin/xiangqi engine --warmup || true
fi
