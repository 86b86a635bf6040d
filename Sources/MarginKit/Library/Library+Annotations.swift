import Foundation
import MarginCore

/// Where `highlight add` looks and how many matches it takes.
public struct HighlightRequest: Sendable {
    public var text: String
    /// Only this page; else the whole book.
    public var page: Int?
    /// The K-th match (1-based), on the page or in the book.
    public var occurrence: Int?
    /// Every match.
    public var all = false
    public var color = HighlightColor.defaultColor
    public var note: String?
    /// Seen by the other users of a team library.
    public var shared = false

    public init(text: String) {
        self.text = text
    }
}

extension Library {
    // MARK: Bookmarks

    public func addBookmark(_ book: Book, page: Int, label: String?, shared: Bool = false) async throws -> Bookmark {
        try await addBookmarkShown(book, page: page, label: label, shared: shared).annotation
    }

    /// `addBookmark`, as shown (with its page's label and chapter), from the same transaction.
    public func addBookmarkShown(_ book: Book, page: Int, label: String?, shared: Bool = false) async throws
        -> AnnotationView<Bookmark>
    {
        try checkNoNUL(label, what: "a bookmark's label")
        return try await addShown([try bookmark(on: book, page: page, label: label, shared: shared)], of: book)[0]
    }

    /// `addBookmarkShown` on the book with this id, read in the transaction that saves the
    /// bookmark; nil when there is none.
    public func addBookmarkShown(toBook id: Int64, page: Int, label: String?, shared: Bool = false) async throws
        -> AnnotationView<Bookmark>?
    {
        try checkNoNUL(label, what: "a bookmark's label")
        let made = try await database.addAnnotations(toBook: id, openedAt: Date()) { book in
            [try self.bookmark(on: book, page: page, label: label, shared: shared)]
        }
        return made.map { AnnotationView($0.saved[0], guide: $0.guide) }
    }

    private func bookmark(on book: Book, page: Int, label: String?, shared: Bool) throws -> Bookmark {
        try checkPage(page, of: book)
        var bookmark = Bookmark(bookId: book.id ?? 0, page: page, label: nonEmpty(label))
        bookmark.shared = shared
        return bookmark
    }

    /// Saves annotations of a book, notes it opened (for `recent`), and shows them (their pages'
    /// labels and chapters), in one transaction.
    func addShown<A: AnnotationModel>(_ annotations: [A], of book: Book) async throws -> [AnnotationView<A>] {
        let (saved, guide) = try await database.addAnnotations(annotations, of: book.id ?? 0, openedAt: Date())
        return saved.map { AnnotationView($0, guide: guide) }
    }

    public func bookmarks(of book: Book?) async throws -> [Bookmark] {
        try await annotations(Bookmark.self, of: book)
    }

    public func removeBookmark(id: Int64) async throws -> Bookmark {
        try await database.removeAnnotation(Bookmark.self, id: id)
    }

    // MARK: Memos

    public func addMemo(_ book: Book, page: Int?, text: String, shared: Bool = false) async throws -> Memo {
        try await addMemoShown(book, page: page, text: text, shared: shared).annotation
    }

    /// `addMemo`, as shown (with its page's label and chapter), from the same transaction.
    public func addMemoShown(_ book: Book, page: Int?, text: String, shared: Bool = false) async throws
        -> AnnotationView<Memo>
    {
        let text = try memoText(text)
        return try await addShown([try memo(on: book, page: page, text: text, shared: shared)], of: book)[0]
    }

    /// `addMemoShown` on the book with this id, read in the transaction that saves the memo; nil
    /// when there is none.
    public func addMemoShown(toBook id: Int64, page: Int?, text: String, shared: Bool = false) async throws
        -> AnnotationView<Memo>?
    {
        let text = try memoText(text)
        let made = try await database.addAnnotations(toBook: id, openedAt: Date()) { book in
            [try self.memo(on: book, page: page, text: text, shared: shared)]
        }
        return made.map { AnnotationView($0.saved[0], guide: $0.guide) }
    }

    /// A memo's text as kept (line ends normalized), refused when empty or too long.
    private func memoText(_ text: String) throws -> String {
        let text = normalizedLineEnds(text)
        guard nonEmpty(text) != nil else { throw MarginError.invalidArgument("a memo cannot be empty") }
        try checkNoteSize(text, what: "a memo")
        return text
    }

