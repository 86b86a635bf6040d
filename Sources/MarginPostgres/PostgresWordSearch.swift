import Foundation
import MarginCore
import PostgresNIO

/// A search term as the page words answer it (see migration v11): the words of the vocabulary
/// holding it, and how many times each holds it.
struct WordTerm {
    var words: [String] = []
    var counts: [Int64] = []
}

/// Search from the page words (`page_words`, `word`): the pages holding a term and its count on
/// each come from the words, so neither finding the pages nor ranking them reads their text.
/// `MARGIN_PLAIN=page-words` (or `all`) turns it off: every search reads the text, as before
/// (the tests compare both; bench/team-load.py measures both).
extension PostgresStore {
    /// Whether searches use the page words (unless `MARGIN_PLAIN` names `page-words`).
    static let usesPageWords: Bool = {
        let named = (ProcessInfo.processInfo.environment["MARGIN_PLAIN"] ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        return !named.contains("page-words") && !named.contains("all")
    }()

    /// Words of the vocabulary one term may stand for before the text is searched instead (as
    /// SQLite's index, `PageWords.maxExpansions`).
    static let maxExpansions = 5_000
    /// A term held by more words than this is found and counted in the text of the pages holding
    /// the others: reading all their pages' words costs more past it.
    static let countedInWords = 1_000

    /// Whether the words answer a term: letters and digits only (so it never spans two words:
    /// `isIndexWordScalar`), at least three of them (the vocabulary's trigram index finds the
    /// words that hold it).
    static func isWordTerm(_ term: String) -> Bool {
        term.unicodeScalars.count >= 3 && term.unicodeScalars.allSatisfy(isIndexWordScalar)
    }

    /// Each term's words, in one statement; nil (the text is searched then) when a term is not a
    /// word term or stands for more than `maxExpansions` words, or when every term stands for
    /// more than `countedInWords` (a piece of most pages' words: "the").
    func wordTerms(_ terms: [String]) throws -> [WordTerm]? {
        guard Self.usesPageWords, !terms.isEmpty, terms.allSatisfy(Self.isWordTerm) else { return nil }
        var sql = SQLBuilder(table: "word")
        let parts = terms.enumerated().map { index, term in
            let text = sql.bind(.text(term))
            let pattern = sql.bind(.text("%" + term + "%"))
            return
                "(SELECT \(index)::int8, word, ((length(word) - length(replace(word, \(text), ''))) / length(\(text)))::int8 "
                + "FROM word WHERE word LIKE \(pattern) LIMIT \(Self.maxExpansions + 1))"
        }
        var found = Array(repeating: WordTerm(), count: terms.count)
        for row in try run(parts.joined(separator: " UNION ALL "), sql.binds).rows {
            let (index, word, count) = try row.decode((Int64, String, Int64).self)
            found[Int(index)].words.append(word)
            found[Int(index)].counts.append(count)
        }
        guard found.allSatisfy({ $0.words.count <= Self.maxExpansions }),
            found.contains(where: { $0.words.count <= Self.countedInWords })
        else { return nil }
        return found
    }

    /// The pages holding every term, ranked as `relevance` ranks when there are at most
    /// `SearchRanking.rankedPages` (and more than one); past that, in library order, as the text
    /// search gives them (the first pages come sooner that way than from the words).
    func candidatePages(
        _ found: [WordTerm], terms: [String], bookId: Int64?, visit: (PageText) throws -> Bool
    ) throws {
        // Counted first: ranking looks up every page found (its length, its place), which for
        // a word on most pages costs more than listing the first few in library order.
        let cap = SearchRanking.rankedPages + 1
        let matches = try countPages(found, terms: terms, bookId: bookId, cap: cap)
        counted.record(terms: terms, bookId: bookId, count: matches, cap: cap)
        guard matches > 0 else { return }
        guard matches <= SearchRanking.rankedPages else { return try pagesInOrder(terms, bookId: bookId, visit: visit) }
        var sql = SQLBuilder(table: "page_word")
        let (pages, average) = try libraryStatistics()
        let (from, frequencies) = matching(found, terms: terms, bookId: bookId, &sql)
        var parts = [String]()
        for (index, frequency) in frequencies.enumerated() {
            var weight = 1.0
            if terms.count > 1 {
                weight = try statistics.weight(of: terms[index]) {
                    bm25Weight(pages: pages, holding: try pagesHolding(found[index], term: terms[index]))
                }
            }
            parts.append(bm25(weight: weight, frequency: frequency, length: "p.words", average: average, &sql))
        }
        let ids = try run(
            "SELECT p.id \(from) ORDER BY (\(parts.joined(separator: " + "))) DESC, p.\"bookId\", p.number", sql.binds
        ).rows.map { try $0.decode(Int64.self) }
        try visitPages(ids, visit: visit)
    }

    /// How many pages hold every term, counting up to `cap`.
    func countPages(_ found: [WordTerm], terms: [String], bookId: Int64?, cap: Int) throws -> Int {
        guard !found.contains(where: \.words.isEmpty) else { return 0 }
        var sql = SQLBuilder(table: "page_word")
        let (from, _) = matching(found, terms: terms, bookId: bookId, &sql, needsPages: false)
        return Int(
            try run("SELECT count(*) FROM (SELECT 1 \(from) LIMIT \(max(0, cap))) AS found", sql.binds).rows.first?
                .decode(Int64.self) ?? 0)
    }

    /// How many pages of the library hold a term.
    private func pagesHolding(_ found: WordTerm, term: String) throws -> Double {
        var sql = SQLBuilder(table: "page_word")
        guard found.words.count <= Self.countedInWords else {
            let filter = sql.contains([term], bookId: nil)
            return try run("SELECT count(*)::float8 FROM page\(filter)", sql.binds).rows.first?.decode(Double.self) ?? 0
        }
        return try run(
            "SELECT count(DISTINCT page)::float8 FROM page_word WHERE word = ANY(\(sql.bind(array: found.words))::text[])",
            sql.binds
        ).rows.first?.decode(Double.self) ?? 0
    }

    /// `FROM … WHERE …` of the pages (alias `p`; without `needsPages`, only when a condition
    /// needs them) holding every term, and each term's count on them: from the words for a term of at most `countedInWords` words (the sum of their counts
    /// there times the term's count in them), from the text for the others (only pages holding
    /// the first kind are read).
    private func matching(
        _ found: [WordTerm], terms: [String], bookId: Int64?, _ sql: inout SQLBuilder, needsPages: Bool = true
    ) -> (from: String, frequencies: [String]) {
        var words = [String]()
        var counts = [Int64]()
        var owners = [Int64]()
        var sums = [String]()
        var frequencies = [String]()
        var conditions = [String]()
        for (index, term) in found.enumerated() {
            if term.words.count <= Self.countedInWords {
                words += term.words
                counts += term.counts
                owners += Array(repeating: Int64(sums.count), count: term.words.count)
                frequencies.append("found.f\(sums.count)")
                sums.append("(sum(w.count * e.count) FILTER (WHERE e.term = \(sums.count)))::float8 AS f\(sums.count)")
            } else {
                conditions.append(sql.holds(terms[index], column: "p.norm"))
                frequencies.append(textFrequency(terms[index], column: "p.norm", &sql))
            }
        }
        if let bookId { conditions.append("p.\"bookId\" = \(sql.bind(.integer(bookId)))") }
        let having = sums.count > 1 ? " HAVING count(DISTINCT e.term) = \(sums.count)" : ""
        let found =
            "(SELECT w.page, \(sums.joined(separator: ", ")) FROM unnest(\(sql.bind(array: words))::text[], "
            + "\(sql.bind(array: counts))::int8[], \(sql.bind(array: owners))::int8[]) AS e(word, count, term) "
            + "CROSS JOIN LATERAL (SELECT page, count FROM page_word WHERE word = e.word OFFSET 0) AS w "
            + "GROUP BY w.page\(having)) AS found"
        guard needsPages || !conditions.isEmpty else { return ("FROM \(found)", frequencies) }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        // Each word's pages, and then each page, looked up by the index (`OFFSET 0` keeps them
        // so): PostgreSQL, misjudging how few they are (always, before it has statistics, as
        // after `db copy`), would rather read the whole table for a hash join: 114 ms, not 1.
        return (
            "FROM \(found) CROSS JOIN LATERAL (SELECT id, \"bookId\", number, words, norm FROM page "
                + "WHERE id = found.page OFFSET 0) AS p\(filter)", frequencies
        )
    }
}

/// A term's weight in Okapi BM25, by how many of the library's pages hold it.
func bm25Weight(pages: Double, holding count: Double) -> Double {
    log((pages - count + 0.5) / (count + 0.5) + 1)
}

/// One term's part of a page's Okapi BM25 score, as SQLite's FTS5 works it out (k1 = 1.2,
/// b = 0.75): its weight, its count on the page (`frequency`), the page's length in index words
/// against the library's average.
func bm25(weight: Double, frequency: String, length: String, average: Double, _ sql: inout SQLBuilder) -> String {
    "\(sql.bind(.real(weight))) * \(frequency) * 2.2 / (\(frequency) + 1.2 * (0.25 + 0.75 * \(length) / \(sql.bind(.real(average)))))"
}

/// How many times a term is in a column of folded text (non-overlapping, from the start).
func textFrequency(_ term: String, column: String, _ sql: inout SQLBuilder) -> String {
    let text = sql.bind(.text(term))
    return "((length(\(column)) - length(replace(\(column), \(text), '')))::float8 / length(\(text)))"
}
