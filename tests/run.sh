#!/usr/bin/env bash
# The whole test run, as the README gives it and CI runs it: the unit and integration tests
# (the real server over HTTP), the OpenAPI contract checked by schemathesis, and the web
# client driven in headless Chromium.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo test --workspace
tests/schemathesis/run.sh
tests/e2e/run.sh
