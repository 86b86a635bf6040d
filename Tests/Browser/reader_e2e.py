#!/usr/bin/env python3
"""Drives the reader of a running `margin serve` in a real browser (Debian's chromium through
chromium-driver, with Selenium; the driver's path is given, so nothing is downloaded).

It selects SENTENCE in the text layer of page PAGE and presses `h`, bookmarks the page with `b`,
adds a note with `n`, searches the book for SEARCH and follows the first hit, checks that the
hit's page marks it, and that the browser logged no errors. It prints what it did as JSON; the
Swift test checks the library through the CLI.

Usage: reader_e2e.py URL BOOK PAGE SENTENCE SEARCH NOTE SCREENSHOT
"""
import json
import os
import sys

os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must not fetch a driver
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

url, book, page, sentence, search, note, screenshot = sys.argv[1:8]

options = webdriver.ChromeOptions()
options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--window-size=1200,1400", "--no-first-run", "--disable-extensions"):
    options.add_argument(flag)
options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
driver = webdriver.Chrome(
    service=Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
wait = WebDriverWait(driver, 20)
report = {}


def ready():
    wait.until(lambda d: d.find_element(By.ID, "reader").get_attribute("data-ready") == "true")


def status_says(words):
    wait.until(lambda d: words in d.find_element(By.ID, "status").text)


def press(key):
    driver.find_element(By.TAG_NAME, "body").send_keys(key)


try:
    driver.get(f"{url}/books/{book}/pages/{page}")
    ready()
    report["layer_page"] = driver.find_element(By.CSS_SELECTOR, ".text-layer").get_attribute("data-page")
    # Select the sentence as a reader would: from its first character's span to its last one's.
    selected = driver.execute_script(
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
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#marks div")) > 0)
    report["marks"] = len(driver.find_elements(By.CSS_SELECTOR, "#marks div"))
    press("b")
    status_says("Bookmarked")
    press("n")
    wait.until(lambda d: d.switch_to.alert)
    alert = driver.switch_to.alert
    alert.send_keys(note)
    alert.accept()
    status_says("Note added")
    # The keyboard help opens on '?'.
    press("?")
    report["help_open"] = driver.find_element(By.ID, "help").get_attribute("open") is not None
    driver.execute_script("document.getElementById('help').close()")
    driver.save_screenshot(screenshot)
    # Search the book and follow the first hit.
    field = driver.find_element(By.CSS_SELECTOR, "form[data-action=search] input")
    field.send_keys(search)
    field.submit() if False else field.send_keys("\n")
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#hits a.hit"))
    hit = driver.find_elements(By.CSS_SELECTOR, "#hits a.hit")[0]
    report["hit"] = hit.text
    hit.click()
    wait.until(lambda d: "?q=" in d.current_url)
    ready()
    report["followed_to"] = driver.find_element(By.ID, "reader").get_attribute("data-page-number")
    found = driver.find_elements(By.CSS_SELECTOR, "#text-layer span.found")
    report["found"] = "".join(s.get_attribute("textContent") for s in found)
    # Turn the page with the arrow key.
    press("\ue012")  # ArrowLeft
    wait.until(lambda d: d.current_url.rstrip("/").endswith(f"/pages/{int(report['followed_to']) - 1}"))
    ready()
    report["after_arrow"] = driver.find_element(By.ID, "reader").get_attribute("data-page-number")
    report["console_errors"] = [
        entry["message"] for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]
finally:
    driver.quit()
print(json.dumps(report))
