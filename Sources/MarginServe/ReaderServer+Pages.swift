import Foundation
import Hummingbird
import MarginCore
import MarginKit
import NIOCore

/// The reader's pages: server-rendered HTML, one small script and one style sheet, all served
/// by margin (no bundler, no CDN).
extension ReaderServer {
    func addPages(to router: Router<ReaderContext>) {
        router.get("/") { request, context in try await self.libraryPage(request, context) }
        router.get("/books/{id}") { _, context in try await self.bookPage(context) }
        router.get("/books/{id}/pages/{page}") { _, context in try await self.readerPage(context) }
        router.get("/static/reader.js") { _, _ in asset(Assets.script, type: "text/javascript; charset=utf-8") }
        router.get("/static/reader.css") { _, _ in asset(Assets.style, type: "text/css; charset=utf-8") }
    }

    // MARK: /

    private func libraryPage(_ request: Request, _ context: ReaderContext) async throws -> Response {
        let query = request.query
        let q = query.get("q") ?? ""
        let folder = nonEmptyParameter(query.get("folder"))
        let tag = nonEmptyParameter(query.get("tag"))
        let sort = query.get("sort").flatMap(BookSort.init(rawValue:)) ?? .added
        let everything = try await library.list(BookFilter())
        let books = try await library.list(BookFilter(folder: folder, tag: tag, sort: sort))
        let recent = try await library.recent(limit: 5)
        var body = "<header class=\"bar\"><h1><a href=\"/\">Margin</a></h1>"
        body += """
            <form class="search" action="/" method="get" role="search">
            <input type="search" name="q" value="\(html(q))" placeholder="Search the library" aria-label="Search the library" data-action="search">
            \(hidden("folder", folder))\(hidden("tag", tag))<button type="submit">Search</button></form></header><main class="library">
            """
        if !q.trimmingCharacters(in: .whitespaces).isEmpty {
            body += try await searchSection(q, folder: folder, tag: tag, stop: context.clientGone())
        }
        if !recent.isEmpty {
            body += "<section><h2>Recently opened</h2><ul class=\"recent\">"
            for info in recent {
                body += "<li><a href=\"/books/\(info.book.id ?? 0)/pages/1\">\(html(info.book.title))</a></li>"
            }
            body += "</ul></section>"
        }
        let folders = Set(everything.compactMap(\.book.folder)).sorted()
        let tags = Set(everything.flatMap(\.tags)).sorted()
        body += "<section><h2>Books</h2><form class=\"filters\" action=\"/\" method=\"get\">"
        body += select("folder", "All folders", folders, folder)
        body += select("tag", "All tags", tags, tag)
        body += select("sort", nil, BookSort.allCases.map(\.rawValue), sort.rawValue)
        body += "<button type=\"submit\">Show</button></form><table class=\"books\"><thead><tr>"
        body += "<th>Title</th><th>Author</th><th>Pages</th><th>Folder</th><th>Tags</th></tr></thead><tbody>"
        for info in books {
            let book = info.book
            body += "<tr><td><a href=\"/books/\(book.id ?? 0)\">\(html(book.title))</a></td>"
            body += "<td>\(html(book.author ?? ""))</td><td>\(book.pages)</td><td>\(html(book.folder ?? ""))</td>"
            body += "<td>\(info.tags.map(html).joined(separator: ", "))</td></tr>"
        }
        body += "</tbody></table>"
        if books.isEmpty { body += "<p class=\"empty\">No books here yet: <code>margin add URL</code> adds one.</p>" }
        body += "</section></main>"
        return page(title: q.isEmpty ? "Margin" : "\(q) — Margin", body: body)
    }

    /// A hidden field of a form, when it has a value.
    private func hidden(_ name: String, _ value: String?) -> String {
        value.map { "<input type=\"hidden\" name=\"\(name)\" value=\"\(html($0))\">" } ?? ""
    }

