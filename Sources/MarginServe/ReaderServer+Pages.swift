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
            <button type="submit">Search</button></form></header><main class="library">
            """
        if !q.trimmingCharacters(in: .whitespaces).isEmpty {
            body += try await searchSection(q, stop: await context.clientGone())
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

    private func searchSection(_ q: String, stop: StopSignal?) async throws -> String {
        var section = "<section class=\"hits\"><h2>Pages matching “\(html(q))”</h2>"
        let results: SearchResults
        do {
            var options = SearchOptions(limit: 100)
            options.timeLimit = Self.searchTimeLimit
            options.stop = stop
            results = try await library.search(q, options: options)
        } catch let error as MarginError {
            return section + "<p class=\"error\">\(html(error.localizedDescription))</p></section>"
        }
        if results.hits.isEmpty { section += "<p class=\"empty\">No matches.</p>" }
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
                let place = hit.page.map { "p. \($0)" } ?? (hit.kind ?? "book")
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
        if items.isEmpty { body += "<p class=\"empty\">None yet: open a page, select text and press <kbd>h</kbd>.</p>" }
        body += "<ol class=\"annotations\">"
        for item in items {
            let link = item.page.map { "<a href=\"/books/\(id)/pages/\($0)\">p. \($0)</a>" } ?? "book"
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
        let body = """
            <header class="bar reader-bar">
            <h1><a href="/">Margin</a></h1>
            <a class="title" href="/books/\(id)">\(html(book.title))</a>
            <nav class="pager">
            <button type="button" data-action="prev-page" title="Previous page (←)"\(number <= 1 ? " disabled" : "")>←</button>
            <span class="where">page <strong>\(number)</strong> of \(book.pages)</span>
            <button type="button" data-action="next-page" title="Next page (→)"\(number >= book.pages ? " disabled" : "")>→</button>
            </nav>
            <div class="tools">
            <button type="button" data-action="highlight" title="Highlight the selection (h)">Highlight</button>
            <button type="button" data-action="note" title="Add a note (n)">Note</button>
            <button type="button" data-action="bookmark" title="Bookmark this page (b)">Bookmark</button>
            <button type="button" data-action="help" title="Keyboard shortcuts (?)">?</button>
            </div>
            <form class="search" data-action="search" role="search">
            <input type="search" name="q" placeholder="Search this book" aria-label="Search this book">
            </form>
            </header>
            <main class="reader" id="reader" data-book="\(id)" data-page-number="\(number)" data-pages="\(book.pages)"\(team)>
            <div class="sheet" id="sheet">
            <img id="page-image" alt="Page \(number) of \(html(book.title))">
            <div class="marks" id="marks"></div>
            <div class="text-layer" id="text-layer" data-page="\(number)"></div>
            </div>
            <aside class="side">
            <p class="status" id="status" role="status" aria-live="polite"></p>
            <div class="toast" id="toast" role="alert" hidden><span></span>
            <button type="button" data-action="undo">Undo</button>
            <button type="button" data-action="dismiss" aria-label="Remove it now">×</button></div>
            <section id="hits" class="hits" hidden><h2>Found</h2><ol></ol></section>
            <section><h2>On this page</h2><ol id="page-annotations" class="annotations"></ol></section>
            </aside>
            </main>
            <dialog id="help"><h2>Keyboard</h2><dl class="keys">
            <dt><kbd>h</kbd></dt><dd>highlight the selected text</dd>
            <dt><kbd>n</kbd></dt><dd>add a note (to the selection, or to the page)</dd>
            <dt><kbd>b</kbd></dt><dd>bookmark this page</dd>
            <dt><kbd>←</kbd> <kbd>→</kbd></dt><dd>previous and next page</dd>
            <dt><kbd>/</kbd></dt><dd>search this book</dd>
            <dt><kbd>u</kbd></dt><dd>undo the last removal (for 10 s)</dd>
            <dt><kbd>?</kbd></dt><dd>this list</dd>
            <dt>double click</dt><dd>select a word (three clicks: its line)</dd>
            <dt><kbd>Ctrl</kbd> <kbd>c</kbd></dt><dd>copy: a word broken at a line end joined, a space at any other</dd></dl>
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

private func nonEmptyParameter(_ value: String?) -> String? {
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
