#!/usr/bin/env python3
"""A load check of `margin serve`: N concurrent clients fetch page images (PNG at several
resolutions, random pages of random books) and search the library for a while; reports
throughput, p50/p99 latency by kind, and whether any request failed.

Usage: bench/serve-load.py [--library DIR] [--clients 8] [--seconds 30]
The library defaults to the one bench/run.sh builds (bench/work/search). Writes a section to
stdout (Markdown); bench/run.sh appends it to bench/RESULTS.md.
"""
import argparse
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

from serving import pct, start_server

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARGIN = os.path.join(ROOT, ".build", "release", "margin")
QUERIES = ["bayesian", "the", "probability distribution", '"probability distribution"', "matrix", "river"]

parser = argparse.ArgumentParser()
parser.add_argument("--library", default=os.path.join(ROOT, "bench", "work", "search"))
parser.add_argument("--clients", type=int, default=8)
parser.add_argument("--seconds", type=float, default=30)
args = parser.parse_args()

env = dict(os.environ, MARGIN_HOME=args.library)
books = json.loads(subprocess.run([MARGIN, "list", "--json"], env=env, capture_output=True, text=True).stdout)
books = [b for b in books if b.get("cached")]
if not books:
    sys.exit("serve-load: the library has no cached books (run bench/run.sh first, or --library DIR)")

server, port = start_server(MARGIN, env, "serve-load")

results = {"page image": [], "search": []}
failures = []
lock = threading.Lock()
deadline = time.perf_counter() + args.seconds


def client(seed):
    rng = random.Random(seed)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    while time.perf_counter() < deadline:
        if rng.random() < 0.6:
            book = rng.choice(books)
            path = f"/api/books/{book['id']}/pages/{rng.randint(1, book['pages'])}.png?dpi={rng.choice([72, 110, 150])}"
            kind = "page image"
        else:
            path = "/api/search?q=" + urllib.parse.quote(rng.choice(QUERIES))
            kind = "search"
        start = time.perf_counter()
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            body = response.read()
            ok = response.status == 200 and len(body) > 0
        except Exception as error:  # a failed request is reported, not hidden
            ok, body = False, str(error).encode()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        elapsed = time.perf_counter() - start
        with lock:
            results[kind].append(elapsed)
            if not ok:
                failures.append(f"{path}: {body[:200]!r}")


started = time.perf_counter()
threads = [threading.Thread(target=client, args=(seed,)) for seed in range(args.clients)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
wall = time.perf_counter() - started
server.terminate()
server.wait(timeout=30)



total = sum(len(v) for v in results.values())
print(f"## `margin serve` under load\n")
print(f"{args.clients} concurrent clients for {wall:.0f} s on {len(books)} books "
      f"(60 % page images at 72/110/150 dpi, random pages; 40 % searches): "
      f"{total / wall:.1f} requests/s, {len(failures)} failed.\n")
print("| kind | requests | per second | p50 | p99 |")
print("|---|---:|---:|---:|---:|")
for kind, values in results.items():
    print(f"| {kind} | {len(values)} | {len(values) / wall:.1f} | {pct(values, 50):.1f} ms | {pct(values, 99):.1f} ms |")
for failure in failures[:10]:
    print(f"\n- failed: {failure}")
sys.exit(1 if failures else 0)
