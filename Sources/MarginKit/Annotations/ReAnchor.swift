import Foundation
import MarginCore

/// What re-anchoring highlights on a new version of a PDF did.
public struct AnchorCounts: Sendable, Encodable, Equatable {
    public var moved = 0
    public var unchanged = 0
    public var orphaned = 0

    public init() {}
}

/// Finds each highlight's text again in a new version: every occurrence of its (folded,
/// space-collapsed, de-hyphenated) text is a candidate, the stored prefix and suffix choose
/// between repeats, then poppler gives the new rects. Highlights that can't be found are marked
/// orphaned, never deleted.
func reanchor(
    _ highlights: [Highlight], pages: [PageText], document: any PDFDocument, recognized: [Int: OCRPage] = [:]
) -> (
    updated: [Highlight], counts: AnchorCounts
) {
    let searchable = pages.map { (number: $0.number, text: SearchableText($0.text)) }
    let texts = Dictionary(pages.map { ($0.number, $0.text) }, uniquingKeysWith: { a, _ in a })
    var wordIndex = WordIndex(searchable.map(\.text))
    var locators = [Int: PageLocator]()
    var counts = AnchorCounts()
    var updated = [Highlight]()
    for highlight in highlights {
        var result = highlight
        let term = foldedTerm(highlight.text)
        let wantedBefore = foldedTerm(highlight.prefix)
        let wantedAfter = foldedTerm(highlight.suffix)
        var best: (page: Int, range: Range<Int>, score: Int)?
        func look(at candidates: [Int]) {
            for (number, text) in candidates.map({ searchable[$0] }) {
                guard let found = bestOccurrence(of: term, between: wantedBefore, and: wantedAfter, in: text) else {
                    continue
                }
                let score = found.score + (number == highlight.page ? 1 : 0)
                if best == nil || score > best!.score { best = (number, found.range, score) }
            }
        }
        // First the pages that hold the rarest word of the highlight and its context (text
        // repeated on every page is told apart by its context); then every page that can hold it.
        let narrow = wordIndex.candidates(forContext: wantedBefore, term, wantedAfter)
        if let narrow { look(at: narrow) }
        if best == nil || best!.score < (wantedBefore.count + wantedAfter.count) / 2 {
            look(at: wordIndex.candidates(for: term))
        }
        guard let best, let text = texts[best.page] else {
            result.orphaned = true
            counts.orphaned += 1
            updated.append(result)
            continue
        }
        if locators[best.page] == nil {
            locators[best.page] = PageLocator(
                number: best.page, text: text, page: (try? document.page(best.page)).map { readable($0, recognized) })
        }
        guard let found = locators[best.page]?.occurrence(at: best.range, keepHyphens: highlight.text.contains("-"))
        else {
            result.orphaned = true
            counts.orphaned += 1
            updated.append(result)
            continue
        }
        let rects = found.rects.map(\.array)
        let unchanged = best.page == highlight.page && rects == highlight.rects && !highlight.orphaned
        result.page = best.page
        result.rects = rects
        if !found.text.isEmpty { result.text = found.text }
        result.prefix = found.prefix
        result.suffix = found.suffix
        result.orphaned = false
        if unchanged { counts.unchanged += 1 } else { counts.moved += 1 }
        updated.append(result)
    }
    return (updated, counts)
}

/// Of the occurrences of the folded `term` in `text`, the first whose surroundings best match
/// the folded context stored with it (`before` and `after`): how re-anchoring tells a repeated
/// text apart, and where reading order places a highlight on its page.
func bestOccurrence(
    of term: [Unicode.Scalar], between before: [Unicode.Scalar], and after: [Unicode.Scalar], in text: SearchableText
) -> (range: Range<Int>, score: Int)? {
    var best: (range: Range<Int>, score: Int)?
    for range in text.foldedMatches(term, wholeWord: false) {
        let (found, following) = foldedContext(text, around: range)
        let score = commonSuffix(before, found) + commonPrefix(after, following)
        if best == nil || score > best!.score { best = (range, score) }
    }
    return best
}

/// The folded text just before and after a match in `cased` coordinates.
private func foldedContext(_ text: SearchableText, around range: Range<Int>) -> ([Unicode.Scalar], [Unicode.Scalar]) {
    func fold(_ slice: ArraySlice<Unicode.Scalar>) -> [Unicode.Scalar] { foldedTerm(scalarString(slice)) }
    let before = fold(text.cased[max(0, range.lowerBound - 40)..<range.lowerBound])
    let after = fold(text.cased[range.upperBound..<min(text.cased.count, range.upperBound + 40)])
    return (before, after)
}

