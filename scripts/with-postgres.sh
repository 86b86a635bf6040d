#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL cluster: initdb in a temporary folder (as the
# `postgres` user when run as root), a free port on 127.0.0.1, trust authentication; the command
# sees its URL in MARGIN_TEST_POSTGRES. The server also takes TLS, with a self-signed certificate
# for 127.0.0.1 made here (MARGIN_TEST_POSTGRES_CA, when openssl is installed). The cluster is stopped and removed afterwards, whatever
# the command did. Without PostgreSQL installed the command runs alone (the tests that need it
# say they were skipped).
#   scripts/with-postgres.sh swift test --skip-build
set -uo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "note: PostgreSQL is not installed; its tests will be skipped" >&2
    exec "$@"
fi
folder=$(mktemp -d /tmp/margin-pg.XXXXXX)
as=()
if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$folder"
    as=(runuser -u postgres --)
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
stop() {
    "${as[@]}" "$bin/pg_ctl" -D "$folder/data" -m immediate stop >/dev/null 2>&1
    rm -rf "$folder"
}
trap stop EXIT
"${as[@]}" "$bin/initdb" -D "$folder/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$folder/initdb.log" 2>&1 \
    || { cat "$folder/initdb.log" >&2; echo "error: initdb failed" >&2; exit 1; }
tls=""
if command -v openssl >/dev/null; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
        -keyout "$folder/server.key" -out "$folder/server.crt" >/dev/null 2>&1 && {
        chmod 600 "$folder/server.key"
        [ "$(id -u)" -eq 0 ] && chown postgres: "$folder/server.key" "$folder/server.crt"
        tls="-c ssl=on -c ssl_cert_file=$folder/server.crt -c ssl_key_file=$folder/server.key"
        export MARGIN_TEST_POSTGRES_CA="$folder/server.crt"
    }
fi
"${as[@]}" "$bin/pg_ctl" -D "$folder/data" -l "$folder/server.log" -w \
    -o "-p $port -k $folder -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200 $tls" start >/dev/null \
    || { cat "$folder/server.log" >&2; echo "error: PostgreSQL did not start" >&2; exit 1; }
export MARGIN_TEST_POSTGRES="postgres://postgres@127.0.0.1:$port/postgres"
# The same server through its Unix-domain socket (in the cluster's folder), as libpq names it.
export MARGIN_TEST_POSTGRES_SOCKET="postgres://postgres@/postgres?host=$folder&port=$port"
# `$MARGIN_TEST_POSTGRES_CTL restart|stop|start`: what a test does to the server under its clients
# (a restart, an outage), with the options it was started with.
cat > "$folder/ctl" <<EOF
#!/usr/bin/env bash
exec ${as[*]} "$bin/pg_ctl" -D "$folder/data" -l "$folder/server.log" -w -m fast \\
    -o "-p $port -k $folder -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200 $tls" "\$@"
EOF
chmod 755 "$folder/ctl"
export MARGIN_TEST_POSTGRES_CTL="$folder/ctl"
"$@"
