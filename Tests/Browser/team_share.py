#!/usr/bin/env python3
"""Shares an annotation from the reader of a team library's `margin serve`, in Debian's chromium
through chromium-driver with Selenium (driver paths given: nothing is downloaded).

On page PAGE of book BOOK it waits for the sidebar's list of annotations and for someone else's
highlight drawn on the page with their name, clicks the share
button of the one reading OWN, waits for the reader to say it is shared, and reports as JSON
what each listed annotation showed: its text, whether it had share and remove buttons, and the
name shown for someone else's.

Usage: team_share.py URL BOOK PAGE OWN
"""
import json
import os
import sys
import time

url, book, page, own = sys.argv[1:5]
os.environ.setdefault("SE_OFFLINE", "true")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

options = webdriver.ChromeOptions()
options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"):
    options.add_argument(flag)
driver = webdriver.Chrome(
    service=Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)


def wait(condition, what, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise SystemExit(f"timed out waiting for {what}")


def listed():
    # Read in one script, in the page: the list is rebuilt while the reader refreshes it.
    return driver.execute_script("""
        return Array.from(document.querySelectorAll("#annotations li")).map((li) => ({
            text: li.textContent,
            share: Array.from(li.querySelectorAll("button[data-action=share]")).map((b) => b.textContent),
            remove: li.querySelectorAll("button[title^=Remove]").length,
            edit: li.querySelectorAll("button[data-action=edit], select[data-action=color]").length,
            by: Array.from(li.querySelectorAll(".by")).map((s) => s.textContent.trim()),
        }));""")


try:
    driver.get(f"{url.rstrip('/')}/books/{book}/pages/{page}")
    wait(lambda: len(listed()) >= 2, "the page's annotations")
    before = listed()
    tags = wait(lambda: driver.execute_script(
        "return Array.from(document.querySelectorAll(`.page[data-number='${arguments[0]}'] .marks div.theirs .author-tag`))"
        ".map((t) => t.textContent)", int(page)), "someone else's highlight drawn with their name")
    clicked = driver.execute_script("""
        const item = Array.from(document.querySelectorAll("#annotations li")).find((li) => li.textContent.includes(arguments[0]));
        const button = item && item.querySelector("button[data-action=share]");
        if (button) button.click();
        return !!button;""", own)
    if not clicked:
        raise SystemExit(f"no share button on the annotation reading {own!r}")
    status = wait(lambda: (lambda said: "Shared with the team" in said and said)(
        driver.execute_script('return document.getElementById("status").textContent')), "the reader to say it is shared")
    wait(lambda: any(own in a["text"] and a["share"] == ["shared"] for a in listed()), "the list to show it shared")
    print(json.dumps({"before": before, "after": listed(), "status": status, "tags": tags}))
finally:
    driver.quit()
