#!/usr/bin/env bash
# Set up everything the tests need, then run lint and the whole default test suite.
# Extra arguments go to pytest (e.g. -m slow). The tests run on every core (pytest-xdist, one worker per
# core, each test file on one worker so its fixtures are built once); XIANGQI_TEST_WORKERS=0 runs them
# in this process, e.g. to debug with -x --pdb.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --test
.venv/bin/ruff check src tests bench
# The compiled kernels are kept between runs (.cache/numba, ignored by git): a cold cache costs each
# run ~50 CPU seconds of compiling before the first engine test (tests/conftest.py fills it once, before
# the workers start), a warm one ~2 s. It is safe to keep: the kernels live in a subdirectory named by
# a hash of their sources, the Numba version and the tables they read (src/xiangqi/engine/_numba.py).
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$PWD/.cache/numba}"
set +e
workers="${XIANGQI_TEST_WORKERS:-auto}"
if [ "$workers" = 0 ]; then
    .venv/bin/python -m pytest "$@"
else
    .venv/bin/python -m pytest -n "$workers" --dist loadfile "$@"
fi
rc=$?
set -e
if [ "$rc" = 5 ]; then
    echo "no tests collected: failing" >&2
    exit 1
fi
exit "$rc"
