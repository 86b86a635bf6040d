"""What the load checks share: starting `margin serve` on a free port, a user's next request,
and percentiles."""
import json
import re
import urllib.parse
import subprocess
import sys


def start_server(margin, env, name):
    """Starts `margin serve --port 0` with `env`; returns the process and the port it says."""
    server = subprocess.Popen([margin, "serve", "--port", "0"], env=env, stderr=subprocess.PIPE, text=True)
    said = ""
    while "(Ctrl-C stops)" not in said:
        line = server.stderr.readline()
        if not line:
            sys.exit(f"{name}: the server did not start: {said}")
        said += line
    # Its own address: a team library's postgres:// URL in the same line names another port.
    return server, int(re.search(r"http://127\.0\.0\.1:(\d+)", said).group(1))


def pct(values, p):
    """The p-th percentile of durations in seconds, in milliseconds (0 for none)."""
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] * 1000 if values else 0


def next_request(rng, books, queries, who, bookmarks=True):
    """A user's next request: a search (70 %) or an annotation (30 %: a memo, or half of the time a
    bookmark) on a random page of a random book. Returns (method, path, body, kind)."""
    if rng.random() < 0.7:
        return "GET", "/api/search?q=" + urllib.parse.quote(rng.choice(queries)), None, "search"
    book = rng.choice(books)
    page = rng.randint(1, book["pages"])
    if bookmarks and rng.random() < 0.5:
        return "POST", f"/api/books/{book['id']}/bookmarks", json.dumps({"page": page, "label": f"user {who}"}), "annotate"
    return "POST", f"/api/books/{book['id']}/memos", json.dumps({"text": f"memo {who}-{rng.random()}", "page": page}), "annotate"
