import Foundation
import MarginCore
import QPDF

/// An entry of a book's outline as `margin toc` shows it: where it goes, as a page number and
/// as the PDF prints that page's number.
public struct TocEntry: Sendable, Encodable, Equatable {
    public var title: String
    /// 1-based; nil when the entry leads nowhere in the book.
    public var page: Int?
    /// 1 is the top level.
    public var level: Int
    /// The printed page number ("xii", "A-3"), when the PDF labels its pages.
    public var pageLabel: String?

    enum CodingKeys: String, CodingKey { case title, page, level, pageLabel }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(title, forKey: .title)
        try container.encode(page, forKey: .page)
        try container.encode(level, forKey: .level)
        try container.encode(pageLabel, forKey: .pageLabel)
    }
}

extension Library {
    /// The book's outline (table of contents) in reading order: as stored when its text was read
    /// (its guide), else read from its cached PDF.
    public func tableOfContents(_ book: Book) async throws -> [TocEntry] {
        if let guide = try await guide(of: book.id ?? 0) {
            return guide.outline.map { entry in
                TocEntry(
                    title: entry.title, page: entry.page, level: entry.level,
                    pageLabel: entry.page.map { guide.label(of: $0) ?? String($0) })
            }
        }
        let path = try cachedFile(book)
        do {
            return try documents.withDocument(path: path, password: try password(of: book)) { document in
                var labels = [Int: String?]()
                return completedOutline(document.outline(), path: path, password: try password(of: book)).map { entry in
                    var label: String?
                    if let page = entry.page {
                        if let known = labels[page] {
                            label = known
                        } else {
                            label = (try? document.page(page))?.label
                            labels[page] = label
                        }
                    }
                    return TocEntry(title: entry.title, page: entry.page, level: entry.level, pageLabel: label)
                }
            }
        } catch let error as PDFError {
            throw pdfError(error, of: book)
        }
    }
}

/// The outline with the pages poppler left out found by qpdf: an entry whose destination is a
/// dictionary holding /D (which mutool and pypdf follow). Left as it is when qpdf can't read
/// the file or walks another number of entries.
func completedOutline(_ entries: [OutlineEntry], path: String, password: String?) -> [OutlineEntry] {
    guard entries.contains(where: { $0.page == nil && !$0.leadsOut }),
        let pages = try? QPDFDocument(path: path, password: password).outlinePages(),
        pages.count == entries.count
    else { return entries }
    return zip(entries, pages).map { entry, page in
        var completed = entry
        if completed.page == nil { completed.page = page }
        return completed
    }
}
