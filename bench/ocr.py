#!/usr/bin/env python3
"""OCR side by side: margin against the tesseract CLI and OCRmyPDF on the same scanned pages.

Pages of born-digital books in ../shared/corpus/real are drawn at 300 dpi in gray (pdftoppm) and
wrapped, one image a page, into scanned.pdf (Pillow). Then, each on both cores:
  margin add scanned.pdf                       (drawing the pages included)
  tesseract PAGE.png - (two at a time, OMP_THREAD_LIMIT=1: its fastest way on two cores)
  ocrmypdf --skip-text -j 2 scanned.pdf OUT    (what a user would run to make a scan searchable)
and: margin reindex of the OCR'd book (reads nothing again), word recall of margin and of the CLI
against the born-digital text (pdftotext), and search on the OCR'd library against the same pages
born-digital. Prints a Markdown section for bench/RESULTS.md.
    python3 bench/ocr.py [--corpus DIR] [--margin .build/release/margin]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter

from PIL import Image

# (file, first page, last page): 118 pages of prose, code, tables and formulas.
PAGES = [
    ("sicp__sicp.pdf", 20, 79),
    ("thinkstats2__thinkstats2.pdf", 20, 59),
    ("docling__redp5110_sampled.pdf", 1, 18),
]


def run(command, env=None, **options):
    started = time.monotonic()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **options)
    return time.monotonic() - started


def words(text):
    return ["".join(c for c in w if c.isalnum()).lower() for w in text.split() if any(c.isalnum() for c in w)]


def recall(read, truth):
    left = Counter(words(read))
    expected = words(truth)
    found = 0
    for word in expected:
        if left[word] > 0:
            left[word] -= 1
            found += 1
    return found / max(len(expected), 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "corpus"))
    parser.add_argument("--margin", default=".build/release/margin")
    args = parser.parse_args()
    margin = os.path.abspath(args.margin)
    real = os.path.join(args.corpus, "real")
    work = tempfile.mkdtemp(prefix="margin-ocr-bench-")
    try:
        images, truths, born = [], [], []
        for name, first, last in PAGES:
            source = os.path.join(real, name)
            part = os.path.join(work, f"born-{len(born)}.pdf")
            subprocess.run(["qpdf", "--empty", "--pages", source, f"{first}-{last}", "--", part], check=True)
            born.append(part)
            for page in range(first, last + 1):
                stem = os.path.join(work, f"page-{len(images):03d}")
                subprocess.run(["pdftoppm", "-gray", "-r", "300", "-f", str(page), "-l", str(page), "-singlefile",
                                "-png", source, stem], check=True)
                images.append(stem + ".png")
                truths.append(subprocess.run(["pdftotext", "-f", str(page), "-l", str(page), source, "-"],
                                             check=True, capture_output=True, text=True).stdout)
        scanned = os.path.join(work, "scanned.pdf")
        opened = [Image.open(path) for path in images]
        opened[0].save(scanned, "PDF", resolution=300, save_all=True, append_images=opened[1:])
        pages = len(images)

        env = dict(os.environ, MARGIN_HOME=os.path.join(work, "home"))
        margin_add = run([margin, "add", "--quiet", scanned], env=env)
        reindex = run([margin, "reindex", "--quiet", "1"], env=env)
        shown = json.loads(subprocess.run([margin, "show", "1", "--json"], env=env, check=True,
                                          capture_output=True, text=True).stdout)
        margin_text = subprocess.run([margin, "text", "1"], env=env, check=True, capture_output=True,
                                     text=True).stdout.split("\f")

        cli_env = dict(os.environ, OMP_THREAD_LIMIT="1")
        outputs = os.path.join(work, "cli")
        os.makedirs(outputs)
        started = time.monotonic()
        subprocess.run(["xargs", "-P", "2", "-I", "{}", "sh", "-c",
                        f'tesseract "{{}}" "{outputs}/$(basename "{{}}" .png)" 2>/dev/null'],
                       input="\n".join(images), text=True, env=cli_env, check=True)
        cli = time.monotonic() - started
        cli_text = [open(os.path.join(outputs, os.path.basename(p)[:-4] + ".txt")).read() for p in images]

        ocrmypdf = None
        if shutil.which("ocrmypdf"):
            ocrmypdf = run(["ocrmypdf", "--skip-text", "-j", "2", "--output-type", "pdf", scanned,
                            os.path.join(work, "ocrmypdf.pdf")], env=cli_env)

        # Search: the OCR'd library against the same pages born-digital.
        born_env = dict(os.environ, MARGIN_HOME=os.path.join(work, "born"))
        subprocess.run([margin, "add", "--quiet", "--ocr", "never"] + born, env=born_env, check=True,
                       stdout=subprocess.DEVNULL)
        def search_time(environment, query, rounds=20):
            best = float("inf")
            for _ in range(rounds):
                best = min(best, run([margin, "search", query], env=environment))
            return best
        queries = ["procedure", "interpreter evaluation", "distribution"]
        searches = [(q, search_time(env, q), search_time(born_env, q)) for q in queries]

        margin_recall = sum(recall(m, t) for m, t in zip(margin_text, truths)) / pages
        cli_recall = sum(recall(c, t) for c, t in zip(cli_text, truths)) / pages
        print("## OCR of scanned pages")
        print()
        print(f"{pages} pages of corpus books drawn at 300 dpi in gray, one image a page; both cores for each tool.")
        print()
        print("| what | seconds | pages/s | ratio to margin |")
        print("|---|---:|---:|---:|")
        print(f"| margin add (drawing included) | {margin_add:.1f} | {pages / margin_add:.2f} | 1.00× |")
        print(f"| tesseract CLI, 2 at a time, OMP_THREAD_LIMIT=1 (PNGs given) | {cli:.1f} | {pages / cli:.2f} | "
              f"{cli / margin_add:.2f}× |")
        if ocrmypdf is not None:
            print(f"| ocrmypdf --skip-text -j 2 | {ocrmypdf:.1f} | {pages / ocrmypdf:.2f} | {ocrmypdf / margin_add:.2f}× |")
        print(f"| margin reindex of the OCR'd book | {reindex:.2f} | | {reindex / margin_add * 100:.1f} % of add |")
        print()
        print(f"margin/tesseract CLI time: {margin_add / cli:.2f}×"
              + (f"; margin/ocrmypdf: {margin_add / ocrmypdf:.2f}×" if ocrmypdf else ""))
        print()
        print(f"Word recall against the born-digital text: margin {margin_recall:.3f}, tesseract CLI {cli_recall:.3f} "
              f"(mean confidence {shown.get('ocrConfidence')}, {shown.get('ocrPages')} pages read, "
              f"{shown.get('textlessPages')} with nothing legible).")
        print()
        print("| search (best of 20) | OCR'd library ms | born-digital library ms | ratio |")
        print("|---|---:|---:|---:|")
        for query, ocr, digital in searches:
            print(f"| `{query}` | {ocr * 1000:.1f} | {digital * 1000:.1f} | {ocr / digital:.2f}× |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
