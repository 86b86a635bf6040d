#!/usr/bin/env bash
# Installs the Debian packages Margin needs, non-interactively, only if some are missing.
#   scripts/install-deps.sh          build and run: poppler-glib, SQLite, pkg-config, qpdf, and
#                                    Tesseract 5 with English (scanned pages), Snowball's stemmers
#   scripts/install-deps.sh --test   also what the tests compare with (poppler-utils, pdfgrep, qpdf,
#                                    MuPDF's mutool, PostgreSQL, the tesseract CLI), and the browsers the reader's
#                                    end-to-end test drives (chromium + chromium-driver with Selenium,
#                                    firefox-esr with marionette-driver)
#   scripts/install-deps.sh --bench  also the benchmarks' peers (Recoll, MuPDF, OCRmyPDF)
set -euo pipefail
packages=(libpoppler-glib-dev libsqlite3-dev pkg-config libqpdf29 libxml2 libtesseract-dev tesseract-ocr-eng libstemmer-dev)
if [ "${1:-}" = "--test" ] || [ "${1:-}" = "--bench" ]; then
    packages+=(poppler-utils pdfgrep qpdf python3 python3-pip time openssl sqlite3 binutils curl procps util-linux chromium chromium-driver firefox-esr postgresql mupdf-tools pandoc tesseract-ocr lua5.4)
fi
if [ "${1:-}" = "--bench" ]; then
    packages+=(recoll ocrmypdf)
fi
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}" >&2
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# From PyPI: Selenium drives chromium (the driver's path is given, so it downloads nothing);
# marionette-driver drives firefox-esr through its own Marionette protocol (no geckodriver).
# bibtexparser, pybtex and rispy read the citations margin writes (independent readers); Pillow
# makes the scanned fixtures (fixtures/make-scans.py).
if [ "${1:-}" = "--test" ] || [ "${1:-}" = "--bench" ]; then
    for module in selenium:selenium marionette_driver:marionette-driver "bibtexparser:bibtexparser<2" pybtex:pybtex \
        rispy:rispy PIL:Pillow; do
        python3 -c "import ${module%%:*}" 2>/dev/null && continue
        echo "installing: ${module##*:} (PyPI)" >&2
        python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore "${module##*:}" 2>/dev/null \
            || python3 -m pip install -q --disable-pip-version-check --break-system-packages "${module##*:}"
    done
fi
command -v swift >/dev/null || { echo "error: swift is not on PATH (Swift 6 toolchain needed)" >&2; exit 1; }
