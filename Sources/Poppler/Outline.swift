internal import CPoppler
import Foundation

/// An entry of a PDF's outline (the bookmarks panel of a viewer): its title, the page it goes
/// to and its depth.
public struct OutlineEntry: Sendable, Equatable, Encodable {
    public var title: String
    /// 1-based; nil when the entry leads nowhere in this document (a web link, a destination
    /// that doesn't exist).
    public var page: Int?
    /// 1 is the top level.
    public var level: Int

    public init(title: String, page: Int?, level: Int) {
        self.title = title
        self.page = page
        self.level = level
    }
}

extension Document {
    /// The outline in reading order (parents before their children), at most `limit` entries
    /// and 32 levels deep: a PDF built to exhaust readers can't make it endless.
    public func outline(limit: Int = 20_000) -> [OutlineEntry] {
        guard let iterator = poppler_index_iter_new(document) else { return [] }
        defer { poppler_index_iter_free(iterator) }
        var entries = [OutlineEntry]()
        walk(iterator, level: 1, limit: limit, into: &entries)
        return entries
    }

    private func walk(_ iterator: OpaquePointer, level: Int, limit: Int, into entries: inout [OutlineEntry]) {
        repeat {
            guard entries.count < limit else { return }
            if let action = poppler_index_iter_get_action(iterator) {
                defer { poppler_action_free(action) }
                let title = action.pointee.any.title.map { String(cString: $0) } ?? ""
                var page: Int?
                if action.pointee.type == POPPLER_ACTION_GOTO_DEST, let destination = action.pointee.goto_dest.dest {
                    page = self.page(of: destination)
                }
                entries.append(
                    OutlineEntry(
                        title: title.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(
                            of: "\\s+", with: " ", options: .regularExpression),
                        page: page, level: level))
            }
            if level < 32, let child = poppler_index_iter_get_child(iterator) {
                walk(child, level: level + 1, limit: limit, into: &entries)
                poppler_index_iter_free(child)
            }
        } while poppler_index_iter_next(iterator) != 0
    }

    /// The 1-based page a destination goes to, a named one looked up first.
    private func page(of destination: UnsafeMutablePointer<PopplerDest>) -> Int? {
        var number = Int(destination.pointee.page_num)
        if destination.pointee.type == POPPLER_DEST_NAMED {
            guard let name = destination.pointee.named_dest,
                let found = poppler_document_find_dest(document, name)
            else { return nil }
            defer { poppler_dest_free(found) }
            number = Int(found.pointee.page_num)
        }
        return number >= 1 && number <= pageCount ? number : nil
    }
}

extension Page {
    /// The page's label, as the PDF prints its number ("xii", "A-3"); nil when the PDF gives
    /// none (then the label is the page number itself) or a blank one.
    public var label: String? {
        guard let text = takeString(poppler_page_get_label(pointer)) else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }
}
