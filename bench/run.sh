#!/usr/bin/env bash
# Builds margin in release and measures it side by side with poppler-utils and pdfgrep.
# Writes bench/RESULTS.md. Needs ../shared/corpus/real (or --corpus DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
swift build -c release --static-swift-stdlib --product margin
exec python3 bench/bench.py "$@"
