import Foundation

// Text folded for matching (case, accents, ligatures, line breaks), with counts and tests over
// folded text that need no `SearchableText`.

public func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
    if scalar.value < 0x80 {
        let v = scalar.value
        return (v >= 0x30 && v <= 0x39) || ((v | 0x20) >= 0x61 && (v | 0x20) <= 0x7a) || v == 0x5f
    }
    return scalar.properties.isAlphabetic || scalar.properties.numericType != nil
}

/// The folded scalars and, for each, the position in `cased` it came from; grown by doubling.
struct FoldedBuffer {
    var scalars: UnsafeMutablePointer<Unicode.Scalar>
    var origins: UnsafeMutablePointer<Int32>
    var count = 0
    var capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        scalars = .allocate(capacity: capacity)
        origins = .allocate(capacity: capacity)
    }

    func deallocate() {
        scalars.deallocate()
        origins.deallocate()
    }

    @inline(__always)
    mutating func append(_ scalar: Unicode.Scalar, from position: Int32) {
        if count == capacity { grow(to: capacity * 2) }
        appendUnchecked(scalar, from: position)
    }

    /// Room for `extra` more scalars, so that `appendUnchecked` can follow.
    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: max(capacity * 2, count + extra)) }
    }

    @inline(__always)
    mutating func appendUnchecked(_ scalar: Unicode.Scalar, from position: Int32) {
        scalars[count] = scalar
        origins[count] = position
        count += 1
    }

    /// Appends the folded form of `scalar`: ASCII, most of most pages, lowercased in place;
    /// anything else through compatibility decomposition, without combining marks, lowercased
    /// (`FoldCache`).
    @inline(__always)
    mutating func appendFolded(_ scalar: Unicode.Scalar, from position: Int32) {
        let value = scalar.value
        if value < 0x80 {
            append((value >= 0x41 && value <= 0x5a) ? Unicode.Scalar(UInt8(value | 0x20)) : scalar, from: position)
            return
        }
        if count > 0, let voiced = KanaVoicing.composed(scalars[count - 1], with: scalar) {
            // A voicing mark after its kana, written apart (half-width ｶﾞ, or カ and U+3099 as
            // decomposed text has it): the voiced kana, as typed (ガ).
            scalars[count - 1] = voiced
            return
        }
        let fold = FoldCache.shared.fold(scalar)
        if count + fold.count > capacity { grow(to: max(capacity * 2, count + fold.count)) }
        for foldedScalar in fold {
            scalars[count] = foldedScalar
            origins[count] = position
            count += 1
        }
    }

    private mutating func grow(to newCapacity: Int) {
        let newScalars = UnsafeMutablePointer<Unicode.Scalar>.allocate(capacity: newCapacity)
        let newOrigins = UnsafeMutablePointer<Int32>.allocate(capacity: newCapacity)
        newScalars.moveInitialize(from: scalars, count: count)
        newOrigins.moveInitialize(from: origins, count: count)
        deallocate()
        scalars = newScalars
        origins = newOrigins
        capacity = newCapacity
    }
}

/// The folded form of each scalar met so far. Read-mostly (a scalar is folded once, then only
/// looked up), so readers share the lock: with a mutex here, searches reading pages side by side
/// put one another to sleep (a third of a loaded server's futex calls).
private final class FoldCache: @unchecked Sendable {
    static let shared = FoldCache()
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>
    private var cache = [UInt32: [Unicode.Scalar]]()

    private init() {
        lock = .allocate(capacity: 1)
        pthread_rwlock_init(lock, nil)
    }

    func fold(_ scalar: Unicode.Scalar) -> [Unicode.Scalar] {
        pthread_rwlock_rdlock(lock)
        let known = cache[scalar.value]
        pthread_rwlock_unlock(lock)
        if let known { return known }
        let folded: [Unicode.Scalar]
        if let typographic = typographicFold(scalar) {
            folded = typographic
        } else if (0x3041...0x30FF).contains(scalar.value) {
            // Kana keep their voicing marks: が is not か (ga, ka), as é is e.
            folded = [scalar]
        } else {
            let decomposed = String(scalar).decomposedStringWithCompatibilityMapping.lowercased()
            let result = decomposed.unicodeScalars.filter { $0.properties.generalCategory != .nonspacingMark }
            folded = result.isEmpty ? [scalar] : Array(result)
        }
        pthread_rwlock_wrlock(lock)
        cache[scalar.value] = folded
        pthread_rwlock_unlock(lock)
        return folded
    }
}

