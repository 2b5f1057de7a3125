#!/usr/bin/env bash
# The whole test suite: servers first, then type-check and build, then every jest test
# (unit, embedded, driver contracts on both drivers, distributed end-to-end).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm install --no-audit --no-fund
bash scripts/ensure-services.sh
bash scripts/ensure-browser.sh
npm run lint --silent
npm run build --silent >/dev/null
npx jest --ci --maxWorkers=2 "$@"
