#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests: initdb in a temporary folder, run as the
# `postgres` user, on a free port of 127.0.0.1, trusting local connections. Installs
# PostgreSQL (apt) when `initdb` is missing.
#
#   source tests/pg.sh   # exports WORKBOARD_TEST_DATABASE and stops the cluster on exit
#
# With WORKBOARD_TEST_DATABASE already set, the tests use that server and nothing starts.

pg_bin_dir() {
    local dir
    for dir in /usr/lib/postgresql/*/bin; do
        [ -x "$dir/initdb" ] && { echo "$dir"; return; }
    done
    command -v initdb >/dev/null 2>&1 && dirname "$(command -v initdb)"
}

pg_start() {
    if [ -n "${WORKBOARD_TEST_DATABASE:-}" ]; then
        echo "pg: using $WORKBOARD_TEST_DATABASE" | sed 's#//[^@]*@#//***@#'
        return
    fi
    local bin
    bin="$(pg_bin_dir)"
    if [ -z "$bin" ]; then
        echo "pg: installing postgresql (apt)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
        bin="$(pg_bin_dir)"
    fi
    PG_DIR="$(mktemp -d /tmp/workboard-pg-XXXXXX)"
    chown postgres "$PG_DIR"
    chmod 700 "$PG_DIR"
    PG_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    run_as_postgres() { su postgres -s /bin/sh -c "$*"; }
    run_as_postgres "'$bin/initdb' -D '$PG_DIR/data' --auth=trust --username=postgres -E UTF8 >'$PG_DIR/initdb.log' 2>&1" \
        || { cat "$PG_DIR/initdb.log"; return 1; }
    # Enough connections for two nodes per test and the tests that run at once.
    run_as_postgres "'$bin/pg_ctl' -D '$PG_DIR/data' -l '$PG_DIR/server.log' -w -o \"-p $PG_PORT -k '$PG_DIR' -c listen_addresses=127.0.0.1 -c max_connections=1000 -c shared_buffers=128MB\" start >/dev/null" \
        || { cat "$PG_DIR/server.log"; return 1; }
    export WORKBOARD_TEST_DATABASE="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
    PG_CTL="$bin/pg_ctl"
    trap pg_stop EXIT
    echo "pg: a throwaway cluster on port $PG_PORT ($PG_DIR)"
}

pg_stop() {
    if [ -n "${PG_DIR:-}" ]; then
        su postgres -s /bin/sh -c "'$PG_CTL' -D '$PG_DIR/data' -m immediate stop >/dev/null 2>&1" || true
        rm -rf "$PG_DIR"
    fi
}

pg_start
