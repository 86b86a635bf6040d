import Foundation
import MarginCore
import Markup

/// An annotation as another tool keeps it, before it is placed in a book: a highlight (text,
/// rects or both), a memo or a bookmark. `origin` names it for good in that tool ("zotero
/// user ABCD2345"): its UUID here is made from it, so importing it again finds it.
struct ForeignAnnotation: Sendable {
    enum Kind: Sendable { case highlight, memo, bookmark }

    var kind: Kind
    var origin: String
    /// The UUID the tool gave it, when it is margin's own (a round trip); else one is made
    /// from `origin`.
    var uuid: UUID?
    /// Where it is, for messages ("annotation ABCD2345").
    var what: String
    /// 1-based; nil for a memo on the whole book.
    var page: Int?
    var text: String?
    /// In PDF points, `[x0, y0, x1, y1]`.
    var rects: [[Double]] = []
    /// Or boxes measured from the page's top left, `[x, y, width, height]` (KOReader's).
    var boxes: [[Double]] = []
    var note: String?
    var color: String?
    var author: String?
    /// Words just before and after a highlight's text, when the tool keeps them: which of
    /// several occurrences it is.
    var prefix: String?
    var suffix: String?
    /// Where the words start in the text, when the tool says (a W3C TextPositionSelector):
    /// which occurrence it is when their context doesn't tell. In the page's text when
    /// `positionInPage`, else in the book's (its pages' texts one after another).
    var position: Int?
    var positionInPage = false
    var created: Date
    var modified: Date
}

