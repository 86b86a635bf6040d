import Foundation
import Poppler

/// What re-anchoring highlights on a new version of a PDF did.
public struct AnchorCounts: Sendable, Encodable, Equatable {
    public var moved = 0
    public var unchanged = 0
    public var orphaned = 0
}

/// Finds each highlight's text again in a new version: every occurrence of its (folded,
/// space-collapsed, de-hyphenated) text is a candidate, the stored prefix and suffix choose
/// between repeats, then poppler gives the new rects. Highlights that can't be found are marked
/// orphaned, never deleted.
func reanchor(_ highlights: [Highlight], pages: [PageText], document: Document) -> (updated: [Highlight], counts: AnchorCounts) {
    let searchable = pages.map { (number: $0.number, text: SearchableText($0.text)) }
    var counts = AnchorCounts()
    var updated = [Highlight]()
    for highlight in highlights {
        var result = highlight
        let term = foldedTerm(highlight.text)
        let wantedBefore = foldedTerm(highlight.prefix)
        let wantedAfter = foldedTerm(highlight.suffix)
        var best: (page: Int, index: Int, score: Int)?
        for (number, text) in searchable {
            for (index, range) in text.foldedMatches(term, wholeWord: false).enumerated() {
                let (before, after) = foldedContext(text, around: range)
                var score = commonSuffix(wantedBefore, before) + commonPrefix(wantedAfter, after)
                if number == highlight.page { score += 1 }
                if best == nil || score > best!.score { best = (number, index, score) }
            }
        }
        guard let best, let page = try? document.page(best.page) else {
            result.orphaned = true
            counts.orphaned += 1
            updated.append(result)
            continue
        }
        let matches = page.find(highlight.text)
        guard !matches.isEmpty else {
            result.orphaned = true
            counts.orphaned += 1
            updated.append(result)
            continue
        }
        let match = matches[min(best.index, matches.count - 1)]
        let rects = match.rects.map(\.array)
        let pageText = pages.first { $0.number == best.page }?.text ?? page.text
        let (prefix, suffix) = context(of: term, occurrence: best.index, in: pageText)
        let unchanged = best.page == highlight.page && rects == highlight.rects && !highlight.orphaned
        result.page = best.page
        result.rects = rects
        let exact = page.text(in: match.rects)
        if !exact.isEmpty { result.text = exact }
        result.prefix = prefix
        result.suffix = suffix
        result.orphaned = false
        if unchanged { counts.unchanged += 1 } else { counts.moved += 1 }
        updated.append(result)
    }
    return (updated, counts)
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
