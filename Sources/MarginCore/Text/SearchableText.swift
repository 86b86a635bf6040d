import Foundation

/// A page's text prepared for matching: words hyphenated across a line end are joined, runs of
/// white space become one space, and a folded copy (lowercase, no accents, compatibility forms
/// such as ligatures expanded) remembers where each of its characters came from.
///
/// The words of the folded string are what the page index holds (`indexWords`), so index
/// candidates and the checks made here agree by construction.
public struct SearchableText: Sendable {
    /// The joined, space-collapsed text with its case and accents.
    public let cased: [Unicode.Scalar]
    /// The folded text.
    public let folded: [Unicode.Scalar]
    /// For each folded scalar, the index of the cased scalar it came from.
    public let origin: [Int32]
    /// For each cased scalar, the index of the scalar of the original text it came from.
    public let raw: [Int32]
    /// Where a word broken by a hyphen at a line end was joined: the position in `cased` of the
    /// scalar after the break.
    public let joins: [Int32]

    public init(_ text: String) {
        var text = text
        self = text.withUTF8 { SearchableText(utf8: $0) }
    }

    /// The text of these bytes (valid UTF-8, as a `String`'s).
    init(utf8Text bytes: UnsafeBufferPointer<UInt8>) {
        self.init(utf8: bytes)
    }

