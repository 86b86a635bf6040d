internal import CPoppler
import Foundation
import MarginCore

extension Document {
    /// The outline in reading order (parents before their children), at most `limit` entries
    /// and 32 levels deep: a PDF built to exhaust readers can't make it endless.
    public func outline(limit: Int = 20_000) -> [OutlineEntry] {
        guard let iterator = poppler_index_iter_new(document) else { return [] }
        defer { poppler_index_iter_free(iterator) }
        var entries = [OutlineEntry]()
        var named: [String: Int]?
        walk(iterator, level: 1, limit: limit, into: &entries, named: &named)
        return entries
    }

    private func walk(
        _ iterator: OpaquePointer, level: Int, limit: Int, into entries: inout [OutlineEntry],
        named: inout [String: Int]?
    ) {
        repeat {
            guard entries.count < limit else { return }
            if let action = poppler_index_iter_get_action(iterator) {
                defer { poppler_action_free(action) }
                let title = action.pointee.any.title.map { String(cString: $0) } ?? ""
                var page: Int?
                if action.pointee.type == POPPLER_ACTION_GOTO_DEST, let destination = action.pointee.goto_dest.dest {
                    page = self.page(of: destination, named: &named)
                }
                let kind = action.pointee.type
                let leadsOut =
                    kind == POPPLER_ACTION_URI || kind == POPPLER_ACTION_GOTO_REMOTE || kind == POPPLER_ACTION_LAUNCH
                    || kind == POPPLER_ACTION_NAMED || kind == POPPLER_ACTION_MOVIE || kind == POPPLER_ACTION_RENDITION
                    || kind == POPPLER_ACTION_JAVASCRIPT || kind == POPPLER_ACTION_RESET_FORM
                entries.append(
                    OutlineEntry(
                        title: title.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(
                            of: "\\s+", with: " ", options: .regularExpression),
                        page: page, level: level, leadsOut: leadsOut))
            }
            if level < 32, let child = poppler_index_iter_get_child(iterator) {
                walk(child, level: level + 1, limit: limit, into: &entries, named: &named)
                poppler_index_iter_free(child)
            }
        } while poppler_index_iter_next(iterator) != 0
    }

    /// The 1-based page a destination goes to, a named one looked up first. A name poppler's
    /// lookup misses (a string in the `/Names` tree, its value an array or a `<< /D […] >>`
    /// dictionary) is found among all the document's named destinations, listed once.
    private func page(of destination: UnsafeMutablePointer<PopplerDest>, named: inout [String: Int]?) -> Int? {
        var number = Int(destination.pointee.page_num)
        if destination.pointee.type == POPPLER_DEST_NAMED {
            guard let name = destination.pointee.named_dest else { return nil }
            if let found = poppler_document_find_dest(document, name) {
                number = Int(found.pointee.page_num)
                poppler_dest_free(found)
            } else {
                if named == nil { named = namedDestinationPages() }
                guard let listed = named?[String(cString: name)] else { return nil }
                number = listed
            }
        }
        return number >= 1 && number <= pageCount ? number : nil
    }

    /// Every named destination of the document (its `/Dests` dictionary and `/Names` tree)
    /// and the page it goes to, by the name poppler gives destinations.
    private func namedDestinationPages() -> [String: Int] {
        guard let tree = poppler_document_create_dests_tree(document) else { return [:] }
        defer { g_tree_destroy(tree) }
        var pages = [String: Int]()
        withUnsafeMutablePointer(to: &pages) { pointer in
            g_tree_foreach(
                tree,
                { key, value, context in
                    guard let key, let value, let context else { return 0 }
                    let destination = value.assumingMemoryBound(to: PopplerDest.self)
                    let name = String(cString: key.assumingMemoryBound(to: CChar.self))
                    context.assumingMemoryBound(to: [String: Int].self).pointee[name] = Int(
                        destination.pointee.page_num)
                    return 0
                }, pointer)
        }
        return pages
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
