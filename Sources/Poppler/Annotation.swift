internal import CPoppler
import Foundation
import MarginCore

extension Page {
    /// The page's annotations, in the order the PDF lists them.
    public var annotations: [PageAnnotation] {
        guard let list = poppler_page_get_annot_mapping(page) else { return [] }
        defer { poppler_page_free_annot_mapping(list) }
        var result = [PageAnnotation]()
        var node: UnsafeMutablePointer<GList>? = list
        var index = 0
        while let item = node {
            defer {
                node = item.pointee.next
                index += 1
            }
            guard let data = item.pointee.data else { continue }
            let mapping = data.assumingMemoryBound(to: PopplerAnnotMapping.self).pointee
            guard let annot = mapping.annot else { continue }
            result.append(read(annot, index: index))
        }
        return result
    }

    private func read(_ annot: OpaquePointer, index: Int) -> PageAnnotation {
        let type = poppler_annot_get_annot_type(annot)
        let kind: PageAnnotation.Kind
        switch type {
        case POPPLER_ANNOT_HIGHLIGHT: kind = .highlight
        case POPPLER_ANNOT_UNDERLINE: kind = .underline
        case POPPLER_ANNOT_STRIKE_OUT: kind = .strikeOut
        case POPPLER_ANNOT_SQUIGGLY: kind = .squiggly
        case POPPLER_ANNOT_TEXT: kind = .text
        case POPPLER_ANNOT_FREE_TEXT: kind = .freeText
        default: kind = .other
        }
        var rectangle = PopplerRectangle()
        poppler_annot_get_rectangle(annot, &rectangle)
        var quads = [PDFRect]()
        var author: String?
        var created: DateComponents?
        let isMarkup = kind != .other
        if [.highlight, .underline, .strikeOut, .squiggly].contains(kind),
            let array = poppler_annot_text_markup_get_quadrilaterals(annot)
        {
            let count = Int(array.pointee.len)
            array.pointee.data.withMemoryRebound(to: PopplerQuadrilateral.self, capacity: count) { points in
                for i in 0..<count {
                    let q = points[i]
                    let xs = [q.p1.x, q.p2.x, q.p3.x, q.p4.x]
                    let ys = [q.p1.y, q.p2.y, q.p3.y, q.p4.y]
                    quads.append(PDFRect(x0: xs.min() ?? 0, y0: ys.min() ?? 0, x1: xs.max() ?? 0, y1: ys.max() ?? 0))
                }
            }
            g_array_unref(array)
        }
        if isMarkup {
            author = nonEmpty(takeString(poppler_annot_markup_get_label(annot)))
            if let date = poppler_annot_markup_get_date(annot) {
                if g_date_valid(date) != 0 {
                    created = DateComponents(
                        year: Int(g_date_get_year(date)), month: Int(g_date_get_month(date).rawValue),
                        day: Int(g_date_get_day(date)))
                }
                g_date_free(date)
            }
        }
        var color: RGB?
        if let value = poppler_annot_get_color(annot) {
            color = RGB(
                red: Double(value.pointee.red) / 65535, green: Double(value.pointee.green) / 65535,
                blue: Double(value.pointee.blue) / 65535)
            poppler_color_free(value)
        }
        return PageAnnotation(
            kind: kind, index: index,
            rect: PDFRect(x0: rectangle.x1, y0: rectangle.y1, x1: rectangle.x2, y1: rectangle.y2),
            quads: quads, contents: nonEmpty(takeString(poppler_annot_get_contents(annot))),
            author: author, modified: nonEmpty(takeString(poppler_annot_get_modified(annot))),
            created: created, color: color, name: nonEmpty(takeString(poppler_annot_get_name(annot))))
    }

    /// Adds a /Highlight annotation covering `rects` (one quadrilateral each).
    public func addHighlight(_ rects: [PDFRect], color: RGB, contents: String?, author: String?) {
        guard let first = rects.first else { return }
        var bounds = first
        var quads = [PopplerQuadrilateral]()
        for r in rects {
            bounds = PDFRect(
                x0: min(bounds.x0, r.x0), y0: min(bounds.y0, r.y0), x1: max(bounds.x1, r.x1), y1: max(bounds.y1, r.y1))
            // QuadPoints order: top-left, top-right, bottom-left, bottom-right.
            quads.append(
                PopplerQuadrilateral(
                    p1: PopplerPoint(x: r.x0, y: r.y1), p2: PopplerPoint(x: r.x1, y: r.y1),
                    p3: PopplerPoint(x: r.x0, y: r.y0), p4: PopplerPoint(x: r.x1, y: r.y0)))
        }
        let array = g_array_sized_new(0, 0, guint(MemoryLayout<PopplerQuadrilateral>.stride), guint(quads.count))
        quads.withUnsafeBufferPointer { _ = g_array_append_vals(array, $0.baseAddress, guint($0.count)) }
        defer { g_array_unref(array) }
        var rectangle = PopplerRectangle(x1: bounds.x0, y1: bounds.y0, x2: bounds.x1, y2: bounds.y1)
        guard let annot = poppler_annot_text_markup_new_highlight(document.document, &rectangle, array) else { return }
        defer { g_object_unref(UnsafeMutableRawPointer(annot)) }
        decorate(annot, color: color, contents: contents, author: author)
        poppler_page_add_annot(page, annot)
    }

    /// Adds a /Text note (a sticky note icon) at the top left of `at`.
    public func addNote(at point: (x: Double, y: Double), contents: String, color: RGB, author: String?) {
        var rectangle = PopplerRectangle(x1: point.x, y1: point.y - 20, x2: point.x + 20, y2: point.y)
        guard let annot = poppler_annot_text_new(document.document, &rectangle) else { return }
        defer { g_object_unref(UnsafeMutableRawPointer(annot)) }
        poppler_annot_text_set_icon(annot, "Note")
        decorate(annot, color: color, contents: contents, author: author)
        poppler_page_add_annot(page, annot)
    }

    private func decorate(_ annot: OpaquePointer, color: RGB, contents: String?, author: String?) {
        if let value = poppler_color_new() {
            value.pointee.red = guint16(max(0, min(1, color.red)) * 65535)
            value.pointee.green = guint16(max(0, min(1, color.green)) * 65535)
            value.pointee.blue = guint16(max(0, min(1, color.blue)) * 65535)
            poppler_annot_set_color(annot, value)
            poppler_color_free(value)
        }
        if let contents { poppler_annot_set_contents(annot, contents) }
        if let author { poppler_annot_markup_set_label(annot, author) }
    }
}

extension Document {
    /// Writes the document, with any annotations added, to `path`.
    public func save(to path: String) throws {
        var error: UnsafeMutablePointer<GError>?
        let uri = takeString(g_filename_to_uri(path, nil, &error))
        guard let uri else { throw PopplerError.renderFailed(takeMessage(error)?.message ?? "bad path \(path)") }
        guard poppler_document_save(document, uri, &error) != 0 else {
            throw PopplerError.saveFailed(takeMessage(error)?.message ?? "unknown error")
        }
    }
}

private func nonEmpty(_ value: String?) -> String? {
    guard let value, !value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return nil }
    return value
}