    private func searchSection(_ q: String, folder: String?, tag: String?, stop: StopSignal?) async throws -> String {
        let within = [folder.map { "in " + $0 }, tag.map { "tagged " + $0 }].compactMap { $0 }.joined(separator: ", ")
        var section =
            "<section class=\"hits\"><h2>Pages matching “\(html(q))”\(within.isEmpty ? "" : " " + html(within))</h2>"
        let results: SearchResults
        do {
            var options = SearchOptions(limit: 100)
            options.folder = folder
            options.tag = tag
            options.suggest = true
            options.timeLimit = Self.searchTimeLimit
            options.stop = stop
            results = try await library.search(q, options: options)
        } catch let error as MarginError {
            return section + "<p class=\"error\">\(html(error.localizedDescription))</p></section>"
        }
        if results.hits.isEmpty { section += "<p class=\"empty\">No matches.</p>" }
        if !results.suggestions.isEmpty {
            let filters = [folder.map { "&folder=" + urlQuery($0) }, tag.map { "&tag=" + urlQuery($0) }].compactMap {
                $0
            }
            .joined()
            section +=
                "<p class=\"suggest\">Did you mean "
                + results.suggestions.map { "<a href=\"/?q=\(urlQuery($0))\(filters)\">\(html($0))</a>" }.joined(
                    separator: " or ") + "?</p>"
        }
        var order = [Int64]()
        var groups = [Int64: [SearchHit]]()
        for hit in results.hits {
            if groups[hit.book] == nil { order.append(hit.book) }
            groups[hit.book, default: []].append(hit)
        }
        let parameter = urlQuery(q)
        let terms = (try? distinctQueryTerms(q)) ?? []
        for id in order {
            guard let hits = groups[id], let first = hits.first else { continue }
            section += "<article class=\"book-hits\"><h3><a href=\"/books/\(id)\">\(html(first.title))</a></h3><ul>"
            for hit in hits {
                let place = hit.page.map { "p. \(html(hit.pageLabel ?? String($0)))" } ?? (hit.kind ?? "book")
                let link = hit.page.map { "/books/\(id)/pages/\($0)?q=\(parameter)" } ?? "/books/\(id)"
                section +=
                    "<li><a class=\"hit\" href=\"\(link)\">\(place)</a> <span class=\"snippet\">\(marked(hit.marked, terms: terms))</span></li>"
            }
            section += "</ul></article>"
        }
        if results.more { section += "<p class=\"more\">More pages match than are shown.</p>" }
        return section + "</section>"
    }

    // MARK: /books/ID

    private func bookPage(_ context: ReaderContext) async throws -> Response {
        let book = try await book(context)
        let info = try await library.info(book)
        let id = book.id ?? 0
        var body = "<header class=\"bar\"><h1><a href=\"/\">Margin</a></h1></header><main class=\"book\">"
        body += "<h2>\(html(book.title))</h2><dl class=\"meta\">"
        body += "<dt>Author</dt><dd>\(html(book.author ?? "—"))</dd><dt>Pages</dt><dd>\(book.pages)</dd>"
        body += "<dt>Folder</dt><dd>\(html(book.folder ?? "—"))</dd>"
        body += "<dt>Tags</dt><dd>\(info.tags.isEmpty ? "—" : info.tags.map(html).joined(separator: ", "))</dd>"
        body += "<dt>Sources</dt><dd>\(info.sources.map(html).joined(separator: "<br>"))</dd></dl>"
        body += "<p><a class=\"open\" href=\"/books/\(id)/pages/1\">Read from page 1</a></p>"
        body += "<p class=\"exports\">Export: "
        body += ExportFormat.allCases.map { format in
            "<a href=\"/api/books/\(id)/export?format=\(format.rawValue)\" download>\(format.rawValue)</a>"
        }.joined(separator: " · ")
        body += "</p><h3>Annotations</h3>"
        // A team's member reads the team's shared annotations with their own, or only their own.
        let user = (library.database as? any TeamStore)?.user
        if user != nil {
            let everyone = Audience.chosen != .mine
            body +=
                everyone
                ? "<p class=\"audience\">Yours and those the team shares · <a href=\"/books/\(id)?all-users=0\">only yours</a></p>"
                : "<p class=\"audience\">Only yours · <a href=\"/books/\(id)?all-users=1\">with those the team shares</a></p>"
        }
        let items = try await library.annotations(of: book)
        // Pages named as the book prints them, as the reader names them.
        let guide = try await library.guide(of: id)
        if items.isEmpty { body += "<p class=\"empty\">None yet: open a page, select text and press <kbd>h</kbd>.</p>" }
        body += "<ol class=\"annotations\">"
        for item in items {
            let link =
                item.page.map {
                    "<a href=\"/books/\(id)/pages/\($0)\">p. \(html(guide?.label(of: $0) ?? String($0)))</a>"
                }
                ?? "book"
            // Whose it is, when it is someone else's; whether the team sees it, when it is yours.
            func whose(_ owner: String?, _ shared: Bool) -> String {
                guard let user, let owner else { return "" }
                if owner != user { return " <span class=\"by\">— \(html(owner))</span>" }
                return shared ? " <span class=\"shared\">shared</span>" : ""
            }
            switch item {
            case .bookmark(let bookmark):
                body +=
                    "<li class=\"bookmark\">\(link) bookmark\(bookmark.label.map { ": " + html($0) } ?? "")"
                    + whose(bookmark.owner, bookmark.shared) + "</li>"
            case .highlight(let highlight):
                body +=
                    "<li class=\"highlight\">\(link) <mark data-color=\"\(html(highlight.color))\">\(html(highlight.text))</mark>"
                if let note = highlight.note { body += " <span class=\"note\">\(html(note))</span>" }
                body += whose(highlight.owner, highlight.shared) + "</li>"
            case .memo(let memo):
                body += "<li class=\"memo\">\(link) memo: \(html(memo.text))" + whose(memo.owner, memo.shared) + "</li>"
            }
        }
        body += "</ol></main><script src=\"/static/reader.js\" defer></script>"
        return page(title: "\(book.title) — Margin", body: body)
    }