private func commonSuffix(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
    var count = 0
    while count < a.count, count < b.count, a[a.count - 1 - count] == b[b.count - 1 - count] { count += 1 }
    return count
}

private func commonPrefix(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
    var count = 0
    while count < a.count, count < b.count, a[count] == b[count] { count += 1 }
    return count
}

/// Where each page of an old version went in a new one (old number → new number), found by
/// runs of four words the two share. Pages with no such run (a scan, a rewritten page) follow
/// the nearest matched page before them, keeping their distance to it.
func pageMapping(old: [PageText], new: [PageText]) -> [Int: Int] {
    func shingles(_ text: String) -> Set<String> {
        let words = scalarString(SearchableText(text).folded).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard words.count >= 4 else { return words.isEmpty ? [] : [words.joined(separator: " ")] }
        return Set((0...(words.count - 4)).map { words[$0..<$0 + 4].joined(separator: " ") })
    }
    var index = [String: [Int]]()
    for page in new {
        for shingle in shingles(page.text) { index[shingle, default: []].append(page.number) }
    }
    var mapping = [Int: Int]()
    for page in old {
        var votes = [Int: Int]()
        let own = shingles(page.text)
        // A run found on many pages (a running header) says nothing.
        for shingle in own {
            if let pages = index[shingle], pages.count <= 3 { for number in pages { votes[number, default: 0] += 1 } }
        }
        let best = votes.max { a, b in
            (a.value, -abs(a.key - page.number)) < (b.value, -abs(b.key - page.number))
        }
        if let best, best.value * 4 >= min(own.count, 8) { mapping[page.number] = best.key }
    }
    var result = mapping
    var offset = 0
    for page in old.map(\.number).sorted() {
        if let mapped = mapping[page] { offset = mapped - page } else { result[page] = page + offset }
    }
    return result
}

/// Which pages hold which folded words, so that finding a highlight again looks only at the
/// pages that can hold it: linear in the book, not in highlights × pages.
struct WordIndex {
    private var pages = [String: [Int]]()
    private var pieces = [String: [Int]]()

    init(_ texts: [SearchableText]) {
        for (index, text) in texts.enumerated() {
            for word in Set(words(text.folded)) { pages[word, default: []].append(index) }
        }
    }

    /// The pages holding the rarest whole word of a highlight's context and text (the words at
    /// the cut ends may be parts of words, so they don't count); nil when there is none.
    func candidates(forContext before: [Unicode.Scalar], _ term: [Unicode.Scalar], _ after: [Unicode.Scalar]) -> [Int]?
    {
        let whole = Array(words(before).dropFirst()) + words(term) + Array(words(after).dropLast())
        let known = whole.compactMap { word in pages[word].map { (word, $0) } }
        return known.min { $0.1.count < $1.1.count }?.1
    }

    /// Indexes of the pages that may hold `term` (folded), in page order.
    mutating func candidates(for term: [Unicode.Scalar]) -> [Int] {
        let termWords = words(term)
        guard !termWords.isEmpty else { return [] }
        if termWords.count >= 3 {
            // Words inside the term are whole words on the page.
            let inner = termWords[1..<termWords.count - 1]
            let rarest = inner.min { (pages[$0]?.count ?? 0) < (pages[$1]?.count ?? 0) } ?? inner[inner.startIndex]
            return pages[rarest] ?? []
        }
        // The first and last words may be parts of words on the page.
        let piece = termWords.max { $0.count < $1.count } ?? termWords[0]
        if let known = pieces[piece] { return known }
        var found = Set<Int>()
        for (word, numbers) in pages where word.contains(piece) { found.formUnion(numbers) }
        let sorted = found.sorted()
        pieces[piece] = sorted
        return sorted
    }
}

private func words(_ scalars: [Unicode.Scalar]) -> [String] {
    var result = [String]()
    var current = String.UnicodeScalarView()
    for scalar in scalars {
        if isWordScalar(scalar) {
            current.append(scalar)
        } else if !current.isEmpty {
            result.append(String(current))
            current = String.UnicodeScalarView()
        }
    }
    if !current.isEmpty { result.append(String(current)) }
    return result
}
