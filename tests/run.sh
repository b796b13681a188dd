#!/usr/bin/env bash
# The whole test run, as the README gives it and CI runs it:
# - a throwaway PostgreSQL cluster (tests/pg.sh; `WORKBOARD_TEST_DATABASE` points at an
#   existing server instead), which both passes below use;
# - the unit and integration tests (the real server over HTTP), on SQLite; the tests that
#   need both engines (`engines`) or several nodes on one database (`nodes`) use the
#   PostgreSQL server on this pass, and only here;
# - the integration tests again with every test server on PostgreSQL (less the two modules
#   above, which ran already);
# - the OpenAPI contract checked by schemathesis;
# - the web client driven in headless Chromium;
# - the sync core (web/js/core/) under Node's test runner against the real server.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source tests/pg.sh
# The calendar feed's tests read it with a real iCalendar parser (tests/api/calendar_feed.py).
python3 -c 'import icalendar' 2>/dev/null \
    || python3 -m pip install --quiet --disable-pip-version-check 'icalendar>=6,<7'
cargo test --workspace
WORKBOARD_TEST_ENGINE=postgres cargo test --test api -- --skip engines:: --skip nodes::
tests/schemathesis/run.sh
tests/e2e/run.sh
node --test --test-concurrency=1 tests/sync/
