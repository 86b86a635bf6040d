#!/usr/bin/env bash
# Takes the reader's screenshots into docs/screenshots (1400 px and 390 px wide, in chromium):
# the library, a book, a page with highlights, notes and a memo, a search, and a team library's
# page with another member's shared highlights. Everything is made here: a library of fixtures
# in a temporary folder, and a throwaway PostgreSQL cluster (scripts/with-postgres.sh) for the
# team. Needs a built margin (swift build) and what `make test` installs.
#   scripts/screenshots.sh [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${1:-$root/docs/screenshots}
margin=${MARGIN:-$root/.build/debug/margin}
work=$(mktemp -d /tmp/margin-shots.XXXXXX)
server=
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# Starts `margin serve` on a free port with the environment given; sets $server and $url.
serve() {
    env "$@" "$margin" serve --port 0 2>"$work/serve.log" &
    server=$!
    for _ in $(seq 100); do
        url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$work/serve.log" | head -1 || true)
        [ -n "$url" ] && return
        sleep 0.1
    done
    cat "$work/serve.log" >&2
    exit 1
}

if [ "${1:-}" != "--team" ]; then
    export MARGIN_HOME=$work/home
    m() { "$margin" "$@" >/dev/null; }
    m add -q fixtures/pdf/paper-arxiv.pdf
    m add -q fixtures/pdf/sample.pdf --tag demo
    m add -q fixtures/pdf/outlined.pdf --folder books
    m add -q fixtures/pdf/two-columns.pdf --folder papers
    m highlight add 1 --page 1 --text "Readers mark what matters to them" --note "the claim the paper tests"
    m highlight add 1 --page 1 --text "almost every highlight is found again" --color green
    m highlight add 1 --page 2 --text "orphans" --color pink --note "how many, in the data?"
    m memo add 1 --page 1 "Compare with the 2019 study of revised papers."
    m bookmark add 1 2 --label "method"
    serve MARGIN_HOME="$work/home"
    python3 Tests/Browser/screenshots.py "$url" "$out" library=/ book=/books/1 reader=/books/1/pages/1 \
        search="/?q=M%C3%BCller+annotations"
    kill "$server"
    server=
    # The team's page, in a cluster of its own.
    exec scripts/with-postgres.sh "$0" --team "$out"
fi

# --team OUTDIR: bob shares highlights; alice reads the page with the team's annotations.
out=$2
[ -n "${MARGIN_TEST_POSTGRES:-}" ] || { echo "error: PostgreSQL is not installed (make test installs it)" >&2; exit 1; }
database=margin_shots
psql "$MARGIN_TEST_POSTGRES" -q -c "CREATE DATABASE $database" -c "CREATE ROLE alice LOGIN" -c "CREATE ROLE bob LOGIN"
admin=${MARGIN_TEST_POSTGRES%/*}/$database
# The same database as another role (the URL's user replaced).
as_url() { echo "$admin" | sed "s|://[^@]*@|://$1@|"; }
as() { local user=$1; shift; MARGIN_HOME=$work/$user MARGIN_LIBRARY=$(as_url "$user") "$margin" "$@" >/dev/null; }
MARGIN_HOME=$work/owner MARGIN_LIBRARY=$admin "$margin" db init >/dev/null
for user in alice bob; do MARGIN_HOME=$work/owner MARGIN_LIBRARY=$admin "$margin" db grant $user >/dev/null; done
as bob add -q fixtures/pdf/paper-arxiv.pdf
as bob highlight add 1 --page 1 --text "anchored by their text and the text around it" --color blue --shared \
    --note "the method in one line"
as bob memo add 1 --page 1 --shared "Read with the 2019 study."
as alice highlight add 1 --page 1 --text "Readers mark what matters to them" --note "mine, not shared"
serve MARGIN_HOME="$work/alice" MARGIN_LIBRARY="$(as_url alice)"
python3 Tests/Browser/screenshots.py "$url" "$out" team=/books/1/pages/1