    /// One pass over the UTF-8 bytes into buffers of known size (`Array.append` costs a
    /// uniqueness and a capacity check a scalar, four arrays a scalar: most of a search's time
    /// on its candidate pages). The rules are those of the scalar-by-scalar reading they
    /// replaced, kept in the tests as the reference this must equal.
    private init(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        let count = bytes.count
        // A scalar takes at least a byte: `cased` and `raw` never hold more than `count`.
        let cased = UnsafeMutablePointer<Unicode.Scalar>.allocate(capacity: max(1, count))
        let raw = UnsafeMutablePointer<Int32>.allocate(capacity: max(1, count))
        var folded = FoldedBuffer(capacity: count + 16)
        defer {
            cased.deallocate()
            raw.deallocate()
            folded.deallocate()
        }
        var casedCount = 0
        var joins = [Int]()
        var spaceAt: Int32 = 0
        var pendingSpace = false
        var byte = 0
        var index: Int32 = 0
        while byte < count {
            if isPlainASCII(bytes[byte]) || isASCIISpace(bytes[byte]) {
                // A run of ASCII other than hyphens, most of a page: each byte a scalar, white
                // space collapsed and letters lowercased as below, without decoding or the
                // hyphen's checks. A byte adds at most one scalar, and a space pending from
                // before the run one more.
                folded.reserve(count - byte + 1)
                var run = byte
                while run < count {
                    let value = bytes[run]
                    if isPlainASCII(value) {
                        if pendingSpace {
                            cased[casedCount] = " "
                            raw[casedCount] = spaceAt
                            folded.appendUnchecked(" ", from: Int32(truncatingIfNeeded: casedCount))
                            casedCount &+= 1
                            pendingSpace = false
                        }
                        // The stretch from here of plain bytes and single spaces between them
                        // (most of a line) reads byte for byte: each byte a scalar of `cased` and
                        // of `folded`, a single space standing for itself (as the pending space
                        // it would be: its own index, one space), copied in one pass.
                        var end = run &+ 1
                        while end < count {
                            let next = bytes[end]
                            guard
                                isPlainASCII(next)
                                    || (next == 0x20 && end &+ 1 < count && isPlainASCII(bytes[end &+ 1]))
                            else { break }
                            end &+= 1
                        }
                        let length = end &- run
                        copyStretch(
                            UnsafeBufferPointer(rebasing: bytes[run..<end]), cased: cased + casedCount,
                            raw: raw + casedCount, firstIndex: index, folded: &folded,
                            firstCased: Int32(truncatingIfNeeded: casedCount))
                        casedCount &+= length
                        index &+= Int32(truncatingIfNeeded: length)
                        run = end
                        continue
                    } else if isASCIISpace(value) {
                        if !pendingSpace { spaceAt = index }
                        pendingSpace = casedCount > 0
                    } else {
                        break
                    }
                    index &+= 1
                    run &+= 1
                }
                byte = run
                continue
            }
            let (scalar, length) = decodeScalar(bytes, at: byte)
            if scalar.value == 0x2D || scalar.value == 0xAD || scalar.value == 0x2010,
                casedCount > 0, isLetter(cased[casedCount - 1]),
                let next = joinedLineBreak(bytes, after: byte + length), next.byte < count,
                isLetter(decodeScalar(bytes, at: next.byte).scalar)
            {
                // "in-\ndex" reads "index" (and "co-\noperation" also "co-operation", below).
                joins.append(casedCount)
                byte = next.byte
                index += 1 + next.scalars
                continue
            }
            if isSpace(scalar) {
                if !pendingSpace { spaceAt = index }
                pendingSpace = casedCount > 0
                byte += length
                index += 1
                continue
            }
            if pendingSpace {
                cased[casedCount] = " "
                raw[casedCount] = spaceAt
                folded.append(" ", from: Int32(casedCount))
                casedCount += 1
                pendingSpace = false
            }
            cased[casedCount] = scalar
            raw[casedCount] = index
            folded.appendFolded(scalar, from: Int32(casedCount))
            casedCount += 1
            byte += length
            index += 1
        }
        // A hyphen at a line end may belong to the word ("applicative-order"): after the page,
        // each joined word is also written with its hyphen, with three words either side, so a
        // query with the hyphen finds it too. A line break separates them, which no term holds.
        for join in joins {
            var start = join
            var words = 0
            while start > 0, words < 4 {
                if cased[start - 1] == " " { words += 1 }
                if words < 4 { start -= 1 }
            }
            var end = join
            words = 0
            while end < casedCount, words < 4 {
                if cased[end] == " " { words += 1 }
                if words < 4 { end += 1 }
            }
            folded.append("\n", from: Int32(start))
            for position in start..<end {
                if position == join { folded.append("-", from: Int32(max(0, join - 1))) }
                folded.appendFolded(cased[position], from: Int32(position))
            }
        }
        self.cased = Array(UnsafeBufferPointer(start: cased, count: casedCount))
        self.raw = Array(UnsafeBufferPointer(start: raw, count: casedCount))
        self.folded = Array(UnsafeBufferPointer(start: folded.scalars, count: folded.count))
        self.origin = Array(UnsafeBufferPointer(start: folded.origins, count: folded.count))
        self.joins = joins.map { Int32($0) }
    }

    /// The range of the original text's scalars that a range of `cased` came from.
    public func rawRange(_ range: Range<Int>) -> Range<Int> {
        guard !range.isEmpty else { return 0..<0 }
        return Int(raw[range.lowerBound])..<(Int(raw[range.upperBound - 1]) + 1)
    }

    /// The range of `cased` that came from the original text's scalars `rawRange`.
    public func casedRange(_ rawRange: Range<Int>) -> Range<Int> {
        // `raw` mostly rises; a joined line end may point back, so each end is looked for whole.
        let lower = raw.firstIndex { Int($0) >= rawRange.lowerBound } ?? cased.count
        let last = raw.lastIndex { Int($0) < rawRange.upperBound }
        return lower..<max(lower, last.map { $0 + 1 } ?? lower)
    }

    /// The folded text as a string, for the index.
    public var foldedString: String { scalarString(folded) }

