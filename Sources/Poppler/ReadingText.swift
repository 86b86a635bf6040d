internal import CPoppler
import MarginCore

extension Page {
    /// Poppler's text with two repairs, as pdftotext reads a page: words set apart on one line
    /// but glued in poppler's text get a space ("11.4Data mining" → "11.4 Data mining"), and a
    /// paragraph gap (more than a line's height between two lines) becomes a blank line.
    public func readingText() -> ReadingText {
        reading(withBoxes: true)
    }

    /// The text of `readingText()` alone (what the index stores): no box is kept for it.
    public func readingTextOnly() -> String {
        reading(withBoxes: false).text
    }

    private func reading(withBoxes: Bool) -> ReadingText {
        let raw = text
        let scalars = Array(raw.unicodeScalars)
        guard let boxes = characterBoxes(), boxes.count == scalars.count else {
            return ReadingText(text: raw, boxes: nil)
        }
        let wordGap = wordBreakGap(scalars, boxes)
        // Built as UTF-8: appending to a `String.UnicodeScalarView` costs hundreds of
        // instructions a scalar, on every page extracted.
        var text = UTF8Builder(capacity: raw.utf8.count + raw.utf8.count / 16)
        var placed = [PDFRect]()
        if withBoxes { placed.reserveCapacity(scalars.count + scalars.count / 16) }
        var last: PDFRect?  // the box of the last non-blank scalar
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            let box = boxes[index]
            if scalar == "\n" {
                text.append(scalar)
                if withBoxes { placed.append(box) }
                // A blank line where the next line starts well below this one.
                var next = index + 1
                while next < scalars.count, scalars[next] == " " || scalars[next] == "\t" { next += 1 }
                if let last, next < scalars.count, !isBlank(scalars[next]) {
                    let below = boxes[next]
                    let height = max(last.y1 - last.y0, below.y1 - below.y0, 1)
                    if last.y0 - below.y1 > height * 0.8 {
                        text.append("\n")
                        if withBoxes { placed.append(PDFRect(x0: box.x0, y0: box.y0, x1: box.x0, y1: box.y0)) }
                    }
                }
                index += 1
                continue
            }
            if !isBlank(scalar) {
                if let last, let wordGap, index > 0, !isBlank(scalars[index - 1]),
                    apart(last, box, wordGap)
                {
                    text.append(" ")
                    if withBoxes { placed.append(PDFRect(x0: last.x1, y0: last.y0, x1: last.x1, y1: last.y1)) }
                }
                last = box
            }
            text.append(scalar)
            if withBoxes { placed.append(box) }
            index += 1
        }
        return ReadingText(text: text.string, boxes: withBoxes ? placed : nil)
    }
}

/// A string built as UTF-8 bytes, a scalar at a time.
private struct UTF8Builder {
    private var bytes = [UInt8]()

    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    @inline(__always)
    mutating func append(_ scalar: Unicode.Scalar) {
        UTF8.encode(scalar) { bytes.append($0) }
    }

    var string: String { String(decoding: bytes, as: UTF8.self) }
}

/// The gap between two glyphs on a line above which they are separate words, learnt from the
/// page: halfway between the usual gap inside a word and the usual gap across a space poppler
/// put itself. Nil when the page shows no clear difference (then no space is added).
private func wordBreakGap(_ scalars: [Unicode.Scalar], _ boxes: [PDFRect]) -> Double? {
    var inside = [Double]()
    var across = [Double]()
    var previous: Int?
    var sawSpace = false
    for index in scalars.indices {
        let scalar = scalars[index]
        if scalar == "\n" {
            previous = nil
            continue
        }
        if isBlank(scalar) {
            sawSpace = true
            continue
        }
        if let previous, onOneLine(boxes[previous], boxes[index]) {
            let gap = boxes[index].x0 - boxes[previous].x1
            if sawSpace { across.append(gap) } else { inside.append(gap) }
        }
        previous = index
        sawSpace = false
    }
    guard across.count >= 3, inside.count >= 3 else { return nil }
    let word = median(across)
    let letter = median(inside)
    guard word > letter + 0.5 else { return nil }
    return (word + letter) / 2
}

private func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

private func onOneLine(_ left: PDFRect, _ right: PDFRect) -> Bool {
    let height = max(left.y1 - left.y0, right.y1 - right.y0, 0.01)
    return min(left.y1, right.y1) - max(left.y0, right.y0) >= height / 2
}

/// Two consecutive glyphs that stand as separate words: on one line with a gap wider than the
/// page's word gap, or on different lines with nothing between them.
private func apart(_ left: PDFRect, _ right: PDFRect, _ wordGap: Double) -> Bool {
    // Text set sideways (an arXiv stamp in the margin) runs down a column: poppler's own text
    // has its spaces.
    if inOneColumn(left, right) { return false }
    guard onOneLine(left, right) else { return true }
    return right.x0 - left.x1 > wordGap || right.x1 < left.x0
}

/// Two characters one above the other, touching: a line of text set sideways.
private func inOneColumn(_ a: PDFRect, _ b: PDFRect) -> Bool {
    let overlap = min(a.x1, b.x1) - max(a.x0, b.x0)
    let narrower = min(a.x1 - a.x0, b.x1 - b.x0)
    guard narrower > 0, overlap >= narrower * 0.8 else { return false }
    let gap = max(a.y0, b.y0) - min(a.y1, b.y1)
    return gap < max(a.y1 - a.y0, b.y1 - b.y0) * 0.5
}

/// White space, with ASCII answered without Unicode's property tables (a lookup a character,
/// on every character of every page extracted).
@inline(__always)
func isBlank(_ scalar: Unicode.Scalar) -> Bool {
    let value = scalar.value
    if value < 0x80 { return value == 0x20 || (value >= 0x09 && value <= 0x0D) }
    return scalar.properties.isWhitespace
}
