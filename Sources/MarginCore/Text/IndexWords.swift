/// Words as a page index holds them: the runs of letters, digits and marks of a page's folded
/// text (see `SearchableText`), everything else separating them. A backend indexes these words
/// (SQLite's FTS5, one token each) and answers a query term through `TermWords`; matches are
/// then checked against the page text, so the words only have to find every page that can hold
/// the term, never to decide it.
///
/// Changing what counts as a word changes what an existing index holds: a migration must then
/// rebuild it.
public func isIndexWordScalar(_ scalar: Unicode.Scalar) -> Bool {
    if scalar.isASCII {
        let value = scalar.value
        return (value >= 0x30 && value <= 0x39) || (value >= 0x61 && value <= 0x7A)
            || (value >= 0x41 && value <= 0x5A)
    }
    switch scalar.properties.generalCategory {
    case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
        .decimalNumber, .letterNumber, .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark, .privateUse:
        return true
    default:
        return false
    }
}

/// The words a page index holds for a page's text: `indexWords` of its folded form, joined by
/// single spaces.
public func indexedWords(of text: String) -> String {
    indexWords(SearchableText(text).folded).joined(separator: " ")
}

/// The words of folded text, in order, each once per occurrence.
public func indexWords<C: Collection>(_ folded: C) -> [String] where C.Element == Unicode.Scalar {
    var words = [String]()
    var current = String.UnicodeScalarView()
    for scalar in folded {
        if isIndexWordScalar(scalar) {
            current.append(scalar)
        } else if !current.isEmpty {
            words.append(String(current))
            current = String.UnicodeScalarView()
        }
    }
    if !current.isEmpty { words.append(String(current)) }
    return words
}

/// A search term (folded) as the words an index can look up. Where the term begins inside a word
/// (`openStart`: its first scalar is a word scalar), its first word may be the end of a longer
/// word of the page ("tion" in "section"); where it ends inside one (`openEnd`), its last word
/// may be the start of one. Words between are whole words of the page.
public struct TermWords: Equatable, Sendable {
    public var words: [String]
    public var openStart: Bool
    public var openEnd: Bool

    public init<C: Collection>(_ folded: C) where C.Element == Unicode.Scalar {
        words = indexWords(folded)
        openStart = folded.first.map(isIndexWordScalar) ?? false
        openEnd = folded.reversed().first.map(isIndexWordScalar) ?? false
    }
}
