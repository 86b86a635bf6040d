internal import CPoppler
import MarginCore

extension Page {
    /// Every occurrence of `text` on the page, found by poppler: case-insensitive unless asked,
    /// accents ignored, and a match may run across a line break (with a hyphen dropped there).
    public func find(_ text: String, caseSensitive: Bool = false) -> [TextMatch] {
        var flags = POPPLER_FIND_MULTILINE.rawValue | POPPLER_FIND_IGNORE_DIACRITICS.rawValue
        if caseSensitive { flags |= POPPLER_FIND_CASE_SENSITIVE.rawValue }
        guard let list = poppler_page_find_text_with_options(page, text, PopplerFindFlags(rawValue: flags)) else {
            return []
        }
        defer { g_list_free_full(list) { poppler_rectangle_free($0?.assumingMemoryBound(to: PopplerRectangle.self)) } }
        var matches = [TextMatch]()
        var current = [PDFRect]()
        var node: UnsafeMutablePointer<GList>? = list
        while let item = node {
            if let data = item.pointee.data {
                let rectangle = data.assumingMemoryBound(to: PopplerRectangle.self)
                let r = rectangle.pointee
                current.append(PDFRect(x0: r.x1, y0: r.y1, x1: r.x2, y1: r.y2))
                if poppler_rectangle_find_get_match_continued(rectangle) == 0 {
                    matches.append(TextMatch(rects: current))
                    current = []
                }
            }
            node = item.pointee.next
        }
        if !current.isEmpty { matches.append(TextMatch(rects: current)) }
        return matches
    }

    /// The box of each Unicode scalar of `text`, in PDF user space (bottom-left origin); nil
    /// when poppler has no layout for the page. Boxes of line breaks are meaningless.
    public func characterBoxes() -> [PDFRect]? {
        let height = size.height
        var layout: UnsafeMutablePointer<PopplerRectangle>?
        var count: guint = 0
        guard poppler_page_get_text_layout(page, &layout, &count) != 0, let layout else { return nil }
        defer { g_free(layout) }
        return (0..<Int(count)).map { index in
            let box = layout[index]
            return PDFRect(x0: box.x1, y0: height - box.y2, x1: box.x2, y1: height - box.y1)
        }
    }

    /// The text whose characters lie inside the rectangles (PDF user space): each character of
    /// the page's text is kept when its box is inside one of them. A strict crop,
    /// unlike poppler's selection, which flows from one corner to the other. Lines are joined
    /// by a line break, words by a space.
    public func text(in rects: [PDFRect]) -> String {
        let height = size.height
        var layout: UnsafeMutablePointer<PopplerRectangle>?
        var count: guint = 0
        guard poppler_page_get_text_layout(page, &layout, &count) != 0, let layout else { return "" }
        defer { g_free(layout) }
        let scalars = Array(text.unicodeScalars)
        var result = String.UnicodeScalarView()
        var pendingSpace = false
        var pendingBreak = false
        for index in 0..<min(Int(count), scalars.count) {
            let scalar = scalars[index]
            let box = layout[index]
            // Layout boxes use the top-left origin; the rects, PDF space. A character counts when
            // its vertical centre is inside and at least a third of its width is.
            let y = height - (box.y1 + box.y2) / 2
            let width = max(box.x2 - box.x1, 0.01)
            let inside = rects.contains { rect in
                let overlap = min(box.x2, rect.x1) - max(box.x1, rect.x0)
                return y >= rect.y0 && y <= rect.y1 && overlap >= width / 3
            }
            if inside && !isBlank(scalar) {
                if pendingSpace && !result.isEmpty { result.append(pendingBreak ? "\n" : " ") }
                result.append(scalar)
                pendingSpace = false
                pendingBreak = false
            } else if !result.isEmpty {
                pendingSpace = pendingSpace || isBlank(scalar) || !inside
                pendingBreak = pendingBreak || scalar == "\n"
            }
        }
        return String(result)
    }

    /// The text inside one rectangle (see `text(in:)`).
    public func text(in rect: PDFRect) -> String {
        text(in: [rect])
    }
}