/// Kana and the voicing marks written after them: the voiced (゛) and semi-voiced (゜) marks as
/// combining marks (U+3099, U+309A) and as half-width ones (U+FF9E, U+FF9F), composed with
/// the kana before them where Unicode has the voiced letter (カ and ゛ are ガ, ハ and ゜ パ).
///
/// Changing this changes stored folded text and the words an index holds: a migration must
/// then fold them again (v14 in SQLite, v15 in PostgreSQL).
public enum KanaVoicing {
    /// Each kana's voiced (`[0]`) and semi-voiced (`[1]`) letter, where there is one.
    private static let table: [UInt32: (voiced: Unicode.Scalar?, semiVoiced: Unicode.Scalar?)] = {
        var table = [UInt32: (voiced: Unicode.Scalar?, semiVoiced: Unicode.Scalar?)]()
        for value in UInt32(0x3041)...0x30FF {
            guard let kana = Unicode.Scalar(value) else { continue }
            func composed(_ mark: UInt32) -> Unicode.Scalar? {
                var text = String.UnicodeScalarView()
                text.append(kana)
                text.append(Unicode.Scalar(mark)!)
                let scalars = Array(String(text).precomposedStringWithCanonicalMapping.unicodeScalars)
                return scalars.count == 1 ? scalars[0] : nil
            }
            let pair = (composed(0x3099), composed(0x309A))
            if pair.0 != nil || pair.1 != nil { table[value] = pair }
        }
        return table
    }()

    /// The letter `kana` and `mark` make, if `mark` is a voicing mark and there is one.
    @inline(__always)
    static func composed(_ kana: Unicode.Scalar, with mark: Unicode.Scalar) -> Unicode.Scalar? {
        switch mark.value {
        case 0x3099, 0xFF9E: table[kana.value]?.voiced
        case 0x309A, 0xFF9F: table[kana.value]?.semiVoiced
        default: nil
        }
    }

    /// The voicing marks that may stand apart: combining, then half-width.
    public static let marks: [Unicode.Scalar] = ["\u{3099}", "\u{309A}", "\u{FF9E}", "\u{FF9F}"]

    /// Whether text holds a voicing mark written apart (what the migrations fold again).
    public static func holdsMarks(_ text: String) -> Bool {
        text.unicodeScalars.contains { marks.contains($0) }
    }
}

/// Typography folded to what a keyboard types: curly quotes and apostrophes to `'` and `"`, hyphens,
/// dashes and the minus sign to `-`; a soft hyphen (an invisible place to break a word) is
/// dropped, so the word it sits in is one word. "don't" finds "don’t", "e-mail" finds "e‐mail".
/// Nil for any other scalar (folded by its compatibility decomposition).
///
/// Changing this changes stored folded text and, where a word scalar is involved, the words an
/// index holds: a migration must then fold them again (v11 in SQLite, v12 in PostgreSQL).
func typographicFold(_ scalar: Unicode.Scalar) -> [Unicode.Scalar]? {
    switch scalar.value {
    case 0x2018, 0x2019, 0x201A, 0x201B: return ["'"]
    case 0x201C, 0x201D, 0x201E, 0x201F: return ["\""]
    case 0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x2212: return ["-"]
    case 0xAD: return []
    default: return nil
    }
}

/// Text folded as every index and comparison in Margin folds it (case, accents, width,
/// ligatures): the one definition, used for stored search columns and for queries alike.
public func folded(_ text: String) -> String {
    SearchableText(text).foldedString
}

/// Whether the folded text of `text` holds every one of `terms` (folded, as `foldedTerm` makes
/// them): whether `SearchableText(text).foldedMatches(term, wholeWord: false)` finds each.
public func foldedText(_ text: String, containsAll terms: [[Unicode.Scalar]]) -> Bool {
    terms.allSatisfy { foldedMatchCount(text, of: $0, upTo: 1) > 0 }
}

/// How many times `term` (folded) occurs in the folded text of `text`, as many as
/// `SearchableText(text).foldedMatches(term, wholeWord: false)` finds (at most `limit`).
///
/// Without building a `SearchableText` when the text is ASCII with no hyphen before a line
/// break, as most pages are: its folded text is then the text with letters lowercased and each
/// run of white space one space (none before the first character or after the last), so the
/// term is looked for in the bytes themselves, its first byte found with `memchr`, a space of it
/// standing for a run of white space. A term with white space at an end, two spaces running or
/// white space other than a space is looked for in the folded bytes.
public func foldedMatchCount(_ text: String, of term: [Unicode.Scalar], upTo limit: Int = .max) -> Int {
    guard !term.isEmpty, limit > 0 else { return 0 }
    var text = text
    return text.withUTF8 { bytes -> Int in
        guard isPlainASCIIText(bytes) else {
            return min(
                limit, SearchableText(utf8Text: bytes).foldedMatches(term, wholeWord: false, first: limit == 1).count)
        }
        // ASCII text folds to ASCII without capitals: a term with anything else isn't in it.
        guard term.allSatisfy({ $0.value < 0x80 && !($0.value >= 0x41 && $0.value <= 0x5A) }) else { return 0 }
        let needle = term.map { UInt8(truncatingIfNeeded: $0.value) }
        let spaced =
            needle.first == 0x20 || needle.last == 0x20
            || needle.contains { $0 != 0x20 && isASCIISpace($0) }
            || zip(needle, needle.dropFirst()).contains { $0 == 0x20 && $1 == 0x20 }
        if spaced {
            let folded = collapsedASCII(bytes).folded
            return folded.withUnsafeBufferPointer { haystack in
                needle.withUnsafeBufferPointer { countOccurrences($0, in: haystack, upTo: limit) }
            }
        }
        return needle.withUnsafeBufferPointer { plainMatchCount($0, in: bytes, upTo: limit) }
    }
}

