import Foundation
import MarginCore

/// A page as a reader lays it out: its text and the box of each character (`boxes[i]` is the
/// box of the i-th Unicode scalar of `text`, `[x0, y0, x1, y1]` in PDF points with the origin at
/// the top left), so a selection in a browser maps back to the same characters the CLI cuts
/// highlight text from.
public struct PageLayout: Sendable, Encodable {
    public var page: Int
    public var width: Double
    public var height: Double
    public var text: String
    public var boxes: [[Double]]
}

/// A book's pages as a reader lays them out: `sizes[i]` is page i+1's `[width, height]` in PDF
/// points; `labels[i]` its printed number, nil when the PDF numbers its pages 1, 2, 3….
public struct PageGuide: Sendable, Encodable {
    public var pages: Int
    public var sizes: [[Double]]
    public var labels: [String]?

    enum CodingKeys: String, CodingKey { case pages, sizes, labels }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(pages, forKey: .pages)
        try container.encode(sizes, forKey: .sizes)
        try container.encode(labels, forKey: .labels)
    }
}

/// Where a reader asks for a highlight: a run of characters of a page's `PageLayout.text`.
public struct HighlightSelection: Sendable {
    public var page: Int
    /// Scalar offsets into the page's layout text, `start < end`.
    public var start: Int
    public var end: Int
    public var color = HighlightColor.defaultColor
    public var note: String?
    /// Seen by the other users of a team library.
    public var shared = false

    public init(page: Int, start: Int, end: Int) {
        self.page = page
        self.start = start
        self.end = end
    }
}

/// A page image and what names it for caches.
public struct PageImage: Sendable {
    public var data: Data
    /// Changes whenever the bytes would: the book's SHA-256, the page, format and resolution.
    public var etag: String
    public var contentType: String
}

extension Library {
    /// The text of one page with a box per character, read from the cached PDF. Only reads.
    public func pageLayout(_ book: Book, page number: Int) async throws -> PageLayout {
        try await withPage(book, number) { page in
            let (width, height) = page.size
            let reading = page.readingText()
            let scalars = reading.text.unicodeScalars.count
            let boxes: [[Double]] =
                reading.boxes.map { boxes in
                    boxes.map { [$0.x0, height - $0.y1, $0.x1, height - $0.y0] }
                } ?? Array(repeating: [0, 0, 0, 0], count: scalars)
            return PageLayout(page: number, width: width, height: height, text: reading.text, boxes: boxes)
        }
    }

    /// Every page's size in PDF points (as `PageLayout` gives one page's) and printed number, for
    /// a reader to lay the whole book out before any page is drawn. Only reads.
    public func pageGuide(_ book: Book) async throws -> PageGuide {
        let path = try cachedFile(book)
        let password = try password(of: book)
        let count = book.pages
        let sizes = try await blocking { [documents] in
            try readingPDF(book) {
                try documents.withDocument(path: path, password: password) { document in
                    try (1...max(1, min(count, document.pageCount))).map { number -> [Double] in
                        let (width, height) = try document.page(number).size
                        return [width, height]
                    }
                }
            }
        }
        let labels = try await guide(of: book.id ?? 0)?.labels
        return PageGuide(pages: sizes.count, sizes: sizes, labels: labels?.count == sizes.count ? labels : nil)
    }

    /// One page as PNG (at `dpi`, capped as `render` caps it) or SVG, in memory. Only reads.
    public func pageImage(
        _ book: Book, page number: Int, format: RenderFormat, dpi: Double, stop: StopSignal? = nil
    ) async throws -> PageImage {
        guard format != .pdf else { throw MarginError.invalidArgument("pages are served as png or svg") }
        guard dpi.isFinite, dpi >= RenderRequest.minDPI else {
            throw MarginError.invalidArgument("dpi must be at least \(Int(RenderRequest.minDPI)), not \(dpi)")
        }
        let drawn: (data: Data, resolution: String)
        if let helper = configuration.extractionHelper {
            // In a child with time and memory limits (a page can be built to take minutes).
            try checkPage(number, of: book)
            let path = try cachedFile(book)
            let secret = try password(of: book)
            drawn = try await readingPDF(book) {
                try await IsolatedRender.draw(
                    helper: helper, path: path, password: secret, page: number, format: format, dpi: dpi,
                    configuration: configuration, stop: stop)
            }
        } else {
            drawn = try await withPage(book, number) { page in
                try IsolatedRender.drawPage(page, format: format, dpi: dpi)
            }
        }
        return PageImage(
            data: drawn.data, etag: "\"\(book.sha256.prefix(32))-\(number)-\(format.rawValue)-\(drawn.resolution)\"",
            contentType: format == .png ? "image/png" : "image/svg+xml")
    }

