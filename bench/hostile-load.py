#!/usr/bin/env python3
"""Hostile pages under load: 32 users of `margin serve` (70 % searches, 30 % annotations) for a
while, then as long again with one more client asking for a page built to take minutes to draw
(fixtures/make-fixtures.py --heavy-image), at another resolution each time (a page over the
limits is remembered at the resolution it failed at). Renders run in children with time and
memory limits, one a core: the users' latencies should stay near the run without the hostile
client, and the server's threads, memory and children come back to where they were.

Usage: bench/hostile-load.py [--users 32] [--seconds 15] [--render-timeout 10]
Writes a Markdown section to stdout; bench/run.sh appends it to bench/RESULTS.md.
"""
import argparse
import glob
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
QUERIES = ["page", "annotation", "quick brown fox", '"inverted index"', "margins", "reader"]

parser = argparse.ArgumentParser()
parser.add_argument("--users", type=int, default=32)
parser.add_argument("--seconds", type=float, default=15)
parser.add_argument("--render-timeout", type=int, default=10)
args = parser.parse_args()

work = tempfile.mkdtemp(prefix="margin-hostile-")
env = dict(os.environ, MARGIN_HOME=os.path.join(work, "home"), MARGIN_POPPLER_TIMEOUT=str(args.render_timeout))
heavy = os.path.join(work, "heavy.pdf")
subprocess.run([sys.executable, os.path.join(ROOT, "fixtures", "make-fixtures.py"), "--heavy-image", heavy], check=True)
subprocess.run([MARGIN, "add", "-q", heavy], env=env, check=True, stdout=subprocess.DEVNULL)
for name in ["sample", "second", "prose", "outlined", "paper-arxiv", "two-columns", "layout", "mixed"]:
    subprocess.run([MARGIN, "add", "-q", os.path.join(ROOT, "fixtures", "pdf", name + ".pdf")], env=env,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
books = [b for b in json.loads(subprocess.run([MARGIN, "list", "--json"], env=env, capture_output=True,
                                              text=True).stdout) if b["id"] != 1]
server, port = start_server(MARGIN, env, "hostile-load")


def state():
    """The server's resident memory (MiB), threads, and render children."""
    with open(f"/proc/{server.pid}/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    children = len(subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True, text=True).stdout.split())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["Threads"]), children


def run(hostile):
    results = {"search": [], "annotate": []}
    failures = []
    renders = []
    lock = threading.Lock()
    deadline = time.perf_counter() + args.seconds

    def user(seed):
        rng = random.Random(seed)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while time.perf_counter() < deadline:
            method, path, body, kind = next_request(rng, books, QUERIES, seed, bookmarks=False)
            t0 = time.perf_counter()
            try:
                connection.request(method, path, body=body, headers={"Content-Type": "application/json"})
                response = connection.getresponse()
                response.read()
                ok = response.status in (200, 201)
            except OSError as error:
                ok = False
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                path += f" ({error})"
            with lock:
                results[kind].append(time.perf_counter() - t0)
                if not ok:
                    failures.append(path)

    def attacker():
        dpi = 300
        while time.perf_counter() < deadline:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
            t0 = time.perf_counter()
            connection.request("GET", f"/api/books/1/pages/1.png?dpi={dpi}")
            status = connection.getresponse().status
            renders.append((status, time.perf_counter() - t0))
            dpi -= 7  # below what failed: drawn again, not answered from memory

    users = [threading.Thread(target=user, args=(seed,)) for seed in range(args.users)]
    attackers = [threading.Thread(target=attacker) for _ in range(2)] if hostile else []
    t0 = time.perf_counter()
    for thread in users + attackers:
        thread.start()
    for thread in users:
        thread.join()
    # The users' time alone: a render asked before the end is answered up to its limit after it.
    wall = time.perf_counter() - t0
    for thread in attackers:
        thread.join()
    return sum(len(v) for v in results.values()) / wall, results, failures, renders


try:
    before = state()
    quiet = run(False)
    time.sleep(2)
    between = state()
    during = run(True)
    time.sleep(2)
    after = state()
finally:
    server.terminate()
    server.wait(timeout=60)
    shutil.rmtree(work, ignore_errors=True)

print(f"## Hostile pages under load\n")
print(f"`margin serve` (SQLite) with {args.users} users for {args.seconds:.0f} s (70 % searches, 30 % memos), then "
      f"as long again with two clients asking without pause for a page built to take minutes to draw "
      f"(render limit {args.render_timeout} s; bench/hostile-load.py):\n")
print("| run | requests/s | search p50 | search p99 | annotate p50 | annotate p99 | failed |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name, (rate, results, failures, _) in [("users alone", quiet), ("with the hostile pages", during)]:
    print(f"| {name} | {rate:.1f} | {pct(results['search'], 50):.0f} ms | {pct(results['search'], 99):.0f} ms | "
          f"{pct(results['annotate'], 50):.0f} ms | {pct(results['annotate'], 99):.0f} ms | {len(failures)} |")
renders = during[3]
statuses = sorted({status for status, _ in renders})
print(f"\nHostile renders asked: {len(renders)}, answered {statuses} after "
      f"{min((s for _, s in renders), default=0):.1f}–{max((s for _, s in renders), default=0):.1f} s. "
      f"search p99 with them / alone: {pct(during[1]['search'], 99) / max(pct(quiet[1]['search'], 99), 0.001):.2f}×; "
      f"annotate p99 {pct(during[1]['annotate'], 99) / max(pct(quiet[1]['annotate'], 99), 0.001):.2f}×; "
      f"all the users' requests' p99 {pct(during[1]['search'] + during[1]['annotate'], 99) / max(pct(quiet[1]['search'] + quiet[1]['annotate'], 99), 0.001):.2f}×; "
      f"requests/s {during[0] / max(quiet[0], 0.001):.2f}×.")
print(f"Server before the users / after them / after the run with the hostile pages: "
      f"{before[0]:.0f} / {between[0]:.0f} / {after[0]:.0f} MiB resident, {before[1]} / {between[1]} / {after[1]} threads, "
      f"{before[2]} / {between[2]} / {after[2]} render children.")