    // MARK: /books/ID/pages/N

    /// The reader: every page of the book in one scroll, drawn as it comes near the view
    /// (`reader.js`), opened on page N (or the `#page=N` the address ends with).
    private func readerPage(_ context: ReaderContext) async throws -> Response {
        let book = try await book(context)
        let number = try page(context)
        guard number >= 1, number <= book.pages else {
            throw MarginError.pageOutOfRange(page: number, count: book.pages)
        }
        let id = book.id ?? 0
        // In a team library: who reads, and whether the team's shared annotations are shown.
        let team =
            (library.database as? any TeamStore).map {
                " data-team-user=\"\(html($0.user))\" data-all-users=\"\(Audience.chosen == .mine ? 0 : 1)\""
            } ?? ""
        let colors = HighlightColor.palette.map { name, hex in
            "<button type=\"button\" class=\"swatch\" data-action=\"highlight\" data-color=\"\(hex)\" data-name=\"\(name)\" title=\"Highlight \(name)\" aria-label=\"Highlight \(name)\"></button>"
        }.joined()
        let zooms = ["auto": "Automatic", "width": "Fit width", "page": "Fit page"].sorted { $0.key < $1.key }
        var zoomOptions = zooms.map { "<option value=\"\($0.key)\">\($0.value)</option>" }.joined()
        zoomOptions += [50, 75, 100, 125, 150, 200, 300, 400].map { "<option value=\"\($0)\">\($0) %</option>" }
            .joined()
        let body = """
            <header class="bar reader-bar">
            <button type="button" class="icon" data-action="sidebar" aria-controls="side" aria-expanded="true" title="Sidebar (s)" aria-label="Show or hide the sidebar">☰</button>
            <h1><a href="/">Margin</a></h1>
            <a class="title" href="/books/\(id)">\(html(book.title))</a>
            <nav class="pager" aria-label="Pages">
            <button type="button" data-action="prev-page" title="Previous page (←)" aria-label="Previous page">←</button>
            <form class="goto" data-action="goto"><input name="page" value="\(number)" aria-label="Page: a number or the printed label" title="Page: a number or the printed label (g)" autocomplete="off">
            <span class="of">of \(book.pages)</span></form>
            <button type="button" data-action="next-page" title="Next page (→)" aria-label="Next page">→</button>
            </nav>
            <div class="zoom" role="group" aria-label="Zoom">
            <button type="button" data-action="zoom-out" title="Zoom out (Ctrl −)" aria-label="Zoom out">−</button>
            <select data-action="zoom" aria-label="Zoom">\(zoomOptions)</select>
            <button type="button" data-action="zoom-in" title="Zoom in (Ctrl +)" aria-label="Zoom in">+</button>
            </div>
            <div class="tools">
            <button type="button" data-action="highlight" title="Highlight the selection (h)">Highlight</button>
            <button type="button" data-action="note" title="Add a note to the selection or the page (m)">Note</button>
            <button type="button" data-action="bookmark" title="Bookmark the page in view (b)">Bookmark</button>
            <button type="button" data-action="help" title="Keyboard shortcuts (?)" aria-label="Keyboard shortcuts">?</button>
            </div>
            <form class="search" data-action="search" role="search">
            <input type="search" name="q" placeholder="Search this book" aria-label="Search this book">
            </form>
            </header>
            <div class="reader-body">
            <aside class="side" id="side" aria-label="Sidebar">
            <div class="tabs" role="tablist" aria-label="Sidebar">
            <button type="button" role="tab" id="tab-notes" aria-controls="panel-notes" aria-selected="true" data-tab="notes">Notes</button>
            <button type="button" role="tab" id="tab-outline" aria-controls="panel-outline" aria-selected="false" tabindex="-1" data-tab="outline">Outline</button>
            <button type="button" role="tab" id="tab-thumbs" aria-controls="panel-thumbs" aria-selected="false" tabindex="-1" data-tab="thumbs">Pages</button>
            <button type="button" role="tab" id="tab-found" aria-controls="panel-found" aria-selected="false" tabindex="-1" data-tab="found">Found</button>
            </div>
            <section class="panel" role="tabpanel" id="panel-notes" aria-labelledby="tab-notes">
            <div class="filters" id="filters">
            <select id="filter-kind" aria-label="Show which annotations"><option value="">All kinds</option><option value="highlight">Highlights</option><option value="note">Highlights with notes</option><option value="bookmark">Bookmarks</option><option value="memo">Memos</option></select>
            <select id="filter-color" aria-label="Show which colour"><option value="">All colours</option></select>
            <select id="filter-author" aria-label="Show whose" hidden><option value="">Everyone</option></select>
            </div>
            <p class="audience" id="audience" hidden></p>
            <ol id="annotations" class="annotations"></ol>
            <p class="empty" id="annotations-empty" hidden>None yet: select text and press <kbd>h</kbd>.</p>
            </section>
            <section class="panel" role="tabpanel" id="panel-outline" aria-labelledby="tab-outline" hidden><ol id="outline" class="outline"></ol></section>
            <section class="panel" role="tabpanel" id="panel-thumbs" aria-labelledby="tab-thumbs" hidden><ol id="thumbnails" class="thumbnails"></ol></section>
            <section class="panel hits" role="tabpanel" id="panel-found" aria-labelledby="tab-found" hidden>
            <section id="hits"><p class="summary" id="hits-summary">Search this book with the box above (<kbd>/</kbd>); <kbd>n</kbd> and <kbd>N</kbd> step through what it finds.</p><ol></ol></section>
            </section>
            </aside>
            <main class="reader" id="reader" data-book="\(id)" data-page-number="\(number)" data-pages="\(book.pages)"\(team)>
            <div class="pages" id="pages" aria-label="\(html(book.title))"><div class="page-row"><div class="page" data-number="\(number)">
            <div class="marks"></div><div class="text-layer" data-page="\(number)"></div></div></div></div>
            </main>
            </div>
            <p class="status" id="status" role="status" aria-live="polite"></p>
            <div class="selection-tools" id="selection-tools" role="toolbar" aria-label="The selected text" hidden>\(colors)
            <button type="button" data-action="note" title="Highlight with a note (m)">Note</button>
            <button type="button" data-action="copy" title="Copy (Ctrl c)">Copy</button></div>
            <div class="toast" id="toast" role="alert" hidden><span></span>
            <button type="button" data-action="undo">Undo</button>
            <button type="button" data-action="dismiss" aria-label="Remove it now">×</button></div>
            <dialog id="help" aria-labelledby="help-title"><h2 id="help-title">Keyboard</h2><dl class="keys">
            <dt><kbd>h</kbd></dt><dd>highlight the selected text (<kbd>1</kbd>–<kbd>8</kbd>: in the toolbar's colours)</dd>
            <dt><kbd>m</kbd></dt><dd>add a note: to the selection, or else a memo of the page in view</dd>
            <dt><kbd>b</kbd></dt><dd>bookmark the page in view</dd>
            <dt><kbd>←</kbd> <kbd>→</kbd></dt><dd>previous and next page</dd>
            <dt><kbd>g</kbd></dt><dd>go to a page: its number or its printed label (xii, A-3)</dd>
            <dt><kbd>/</kbd></dt><dd>search this book</dd>
            <dt><kbd>n</kbd> <kbd>N</kbd></dt><dd>next and previous match</dd>
            <dt><kbd>Ctrl</kbd> <kbd>+</kbd> <kbd>−</kbd> <kbd>0</kbd></dt><dd>zoom in, out, back to automatic (or pinch)</dd>
            <dt><kbd>w</kbd> <kbd>p</kbd></dt><dd>fit the width, fit the page</dd>
            <dt><kbd>s</kbd></dt><dd>show or hide the sidebar</dd>
            <dt><kbd>u</kbd></dt><dd>undo the last removal (for 10 s)</dd>
            <dt><kbd>Esc</kbd></dt><dd>close what is open, leave a field</dd>
            <dt><kbd>?</kbd></dt><dd>this list</dd>
            <dt>double click</dt><dd>select a word (three clicks: its line)</dd>
            <dt><kbd>Ctrl</kbd> <kbd>c</kbd></dt><dd>copy: a word broken at a line end joined, a space at any other</dd></dl>
            <p class="note-on-styles">Underline and strike-out are not kept yet: Margin stores highlights, each with a colour and a note.</p>
            <form method="dialog"><button>Close</button></form></dialog>
            <script src="/static/reader.js" defer></script>
            """
        return page(title: "p. \(number) — \(book.title)", body: body)
    }

