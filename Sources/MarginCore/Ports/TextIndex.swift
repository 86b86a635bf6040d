import Foundation

/// The full-text index over page text and annotations, read inside a store transaction.
///
/// It answers with *candidates*: every page (or annotation) holding the terms is among them,
/// but a backend may return more (a term too short for its index, a looser match), so the
/// caller checks each one against the stored text. That keeps results exact whatever the
/// backend's index can do.
public protocol TextIndex {
    /// Pages whose folded text contains every folded term, best match first (the full-text
    /// index), passed to `visit` until it returns false. Candidates only: a term the index can't
    /// answer may not hold on every page given. `books`: only the pages of these books (nil: of
    /// every book; none for an empty list), here and below.
    ///
    /// `words`: only the pages holding (or not holding) some words as whole words of the index,
    /// in the order they have among all the candidates (see `WordTier`).
    func candidatePages(
        containing terms: [String], words: WordTier, books: [Int64]?, visit: (PageText) throws -> Bool
    ) throws
    /// The same, when `visit` will take no more than `wanted` pages (it may turn others down
    /// before it has them all): an index that ranks on a server then sends the best so many
    /// with their order, and the order of the rest only if `visit` goes on past them.
    func candidatePages(
        containing terms: [String], words: WordTier, books: [Int64]?, wanted: Int,
        visit: (PageText) throws -> Bool
    ) throws
    /// How many pages the index says hold every term, counting no further than `cap` (so the
    /// count costs the same in a library of any size); nil when no term is long enough to ask it.
    func countCandidatePages(containing terms: [String], books: [Int64]?, cap: Int) throws -> Int?
    /// The same of a tier of candidates (`WordTier`).
    func countCandidatePages(containing terms: [String], words: WordTier, books: [Int64]?, cap: Int) throws -> Int?
    /// Every page (of the books, or all), in book and page order, until `visit` returns false.
    func scanPages(books: [Int64]?, visit: (PageText) throws -> Bool) throws
    /// For each of `prefixes` (folded), the words of the index's vocabulary starting with it, in
    /// order; nil when there are more than `limit`: where words' other forms (their stems') are
    /// looked for. Asked together: one statement to a server, not one for each.
    func vocabularies(startingWith prefixes: [String], limit: Int) throws -> [[String]?]
    /// Highlights and memos whose folded text (highlight text and note, memo text) contains
    /// every folded term, best first: ("highlight" | "memo", id). Candidates only.
    func candidateAnnotations(containing terms: [String], books: [Int64]?) throws -> [(kind: String, id: Int64)]
    /// Words of the index's vocabulary that share runs of three letters with the folded `term`,
    /// the most alike first, at most `limit`: where a misspelt word's suggestions come from
    /// (the caller measures how far each is from the term).
    func wordsSharingTrigrams(with term: String, limit: Int) throws -> [String]
    /// How many pages hold `word` (a word of the vocabulary) as a whole word, counting no further
    /// than `cap`.
    func pagesHoldingWord(_ word: String, cap: Int) throws -> Int
    /// Readies what asking for the pages holding `terms` will ask the index first, where that
    /// saves waiting for it later (a server's: its statement sent now, with the next, and answered
    /// when asked); nothing for an index in this process. With `asking`, what the search will ask
    /// of the books it searches (`StoreReader.searchedBooks`) goes with it (one statement to a
    /// server, not two).
    func lookAhead(containing terms: [String], asking searched: BooksSearched?) throws
}

extension TextIndex {
    public func lookAhead(containing terms: [String], asking searched: BooksSearched?) throws {}

    public func lookAhead(containing terms: [String]) throws { try lookAhead(containing: terms, asking: nil) }

    public func candidatePages(
        containing terms: [String], words: WordTier, books: [Int64]?, wanted: Int,
        visit: (PageText) throws -> Bool
    ) throws {
        try candidatePages(containing: terms, words: words, books: books, visit: visit)
    }

    /// Every candidate page (see `candidatePages(containing:words:books:visit:)`).
    public func candidatePages(containing terms: [String], books: [Int64]?, visit: (PageText) throws -> Bool) throws {
        try candidatePages(containing: terms, words: .any, books: books, visit: visit)
    }
}

/// Candidate pages by the whole words they hold: a search shows first the pages holding each of
/// its one-word terms as a word of the index (not only inside longer words: "art" on the page,
/// not only "start"), then those holding another form of them (a stem's), then the rest. Each
/// tier keeps the order the candidates have together.
public struct WordTier: Hashable, Sendable {
    /// The page holds a word of each group (each folded index words), or more.
    public var holding: [[String]]
    /// Pages holding a word of each of these groups are left out (none left out when empty).
    public var notHolding: [[String]]

    public init(holding: [[String]] = [], notHolding: [[String]] = []) {
        self.holding = holding
        self.notHolding = notHolding
    }

    /// Every candidate.
    public static let any = WordTier()

    /// The candidates holding each of these words as a word.
    public static func holding(_ words: [String]) -> WordTier { WordTier(holding: words.map { [$0] }) }

    /// The candidates lacking one of these words or more: the rest.
    public static func lacking(_ words: [String]) -> WordTier { WordTier(notHolding: words.map { [$0] }) }

    /// The first group of `holding` whose every word holds the (folded) term as a piece, nil
    /// when none does. A page's index words are pieces of its folded text, so every page of the
    /// tier holds such a term: a backend finds those pages from the group's words alone, without
    /// looking for the term in the text or in the vocabulary.
    public func groupImplying(_ term: String) -> Int? {
        guard !term.isEmpty else { return nil }
        return holding.indices.first { index in
            !holding[index].isEmpty && holding[index].allSatisfy { $0.utf8.firstRange(of: term.utf8) != nil }
        }
    }

    /// A key for counts made of this tier's pages.
    public var key: String {
        func groups(_ list: [[String]]) -> String { list.map { $0.joined(separator: "|") }.joined(separator: "&") }
        return groups(holding) + "\u{1}" + groups(notHolding)
    }
}
