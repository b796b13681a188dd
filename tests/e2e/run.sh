#!/usr/bin/env bash
# The web client's browser tests: installs what is missing (Debian's Chromium, the npm
# packages of package-lock.json), builds the server binary, and runs `node --test`.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ ! -x /usr/bin/chromium ]; then
  echo "e2e: installing chromium (apt)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
if [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/axe-core ]; then
  echo "e2e: installing npm packages (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
fi
# A no-op when the binary is current; the page's files are embedded in it.
cargo build --quiet --bin workboard

# One file at a time: each test starts its own server and browser on a 2-core machine.
exec node --test --test-concurrency=1 --test-timeout=120000 tests/e2e/
