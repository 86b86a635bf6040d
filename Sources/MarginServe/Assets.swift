/// The reader's style sheet and script, served by margin itself.
enum Assets {
    static let style = #"""
        :root { --ink: #1d1d1f; --muted: #6e6e73; --line: #d9d9de; --paper: #fff; --bg: #f4f4f6; --accent: #2454c5; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: var(--bg); }
        a { color: var(--accent); }
        .bar { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; padding: .5rem 1rem; background: var(--paper); border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 5; }
        .bar h1 { font-size: 1.1rem; margin: 0; }
        .bar h1 a { color: var(--ink); text-decoration: none; }
        .bar .title { font-weight: 600; max-width: 30ch; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; color: var(--ink); }
        .search { display: flex; gap: .3rem; flex: 1 1 14rem; max-width: 32rem; }
        .search input { flex: 1; padding: .35rem .5rem; font: inherit; border: 1px solid var(--line); border-radius: 6px; min-width: 0; }
        button { font: inherit; padding: .3rem .6rem; border: 1px solid var(--line); border-radius: 6px; background: var(--paper); cursor: pointer; }
        button:disabled { opacity: .4; cursor: default; }
        main { padding: 1rem; max-width: 72rem; margin: 0 auto; }
        table.books { width: 100%; border-collapse: collapse; background: var(--paper); }
        table.books th, table.books td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        .filters { display: flex; flex-wrap: wrap; gap: .5rem; margin-bottom: .6rem; align-items: center; }
        .book-hits { background: var(--paper); padding: .5rem .8rem; margin-bottom: .6rem; border-radius: 8px; }
        .book-hits h3 { margin: .2rem 0; font-size: 1rem; }
        .book-hits ul { list-style: none; padding: 0; margin: 0; }
        .book-hits li { padding: .15rem 0; }
        .hit { display: inline-block; min-width: 4.5em; }
        mark { background: #ffe36e; color: inherit; }
        .empty, .more { color: var(--muted); }
        .error { color: #b00020; }
        dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
        dl.meta dt { color: var(--muted); }
        dl.meta dd { margin: 0; overflow-wrap: anywhere; }
        ol.annotations { padding-left: 1.2rem; }
        ol.annotations li { margin: .3rem 0; }
        .note { color: var(--muted); font-style: italic; }
        .by, .audience { color: var(--muted); }
        .shared { font-size: 0.8em; border: 1px solid var(--muted); border-radius: 3px; padding: 0 0.3em; }
        .reader-bar .title { max-width: 24ch; }
        .reader-bar .search { flex: 1 1 10rem; max-width: 22rem; }
        .reader-body { display: flex; align-items: flex-start; }
        .reader { flex: 1; min-width: 0; padding: 0; max-width: none; margin: 0; }
        .reader-bar .pager, .reader-bar .zoom, .reader-bar .tools { display: flex; gap: .3rem; align-items: center; }
        .goto input { width: 4.5em; padding: .3rem .4rem; font: inherit; text-align: center; border: 1px solid var(--line); border-radius: 6px; }
        .goto .of { color: var(--muted); white-space: nowrap; }
        .zoom select, .filters select, .annotations select { font: inherit; padding: .25rem; border: 1px solid var(--line); border-radius: 6px; background: var(--paper); }
        .icon { font-size: 1.1rem; line-height: 1; }
        .pages { padding: 12px; touch-action: pan-x pan-y; transform-origin: 50% 0; }
        .page-row { display: flex; justify-content: center; align-items: flex-start; gap: 12px; margin: 0 auto 12px; }
        .page { position: relative; flex: none; background: var(--paper); box-shadow: 0 1px 4px rgba(0,0,0,.18); }
        .page.loading { background: #fafafa linear-gradient(90deg, #fafafa, #f0f0f3, #fafafa); }
        .page canvas { display: block; width: 100%; height: 100%; user-select: none; }
        .page-memos { flex: 0 0 220px; display: flex; flex-direction: column; gap: .4rem; }
        .page-memos .memo { margin: 0; padding: .45rem .6rem; background: #fff6bf; border-left: 3px solid #e6c200; border-radius: 4px; font-size: .9rem; white-space: pre-wrap; overflow-wrap: anywhere; }
        .page-memos .memo.theirs { background: #eef3ff; border-left-color: #7a8fd6; }
        .marks, .text-layer { position: absolute; inset: 0; }
        .marks div { position: absolute; background: var(--color); mix-blend-mode: multiply; opacity: .45; border-radius: 2px; pointer-events: none; }
        .marks div.theirs { background: transparent; opacity: 1; mix-blend-mode: normal; border-bottom: 2px dashed var(--color); box-shadow: inset 0 -0.35em 0 color-mix(in srgb, var(--color) 30%, transparent); }
        .marks .author-tag { position: absolute; top: 0; right: calc(100% + 4px); font-size: 11px; line-height: 1.2; padding: 0 .3em; border-radius: 3px; background: #39406b; color: #fff; white-space: nowrap; }
        .text-layer { line-height: 1; }
        .text-layer span { position: absolute; color: transparent; white-space: pre; overflow: hidden; cursor: text;
          font-size: calc(var(--h, 10) * var(--scale, 1) * 1px); font-family: sans-serif; }
        .text-layer span.gap { width: 0; height: 0; }
        .text-layer span.found { background: rgba(255, 160, 0, .4); }
        .text-layer span.found.current { background: rgba(230, 80, 0, .6); }
        .text-layer ::selection { background: rgba(36, 84, 197, .3); color: transparent; }
        .side { flex: 0 0 19rem; position: sticky; top: var(--bar, 3.2rem); height: calc(100vh - var(--bar, 3.2rem)); overflow: auto; background: var(--paper); border-right: 1px solid var(--line); padding: 0 .7rem .7rem; }
        .side-closed .side { display: none; }
        .tabs { display: flex; gap: .2rem; position: sticky; top: 0; background: var(--paper); padding: .5rem 0; z-index: 1; border-bottom: 1px solid var(--line); }
        .tabs [role=tab] { flex: 1; padding: .3rem .2rem; font-size: .9rem; border-color: transparent; }
        .tabs [role=tab][aria-selected=true] { border-color: var(--line); background: var(--bg); font-weight: 600; }
        .panel { padding-top: .5rem; }
        .filters select { max-width: 100%; font-size: .85rem; }
        ol.annotations { list-style: none; padding: 0; margin: .4rem 0; }
        ol.annotations li { padding: .45rem .3rem; border-bottom: 1px solid var(--line); }
        ol.annotations li.here { background: #f3f6ff; }
        ol.annotations li .where { font-size: .85rem; margin-right: .2rem; }
        ol.annotations li p { margin: .25rem 0 0; white-space: pre-wrap; overflow-wrap: anywhere; }
        ol.annotations li.theirs mark { background: transparent !important; border-bottom: 2px dashed #7a8fd6; }
        .actions { display: flex; gap: .25rem; margin-top: .3rem; flex-wrap: wrap; }
        .actions button, .actions select { padding: .1rem .4rem; font-size: .85rem; }
        form.edit { display: flex; flex-wrap: wrap; gap: .3rem; margin-top: .3rem; }
        form.edit textarea, form.edit input { flex: 1 1 100%; font: inherit; padding: .3rem; border: 1px solid var(--line); border-radius: 6px; min-height: 2.2em; }
        ol.outline { list-style: none; padding: 0; margin: 0; }
        ol.outline li { display: flex; gap: .5rem; justify-content: space-between; padding: .2rem .3rem .2rem calc(.3rem + (var(--level, 1) - 1) * 1rem); border-radius: 4px; }
        ol.outline li.current { background: #e8eeff; font-weight: 600; }
        ol.outline .label, .thumbnails span { color: var(--muted); font-size: .85rem; }
        ol.thumbnails { list-style: none; padding: 0; margin: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(110px, 1fr)); gap: .6rem; }
        .thumbnails a { display: flex; flex-direction: column; align-items: center; text-decoration: none; gap: .2rem; }
        .thumbnails img { width: 110px; background: #f4f4f6; box-shadow: 0 1px 3px rgba(0,0,0,.2); }
        .thumbnails li.current img { outline: 3px solid var(--accent); }
        #hits ol { list-style: none; padding: 0; }
        #hits li { padding: .3rem 0; border-bottom: 1px solid var(--line); }
        #hits li.current { background: #fff3d6; }
        .summary { color: var(--muted); margin: 0; }
        .status { position: fixed; left: 1rem; bottom: 1rem; margin: 0; padding: .4rem .7rem; max-width: min(36rem, calc(100vw - 2rem)); background: var(--paper); border: 1px solid var(--line); border-radius: 8px; box-shadow: 0 2px 8px rgba(0,0,0,.12); z-index: 9; }
        .status:empty, .status[hidden] { display: none; }
        .status.bad { color: #b00020; border-color: #e8b4bd; }
        .selection-tools { position: absolute; z-index: 8; display: flex; gap: .25rem; align-items: center; padding: .3rem; background: var(--paper); border: 1px solid var(--line); border-radius: 8px; box-shadow: 0 2px 10px rgba(0,0,0,.18); }
        .selection-tools[hidden] { display: none; }
        .swatch { width: 1.5rem; height: 1.5rem; padding: 0; border-radius: 50%; border: 2px solid rgba(0,0,0,.15); }
        .toast { position: fixed; bottom: 1rem; left: 50%; transform: translateX(-50%); background: #222; color: #fff;
          width: max-content; max-width: calc(100vw - 2rem);
          padding: 0.5rem 0.75rem; border-radius: 8px; display: flex; gap: 0.5rem; align-items: center; z-index: 10; }
        .toast[hidden] { display: none; }
        .toast button { background: transparent; color: #fff; border: 1px solid #888; border-radius: 6px; }
        :focus-visible { outline: 2px solid #2ea8e5; outline-offset: 2px; }
        .annotations button { padding: 0 .35rem; }
        dialog { border: 1px solid var(--line); border-radius: 10px; max-width: 30rem; }
        dl.keys { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; }
        dl.keys dd { margin: 0; }
        .note-on-styles { color: var(--muted); font-size: .9rem; }
        kbd { border: 1px solid var(--line); border-bottom-width: 2px; border-radius: 4px; padding: 0 .3rem; font-size: .9em; }
        @media (max-width: 900px) {
          .side { position: fixed; left: 0; top: var(--bar, 3.2rem); z-index: 6; width: min(22rem, 88vw); box-shadow: 2px 0 12px rgba(0,0,0,.2); }
          .page-row { flex-wrap: wrap; }
          .page-memos { flex: 1 1 100%; }
          .reader-bar .tools button:not([data-action=help]) { display: none; }
        }
        @media (max-width: 640px) {
          .bar { padding: .4rem .6rem; gap: .4rem .6rem; }
          .bar .title { max-width: calc(100vw - 9rem); }
          .reader-bar h1 { display: none; }
          .reader-bar .search { flex: 1 1 100%; max-width: none; order: 9; }
          .zoom select { max-width: 6rem; }
          .zoom button { display: none; }
          .goto input { width: 3.6em; }
          main { padding: .5rem; }
          .pages { padding: 6px; }
          table.books, table.books tbody, table.books tr, table.books td { display: block; width: 100%; }
          table.books thead { display: none; }
          table.books tr { padding: .5rem .6rem; border-bottom: 1px solid var(--line); }
          table.books td { border: 0; padding: 0; }
          table.books td:first-child a { font-weight: 600; font-size: 1.02rem; }
          table.books td:nth-child(2), table.books td:nth-child(4), table.books td:nth-child(5) { color: var(--muted); font-size: .9rem; display: inline; }
          table.books td:nth-child(3) { display: none; }
          table.books td:nth-child(4):not(:empty)::before, table.books td:nth-child(5):not(:empty)::before { content: " · "; }
        }
        """#

    static let script = #"""
        "use strict";
        (() => {
          // Colours of highlights listed by the server's pages (no inline styles: the CSP forbids them).
          document.querySelectorAll("[data-color]").forEach((e) => { e.style.background = e.dataset.color; });
          const reader = document.getElementById("reader");
          if (!reader) return;
          const $ = (id) => document.getElementById(id);
          const book = reader.dataset.book;
          const pageCount = Number(reader.dataset.pages);
          const pagesBox = $("pages");
          const side = $("side");
          const status = $("status");
          const help = $("help");
          const toast = $("toast");
          const selectionTools = $("selection-tools");
          const gotoForm = document.querySelector("form[data-action=goto]");
          const gotoBox = gotoForm.querySelector("input");
          const zoomSelect = document.querySelector("select[data-action=zoom]");
          const searchForm = document.querySelector("form[data-action=search]");
          const searchBox = searchForm.querySelector("input");
          const header = document.querySelector("header.bar");
          // A team library's member: whose annotations are listed (everyone's shared ones, or theirs).
          const teamUser = reader.dataset.teamUser || null;
          const everyone = reader.dataset.allUsers !== "0";
          const audience = teamUser ? `?all-users=${everyone ? 1 : 0}` : "";
          const palette = Array.from(selectionTools.querySelectorAll("button[data-color]"))
            .map((b) => [b.dataset.name, b.dataset.color]);
          const POINT = 96 / 72; // CSS pixels per PDF point at 100 %
          const GAP = 12;

          let statusTimer = null;
          const say = (text, bad) => {
            status.textContent = text;
            status.classList.toggle("bad", !!bad);
            status.hidden = !text;
            clearTimeout(statusTimer);
            if (text && !bad) statusTimer = setTimeout(() => { status.hidden = true; }, 6000);
          };
          // Whatever fails unexpectedly is said, not lost in the console; `data-errors` counts it.
          const failed = (message) => {
            reader.dataset.errors = String(Number(reader.dataset.errors || 0) + 1);
            say(`Something went wrong: ${message}`, true);
          };
          window.addEventListener("error", (event) => {
            if (!(event.target instanceof HTMLImageElement)) failed(event.message || "a resource did not load");
          }, true);
          window.addEventListener("unhandledrejection", (event) => failed(String(event.reason)));
          const pct = (value, whole) => (100 * value / whole) + "%";
          const escape = (text) => text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));

          async function api(path, options) {
            const response = await fetch(path, options);
            const body = await response.json().catch(() => ({}));
            if (!response.ok) throw new Error(body.error || response.statusText);
            return body;
          }
          // Every write is JSON (the server refuses any other body: what a cross-site form can send).
          const send = (method, path, body) => api(path, {
            method, headers: { "Content-Type": "application/json" },
            body: body === undefined ? undefined : JSON.stringify(body) });

          // MARK: Pages

          let sizes = [];
          let labels = null;
          let scale = POINT;
          let zoomMode = "auto";
          let current = Number(reader.dataset.pageNumber) || 1;
          const pages = [];
          const layouts = new Map(); // page → its text layout, the most recently used last
          let tops = [];

          const label = (n) => (labels && labels[n - 1]) || String(n);
          const pageOf = (n) => pages[n - 1];

          function buildPages() {
            const fragment = document.createDocumentFragment();
            sizes.forEach((size, index) => {
              const n = index + 1;
              const row = document.createElement("div");
              row.className = "page-row";
              const el = document.createElement("div");
              el.className = "page";
              el.dataset.number = n;
              el.setAttribute("role", "region");
              el.setAttribute("aria-label", `Page ${label(n)}`);
              // Drawn into a canvas (not an <img>): emptied when far from the view, its memory is
              // given back at once (a browser keeps decoded images of its cache).
              const canvas = document.createElement("canvas");
              canvas.width = 0;
              canvas.height = 0;
              const marks = document.createElement("div");
              marks.className = "marks";
              const layer = document.createElement("div");
              layer.className = "text-layer";
              layer.dataset.page = n;
              el.append(canvas, marks, layer);
              const memos = document.createElement("aside");
              memos.className = "page-memos";
              memos.hidden = true;
              memos.setAttribute("aria-label", `Memos on page ${label(n)}`);
              row.append(el, memos);
              fragment.appendChild(row);
              pages.push({ n, row, el, canvas, marks, layer, memos, dpi: 0, built: false, drawing: null });
            });
            pagesBox.replaceChildren(fragment);
          }

          // Counts what the reader asked the server to draw, for the load bench (`data-renders`).
          const renders = { asked: 0, done: 0 };

          /// Fetches page `page` drawn at `dpi` and paints it; a later call or `hide` cancels it.
          async function draw(page, dpi) {
            if (page.drawing) page.drawing.abort();
            const drawing = new AbortController();
            page.drawing = drawing;
            renders.asked++;
            reader.dataset.renders = String(renders.asked);
            try {
              const response = await fetch(`/api/books/${book}/pages/${page.n}.png?dpi=${dpi}`, { signal: drawing.signal });
              if (!response.ok) {
                const reason = (await response.json().catch(() => ({}))).error || "the server could not draw it";
                page.el.dataset.failed = "true";
                say(`Page ${label(page.n)} could not be drawn: ${reason}`, true);
                return;
              }
              const bitmap = await createImageBitmap(await response.blob());
              if (drawing.signal.aborted) { bitmap.close(); return; }
              page.canvas.width = bitmap.width;
              page.canvas.height = bitmap.height;
              page.canvas.getContext("2d").drawImage(bitmap, 0, 0);
              bitmap.close();
              page.el.classList.remove("loading");
              page.el.dataset.drawn = String(dpi);
              renders.done++;
            } catch (error) {
              if (error.name !== "AbortError") say(`Page ${label(page.n)} could not be drawn: ${error.message}`, true);
            } finally {
              if (page.drawing === drawing) page.drawing = null;
            }
          }

          function layoutTops() {
            document.documentElement.style.setProperty("--bar", `${header.offsetHeight}px`);
            const base = pagesBox.getBoundingClientRect().top + window.scrollY;
            tops = pages.map((p) => p.row.getBoundingClientRect().top + window.scrollY - base);
          }
          const pageTop = (n) => pagesBox.getBoundingClientRect().top + window.scrollY + tops[n - 1];
          const viewTop = () => window.scrollY + header.offsetHeight;

          /// The first page whose bottom is below `y` (a document offset).
          function pageAt(y) {
            const base = pagesBox.getBoundingClientRect().top + window.scrollY;
            let low = 0, high = pages.length - 1;
            while (low < high) {
              const middle = (low + high) >> 1;
              if (base + tops[middle] + pages[middle].row.offsetHeight <= y) low = middle + 1; else high = middle;
            }
            return low + 1;
          }

          /// The page in view: the one that shows most of itself (the first of those that show as
          /// much).
          function pageInView() {
            const top = viewTop(), bottom = window.scrollY + window.innerHeight;
            let best = pageAt(top), most = -1;
            for (let n = best; n <= pages.length; n++) {
              const start = pageTop(n);
              if (start > bottom) break;
              const seen = Math.min(bottom, start + pageOf(n).el.offsetHeight) - Math.max(top, start);
              if (seen > most + 1) { best = n; most = seen; }
            }
            return best;
          }

          // The page scrolled to stays the page in view until the reader scrolls (the last pages can't
          // come to the top of the view).
          let pinned = null;
          function scrollToPage(n, fraction = 0) {
            n = Math.max(1, Math.min(pages.length, n));
            const y = pageTop(n) + fraction * pageOf(n).el.offsetHeight - header.offsetHeight - (fraction ? 0 : GAP / 2);
            window.scrollTo(0, Math.max(0, y));
            pinned = { n, y: window.scrollY };
            setCurrent(n);
            update();
          }

          function setCurrent(n) {
            if (n === current && reader.dataset.pageNumber === String(n)) return;
            current = n;
            reader.dataset.pageNumber = String(n);
            if (document.activeElement !== gotoBox) gotoBox.value = label(n);
            document.title = `p. ${label(n)} — ${document.title.replace(/^p\. [^—]* — /, "")}`;
            if (location.hash !== `#page=${n}`) history.replaceState(history.state, "", `${location.pathname}${location.search}#page=${n}`);
            markCurrent();
          }

          /// Goes to page `n`, leaving the page it was on in the history (Back returns there).
          function go(n) {
            if (!(n >= 1 && n <= pages.length)) return;
            if (n !== current) history.pushState({ page: n }, "", `${location.pathname}${location.search}#page=${n}`);
            scrollToPage(n);
          }

          function resolvePage(text) {
            const wanted = text.trim();
            if (!wanted) return null;
            if (labels) {
              const index = labels.findIndex((l) => l.toLowerCase() === wanted.toLowerCase());
              if (index >= 0) return index + 1;
            }
            return /^\d+$/.test(wanted) && Number(wanted) >= 1 && Number(wanted) <= pages.length ? Number(wanted) : null;
          }

          // Pages near the view are drawn (at the zoom and the screen's pixel ratio) with their text
          // layer and marks; pages far from it are emptied, so a long book keeps memory flat.
          let updateTimer = null;
          let lastUpdate = 0;
          function update() {
            const now = performance.now();
            clearTimeout(updateTimer);
            if (now - lastUpdate < 60) { updateTimer = setTimeout(update, 60); return; }
            lastUpdate = now;
            const first = pageAt(viewTop()), last = pageAt(window.scrollY + window.innerHeight);
            // The pages in view first, then the two after them and the one before.
            for (const n of [...Array(last - first + 1).keys()].map((i) => first + i).concat([last + 1, last + 2, first - 1])) {
              if (n >= 1 && n <= pages.length) show(pageOf(n));
            }
            const keep = [first - 4, last + 5];
            for (const page of pages) {
              if ((page.n < keep[0] || page.n > keep[1]) && (page.built || page.dpi)) hide(page);
            }
          }

          const wantedDPI = () => Math.min(600, Math.max(18, Math.round(scale * (window.devicePixelRatio || 1) * 72 / 6) * 6));

          function show(page) {
            const dpi = wantedDPI();
            if (page.dpi !== dpi && !page.el.dataset.failed) {
              page.dpi = dpi;
              if (!page.el.dataset.drawn) page.el.classList.add("loading");
              draw(page, dpi);
            }
            if (!page.built) {
              page.built = true;
              drawMarks(page);
              layoutOf(page.n).then((layout) => {
                if (page.built && layout) buildTextLayer(page, layout);
              }).catch((error) => say(error.message, true));
            }
          }

          function hide(page) {
            if (page.drawing) page.drawing.abort();
            page.canvas.width = 0;
            page.canvas.height = 0;
            delete page.el.dataset.drawn;
            page.dpi = 0;
            page.built = false;
            page.layout = null;
            page.characters = null;
            page.layer.replaceChildren();
            page.marks.replaceChildren();
            page.el.classList.remove("loading");
          }

          /// Shows page `n` now, with its text layer.
          async function ensureShown(n) {
            const page = pageOf(n);
            show(page);
            const layout = await layoutOf(n);
            if (page.layout !== layout) buildTextLayer(page, layout);
            return page;
          }

          async function layoutOf(n) {
            let entry = layouts.get(n);
            if (!entry) {
              entry = api(`/api/books/${book}/pages/${n}/text`);
              entry.catch(() => layouts.delete(n));
            }
            layouts.delete(n);
            layouts.set(n, entry);
            while (layouts.size > 40) layouts.delete(layouts.keys().next().value);
            return entry;
          }

          function buildTextLayer(page, layout) {
            page.layout = layout;
            page.characters = Array.from(layout.text);
            const fragment = document.createDocumentFragment();
            page.characters.forEach((character, index) => {
              const box = layout.boxes[index] || [0, 0, 0, 0];
              const span = document.createElement("span");
              span.dataset.i = index;
              span.textContent = character;
              const width = box[2] - box[0], height = box[3] - box[1];
              if (width > 0 && height > 0 && character !== "\n") {
                span.style.left = pct(box[0], layout.width);
                span.style.top = pct(box[1], layout.height);
                span.style.width = pct(width, layout.width);
                span.style.height = pct(height, layout.height);
                span.style.setProperty("--h", height.toFixed(2));
              } else {
                span.className = "gap";
                const before = layout.boxes[index - 1];
                if (before) { span.style.left = pct(before[2], layout.width); span.style.top = pct(before[1], layout.height); }
              }
              fragment.appendChild(span);
            });
            page.layer.replaceChildren(fragment);
            markFound(page);
          }

          // MARK: Zoom

          const narrow = window.matchMedia("(max-width: 900px)");
          function fitScale(mode) {
            const [width, height] = sizes[current - 1] || [612, 792];
            // Memos take a column beside the pages on a wide screen (below each page on a narrow one).
            const memos = document.body.classList.contains("with-memos") && !narrow.matches ? 232 : 0;
            const room = pagesBox.clientWidth - 2 * GAP - memos;
            const byWidth = Math.max(0.1, room / width);
            const byHeight = (window.innerHeight - header.offsetHeight - 2 * GAP) / height;
            if (mode === "width") return byWidth;
            if (mode === "page") return Math.min(byWidth, byHeight);
            // Automatic: the width, no larger than 125 %; a landscape page whole.
            return width > height ? Math.min(byWidth, byHeight) : Math.min(byWidth, 1.25 * POINT);
          }

          function applyZoom(mode, keep = true) {
            const anchor = keep && tops.length ? { n: current, fraction: (viewTop() - pageTop(current)) / pageOf(current).el.offsetHeight } : null;
            zoomMode = mode;
            const numeric = typeof mode === "number";
            scale = numeric ? mode * POINT : fitScale(mode);
            for (const page of pages) {
              const [width, height] = sizes[page.n - 1];
              page.el.style.width = `${width * scale}px`;
              page.el.style.height = `${height * scale}px`;
              page.el.style.setProperty("--scale", (width * scale) / width);
            }
            const percent = Math.round(scale / POINT * 100);
            let option = zoomSelect.querySelector("option[data-custom]");
            if (numeric && !zoomSelect.querySelector(`option[value="${percent}"]:not([data-custom])`)) {
              if (!option) { option = document.createElement("option"); option.dataset.custom = "true"; zoomSelect.appendChild(option); }
              option.value = String(percent);
              option.textContent = `${percent} %`;
            } else if (option) option.remove();
            zoomSelect.value = numeric ? String(percent) : mode;
            reader.dataset.zoom = String(percent);
            layoutTops();
            if (anchor) scrollToPage(anchor.n, Math.max(0, anchor.fraction));
            try { localStorage.setItem("margin.zoom", String(mode)); } catch (error) { /* private mode */ }
            // Pages are drawn again at the new resolution; the text layer and marks follow by
            // themselves (they are placed in fractions of the page). The first layout waits for the
            // scroll to the page asked for.
            if (keep) update();
          }

          const STEPS = [0.5, 0.67, 0.75, 0.9, 1, 1.1, 1.25, 1.5, 1.75, 2, 2.5, 3, 4];
          function zoomBy(direction) {
            const now = scale / POINT;
            const next = direction > 0 ? STEPS.find((s) => s > now + 0.01) : [...STEPS].reverse().find((s) => s < now - 0.01);
            applyZoom(next || (direction > 0 ? 4 : 0.5));
          }

          zoomSelect.addEventListener("change", () => {
            const value = zoomSelect.value;
            applyZoom(/^\d+$/.test(value) ? Number(value) / 100 : value);
          });
          window.addEventListener("wheel", (event) => {
            if (!event.ctrlKey) return;
            event.preventDefault();
            const factor = Math.exp(-event.deltaY * 0.002);
            applyZoom(Math.max(0.25, Math.min(4, (scale / POINT) * factor)));
          }, { passive: false });
          // Pinch on a touch screen: the pages follow the fingers, and are drawn again when they lift.
          let pinch = null;
          const spread = (touches) => Math.hypot(touches[0].clientX - touches[1].clientX, touches[0].clientY - touches[1].clientY);
          pagesBox.addEventListener("touchstart", (event) => {
            if (event.touches.length === 2) pinch = { from: spread(event.touches), ratio: 1 };
          }, { passive: true });
          pagesBox.addEventListener("touchmove", (event) => {
            if (!pinch || event.touches.length !== 2) return;
            event.preventDefault();
            pinch.ratio = spread(event.touches) / pinch.from;
            pagesBox.style.transform = `scale(${pinch.ratio})`;
          }, { passive: false });
          pagesBox.addEventListener("touchend", () => {
            if (!pinch) return;
            const ratio = pinch.ratio;
            pinch = null;
            pagesBox.style.transform = "";
            if (Math.abs(ratio - 1) > 0.02) applyZoom(Math.max(0.25, Math.min(4, (scale / POINT) * ratio)));
          });

          let resizeTimer = null;
          window.addEventListener("resize", () => {
            clearTimeout(resizeTimer);
            resizeTimer = setTimeout(() => applyZoom(zoomMode), 100);
          });
          let scrolling = false;
          window.addEventListener("scroll", () => {
            if (scrolling) return;
            scrolling = true;
            requestAnimationFrame(() => {
              scrolling = false;
              if (!tops.length) return;
              if (pinned && Math.abs(window.scrollY - pinned.y) < 2) return update();
              pinned = null;
              setCurrent(pageInView());
              update();
            });
          }, { passive: true });
          window.addEventListener("hashchange", () => {
            const n = Number((location.hash.match(/^#page=(\d+)/) || [])[1]);
            if (n && n !== current) scrollToPage(n);
          });
          window.addEventListener("popstate", () => {
            const n = Number((location.hash.match(/^#page=(\d+)/) || [])[1]);
            if (n) scrollToPage(n);
          });

          // MARK: Selection

          /// The page and character offset a selection boundary stands at.
          function offsetAt(node, offset) {
            const element = node.nodeType === Node.TEXT_NODE ? node.parentElement : node;
            const layer = element && element.closest(".text-layer");
            if (!layer) return null;
            const page = pageOf(Number(layer.dataset.page));
            if (!page || !page.characters) return null;
            if (node === layer) {
              const child = layer.children[offset];
              return { page, at: child ? Number(child.dataset.i) : page.characters.length };
            }
            const span = element.closest("span[data-i]");
            if (!span) return null;
            return { page, at: Number(span.dataset.i) + (offset > 0 ? 1 : 0) };
          }

          function selectedRange() {
            const selection = window.getSelection();
            if (!selection || selection.isCollapsed || selection.rangeCount === 0) return null;
            const range = selection.getRangeAt(0);
            const start = offsetAt(range.startContainer, range.startOffset);
            const end = offsetAt(range.endContainer, range.endOffset);
            if (!start || !end) return null;
            if (start.page !== end.page) return { across: true };
            if (end.at <= start.at) return null;
            return { page: start.page, start: start.at, end: end.at };
          }

          // Selection as in a PDF viewer: a double click selects a word, a triple click its line; what
          // is copied has the words of a hyphenated line end joined and a space at any other line end.
          function selectCharacters(page, start, end) {
            const spans = page.layer.children;
            if (start >= end || !spans[start] || !spans[end - 1]) return;
            const range = document.createRange();
            range.setStart(spans[start].firstChild || spans[start], 0);
            const last = spans[end - 1].firstChild || spans[end - 1];
            range.setEnd(last, last.length || 0);
            const selection = window.getSelection();
            selection.removeAllRanges();
            selection.addRange(range);
          }
          function around(characters, index, inside) {
            let start = index, end = index;
            while (start > 0 && inside(characters[start - 1])) start--;
            while (end < characters.length && inside(characters[end])) end++;
            return [start, end];
          }
          const wordCharacter = (c) => /[\p{L}\p{N}\p{M}'’_-]/u.test(c || "");
          pagesBox.addEventListener("click", (event) => {
            const span = event.target.closest && event.target.closest(".text-layer span[data-i]");
            if (!span) return;
            const page = pageOf(Number(span.parentElement.dataset.page));
            if (!page || !page.characters) return;
            const index = Number(span.dataset.i);
            if (event.detail === 2 && wordCharacter(page.characters[index])) {
              selectCharacters(page, ...around(page.characters, index, wordCharacter));
            } else if (event.detail >= 3) {
              selectCharacters(page, ...around(page.characters, index, (c) => c !== undefined && c !== "\n"));
            }
            placeSelectionTools();
          });
          const copied = (text) => text.replace(/(\p{L})-\n(?=\p{Ll})/gu, "$1").replace(/[ \t]*\n[ \t]*/g, " ");
          const selectedText = (range) => copied(range.page.characters.slice(range.start, range.end).join(""));
          document.addEventListener("copy", (event) => {
            const range = selectedRange();
            if (!range || range.across || !event.clipboardData) return;
            event.clipboardData.setData("text/plain", selectedText(range));
            event.preventDefault();
          });

          // A small toolbar over a selection: the colours, a note, copy.
          function placeSelectionTools() {
            const range = selectedRange();
            if (!range || range.across) { selectionTools.hidden = true; return; }
            const box = window.getSelection().getRangeAt(0).getBoundingClientRect();
            selectionTools.hidden = false;
            const width = selectionTools.offsetWidth, height = selectionTools.offsetHeight;
            const above = box.top - height - 8 > header.offsetHeight;
            selectionTools.style.top = `${window.scrollY + (above ? box.top - height - 8 : box.bottom + 8)}px`;
            selectionTools.style.left = `${Math.max(8, Math.min(window.innerWidth - width - 8, box.left + box.width / 2 - width / 2))}px`;
          }
          pagesBox.addEventListener("mouseup", () => setTimeout(placeSelectionTools, 0));
          pagesBox.addEventListener("touchend", () => setTimeout(placeSelectionTools, 0));
          pagesBox.addEventListener("keyup", () => setTimeout(placeSelectionTools, 0));
          document.addEventListener("selectionchange", () => {
            const selection = window.getSelection();
            if (!selection || selection.isCollapsed) selectionTools.hidden = true;
          });

          // MARK: Annotations

          let annotations = { highlight: [], bookmark: [], memo: [] };

          async function highlight(note, color) {
            const range = selectedRange();
            if (range && range.across) { say("A highlight stays on one page: select text within a page.", true); return; }
            if (!range) { say("Select some text on the page first.", true); return; }
            try {
              const body = { page: range.page.n, start: range.start, end: range.end };
              if (note) body.note = note;
              if (color) body.color = color;
              const saved = await send("POST", `/api/books/${book}/highlights`, body);
              window.getSelection().removeAllRanges();
              selectionTools.hidden = true;
              await refresh();
              say(`Highlighted “${saved.text}”.`);
            } catch (error) { say(error.message, true); }
          }

          async function note() {
            const range = selectedRange();
            const text = window.prompt(range && !range.across ? "Note on the selected text" : `Note on page ${label(current)}`);
            if (!text) return;
            if (range && !range.across) return highlight(text);
            try {
              await send("POST", `/api/books/${book}/memos`, { page: current, text });
              await refresh();
              say("Note added.");
            } catch (error) { say(error.message, true); }
          }

          async function bookmark() {
            try {
              await send("POST", `/api/books/${book}/bookmarks`, { page: current });
              await refresh();
              say(`Bookmarked page ${label(current)}.`);
            } catch (error) { say(error.message, true); }
          }

          const theirs = (a) => teamUser && a.author && a.author !== teamUser;
          // What waits to be removed is not shown meanwhile.
          const waiting = (kind, a) => pending && pending.kind === kind && pending.id === a.id;

          function drawMarks(page) {
            page.marks.replaceChildren();
            if (!page.built) return;
            const [width, height] = sizes[page.n - 1];
            for (const h of annotations.highlight) {
              if (h.page !== page.n || waiting("highlight", h)) continue;
              h.rects.forEach((r, index) => {
                const mark = document.createElement("div");
                mark.style.left = pct(r[0], width);
                mark.style.top = pct(height - r[3], height);
                mark.style.width = pct(r[2] - r[0], width);
                mark.style.height = pct(r[3] - r[1], height);
                mark.style.setProperty("--color", h.color);
                mark.dataset.highlight = h.id;
                if (theirs(h)) {
                  mark.classList.add("theirs");
                  if (index === 0) {
                    const by = document.createElement("span");
                    by.className = "author-tag";
                    by.textContent = h.author;
                    mark.appendChild(by);
                  }
                }
                page.marks.appendChild(mark);
              });
            }
          }

          // Pages that show memos now: only those and the ones that will are touched (a long book has
          // hundreds of pages and a few memos).
          let pagesWithMemos = new Set();
          function drawMemos() {
            const byPage = new Map();
            for (const m of annotations.memo) {
              if (!m.page || waiting("memo", m)) continue;
              if (!byPage.has(m.page)) byPage.set(m.page, []);
              byPage.get(m.page).push(m);
            }
            for (const n of new Set([...pagesWithMemos, ...byPage.keys()])) {
              const page = pageOf(n);
              if (!page) continue;
              const memos = byPage.get(n) || [];
              page.memos.hidden = memos.length === 0;
              page.memos.replaceChildren(...memos.map((m) => {
                const card = document.createElement("p");
                card.className = theirs(m) ? "memo theirs" : "memo";
                card.textContent = m.text;
                if (theirs(m)) {
                  const by = document.createElement("span");
                  by.className = "by";
                  by.textContent = ` — ${m.author}`;
                  card.appendChild(by);
                }
                return card;
              }));
            }
            pagesWithMemos = new Set(byPage.keys());
            const any = byPage.size > 0;
            const had = document.body.classList.contains("with-memos");
            document.body.classList.toggle("with-memos", any);
            if (had !== any && tops.length) applyZoom(zoomMode);
          }

          async function refresh() {
            const [highlights, bookmarks, memos] = await Promise.all([
              api(`/api/books/${book}/highlights${audience}`), api(`/api/books/${book}/bookmarks${audience}`),
              api(`/api/books/${book}/memos${audience}`)]);
            annotations = { highlight: highlights, bookmark: bookmarks, memo: memos };
            for (const page of pages) if (page.built) drawMarks(page);
            drawMemos();
            listAnnotations();
            layoutTops();
          }

          const listBox = $("annotations");
          const filterKind = $("filter-kind"), filterColor = $("filter-color"), filterAuthor = $("filter-author");
          const colorName = (hex) => (palette.find(([, value]) => value === hex) || [hex])[0];

          function listAnnotations() {
            // In reading order: by page; on a page, bookmarks, then highlights from the top, then memos.
            const items = [
              ...annotations.bookmark.map((a) => ({ kind: "bookmark", a, y: Infinity })),
              ...annotations.highlight.map((a) => ({ kind: "highlight", a, y: a.rects.length ? a.rects[0][3] : 0 })),
              ...annotations.memo.map((a) => ({ kind: "memo", a, y: -Infinity })),
            ].filter((item) => !waiting(item.kind, item.a))
              .sort((x, y) => ((x.a.page || 0) - (y.a.page || 0)) || (y.y - x.y));
            // An edit under way outlives the list drawn again (after another change, an Undo):
            // what was typed stays, and so does the cursor.
            const active = document.activeElement;
            const editing = [...listBox.querySelectorAll("form.edit:not([data-sent])")].map((form) => {
              const li = form.closest("li"), field = form.querySelector("textarea, input");
              return { kind: li.dataset.kind, id: li.dataset.id, value: field.value, focused: active === field,
                       start: field.selectionStart, end: field.selectionEnd };
            });
            listBox.replaceChildren(...items.map(({ kind, a }) => item(kind, a)));
            for (const kept of editing) {
              const li = listBox.querySelector(`li[data-kind="${kept.kind}"][data-id="${kept.id}"]`);
              li?.querySelector("button[data-action=edit]")?.click();
              const field = li?.querySelector("form.edit textarea, form.edit input");
              if (!field) continue;
              field.value = kept.value;
              if (kept.focused) field.setSelectionRange(kept.start, kept.end);
              else if (active && active.isConnected) active.focus();
            }
            // The filters offer what is there.
            const colors = [...new Set(annotations.highlight.map((h) => h.color))];
            const chosenColor = filterColor.value;
            filterColor.replaceChildren(new Option("All colours", ""), ...colors.map((c) => new Option(colorName(c), c)));
            filterColor.value = colors.includes(chosenColor) ? chosenColor : "";
            if (teamUser) {
              const authors = [...new Set([...annotations.highlight, ...annotations.bookmark, ...annotations.memo].map((a) => a.author).filter(Boolean))];
              const chosen = filterAuthor.value;
              filterAuthor.replaceChildren(new Option("Everyone", ""), ...authors.map((name) => new Option(name === teamUser ? `${name} (you)` : name, name)));
              filterAuthor.value = authors.includes(chosen) ? chosen : "";
              filterAuthor.hidden = false;
            }
            applyFilters();
            markCurrent();
          }

          function applyFilters() {
            const kind = filterKind.value, color = filterColor.value, author = filterAuthor.value;
            let shown = 0;
            for (const li of listBox.children) {
              const visible = (!kind || li.dataset.kind === kind || (kind === "note" && li.dataset.note === "true"))
                && (!color || li.dataset.color === color) && (!author || li.dataset.author === author);
              li.hidden = !visible;
              if (visible) shown++;
            }
            $("annotations-empty").hidden = shown > 0;
          }
          [filterKind, filterColor, filterAuthor].forEach((s) => s.addEventListener("change", applyFilters));

          function button(action, text, title, handler) {
            const b = document.createElement("button");
            b.type = "button";
            b.dataset.action = action;
            b.textContent = text;
            b.title = title;
            b.setAttribute("aria-label", title);
            b.addEventListener("click", handler);
            return b;
          }

          function item(kind, annotation) {
            const id = annotation.id;
            const li = document.createElement("li");
            li.className = kind;
            li.dataset.kind = kind;
            li.dataset.id = id;
            li.dataset.page = annotation.page || "";
            if (annotation.author) li.dataset.author = annotation.author;
            const where = document.createElement("a");
            where.className = "where";
            where.href = `#page=${annotation.page}`;
            where.textContent = annotation.page ? `p. ${annotation.pageLabel || annotation.page}` : "book";
            where.addEventListener("click", (event) => { event.preventDefault(); if (annotation.page) go(annotation.page); });
            li.appendChild(where);
            let body;
            if (kind === "highlight") {
              li.dataset.color = annotation.color;
              li.dataset.note = annotation.note ? "true" : "false";
              const mark = document.createElement("mark");
              mark.textContent = annotation.text;
              mark.style.background = annotation.color;
              li.append(" ", mark);
              body = document.createElement("p");
              body.className = "note";
              body.textContent = annotation.note || "";
              body.hidden = !annotation.note;
              li.appendChild(body);
            } else if (kind === "bookmark") {
              body = document.createElement("span");
              body.className = "label";
              body.textContent = annotation.label || "Bookmark";
              li.append(" ", body);
            } else {
              body = document.createElement("p");
              body.className = "memo-text";
              body.textContent = annotation.text;
              li.appendChild(body);
            }
            // Someone else's (shared with the team): who made it; only its author changes it.
            if (theirs(annotation)) {
              li.classList.add("theirs");
              const by = document.createElement("span");
              by.className = "by";
              by.textContent = ` — ${annotation.author}`;
              li.insertBefore(by, where.nextSibling);
              return li;
            }
            const actions = document.createElement("div");
            actions.className = "actions";
            if (kind === "highlight") {
              const select = document.createElement("select");
              select.dataset.action = "color";
              select.setAttribute("aria-label", "Colour of this highlight");
              select.title = "Colour";
              const known = palette.some(([, hex]) => hex === annotation.color);
              for (const [name, hex] of known ? palette : [...palette, [annotation.color, annotation.color]]) select.appendChild(new Option(name, hex));
              select.value = annotation.color;
              select.addEventListener("change", () => change(kind, id, { color: select.value }, `Now ${colorName(select.value)}.`));
              actions.appendChild(select);
            }
            const what = { highlight: "the note", bookmark: "the bookmark's name", memo: "the memo" }[kind];
            actions.appendChild(button("edit", "✎", `Edit ${what}`, () => edit(kind, annotation, li, body)));
            if (teamUser) {
              const share = button("share", annotation.shared ? "shared" : "share",
                annotation.shared ? "The team sees it: make it yours only" : "Share it with the team",
                () => change(kind, id, { shared: !annotation.shared }, annotation.shared ? "Now yours only." : "Shared with the team."));
              share.setAttribute("aria-pressed", annotation.shared ? "true" : "false");
              share.setAttribute("aria-label", share.title);
              actions.appendChild(share);
            }
            actions.appendChild(button("remove", "×", `Remove this ${kind}`, () => removeLater(kind, id)));
            li.appendChild(actions);
            return li;
          }

          async function change(kind, id, body, done) {
            try {
              await send("PATCH", `/api/${kind}s/${id}`, body);
              await refresh();
              say(done);
            } catch (error) { say(error.message, true); await refresh(); }
          }

          /// Edits a note, a bookmark's name or a memo where it is listed: Enter (Ctrl Enter in a
          /// note) saves, Esc leaves it as it was.
          function edit(kind, annotation, li, body) {
            if (li.querySelector("form.edit")) return;
            const form = document.createElement("form");
            form.className = "edit";
            const field = document.createElement(kind === "bookmark" ? "input" : "textarea");
            field.value = kind === "highlight" ? annotation.note || "" : kind === "bookmark" ? annotation.label || "" : annotation.text;
            field.setAttribute("aria-label", { highlight: "Note", bookmark: "Bookmark name", memo: "Memo" }[kind]);
            const save = document.createElement("button");
            save.type = "submit";
            save.textContent = "Save";
            const cancel = button("cancel", "Cancel", "Leave it as it was", () => { form.remove(); body.hidden = kind === "highlight" && !annotation.note; });
            form.append(field, save, cancel);
            body.hidden = true;
            body.after(form);
            field.focus();
            field.addEventListener("keydown", (event) => {
              if (event.key === "Escape") { event.preventDefault(); cancel.click(); }
              if (event.key === "Enter" && (kind === "bookmark" || event.ctrlKey || event.metaKey)) { event.preventDefault(); form.requestSubmit(); }
            });
            form.addEventListener("submit", (event) => {
              event.preventDefault();
              const value = field.value.trim();
              if (kind === "memo" && !value) { say("A memo needs some text; × removes it.", true); return; }
              const change_ = kind === "highlight" ? { note: value } : kind === "bookmark" ? { label: value } : { text: value };
              form.dataset.sent = "true";
              change(kind, annotation.id, change_, kind === "highlight" ? (value ? "Note saved." : "Note removed.") : kind === "bookmark" ? "Bookmark renamed." : "Memo saved.");
            });
          }

          // A removal waits 10 s with an Undo before it is sent (then, or when another one starts,
          // the toast's × is pressed, or the page is left).
          let pending = null;
          function redrawAll() {
            for (const page of pages) if (page.built) drawMarks(page);
            drawMemos();
            listAnnotations();
          }
          async function commitRemoval() {
            if (!pending) return;
            const { kind, id } = pending;
            clearTimeout(pending.timer);
            pending = null;
            toast.hidden = true;
            try { await send("DELETE", `/api/${kind}s/${id}`); await refresh(); say(`Removed the ${kind}.`); }
            catch (error) { say(error.message, true); await refresh(); }
          }
          function removeLater(kind, id) {
            if (pending) commitRemoval();
            pending = { kind, id, timer: setTimeout(commitRemoval, 10000) };
            redrawAll();
            toast.querySelector("span").textContent = `The ${kind} is removed.`;
            toast.hidden = false;
            toast.querySelector("[data-action=undo]").focus();
          }
          async function undoRemoval() {
            if (!pending) return;
            clearTimeout(pending.timer);
            const { kind } = pending;
            pending = null;
            toast.hidden = true;
            redrawAll();
            say(`Kept the ${kind}.`);
          }
          toast.querySelector("[data-action=undo]").addEventListener("click", undoRemoval);
          toast.querySelector("[data-action=dismiss]").addEventListener("click", commitRemoval);
          window.addEventListener("pagehide", () => {
            if (!pending) return;
            fetch(`/api/${pending.kind}s/${pending.id}`,
              { method: "DELETE", keepalive: true, headers: { "Content-Type": "application/json" } });
            pending = null;
          });

          // MARK: Sidebar

          const tabs = Array.from(document.querySelectorAll("[role=tab]"));
          function openTab(name, focus) {
            for (const tab of tabs) {
              const chosen = tab.dataset.tab === name;
              tab.setAttribute("aria-selected", chosen ? "true" : "false");
              tab.tabIndex = chosen ? 0 : -1;
              $(tab.getAttribute("aria-controls")).hidden = !chosen;
              if (chosen && focus) tab.focus();
            }
            if (name === "thumbs") buildThumbnails();
            if (name === "outline") markCurrent();
            setSidebar(true);
          }
          tabs.forEach((tab, index) => {
            tab.addEventListener("click", () => openTab(tab.dataset.tab));
            tab.addEventListener("keydown", (event) => {
              const step = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 }[event.key];
              if (!step) return;
              event.preventDefault();
              openTab(tabs[(index + step + tabs.length) % tabs.length].dataset.tab, true);
            });
          });
          const sidebarButton = document.querySelector("[data-action=sidebar]");
          function setSidebar(open) {
            document.body.classList.toggle("side-closed", !open);
            sidebarButton.setAttribute("aria-expanded", open ? "true" : "false");
          }
          // Closed at first on a narrow screen, where it would cover the page.
          if (narrow.matches) setSidebar(false);

          let outline = [];
          async function loadOutline() {
            const box = $("outline");
            try {
              outline = await api(`/api/books/${book}/outline`);
            } catch (error) { box.replaceChildren(Object.assign(document.createElement("li"), { textContent: error.message })); return; }
            if (!outline.length) {
              box.replaceChildren(Object.assign(document.createElement("li"), { className: "empty", textContent: "This PDF has no outline." }));
              return;
            }
            box.replaceChildren(...outline.map((entry, index) => {
              const li = document.createElement("li");
              li.dataset.index = index;
              li.style.setProperty("--level", entry.level);
              const link = document.createElement(entry.page ? "a" : "span");
              link.textContent = entry.title;
              if (entry.page) {
                link.href = `#page=${entry.page}`;
                link.addEventListener("click", (event) => { event.preventDefault(); go(entry.page); });
                const where = document.createElement("span");
                where.className = "label";
                where.textContent = entry.pageLabel || String(entry.page);
                li.append(link, where);
              } else li.append(link);
              return li;
            }));
            markCurrent();
          }

          /// The deepest outline entry whose pages hold page `n` (as `margin` finds a chapter).
          function chapterIndex(n) {
            let open = [];
            for (const [index, entry] of outline.entries()) {
              if (!entry.page) continue;
              if (entry.page > n) {
                if (entry.level <= 1) break;
                continue;
              }
              open = open.filter((o) => o.level < entry.level);
              open.push({ level: entry.level, index });
            }
            return open.length ? open[open.length - 1].index : -1;
          }

          let thumbnailObserver = null;
          function buildThumbnails() {
            const box = $("thumbnails");
            if (box.children.length) { markCurrent(); return; }
            thumbnailObserver = new IntersectionObserver((entries) => {
              for (const entry of entries) {
                if (!entry.isIntersecting) continue;
                const img = entry.target.querySelector("img");
                const n = Number(entry.target.dataset.page);
                const dpi = Math.max(6, Math.round(110 * (window.devicePixelRatio || 1) / sizes[n - 1][0] * 72));
                img.src = `/api/books/${book}/pages/${n}.png?dpi=${dpi}`;
                thumbnailObserver.unobserve(entry.target);
              }
            }, { root: side, rootMargin: "200px 0px" });
            box.replaceChildren(...sizes.map(([width, height], index) => {
              const n = index + 1;
              const li = document.createElement("li");
              li.dataset.page = n;
              const link = document.createElement("a");
              link.href = `#page=${n}`;
              link.setAttribute("aria-label", `Page ${label(n)}`);
              link.addEventListener("click", (event) => { event.preventDefault(); go(n); });
              const img = document.createElement("img");
              img.alt = "";
              img.style.aspectRatio = `${width} / ${height}`;
              const caption = document.createElement("span");
              caption.textContent = label(n);
              link.append(img, caption);
              li.appendChild(link);
              thumbnailObserver.observe(li);
              return li;
            }));
            markCurrent();
          }

          /// Marks the page in view in the sidebar: its chapter, its thumbnail, its annotations.
          function markCurrent() {
            const chapter = chapterIndex(current);
            document.querySelectorAll("#outline li").forEach((li) => {
              const here = Number(li.dataset.index) === chapter;
              li.classList.toggle("current", here);
              if (here) li.setAttribute("aria-current", "location"); else li.removeAttribute("aria-current");
            });
            const thumbs = $("thumbnails");
            thumbs.querySelectorAll("li.current").forEach((li) => li.classList.remove("current"));
            const thumb = thumbs.children[current - 1];
            if (thumb) {
              thumb.classList.add("current");
              if (!$("panel-thumbs").hidden) thumb.scrollIntoView({ block: "nearest" });
            }
            for (const li of listBox.children) li.classList.toggle("here", Number(li.dataset.page) === current);
          }

          // MARK: Search

          let query = "";
          let hitPages = [];
          let cursor = null; // { page, index } of the match n and N stand on

          /// Characters folded as the index folds them (case, accents), with where each came from.
          function folded(characters) {
            const text = [], from = [];
            characters.forEach((c, index) => {
              for (const f of c.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase()) { text.push(f); from.push(index); }
            });
            return { text: text.join(""), from };
          }
          const queryTerms = (q) => (q.match(/"[^"]+"|\S+/g) || [])
            .map((w) => w.replace(/"/g, "").replace(/\*$/, "")).filter((w) => w && !/^(AND|OR|NOT|NEAR)$/.test(w))
            .map((w) => folded(Array.from(w)).text);

          /// The matches of the query on a page, in reading order: `[start, end)` character offsets.
          function matches(page) {
            if (!query || !page.characters) return [];
            const { text, from } = folded(page.characters);
            const found = [];
            for (const term of queryTerms(query)) {
              for (let at = text.indexOf(term); at >= 0 && term; at = text.indexOf(term, at + 1)) {
                found.push([from[at], from[at + term.length - 1] + 1]);
              }
            }
            return found.sort((a, b) => a[0] - b[0]);
          }

          function markFound(page) {
            page.layer.querySelectorAll(".found").forEach((s) => s.classList.remove("found", "current"));
            matches(page).forEach(([start, end], index) => {
              for (let i = start; i < end; i++) {
                const span = page.layer.children[i];
                if (!span) continue;
                span.classList.add("found");
                if (cursor && cursor.page === page.n && cursor.index === index) span.classList.add("current");
              }
            });
          }

          async function searchBook(q, jump) {
            query = q;
            cursor = null;
            const target = $("hits").querySelector("ol");
            const summary = $("hits-summary");
            target.replaceChildren();
            openTab("found");
            summary.textContent = "Searching…";
            try {
              const hits = await api(`/api/search?q=${encodeURIComponent(q)}&book=${book}&limit=1000`);
              hits.sort((a, b) => a.page - b.page);
              hitPages = [...new Set(hits.map((h) => h.page))];
              summary.textContent = hits.length === 0 ? `Nothing matches “${q}”.`
                : `${hitPages.length} ${hitPages.length === 1 ? "page matches" : "pages match"} “${q}”: n and N step through them.`;
              for (const hit of hits) {
                const li = document.createElement("li");
                const link = document.createElement("a");
                link.href = `#page=${hit.page}`;
                link.className = "hit";
                link.textContent = `p. ${hit.pageLabel || hit.page}`;
                link.addEventListener("click", (event) => { event.preventDefault(); stepTo(hit.page, 0); });
                const snippet = document.createElement("span");
                snippet.className = "snippet";
                const characters = Array.from(hit.snippet);
                let at = 0;
                for (const [start, end] of hit.ranges || []) {
                  snippet.append(characters.slice(at, start).join(""));
                  const mark = document.createElement("mark");
                  mark.textContent = characters.slice(start, end).join("");
                  snippet.appendChild(mark);
                  at = end;
                }
                snippet.append(characters.slice(at).join(""));
                li.append(link, " ", snippet);
                target.appendChild(li);
              }
              for (const page of pages) if (page.characters && page.built) markFound(page);
              if (jump && hitPages.length) await step(1);
            } catch (error) { summary.textContent = error.message; say(error.message, true); }
          }

          /// Moves to match `index` of page `n` (-1: its last) and shows it.
          async function stepTo(n, index) {
            if (n !== current) go(n);
            const page = await ensureShown(n);
            const count = matches(page).length;
            cursor = { page: n, index: index < 0 ? Math.max(0, count - 1) : Math.min(index, Math.max(0, count - 1)) };
            for (const other of pages) if (other.characters && other.built) markFound(other);
            const span = page.layer.querySelector(".found.current");
            const box = span && span.getBoundingClientRect();
            if (box && (box.top < header.offsetHeight || box.bottom > window.innerHeight)) {
              span.scrollIntoView({ block: "center" });
              pinned = { n, y: window.scrollY };
            }
            document.querySelectorAll("#hits li").forEach((li) => li.classList.toggle("current", li.querySelector("a").hash === `#page=${n}`));
          }

          /// n and N: the next or previous match in page order, from the page in view.
          async function step(direction) {
            if (!hitPages.length) { say(query ? `Nothing matches “${query}”.` : "Search this book first (/).", !!query); return; }
            if (cursor && cursor.page === current) {
              const page = pageOf(current);
              const count = matches(page).length;
              const next = cursor.index + direction;
              if (next >= 0 && next < count) return stepTo(current, next);
            }
            const after = direction > 0
              ? hitPages.find((p) => (cursor && cursor.page === current ? p > current : p >= current))
              : [...hitPages].reverse().find((p) => (cursor && cursor.page === current ? p < current : p <= current));
            const wrapped = after === undefined;
            const n = wrapped ? (direction > 0 ? hitPages[0] : hitPages[hitPages.length - 1]) : after;
            await stepTo(n, direction > 0 ? 0 : -1);
            if (wrapped) say(direction > 0 ? "From the first match again." : "From the last match again.");
          }

          // MARK: Controls

          document.addEventListener("click", (event) => {
            const control = event.target.closest("button[data-action]");
            if (!control) return;
            const action = control.dataset.action;
            if (action === "highlight") highlight(undefined, control.dataset.color);
            else if (action === "note") note();
            else if (action === "bookmark") bookmark();
            else if (action === "copy") { document.execCommand("copy"); say("Copied."); }
            else if (action === "next-page") go(current + 1);
            else if (action === "prev-page") go(current - 1);
            else if (action === "zoom-in") zoomBy(1);
            else if (action === "zoom-out") zoomBy(-1);
            else if (action === "sidebar") setSidebar(document.body.classList.contains("side-closed"));
            else if (action === "help") help.showModal();
          });
          // A selection survives the click on a button.
          document.querySelectorAll("header button[data-action], .selection-tools button").forEach((b) => b.addEventListener("mousedown", (e) => e.preventDefault()));

          gotoForm.addEventListener("submit", (event) => {
            event.preventDefault();
            const n = resolvePage(gotoBox.value);
            if (n) { gotoBox.blur(); go(n); } else say(`No page “${gotoBox.value.trim()}” in this book: give a number from 1 to ${pageCount}${labels ? " or a printed label" : ""}.`, true);
          });
          gotoBox.addEventListener("focus", () => gotoBox.select());
          gotoBox.addEventListener("blur", () => { gotoBox.value = label(current); });

          document.addEventListener("keydown", (event) => {
            if ((event.ctrlKey || event.metaKey) && !event.altKey) {
              const zoom = { "+": 1, "=": 1, "-": -1, "_": -1, "0": 0 }[event.key];
              if (zoom === undefined) return;
              event.preventDefault();
              if (zoom === 0) applyZoom("auto"); else zoomBy(zoom);
              return;
            }
            if (event.altKey) return;
            if (event.key === "Escape") {
              if (!selectionTools.hidden) { selectionTools.hidden = true; window.getSelection().removeAllRanges(); }
              if (event.target.closest("input, textarea, select")) event.target.blur();
              return;
            }
            if (event.target.closest("input, textarea, select, [contenteditable]")) return;
            if (help.open && event.key !== "?") return;
            const colour = /^[1-8]$/.test(event.key) && palette[Number(event.key) - 1];
            const keys = { h: () => highlight(), m: () => note(), b: () => bookmark(), u: () => undoRemoval(),
              n: () => step(1), N: () => step(-1), s: () => setSidebar(document.body.classList.contains("side-closed")),
              w: () => applyZoom("width"), p: () => applyZoom("page"),
              g: () => gotoBox.focus(), ArrowRight: () => go(current + 1), ArrowLeft: () => go(current - 1),
              "?": () => (help.open ? help.close() : help.showModal()), "/": () => searchBox.focus() };
            const action = colour ? () => highlight(undefined, colour[1]) : keys[event.key];
            if (action) { event.preventDefault(); action(); }
          });

          searchForm.addEventListener("submit", (event) => {
            event.preventDefault();
            const q = searchBox.value.trim();
            if (q) searchBook(q, true);
          });

          // Team library: whose annotations are shown, and the way to the other choice.
          if (teamUser) {
            const line = $("audience");
            const other = new URL(location.href);
            other.searchParams.set("all-users", everyone ? "0" : "1");
            line.append(everyone ? "Yours and those the team shares · " : "Only yours · ");
            const link = document.createElement("a");
            link.href = other.pathname + other.search + other.hash;
            link.textContent = everyone ? "only yours" : "with the team's";
            line.appendChild(link);
            line.hidden = false;
          }

          (async () => {
            try {
              const guide = await api(`/api/books/${book}/pages`);
              sizes = guide.sizes;
              labels = guide.labels;
              buildPages();
              let saved = null;
              try { saved = localStorage.getItem("margin.zoom"); } catch (error) { /* private mode */ }
              const start = Number((location.hash.match(/^#page=(\d+)/) || [])[1]) || current;
              current = 0;
              applyZoom(saved && /^[\d.]+$/.test(saved) ? Number(saved) : saved || "auto", false);
              scrollToPage(Math.min(Math.max(1, start), pages.length));
              await Promise.all([refresh(), loadOutline(), ensureShown(current)]);
              const q = new URLSearchParams(location.search).get("q");
              if (q) { searchBox.value = q; await searchBook(q, false); }
              reader.dataset.ready = "true";
            } catch (error) { say(error.message, true); }
          })();
        })();
        """#
}
