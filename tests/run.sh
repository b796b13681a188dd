#!/usr/bin/env bash
# The whole test run, as the README gives it and CI runs it:
# - the unit and integration tests (the real server over HTTP), on SQLite;
# - the integration tests again on PostgreSQL, against a throwaway cluster this script
#   starts (tests/pg.sh; `WORKBOARD_TEST_DATABASE` points at an existing server instead);
# - the OpenAPI contract checked by schemathesis;
# - the web client driven in headless Chromium.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo test --workspace
(
    source tests/pg.sh
    WORKBOARD_TEST_ENGINE=postgres cargo test --test api
)
tests/schemathesis/run.sh
tests/e2e/run.sh
