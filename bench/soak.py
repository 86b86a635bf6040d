#!/usr/bin/env python3
"""A soak of `margin serve` on the team library: 32 users (70 % searches, 30 % memos and
bookmarks) for 10 minutes on a PostgreSQL copy of the bench library; per minute, the requests
answered, the p99 of each kind, the failures and the server's resident memory. Steady means:
memory at minute 10 within 10 % of minute 1, p99 flat, no failure.

Usage: scripts/with-postgres.sh python3 bench/soak.py [--library DIR] [--minutes 10] [--users 32]
Writes a Markdown section to stdout; bench/run.sh appends it to bench/RESULTS.md.
"""
import argparse
import http.client
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from serving import next_request, pct, start_server

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARGIN = os.environ.get("MARGIN", os.path.join(ROOT, ".build", "release", "margin"))
QUERIES = ["bayesian", "probability distribution", '"probability distribution"', "matrix", "river", "eigenvalue"]

parser = argparse.ArgumentParser()
parser.add_argument("--library", default=os.path.join(ROOT, "bench", "work", "search"))
parser.add_argument("--minutes", type=int, default=10)
parser.add_argument("--users", type=int, default=32)
args = parser.parse_args()

cluster = os.environ.get("MARGIN_TEST_POSTGRES")
if not cluster:
    sys.exit("soak: run it under scripts/with-postgres.sh")
work = tempfile.mkdtemp(prefix="margin-soak-")
subprocess.run(["psql", cluster, "-qc", "CREATE DATABASE soak"], check=True)
url = cluster.rsplit("/", 1)[0] + "/soak"
subprocess.run([MARGIN, "db", "copy", "--to", url, "-q"], env=dict(os.environ, MARGIN_HOME=args.library), check=True,
               stdout=subprocess.DEVNULL)
env = dict(os.environ, MARGIN_HOME=os.path.join(work, "home"), MARGIN_LIBRARY=url, MARGIN_TEAM_HELPER="0")
books = json.loads(subprocess.run([MARGIN, "list", "--json"], env=env, capture_output=True, text=True).stdout)
server, port = start_server(MARGIN, env, "soak")

minutes = [{"search": [], "annotate": [], "failed": 0} for _ in range(args.minutes)]
memory = []
lock = threading.Lock()
start = time.perf_counter()
deadline = start + 60 * args.minutes


def user(seed):
    rng = random.Random(seed)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    while time.perf_counter() < deadline:
        method, path, body, kind = next_request(rng, books, QUERIES, seed)
        t0 = time.perf_counter()
        try:
            connection.request(method, path, body=body, headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            ok = response.status in (200, 201)
        except OSError:
            ok = False
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        minute = min(args.minutes - 1, int((t0 - start) // 60))
        with lock:
            minutes[minute][kind].append(time.perf_counter() - t0)
            if not ok:
                minutes[minute]["failed"] += 1


def watch():
    for minute in range(args.minutes):
        time.sleep(max(0.0, start + 60 * (minute + 1) - 0.5 - time.perf_counter()))
        with open(f"/proc/{server.pid}/status") as f:
            rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        memory.append(rss / 1024)


threads = [threading.Thread(target=user, args=(seed,)) for seed in range(args.users)]
threads.append(threading.Thread(target=watch))
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
server.terminate()
server.wait(timeout=60)
shutil.rmtree(work, ignore_errors=True)

print(f"## A soak: {args.users} users for {args.minutes} minutes on PostgreSQL\n")
print("`margin serve` on a PostgreSQL copy of the bench library, 70 % searches and 30 % memos and bookmarks "
      "(bench/soak.py); per minute:\n")
print("| minute | requests/s | search p99 | annotate p99 | failed | server RSS |")
print("|---:|---:|---:|---:|---:|---:|")
for index, minute in enumerate(minutes):
    count = len(minute["search"]) + len(minute["annotate"])
    rss = f"{memory[index]:.0f} MiB" if index < len(memory) else "—"
    print(f"| {index + 1} | {count / 60:.1f} | {pct(minute['search'], 99):.0f} ms | "
          f"{pct(minute['annotate'], 99):.0f} ms | {minute['failed']} | {rss} |")
if len(memory) >= 2:
    print(f"\nResident memory at minute {len(memory)} / minute 1: {memory[-1] / memory[0]:.2f}×; "
          f"failed requests: {sum(m['failed'] for m in minutes)}.")
