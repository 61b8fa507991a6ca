#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests: Debian's postgresql, listening on a unix socket only.
#   eval "$(scripts/pg-temp.sh start)"   # prints the export lines: XIANGQI_TEST_PG_URL, XIANGQI_PG_DIR
#   scripts/pg-temp.sh stop "$XIANGQI_PG_DIR"
# As root (CI), the server runs as the system user postgres (PostgreSQL refuses to run as root).
# The cluster lives in a new directory under ${TMPDIR:-/tmp}; stop removes it.
set -euo pipefail
PORT=${XIANGQI_PG_PORT:-54329}

bindir() {
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    if [ -z "$d" ] || [ ! -x "$d/initdb" ]; then
        echo "pg-temp: PostgreSQL is not installed (apt-get install postgresql)" >&2
        exit 1
    fi
    echo "$d"
}

as_pg() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
    start)
        BIN=$(bindir)
        DIR=$(mktemp -d "${TMPDIR:-/tmp}/xiangqi-pg.XXXXXX")
        if [ "$(id -u)" = 0 ]; then chown postgres "$DIR"; fi
        as_pg "$BIN/initdb" -D "$DIR/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync >"$DIR/initdb.log" 2>&1 \
            || { cat "$DIR/initdb.log" >&2; exit 1; }
        as_pg "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
            -o "-k $DIR -p $PORT -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
            start >/dev/null || { cat "$DIR/server.log" >&2; exit 1; }
        echo "export XIANGQI_PG_DIR='$DIR'"
        echo "export XIANGQI_TEST_PG_URL='postgresql+psycopg://postgres@/postgres?host=$DIR&port=$PORT'"
        ;;
    stop)
        DIR=${2:?usage: pg-temp.sh stop DIR}
        BIN=$(bindir)
        as_pg "$BIN/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null 2>&1 || true
        rm -rf "$DIR"
        ;;
    *)
        echo "usage: pg-temp.sh start | stop DIR" >&2
        exit 2
        ;;
esac
