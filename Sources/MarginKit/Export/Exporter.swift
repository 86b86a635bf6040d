import Foundation
import MarginCore
import QPDF

/// Formats for `margin export`.
public enum ExportFormat: String, CaseIterable, Sendable {
    case markdown, json, csv, pdf, bibtex
    case webAnnotation = "web-annotation"
    case xfdf, koreader, obsidian, readwise

    public var fileExtension: String {
        switch self {
        case .markdown, .obsidian: return "md"
        case .json, .webAnnotation: return "json"
        case .csv, .readwise: return "csv"
        case .pdf: return "pdf"
        case .bibtex: return "bib"
        case .xfdf: return "xfdf"
        case .koreader: return "lua"
        }
    }

    /// Formats written as a file (or folder) per book rather than one document for all.
    public var isPerBook: Bool { self == .xfdf || self == .koreader || self == .obsidian }

    /// Formats that write a folder (one sidecar folder, one note per book) whatever the count.
    public var writesFolder: Bool { self == .koreader || self == .obsidian }
}

extension Library {
    /// The backup document for these books, annotations in reading order.
    public func backup(_ books: [Book], now: Date = Date()) async throws -> Backup {
        var entries = [Backup.BookEntry]()
        for book in books {
            let view = try await info(book)
            entries.append(
                Backup.BookEntry(
                    book, sources: view.sources, tags: view.tags, bookmarks: try await bookmarks(of: book),
                    highlights: try await highlights(of: book), memos: try await memos(of: book),
                    guide: try await guide(of: book.id ?? 0)))
        }
        return Backup(
            format: Backup.formatName, version: Backup.currentVersion, exportedAt: isoDate(now), books: entries)
    }

    /// The export of `books` as text (markdown, json, csv, bibtex, web-annotation, readwise;
    /// xfdf, koreader and obsidian of one book).
    public func exportText(_ books: [Book], format: ExportFormat) async throws -> String {
        switch format {
        case .json: return String(decoding: try ViewJSON.data(try await backup(books)), as: UTF8.self) + "\n"
        case .markdown: return try await backup(books).books.map(markdown).joined(separator: "\n---\n\n")
        case .csv: return csv(try await backup(books).books)
        case .bibtex: return Citations.format(try await references(books), as: .bibtex)
        case .webAnnotation: return try await webAnnotations(books)
        case .readwise: return try await readwiseCSV(books)
        case .xfdf, .koreader, .obsidian:
            guard books.count == 1 else {
                throw MarginError.invalidArgument("\(format.rawValue) is written a file per book: give -o FOLDER")
            }
            return try await exportFiles(books, format: format) { _ in "" }[0].contents
        case .pdf: throw MarginError.invalidArgument("a PDF export is a file: give -o PATH")
        }
    }

    /// Writes a copy of the book's PDF with its highlights as /Highlight annotations, its page
    /// memos as /Text notes, its bookmarks as outline entries and its memo as a note on the
    /// first page. The cached PDF is never modified.
    public func exportPDF(_ book: Book, to output: String, force: Bool, textLayer: Bool = false) async throws -> String
    {
        let files = AtomicFiles(force: force)
        let target = try await exportPDF(book, to: output, in: files, textLayer: textLayer)
        try files.commit()
        return target
    }

