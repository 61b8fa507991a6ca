#!/usr/bin/env bash
# Set up everything the tests need, then run lint and the whole default test suite.
# Extra arguments go to pytest (e.g. -m slow).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --test
.venv/bin/ruff check src tests bench
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$(mktemp -d)}"
set +e
.venv/bin/python -m pytest "$@"
rc=$?
set -e
if [ "$rc" = 5 ]; then
    echo "no tests collected: failing" >&2
    exit 1
fi
exit "$rc"
