/// Splits a query into terms: words, and "quoted phrases" (an unclosed quote runs to the end;
/// typographic quotes “…” „…“ quote too).
/// A word written `=word` is the word (`wholeWordTerms` says it must stand alone).
public func parseQuery(_ query: String) -> [String] {
    parsedQuery(query).map(\.term)
}

/// The terms of a query written `=word`: each must match as a whole word, not inside one. As
/// `foldedTerm` folds them, or as written with `caseSensitive`.
public func wholeWordTerms(_ query: String, caseSensitive: Bool = false) -> Set<[Unicode.Scalar]> {
    Set(parsedQuery(query).filter(\.whole).map { caseSensitive ? casedTerm($0.term) : foldedTerm($0.term) })
}

/// `parseQuery`'s terms, each with whether it was written `=word`.
private func parsedQuery(_ query: String) -> [(term: String, whole: Bool)] {
    rawTerms(query).map { raw in
        raw.quoted || !raw.text.hasPrefix("=") || raw.text.count == 1
            ? (raw.text, false) : (String(raw.text.dropFirst()), true)
    }
}

/// The query's words and phrases as written (`=word` kept), each with whether it was quoted.
public func rawTerms(_ query: String) -> [(text: String, quoted: Bool)] {
    var terms = [(text: String, quoted: Bool)]()
    var current = ""
    var quoted = false
    for character in query {
        if character == "\"" || character == "“" || character == "”" || character == "„" {
            if !current.trimmingWhitespace().isEmpty { terms.append((current, quoted)) }
            current = ""
            quoted.toggle()
        } else if !quoted && character.isWhitespace {
            if !current.isEmpty { terms.append((current, false)) }
            current = ""
        } else {
            current.append(character)
        }
    }
    if !current.trimmingWhitespace().isEmpty { terms.append((current, quoted)) }
    return terms.map { ($0.text.trimmingWhitespace(), $0.quoted) }.filter { !$0.text.isEmpty }
}

/// What one query may ask: its cost grows with its distinct words, so a query that repeats a
/// common word (a page anywhere can send one to `margin serve`) or runs to pages of text is
/// refused with a clear error rather than searched for minutes.
public enum QueryLimits {
    /// Characters in a query (a regular expression too).
    public static let characters = 1_000
    /// Distinct words, counting each word of a phrase.
    public static let words = 32
}

/// The query's terms, each once: a term repeated (as folded, or exactly with `caseSensitive`)
/// is one term, since a page holding it once holds it as often as asked. Past
/// `QueryLimits`, an error that says the limit.
public func distinctQueryTerms(_ query: String, caseSensitive: Bool = false) throws -> [String] {
    try checkQueryLength(query)
    var seen = Set<[Unicode.Scalar]>()
    var terms = [String]()
    var words = 0
    for term in parseQuery(query) where seen.insert(caseSensitive ? casedTerm(term) : foldedTerm(term)).inserted {
        terms.append(term)
        words += term.split(whereSeparator: \.isWhitespace).count
    }
    guard words <= QueryLimits.words else {
        throw MarginError.invalidArgument(
            "a query may hold at most \(QueryLimits.words) different words (this one has \(words)): search for fewer")
    }
    return terms
}

/// Refuses a query longer than `QueryLimits.characters`.
public func checkQueryLength(_ query: String) throws {
    let count = query.unicodeScalars.count
    guard count <= QueryLimits.characters else {
        throw MarginError.invalidArgument(
            "a query may be at most \(QueryLimits.characters) characters long (this one has \(count))")
    }
}
