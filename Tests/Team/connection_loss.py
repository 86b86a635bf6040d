#!/usr/bin/env python3
"""PostgreSQL restarted and stopped under a team library's `margin serve` and CLI, on a cluster
of its own (run under scripts/with-postgres.sh, whose MARGIN_TEST_POSTGRES_CTL restarts it: the
other tests' cluster is never touched).

1. Four clients write memos and search for 3 s; the server restarts after 1 s. Every request
   answers within 15 s: a success, or a 503 saying the database can't be reached; every memo
   acknowledged (201) is in the library afterwards; after the restart every request succeeds.
2. The server stopped for good: a request answers 503 within 15 s, and SIGTERM with one still
   waiting stops `serve` within 8 s.
3. The CLI with the database away: one `error:` line, exit 1; then three adds while the server
   restarts: each book is in the library exactly when its add said so.

Prints what it saw as JSON. Usage: connection_loss.py MARGIN FIXTURES_PDF_DIR
"""
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

margin, fixtures = sys.argv[1:3]
ctl = os.environ["MARGIN_TEST_POSTGRES_CTL"]
work = tempfile.mkdtemp(prefix="margin-connection-loss-")
env = dict(os.environ, MARGIN_HOME=os.path.join(work, "home"), MARGIN_LIBRARY=os.environ["MARGIN_TEST_POSTGRES"])
report = {}


def run(*arguments):
    return subprocess.run([margin, *arguments], env=env, capture_output=True, text=True, timeout=120)


def control(action):
    subprocess.run([ctl, action], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)


assert run("db", "init").returncode == 0
assert run("add", "-q", os.path.join(fixtures, "sample.pdf")).returncode == 0
server = subprocess.Popen([margin, "serve", "--port", "0"], env=env, stderr=subprocess.PIPE, text=True)
said = ""
while "(Ctrl-C stops)" not in said:
    said += server.stderr.readline()
port = int(re.search(r"http://127\.0\.0\.1:(\d+)", said).group(1))
headers = {"Content-Type": "application/json", "Origin": f"http://127.0.0.1:{port}", "Host": f"127.0.0.1:{port}"}


def request(method, path, body=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    start = time.monotonic()
    try:
        connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        response = connection.getresponse()
        return response.status, response.read().decode(), time.monotonic() - start
    except OSError as error:
        return 0, str(error), time.monotonic() - start
    finally:
        connection.close()


# 1. A restart under load.
lock = threading.Lock()
answers = []
acknowledged = []
stop_at = time.monotonic() + 3


def client(index):
    n = 0
    while time.monotonic() < stop_at:
        n += 1
        text = f"memo {index}-{n}"
        status, body, seconds = request("POST", "/api/books/1/memos", {"page": 1, "text": text})
        with lock:
            answers.append((status, body, seconds, time.monotonic() - seconds))
            if status == 201:
                acknowledged.append(text)
        status, body, seconds = request("GET", "/api/search?q=fox")
        with lock:
            answers.append((status, body, seconds, time.monotonic() - seconds))


threads = [threading.Thread(target=client, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
time.sleep(1)
control("restart")
restarted = time.monotonic()
for t in threads:
    t.join()
stored = json.loads(run("memo", "list", "--json").stdout)
sys.stderr.write("\n".join(f"{a[0]} asked at {a[3] - restarted:+.2f} s, {a[2]:.2f} s: {a[1][:200]}"
                           for a in answers if a[0] not in (200, 201)) + "\n")
report["requests"] = len(answers)
report["statuses"] = sorted({a[0] for a in answers})
# What any other answer said (for the test's message).
report["unexpected"] = sorted({f"{a[0]}: {a[1][:300]}" for a in answers if a[0] not in (200, 201, 503)})
report["failures_said"] = sorted({json.loads(a[1]).get("error", "")[:60] for a in answers if a[0] == 503})
report["slowest"] = max(a[2] for a in answers)
report["acknowledged"] = len(acknowledged)
report["acknowledged_stored"] = len(set(acknowledged) & {m["text"] for m in stored})
report["stored"] = len(stored)
# Asked a second after the restart (for the pool to reconnect), everything succeeds.
report["after_restart"] = sorted({a[0] for a in answers if a[3] > restarted + 1})

# 2. The database gone: a clear 503, and SIGTERM still stops the server.
control("stop")
status, body, seconds = request("GET", "/api/books/1/highlights")
report["gone"] = [status, round(seconds, 1), json.loads(body).get("error", "") if status else body]
waiting = threading.Thread(target=request, args=("GET", "/api/books/1/bookmarks"))
waiting.start()
time.sleep(0.5)
start = time.monotonic()
server.send_signal(signal.SIGTERM)
try:
    server.wait(timeout=8)
    report["stopped_in"] = round(time.monotonic() - start, 1)
except subprocess.TimeoutExpired:
    report["stopped_in"] = None
    server.kill()
waiting.join()

# 3. The CLI with the database away, then while it restarts.
away = run("add", "-q", os.path.join(fixtures, "second.pdf"))
report["cli_away"] = [away.returncode, [line for line in away.stderr.splitlines() if line.startswith("error:")]]
control("start")
restarter = threading.Thread(target=lambda: (time.sleep(0.05), control("restart")))
restarter.start()
adds = {}
for name in ["second.pdf", "mixed.pdf", "prose.pdf"]:
    result = run("add", "-q", os.path.join(fixtures, name))
    adds[name] = [result.returncode, [line for line in result.stderr.splitlines() if line.startswith("error:")]]
    if result.returncode not in (0, 1):
        # Its first lines say what failed, and where.
        report.setdefault("crashes", []).append(result.stderr[:3000])
restarter.join()
books = {b["title"] for b in json.loads(run("list", "--json").stdout)}
titles = {"second.pdf": "Field Notes", "mixed.pdf": "Mixed Bag", "prose.pdf": "Prose"}
report["adds"] = adds
report["adds_consistent"] = all((code == 0) == (titles[name] in books) for name, (code, _) in adds.items())
report["adds_errors_one_line"] = all(code == 0 or len(errors) == 1 for code, errors in adds.values())
print(json.dumps(report))
