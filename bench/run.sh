#!/usr/bin/env bash
# Builds margin in release and measures it side by side with Recoll, poppler-utils, MuPDF and
# pdfgrep (installed here if missing), then at scale on generated corpora.
# Writes bench/RESULTS.md, then appends a load check of `margin serve` (bench/serve-load.py) and
# SQLite and PostgreSQL side by side (bench/team-load.py). Needs ../shared/corpus/real (or --corpus DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
scripts/build-release.sh
python3 bench/bench.py "$@"
# Search quality: nDCG@10 and recall@50 on the judged queries (bench/judged.py).
{ echo; python3 bench/judged.py margin=.build/release/margin; } | tee -a bench/RESULTS.md
# The reader's server under 8 concurrent clients, on the library bench.py built.
{ echo; python3 bench/serve-load.py; } | tee -a bench/RESULTS.md
# Both backends on that library: a throwaway PostgreSQL cluster (as the tests start one).
{ echo; scripts/with-postgres.sh python3 bench/team-load.py; } | tee -a bench/RESULTS.md
# Pages built to take minutes to draw, asked for while 32 users search and annotate.
{ echo; python3 bench/hostile-load.py; } | tee -a bench/RESULTS.md
# The reader on a 900-page book in chromium: bytes, renders, time to a drawn page, the tab's memory.
{ echo; python3 bench/reader-load.py; } | tee -a bench/RESULTS.md
# A soak: 32 users for 10 minutes on a PostgreSQL copy of the library (memory and p99 a minute).
{ echo; scripts/with-postgres.sh python3 bench/soak.py; } | tee -a bench/RESULTS.md
# What margin finds PDFs to be, against what a reader of page 1 gives (bench/metadata/judged.tsv).
{ echo; echo "## Metadata detection on the judged set"; echo; python3 bench/metadata/score.py --markdown; } | tee -a bench/RESULTS.md
# OCR of scanned pages against the tesseract CLI and OCRmyPDF (bench/ocr.py).
{ echo; python3 bench/ocr.py; } | tee -a bench/RESULTS.md
# What each start-up trick saves (each switched off in turn with MARGIN_PLAIN).
{ echo; echo "## Start-up tricks"; echo; python3 bench/startup-tricks.py; } | tee -a bench/RESULTS.md