    private func memo(on book: Book, page: Int?, text: String, shared: Bool) throws -> Memo {
        if let page { try checkPage(page, of: book) }
        var memo = Memo(bookId: book.id ?? 0, page: page, text: text)
        memo.shared = shared
        return memo
    }

    public func memos(of book: Book?) async throws -> [Memo] {
        try await annotations(Memo.self, of: book)
    }

    /// Replaces a memo's text and/or makes it shared or private (nil: unchanged).
    public func editMemo(id: Int64, text: String?, shared: Bool? = nil) async throws -> Memo {
        let text = text.map(normalizedLineEnds)
        if let text {
            guard nonEmpty(text) != nil else { throw MarginError.invalidArgument("a memo cannot be empty") }
            try checkNoteSize(text, what: "a memo")
        }
        return try await database.updateAnnotation(Memo.self, id: id, now: Date()) { memo in
            if let text { memo.text = text }
            if let shared { memo.shared = shared }
        }
    }

    public func removeMemo(id: Int64) async throws -> Memo {
        try await database.removeAnnotation(Memo.self, id: id)
    }

    // MARK: Highlights

    public func highlights(of book: Book?) async throws -> [Highlight] {
        try await inReadingOrder(try await annotations(Highlight.self, of: book))
    }

    public func editHighlight(id: Int64, note: String?, color: String?, shared: Bool? = nil) async throws
        -> Highlight
    {
        let note = note.map(normalizedLineEnds)
        if let note { try checkNoteSize(note, what: "a note") }
        let color = try color.map(HighlightColor.parse)
        return try await database.updateAnnotation(Highlight.self, id: id, now: Date()) { highlight in
            if let note { highlight.note = note.isEmpty ? nil : note }
            if let color { highlight.color = color }
            if let shared { highlight.shared = shared }
        }
    }

    public func removeHighlight(id: Int64) async throws -> Highlight {
        try await database.removeAnnotation(Highlight.self, id: id)
    }

    /// Finds the text with poppler and saves a highlight per selected match (one transaction).
    public func addHighlights(_ book: Book, _ request: HighlightRequest) async throws -> [Highlight] {
        try await addHighlightsShown(book, request).map(\.annotation)
    }