    // MARK: Parts

    private func select(_ name: String, _ all: String?, _ values: [String], _ chosen: String?) -> String {
        var field = "<label>\(name) <select name=\"\(name)\">"
        if let all { field += "<option value=\"\">\(all)</option>" }
        for value in values {
            field += "<option value=\"\(html(value))\"\(value == chosen ? " selected" : "")>\(html(value))</option>"
        }
        return field + "</select></label>"
    }

    private func page(title: String, body: String) -> Response {
        let document = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(html(title))</title>
            <link rel="icon" href="data:,">
            <link rel="stylesheet" href="/static/reader.css">
            </head><body>\(body)</body></html>
            """
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: document)))
    }
}

private func asset(_ text: String, type: String) -> Response {
    var headers = HTTPFields()
    headers[.contentType] = type
    headers[.cacheControl] = "no-cache"
    return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
}

func nonEmptyParameter(_ value: String?) -> String? {
    guard let value, !value.isEmpty else { return nil }
    return value
}

/// Text made safe inside HTML elements and quoted attributes.
func html(_ text: String) -> String {
    var result = ""
    result.reserveCapacity(text.utf8.count)
    for character in text.unicodeScalars {
        switch character {
        case "&": result += "&amp;"
        case "<": result += "&lt;"
        case ">": result += "&gt;"
        case "\"": result += "&quot;"
        case "'": result += "&#39;"
        default: result.unicodeScalars.append(character)
        }
    }
    return result
}

/// A snippet as HTML, every term of the query marked (the search marks the first term's match;
/// the others are found in the snippet's text as the index finds them: case and accents folded).
private func marked(_ text: String, terms: [String] = []) -> String {
    var output = ""
    var rest = Substring(text)
    while !rest.isEmpty {
        let open = rest.range(of: SearchHit.markOpen)
        let plain = rest[..<(open?.lowerBound ?? rest.endIndex)]
        output += markTerms(String(plain), terms)
        guard let open else { break }
        let after = rest[open.upperBound...]
        let close = after.range(of: SearchHit.markClose)
        output += "<mark>" + html(String(after[..<(close?.lowerBound ?? after.endIndex)])) + "</mark>"
        rest = close.map { after[$0.upperBound...] } ?? ""
    }
    return output
}

/// `text` as HTML with each occurrence of the terms in <mark>.
private func markTerms(_ text: String, _ terms: [String]) -> String {
    let searchable = SearchableText(text)
    var ranges = [Range<Int>]()
    for term in terms {
        let folded = foldedTerm(term)
        guard !folded.isEmpty else { continue }
        ranges += searchable.foldedMatches(folded, wholeWord: false).map { searchable.rawRange($0) }
    }
    guard !ranges.isEmpty else { return html(text) }
    let scalars = Array(text.unicodeScalars)
    var output = ""
    var at = 0
    for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) where range.lowerBound >= at {
        output += html(scalarString(scalars[at..<range.lowerBound]))
        output += "<mark>" + html(scalarString(scalars[range])) + "</mark>"
        at = range.upperBound
    }
    return output + html(scalarString(scalars[at...]))
}

/// A query string value.
private func urlQuery(_ text: String) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
}
