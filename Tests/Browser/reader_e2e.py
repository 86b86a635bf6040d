#!/usr/bin/env python3
"""Drives the reader of a running `margin serve` in a real browser: Debian's chromium through
chromium-driver with Selenium, or Debian's firefox-esr through its own Marionette protocol
(marionette-driver; no geckodriver). Driver paths are given, so nothing is downloaded.

It selects SENTENCE in the text layer of page PAGE and presses `h`, bookmarks the page with `b`,
adds a note with `n`, opens the keys with `?`, searches the book for SEARCH and follows the first
hit, checks that the hit's page marks it, turns the page with the left arrow, and (chromium)
that the browser logged no errors. It prints what it did as JSON; the Swift test checks the
library through the CLI.

It also double-clicks a word and triple-clicks a line of SENTENCE's page and copies a
selection across a line end (and, given HYPHENATED, across a hyphenated one on that book's
page 1), reading what the page hands the clipboard.

Usage: reader_e2e.py chromium|firefox URL BOOK PAGE SENTENCE SEARCH NOTE SCREENSHOT [HYPHENATED]
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

browser, url, book, page, sentence, search, note, screenshot = sys.argv[1:9]
# A book whose first page breaks "com-puter" at a line end (copying joins it).
hyphenated = sys.argv[9] if len(sys.argv) > 9 else None
ARROW_LEFT = "\ue012"
ENTER = "\ue007"


class Chromium:
    def __init__(self):
        os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must not fetch a driver
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
        self.by = By.CSS_SELECTOR
        options = webdriver.ChromeOptions()
        options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1200,1400", "--no-first-run", "--disable-extensions"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(
            service=Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")),
            options=options)

    def get(self, address): self.driver.get(address)
    def url(self): return self.driver.current_url
    def finds(self, css): return self.driver.find_elements(self.by, css)
    def script(self, code, *args): return self.driver.execute_script(code, *args)
    def press(self, key): self.driver.find_element(self.by, "body").send_keys(key)

    def answer_prompt(self, text):
        alert = self.driver.switch_to.alert
        alert.send_keys(text)
        alert.accept()

    def screenshot(self, path): self.driver.save_screenshot(path)

    def console_errors(self):
        return [e["message"] for e in self.driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]

    def quit(self): self.driver.quit()


class Firefox:
    def __init__(self):
        from marionette_driver.by import By
        from marionette_driver.marionette import Marionette
        self.by = By.CSS_SELECTOR
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.profile = tempfile.mkdtemp(prefix="margin-firefox-")
        with open(os.path.join(self.profile, "user.js"), "w") as prefs:
            prefs.write(f'user_pref("marionette.port", {port});\n')
            prefs.write('user_pref("browser.shell.checkDefaultBrowser", false);\n')
            prefs.write('user_pref("datareporting.policy.dataSubmissionEnabled", false);\n')
        self.process = subprocess.Popen(
            [os.environ.get("FIREFOX", "/usr/bin/firefox-esr"), "--headless", "--marionette", "--no-remote",
             "--profile", self.profile, "-width", "1200", "-height", "1400"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.client = Marionette(host="127.0.0.1", port=port)
        self.client.raise_for_port(timeout=60)
        self.client.start_session()

    def get(self, address): self.client.navigate(address)
    def url(self): return self.client.get_url()
    def finds(self, css): return self.client.find_elements(self.by, css)
    def script(self, code, *args): return self.client.execute_script(code, script_args=list(args))

    def press(self, key):
        keys = self.client.actions.sequence("key", "keyboard")
        keys.key_down(key).key_up(key).perform()

    def answer_prompt(self, text):
        from marionette_driver.marionette import Alert
        alert = Alert(self.client)
        alert.send_keys(text)
        alert.accept()

    def screenshot(self, path):
        with open(path, "wb") as out:
            out.write(self.client.screenshot(format="binary"))

    def console_errors(self): return None  # Marionette does not hand over the console

    def quit(self):
        try:
            self.client.delete_session()
        finally:
            # Firefox and its content processes, all of them (they share the session started).
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)
            shutil.rmtree(self.profile, ignore_errors=True)


def wait(condition, what, seconds=float(os.environ.get("READER_E2E_WAIT", "60"))):
    end = time.monotonic() + seconds
    problem = None
    while time.monotonic() < end:
        try:
            value = condition()
            if value:
                return value
        except Exception as error:  # an alert not there yet, a page still loading
            problem = error
        time.sleep(0.05)
    raise SystemExit(f"reader_e2e ({browser}): timed out waiting for {what} (last: {problem})")


driver = Chromium() if browser == "chromium" else Firefox()
report = {"browser": browser}
press = driver.press


def attribute(css, name):
    return driver.script("const e = document.querySelector(arguments[0]); return e && e.getAttribute(arguments[1]);",
                         css, name)


def ready():
    wait(lambda: attribute("#reader", "data-ready") == "true", "the reader")


SELECT = """
    const [from, to] = [arguments[0], arguments[1]];
    const spans = Array.from(document.querySelectorAll('#text-layer span[data-i]'));
    const text = spans.map((s) => s.textContent).join('');
    const start = Array.from(text.slice(0, text.indexOf(from))).length;
    const end = Array.from(text.slice(0, text.indexOf(to) + to.length)).length;
    if (text.indexOf(from) < 0 || text.indexOf(to) < 0) return null;
    const range = document.createRange();
    range.setStart(spans[start].firstChild, 0);
    range.setEnd(spans[end - 1].firstChild, spans[end - 1].firstChild.length);
    window.getSelection().removeAllRanges();
    window.getSelection().addRange(range);
    return text.slice(text.indexOf(from), text.indexOf(to) + to.length);