    /// Ranges (in `cased`) where the folded `term` occurs.
    /// Ranges (in `cased`) where the folded `term` occurs, in reading order, each once (a match in
    /// a hyphen-kept copy of a line end stands for the joined text it came from).
    /// With `first`, only the first match found (whether there is one).
    /// A match takes the marks written after its last letter (an accent as a combining mark, a
    /// half-width voicing mark: folded away or into the letter), so it covers what is shown.
    public func foldedMatches(_ term: [Unicode.Scalar], wholeWord: Bool, first: Bool = false) -> [Range<Int>] {
        let ranges = occurrences(of: term, in: folded, wholeWord: wholeWord, first: first).map { range in
            var end = Int(origin[range.upperBound - 1]) + 1
            while end < cased.count, cased[end].value >= 0x300, isMarkAfterLetter(cased[end]) { end += 1 }
            return Int(origin[range.lowerBound])..<end
        }
        guard folded.count > 0, folded.contains("\n") else { return ranges }
        var seen = Set<Int>()
        return ranges.sorted { $0.lowerBound < $1.lowerBound }.filter { seen.insert($0.lowerBound).inserted }
    }

    /// Ranges (in `cased`) where `term` occurs exactly (case and accents as given).
    /// With `first`, only the first match (whether there is one).
    public func casedMatches(_ term: [Unicode.Scalar], wholeWord: Bool, first: Bool = false) -> [Range<Int>] {
        occurrences(of: term, in: cased, wholeWord: wholeWord, first: first)
    }

    /// About `width` scalars of context around the stretch richest in the terms' matches (see
    /// `snippetPlan`), every match in it between `open` and `close`.
    ///
    /// A word broken by a hyphen at a line end is shown joined ("com-" "puter": "computer"), and
    /// with its hyphen where it is a compound ("applicative-" "order": "applicative-order", not
    /// "applicativeorder"): where the word after the break begins with a capital or a digit
    /// ("Anglo-Saxon", "COVID-19"), where the page holds the two pieces joined by a hyphen
    /// elsewhere, or where a match of a term holding a hyphen (`hyphenated`) runs across it.
    public func snippet(
        marking matches: [[Range<Int>]], width: Int = 60, open: String, close: String, hyphenated: Bool = false
    ) -> String {
        guard let plan = snippetPlan(matches, count: cased.count, width: width, isSpace: { cased[$0] == " " }) else {
            return ""
        }
        var kept = Set<Int>()
        for join in joins.lazy.map({ Int($0) }) where join > plan.start && join < plan.end {
            if keepsHyphen(
                at: join, hyphenated: hyphenated && plan.marks.contains { $0.contains(join - 1) && $0.contains(join) })
            {
                kept.insert(join)
            }
        }
        return snippetText(
            plan, count: cased.count, open: open, close: close, joint: { kept.contains($0) ? "-" : "" }
        ) { scalarString(cased[$0]) }
    }

    /// Whether the word broken at a line end before `join` (a position in `cased`) is a compound
    /// shown with its hyphen (see `snippet(marking:width:open:close:hyphenated:)`).
    func keepsHyphen(at join: Int, hyphenated: Bool) -> Bool {
        guard join > 0, join < cased.count else { return false }
        if hyphenated { return true }
        let after = cased[join].properties
        if after.isUppercase || after.numericType != nil { return true }
        var start = join
        while start > 0, isWordScalar(cased[start - 1]) { start -= 1 }
        var end = join
        while end < cased.count, isWordScalar(cased[end]) { end += 1 }
        let compound = foldedTerm(scalarString(cased[start..<join]) + "-" + scalarString(cased[join..<end]))
        // The page's own text: the hyphen-kept copies of its line ends come after a line break.
        let page = folded.firstIndex(of: "\n") ?? folded.count
        return !occurrences(of: compound, in: folded, wholeWord: true, first: true, length: page).isEmpty
    }

