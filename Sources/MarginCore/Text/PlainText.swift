import Foundation

/// What a search asks of a page's text: where terms occur, and a snippet around a match.
/// `SearchableText` answers for any text; `PlainText` for most pages, cheaper.
public protocol MatchableText {
    /// Ranges (in the cased text) where the folded `term` occurs, in reading order, not
    /// overlapping; with `first`, only the first.
    func foldedMatches(_ term: [Unicode.Scalar], wholeWord: Bool, first: Bool) -> [Range<Int>]
    /// Ranges (in the cased text) where `term` occurs exactly; with `first`, only the first.
    func casedMatches(_ term: [Unicode.Scalar], wholeWord: Bool, first: Bool) -> [Range<Int>]
    /// About `width` scalars of context around `range`, cut at spaces, with the match between
    /// `open` and `close`.
    func snippet(around range: Range<Int>, width: Int, open: String, close: String) -> String
    /// About `width` scalars of context around the stretch richest in the terms' matches, every
    /// match in it between `open` and `close`; `hyphenated`: a term held a hyphen (a word broken
    /// at a line end inside a match of it is shown with its hyphen: see `SearchableText`).
    func snippet(marking matches: [[Range<Int>]], width: Int, open: String, close: String, hyphenated: Bool)
        -> String
}

extension SearchableText: MatchableText {}

/// A page of plain ASCII text (no byte past ASCII, no hyphen before a line break) as
/// `SearchableText` reads it, without the maps between its texts that such a page doesn't need:
/// its cased text is the text with each run of white space one space (none before the first
/// character or after the last), its folded text the same with letters lowercased, position for
/// position. Building a `SearchableText` (four arrays of four bytes a character) was most of
/// the time a search spent on each page it shows; the tests hold every answer here to its.
public struct PlainText: MatchableText, Sendable {
    let cased: [UInt8]
    let folded: [UInt8]

    /// Nil when the text isn't plain ASCII.
    public init?(_ text: String) {
        var text = text
        guard let (cased, folded) = text.withUTF8({ isPlainASCIIText($0) ? collapsedASCII($0) : nil }) else {
            return nil
        }
        self.cased = cased
        self.folded = folded
    }

    public func foldedMatches(_ term: [Unicode.Scalar], wholeWord: Bool, first: Bool = false) -> [Range<Int>] {
        byteOccurrences(of: term, in: folded, wholeWord: wholeWord, first: first)
    }

    public func casedMatches(_ term: [Unicode.Scalar], wholeWord: Bool, first: Bool = false) -> [Range<Int>] {
        byteOccurrences(of: term, in: cased, wholeWord: wholeWord, first: first)
    }

    /// As `SearchableText.snippet(marking:width:open:close:hyphenated:)`, a character a byte
    /// (no line end was joined here).
    public func snippet(
        marking matches: [[Range<Int>]], width: Int = 60, open: String, close: String, hyphenated: Bool = false
    ) -> String {
        guard let plan = snippetPlan(matches, count: cased.count, width: width, isSpace: { cased[$0] == 0x20 }) else {
            return ""
        }
        return snippetText(plan, count: cased.count, open: open, close: close) {
            String(decoding: cased[$0], as: UTF8.self)
        }
    }

    /// As `SearchableText.snippet(around:width:open:close:)`, a character a byte.
    public func snippet(around range: Range<Int>, width: Int = 60, open: String, close: String) -> String {
        var start = max(0, range.lowerBound - width)
        var end = min(cased.count, range.upperBound + width)
        if start > 0, let space = cased[start..<range.lowerBound].firstIndex(of: 0x20) { start = space + 1 }
        if end < cased.count, let space = cased[range.upperBound..<end].lastIndex(of: 0x20) { end = space }
        return (start > 0 ? "…" : "") + String(decoding: cased[start..<range.lowerBound], as: UTF8.self) + open
            + String(decoding: cased[range], as: UTF8.self) + close
            + String(decoding: cased[range.upperBound..<end], as: UTF8.self) + (end < cased.count ? "…" : "")
    }
}

/// The cased and the folded text of plain ASCII bytes (`isPlainASCIIText`): each run of white
/// space one space, none before the first character or after the last; letters lowercased in the
/// folded one. One pass without a branch a byte: white
/// space is written as a space unless the text so far is empty or ends with one, and a space
/// left at the end is dropped.
func collapsedASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> (cased: [UInt8], folded: [UInt8]) {
    let count = bytes.count
    var length = 0
    var folded = [UInt8]()
    let cased = [UInt8](unsafeUninitializedCapacity: count) { cased, casedCount in
        folded = [UInt8](unsafeUninitializedCapacity: count) { lower, lowerCount in
            var last: UInt8 = 0x20
            for byte in bytes {
                let space = isASCIISpace(byte)
                let value = space ? 0x20 : byte
                cased[length] = value
                lower[length] = value &- 0x41 < 26 ? value | 0x20 : value
                length &+= (space && last == 0x20) ? 0 : 1
                last = value
            }
            if length > 0, cased[length - 1] == 0x20 { length -= 1 }
            lowerCount = length
        }
        casedCount = length
    }
    return (cased, folded)
}

/// `occurrences(of:in:wholeWord:first:)` over ASCII bytes: a term with a scalar past ASCII is
/// in none.
private func byteOccurrences(
    of term: [Unicode.Scalar], in text: [UInt8], wholeWord: Bool, first onlyFirst: Bool
) -> [Range<Int>] {
    guard !term.isEmpty, term.count <= text.count, term.allSatisfy({ $0.value < 0x80 }) else { return [] }
    let needle = term.map { UInt8(truncatingIfNeeded: $0.value) }
    return text.withUnsafeBufferPointer { text in
        var result = [Range<Int>]()
        var offset = 0
        while let found = needle.withUnsafeBufferPointer({ firstByteOccurrence($0, in: text, from: offset) }) {
            let range = found..<found + needle.count
            if !wholeWord
                || ((range.lowerBound == 0 || !isASCIIWordByte(text[range.lowerBound - 1]))
                    && (range.upperBound == text.count || !isASCIIWordByte(text[range.upperBound])))
            {
                result.append(range)
                if onlyFirst { break }
                offset = range.upperBound
            } else {
                offset = found + 1
            }
        }
        return result
    }
}

/// `isWordScalar` for an ASCII byte: a letter, a digit or an underscore.
@inline(__always)
private func isASCIIWordByte(_ byte: UInt8) -> Bool {
    (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A) || byte == 0x5F
}
