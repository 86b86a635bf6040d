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
        .reader { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start; max-width: none; }
        .sheet { position: relative; flex: 1 1 40rem; max-width: 60rem; background: var(--paper); box-shadow: 0 1px 4px rgba(0,0,0,.15); }
        .sheet img { display: block; width: 100%; height: 100%; user-select: none; }
        .marks, .text-layer { position: absolute; inset: 0; }
        .marks div { position: absolute; mix-blend-mode: multiply; opacity: .45; border-radius: 2px; pointer-events: none; }
        .text-layer { line-height: 1; }
        .text-layer span { position: absolute; color: transparent; white-space: pre; overflow: hidden; cursor: text;
          font-size: calc(var(--h, 10) * var(--scale, 1) * 1px); font-family: sans-serif; }
        .text-layer span.gap { width: 0; height: 0; }
        .text-layer span.found { background: rgba(255, 160, 0, .45); }
        .text-layer ::selection { background: rgba(36, 84, 197, .3); color: transparent; }
        .side { flex: 0 1 20rem; min-width: 14rem; }
        .side h2 { font-size: 1rem; margin: .6rem 0 .3rem; }
        .status { min-height: 1.4em; margin: 0; color: var(--muted); }
        .status.bad { color: #b00020; }
        .toast { position: fixed; bottom: 1rem; left: 50%; transform: translateX(-50%); background: #222; color: #fff;
          width: max-content; max-width: calc(100vw - 2rem);
          padding: 0.5rem 0.75rem; border-radius: 8px; display: flex; gap: 0.5rem; align-items: center; z-index: 10; }
        .toast[hidden] { display: none; }
        .toast button { background: transparent; color: #fff; border: 1px solid #888; border-radius: 6px; }
        :focus-visible { outline: 2px solid #2ea8e5; outline-offset: 2px; }
        .annotations button { padding: 0 .35rem; margin-left: .3rem; }
        dialog { border: 1px solid var(--line); border-radius: 10px; max-width: 24rem; }
        dl.keys { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; }
        dl.keys dd { margin: 0; }
        kbd { border: 1px solid var(--line); border-bottom-width: 2px; border-radius: 4px; padding: 0 .3rem; font-size: .9em; }
        @media (max-width: 640px) {
          .bar { padding: .4rem .6rem; }
          .bar .title { max-width: 100%; }
          main { padding: .5rem; }
          .sheet { flex-basis: 100%; }
          .side { flex-basis: 100%; }
          table.books th:nth-child(n+4), table.books td:nth-child(n+4) { display: none; }
        }
        """#

    static let script = #"""
        "use strict";
        (() => {
          // Colours of highlights listed by the server's pages (no inline styles: the CSP forbids them).
          document.querySelectorAll("[data-color]").forEach((e) => { e.style.background = e.dataset.color; });
          const reader = document.getElementById("reader");
          if (!reader) return;
          const book = reader.dataset.book;
          const pageNumber = Number(reader.dataset.pageNumber);
          const pageCount = Number(reader.dataset.pages);
          const sheet = document.getElementById("sheet");
          const image = document.getElementById("page-image");
          const marks = document.getElementById("marks");
          const layer = document.getElementById("text-layer");
          const status = document.getElementById("status");
          const list = document.getElementById("page-annotations");
          const help = document.getElementById("help");
          // A team library's member: whose annotations are listed (everyone's shared ones, or theirs).
          const teamUser = reader.dataset.teamUser || null;
          const audience = teamUser ? `?all-users=${reader.dataset.allUsers === "0" ? 0 : 1}` : "";
          let layout = null;

          const say = (text, bad) => { status.textContent = text; status.classList.toggle("bad", !!bad); };
          // Whatever fails unexpectedly is said, not lost in the console; `data-errors` counts it.
          const failed = (message) => {
            reader.dataset.errors = String(Number(reader.dataset.errors || 0) + 1);
            say(`Something went wrong: ${message}`, true);
          };
          window.addEventListener("error", (event) => {
            if (event.target !== image) failed(event.message || "a resource did not load");
          }, true);
          // A page the server could not draw (over its time or memory limit): say why.
          image.addEventListener("error", async () => {
            let reason = "the server could not draw it";
            try { reason = (await (await fetch(image.src)).json()).error || reason; } catch (error) { /* said below */ }
            image.dataset.failed = "true";
            say(`Page ${pageNumber} could not be drawn: ${reason}`, true);
          });
          window.addEventListener("unhandledrejection", (event) => failed(String(event.reason)));
          const pct = (value, whole) => (100 * value / whole) + "%";

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

          function scale() {
            if (layout) layer.style.setProperty("--scale", sheet.clientWidth / layout.width);
          }

          function loadImage() {
            const pixels = (sheet.clientWidth || 800) * (window.devicePixelRatio || 1);
            const dpi = Math.max(36, Math.min(600, Math.round(pixels / layout.width * 72)));
            image.src = `/api/books/${book}/pages/${pageNumber}.png?dpi=${dpi}`;
          }

          function buildTextLayer() {
            const characters = Array.from(layout.text);
            const fragment = document.createDocumentFragment();
            characters.forEach((character, index) => {
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
            layer.replaceChildren(fragment);
          }

          /// The character offset a selection boundary stands at.
          function offsetAt(node, offset) {
            if (node === layer) {
              const child = layer.children[offset];
              return child ? Number(child.dataset.i) : Array.from(layout.text).length;
            }
            const element = node.nodeType === Node.TEXT_NODE ? node.parentElement : node;
            const span = element && element.closest("span[data-i]");
            if (!span || !layer.contains(span)) return null;
            return Number(span.dataset.i) + (offset > 0 ? 1 : 0);
          }

          function selectedRange() {
            const selection = window.getSelection();
            if (!selection || selection.isCollapsed || selection.rangeCount === 0) return null;
            const range = selection.getRangeAt(0);
            const start = offsetAt(range.startContainer, range.startOffset);
            const end = offsetAt(range.endContainer, range.endOffset);
            if (start === null || end === null || end <= start) return null;
            return { start, end };
          }

          // Selection as in a PDF viewer: a double click selects a word, a triple click its line;
          // what is copied has the words of a hyphenated line end joined and a space between
          // the words at any other line end.
          function selectCharacters(start, end) {
            const spans = layer.children;
            if (start >= end || !spans[start] || !spans[end - 1]) return;
            const range = document.createRange();
            range.setStart(spans[start].firstChild || spans[start], 0);
            const last = spans[end - 1].firstChild || spans[end - 1];
            range.setEnd(last, last.length || 0);
            const selection = window.getSelection();
            selection.removeAllRanges();
            selection.addRange(range);
          }
          function around(index, inside) {
            const characters = Array.from(layout.text);
            let start = index, end = index;
            while (start > 0 && inside(characters[start - 1])) start--;
            while (end < characters.length && inside(characters[end])) end++;
            return [start, end];
          }
          const wordCharacter = (c) => /[\p{L}\p{N}\p{M}'’_-]/u.test(c || "");
          layer.addEventListener("click", (event) => {
            const span = event.target.closest && event.target.closest("span[data-i]");
            if (!span || !layout) return;
            const index = Number(span.dataset.i);
            if (event.detail === 2 && wordCharacter(Array.from(layout.text)[index])) {
              const [start, end] = around(index, wordCharacter);
              selectCharacters(start, end);
            } else if (event.detail >= 3) {
              const [start, end] = around(index, (c) => c !== undefined && c !== "\n");
              selectCharacters(start, end);
            }
          });
          function copied(text) {
            return text.replace(/(\p{L})-\n(?=\p{Ll})/gu, "$1").replace(/[ \t]*\n[ \t]*/g, " ");
          }
          document.addEventListener("copy", (event) => {
            const range = layout && selectedRange();
            if (!range || !event.clipboardData) return;
            event.clipboardData.setData("text/plain", copied(Array.from(layout.text).slice(range.start, range.end).join("")));
            event.preventDefault();
          });

          async function highlight(note) {
            const range = selectedRange();
            if (!range) { say("Select some text on the page first.", true); return; }
            try {
              const body = { page: pageNumber, start: range.start, end: range.end };
              if (note) body.note = note;
              const saved = await send("POST", `/api/books/${book}/highlights`, body);
              window.getSelection().removeAllRanges();
              say(`Highlighted “${saved.text}”.`);
              await refresh();
            } catch (error) { say(error.message, true); }
          }

          async function note() {
            const text = window.prompt(selectedRange() ? "Note on the selected text" : `Note on page ${pageNumber}`);
            if (!text) return;
            if (selectedRange()) return highlight(text);
            try {
              await send("POST", `/api/books/${book}/memos`, { page: pageNumber, text });
              say("Note added.");
              await refresh();
            } catch (error) { say(error.message, true); }
          }

          async function bookmark() {
            try {
              await send("POST", `/api/books/${book}/bookmarks`, { page: pageNumber });
              say(`Bookmarked page ${pageNumber}.`);
              await refresh();
            } catch (error) { say(error.message, true); }
          }

          function go(number) {
            if (number >= 1 && number <= pageCount) window.location.href = `/books/${book}/pages/${number}`;
          }

          function item(kind, annotation, html, color) {
            const id = annotation.id;
            const li = document.createElement("li");
            li.className = kind;
            li.innerHTML = html;
            if (color) li.querySelector("mark").style.background = color;
            // Someone else's (shared with the team): who made it; only its author changes it.
            if (teamUser && annotation.author && annotation.author !== teamUser) {
              const by = document.createElement("span");
              by.className = "by";
              by.textContent = ` — ${annotation.author}`;
              li.appendChild(by);
              return li;
            }
            if (teamUser) {
              const share = document.createElement("button");
              share.type = "button";
              share.dataset.action = "share";
              share.setAttribute("aria-pressed", annotation.shared ? "true" : "false");
              share.title = annotation.shared ? "The team sees it: make it yours only" : "Share it with the team";
              share.textContent = annotation.shared ? "shared" : "share";
              share.addEventListener("click", async () => {
                try {
                  await send("PATCH", `/api/${kind}s/${id}`, { shared: !annotation.shared });
                  say(annotation.shared ? "Now yours only." : "Shared with the team.");
                  await refresh();
                } catch (error) { say(error.message, true); }
              });
              li.appendChild(share);
            }
            const remove = document.createElement("button");
            remove.type = "button";
            remove.title = `Remove this ${kind}`;
            remove.setAttribute("aria-label", `Remove this ${kind}`);
            remove.dataset.action = "remove";
            remove.textContent = "×";
            remove.addEventListener("click", () => removeLater(kind, id, li));
            li.appendChild(remove);
            return li;
          }

          // A removal waits 10 s with an Undo before it is sent (then, or when another one
          // starts, the toast's × is pressed, or the page is left).
          const toast = document.getElementById("toast");
          let pending = null;
          function shown(id, visible) {
            document.querySelectorAll(`#marks [data-highlight="${id}"]`).forEach((m) => { m.hidden = !visible; });
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
          function removeLater(kind, id, li) {
            if (pending) commitRemoval();
            li.hidden = true;
            if (kind === "highlight") shown(id, false);
            pending = { kind, id, li, timer: setTimeout(commitRemoval, 10000) };
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
            await refresh();
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

          const escape = (text) => text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));

          async function refresh() {
            const [highlights, bookmarks, memos] = await Promise.all([
              api(`/api/books/${book}/highlights${audience}`), api(`/api/books/${book}/bookmarks${audience}`),
              api(`/api/books/${book}/memos${audience}`)]);
            // What waits to be removed is not shown again meanwhile.
            const here = (kind) => (a) => a.page === pageNumber && !(pending && pending.kind === kind && pending.id === a.id);
            marks.replaceChildren();
            list.replaceChildren();
            bookmarks.filter(here("bookmark")).forEach((b) => list.appendChild(item("bookmark", b, `bookmark${b.label ? ": " + escape(b.label) : ""}`)));
            highlights.filter(here("highlight")).forEach((h) => {
              for (const r of h.rects) {
                const mark = document.createElement("div");
                mark.style.left = pct(r[0], layout.width);
                mark.style.top = pct(layout.height - r[3], layout.height);
                mark.style.width = pct(r[2] - r[0], layout.width);
                mark.style.height = pct(r[3] - r[1], layout.height);
                mark.style.background = h.color;
                mark.dataset.highlight = h.id;
                marks.appendChild(mark);
              }
              const note = h.note ? ` <span class="note">${escape(h.note)}</span>` : "";
              list.appendChild(item("highlight", h, `<mark>${escape(h.text)}</mark>${note}`, h.color));
            });
            memos.filter(here("memo")).forEach((m) => list.appendChild(item("memo", m, `memo: ${escape(m.text)}`)));
          }

          function markQuery(query) {
            const words = (query.match(/"[^"]+"|\S+/g) || []).map((w) => w.replace(/"/g, "").toLowerCase()).filter(Boolean);
            const characters = Array.from(layout.text);
            const lower = characters.map((c) => c.toLowerCase());
            const spans = layer.children;
            let first = null;
            for (const word of words) {
              const needle = Array.from(word);
              for (let i = 0; i + needle.length <= lower.length; i++) {
                let match = true;
                for (let j = 0; j < needle.length && match; j++) match = lower[i + j] === needle[j];
                if (!match) continue;
                for (let j = 0; j < needle.length; j++) spans[i + j].classList.add("found");
                if (first === null) first = spans[i];
              }
            }
            if (first) first.scrollIntoView({ block: "center" });
          }

          async function searchBook(query) {
            const section = document.getElementById("hits");
            const target = section.querySelector("ol");
            target.replaceChildren();
            section.hidden = false;
            try {
              const hits = await api(`/api/search?q=${encodeURIComponent(query)}&book=${book}&limit=200`);
              if (hits.length === 0) target.innerHTML = "<li>No matches.</li>";
              for (const hit of hits) {
                const li = document.createElement("li");
                const link = document.createElement("a");
                link.href = `/books/${book}/pages/${hit.page}?q=${encodeURIComponent(query)}`;
                link.className = "hit";
                link.textContent = `p. ${hit.page}`;
                li.appendChild(link);
                li.appendChild(document.createTextNode(" " + hit.snippet));
                target.appendChild(li);
              }
              layer.querySelectorAll(".found").forEach((s) => s.classList.remove("found"));
              markQuery(query);
            } catch (error) { say(error.message, true); }
          }

          document.addEventListener("click", (event) => {
            const button = event.target.closest("button[data-action]");
            if (!button) return;
            const action = button.dataset.action;
            if (action === "highlight") highlight();
            else if (action === "note") note();
            else if (action === "bookmark") bookmark();
            else if (action === "next-page") go(pageNumber + 1);
            else if (action === "prev-page") go(pageNumber - 1);
            else if (action === "help") help.showModal();
          });
          // A selection survives the click on a button.
          document.querySelectorAll("button[data-action]").forEach((b) => b.addEventListener("mousedown", (e) => e.preventDefault()));

          document.addEventListener("keydown", (event) => {
            if (event.ctrlKey || event.metaKey || event.altKey) return;
            const typing = event.target.closest("input, textarea, select, [contenteditable]");
            if (typing) return;
            const keys = { h: () => highlight(), n: () => note(), b: () => bookmark(), u: () => undoRemoval(),
              ArrowRight: () => go(pageNumber + 1), ArrowLeft: () => go(pageNumber - 1),
              "?": () => (help.open ? help.close() : help.showModal()),
              "/": () => document.querySelector("form[data-action=search] input").focus() };
            const action = keys[event.key];
            if (action) { event.preventDefault(); action(); }
          });

          const form = document.querySelector("form[data-action=search]");
          form.addEventListener("submit", (event) => {
            event.preventDefault();
            const query = form.querySelector("input").value.trim();
            if (query) searchBook(query);
          });

          window.addEventListener("resize", scale);

          (async () => {
            try {
              layout = await api(`/api/books/${book}/pages/${pageNumber}/text`);
              sheet.style.aspectRatio = `${layout.width} / ${layout.height}`;
              scale();
              loadImage();
              buildTextLayer();
              await refresh();
              const query = new URLSearchParams(window.location.search).get("q");
              if (query) { form.querySelector("input").value = query; markQuery(query); }
              reader.dataset.ready = "true";
            } catch (error) { say(error.message, true); }
          })();
        })();
        """#
}
