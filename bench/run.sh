#!/usr/bin/env bash
# Builds margin in release and measures it side by side with Recoll, poppler-utils, MuPDF and
# pdfgrep (installed here if missing), then at scale on generated corpora.
# Writes bench/RESULTS.md. Needs ../shared/corpus/real (or --corpus DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
swift build -c release --static-swift-stdlib --product margin
exec python3 bench/bench.py "$@"
