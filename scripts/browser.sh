#!/usr/bin/env bash
# Headless Chromium for the report page's browser tests (tests/report/test_report_html.py): Debian's
# `chromium` package, installed only where no Chromium is found, so this is a no-op on a machine
# that has one (or CHROMIUM=/path/to/chrome set).
set -euo pipefail
if [ -n "${CHROMIUM:-}" ] || command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "scripts/browser.sh: no Chromium and no apt-get here; install Chromium and put 'chromium' on PATH" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# the package lists may be stale or absent on a fresh CI image: refresh them only if needed
$SUDO apt-get install -y -qq chromium >/dev/null 2>&1 || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium; }
command -v chromium >/dev/null