/// Whether the bytes are ASCII with no hyphen followed by white space holding a line break
/// (where `SearchableText` may join a word).
func isPlainASCIIText(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let base = bytes.baseAddress else { return true }
    let count = bytes.count
    var index = 0
    let raw = UnsafeRawPointer(base)
    while index + 8 <= count {
        if raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
        index += 8
    }
    while index < count {
        if base[index] >= 0x80 { return false }
        index += 1
    }
    var start = base
    let end = base + count
    while start < end, let found = memchr(start, 0x2D, end - start) {
        let at = UnsafePointer(found.assumingMemoryBound(to: UInt8.self))
        if lineBreakFollows(bytes, at - base + 1) { return false }
        start = at + 1
    }
    return true
}

/// Matches of a folded term (ASCII, no capitals; a space only between other bytes, one at a
/// time) in plain ASCII text (`isPlainASCIIText`), read as its folded text, not overlapping.
private func plainMatchCount(
    _ needle: UnsafeBufferPointer<UInt8>, in bytes: UnsafeBufferPointer<UInt8>, upTo limit: Int
) -> Int {
    guard let base = bytes.baseAddress, let first = needle.first else { return 0 }
    let count = bytes.count
    let upper: UInt8? = first >= 0x61 && first <= 0x7A ? first - 0x20 : nil
    // The next places of the first byte, as written and capitalized.
    func next(_ byte: UInt8?, from offset: Int) -> Int {
        guard let byte, offset < count, let found = memchr(base + offset, Int32(byte), count - offset) else {
            return count
        }
        return UnsafePointer(found.assumingMemoryBound(to: UInt8.self)) - base
    }
    var nextLower = next(first, from: 0)
    var nextUpper = next(upper, from: 0)
    var matches = 0
    while true {
        let start = min(nextLower, nextUpper)
        guard start < count else { return matches }
        // The rest of the term from just past `start`: letters as their lowercase, a space as a
        // run of white space (the term goes on after it, so the run isn't the text's last).
        var position = start + 1
        var matched = true
        for index in 1..<needle.count {
            if needle[index] == 0x20 {
                guard position < count, isASCIISpace(base[position]) else {
                    matched = false
                    break
                }
                while position < count, isASCIISpace(base[position]) { position += 1 }
            } else {
                guard position < count else {
                    matched = false
                    break
                }
                let byte = base[position]
                guard (byte &- 0x41 < 26 ? byte | 0x20 : byte) == needle[index] else {
                    matched = false
                    break
                }
                position += 1
            }
        }
        let resume: Int
        if matched {
            matches += 1
            if matches >= limit { return matches }
            resume = position
        } else {
            resume = start + 1
        }
        if nextLower < resume { nextLower = next(first, from: resume) }
        if nextUpper < resume { nextUpper = next(upper, from: resume) }
    }
}

/// Occurrences of `needle` in `haystack`, not overlapping, at most `limit`.
private func countOccurrences(
    _ needle: UnsafeBufferPointer<UInt8>, in haystack: UnsafeBufferPointer<UInt8>, upTo limit: Int
) -> Int {
    var matches = 0
    var offset = 0
    while matches < limit, let found = firstByteOccurrence(needle, in: haystack, from: offset) {
        matches += 1
        offset = found + needle.count
    }
    return matches
}

/// Where `needle` (not empty) first occurs in `haystack` from `offset` on: each place its first
/// byte is, found with `memchr`, compared whole with `memcmp`.
func firstByteOccurrence(
    _ needle: UnsafeBufferPointer<UInt8>, in haystack: UnsafeBufferPointer<UInt8>, from offset: Int
) -> Int? {
    guard let base = haystack.baseAddress, let first = needle.first, offset + needle.count <= haystack.count else {
        return nil
    }
    let end = base + (haystack.count - needle.count + 1)
    var start = base + offset
    while start < end, let found = memchr(start, Int32(first), end - start) {
        let at = UnsafePointer(found.assumingMemoryBound(to: UInt8.self))
        if memcmp(at, needle.baseAddress!, needle.count) == 0 { return at - base }
        start = at + 1
    }
    return nil
}

/// Whether the ASCII white space from `offset` on holds a line break.
private func lineBreakFollows(_ bytes: UnsafeBufferPointer<UInt8>, _ offset: Int) -> Bool {
    var next = offset
    while next < bytes.count, isASCIISpace(bytes[next]) {
        if bytes[next] == 0x0A || bytes[next] == 0x0D { return true }
        next += 1
    }
    return false
}
