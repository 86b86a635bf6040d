#!/usr/bin/env python3
"""Both backends side by side on the same ~10k-page library: a team library on PostgreSQL and
the personal one on SQLite.

1. `margin db copy` of the bench library (bench/work/search, which bench/bench.py builds) into a
   fresh PostgreSQL database (timed).
2. Search latency from the command line: each query run alternately on both backends (start-up,
   connection and all), median of the runs; the hits must be the same on both. PostgreSQL
   twice: each command a process of its own, and handed to the team helper (MARGIN_TEAM_HELPER).
3. N = 1, 8, 32 concurrent users of `margin serve` on each backend, searching (70 %) and
   annotating (30 %: memos and bookmarks) for a while: throughput, p50/p99 by kind, failures.
   32 users run four times as long (the issue's 60 s at the default 15), in phases alternating
   the backends (SQLite, PostgreSQL, PostgreSQL, SQLite, twice) on servers kept running: the
   machine's speed drifts by ±20 % within minutes, and a backend measured only after the other
   would carry the drift in their ratio.

Usage: scripts/with-postgres.sh python3 bench/team-load.py [--library DIR] [--seconds 15]
(it needs the cluster's URL in MARGIN_TEST_POSTGRES). Writes a Markdown section to stdout;
bench/run.sh appends it to bench/RESULTS.md.
"""
import argparse
import http.client
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

from serving import next_request, pct, start_server

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARGIN = os.path.join(ROOT, ".build", "release", "margin")
QUERIES = ["bayesian", "probability distribution", '"probability distribution"', "matrix", "river", "eigenvalue",
           "gradient descent", "the"]

parser = argparse.ArgumentParser()
parser.add_argument("--library", default=os.path.join(ROOT, "bench", "work", "search"))
parser.add_argument("--seconds", type=float, default=15)
parser.add_argument("--runs", type=int, default=5)
args = parser.parse_args()

cluster = os.environ.get("MARGIN_TEST_POSTGRES")
if not cluster:
    sys.exit("team-load: run it under scripts/with-postgres.sh (no MARGIN_TEST_POSTGRES)")
if not os.path.exists(os.path.join(args.library, "library.sqlite")):
    sys.exit(f"team-load: no library at {args.library} (run bench/run.sh first, or --library DIR)")

work = tempfile.mkdtemp(prefix="margin-team-bench.")
name = "margin_bench_%d" % os.getpid()
subprocess.run(["psql", cluster, "-q", "-c", f"CREATE DATABASE {name}"], check=True)
team_url = re.sub(r"/[^/]*$", "/" + name, cluster)
# The personal library: a copy of the bench library's database (the annotations written here
# must not change it); its PDFs are not needed to search and annotate.
personal = os.path.join(work, "personal")
os.makedirs(personal)
subprocess.run(["sqlite3", os.path.join(args.library, "library.sqlite"),
                f"VACUUM INTO '{os.path.join(personal, 'library.sqlite')}'"], check=True)

BACKENDS = {
    "SQLite": dict(os.environ, MARGIN_HOME=personal),
    # Each command a process of its own: no team helper (on by default), which has its own column.
    "PostgreSQL": dict(os.environ, MARGIN_HOME=os.path.join(work, "team-home"), MARGIN_LIBRARY=team_url,
                       MARGIN_TEAM_HELPER="0"),
}

start = time.perf_counter()
copied = subprocess.run([MARGIN, "db", "copy", "--to", team_url, "--json"],
                        env=dict(os.environ, MARGIN_HOME=args.library), capture_output=True, text=True)
copy_seconds = time.perf_counter() - start
if copied.returncode != 0:
    sys.exit(f"team-load: db copy failed: {copied.stderr}")
report = json.loads(copied.stdout)

print("## Both backends: SQLite and PostgreSQL\n")
print(f"`margin db copy` of the bench library ({report['books']} books, {report['pages']} pages, "
      f"{report['filesAdded']} PDFs) into a fresh PostgreSQL database: {copy_seconds:.1f} s.\n")

