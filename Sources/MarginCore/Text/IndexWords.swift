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

/// Chinese and Japanese letters (Han, kana, and the marks written among them: 々 〆 〇 ー), word
/// scalars of scripts written without spaces between words. A page index holds a run of them as
/// its overlapping pairs ("東京タワー": 東京 京タ タワ ワー), a run of one as itself, so any two
/// letters of a run are found as a word, and a longer query as the phrase of its pairs.
///
/// Changing this changes what an index holds (as for `isIndexWordScalar`).
@inline(__always)
public func isBigramScalar(_ scalar: Unicode.Scalar) -> Bool {
    let value = scalar.value
    guard value >= 0x3005 else { return false }
    switch value {
    case 0x3005...0x3007, 0x3021...0x3029, 0x3031...0x3035, 0x3038...0x303C, 0x3041...0x30FF, 0x31F0...0x31FF,
        0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0xFF66...0xFF9F, 0x20000...0x323AF:
        return isIndexWordScalar(scalar)
    default:
        return false
    }
}

/// Whether a folded term is one word of the index, nothing around it: word scalars only, none of
/// them held as pairs (`isBigramScalar`: a term of those is a phrase of pairs).
public func isOneIndexWord(_ term: String) -> Bool {
    !term.isEmpty && term.unicodeScalars.allSatisfy { isIndexWordScalar($0) && !isBigramScalar($0) }
}

/// The words a page index holds for a page's text: `indexWords` of its folded form, joined by
/// single spaces.
public func indexedWords(of text: String) -> String {
    indexWords(SearchableText(text).folded).joined(separator: " ")
}

/// The words of folded text, in order, each once per occurrence: runs of word scalars, and each
/// run of Chinese and Japanese letters as its pairs (`isBigramScalar`).
public func indexWords<C: Collection>(_ folded: C) -> [String] where C.Element == Unicode.Scalar {
    var words = [String]()
    var current = String.UnicodeScalarView()
    // The last letter of a run of Chinese or Japanese ones, and whether the run made a pair yet.
    var previous: Unicode.Scalar?
    var paired = false
    func endRun() {
        if let letter = previous, !paired { words.append(String(letter)) }
        previous = nil
        paired = false
    }
    func endWord() {
        if !current.isEmpty {
            words.append(String(current))
            current = String.UnicodeScalarView()
        }
    }
    for scalar in folded {
        if isIndexWordScalar(scalar) {
            if isBigramScalar(scalar) {
                endWord()
                if let letter = previous {
                    var pair = String.UnicodeScalarView()
                    pair.append(letter)
                    pair.append(scalar)
                    words.append(String(pair))
                    paired = true
                }
                previous = scalar
            } else {
                if previous != nil { endRun() }
                current.append(scalar)
            }
        } else {
            if previous != nil { endRun() }
            endWord()
        }
    }
    endRun()
    endWord()
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
        // A term's Chinese or Japanese letters are pairs of the page's own: open only where one
        // letter stands alone at an end (it may pair with the page's letter beside it).
        func isOpen<S: Sequence>(_ scalars: S) -> Bool where S.Element == Unicode.Scalar {
            var iterator = scalars.makeIterator()
            guard let edge = iterator.next(), isIndexWordScalar(edge) else { return false }
            guard isBigramScalar(edge) else { return true }
            return iterator.next().map { !isBigramScalar($0) } ?? true
        }
        openStart = isOpen(folded)
        openEnd = isOpen(folded.reversed())
    }
}
