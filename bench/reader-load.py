#!/usr/bin/env python3
"""The reader's load on a long book, in Debian's chromium (Tests/Browser/browsers.py): a
900-page book (fixtures/make-fixtures.py --long) is added to a new library, opened in the reader
on page 1, and scrolled through 100 pages one page at a time, each time until the page in view is
drawn. Reports the bytes the reader fetched, the pages it had drawn (renders), the time from a
scroll to its page drawn (p50, p99), and the resident memory of the tab's renderer at page 10
and at page 100 (memory flat: pages far from the view are emptied).

Usage: bench/reader-load.py [--pages 900] [--scroll 100]
Writes a section to stdout (Markdown); bench/run.sh appends it to bench/RESULTS.md.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from serving import pct, start_server

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Browser"))
from browsers import start, waiter  # noqa: E402

MARGIN = os.environ.get("MARGIN", os.path.join(ROOT, ".build", "release", "margin"))

parser = argparse.ArgumentParser()
parser.add_argument("--pages", type=int, default=900)
parser.add_argument("--scroll", type=int, default=100)
args = parser.parse_args()

work = tempfile.mkdtemp(prefix="margin-reader-load-")
env = dict(os.environ, MARGIN_HOME=os.path.join(work, "home"))
book = os.path.join(work, "long.pdf")
subprocess.run([sys.executable, os.path.join(ROOT, "fixtures", "make-fixtures.py"), "--long", book, str(args.pages)],
               check=True)
subprocess.run([MARGIN, "add", "-q", book], env=env, check=True, stdout=subprocess.DEVNULL)
server, port = start_server(MARGIN, env, "reader-load")
url = f"http://127.0.0.1:{port}"


def renderer_rss(driver_pid):
    """Resident memory in MiB of the largest chromium renderer below the driver (the tab's)."""
    children = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(pid))
        except (OSError, ValueError, IndexError):
            continue
    largest, stack = 0, [driver_pid]
    while stack:
        pid = stack.pop()
        stack += children.get(pid, [])
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"--type=renderer" not in f.read():
                    continue
            with open(f"/proc/{pid}/status") as f:
                rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
            largest = max(largest, rss)
        except (OSError, StopIteration):
            continue
    return largest / 1024


# Scrolls page N to the top of the view and answers, in ms, when its image has been drawn.
SCROLL = """
    const [n, done] = [arguments[0], arguments[arguments.length - 1]];
    const start = performance.now();
    document.querySelector(`.page[data-number='${n}']`).scrollIntoView();
    const check = () => {
      if (document.querySelector(`.page[data-number='${n}']`).dataset.drawn) done(performance.now() - start);
      else setTimeout(check, 2);
    };
    check();
"""

driver = start("chromium", 1400, 900)
wait = waiter("reader-load")
try:
    driver.get(f"{url}/books/1/pages/1")
    wait(lambda: driver.script("return document.getElementById('reader').dataset.ready") == "true", "the reader")
    opening = driver.script("return performance.timing.loadEventEnd - performance.timing.navigationStart")
    ready_ms = driver.script("return performance.now()")
    times = []
    rss = {}
    driver.driver.set_script_timeout(60)
    for n in range(2, args.scroll + 1):
        times.append(driver.driver.execute_async_script(SCROLL, n) / 1000)
        if n in (10, args.scroll):
            rss[n] = renderer_rss(driver.driver.service.process.pid)
    resources = driver.script(
        "return performance.getEntriesByType('resource').map((e) => [e.name, e.transferSize, e.encodedBodySize])")
    renders = int(driver.script("return document.getElementById('reader').dataset.renders"))
    drawn_now = driver.script("return document.querySelectorAll('.page[data-drawn]').length")
finally:
    driver.quit()
    server.terminate()
    server.wait()
    shutil.rmtree(work, ignore_errors=True)

images = [r for r in resources if ".png" in r[0]]
total = sum(max(r[1], r[2]) for r in resources)
print(f"## The reader on a {args.pages}-page book\n")
print(f"Opened on page 1 in chromium (1400×900), then scrolled one page at a time to page {args.scroll}, "
      "each time until the page in view was drawn (bench/reader-load.py).\n")
print("| what | value |")
print("|---|---:|")
print(f"| ready (page 1 drawn, its text layer, the annotations) | {ready_ms:.0f} ms from navigation |")
print(f"| scroll → page drawn, p50 / p99 / max | {pct(times, 50):.0f} / {pct(times, 99):.0f} / {max(times) * 1000:.0f} ms |")
print(f"| pages drawn (renders asked by the reader) | {renders} for {args.scroll} pages seen "
      f"({len(images)} images fetched; {drawn_now} held at the end) |")
print(f"| bytes fetched (pages, text layers, API) | {total / 1024:.0f} KiB ({total / 1024 / args.scroll:.1f} KiB a page) |")
print(f"| renderer RSS at page 10 / page {args.scroll} | {rss.get(10, 0):.0f} / {rss.get(args.scroll, 0):.0f} MiB |")
print(f"\nmean per page {statistics.mean(times) * 1000:.0f} ms; page load event {opening} ms.")
