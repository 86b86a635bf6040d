#!/usr/bin/env python3
"""Takes the reader's screenshots for docs/screenshots (scripts/screenshots.sh runs it): each
named page of a running `margin serve` at 1400 px and at 390 px wide, in chromium, waiting for
the reader to be ready and its pages drawn.

Usage: screenshots.py URL OUTDIR NAME=PATH...   (PATH as /books/1/pages/2; NAME as library)
"""
import os
import sys
import time

from browsers import start, waiter

url, out = sys.argv[1:3]
shots = [argument.split("=", 1) for argument in sys.argv[3:]]
os.makedirs(out, exist_ok=True)
for width, height in [(1400, 900), (390, 844)]:
    driver = start("chromium", width, height)
    wait = waiter("chromium")
    if width < 500:
        driver.viewport(width, height)
    try:
        for name, path in shots:
            driver.get(url + path)
            if "/pages/" in path:
                wait(lambda: driver.script("return document.getElementById('reader').dataset.ready") == "true",
                     "the reader")
                wait(lambda: driver.script(
                    "const n = document.getElementById('reader').dataset.pageNumber;"
                    " return document.querySelector(`.page[data-number='${n}']`).dataset.drawn"), "the page drawn")
                time.sleep(0.3)
            driver.screenshot(os.path.join(out, f"{name}-{width}.png"))
    finally:
        driver.quit()