# Search latency, one query at a time from the command line.
print(f"Search from the command line (`margin search Q --json --limit 0`, median of {args.runs} runs, start-up "
      "and connection included; the same hits on both, or the run fails), and whether the first 50 (`margin search "
      "Q --json`, what a user sees first) come in the same order on both, else the first place they differ:\n")
print("PostgreSQL's first column: each command a process of its own (`MARGIN_TEAM_HELPER=0`); the team helper's column: the same commands as a user runs them by default, so `margin` hands each to a "
      "`margin-full` kept running with the library open (started by the first, before the runs).\n")
print("| query | hits | SQLite | PostgreSQL | PostgreSQL / SQLite | PostgreSQL, team helper | helper / SQLite "
      "| first 50 in the same order |")
print("|---|---:|---:|---:|---:|---:|---:|---|")
mismatches = []
misordered = []
HELPED = dict(BACKENDS["PostgreSQL"], MARGIN_TEAM_HELPER="10")


def helper_pid():
    status = subprocess.run([MARGIN, "db", "status", "--json"], env=HELPED, capture_output=True, text=True)
    return (json.loads(status.stdout or "{}").get("helper") or {}).get("pid")


subprocess.run([MARGIN, "list"], env=HELPED, capture_output=True, check=True)
for _ in range(100):
    if helper_pid():
        break
    time.sleep(0.1)
else:
    sys.exit("team-load: the team helper did not start")
CLI_BACKENDS = dict(BACKENDS, **{"helper": HELPED})
for query in QUERIES:
    times = {backend: [] for backend in CLI_BACKENDS}
    answers = {}
    for _ in range(args.runs):
        for backend, env in CLI_BACKENDS.items():
            t0 = time.perf_counter()
            result = subprocess.run([MARGIN, "search", query, "--json", "--limit", "0"], env=env,
                                    capture_output=True, text=True)
            times[backend].append(time.perf_counter() - t0)
            hits = json.loads(result.stdout or "[]")
            answers[backend] = sorted((h["page"], h["snippet"]) for h in hits)
    if answers["SQLite"] != answers["PostgreSQL"] or answers["helper"] != answers["PostgreSQL"]:
        mismatches.append(query)
    sqlite = statistics.median(times["SQLite"]) * 1000
    postgres = statistics.median(times["PostgreSQL"]) * 1000
    helped = statistics.median(times["helper"]) * 1000
    first = {}
    for backend, env in BACKENDS.items():
        result = subprocess.run([MARGIN, "search", query, "--json"], env=env, capture_output=True, text=True)
        first[backend] = [(h["book"], h["page"]) for h in json.loads(result.stdout or "[]")]
    place = next((index for index, (a, b) in enumerate(zip(first["SQLite"], first["PostgreSQL"])) if a != b),
                 None if len(first["SQLite"]) == len(first["PostgreSQL"]) else min(map(len, first.values())))
    if place is not None:
        misordered.append(query)
    order = "yes" if place is None else f"no: from hit {place + 1}"
    print(f"| {query} | {len(answers['SQLite'])} | {sqlite:.0f} ms | {postgres:.0f} ms | {postgres / sqlite:.2f}× "
          f"| {helped:.0f} ms | {helped / sqlite:.2f}× | {order} |")
if helper_pid():
    os.kill(helper_pid(), signal.SIGKILL)
if mismatches:
    print(f"\n**Different hits** for: {', '.join(mismatches)}")
if misordered:
    # Reported, not failed on: a known difference of ranking (see RESULTS.md, stop 54), not of
    # what is found; the rest of the bench still runs.
    print(f"\n**Ranked differently** (every hit the same, their order not, so the first 50 differ in order "
          f"or in which pages they are): {', '.join(misordered)}")


