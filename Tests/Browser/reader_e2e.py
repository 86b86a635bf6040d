#!/usr/bin/env python3
"""Drives the reader of a running `margin serve` in a real browser (browsers.py: chromium or
firefox-esr, nothing downloaded) as a person reads and annotates, and prints what it saw as JSON;
the Swift test checks the library through the CLI.

The run is described by a JSON file (CONFIG):
  url, book, page, sentence, search, note, screenshot   the basic run: on page PAGE of BOOK,
      double-click a word, triple-click a line, copy across a line end; select SENTENCE and press
      h; bookmark with b; add a note with m; remove and undo; open the keys with ?; search the
      book for SEARCH (Enter jumps to the first match) and follow the first hit; arrow left.
  hyphenated        a book whose page 1 breaks "com-puter" at a line end (copying joins it).
  long              a book of at least 40 pages: scroll from page 1 to 40 and back, pages
                    appearing as they come (their images load, far ones are emptied).
  zoomed            {book, page, sentence}: zoom to 200 % with Ctrl +, highlight SENTENCE there.
  edit              edit the note of the highlight made, change its colour, filter by colour,
                    rename the bookmark, in the sidebar.
  (chromium)        at 390 px: the library a list, no page scrolling sideways.
  outline           {book, entry, page}: click the outline's ENTRY, land on PAGE, its chapter
                    marked; the thumbnails: drawn, the page in view marked, one clicked.
  labels            {book, label, page}: type LABEL in the page box, land on PAGE.
  words             {home, book, query, steps}: a two-word query with a non-ASCII word from the home
                    page's box (HOME) and from the book's box (QUERY); then STEPS searched in the
                    book, Enter on the first match, n n N stepping through them in page order.

Usage: reader_e2e.py chromium|firefox CONFIG
"""
import json
import sys

from browsers import start, waiter

browser, config_path = sys.argv[1:3]
with open(config_path) as f:
    config = json.load(f)
url = config["url"]
ARROW_LEFT = "\ue012"
ENTER = "\ue007"
CONTROL = "\ue009"

driver = start(browser)
wait = waiter(browser)
report = {"browser": browser}
press = driver.press


def attribute(css, name):
    return driver.script("const e = document.querySelector(arguments[0]); return e && e.getAttribute(arguments[1]);",
                         css, name)


def ready():
    wait(lambda: attribute("#reader", "data-ready") == "true", "the reader")


def in_view():
    return int(attribute("#reader", "data-page-number"))


def layer_ready(page):
    wait(lambda: driver.script(
        "return document.querySelectorAll(`.text-layer[data-page='${arguments[0]}'] span[data-i]`).length", page),
        f"page {page}'s text layer")


# The spans of one page's text layer, and its text.
SPANS = """
    const spans = Array.from(document.querySelectorAll(`.text-layer[data-page='${arguments[0]}'] span[data-i]`));
    const text = spans.map((s) => s.textContent).join('');
"""

SELECT = SPANS + """
    const [from, to] = [arguments[1], arguments[2]];
    if (text.indexOf(from) < 0 || text.indexOf(to) < 0) return null;
    const start = Array.from(text.slice(0, text.indexOf(from))).length;
    const end = Array.from(text.slice(0, text.indexOf(to) + to.length)).length;
    spans[start].scrollIntoView({block: 'center'});
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

CLICKS = SPANS + """
    const [word, clicks] = [arguments[1], arguments[2]];
    const at = Array.from(text.slice(0, text.indexOf(word))).length + 2;
    window.getSelection().removeAllRanges();
    spans[at].dispatchEvent(new MouseEvent('click', {bubbles: true, detail: clicks}));
""" + COPY


PINCH = """
    if (typeof Touch === 'undefined' || typeof TouchEvent === 'undefined') return null;
    const [from, to] = [arguments[0], arguments[1]];
    const box = document.getElementById('pages');
    const touch = (id, x) => new Touch({identifier: id, target: box, clientX: x, clientY: 300});
    const fire = (type, touches) => box.dispatchEvent(new TouchEvent(type,
        {touches, targetTouches: touches, changedTouches: touches, bubbles: true, cancelable: true}));
    fire('touchstart', [touch(1, 300), touch(2, 300 + from)]);
    fire('touchmove', [touch(1, 300), touch(2, 300 + to)]);
    fire('touchend', []);
    return document.getElementById('reader').dataset.zoom;
