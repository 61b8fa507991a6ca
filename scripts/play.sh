#!/usr/bin/env bash
# Set up (first run only) and start the game in the browser: ./scripts/play.sh [xiangqi play options]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/xiangqi ]; then
    ./scripts/setup.sh
fi
exec .venv/bin/xiangqi play "$@"