extension Library {
    /// Places annotations from another tool in `book`: a highlight's text is what its rects
    /// cover when the tool kept none, and its context comes from the book's page text (for
    /// re-anchoring). What can't be placed is reported as skipped.
    func place(_ foreign: [ForeignAnnotation], in book: Book, report: inout ImportReport) async throws
        -> (bookmarks: [Bookmark], highlights: [Highlight], memos: [Memo])
    {
        let bookId = book.id ?? 0
        var bookmarks = [Bookmark]()
        var highlights = [Highlight]()
        var memos = [Memo]()
        let texts = Dictionary(
            try await pageTexts(of: book).map { ($0.number, $0.text) }, uniquingKeysWith: { first, _ in first })
        var document: (any PDFDocument)?
        var recognized: [Int: OCRPage]?
        /// Where each page starts in the book's text: its earlier pages' scalars, a line end after
        /// each (as a tool that reads the whole document counts); worked out once, when asked.
        var starts: [Int: Int]?
        func pageStarts() -> [Int: Int] {
            if let starts { return starts }
            var offset = 0
            var made = [Int: Int]()
            for number in 1...max(1, book.pages) {
                made[number] = offset
                offset += (texts[number]?.unicodeScalars.count ?? 0) + 1
            }
            starts = made
            return made
        }
        /// A page of the book, readable (its OCR words when it was read from its image).
        func load(_ number: Int) async throws -> any PDFPage {
            if document == nil {
                document = try PDFEngines.current.open(
                    path: try await ensureCached(book), password: try password(of: book))
            }
            if recognized == nil { recognized = try await self.recognized(book) }
            return readable(try document!.page(number), recognized ?? [:])
        }
        for item in foreign {
            if let page = item.page, page < 1 || page > book.pages {
                report.skip(item.what, "page \(page) is not in '\(book.title)' (\(count(book.pages, "page")))")
                continue
            }
            let uuid = item.uuid ?? stableUUID(item.origin)
            switch item.kind {
            case .highlight:
                var rects = item.rects.filter { $0.count == 4 && $0.allSatisfy(\.isFinite) }
                var text = item.text.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
                var page = item.page
                if rects.isEmpty, let number = page {
                    let boxes = item.boxes.filter { $0.count == 4 && $0.allSatisfy(\.isFinite) }
                    if !boxes.isEmpty {
                        let height = try await load(number).size.height
                        rects = boxes.map { [$0[0], height - $0[1] - $0[3], $0[0] + $0[2], height - $0[1]] }
                    }
                }
                if text.isEmpty, !rects.isEmpty, let number = page {
                    let loaded = try await load(number)
                    text = scalarString(SearchableText(loaded.text(in: rects.map(PDFRect.init(array:)))).cased)
                } else if rects.isEmpty, !text.isEmpty {
                    // Only the words: where they are on the page (or, with no page, in the book).
                    let folded = foldedTerm(text)
                    var candidates = page.map { [$0] } ?? []
                    if page == nil { candidates = try await pages(of: book, holding: folded).map(\.number) }
                    // The context decides; the position, when given, among occurrences it can't tell apart.
                    var best: (score: Int, distance: Int, page: Int, occurrence: PageLocator.Occurrence)?
                    for number in candidates {
                        let locator = PageLocator(
                            number: number, text: texts[number] ?? "", page: try await load(number))
                        let start = item.position == nil || item.positionInPage ? 0 : pageStarts()[number] ?? 0
                        for occurrence in locator.occurrences(of: folded, keepHyphens: text.contains("-")) {
                            let score = contextScore(occurrence, prefix: item.prefix, suffix: item.suffix)
                            let distance =
                                item.position.map {
                                    abs(start + locator.text.rawRange(occurrence.range).lowerBound - $0)
                                } ?? 0
                            if best.map({ score > $0.score || (score == $0.score && distance < $0.distance) }) ?? true {
                                best = (score, distance, number, occurrence)
                            }
                        }
                    }
                    guard let best else {
                        report.skip(
                            item.what,
                            "'\(text.prefix(60))' is not in '\(book.title)'" + (page.map { " on page \($0)" } ?? ""))
                        continue
                    }
                    page = best.page
                    rects = best.occurrence.rects.map(\.array)
                    text = best.occurrence.text
                }
                guard let page else {
                    report.skip(item.what, "a highlight without a page")
                    continue
                }
                guard !text.isEmpty else {
                    report.skip(item.what, "it holds no text and no area with text under it")
                    continue
                }
                try checkNoteSize(text + (item.note ?? ""), what: "a highlight", at: item.what)
                let (prefix, suffix) = context(of: foldedTerm(text), occurrence: 0, in: texts[page] ?? "")
                var highlight = Highlight(
                    bookId: bookId, page: page, text: text, prefix: prefix, suffix: suffix, rects: rects,
                    color: (try? HighlightColor.parse(item.color ?? "")) ?? HighlightColor.defaultColor,
                    note: item.note.flatMap(nonEmptyNote), author: item.author)
                highlight.uuid = uuid
                highlight.createdAt = item.created
                highlight.updatedAt = item.modified
                highlights.append(highlight)
            case .memo:
                guard let text = item.note.flatMap(nonEmptyNote) else {
                    report.skip(item.what, "a note with nothing in it")
                    continue
                }
                try checkNoteSize(text, what: "a memo", at: item.what)
                var memo = Memo(bookId: bookId, page: item.page, text: text, author: item.author)
                memo.uuid = uuid
                memo.createdAt = item.created
                memo.updatedAt = item.modified
                memos.append(memo)
            case .bookmark:
                guard let page = item.page else {
                    report.skip(item.what, "a bookmark without a page")
                    continue
                }
                var bookmark = Bookmark(bookId: bookId, page: page, label: item.note.flatMap(nonEmptyNote))
                bookmark.uuid = uuid
                bookmark.createdAt = item.created
                bookmark.updatedAt = item.modified
                bookmarks.append(bookmark)
            }
        }
        // A tool that keeps no ids (KOReader, XFDF from elsewhere) hands back what the library
        // has under other UUIDs: the same thing on the same page is that one, not a copy.
        let held = (
            highlights: try await self.highlights(of: book), memos: try await self.memos(of: book),
            bookmarks: try await self.bookmarks(of: book)
        )
        for index in highlights.indices {
            let new = highlights[index]
            func same(_ old: Highlight, within tolerance: Double) -> Bool {
                old.page == new.page && foldedTerm(old.text) == foldedTerm(new.text)
                    && sameRects(old.rects, new.rects, within: tolerance)
            }
            if let kept = held.highlights.first(where: { $0.uuid == new.uuid }) {
                // The same words in the same place: what margin worked out from them (rects
                // written with fewer digits, the words around them) stays as it was.
                if same(kept, within: 0.05) {
                    highlights[index].text = kept.text
                    highlights[index].rects = kept.rects
                    highlights[index].prefix = kept.prefix
                    highlights[index].suffix = kept.suffix
                }
            } else if let kept = held.highlights.first(where: { same($0, within: 2) }) {
                highlights[index].uuid = kept.uuid
            }
        }
        for index in memos.indices where !held.memos.contains(where: { $0.uuid == memos[index].uuid }) {
            if let same = held.memos.first(where: { $0.page == memos[index].page && $0.text == memos[index].text }) {
                memos[index].uuid = same.uuid
            }
        }
        for index in bookmarks.indices where !held.bookmarks.contains(where: { $0.uuid == bookmarks[index].uuid }) {
            if let same = held.bookmarks.first(where: { $0.page == bookmarks[index].page }) {
                bookmarks[index].uuid = same.uuid
            }
        }
        return (bookmarks, highlights, memos)
    }

    /// Merges placed annotations into their books in one transaction (newer wins, by UUID),
    /// adding the counts to `report`; a dry run writes nothing.
    func merge(
        _ placed: [(book: Book, bookmarks: [Bookmark], highlights: [Highlight], memos: [Memo])], dryRun: Bool,
        report: inout ImportReport
    ) async throws {
        guard !placed.isEmpty else { return }
        let entries = placed.enumerated().map { index, entry in
            BackupBook(
                place: "'\(entry.book.title)'", book: entry.book, sources: [], tags: [], cachedFile: nil,
                bookmarks: entry.bookmarks, highlights: entry.highlights, memos: entry.memos)
        }
        let merge = try await database.importBackup(entries, dryRun: dryRun)
        report.bookmarks = report.bookmarks + merge.bookmarks
        report.highlights = report.highlights + merge.highlights
        report.memos = report.memos + merge.memos
    }
}