    /// `addHighlights`, as shown (with their pages' labels and chapters), from the same transaction.
    public func addHighlightsShown(_ book: Book, _ request: HighlightRequest) async throws
        -> [AnnotationView<Highlight>]
    {
        let needle = request.text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !needle.isEmpty else { throw MarginError.invalidArgument("the text to highlight is empty") }
        var normalized = request
        normalized.note = request.note.map(normalizedLineEnds)
        let request = normalized
        if let note = request.note { try checkNoteSize(note, what: "a note") }
        if let page = request.page { try checkPage(page, of: book) }
        if let occurrence = request.occurrence, occurrence < 1 {
            throw MarginError.invalidArgument("occurrences count from 1")
        }
        var current = book
        if book.indexedAt == nil, let updated = try await reindex([book]).first { current = updated }
        let path = try await ensureCached(current)
        let document = try PDFEngines.current.open(path: path, password: try password(of: current))
        let folded = foldedTerm(needle)
        let keepHyphens = needle.contains("-")
        // Pages whose stored text holds the words, as the index finds them (each is then located
        // with its character boxes); a given page is looked at whatever its text says.
        let occursOn = try await pages(of: current, holding: folded)
        let ambiguous = request.page == nil && request.occurrence == nil && !request.all
        if ambiguous, occursOn.count > 1 {
            // Not the first of hundreds in silence: say where, and how to choose.
            throw MarginError.invalidArgument(ambiguity(needle, pages: occursOn.map(\.number), times: nil))
        }
        let candidates =
            try await request.page.asyncMap { number in try await pageTexts(of: current, numbers: [number]) }
            ?? occursOn
        var found = [(page: Int, occurrence: PageLocator.Occurrence)]()
        let recognized = try await recognized(current)
        for stored in candidates {
            let page = readable(try document.page(stored.number), recognized)
            let locator = PageLocator(number: stored.number, text: stored.text, page: page)
            var located = locator.occurrences(of: folded, keepHyphens: keepHyphens)
            if locator.boxes == nil {
                // No character layout from poppler: its own search places the text.
                located = page.find(needle).map { match in
                    PageLocator.Occurrence(range: 0..<0, rects: match.rects, text: needle, prefix: "", suffix: "")
                }
            }
            found += located.map { (stored.number, $0) }
            if !request.all, request.occurrence == nil, !ambiguous, !found.isEmpty { break }
        }
        if ambiguous, found.count > 1 {
            throw MarginError.invalidArgument(ambiguity(needle, pages: [found[0].page], times: found.count))
        }
        let selected: [(page: Int, occurrence: PageLocator.Occurrence)]
        if request.all {
            selected = found
        } else if let occurrence = request.occurrence, !found.isEmpty {
            guard occurrence <= found.count else {
                let place = request.page.map { "page \($0)" } ?? "the book"
                throw MarginError.invalidArgument(
                    "'\(needle)' occurs \(count(found.count, "time")) on \(place); there is no occurrence \(occurrence)"
                )
            }
            selected = [found[occurrence - 1]]
        } else {
            selected = Array(found.prefix(1))
        }
        guard !selected.isEmpty else {
            let elsewhere = occursOn.map(\.number).filter { $0 != request.page }
            let hint =
                elsewhere.isEmpty
                ? "it does not occur in the book"
                : "it occurs on page\(elsewhere.count == 1 ? "" : "s") \(elsewhere.prefix(20).map(String.init).joined(separator: ", "))"
            let place = request.page.map { "on page \($0)" } ?? "in '\(current.title)'"
            throw MarginError.invalidArgument("'\(needle)' was not found \(place); \(hint)")
        }
        // The same text highlighted twice is one highlight.
        let existing = try await highlights(of: current)
        func key(_ page: Int, _ rects: [[Double]]) -> String {
            "\(page):"
                + rects.map { $0.map { String(format: "%.1f", $0) }.joined(separator: ",") }.joined(separator: ";")
        }
        let taken = Dictionary(existing.map { (key($0.page, $0.rects), $0) }, uniquingKeysWith: { a, _ in a })
        var highlights = [Highlight]()
        var duplicates = [Highlight]()
        for (number, occurrence) in selected {
            let rects = occurrence.rects.map(\.array)
            if let already = taken[key(number, rects)] {
                duplicates.append(already)
                continue
            }
            var highlight = Highlight(
                bookId: current.id ?? 0, page: number, text: occurrence.text.isEmpty ? needle : occurrence.text,
                prefix: occurrence.prefix, suffix: occurrence.suffix, rects: rects, color: request.color,
                note: nonEmpty(request.note))
            highlight.shared = request.shared
            highlights.append(highlight)
        }
        if highlights.isEmpty, let first = duplicates.first {
            throw MarginError.alreadyHighlighted(text: needle, page: first.page, id: first.id ?? 0)
        }
        return try await addShown(highlights, of: current)
    }

    /// Every annotation of a book in reading order: page, then top to bottom (bookmarks first,
    /// memos after the highlights of their page, memos on the whole book last).
    public func annotations(of book: Book) async throws -> [AnnotationItem] {
        let items =
            try await bookmarks(of: book).map(AnnotationItem.bookmark)
            + highlights(of: book).map(AnnotationItem.highlight)
            + memos(of: book).map(AnnotationItem.memo)
        // Highlights come in reading order already: a stable sort by page and kind keeps it.
        let ranked = items.enumerated().sorted { a, b in
            let pa = a.element.page ?? Int.max
            let pb = b.element.page ?? Int.max
            if pa != pb { return pa < pb }
            let (ka, kb) = (kind(a.element), kind(b.element))
            return ka != kb ? ka < kb : a.offset < b.offset
        }
        return ranked.map(\.element)
    }

