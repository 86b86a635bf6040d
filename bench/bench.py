#!/usr/bin/env python3
"""Margin side by side with poppler-utils and pdfgrep, in one run, on this machine.

Measures (wall time, medians of alternating runs):
  1. indexing a corpus:  `margin add` (copy + hash + check + extract + index) and `margin reindex`
     vs `pdftotext` over the same files, one after another;
  2. a library search on a >= 10,000-page library: `margin search WORD` (the whole process,
     start-up included) vs `pdfgrep -r -i WORD` over the same files, for a common, a rare and an
     absent word;
  3. rendering one page: `margin render --page N --dpi 150` vs `pdftocairo -png -r 150`.
Prints a table and writes bench/RESULTS.md. Timings are never asserted anywhere.

Usage: bench/run.sh [--runs N] [--pdfgrep-runs N] [--corpus DIR]
"""
import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "bench", "work")
MARGIN = os.path.join(ROOT, ".build", "release", "margin")


def run(cmd, env=None, cwd=None):
    start = time.perf_counter()
    result = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if result.returncode not in (0, 1):  # pdfgrep exits 1 when nothing matches
        sys.exit(f"bench: {' '.join(cmd[:3])}... failed ({result.returncode}): {result.stderr.decode()[:300]}")
    return elapsed


def alternate(runs, cases):
    """cases: {name: callable returning seconds}; runs them in turn, `runs` rounds; medians."""
    times = {name: [] for name in cases}
    for _ in range(runs):
        for name, fn in cases.items():
            times[name].append(fn())
    return {name: statistics.median(values) for name, values in times.items()}


def margin_env(home):
    env = dict(os.environ)
    env["MARGIN_HOME"] = home
    return env


def pdf_pages(path):
    out = subprocess.run(["pdfinfo", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("Pages:"):
            return int(line.split()[1])
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pdfgrep-runs", type=int, default=1)
    parser.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus", "real"))
    parser.add_argument("--min-pages", type=int, default=10000)
    args = parser.parse_args()
    corpus = os.path.abspath(args.corpus)
    files = sorted(os.path.join(corpus, f) for f in os.listdir(corpus) if f.endswith(".pdf"))
    if not files:
        sys.exit(f"bench: no PDFs in {corpus}")
    pages = sum(pdf_pages(f) for f in files)
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    rows = []

    # 1. Indexing the corpus.
    counter = [0]

    def margin_add():
        counter[0] += 1
        home = os.path.join(WORK, f"index-{counter[0]}")
        t = run([MARGIN, "add", "--quiet"] + files, env=margin_env(home))
        shutil.rmtree(home, ignore_errors=True)
        return t

    reindex_home = os.path.join(WORK, "reindex")
    run([MARGIN, "add", "--quiet"] + files, env=margin_env(reindex_home))

    def pdftotext():
        start = time.perf_counter()
        for f in files:
            subprocess.run(["pdftotext", f, "/dev/null"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - start

    t = alternate(args.runs, {
        "margin add": margin_add,
        "margin reindex": lambda: run([MARGIN, "reindex", "--quiet"], env=margin_env(reindex_home)),
        "pdftotext": pdftotext,
    })
    rows.append((f"index {len(files)} PDFs, {pages} pages: margin add", t["margin add"], "pdftotext", t["pdftotext"]))
    rows.append((f"index {len(files)} PDFs, {pages} pages: margin reindex", t["margin reindex"], "pdftotext", t["pdftotext"]))

    # 2. Search on a library of at least --min-pages pages: copies of the corpus whose bytes
    #    differ (a comment after %%EOF), so each is its own book.
    copies = max(1, -(-args.min_pages // max(1, pages)))
    library_files = []
    for k in range(copies):
        folder = os.path.join(WORK, "library-files", f"copy{k}")
        os.makedirs(folder)
        for f in files:
            target = os.path.join(folder, os.path.basename(f))
            with open(f, "rb") as src, open(target, "wb") as dst:
                dst.write(src.read())
                dst.write(b"\n%% margin bench copy %d\n" % k)
            library_files.append(target)
    search_home = os.path.join(WORK, "search")
    build = run([MARGIN, "add", "--quiet", "--jobs", "2"] + library_files, env=margin_env(search_home))
    library_pages = pages * copies
    words = {"common": "the", "rare": "isotope", "absent": "qzxwvjk"}
    for kind, word in words.items():
        env = margin_env(search_home)
        margin_t = alternate(args.runs, {"m": lambda: run([MARGIN, "search", "--quiet", word], env=env)})["m"]
        grep_t = alternate(args.pdfgrep_runs, {
            "g": lambda: run(["pdfgrep", "-r", "-i", word, os.path.join(WORK, "library-files")])
        })["g"]
        rows.append((f"search '{word}' ({kind}) in {len(library_files)} PDFs, {library_pages} pages: margin search",
                     margin_t, "pdfgrep -r -i", grep_t))

    # 3. Rendering one page of a long book.
    longest = max(files, key=pdf_pages)
    n = pdf_pages(longest)
    render_home = os.path.join(WORK, "render")
    run([MARGIN, "add", "--quiet", longest], env=margin_env(render_home))
    out = os.path.join(WORK, "page.png")
    t = alternate(args.runs, {
        "margin": lambda: run([MARGIN, "render", "1", "--page", str(n), "--dpi", "150", "-o", out, "--force", "--quiet"],
                              env=margin_env(render_home)),
        "pdftocairo": lambda: run(["pdftocairo", "-png", "-r", "150", "-f", str(n), "-l", str(n), "-singlefile",
                                   longest, os.path.join(WORK, "ref")]),
    })
    rows.append((f"render page {n} of {os.path.basename(longest)} at 150 dpi: margin render", t["margin"],
                 "pdftocairo -png -r 150", t["pdftocairo"]))

    lines = [
        "# Benchmark results",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}; "
        f"medians of {args.runs} alternating runs (pdfgrep: {args.pdfgrep_runs}). "
        f"Search library built in {build:.1f} s. Written by `bench/run.sh`.",
        "",
        "| measurement | margin (s) | peer | peer (s) | margin / peer | peer / margin |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for name, ours, peer, theirs in rows:
        lines.append(f"| {name} | {ours:.4f} | {peer} | {theirs:.4f} | {ours / theirs:.3f} | {theirs / ours:.1f}× |")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(ROOT, "bench", "RESULTS.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
