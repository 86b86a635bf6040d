#!/usr/bin/env python3
"""Attacks a running `margin serve` from other web sites, in Debian's chromium (Selenium through
chromium-driver; nothing is downloaded), as any page a user visits could.

1. Cross-site writes: a page served by another server on 127.0.0.1, under the name attacker.test
   (mapped to 127.0.0.1 by chromium's --host-resolver-rules, so it is another site), tries every
   write route: auto-submitted <form enctype="text/plain"> and urlencoded posts, no-cors fetches,
   a beacon, and CORS fetches with JSON, PATCH and DELETE.
2. DNS rebinding: a page whose name (rebind.test) resolves to 127.0.0.1 at margin's port, so it
   is same-origin with whatever answers there, reads the library and writes to it.

It prints what the browser saw as JSON; the Swift test checks through the CLI that nothing
changed.

Usage: cross_site_attack.py MARGIN_URL BOOK ANNOTATION_ID
"""
import http.server
import json
import os
import socketserver
import sys
import tempfile
import threading
import time

margin, book, annotation = sys.argv[1:4]
port = margin.rsplit(":", 1)[1]

ATTACK = """<!doctype html><html><head><meta charset="utf-8"><title>attack</title></head><body>
<script>
const target = %(margin)s, book = %(book)s, id = %(annotation)s;
const bodies = {
  memos: JSON.stringify({text: "forged memo", page: 1}),
  bookmarks: JSON.stringify({page: 3, label: "forged bookmark"}),
  highlights: JSON.stringify({page: 2, text: "inverted index", note: "forged"}),
};
let pending = 0;
const results = {};
function done() { if (--pending === 0) setTimeout(() => { document.title = "done:" + JSON.stringify(results); }, 500); }
function form(kind, enctype) {
  pending++;
  const frame = document.createElement("iframe");
  frame.name = "f-" + kind + "-" + enctype.replace(/\\W/g, "");
  frame.addEventListener("load", done, {once: true});
  document.body.appendChild(frame);
  const f = document.createElement("form");
  f.method = "POST"; f.enctype = enctype; f.target = frame.name;
  f.action = `${target}/api/books/${book}/${kind}`;
  const input = document.createElement("input");
  // text/plain sends NAME=VALUE: a name ending the JSON and a value closing it make a JSON body.
  const json = bodies[kind];
  input.name = json.slice(0, -1) + ', "x": "'; input.value = '"}';
  f.appendChild(input);
  document.body.appendChild(f);
  f.submit();
}
async function attempt(name, url, options) {
  pending++;
  try {
    const response = await fetch(url, options);
    results[name] = response.type === "opaque" ? "opaque" : response.status;
  } catch (error) { results[name] = "blocked"; }
  done();
}
pending++;
for (const kind of Object.keys(bodies)) {
  form(kind, "text/plain");
  form(kind, "application/x-www-form-urlencoded");
  attempt(`no-cors ${kind}`, `${target}/api/books/${book}/${kind}`,
    {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: bodies[kind]});
  attempt(`cors json ${kind}`, `${target}/api/books/${book}/${kind}`,
    {method: "POST", headers: {"Content-Type": "application/json"}, body: bodies[kind]});
  results[`beacon ${kind}`] = navigator.sendBeacon(`${target}/api/books/${book}/${kind}`,
    new Blob([bodies[kind]], {type: "text/plain"}));
  attempt(`patch ${kind}`, `${target}/api/${kind}/${id}`,
    {method: "PATCH", headers: {"Content-Type": "application/json"}, body: JSON.stringify({note: "x", label: "x", text: "x"})});
  attempt(`delete ${kind}`, `${target}/api/${kind}/${id}`, {method: "DELETE"});
  attempt(`read ${kind}`, `${target}/api/books/${book}/${kind}`, {});
}
done();
</script></body></html>"""


def main():
    os.environ.setdefault("SE_OFFLINE", "true")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    folder = tempfile.mkdtemp()
    with open(os.path.join(folder, "index.html"), "w") as page:
        page.write(ATTACK % {"margin": json.dumps(margin), "book": json.dumps(int(book)),
                             "annotation": json.dumps(int(annotation))})

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs): super().__init__(*args, directory=folder, **kwargs)
        def log_message(self, *args): pass

    server = socketserver.TCPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    attacker = f"http://attacker.test:{server.server_address[1]}/"

    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-extensions", "--host-resolver-rules=MAP attacker.test 127.0.0.1, MAP rebind.test 127.0.0.1"):
        options.add_argument(flag)
    driver = webdriver.Chrome(
        service=Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
    report = {}
    try:
        driver.set_page_load_timeout(30)
        driver.get(attacker)
        deadline = time.time() + 30
        while not driver.title.startswith("done:") and time.time() < deadline:
            time.sleep(0.2)
        report["cross_site"] = json.loads(driver.title[5:]) if driver.title.startswith("done:") else None

        # The rebinding phase: a script running in an origin whose name leads to margin's port.
        driver.get(f"http://rebind.test:{port}/")
        report["rebind_page"] = driver.find_element("css selector", "body").text[:200]
        report["rebind"] = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            const book = arguments[0], id = arguments[1];
            (async () => {
              const seen = {};
              const go = async (name, path, options) => {
                try { const r = await fetch(path, options); seen[name] = [r.status, (await r.text()).slice(0, 200)]; }
                catch (error) { seen[name] = ["failed", String(error)]; }
              };
              await go("list", "/api/books", {});
              await go("export", `/api/books/${book}/export?format=json`, {});
              await go("memo", `/api/books/${book}/memos`,
                {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({text: "rebound"})});
              await go("delete", `/api/highlights/${id}`, {method: "DELETE", headers: {"Content-Type": "application/json"}});
              done(seen);
            })();
        """, int(book), int(annotation))
    finally:
        driver.quit()
        server.shutdown()
    print(json.dumps(report))


main()
