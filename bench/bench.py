#!/usr/bin/env python3
"""Margin side by side with Recoll, poppler-utils, MuPDF and pdfgrep, in one run, on this machine.

Part 1, the peers, on a library of >= --min-pages pages made of copies of the real-world corpus
(bytes differ after %%EOF, so each copy is its own book), every figure a median of alternating runs:
  - indexing from scratch: `margin add` (both cores) vs `recollindex -z`, `pdftotext` and
    `mutool draw -F txt` over the same files;
  - index size on disk: the library (database + WAL) vs Recoll's Xapian database;
  - search, whole process: `margin search` vs `recollq` for a rare word, a common word, two words
    and a phrase; and `pdfgrep -r -i` for the rare word, whose pages must equal margin's;
  - start-up: `margin --version`, `margin list`, `margin list --json` vs a Swift program that
    prints and exits (built here, static stdlib like margin);
  - rendering a page: `margin render` vs `pdftocairo` and `mutool draw`.
Part 2, scale: generated libraries of --scale pages (default 10k, 50k, 100k; bench/make-corpus.py):
  search latency for the same four queries, peak memory of a search, index size against the
  size of the text. Timings are never asserted anywhere; this writes bench/RESULTS.md.

Usage: bench/run.sh [--runs N] [--min-pages N] [--scale 10000,50000,100000] [--skip-scale]
"""
import argparse
import json
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

# Words chosen from the real-world corpus: each one found by both margin and Recoll.
PEER_QUERIES = [
    ("rare word", ["bayesian"], "bayesian"),
    ("common word", ["the"], "the"),
    ("two words", ["probability distribution"], "probability distribution"),
    ("phrase", ['"probability distribution"'], '"probability distribution"'),
]
SCALE_QUERIES = [
    ("rare word", ["quasar"]),
    ("common word", ["the"]),
    ("two words", ["quasar the"]),
    ("phrase", ['"dark matter halo"']),
]


def run(cmd, env=None, cwd=None, ok=(0, 1)):
    start = time.perf_counter()
    result = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if result.returncode not in ok:  # pdfgrep exits 1 when nothing matches
        sys.exit(f"bench: {' '.join(cmd[:4])}... failed ({result.returncode}): {result.stderr.decode()[:300]}")
    return elapsed


def output(cmd, env=None):
    return subprocess.run(cmd, env=env, capture_output=True, text=True).stdout


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
    for line in output(["pdfinfo", path]).splitlines():
        if line.startswith("Pages:"):
            return int(line.split()[1])
    return 0


def library_bytes(home):
    return sum(
        os.path.getsize(os.path.join(home, name))
        for name in ("library.sqlite", "library.sqlite-wal")
        if os.path.exists(os.path.join(home, name))
    )


def wal_bytes(home):
    path = os.path.join(home, "library.sqlite-wal")
    return os.path.getsize(path) if os.path.exists(path) else 0


def folder_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, names in os.walk(path) for f in names)


def text_bytes(home):
    """UTF-8 bytes of all stored page text (what an index of it is compared with)."""
    out = output(["sqlite3", os.path.join(home, "library.sqlite"), "SELECT sum(length(CAST(text AS BLOB))) FROM page"])
    return int(out.strip() or 0)


def peak_rss_kib(cmd, env):
    result = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    return int(result.stderr.strip().splitlines()[-1])


def recoll_config(folder, files_dir):
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    with open(os.path.join(folder, "recoll.conf"), "w") as f:
        f.write(f"topdirs = {files_dir}\nloglevel = 1\nidxflushmb = 50\n")
    return folder


def margin_pages(word, env):
    # As typed (--exact): the pages pdfgrep -i finds, not the word's other forms.
    out = output([MARGIN, "search", "--json", "--limit", "0", "--exact", word], env=env)
    hits = json.loads(out) if out.strip() else []
    return {(hit["book"], hit["page"]) for hit in hits}