def served_searches(envs, queries, requests, warm=20):
    """For each query, the median time of `requests` searches, one at a time, from a `margin serve`
    of each backend (`envs`), started together and kept running: the search alone, without a
    command's start-up and connection. Each server first answers `warm` of each query (its
    statements prepared on its connections, what ranking weighs with counted); then the backends
    take turns request by request, so that neither runs in the machine's better minutes alone
    (asked one backend after the other, "matrix" came out 1.55x in one run and 1.22x in the next)."""
    started = {backend: start_server(MARGIN, env, f"team-load ({backend} search)") for backend, env in envs.items()}
    connections = {backend: http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                   for backend, (_, port) in started.items()}

    def ask(backend, path):
        connection = connections[backend]
        t0 = time.perf_counter()
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            sys.exit(f"team-load: search {path!r} answered {response.status} ({backend})")
        return time.perf_counter() - t0

    medians = {}
    for query in queries:
        path = "/api/search?q=" + urllib.parse.quote(query)
        for backend in connections:
            for _ in range(warm):
                ask(backend, path)
        times = {backend: [] for backend in connections}
        for _ in range(requests):
            for backend in connections:
                times[backend].append(ask(backend, path))
        medians[query] = {backend: statistics.median(values) * 1000 for backend, values in times.items()}
    for server, _ in started.values():
        server.terminate()
        server.wait(timeout=60)
    return medians


# The same searches inside the server, where a team searches; PostgreSQL with its page words and,
# for what they save, without (`MARGIN_PLAIN=page-words,phrase-words`: the text searched, as before).
SERVED = dict(BACKENDS, **{"PostgreSQL, text": dict(BACKENDS["PostgreSQL"], MARGIN_PLAIN="page-words,phrase-words")})
print("\nThe same searches in `margin serve` (`GET /api/search`, one at a time, median of 100; the three "
      "servers take turns request by request):\n")
print("| query | SQLite | PostgreSQL | PostgreSQL / SQLite | PostgreSQL without page words |")
print("|---|---:|---:|---:|---:|")
for query, served in served_searches(SERVED, QUERIES, 100).items():
    print(f"| {query} | {served['SQLite']:.1f} ms | {served['PostgreSQL']:.1f} ms | "
          f"{served['PostgreSQL'] / served['SQLite']:.2f}× | {served['PostgreSQL, text']:.1f} ms |")



def start(backend, env, servers=1):
    """`servers` `margin serve` processes on one library, and its books (what users annotate)."""
    books = json.loads(subprocess.run([MARGIN, "list", "--json"], env=env, capture_output=True,
                                      text=True).stdout)
    return backend, books, [start_server(MARGIN, env, f"team-load ({backend})") for _ in range(servers)]


def stop(started):
    for server, _ in started[2]:
        server.terminate()
        server.wait(timeout=60)


def phase(started, users, seconds):
    """`users` clients of the started servers (each client keeps to one) for `seconds`:
    (requests, wall seconds, {kind: latencies}, failures)."""
    backend, books, servers = started
    results = {"search": [], "annotate": []}
    failures = []
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def client(seed):
        rng = random.Random(seed)
        port = servers[seed % len(servers)][1]
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while time.perf_counter() < deadline:
            method, path, body, kind = next_request(rng, books, QUERIES, seed)
            t0 = time.perf_counter()
            try:
                connection.request(method, path, body=body, headers={"Content-Type": "application/json"})
                response = connection.getresponse()
                data = response.read()
                ok = response.status in (200, 201)
            except Exception as error:  # a failed request is reported, not hidden
                ok, data = False, str(error).encode()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            elapsed = time.perf_counter() - t0
            with lock:
                results[kind].append(elapsed)
                if not ok:
                    failures.append(f"{backend} {method} {path}: {data[:200]!r}")

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client, args=(seed,)) for seed in range(users)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(len(v) for v in results.values()), time.perf_counter() - t0, results, failures


def load(backend, env, users, servers=1):
    """One phase of `users` users on fresh servers: (requests/s, {kind: latencies}, failures)."""
    started = start(backend, env, servers)
    requests, wall, results, failures = phase(started, users, args.seconds)
    stop(started)
    return requests / wall, results, failures


