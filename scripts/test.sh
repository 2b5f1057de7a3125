#!/usr/bin/env bash
# The whole test suite: servers first, then type-check and build, then every jest test
# (unit, embedded, driver contracts on both drivers, distributed end-to-end), the whole-system
# crash tests last. Arguments go to one jest run as they are (`npm test -- <path or pattern>`).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm install --no-audit --no-fund
bash scripts/ensure-services.sh
bash scripts/ensure-browser.sh
npm run lint --silent
npm run build --silent >/dev/null
if [ "$#" -gt 0 ]; then
  exec npx jest --ci --maxWorkers=2 "$@"
fi
# The whole-system crash tests start a dozen processes and servers of their own, and the probe test
# bounds response times and event-loop delay: they run alone, after the rest, so they neither starve
# the other suites into timeouts nor are starved by them.
alone='test-e2e/(embedded-crash|distributed-outages|hardening-probes)\.int\.test\.ts'
npx jest --ci --maxWorkers=2 --testPathIgnorePatterns /node_modules/ /dist/ "$alone"
npx jest --ci --runInBand "$alone"