    /// Stages the annotated PDF of `book` at `output` among `files` (written when they commit);
    /// with `textLayer`, the words OCR read on its scanned pages as an invisible text layer.
    @discardableResult
    public func exportPDF(_ book: Book, to output: String, in files: AtomicFiles, textLayer: Bool = false) async throws
        -> String
    {
        let path = try cachedFile(book)
        let secret = try password(of: book)
        let document = try PDFEngines.current.open(path: path, password: secret)
        for highlight in try await highlights(of: book) where !highlight.orphaned {
            let page = try document.page(highlight.page)
            page.addHighlight(
                highlight.rects.filter { $0.count == 4 }.map { PDFRect(x0: $0[0], y0: $0[1], x1: $0[2], y1: $0[3]) },
                color: HighlightColor.rgb(highlight.color), contents: highlight.note,
                author: highlight.author ?? "Margin")
        }
        var perPage = [Int: Int]()
        for memo in try await memos(of: book) {
            guard let number = memo.page else { continue }
            let page = try document.page(number)
            let (_, height) = page.size
            let slot = perPage[number, default: 0]
            perPage[number] = slot + 1
            // Notes stack down the left margin, one per memo on the page.
            page.addNote(
                at: (x: 8, y: height - 8 - Double(slot) * 24), contents: memo.text,
                color: RGB(red: 1, green: 0.85, blue: 0.2), author: memo.author ?? "Margin")
        }
        // What poppler can't write, qpdf adds to poppler's copy: the bookmarks as outline
        // entries (under one "Bookmarks" entry, after the document's own) and the book's memo
        // as a note on the first page, named so that an import knows it for the book's.
        let bookmarks = try await bookmarks(of: book).sorted { ($0.page, $0.id ?? 0) < ($1.page, $1.id ?? 0) }
        // The book's memo and the memos on the whole book (no page): notes on the document.
        let bookNotes =
            (book.memo.flatMap { $0.isEmpty ? nil : [(bookMemoNoteName, $0, "Margin")] } ?? [])
            + (try await memos(of: book)).filter { $0.page == nil }.map {
                (bookMemoNoteName + "-" + $0.uuid.uuidString.lowercased(), $0.text, $0.author ?? "Margin")
            }
        let labels = bookmarks.isEmpty ? nil : try await guide(of: book.id ?? 0)?.labels
        let firstPage = try document.page(1).size
        let layer = textLayer ? try await recognized(book).values.sorted { $0.page < $1.page } : []
        return try files.stage(output, check: .pdf(pages: document.pageCount, password: secret)) { temporary in
            guard !bookmarks.isEmpty || !bookNotes.isEmpty || !layer.isEmpty else {
                return try document.save(to: temporary)
            }
            let annotated = temporary + ".annotated"
            defer { unlink(annotated) }
            try document.save(to: annotated)
            let structure = try QPDFDocument(path: annotated, password: secret)
            if !bookmarks.isEmpty {
                try structure.appendOutline(
                    title: "Bookmarks",
                    children: bookmarks.map { bookmark in
                        let printed = labels.flatMap { bookmark.page <= $0.count ? $0[bookmark.page - 1] : nil }
                        let page = "p. " + (printed ?? String(bookmark.page))
                        return (bookmark.label.map { "\($0) (\(page))" } ?? page, bookmark.page)
                    })
            }
            for page in layer {
                try structure.addInvisibleText(
                    page: page.page,
                    words: page.recognized.map { QPDFDocument.InvisibleWord(text: $0.text, box: $0.box.array) })
            }
            // Down the right margin of the first page, apart from the page memos on the left.
            let (width, height) = firstPage
            for (slot, (name, text, author)) in bookNotes.enumerated() {
                let top = height - 8 - Double(slot) * 28
                try structure.addNote(
                    page: 1, rect: [width - 32, top - 24, width - 8, top], contents: text, author: author, name: name,
                    color: (1, 0.6, 0.1))
            }
            try structure.write(to: temporary)
        }
    }
}

// MARK: Markdown

/// One book as Markdown: title, author, source, then per page its bookmarks, highlights (as
/// quotes, with notes) and memos. Stable order, so re-exports diff cleanly.
func markdown(_ book: Backup.BookEntry) -> String {
    var lines = ["# \(escapeMarkdownLine(book.title))", ""]
    var facts = [String]()
    if let author = book.author { facts.append("**Author:** \(escapeMarkdownLine(author))") }
    facts.append("**Pages:** \(book.pages)")
    facts.append("**SHA-256:** `\(book.sha256)`")
    if let source = book.sources.first { facts.append("**Source:** <\(source)>") }
    if !book.tags.isEmpty { facts.append("**Tags:** " + book.tags.map(markdownTag).joined(separator: " ")) }
    if let year = book.year { facts.append("**Year:** \(year)") }
    if let doi = book.doi { facts.append("**DOI:** [\(markdownInline(doi))](https://doi.org/\(doi))") }
    if let arxiv = book.arxiv { facts.append("**arXiv:** [\(arxiv)](https://arxiv.org/abs/\(arxiv))") }
    if let key = book.citationKey { facts.append("**Cite as:** `\(key)`") }
    lines += facts.map { "- " + $0 }
    lines.append("")
    if let memo = book.memo {
        lines += ["## Notes on the book", ""] + quoteLines(memo, prefix: "") + [""]
    }
    let bookMemos = book.memos.filter { $0.page == nil }
    for memo in bookMemos {
        if book.memo == nil && memo.uuid == bookMemos.first?.uuid { lines += ["## Notes on the book", ""] }
        lines += quoteLines(memo.text, prefix: "") + [""]
    }
    let pages = Set(book.bookmarks.map(\.page) + book.highlights.map(\.page) + book.memos.compactMap(\.page)).sorted()
    // Each page's printed number and chapter, as its annotations' entries carry them.
    var labels = [Int: String]()
    var chapters = [Int: String]()
    for (page, label, chapter) in book.bookmarks.map({ ($0.page, $0.pageLabel, $0.chapter) })
        + book.highlights.map({ ($0.page, $0.pageLabel, $0.chapter) })
        + book.memos.compactMap({ m in m.page.map { ($0, m.pageLabel, m.chapter) } })
    {
        if let label { labels[page] = label }
        if let chapter { chapters[page] = chapter }
    }
    // Under their chapters when the book has an outline: "## 2 Method", "### Page 5 (p. 3)".
    let grouped = !chapters.isEmpty
    var chapter: String?
    for page in pages {
        if grouped, let current = chapters[page], current != chapter {
            lines += ["## \(markdownInline(current))", ""]
            chapter = current
        }
        let printed = labels[page].flatMap { $0 == String(page) ? nil : $0 }
        lines += [
            (grouped ? "### " : "## ") + "Page \(page)" + (printed.map { " (p. \(markdownInline($0)))" } ?? ""), "",
        ]
        for bookmark in book.bookmarks where bookmark.page == page {
            lines.append("- 🔖 Bookmark" + (bookmark.label.map { ": " + escapeMarkdownLine($0) } ?? ""))
            lines.append("")
        }
        for highlight in book.highlights where highlight.page == page {
            lines += quoteLines(highlight.text, prefix: "> ")
            lines.append(">")
            lines.append(
                "> — p. \(printed.map(escapeMarkdownLine) ?? String(page))"
                    + (highlight.orphaned ? " (not found in the current version)" : ""))
            if let note = highlight.note {
                lines.append("")
                let body = quoteLines(note, prefix: "")
                lines.append("**Note:** " + (body.first ?? ""))
                lines += body.dropFirst()
            }
            lines.append("")
        }
        for memo in book.memos where memo.page == page {
            let body = quoteLines(memo.text, prefix: "")
            lines.append("**Memo:** " + (body.first ?? ""))
            lines += body.dropFirst()
            lines.append("")
        }
    }
    return lines.joined(separator: "\n")
}