    /// About `width` scalars of context around `range`, cut at spaces, with the match between
    /// `open` and `close`.
    public func snippet(around range: Range<Int>, width: Int = 60, open: String, close: String) -> String {
        var start = max(0, range.lowerBound - width)
        var end = min(cased.count, range.upperBound + width)
        if start > 0, let space = cased[start..<range.lowerBound].firstIndex(of: " ") { start = space + 1 }
        if end < cased.count, let space = cased[range.upperBound..<end].lastIndex(of: " ") { end = space }
        return (start > 0 ? "…" : "") + scalarString(cased[start..<range.lowerBound]) + open
            + scalarString(cased[range]) + close + scalarString(cased[range.upperBound..<end])
            + (end < cased.count ? "…" : "")
    }
}

/// A string made of these scalars.
public func scalarString<S: Sequence>(_ scalars: S) -> String where S.Element == Unicode.Scalar {
    // Encoded to UTF-8 here: appending to a `String.UnicodeScalarView` costs hundreds of
    // instructions a scalar.
    var bytes = [UInt8]()
    bytes.reserveCapacity(scalars.underestimatedCount)
    for scalar in scalars {
        let value = scalar.value
        if value < 0x80 {
            bytes.append(UInt8(value))
        } else if value < 0x800 {
            bytes.append(UInt8(0xC0 | (value >> 6)))
            bytes.append(UInt8(0x80 | (value & 0x3F)))
        } else if value < 0x10000 {
            bytes.append(UInt8(0xE0 | (value >> 12)))
            bytes.append(UInt8(0x80 | ((value >> 6) & 0x3F)))
            bytes.append(UInt8(0x80 | (value & 0x3F)))
        } else {
            bytes.append(UInt8(0xF0 | (value >> 18)))
            bytes.append(UInt8(0x80 | ((value >> 12) & 0x3F)))
            bytes.append(UInt8(0x80 | ((value >> 6) & 0x3F)))
            bytes.append(UInt8(0x80 | (value & 0x3F)))
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// The term as the index sees it: folded, spaces collapsed.
public func foldedTerm(_ term: String) -> [Unicode.Scalar] {
    SearchableText(term).folded
}

/// The term with its case, spaces collapsed.
public func casedTerm(_ term: String) -> [Unicode.Scalar] {
    SearchableText(term).cased
}

/// Where `term` occurs in `text`, within its first `length` scalars (all of it without).
private func occurrences(
    of term: [Unicode.Scalar], in text: [Unicode.Scalar], wholeWord: Bool, first onlyFirst: Bool = false,
    length: Int? = nil
) -> [Range<Int>] {
    let length = min(length ?? text.count, text.count)
    guard !term.isEmpty, term.count <= length else { return [] }
    var result = [Range<Int>]()
    let first = term[0]
    var index = 0
    let last = length - term.count
    while index <= last {
        if text[index] == first, text[index..<index + term.count].elementsEqual(term) {
            let range = index..<index + term.count
            if !wholeWord
                || (isWordEdge(text, range.lowerBound, outside: range.lowerBound - 1)
                    && isWordEdge(text, range.upperBound, outside: range.upperBound))
            {
                result.append(range)
                if onlyFirst { break }
                index = range.upperBound
                continue
            }
        }
        index += 1
    }
    return result
}

/// Whether a match standing at `position` of the text (between two scalars, `outside` the one
/// not matched) stands apart there as a word does: at either end of the text, next to a scalar
/// of no word, or beside a Chinese or Japanese letter (written without spaces, each is a word's
/// edge: `isBigramScalar`).
@inline(__always)
private func isWordEdge(_ text: [Unicode.Scalar], _ position: Int, outside: Int) -> Bool {
    guard position > 0, position < text.count else { return true }
    return !isWordScalar(text[outside]) || isBigramScalar(text[position - 1]) || isBigramScalar(text[position])
}

/// Writes a stretch of plain ASCII bytes and single spaces between them (see
/// `SearchableText.init(utf8:)`): each byte as it is to `cased`, its index in the text to `raw`,
/// lowercased to `folded` (which has room), from the cased scalar it is. Loops of one store each,
/// which the compiler can widen into vector instructions.
@inline(__always)
private func copyStretch(
    _ stretch: UnsafeBufferPointer<UInt8>, cased: UnsafeMutablePointer<Unicode.Scalar>,
    raw: UnsafeMutablePointer<Int32>, firstIndex: Int32, folded: inout FoldedBuffer, firstCased: Int32
) {
    let length = stretch.count
    guard let source = stretch.baseAddress, length > 0 else { return }
    let foldedScalars = folded.scalars + folded.count
    let origins = folded.origins + folded.count
    cased.withMemoryRebound(to: UInt32.self, capacity: length) { cased in
        for k in 0..<length { cased[k] = UInt32(source[k]) }
    }
    foldedScalars.withMemoryRebound(to: UInt32.self, capacity: length) { scalars in
        for k in 0..<length {
            let value = source[k]
            scalars[k] = UInt32(value &- 0x41 < 26 ? value | 0x20 : value)
        }
    }
    for k in 0..<length {
        raw[k] = firstIndex &+ Int32(truncatingIfNeeded: k)
        origins[k] = firstCased &+ Int32(truncatingIfNeeded: k)
    }
    folded.count += length
}

/// An ASCII byte that is neither white space (nor another control below the space) nor a
/// hyphen: a scalar copied as it is, lowercased in the folded text.
@inline(__always)
private func isPlainASCII(_ byte: UInt8) -> Bool {
    byte > 0x20 && byte < 0x80 && byte != 0x2D
}

/// The ASCII white space `isSpace` names: space, tab, line feed, vertical tab, form feed,
/// carriage return.
@inline(__always)
func isASCIISpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || (byte >= 0x09 && byte <= 0x0D)
}

/// The scalar that starts at `offset` of valid UTF-8, and its length in bytes.
@inline(__always)
private func decodeScalar(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> (scalar: Unicode.Scalar, length: Int)
{
    let lead = UInt32(bytes[offset])
    if lead < 0x80 { return (Unicode.Scalar(UInt8(lead)), 1) }
    var value: UInt32
    var length: Int
    if lead < 0xE0 {
        value = lead & 0x1F
        length = 2
    } else if lead < 0xF0 {
        value = lead & 0x0F
        length = 3
    } else {
        value = lead & 0x07
        length = 4
    }
    for k in 1..<length { value = (value << 6) | (UInt32(bytes[offset + k]) & 0x3F) }
    return (Unicode.Scalar(value) ?? "\u{FFFD}", length)
}

/// If a line break (with optional spaces around it) starts at byte `offset` (just after a
/// hyphen), where the text goes on: its byte, and the scalars skipped to get there.
private func joinedLineBreak(_ bytes: UnsafeBufferPointer<UInt8>, after offset: Int) -> (byte: Int, scalars: Int32)? {
    var next = offset
    var skipped: Int32 = 0
    var sawBreak = false
    while next < bytes.count {
        let (scalar, length) = decodeScalar(bytes, at: next)
        guard isSpace(scalar) else { break }
        if scalar == "\n" || scalar == "\r" { sawBreak = true }
        next += length
        skipped += 1
    }
    return sawBreak ? (next, skipped) : nil
}

private func isSpace(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x80
        ? (scalar == " " || scalar == "\n" || scalar == "\t" || scalar == "\r" || scalar == "\u{0C}"
            || scalar == "\u{0B}") : scalar.properties.isWhitespace
}

private func isLetter(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x80
        ? ((scalar.value | 0x20) >= 0x61 && (scalar.value | 0x20) <= 0x7a) : scalar.properties.isAlphabetic
}

/// Whether `scalar` is written after a letter as part of it: a combining mark, or a half-width
/// voicing mark (ﾞ, ﾟ).
func isMarkAfterLetter(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value == 0xFF9E || scalar.value == 0xFF9F || scalar.properties.generalCategory == .nonspacingMark
}
