internal import CPoppler
import Foundation
import MarginCore

extension Document {
    /// The document's /Subject, trimmed; nil when absent or blank.
    public var subject: String? { nonBlank(takeString(poppler_document_get_subject(document))) }

    /// The document's /Keywords, trimmed; nil when absent or blank.
    public var keywords: String? { nonBlank(takeString(poppler_document_get_keywords(document))) }

    /// The XMP metadata packet (XML) of the catalog's /Metadata stream, when the PDF has one.
    public var xmp: String? { nonBlank(takeString(poppler_document_get_metadata(document))) }

    /// The /CreationDate, when the PDF gives one.
    public var creationDate: Date? {
        let seconds = poppler_document_get_creation_date(document)
        return seconds <= 0 ? nil : Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}

extension Page {
    /// The page's text as lines (poppler's reading order), each with its font size and place:
    /// what a title is told apart by. Blank lines are left out.
    public func textLines() -> [TextLine] {
        let scalars = Array(text.unicodeScalars)
        guard !scalars.isEmpty else { return [] }
        var layout: UnsafeMutablePointer<PopplerRectangle>?
        var count: guint = 0
        guard poppler_page_get_text_layout(page, &layout, &count) != 0, let layout else { return [] }
        defer { g_free(layout) }
        // The font size of each character, from poppler's attribute runs.
        var sizes = [Double](repeating: 0, count: scalars.count)
        if let runs = poppler_page_get_text_attributes(page) {
            defer { poppler_page_free_text_attributes(runs) }
            var node: UnsafeMutablePointer<GList>? = runs
            while let current = node {
                if let data = current.pointee.data {
                    let run = data.assumingMemoryBound(to: PopplerTextAttributes.self).pointee
                    let start = max(0, Int(run.start_index))
                    let end = min(scalars.count - 1, Int(run.end_index))
                    if start <= end {
                        for index in start...end { sizes[index] = run.font_size }
                    }
                }
                node = current.pointee.next
            }
        }
        var lines = [TextLine]()
        var current = String.UnicodeScalarView()
        var size = 0.0
        var top = Double.infinity
        var bottom = -Double.infinity
        var left = Double.infinity
        // Where the line's previous character ended, and where wide spaces cut it.
        var previousEnd: Double?
        var cuts = [String.UnicodeScalarView.Index]()
        func finish() {
            let line = String(current).trimmingCharacters(in: .whitespaces)
            if !line.isEmpty {
                var pieces: [String]?
                if !cuts.isEmpty {
                    var bounds = [current.startIndex] + cuts + [current.endIndex]
                    bounds = bounds.sorted()
                    pieces = zip(bounds, bounds.dropFirst()).map {
                        String(String.UnicodeScalarView(current[$0..<$1])).trimmingCharacters(in: .whitespaces)
                    }.filter { !$0.isEmpty }
                }
                lines.append(
                    TextLine(
                        text: line, fontSize: size, top: top, bottom: bottom, left: left,
                        pieces: (pieces?.count ?? 0) > 1 ? pieces : nil))
            }
            current = String.UnicodeScalarView()
            size = 0
            top = .infinity
            bottom = -.infinity
            left = .infinity
            previousEnd = nil
            cuts = []
        }
        for index in scalars.indices {
            let scalar = scalars[index]
            if scalar == "\n" {
                finish()
                continue
            }
            guard index < Int(count), !scalar.properties.isWhitespace else {
                current.append(scalar)
                continue
            }
            let box = layout[index]
            // poppler may run lines of a grid together without a line break: a character wholly
            // below or above the line so far starts a new line.
            if !current.isEmpty, top.isFinite, box.y1 >= bottom - 0.5 || box.y2 <= top + 0.5 {
                finish()
            }
            if let end = previousEnd {
                let em = max(sizes[index], 1)
                // A wide space, or a step back to the left: another column's piece of the line.
                if box.x1 - end > em * 1.5 || box.x2 < end - em {
                    cuts.append(current.endIndex)
                    if current.last.map({ !$0.properties.isWhitespace }) ?? false { current.append(" ") }
                }
            }
            previousEnd = box.x2
            current.append(scalar)
            size = max(size, sizes[index])
            top = min(top, box.y1)
            bottom = max(bottom, box.y2)
            left = min(left, box.x1)
        }
        finish()
        return lines
    }
}
