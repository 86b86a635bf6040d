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
    /// Where it is, for messages ("annotation ABCD2345").
    var what: String
    /// 1-based; nil for a memo on the whole book.
    var page: Int?
    var text: String?
    /// In PDF points, `[x0, y0, x1, y1]`.
    var rects: [[Double]] = []
    var note: String?
    var color: String?
    var author: String?
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
        for item in foreign {
            if let page = item.page, page < 1 || page > book.pages {
                report.skip(item.what, "page \(page) is not in '\(book.title)' (\(count(book.pages, "page")))")
                continue
            }
            let uuid = stableUUID(item.origin)
            switch item.kind {
            case .highlight:
                guard let page = item.page else {
                    report.skip(item.what, "a highlight without a page")
                    continue
                }
                let rects = item.rects.filter { $0.count == 4 && $0.allSatisfy(\.isFinite) }
                var text = item.text.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
                if text.isEmpty, !rects.isEmpty {
                    if document == nil {
                        document = try PDFEngines.current.open(
                            path: try await ensureCached(book), password: try password(of: book))
                    }
                    if recognized == nil { recognized = try await self.recognized(book) }
                    if let document, let recognized {
                        let loaded = readable(try document.page(page), recognized)
                        text = scalarString(SearchableText(loaded.text(in: rects.map(PDFRect.init(array:)))).cased)
                    }
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
/// their markers, bold, italics, code and links kept; anything else as its text.
func markdown(fromHTML html: String) throws -> String {
    let nodes: [Markup.Node]
    do { nodes = try Markup.html(html) } catch let error as MarkupError { throw MarginError.io(error.description) }
    var output = ""
    var lists = [(ordered: Bool, count: Int)]()
    var links = [String]()
    var quote = 0
    func breakBlock() {
        while output.hasSuffix(" ") { output.removeLast() }
        if !output.isEmpty && !output.hasSuffix("\n\n") { output += output.hasSuffix("\n") ? "\n" : "\n\n" }
    }
    func lineStart() -> String { String(repeating: "> ", count: quote) }
    for node in nodes {
        switch node {
        case .start(let name, let attributes, let empty):
            switch name {
            case "p", "div", "pre", "table", "tr": breakBlock()
            case "h1", "h2", "h3", "h4", "h5", "h6":
                breakBlock()
                output += lineStart() + String(repeating: "#", count: Int(String(name.dropFirst())) ?? 1) + " "
            case "ul", "ol":
                breakBlock()
                lists.append((name == "ol", 0))
            case "li":
                if !output.isEmpty && !output.hasSuffix("\n") { output += "\n" }
                let depth = String(repeating: "  ", count: max(0, lists.count - 1))
                if var list = lists.popLast() {
                    list.count += 1
                    output += lineStart() + depth + (list.ordered ? "\(list.count). " : "- ")
                    lists.append(list)
                } else {
                    output += lineStart() + "- "
                }
            case "blockquote":
                breakBlock()
                quote += 1
                output += lineStart()
            case "br": output += "\n" + lineStart()
            case "strong", "b": output += "**"
            case "em", "i": output += "*"
            case "code": output += "`"
            case "a":
                output += "["
                links.append(attributes["href"] ?? "")
            default: break
            }
            if empty, name != "br" { continue }
        case .text(let text):
            // HTML's white space: runs are one space.
            let collapsed = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            let leading = text.first?.isWhitespace == true && !output.isEmpty && !output.hasSuffix("\n")
            let trailing = text.last?.isWhitespace == true && !collapsed.isEmpty
            output += (leading ? " " : "") + collapsed + (trailing ? " " : "")
        case .end(let name):
            switch name {
            case "p", "div", "pre", "table", "tr", "h1", "h2", "h3", "h4", "h5", "h6": breakBlock()
            case "ul", "ol":
                _ = lists.popLast()
                breakBlock()
            case "blockquote":
                quote = max(0, quote - 1)
                breakBlock()
            case "strong", "b": output += "**"
            case "em", "i": output += "*"
            case "code": output += "`"
            case "a":
                let href = links.popLast() ?? ""
                output += href.isEmpty ? "]" : "](\(href))"
            default: break
            }
        }
    }
    return output.trimmingCharacters(in: .whitespacesAndNewlines)
}
