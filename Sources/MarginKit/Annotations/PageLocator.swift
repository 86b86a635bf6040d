import Foundation
import MarginCore

/// Where a text stands on a page: found in the page's stored text (folded, hyphenated line
/// ends joined, as the index reads it) and placed with poppler's character boxes, so a passage
/// of any length on one page, across any number of lines, can be highlighted.
struct PageLocator {
    let number: Int
    let text: SearchableText
    /// One box per scalar of the page's text (PDF space); nil when poppler gave no usable layout.
    let boxes: [PDFRect]?
    private let scalars: [Unicode.Scalar]

    init(number: Int, text: String, page: (any PDFPage)?) {
        self.number = number
        self.text = SearchableText(text)
        scalars = Array(text.unicodeScalars)
        // The stored text is the page's reading text; its boxes line up with it scalar by scalar.
        let reading = page?.readingText()
        self.boxes = reading?.text == text && reading?.boxes?.count == scalars.count ? reading?.boxes : nil
    }

    /// One located occurrence: its range in `text.cased`, rects, exact text and context.
    struct Occurrence {
        var range: Range<Int>
        var rects: [PDFRect]
        var text: String
        var prefix: String
        var suffix: String
    }

    /// Every occurrence of the folded `term`, in reading order.
    func occurrences(of term: [Unicode.Scalar], keepHyphens: Bool) -> [Occurrence] {
        text.foldedMatches(term, wholeWord: false).compactMap { occurrence(at: $0, keepHyphens: keepHyphens) }
    }

    func occurrence(at range: Range<Int>, keepHyphens: Bool) -> Occurrence? {
        occurrence(raw: text.rawRange(range), keepHyphens: keepHyphens)
    }

    /// The occurrence of the scalars `rawRange` of the page's text (a reader's selection).
    func occurrence(raw rawRange: Range<Int>, keepHyphens: Bool = true) -> Occurrence? {
        let range = text.casedRange(rawRange)
        let rects = self.rects(rawRange)
        guard !rects.isEmpty else { return nil }
        let prefix = scalarString(text.cased[max(0, range.lowerBound - 32)..<range.lowerBound])
        let suffix = scalarString(text.cased[range.upperBound..<min(text.cased.count, range.upperBound + 32)])
        return Occurrence(
            range: range, rects: rects, text: display(rawRange, keepHyphens: keepHyphens), prefix: prefix,
            suffix: suffix)
    }

    /// The boxes of the characters in `range`, merged into one rectangle per line.
    private func rects(_ range: Range<Int>) -> [PDFRect] {
        guard let boxes else { return [] }
        var lines = [PDFRect]()
        for index in range where index < boxes.count && !isBlank(scalars[index]) {
            let box = boxes[index]
            guard box.x1 > box.x0 || box.y1 > box.y0 else { continue }
            if let last = lines.last, sameLine(last, box) {
                lines[lines.count - 1] = PDFRect(
                    x0: min(last.x0, box.x0), y0: min(last.y0, box.y0), x1: max(last.x1, box.x1),
                    y1: max(last.y1, box.y1))
            } else {
                lines.append(box)
            }
        }
        return lines
    }

    /// The text of `range` as a reader sees it: white space collapsed, a word hyphenated at a
    /// line end joined (keeping the hyphen when the searched text had one there).
    private func display(_ range: Range<Int>, keepHyphens: Bool) -> String {
        var result = String.UnicodeScalarView()
        var index = range.lowerBound
        var pendingSpace = false
        while index < range.upperBound {
            let scalar = scalars[index]
            if isBlank(scalar) {
                pendingSpace = !result.isEmpty
                index += 1
                continue
            }
            if scalar == "-" || scalar == "\u{00AD}" || scalar == "\u{2010}", let last = result.last,
                last.properties.isAlphabetic
            {
                var next = index + 1
                var sawBreak = false
                while next < range.upperBound, isBlank(scalars[next]) {
                    if scalars[next] == "\n" || scalars[next] == "\r" { sawBreak = true }
                    next += 1
                }
                if sawBreak, next < range.upperBound, scalars[next].properties.isAlphabetic {
                    if keepHyphens && scalar != "\u{00AD}" { result.append("-") }
                    index = next
                    pendingSpace = false
                    continue
                }
            }
            if pendingSpace { result.append(" ") }
            pendingSpace = false
            result.append(scalar)
            index += 1
        }
        return String(result)
    }
}

private func isBlank(_ scalar: Unicode.Scalar) -> Bool {
    scalar.properties.isWhitespace
}

/// Two boxes are on one line when their vertical spans mostly overlap and the second does not
/// start left of the first's start (a new line wraps back to the left).
private func sameLine(_ line: PDFRect, _ box: PDFRect) -> Bool {
    let overlap = min(line.y1, box.y1) - max(line.y0, box.y0)
    let height = max(min(line.y1 - line.y0, box.y1 - box.y0), 0.01)
    return overlap >= height / 2 && box.x0 >= line.x0 - 1
}
