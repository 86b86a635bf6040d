#!/usr/bin/env bash
# Fails when man/margin.1 no longer matches the command definitions (run 'make man' to update).
set -euo pipefail
cd "$(dirname "$0")/.."
swift package --allow-writing-to-package-directory generate-manual \
    --configuration debug --date "$(cat man/DATE)" >/dev/null
generated=.build/plugins/GenerateManual/outputs/margin/margin.1
if ! diff -u man/margin.1 "$generated"; then
    echo "error: man/margin.1 is stale: run 'make man' and commit it" >&2
    exit 1
fi
echo "man/margin.1 is current"