/// Whether two highlights' rects are the same to within `tolerance` points (or both absent).
private func sameRects(_ a: [[Double]], _ b: [[Double]], within tolerance: Double) -> Bool {
    a.count == b.count && zip(a, b).allSatisfy { zip($0, $1).allSatisfy { abs($0 - $1) <= tolerance } }
}

/// How well an occurrence's surroundings agree with the words a tool kept around it: the
/// number of characters that match, next to the occurrence, on either side.
private func contextScore(_ occurrence: PageLocator.Occurrence, prefix: String?, suffix: String?) -> Int {
    func common<S: Sequence, T: Sequence>(_ a: S, _ b: T) -> Int
    where S.Element == Unicode.Scalar, T.Element == Unicode.Scalar {
        zip(a, b).prefix { $0 == $1 }.count
    }
    let before = prefix.map { common(foldedTerm($0).reversed(), foldedTerm(occurrence.prefix).reversed()) } ?? 0
    let after = suffix.map { common(foldedTerm($0), foldedTerm(occurrence.suffix)) } ?? 0
    return before + after
}

private func nonEmptyNote(_ text: String) -> String? {
    let note = normalizedLineEnds(text).trimmingCharacters(in: .whitespacesAndNewlines)
    return note.isEmpty ? nil : note
}

extension PDFRect {
    init(array: [Double]) {
        self.init(x0: array[0], y0: array[1], x1: array[2], y1: array[3])
    }
}

/// A note written in HTML (Zotero's) as Markdown: paragraphs and headings as blocks, lists with
/// their markers, quotes, bold, italics, code and links kept; anything else as its text.
func markdown(fromHTML html: String) throws -> String {
    let nodes: [Markup.Node]
    do { nodes = try Markup.html(html) } catch let error as MarkupError { throw MarginError.io(error.description) }
    var output = ""
    var lists = [(ordered: Bool, count: Int)]()
    var links = [String]()
    var quote = 0
    // A line just begun: its quote marks are written with what comes first on it.
    var lineOpen = false
    func emit(_ text: String) {
        if lineOpen {
            output += String(repeating: "> ", count: quote)
            lineOpen = false
        }
        output += text
    }
    func newLine(blank: Bool) {
        while output.hasSuffix(" ") { output.removeLast() }
        guard !output.isEmpty else { return }
        if blank {
            if !output.hasSuffix("\n\n") { output += output.hasSuffix("\n") ? "\n" : "\n\n" }
        } else if !output.hasSuffix("\n") {
            output += "\n"
        }
        lineOpen = true
    }
    for node in nodes {
        switch node {
        case .start(let name, let attributes, _):
            switch name {
            case "p", "div", "pre", "table", "tr": newLine(blank: true)
            case "h1", "h2", "h3", "h4", "h5", "h6":
                newLine(blank: true)
                emit(String(repeating: "#", count: Int(String(name.dropFirst())) ?? 1) + " ")
            case "ul", "ol":
                newLine(blank: true)
                lists.append((name == "ol", 0))
            case "li":
                newLine(blank: false)
                let depth = String(repeating: "  ", count: max(0, lists.count - 1))
                if var list = lists.popLast() {
                    list.count += 1
                    emit(depth + (list.ordered ? "\(list.count). " : "- "))
                    lists.append(list)
                } else {
                    emit("- ")
                }
            case "blockquote":
                newLine(blank: true)
                quote += 1
                lineOpen = true
            case "br":
                newLine(blank: false)
                lineOpen = true
            case "strong", "b": emit("**")
            case "em", "i": emit("*")
            case "code": emit("`")
            case "a":
                emit("[")
                links.append(attributes["href"] ?? "")
            default: break
            }
        case .text(let text):
            // HTML's white space: runs are one space.
            let collapsed = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            guard !collapsed.isEmpty else {
                if !text.isEmpty, !lineOpen, !output.isEmpty, !output.hasSuffix(" "), !output.hasSuffix("\n") {
                    output += " "
                }
                continue
            }
            let leading = text.first?.isWhitespace == true && !lineOpen && !output.isEmpty && !output.hasSuffix("\n")
            emit((leading ? " " : "") + collapsed + (text.last?.isWhitespace == true ? " " : ""))
        case .end(let name):
            switch name {
            case "p", "div", "pre", "table", "tr", "h1", "h2", "h3", "h4", "h5", "h6": newLine(blank: true)
            case "ul", "ol":
                _ = lists.popLast()
                newLine(blank: true)
            case "blockquote":
                quote = max(0, quote - 1)
                newLine(blank: true)
            case "strong", "b": emit("**")
            case "em", "i": emit("*")
            case "code": emit("`")
            case "a":
                let href = links.popLast() ?? ""
                emit(href.isEmpty ? "]" : "](\(href))")
            default: break
            }
        }
    }
    return output.trimmingCharacters(in: .whitespacesAndNewlines)
}