    /// Highlights in reading order: by book and page, then where their text stands in the page's
    /// text as poppler reads it (a two-column page's left column before its right one), then top
    /// to bottom. Only pages with two highlights or more need their text read.
    func inReadingOrder(_ highlights: [Highlight]) async throws -> [Highlight] {
        var perPage = [PageKey: Int]()
        for highlight in highlights { perPage[PageKey(book: highlight.bookId, page: highlight.page), default: 0] += 1 }
        let shared = perPage.filter { $0.value > 1 }.keys
        var offsets = [Int64: Int]()
        if !shared.isEmpty {
            let byBook = Dictionary(grouping: shared, by: \.book).mapValues { $0.map(\.page) }
            let texts = try await repository.read { store in
                var texts = [PageKey: String]()
                for (book, numbers) in byBook {
                    let query = Query<PageText>().filter(
                        PageText.Fields.bookId == book && PageText.Fields.number.isIn(numbers))
                    for page in try store.fetch(query) { texts[PageKey(book: book, page: page.number)] = page.text }
                }
                return texts
            }
            var searchable = [PageKey: SearchableText]()
            for highlight in highlights where !highlight.orphaned {
                let key = PageKey(book: highlight.bookId, page: highlight.page)
                guard perPage[key, default: 0] > 1, let text = texts[key] else { continue }
                if searchable[key] == nil { searchable[key] = SearchableText(text) }
                if let id = highlight.id, let offset = textOffset(of: highlight, in: searchable[key]!) {
                    offsets[id] = offset
                }
            }
        }
        return highlights.sorted { a, b in
            if a.bookId != b.bookId { return a.bookId < b.bookId }
            if a.page != b.page { return a.page < b.page }
            let (oa, ob) = (a.id.flatMap { offsets[$0] }, b.id.flatMap { offsets[$0] })
            if let oa, let ob, oa != ob { return oa < ob }
            return readingOrder(a, b)
        }
    }

    /// How many annotations each book has.
    public func annotationCounts(_ book: Book) async throws -> (bookmarks: Int, highlights: Int, memos: Int) {
        let id = book.id ?? -1
        return try await repository.read { store in
            (
                try store.count(Query<Bookmark>().filter(Bookmark.Fields.bookId == id)),
                try store.count(Query<Highlight>().filter(Highlight.Fields.bookId == id)),
                try store.count(Query<Memo>().filter(Memo.Fields.bookId == id))
            )
        }
    }

    /// The marks `render --annotations` draws: highlights in their colours, a ribbon for a bookmark.
    func overlays(for book: Book, page: Int) async throws -> [Overlay] {
        let id = book.id ?? -1
        let (highlights, bookmarks) = try await repository.read { store in
            (
                try store.fetch(
                    Query<Highlight>().filter(Highlight.Fields.bookId == id && Highlight.Fields.page == page)),
                try store.count(Query<Bookmark>().filter(Bookmark.Fields.bookId == id && Bookmark.Fields.page == page))
            )
        }
        let (width, height) = try documents.withDocument(
            path: blobs.path(for: book.sha256), password: try password(of: book)
        ) {
            try $0.page(page).size
        }
        var overlays = [Overlay]()
        for highlight in highlights where !highlight.orphaned {
            let color = HighlightColor.rgb(highlight.color)
            for rect in highlight.rects where rect.count == 4 {
                // Stored in PDF space (bottom-left origin); drawn with the top-left origin.
                overlays.append(
                    Overlay(
                        x0: rect[0], y0: height - rect[3], x1: rect[2], y1: height - rect[1], red: color.red,
                        green: color.green, blue: color.blue))
            }
        }
        if bookmarks > 0 {
            overlays.append(
                Overlay(x0: width - 28, y0: 0, x1: width - 14, y1: 36, red: 0.85, green: 0.1, blue: 0.1, style: .marker)
            )
        }
        return overlays
    }

    // MARK: Helpers

    /// The annotations of one kind on a book (all books when nil), by book, page and id.
    private func annotations<M: AnnotationModel>(_ type: M.Type, of book: Book?) async throws -> [M] {
        try await repository.read { store in
            let bookId = Field<M, Int64>("bookId")
            var query = Query<M>().sorted(
                by: bookId.ascending, Field<M, Int>("page").ascending, Field<M, Int64>("id").ascending)
            if let id = book?.id { query = query.filter(bookId == id) }
            return try store.fetch(query)
        }
    }

    func checkPage(_ page: Int, of book: Book) throws {
        guard page >= 1, page <= book.pages else { throw MarginError.pageOutOfRange(page: page, count: book.pages) }
    }

    /// The stored text of the book's pages (all, or these numbers), in page order.
    /// The pages of `book` with nothing legible: no usable text layer, and nothing OCR read
    /// (not read, blank, or unreadable).
    public func illegiblePages(of book: Book) async throws -> [Int] {
        guard book.textlessPages > 0 else { return [] }
        return try await pageTexts(of: book).filter { $0.text.allSatisfy(\.isWhitespace) }.map(\.number)
    }