/// A tag as an Obsidian/GitHub hashtag: one word, no control characters or Markdown syntax.
func markdownTag(_ tag: String) -> String {
    let cleaned = tag.unicodeScalars.map { scalar -> String in
        if scalar.properties.isWhitespace || scalar.value < 0x20 || scalar.value == 0x7f { return "-" }
        if "#[]()*_`<>|\\".unicodeScalars.contains(scalar) { return "" }
        return String(scalar)
    }.joined()
    return "#" + (cleaned.isEmpty ? "tag" : cleaned)
}

/// Text split into lines safe inside Markdown: control characters dropped, lines that would
/// start a heading, list or fence escaped, each with `prefix`.
func quoteLines(_ text: String, prefix: String) -> [String] {
    text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
        .split(separator: "\n", omittingEmptySubsequences: false)
        .map { prefix + escapeMarkdownLine(String($0)) }
}

/// Text inside a line (after "## ", "p. "): control characters dropped, tabs made spaces.
func markdownInline(_ text: String) -> String {
    String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7f || $0 == "\t" }))
        .replacingOccurrences(of: "\t", with: " ")
}

/// One line of user text that cannot break the document's structure.
func escapeMarkdownLine(_ line: String) -> String {
    var text = markdownInline(line)
    let trimmed = text.drop { $0 == " " }
    if let first = trimmed.first, "#>-+*`=|~".contains(first) || (first.isNumber && trimmed.contains(".")) {
        text = "\\" + text
    }
    return text
}

// MARK: CSV

/// One row per annotation, RFC 4180 quoting, cells that a spreadsheet would run as a formula
/// (starting with = + - @, tab or carriage return) prefixed with an apostrophe.
func csv(_ books: [Backup.BookEntry]) -> String {
    var rows = [
        [
            "book_sha256", "book_title", "kind", "uuid", "page", "text", "note", "color", "label", "author",
            "created_at", "updated_at", "page_label", "chapter",
        ]
    ]
    for book in books {
        // In reading order, as `annotations` lists them: by page, on a page its bookmarks, its
        // highlights (already in the page's reading order), its memos; memos on the whole book last.
        var entries = [(page: Int, kind: Int, row: [String])]()
        for b in book.bookmarks {
            entries.append(
                (
                    b.page, 0,
                    [
                        book.sha256, book.title, "bookmark", b.uuid, String(b.page), "", "", "", b.label ?? "", "",
                        b.createdAt,
                        b.updatedAt, b.pageLabel ?? "", b.chapter ?? "",
                    ]
                ))
        }
        for h in book.highlights {
            entries.append(
                (
                    h.page, 1,
                    [
                        book.sha256, book.title, "highlight", h.uuid, String(h.page), h.text, h.note ?? "", h.color, "",
                        h.author ?? "", h.createdAt, h.updatedAt, h.pageLabel ?? "", h.chapter ?? "",
                    ]
                ))
        }
        for m in book.memos {
            entries.append(
                (
                    m.page ?? Int.max, 2,
                    [
                        book.sha256, book.title, "memo", m.uuid, m.page.map(String.init) ?? "", m.text, "", "", "",
                        m.author ?? "", m.createdAt, m.updatedAt, m.pageLabel ?? "", m.chapter ?? "",
                    ]
                ))
        }
        let ordered = entries.enumerated().sorted { a, b in
            (a.element.page, a.element.kind, a.offset) < (b.element.page, b.element.kind, b.offset)
        }
        rows += ordered.map(\.element.row)
    }
    return rows.map { $0.map(csvCell).joined(separator: ",") }.joined(separator: "\r\n") + "\r\n"
}

func csvCell(_ value: String) -> String {
    var text = value
    if let first = text.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) {
        text = "'" + text
    }
    if text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
    return text
}

/// The /NM of the note an annotated PDF export holds the book's memo in.
let bookMemoNoteName = "margin-book-memo"
