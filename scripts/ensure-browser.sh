#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed: the tracker's browser tests drive it through playwright-core
# (playwright's own browser download cannot reach the network here, Debian's package can).
set -euo pipefail
CHROMIUM=/usr/bin/chromium
if [ ! -x "$CHROMIUM" ]; then
  echo "ensure-browser: installing Debian's chromium" >&2
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
"$CHROMIUM" --version
