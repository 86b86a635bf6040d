/// How many edits turn `a` into `b`: a character inserted, removed, changed, or two side by side
/// swapped (optimal string alignment); counting stops past `limit` (the result is then
/// `limit + 1`), so far-off words cost little.
public func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], limit: Int) -> Int {
    if abs(a.count - b.count) > limit { return limit + 1 }
    if a.isEmpty || b.isEmpty { return min(limit + 1, max(a.count, b.count)) }
    var before = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        var lowest = current[0]
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            var best = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { best = min(best, before[j - 2] + 1) }
            current[j] = best
            lowest = min(lowest, best)
        }
        if lowest > limit { return limit + 1 }
        (before, previous, current) = (previous, current, before)
    }
    return min(previous[b.count], limit + 1)
}

/// A word's first letter, first two, and last two: where the vocabulary is asked for the words
/// a misspelling of it may have been.
public func wordEnds(_ scalars: [Unicode.Scalar]) -> (first: String, two: String, end: String) {
    func text(_ part: ArraySlice<Unicode.Scalar>) -> String { String(String.UnicodeScalarView(part)) }
    return (text(scalars.prefix(1)), text(scalars.prefix(2)), text(scalars.suffix(2)))
}

/// `text` for a LIKE pattern with `\` as its escape: its `%`, `_` and `\` stand for themselves.
public func likeEscaped(_ text: String) -> String {
    var escaped = ""
    for character in text {
        if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
        escaped.append(character)
    }
    return escaped
}
