/// Where a snippet of a page goes: the stretch of the page richest in the query's matches (the
/// most of its terms within two widths of each other, then the most matches; the first such
/// stretch), `width` characters of context either side of it, cut back to spaces; and every match
/// inside, to be marked. `matches` holds each term's matches in the text (ranges of positions,
/// in order); `isSpace(i)` says whether position `i` is a space; `count` is the text's length.
public func snippetPlan(
    _ matches: [[Range<Int>]], count: Int, width: Int, isSpace: (Int) -> Bool
) -> (start: Int, end: Int, marks: [Range<Int>])? {
    let all = matches.enumerated().flatMap { term, ranges in ranges.map { (term: term, range: $0) } }
        .sorted { ($0.range.lowerBound, $0.range.upperBound) < ($1.range.lowerBound, $1.range.upperBound) }
    guard !all.isEmpty else { return nil }
    // The window starting at each match: which terms and how many matches fall within 2 × width.
    var best = (terms: 0, count: 0, first: 0, last: 0)
    var last = 0
    for first in all.indices {
        last = max(last, first)
        while last + 1 < all.count, all[last + 1].range.upperBound - all[first].range.lowerBound <= 2 * width {
            last += 1
        }
        let terms = Set(all[first...last].map(\.term)).count
        if (terms, last - first + 1) > (best.terms, best.count) { best = (terms, last - first + 1, first, last) }
    }
    let low = all[best.first].range.lowerBound
    let high = all[best.first...best.last].map(\.range.upperBound).max() ?? low
    var start = max(0, low - width)
    var end = min(count, high + width)
    if start > 0, let space = (start..<low).first(where: isSpace) { start = space + 1 }
    if end < count, let space = (high..<end).last(where: isSpace) { end = space }
    // Every match inside (overlapping ones as one).
    var marks = [Range<Int>]()
    for match in all.map(\.range) where match.lowerBound >= start && match.upperBound <= end && !match.isEmpty {
        if let previous = marks.last, match.lowerBound <= previous.upperBound {
            marks[marks.count - 1] = previous.lowerBound..<max(previous.upperBound, match.upperBound)
        } else {
            marks.append(match)
        }
    }
    return (start, end, marks)
}

/// The text of a snippet plan: `piece(a..<b)` is the text between two positions; `joint(i)`
/// what stands before position `i` besides (a hyphen kept at a joined line end), outside the
/// marks where a mark begins or ends there.
public func snippetText(
    _ plan: (start: Int, end: Int, marks: [Range<Int>]), count: Int, open: String, close: String,
    joint: ((Int) -> String)? = nil, piece: (Range<Int>) -> String
) -> String {
    // A stretch with the joints inside it (and at its ends, `from` and `to`, when asked).
    func stretch(_ range: Range<Int>, ends: Bool) -> String {
        guard let joint else { return piece(range) }
        var text = ""
        var at = range.lowerBound
        let first = ends && range.lowerBound > plan.start ? range.lowerBound : range.lowerBound + 1
        let last = ends && range.upperBound < plan.end ? range.upperBound : range.upperBound - 1
        if first <= last {
            for position in first...last {
                let between = joint(position)
                guard !between.isEmpty else { continue }
                text += piece(at..<position) + between
                at = position
            }
        }
        return text + piece(at..<range.upperBound)
    }
    var text = plan.start > 0 ? "…" : ""
    var at = plan.start
    for mark in plan.marks {
        text += stretch(at..<mark.lowerBound, ends: true) + open + stretch(mark, ends: false) + close
        at = mark.upperBound
    }
    return text + stretch(at..<plan.end, ends: true) + (plan.end < count ? "…" : "")
}