def row(backend, users, rate, results, failures):
    print(f"| {backend} | {users} | {rate:.1f} | {pct(results['search'], 50):.0f} ms | "
          f"{pct(results['search'], 99):.0f} ms | {pct(results['annotate'], 50):.0f} ms | "
          f"{pct(results['annotate'], 99):.0f} ms | {len(failures)} |")


print(f"\n`margin serve` on each backend, N users at once for {args.seconds:.0f} s each "
      "(70 % searches of the queries above, 30 % annotations: memos and bookmarks on random pages); "
      f"32 users for {4 * args.seconds:.0f} s on each, in {args.seconds:.0f}-second phases alternating the backends "
      "(SQLite, PostgreSQL, PostgreSQL, SQLite, twice) on servers kept running, so that neither runs in the "
      "machine's better minutes alone:\n")
print("| backend | users | requests/s | search p50 | search p99 | annotate p50 | annotate p99 | failed |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
all_failures = []
for users in (1, 8):
    for backend, env in BACKENDS.items():
        rate, results, failures = load(backend, env, users)
        all_failures += failures
        row(backend, users, rate, results, failures)
started = {backend: start(backend, env) for backend, env in BACKENDS.items()}
totals = {backend: [0, 0.0, {"search": [], "annotate": []}, []] for backend in BACKENDS}
phases = {backend: [] for backend in BACKENDS}
for backend in ["SQLite", "PostgreSQL", "PostgreSQL", "SQLite"] * 2:
    requests, wall, results, failures = phase(started[backend], 32, args.seconds)
    total = totals[backend]
    total[0] += requests
    total[1] += wall
    for kind in results:
        total[2][kind] += results[kind]
    total[3] += failures
    phases[backend].append(requests / wall)
for backend in BACKENDS:
    stop(started[backend])
    requests, wall, results, failures = totals[backend]
    all_failures += failures
    row(backend, 32, requests / wall, results, failures)
# Two servers on the PostgreSQL library, as behind a load balancer: 16 of the 32 users on each.
rate, results, failures = load("PostgreSQL", BACKENDS["PostgreSQL"], 32, servers=2)
all_failures += failures
row("PostgreSQL, two servers", 32, rate, results, failures)
# The same server through its Unix-domain socket (a team server beside its database): no TCP, no TLS.
socket = os.environ.get("MARGIN_TEST_POSTGRES_SOCKET")
if socket:
    socket_url = re.sub(r"@/[^?]*\?", f"@/{name}?", socket)
    rate, results, failures = load("PostgreSQL", dict(BACKENDS["PostgreSQL"], MARGIN_LIBRARY=socket_url), 32)
    all_failures += failures
    row("PostgreSQL, Unix socket", 32, rate, results, failures)
ratio = (totals["PostgreSQL"][0] / totals["PostgreSQL"][1]) / (totals["SQLite"][0] / totals["SQLite"][1])
print(f"\nAt 32 users PostgreSQL did {ratio:.2f}× SQLite's requests/s; each {args.seconds:.0f}-second phase, in "
      "order: SQLite " + ", ".join(f"{r:.0f}" for r in phases["SQLite"]) + "; PostgreSQL "
      + ", ".join(f"{r:.0f}" for r in phases["PostgreSQL"]) + " requests/s.")
for failure in all_failures[:10]:
    print(f"\n- failed: {failure}")
# Every annotation that was acknowledged is there.
counts = {backend: json.loads(subprocess.run([MARGIN, "db", "status", "--json"], env=env, capture_output=True,
                                             text=True).stdout)["counts"] for backend, env in BACKENDS.items()}
print(f"\nAfterwards: SQLite holds {counts['SQLite']['memos']} memos and {counts['SQLite']['bookmarks']} bookmarks, "
      f"PostgreSQL {counts['PostgreSQL']['memos']} and {counts['PostgreSQL']['bookmarks']}.")
shutil.rmtree(work, ignore_errors=True)
sys.exit(1 if all_failures or mismatches else 0)