    /// Highlights the characters `start..<end` of a page's layout text (what a reader selected).
    public func addHighlight(_ book: Book, _ selection: HighlightSelection) async throws -> Highlight {
        try await addHighlightShown(book, selection).annotation
    }

    /// `addHighlight`, as shown (with its page's label and chapter), from the same transaction.
    public func addHighlightShown(_ book: Book, _ selection: HighlightSelection) async throws
        -> AnnotationView<Highlight>
    {
        var normalized = selection
        normalized.note = selection.note.map(normalizedLineEnds)
        let selection = normalized
        if let note = selection.note { try checkNoteSize(note, what: "a note") }
        let occurrence: PageLocator.Occurrence = try await withPage(book, selection.page) { page in
            let text = page.readingTextOnly()
            let count = text.unicodeScalars.count
            guard selection.start >= 0, selection.start < selection.end, selection.end <= count else {
                throw MarginError.invalidArgument(
                    "characters \(selection.start)..<\(selection.end) are outside page \(selection.page)'s text (\(count) characters)"
                )
            }
            let locator = PageLocator(number: selection.page, text: text, page: page)
            // A hyphen at a line end is joined as the CLI joins it ("cre-" "ated" is "created").
            guard let found = locator.occurrence(raw: selection.start..<selection.end, keepHyphens: false) else {
                throw MarginError.invalidArgument(
                    "characters \(selection.start)..<\(selection.end) of page \(selection.page) have no place on the page (blank, or no text layout)"
                )
            }
            return found
        }
        let rects = occurrence.rects.map(\.array)
        if let already = try await highlights(of: book).first(where: { $0.page == selection.page && $0.rects == rects })
        {
            throw MarginError.alreadyHighlighted(text: occurrence.text, page: selection.page, id: already.id ?? 0)
        }
        var highlight = Highlight(
            bookId: book.id ?? 0, page: selection.page, text: occurrence.text, prefix: occurrence.prefix,
            suffix: occurrence.suffix, rects: rects, color: selection.color, note: nonEmpty(selection.note))
        highlight.shared = selection.shared
        return try await addShown([highlight], of: book)[0]
    }

    /// Sets a bookmark's label (nil or "" clears it; with `keepLabel` it stays) and, when
    /// `shared` is given, whether the other users of a team library see it.
    public func editBookmark(id: Int64, label: String?, keepLabel: Bool = false, shared: Bool? = nil) async throws
        -> Bookmark
    {
        try checkNoNUL(label, what: "a bookmark's label")
        let label = nonEmpty(label)
        return try await database.updateAnnotation(Bookmark.self, id: id, now: Date()) { bookmark in
            if !keepLabel { bookmark.label = label }
            if let shared { bookmark.shared = shared }
        }
    }

    /// `body` with one page of a book's cached PDF, off the cooperative threads (poppler blocks,
    /// and a server must go on answering meanwhile), with poppler's failures in the library's words.
    private func withPage<T: Sendable>(
        _ book: Book, _ number: Int, _ body: @escaping @Sendable (any PDFPage) throws -> T
    )
        async throws -> T
    {
        try checkPage(number, of: book)
        let path = try cachedFile(book)
        let password = try password(of: book)
        let recognized = try await recognized(book, page: number)
        return try await blocking { [documents] in
            try readingPDF(book) {
                try documents.withDocument(path: path, password: password) {
                    try body(readable(try $0.page(number), recognized))
                }
            }
        }
    }
}

/// Runs poppler's work off the cooperative threads: it blocks, and a server must go on
/// answering other requests meanwhile. A process on one thread (`OneThread`) runs it in place.
private func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    if OneThread.isOn { return try body() }
    return try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}

/// The PDF engine's failures on a book's file, in the library's words.
private func readingPDF<T>(_ book: Book, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as PDFError {
        throw pdfError(error, of: book)
    }
}

private func readingPDF<T>(_ book: Book, _ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as PDFError {
        throw pdfError(error, of: book)
    }
}

/// The PDF engine's failure on a book's file in the library's words: a page out of range as it is, a
/// password that isn't there as what to do about it, anything else as an unreadable PDF.
func pdfError(_ error: PDFError, of book: Book) -> any Error {
    switch error {
    case .pageOutOfRange: return error
    case .passwordRequired: return MarginError.passwordNotStored(title: book.title, book: book.id ?? 0)
    default: return MarginError.unreadablePDF(book.title, reason: error.localizedDescription)
    }
}
