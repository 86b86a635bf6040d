#!/usr/bin/env bash
# Margin's main job on a library of its own (./demo-library): add PDFs, list, show, check.
set -euo pipefail
cd "$(dirname "$0")/.."
export MARGIN_HOME="$PWD/demo-library"
margin=.build/release/margin
echo "== library: $MARGIN_HOME"
$margin add fixtures/pdf/sample.pdf fixtures/pdf/second.pdf --folder demo --tag example
$margin add fixtures/pdf/untitled-notes.pdf --title "Untitled notes" --tag example
$margin list
$margin show "sample paper"
echo "== search"
$margin search '"quick brown fox"'
echo "== annotate and export"
$margin highlight list "sample paper" --json | grep -q '"inverted index"' \
    || $margin highlight add "sample paper" --text "inverted index" --color green --note "the key idea"
$margin annotations "sample paper"
$margin export "sample paper" --format markdown
$margin db status
echo "== done: try '$margin --help', or MARGIN_HOME=$MARGIN_HOME $margin list --json"