"""


def select(page, sentence):
    return driver.script(SELECT, page, sentence, sentence)


def status_says(words):
    wait(lambda: words in driver.script("return document.getElementById('status').textContent"), repr(words))


def visible_marks(page):
    return driver.script(
        "return Array.from(document.querySelectorAll(`.page[data-number='${arguments[0]}'] .marks div`))"
        ".filter((m) => !m.hidden).length", page)


def listed(kind):
    return driver.script(f"return document.querySelectorAll('#annotations li.{kind}:not([hidden])').length")


def open_tab(name):
    driver.script(f"document.querySelector('[role=tab][data-tab={name}]').click()")


def basic_run():
    page = config["page"]
    driver.get(f"{url}/books/{config['book']}/pages/{page}")
    ready()
    report["in_view"] = in_view()
    report["hash"] = driver.url().split("#", 1)[-1]
    layer_ready(page)
    report["layer_page"] = attribute(f".text-layer[data-page='{page}']", "data-page")
    # A double click selects a word, a triple click its line; a copy joins the line end.
    report["double_click"] = driver.script(CLICKS, page, "inverted", 2)
    report["triple_click"] = driver.script(CLICKS, page, "inverted", 3)
    report["copy_selected"] = driver.script(SELECT, page, "fast.", "An inverted")
    report["copied"] = driver.script(COPY)
    # The sentence, selected as a reader would: from its first character's span to its last one's.
    report["selected"] = select(page, config["sentence"])
    driver.script("document.querySelector('.text-layer').dispatchEvent(new MouseEvent('mouseup', {bubbles: true}))")
    report["toolbar"] = bool(wait(lambda: attribute("#selection-tools", "hidden") is None, "the selection's toolbar"))
    press("h")
    status_says("Highlighted")
    report["marks"] = wait(lambda: visible_marks(page), "the highlight drawn")
    press("b")
    status_says("Bookmarked")
    press("m")
    wait(lambda: driver.answer_prompt(config["note"]) or True, "the note's prompt")
    status_says("Note added")
    report["memo_beside"] = wait(lambda: driver.script(
        f"return document.querySelector(\".page-row .page[data-number='{page}'] + .page-memos p.memo\")?.textContent"),
        "the memo beside its page")
    # Removing waits for an Undo: the highlight is removed and kept again; the bookmark is
    # removed for good (the toast's x sends it at once) and made again with `b`.
    driver.script("document.querySelector('#annotations li.highlight button[data-action=remove]').click()")
    wait(lambda: driver.script("return !document.getElementById('toast').hidden"), "the undo toast")
    report["hidden_while_pending"] = [listed("highlight"), visible_marks(page)]
    press("u")
    status_says("Kept the highlight")
    report["kept"] = [listed("highlight"), visible_marks(page)]
    driver.script("document.querySelector('#annotations li.bookmark button[data-action=remove]').click()")
    wait(lambda: driver.script("return !document.getElementById('toast').hidden"), "the undo toast")
    driver.script("document.querySelector('#toast [data-action=dismiss]').click()")
    status_says("Removed the bookmark")
    report["bookmarks_after_removal"] = listed("bookmark")
    press("b")
    status_says("Bookmarked")
    press("?")
    report["help_open"] = bool(wait(lambda: attribute("#help", "open") is not None, "the keys"))
    driver.script("document.getElementById('help').close()")
    driver.screenshot(config["screenshot"])
    # Search the book: Enter goes to the first match after the page in view.
    field = driver.finds("form[data-action=search] input")[0]
    field.click()
    field.send_keys(config["search"] + ENTER)
    wait(lambda: driver.finds("#hits a.hit"), "search hits")
    report["hit"] = driver.script("return document.querySelector('#hits a.hit').textContent")
    driver.finds("#hits a.hit")[0].click()
    hit_page = int(report["hit"].split()[-1])
    wait(lambda: in_view() == hit_page, "the hit's page")
    layer_ready(hit_page)
    report["followed_to"] = in_view()
    report["found"] = wait(lambda: driver.script(
        "return Array.from(document.querySelectorAll(`.text-layer[data-page='${arguments[0]}'] span.found`))"
        ".map((s) => s.textContent).join('')", hit_page), "the match marked")
    driver.script("document.activeElement.blur()")
    press(ARROW_LEFT)
    wait(lambda: in_view() == hit_page - 1, "the page before")
    report["after_arrow"] = in_view()
    report["hash_after_arrow"] = driver.url().split("#", 1)[-1]
    # Back returns to the page the arrow left.
    driver.script("history.back()")
    wait(lambda: in_view() == hit_page, "back to the hit's page")
    report["after_back"] = in_view()
    if config.get("hyphenated"):
        driver.get(f"{url}/books/{config['hyphenated']}/pages/1")
        ready()
        layer_ready(1)
        report["hyphen_selected"] = driver.script(SELECT, 1, "The com", "puter is")
        report["hyphen_copied"] = driver.script(COPY)


def long_run():
    """Scroll from page 1 to 40, one screen at a time, and back: each page in view is drawn."""
    book = config["long"]
    driver.get(f"{url}/books/{book}/pages/1")
    ready()
    report["long_pages"] = driver.script("return document.querySelectorAll('.page').length")
    report["placeholders_sized"] = driver.script(
        "return Array.from(document.querySelectorAll('.page')).every((p) => p.offsetHeight > 100)")
    report["scroll_height_at_start"] = driver.script("return document.documentElement.scrollHeight")
    drawn = []
    for target in list(range(2, 41)) + list(range(39, 0, -1)):
        driver.script(f"document.querySelector(\".page[data-number='{target}']\").scrollIntoView()")
        wait(lambda: in_view() == target, f"page {target} in view")
        wait(lambda: attribute(f".page[data-number='{target}']", "data-drawn"), f"page {target} drawn")
        drawn.append(target)
        if target == 40:
            report["loaded_at_40"] = driver.script(
                "return Array.from(document.querySelectorAll('.page canvas')).filter((c) => c.width > 0).length")
            report["page_1_emptied"] = driver.script(
                "const page = document.querySelector(\".page[data-number='1']\");"
                " return !page.dataset.drawn && page.querySelector('canvas').width === 0")
    report["drawn"] = len(drawn)
    report["scroll_height_at_end"] = driver.script("return document.documentElement.scrollHeight")
    report["back_at"] = in_view()


def zoomed_run():
    """Ctrl + up to 200 %, then highlight a sentence there."""
    zoom = config["zoomed"]
    driver.get(f"{url}/books/{zoom['book']}/pages/{zoom['page']}")
    ready()
    before = driver.script(f"return document.querySelector(\".page[data-number='{zoom['page']}']\").offsetWidth")
    driver.script("document.querySelector('select[data-action=zoom]').value = '100';"
                  "document.querySelector('select[data-action=zoom]').dispatchEvent(new Event('change'))")
    wait(lambda: attribute("#reader", "data-zoom") == "100", "100 %")
    # A pinch spreading two fingers from 100 to 150 px apart: 150 % (where the browser has touch
    # events to make; chromium's).
    report["pinch"] = driver.script(PINCH, 100, 150)
    driver.script("document.querySelector('select[data-action=zoom]').value = '100';"
                  "document.querySelector('select[data-action=zoom]').dispatchEvent(new Event('change'))")
    wait(lambda: attribute("#reader", "data-zoom") == "100", "100 % again")
    for _ in range(12):
        if attribute("#reader", "data-zoom") == "200":
            break
        driver.script("document.dispatchEvent(new KeyboardEvent('keydown', {key: '+', ctrlKey: true, bubbles: true}))")
    report["zoom"] = attribute("#reader", "data-zoom")
    report["zoom_width"] = [before, driver.script(
        f"return document.querySelector(\".page[data-number='{zoom['page']}']\").offsetWidth")]
    report["zoom_dpi"] = wait(lambda: (lambda dpi: dpi == "192" and dpi)(
        attribute(f".page[data-number='{zoom['page']}']", "data-drawn")), "the page drawn at 200 %")
    report["zoom_pixels"] = driver.script(
        f"return document.querySelector(\".page[data-number='{zoom['page']}'] canvas\").width")
    layer_ready(zoom["page"])
    report["zoom_selected"] = select(zoom["page"], zoom["sentence"])
    press("h")
    status_says("Highlighted")
    report["zoom_in_view"] = in_view()
    # The keys: fit the width, fit the page, back to automatic; each lays the page out anew.
    fits = []
    for key, control in [("w", False), ("p", False), ("0", True)]:
        if control:
            driver.script("document.dispatchEvent(new KeyboardEvent('keydown', {key: '0', ctrlKey: true, bubbles: true}))")
        else:
            press(key)
        fits.append(wait(lambda: driver.script(
            "const s = document.querySelector('select[data-action=zoom]');"
            f" return {{'w': 'width', 'p': 'page', '0': 'auto'}}['{key}'] === s.value && [s.value,"
            f" document.querySelector(\".page[data-number='{zoom['page']}']\").offsetWidth]"), f"the zoom of {key}"))
    report["fits"] = fits


def edit_run():
    """Edit the note of the first highlight listed, then its colour."""
    driver.script("document.querySelector('#annotations li.highlight button[data-action=edit]').click()")
    field = wait(lambda: driver.finds("#annotations li.highlight form.edit textarea"), "the note's field")[0]
    field.clear()
    field.send_keys("an edited note")
    # Meanwhile the bookmark is renamed in place: the list is drawn again, the note being written stays.
    driver.script("document.querySelector('#annotations li.bookmark button[data-action=edit]').click()")
    field = wait(lambda: driver.finds("#annotations li.bookmark form.edit input"), "the bookmark's field")[0]
    field.clear()
    field.send_keys("chapter two" + ENTER)
    status_says("Bookmark renamed")
    report["note_kept"] = driver.script(
        "return [document.querySelector('#annotations li.highlight form.edit textarea')?.value,"
        " document.querySelectorAll('#annotations form.edit').length]")
    driver.script("document.querySelector('#annotations li.highlight form.edit').requestSubmit()")
    status_says("Note saved")
    report["edited_note"] = wait(lambda: driver.script(
        "return document.querySelector('#annotations li.highlight p.note')?.textContent"), "the note shown")
    driver.script("const s = document.querySelector('#annotations li.highlight select[data-action=color]');"
                  "s.value = s.querySelector('option[value=\"#5fb236\"]').value; s.dispatchEvent(new Event('change'))")
    status_says("Now green")
    report["edited_color"] = wait(lambda: (lambda color: color != "#ffd400" and color)(driver.script(
        "return document.querySelector('#annotations li.highlight').dataset.color")), "the colour changed")
    # Filters: by colour, one of the two highlights.
    driver.script("const s = document.getElementById('filter-color'); s.value = '#5fb236';"
                  " s.dispatchEvent(new Event('change'))")
    report["filtered"] = driver.script("return Array.from(document.querySelectorAll('#annotations li:not([hidden])'))"
                                       ".map((li) => li.dataset.kind)")
    driver.script("const s = document.getElementById('filter-color'); s.value = '';"
                  " s.dispatchEvent(new Event('change'))")


def narrow_run():
    """At 390 px (a phone; chromium only): the library a list, nothing scrolls sideways."""
    driver.viewport(390, 844)
    driver.get(f"{url}/")
    wait(lambda: driver.finds("table.books"), "the library")
    report["narrow_library"] = driver.script(
        "return [document.documentElement.scrollWidth, getComputedStyle(document.querySelector('table.books tr')).display]")
    driver.script("localStorage.removeItem('margin.zoom')")  # the 200 % chosen above is remembered
    driver.get(f"{url}/books/{config['book']}/pages/1")
    ready()
    report["narrow_reader"] = driver.script(
        "return [document.documentElement.scrollWidth, document.querySelector('header.bar').offsetHeight,"
        " document.body.classList.contains('side-closed')]")


def outline_run():
    entry = config["outline"]
    driver.get(f"{url}/books/{entry['book']}/pages/1")
    ready()
    open_tab("outline")
    link = wait(lambda: driver.script(
        "return Array.from(document.querySelectorAll('#outline a')).find((a) => a.textContent === arguments[0])",
        entry["entry"]), "the outline entry")
    driver.script("arguments[0].click()", link)
    wait(lambda: in_view() == entry["page"], "the entry's page")
    report["outline_to"] = in_view()
    report["outline_current"] = wait(lambda: driver.script(
        "return document.querySelector('#outline li.current a')?.textContent"), "the current chapter")
    # Thumbnails: drawn small, the page in view marked; a click goes to its page.
    open_tab("thumbs")
    report["thumbnails"] = wait(lambda: driver.script(
        "const all = Array.from(document.querySelectorAll('#thumbnails img'));"
        " return all.some((i) => i.complete && i.naturalWidth > 0) && [all.length,"
        " document.querySelector('#thumbnails li.current span').textContent]"), "the thumbnails")
    driver.script("document.querySelector(\"#thumbnails li[data-page='2'] a\").click()")
    wait(lambda: in_view() == 2, "the thumbnail's page")
    report["thumbnail_to"] = in_view()


def labels_run():
    entry = config["labels"]
    driver.get(f"{url}/books/{entry['book']}/pages/1")
    ready()
    report["label_shown"] = driver.script("return document.querySelector('form[data-action=goto] input').value")
    box = driver.finds("form[data-action=goto] input")[0]
    box.click()
    box.send_keys(entry["label"] + ENTER)
    wait(lambda: in_view() == entry["page"], "the labelled page")
    report["label_to"] = in_view()


def words_run():
    words = config["words"]
    driver.get(f"{url}/")
    box = wait(lambda: driver.finds("form.search input[name=q]"), "the library's search box")[0]
    box.click()
    box.send_keys(words["home"] + ENTER)
    wait(lambda: "q=" in driver.url(), "the search's page")
    report["form_url"] = driver.url()
    report["form_hits"] = len(wait(lambda: driver.finds(".hits .book-hits li") or None, "the library's hits"))
    report["form_marked"] = driver.script(
        "return Array.from(document.querySelectorAll('.hits .snippet mark')).map((m) => m.textContent)")
    driver.get(f"{url}/books/{words['book']}/pages/1")
    ready()
    field = driver.finds("form[data-action=search] input")[0]
    field.click()
    field.send_keys(words["query"] + ENTER)
    wait(lambda: driver.finds("#hits a.hit"), "the book's hits")
    report["book_hits"] = driver.script("return Array.from(document.querySelectorAll('#hits a.hit')).map((a) => a.textContent)")
    report["book_marked"] = driver.script("return Array.from(document.querySelectorAll('#hits mark')).map((m) => m.textContent)")
    # n and N step through the matches in page order (across pages).
    field.clear()
    field.send_keys(words["steps"] + ENTER)
    wait(lambda: driver.script("return document.querySelector('#hits-summary').textContent.includes('n and N')"),
         "the second search")
    driver.script("document.activeElement.blur()")
    current = ("const c = document.querySelector('.text-layer span.found.current');"
               " return c && [Number(c.parentElement.dataset.page), Number(c.dataset.i)]")
    steps = [wait(lambda: driver.script(current), "the first match")]
    for key in ["n", "n", "N"]:
        press(key)
        steps.append(wait(lambda: (lambda now: now and now != steps[-1] and now)(driver.script(current)),
                          f"the match after {key}"))
    report["steps"] = steps


try:
    basic_run()
    if config.get("long"):
        long_run()
    if config.get("zoomed"):
        zoomed_run()
        edit_run()
    if config.get("outline"):
        outline_run()
    if config.get("labels"):
        labels_run()
    if config.get("words"):
        words_run()
    if config.get("words") and browser == "chromium":
        narrow_run()
    report["console_errors"] = driver.console_errors()
    report["page_errors"] = attribute("#reader", "data-errors")
finally:
    driver.quit()
print(json.dumps(report))
