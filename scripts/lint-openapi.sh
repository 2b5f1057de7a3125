#!/usr/bin/env bash
# Lints the public OpenAPI document with Redocly CLI (proto-schemas/redocly.yaml): any error fails.
# The committed proto-schemas/openapi.json is what the gateway serves (a jest test checks they are equal).
# Usage: scripts/lint-openapi.sh [document.json] [redocly lint flags]
set -euo pipefail
cd "$(dirname "$0")/.."
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
document=proto-schemas/openapi.json
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then document=$1; shift; fi
exec node node_modules/@redocly/cli/bin/cli.js lint "$document" --config proto-schemas/redocly.yaml "$@"