    func pageTexts(of book: Book, numbers: [Int]? = nil) async throws -> [PageText] {
        let id = book.id ?? -1
        return try await repository.read { store in
            var query = Query<PageText>().filter(PageText.Fields.bookId == id)
            if let numbers { query = query.filter(PageText.Fields.number.isIn(numbers)) }
            return try store.fetch(query.sorted(by: PageText.Fields.number.ascending))
        }
    }

    /// The book's pages whose folded text holds `folded`, in page order: the text index's
    /// candidates, each checked (so the result is what a scan of every page would give).
    func pages(of book: Book, holding folded: [Unicode.Scalar]) async throws -> [PageText] {
        let id = book.id ?? -1
        let term = scalarString(folded)
        return try await repository.read { store in
            var pages = [PageText]()
            try store.textIndex.candidatePages(containing: [term], books: [id]) { page in
                if !SearchableText(page.text).foldedMatches(folded, wholeWord: false).isEmpty { pages.append(page) }
                return true
            }
            return pages.sorted { $0.number < $1.number }
        }
    }

}

/// About 32 characters of page text before and after the `occurrence`-th match of `folded`.
func context(of folded: [Unicode.Scalar], occurrence: Int, in text: String) -> (String, String) {
    let searchable = SearchableText(text)
    let ranges = searchable.foldedMatches(folded, wholeWord: false)
    guard !ranges.isEmpty else { return ("", "") }
    let range = ranges[min(occurrence, ranges.count - 1)]
    let prefix = scalarString(searchable.cased[max(0, range.lowerBound - 32)..<range.lowerBound])
    let suffix = scalarString(searchable.cased[range.upperBound..<min(searchable.cased.count, range.upperBound + 32)])
    return (prefix, suffix)
}

/// Top to bottom on a page: larger y is higher in PDF space.
func readingOrder(_ a: Highlight, _ b: Highlight) -> Bool {
    if a.bookId != b.bookId { return a.bookId < b.bookId }
    if a.page != b.page { return a.page < b.page }
    if a.top != b.top { return a.top > b.top }
    return (a.rects.first?.first ?? 0) < (b.rects.first?.first ?? 0)
}

/// On a page: bookmarks first, then highlights, then memos.
private func kind(_ item: AnnotationItem) -> Int {
    switch item {
    case .bookmark: return 0
    case .highlight: return 1
    case .memo: return 2
    }
}

/// A page of a book.
private struct PageKey: Hashable {
    var book: Int64
    var page: Int
}

/// Where a highlight's text starts in its page's text (the occurrence its stored context
/// chooses, as re-anchoring chooses it).
func textOffset(of highlight: Highlight, in text: SearchableText) -> Int? {
    let term = foldedTerm(highlight.text)
    guard !term.isEmpty else { return nil }
    return bestOccurrence(
        of: term, between: foldedTerm(highlight.prefix), and: foldedTerm(highlight.suffix), in: text)?.range
        .lowerBound
}

/// The most text one memo, note or highlight may hold: notes, not documents (a memo of many
/// megabytes would cost the index and every export many times its size).
public let maxNoteBytes = 1 << 20

func checkNoteSize(_ text: String, what: String, at place: String? = nil) throws {
    try checkNoNUL(text, what: what, at: place)
    let size = text.utf8.count
    guard size <= maxNoteBytes else {
        let prefix = place.map { "\($0): " } ?? ""
        throw MarginError.invalidArgument(
            "\(prefix)\(what) of \(formatBytes(Int64(size))) is more than the \(formatBytes(Int64(maxNoteBytes))) one may hold"
        )
    }
}

/// Where a text to highlight occurs more than once, and how to choose.
private func ambiguity(_ needle: String, pages: [Int], times: Int?) -> String {
    let shown = pages.prefix(8).map(String.init).joined(separator: ", ") + (pages.count > 8 ? ", …" : "")
    let place =
        times.map { "\($0) times on page \(pages[0])" } ?? "on \(pages.count) pages (\(shown))"
    return "'\(needle)' occurs \(place): say which with --page N, --occurrence K or --all"
}

/// Refuses text holding a NUL character: what is stored is what was sent, and a NUL would cut
/// it short in every C string that carries it (SQLite's text, poppler's).
func checkNoNUL(_ text: String?, what: String, at place: String? = nil) throws {
    guard let text, text.utf8.contains(0) else { return }
    let prefix = place.map { "\($0): " } ?? ""
    throw MarginError.invalidArgument("\(prefix)\(what) can't hold a NUL character (U+0000)")
}