def hello_binary():
    """A Swift program that prints and exits, built like margin (static stdlib): the floor."""
    folder = os.path.join(WORK, "hello")
    os.makedirs(folder, exist_ok=True)
    source = os.path.join(folder, "main.swift")
    with open(source, "w") as f:
        f.write('print("0.0.0")\n')
    binary = os.path.join(folder, "hello")
    subprocess.run(["swiftc", "-O", "-static-stdlib", source, "-o", binary], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return binary


def peers(args, rows, notes):
    corpus = os.path.abspath(args.corpus)
    files = sorted(os.path.join(corpus, f) for f in os.listdir(corpus) if f.endswith(".pdf"))
    if not files:
        sys.exit(f"bench: no PDFs in {corpus}")
    pages = sum(pdf_pages(f) for f in files)
    copies = max(1, -(-args.min_pages // max(1, pages)))
    files_dir = os.path.join(WORK, "library-files")
    library_files = []
    for k in range(copies):
        folder = os.path.join(files_dir, f"copy{k}")
        os.makedirs(folder)
        for f in files:
            target = os.path.join(folder, os.path.basename(f))
            with open(f, "rb") as src, open(target, "wb") as dst:
                dst.write(src.read())
                dst.write(b"\n%% margin bench copy %d\n" % k)
            library_files.append(target)
    library_pages = pages * copies
    what = f"{len(library_files)} PDFs, {library_pages:,} pages"

    # 1. Indexing from scratch (the last margin library and Recoll index are kept for search).
    home = os.path.join(WORK, "search")
    recoll = os.path.join(WORK, "recoll")

    # Text as the peers read it (the PDFs' text layers): pages without one are not read by OCR
    # here; the cost of reading them (margin's default) is its own row below.
    def margin_add():
        shutil.rmtree(home, ignore_errors=True)
        return run([MARGIN, "add", "--quiet", "--ocr", "never"] + library_files, env=margin_env(home))

    def recollindex():
        recoll_config(recoll, files_dir)
        return run(["recollindex", "-c", recoll, "-z"])

    def each(command):
        def go():
            start = time.perf_counter()
            for f in library_files:
                subprocess.run(command(f), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return time.perf_counter() - start
        return go

    t = alternate(args.index_runs, {
        "margin": margin_add,
        "recollindex": recollindex,
        "pdftotext": each(lambda f: ["pdftotext", "-q", f, "/dev/null"]),
        "mutool": each(lambda f: ["mutool", "draw", "-q", "-F", "txt", "-o", "/dev/null", f]),
    })
    for peer, name in (("recollindex", "recollindex -z"), ("pdftotext", "pdftotext, file by file"),
                       ("mutool", "mutool draw -F txt, file by file")):
        rows.append(("index", f"index {what} from scratch: margin add --ocr never", t["margin"], name, t[peer], "s"))
    # The default (--ocr auto): the pages without usable text are read by Tesseract too.
    auto_home = os.path.join(WORK, "auto")
    shutil.rmtree(auto_home, ignore_errors=True)
    auto = run([MARGIN, "add", "--quiet"] + library_files, env=margin_env(auto_home))
    read = subprocess.run([MARGIN, "list", "--json"], env=margin_env(auto_home), capture_output=True, text=True).stdout
    ocr_pages = sum(book.get("ocrPages", 0) for book in json.loads(read or "[]"))
    rows.append(("index", f"index {what} from scratch: margin add (default --ocr auto: {ocr_pages} pages read by OCR)",
                 auto, "margin add --ocr never", t["margin"], "s"))
    shutil.rmtree(auto_home, ignore_errors=True)

    # 2. Index size.
    xapian = folder_bytes(os.path.join(recoll, "xapiandb"))
    rows.append(("size", f"index on disk for {what}: margin library", library_bytes(home) / 2**20,
                 "Recoll's xapiandb", xapian / 2**20, "MiB"))
    notes.append(f"WAL left after `margin add`: {wal_bytes(home) / 2**20:.2f} MiB; "
                 f"text stored: {text_bytes(home) / 2**20:.1f} MiB.")

    # 3. Search, whole process. The indexing's writes are flushed first, so that neither side's
    # runs share the disk with them; a search takes milliseconds, so as many runs as start-up.
    os.sync()
    env = margin_env(home)
    for kind, margin_args, recoll_query in PEER_QUERIES:
        t = alternate(args.runs * 3, {
            "margin": lambda: run([MARGIN, "search", "--quiet"] + margin_args, env=env),
            "recollq": lambda: run(["recollq", "-c", recoll, recoll_query]),
        })
        rows.append(("search", f"search {kind} ({' '.join(margin_args)}) in {what}: margin search", t["margin"],
                     "recollq", t["recollq"], "s"))
    rare = PEER_QUERIES[0][1][0]
    start = time.perf_counter()
    grep = subprocess.run(["pdfgrep", "-r", "-i", "-n", rare, files_dir], capture_output=True, text=True,
                          errors="replace")
    grep_t = time.perf_counter() - start
    margin_t = alternate(args.runs, {"m": lambda: run([MARGIN, "search", "--quiet", rare], env=env)})["m"]
    rows.append(("search", f"search rare word ({rare}) in {what}: margin search", margin_t, "pdfgrep -r -i -n",
                 grep_t, "s"))
    # "FILE:PAGE:line": the distinct (file, page) pairs.
    grep_pages = len({tuple(line.split(":", 2)[:2]) for line in grep.stdout.splitlines() if line.count(":") >= 2})
    found = margin_pages(rare, env)
    notes.append(f"'{rare}': margin finds {len(found)} pages, pdfgrep -i counts {grep_pages} "
                 f"({'equal' if len(found) == grep_pages else 'DIFFERENT'}).")

    # 4. Start-up; `list` also on a library of the corpus once (the size of the library).
    hello = hello_binary()
    small = margin_env(os.path.join(WORK, "one-copy"))
    run([MARGIN, "add", "--quiet"] + files, env=small)
    small_books = len(json.loads(output([MARGIN, "list", "--json"], env=small) or "[]"))
    t = alternate(args.runs * 3, {
        "version": lambda: run([MARGIN, "--version"], env=env),
        "list": lambda: run([MARGIN, "list"], env=env),
        "list --json": lambda: run([MARGIN, "list", "--json"], env=env),
        "list small": lambda: run([MARGIN, "list"], env=small),
        "hello": lambda: run([hello]),
    })
    books = len(library_files)
    for name, label in (("version", f"--version` ({books} books)"), ("list", f"list` ({books} books)"),
                        ("list --json", f"list --json` ({books} books)"), ("list small", f"list` ({small_books} books)")):
        rows.append(("startup", f"`margin {label}", t[name], "Swift hello (static)", t["hello"], "s"))

    # 5. Rendering one page of the longest book.
    longest = max(files, key=pdf_pages)
    n = pdf_pages(longest)
    render_home = os.path.join(WORK, "render")
    run([MARGIN, "add", "--quiet", longest], env=margin_env(render_home))
    out = os.path.join(WORK, "page.png")
    t = alternate(args.runs, {
        "margin": lambda: run([MARGIN, "render", "1", "--page", str(n), "--dpi", "150", "-o", out, "--force",
                               "--quiet"], env=margin_env(render_home)),
        "pdftocairo": lambda: run(["pdftocairo", "-png", "-r", "150", "-f", str(n), "-l", str(n), "-singlefile",
                                   longest, os.path.join(WORK, "ref")]),
        "mutool": lambda: run(["mutool", "draw", "-q", "-r", "150", "-o", os.path.join(WORK, "mu.png"), longest,
                               str(n)]),
    })
    for peer in ("pdftocairo", "mutool"):
        rows.append(("render", f"render page {n} of {os.path.basename(longest)} at 150 dpi: margin render",
                     t["margin"], peer, t[peer], "s"))


def scale(args, scale_rows):
    previous = None
    for size in args.scale:
        files = os.path.join(WORK, f"gen-{size}")
        home = os.path.join(WORK, f"scale-{size}")
        run([sys.executable, os.path.join(ROOT, "bench", "make-corpus.py"), "--pages", str(size), "--out", files],
            ok=(0,))
        pdfs = sorted(os.path.join(files, f) for f in os.listdir(files))
        built = run([MARGIN, "add", "--quiet"] + pdfs, env=margin_env(home), ok=(0,))
        os.sync()
        env = margin_env(home)
        row = {"pages": size, "add": built, "index": library_bytes(home), "text": text_bytes(home)}
        for kind, margin_args in SCALE_QUERIES:
            row[kind] = alternate(
                args.runs * 3, {"m": lambda: run([MARGIN, "search", "--quiet"] + margin_args, env=env)})["m"]
        row["rss"] = max(peak_rss_kib([MARGIN, "search", "--quiet"] + q, env) for _, q in SCALE_QUERIES)
        scale_rows.append(row)
        # The generated PDFs go once indexed (the larger corpora are hundreds of MiB).
        shutil.rmtree(files, ignore_errors=True)
        if previous:
            shutil.rmtree(previous, ignore_errors=True)
        previous = home


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--index-runs", type=int, default=3)
    parser.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus", "real"))
    parser.add_argument("--min-pages", type=int, default=10000)
    parser.add_argument("--scale", default="10000,50000,100000")
    parser.add_argument("--skip-peers", action="store_true")
    parser.add_argument("--skip-scale", action="store_true")
    args = parser.parse_args()
    args.scale = [int(x) for x in args.scale.split(",") if x]
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    rows, notes, scale_rows = [], [], []
    if not args.skip_peers:
        peers(args, rows, notes)
    if not args.skip_scale:
        scale(args, scale_rows)

    lines = [
        "# Benchmark results",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}. "
        f"Medians of {args.runs} alternating runs ({args.index_runs} for indexing, {args.runs * 3} for searches against "
        f"recollq and for start-up; "
        f"pdfgrep once). Written by `bench/run.sh`; timings are never asserted in tests.",
        "",
    ]
    if rows:
        lines += [
            "## Margin and its peers",
            "",
            "| measurement | margin | peer | peer's | margin / peer |",
            "|---|---:|---|---:|---:|",
        ]
        for _, name, ours, peer, theirs, unit in rows:
            fmt = (lambda v: f"{v * 1000:.1f} ms") if unit == "s" and ours < 1 else (
                (lambda v: f"{v:.2f} s") if unit == "s" else (lambda v: f"{v:.1f} {unit}"))
            lines.append(f"| {name} | {fmt(ours)} | {peer} | {fmt(theirs)} | {ours / theirs:.2f}× |")
        lines += [""] + [f"- {note}" for note in notes] + [""]
    if scale_rows:
        lines += [
            "## Scale (generated corpora, bench/make-corpus.py)",
            "",
            "| pages | margin add | index on disk | text stored | index / text | "
            + " | ".join(f"search {kind}" for kind, _ in SCALE_QUERIES) + " | peak RSS of a search |",
            "|---:|---:|---:|---:|---:|" + "---:|" * len(SCALE_QUERIES) + "---:|",
        ]
        for row in scale_rows:
            lines.append(
                f"| {row['pages']:,} | {row['add']:.1f} s | {row['index'] / 2**20:.1f} MiB | {row['text'] / 2**20:.1f} MiB "
                f"| {row['index'] / max(1, row['text']):.2f} | "
                + " | ".join(f"{row[kind] * 1000:.1f} ms" for kind, _ in SCALE_QUERIES)
                + f" | {row['rss'] / 1024:.1f} MiB |")
        first, last = scale_rows[0], scale_rows[-1]
        if len(scale_rows) > 1:
            lines += ["", f"Search latency at {last['pages']:,} pages over {first['pages']:,} pages: "
                      + ", ".join(f"{kind} {last[kind] / first[kind]:.2f}×" for kind, _ in SCALE_QUERIES) + "."]
        lines.append("")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(ROOT, "bench", "RESULTS.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