"""

COPY = """
    const event = new ClipboardEvent('copy', {clipboardData: new DataTransfer(), bubbles: true, cancelable: true});
    document.dispatchEvent(event);
    return event.clipboardData.getData('text/plain');
"""

CLICKS = """
    const [word, clicks] = [arguments[0], arguments[1]];
    const spans = Array.from(document.querySelectorAll('#text-layer span[data-i]'));
    const text = spans.map((s) => s.textContent).join('');
    const at = Array.from(text.slice(0, text.indexOf(word))).length + 2;
    window.getSelection().removeAllRanges();
    spans[at].dispatchEvent(new MouseEvent('click', {bubbles: true, detail: clicks}));
""" + COPY


def status_says(words):
    wait(lambda: words in driver.script("return document.getElementById('status').textContent"), repr(words))


try:
    driver.get(f"{url}/books/{book}/pages/{page}")
    ready()
    report["layer_page"] = attribute(".text-layer", "data-page")
    # A double click selects a word, a triple click its line; a copy joins the line end.
    report["double_click"] = driver.script(CLICKS, "inverted", 2)
    report["triple_click"] = driver.script(CLICKS, "inverted", 3)
    report["copy_selected"] = driver.script(SELECT, "fast.", "An inverted")
    report["copied"] = driver.script(COPY)
    # Select the sentence as a reader would: from its first character's span to its last one's.
    selected = driver.script(
        """
        const sentence = arguments[0];
        const spans = Array.from(document.querySelectorAll('#text-layer span[data-i]'));
        const text = spans.map((s) => s.textContent).join('');
        const start = Array.from(text.slice(0, text.indexOf(sentence))).length;
        if (text.indexOf(sentence) < 0) return null;
        const end = start + Array.from(sentence).length;
        const range = document.createRange();
        range.setStart(spans[start].firstChild, 0);
        range.setEnd(spans[end - 1].firstChild, spans[end - 1].firstChild.length);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        return [start, end];
        """, sentence)
    report["selected"] = selected
    press("h")
    status_says("Highlighted")
    report["marks"] = wait(lambda: len(driver.finds("#marks div")), "the highlight drawn")
    press("b")
    status_says("Bookmarked")
    press("n")
    wait(lambda: driver.answer_prompt(note) or True, "the note's prompt")
    status_says("Note added")
    # Removing waits for an Undo: the highlight is removed and kept again; the bookmark is
    # removed for good (the toast's x sends it at once) and made again with `b`.
    driver.script("document.querySelector('#page-annotations li.highlight button[data-action=remove]').click()")
    wait(lambda: driver.script("return !document.getElementById('toast').hidden"), "the undo toast")
    report["hidden_while_pending"] = driver.script(
        "return [document.querySelectorAll('#page-annotations li.highlight:not([hidden])').length,"
        " Array.from(document.querySelectorAll('#marks div')).filter((m) => !m.hidden).length]")
    driver.script("document.querySelector('#toast [data-action=undo]').click()")
    status_says("Kept the highlight")
    report["kept"] = driver.script(
        "return document.querySelectorAll('#page-annotations li.highlight:not([hidden])').length")
    driver.script("document.querySelector('#page-annotations li.bookmark button[data-action=remove]').click()")
    wait(lambda: driver.script("return !document.getElementById('toast').hidden"), "the undo toast")
    driver.script("document.querySelector('#toast [data-action=dismiss]').click()")
    status_says("Removed the bookmark")
    report["bookmarks_after_removal"] = driver.script(
        "return document.querySelectorAll('#page-annotations li.bookmark:not([hidden])').length")
    press("b")
    status_says("Bookmarked")
    # The keyboard help opens on '?'.
    press("?")
    report["help_open"] = bool(wait(lambda: attribute("#help", "open") is not None, "the keys"))
    driver.script("document.getElementById('help').close()")
    driver.screenshot(screenshot)
    # Search the book and follow the first hit.
    field = driver.finds("form[data-action=search] input")[0]
    field.click()
    field.send_keys(search + ENTER)
    wait(lambda: driver.finds("#hits a.hit"), "search hits")
    report["hit"] = driver.script("return document.querySelector('#hits a.hit').textContent")
    driver.finds("#hits a.hit")[0].click()
    wait(lambda: "?q=" in driver.url(), "the hit's page")
    ready()
    report["followed_to"] = attribute("#reader", "data-page-number")
    report["found"] = driver.script(
        "return Array.from(document.querySelectorAll('#text-layer span.found')).map((s) => s.textContent).join('')")
    # Turn the page with the arrow key.
    press(ARROW_LEFT)
    wait(lambda: driver.url().split("?")[0].endswith(f"/pages/{int(report['followed_to']) - 1}"), "the page before")
    ready()
    report["after_arrow"] = attribute("#reader", "data-page-number")
    if hyphenated:
        driver.get(f"{url}/books/{hyphenated}/pages/1")
        ready()
        report["hyphen_selected"] = driver.script(SELECT, "The com", "puter is")
        report["hyphen_copied"] = driver.script(COPY)
    report["console_errors"] = driver.console_errors()
    report["page_errors"] = attribute("#reader", "data-errors")
    # The library's search box, typed into and submitted as a person does: the browser encodes
    # the space as '+' (an HTML form's encoding).
    driver.get(f"{url}/")
    box = wait(lambda: driver.finds("form.search input[name=q]"), "the library's search box")[0]
    box.click()
    box.send_keys("inverted index" + ENTER)
    wait(lambda: "q=" in driver.url(), "the search's page")
    report["form_url"] = driver.url()
    report["form_hits"] = len(wait(lambda: driver.finds(".hits .book-hits li") or None, "the library's hits"))
finally:
    driver.quit()
print(json.dumps(report))
