import Foundation
import MarginCore
import PostgresNIO

/// A search term as the page words answer it: the words of the vocabulary holding it; none at
/// all (`lookedUp` false) for a term they don't answer, which the text of the pages the other
/// terms find is searched for.
struct WordTerm {
    var words: [String] = []
    var lookedUp = false
}

/// Search from the page words (`page_word`, `word`): the pages holding a term and its count on
/// each come from the words, so neither finding the pages nor ranking them reads their text.
/// A phrase's pages are found from its words too (`phraseWords`), their text checked.
/// `MARGIN_PLAIN=page-words` (or `all`) turns it off: every search reads the text, as before
/// (the tests compare both; bench/team-load.py measures both).
extension PostgresStore {
    /// Whether searches use the page words (unless `MARGIN_PLAIN` names `page-words`).
    static let usesPageWords = FastPaths.isOn("page-words")

    /// A term held by more words than this is found and counted in the text of the pages holding
    /// the others (alone, the text is searched): it is on most pages, and reading all their words
    /// costs more than reading the text of the first few. "the", in 159 words of the bench
    /// library's vocabulary and on 9,905 of its 11,655 pages, was served in 11.3 ms from the
    /// words and 10.0 ms from the text.
    static let countedInWords = 100

    /// Whether the words answer a term: one index word (`isOneIndexWord`: letters and digits, so
    /// it never spans two words; none Chinese or Japanese, which are held as pairs), at least
    /// three scalars (the vocabulary's trigram index finds the words that hold it).
    static func isWordTerm(_ term: String) -> Bool {
        term.unicodeScalars.count >= 3 && isOneIndexWord(term)
    }

    /// Each word term's words, in one statement; nil (the text is searched then) when no term
    /// is one. A term held by more than `countedInWords` words (a piece of most pages' words) is
    /// left to the text too.
    func wordTerms(_ terms: [String]) throws -> [WordTerm]? {
        guard Self.usesPageWords else { return nil }
        return try counted.wordTerms(terms) { try lookUpWordTerms(terms) }
    }

    /// Sends the look-up of the terms' words (`wordTerms`) ahead, unless the transaction made or
    /// sent it already: a search sends it first, with what it asks of the books it searches
    /// (`searched`: a search finding nothing had sent that on its own, and one looking for other
    /// forms of its words had waited for their languages between its look-ups of words).
    func lookAhead(containing terms: [String], asking searched: BooksSearched?) throws {
        if !sent.sending { try askVersion() }
        guard Self.usesPageWords, Self.sendsAhead, !sent.sending, terms.contains(where: Self.isWordTerm),
            !counted.knowsWords(terms), !shownBooks.sentWords(terms)
        else { return }
        // Known from earlier transactions (their version checked when read): nothing to send.
        if usesMemory, memory.knows(terms: terms.filter(Self.isWordTerm)),
            searched.map({ shownBooks.facts($0) != nil || memory.knows(facts: $0) }) ?? true
        {
            return
        }
        sent.sending = true
        defer { sent.sending = false }
        let facts = searched.flatMap { asked in
            shownBooks.facts(asked) == nil && shownBooks.wordsSent(withFacts: asked) == nil ? asked : nil
        }
        shownBooks.sent(words: terms, facts: facts)
        _ = try lookUpWordTerms(terms, facts: facts)
    }

    /// The terms' words; with `facts`, what `searchedBooks` is asked read in the same statement
    /// (its one row first) and kept for it.
    private func lookUpWordTerms(_ terms: [String], facts: ShownBooks.Facts? = nil) throws -> [WordTerm]? {
        let asked = terms.indices.filter { Self.isWordTerm(terms[$0]) }
        guard !asked.isEmpty else { return nil }
        if !shownBooks.sentWords(terms),
            let known = try remembered({ memory.words(of: asked.map { terms[$0] }, at: $0) })
        {
            var found = Array(repeating: WordTerm(), count: terms.count)
            for (index, words) in zip(asked, known) { found[index] = words }
            return found.contains(where: \.lookedUp) ? found : nil
        }
        let facts = sent.sending ? facts : shownBooks.takeFactsSent(withWords: terms)
        var sql = SQLBuilder(table: facts == nil ? "word" : Book.entity)
        let told = facts.map { "(SELECT -1::int8, NULL::text, f.* FROM (\(factsStatement($0, &sql))) AS f) UNION ALL " }
        let more = facts == nil ? "" : ", NULL, NULL, NULL, NULL"
        let parts = asked.map { index in
            let pattern = sql.bind(.text("%" + terms[index] + "%"))
            return "(SELECT \(index)::int8, word\(more) FROM word WHERE word LIKE \(pattern) "
                + "LIMIT \(Self.countedInWords + 1))"
        }
        var found = Array(repeating: WordTerm(), count: terms.count)
        for index in asked { found[index].lookedUp = true }
        let statement = (told ?? "") + parts.joined(separator: " UNION ALL ")
        for row in try run(statement, sql.binds, kinds: sql.kinds).rows {
            guard let facts else {
                let (index, word) = try row.decode((Int64, String).self)
                found[Int(index)].words.append(word)
                continue
            }
            let columns = row.makeRandomAccess()
            let index = try columns[0].decode(Int64.self)
            guard index < 0 else {
                found[Int(index)].words.append(try columns[1].decode(String.self))
                continue
            }
            let told = try Self.searched(
                columns[2].decode(Int64.self), columns[3].decode(Int64.self), columns[4].decode(String?.self),
                columns[5].decode([String]?.self))
            shownBooks.keep(facts, told)
            try remember { memory.keep(facts: facts, told, at: $0) }
        }
        for index in asked where found[index].words.count > Self.countedInWords { found[index] = WordTerm() }
        try remember { memory.keep(words: asked.map { (terms[$0], found[$0]) }, at: $0) }
        return found.contains(where: \.lookedUp) ? found : nil
    }

    /// The pages holding every term, ranked as `relevance` ranks when there are at most
    /// `SearchRanking.rankedPages` (and more than one), by the terms it ranks by (`isRanked`);
    /// past that, or with none of those, in library order, as the text search gives them (the
    /// first pages come sooner that way than from the words).
    func candidatePages(
        _ found: [WordTerm], terms: [String], books: [Int64]?, words: WordTier, wanted: Int? = nil,
        visit: (PageText) throws -> Bool
    ) throws {
        // Ranking looks up every page found (its length, its place), which for a word on most
        // pages costs more than listing the first few in library order: the pages are counted
        // first, in the same statement when only their words are asked about (the pages found
        // once, then ranked only when few enough), else in a statement before.
        let cap = SearchRanking.rankedPages + 1
        let ranked = terms.indices.filter { Self.isRanked(terms[$0]) }
        if Self.countsAsRanks, !ranked.isEmpty, !found.contains(where: { $0.lookedUp && $0.words.isEmpty }) {
            let flagging = flaggedGroups(found, books: books, words: words)
            var sql = SQLBuilder(table: "page_word")
            let score = try rankScore(
                found, terms: terms, ranked: ranked, books: books, words: words, flagging: flagging, &sql)
            // With conditions on the pages' rows (their book, their text), those are counted;
            // with the tier's groups flagged, its pages and all of them.
            let counted = score.conditions ? "found \(score.pages)" : "found"
            let tier = flagging.map { "found.tier = \((Int64(1) << $0.count) - 1)" }
            let counts =
                tier.map { "count(*) FILTER (WHERE \($0)) AS n, count(*) AS every" }
                ?? "count(*) AS n, NULL::int8 AS every"
            let kept = (tier.map { [$0] } ?? []) + ["total.n BETWEEN 2 AND \(SearchRanking.rankedPages)"]
            let order = "r.score DESC, r.\"bookId\", r.number"
            // Only the best when the search takes a few and the pages' scores are their words'
            // alone: every page is scored, the best few (and those tied with the last) looked up
            // and sent, with room for some the search turns down.
            let best = wanted.flatMap { wanted in
                Self.sendsBest && !score.conditions && score.expression == "found.s" ? wanted + wanted / 4 + 8 : nil
            }
            // And the text of as many as it takes, and a few (each a page's text decompressed, sent
            // and decoded: the first 64 for a page of 50 hits).
            let texts = best == nil ? Self.firstPages : min(Self.firstPages, (wanted ?? 0) + 4)
            let statement =
                if let best {
                    "WITH found AS MATERIALIZED (\(score.found)), total AS (SELECT \(counts) FROM found), best AS "
                        + "(SELECT found.page, found.s FROM found, total WHERE \(kept.joined(separator: " AND ")) "
                        + "ORDER BY found.s DESC FETCH FIRST \(best) ROWS WITH TIES) "
                        + rankedWithFirstPages(
                            ["total.n", "total.every", "r.id"],
                            "FROM total LEFT JOIN LATERAL (SELECT p.id, best.s AS score, p.\"bookId\", p.number FROM "
                                + "best CROSS JOIN LATERAL (SELECT id, \"bookId\", number FROM page WHERE id = best.page "
                                + "OFFSET 0) AS p) AS r ON true", order: order, first: texts)
                } else {
                    "WITH found AS MATERIALIZED (\(score.found)) "
                        + rankedWithFirstPages(
                            ["total.n", "total.every", "r.id"],
                            "FROM (SELECT \(counts) FROM \(counted)) AS total LEFT JOIN LATERAL (SELECT p.id, "
                                + "\(score.expression) AS score, p.\"bookId\", p.number FROM found \(score.pages)"
                                + "\(score.conditions ? " AND " : " WHERE ")\(kept.joined(separator: " AND "))) AS r ON true",
                            order: order)
                }
            let answer = try run(statement, score.binds, kinds: sql.kinds).rows
            let rows = try answer.map { try $0.decode((Int64, Int64?, Int64?).self) }
            let matches = Int(min(rows.first?.0 ?? 0, Int64(cap)))
            self.counted.record(terms: countKey(terms, words), books: books, count: matches, cap: cap)
            if let every = rows.first?.1 {
                // Every page holding the terms, counted whole: the search's count past its limit.
                self.counted.record(terms: countKey(terms, .any), books: books, count: Int(every), cap: Int.max)
            }
            guard matches > 0 else { return }
            guard matches <= SearchRanking.rankedPages, matches > 1 else {
                return try pagesInOrder(terms, books: books, words: words, visit: visit)
            }
            let ids = rows.compactMap(\.2)
            let first = try firstPages(answer, id: 2, count: texts)
            guard try visitPages(ids, first: first, count: texts, visit: visit), ids.count < matches else {
                return
            }
            // Past the best: the order of them all, the pages not yet visited read as before.
            let visited = Set(ids)
            let rest = try run(
                "WITH found AS MATERIALIZED (\(score.found)) SELECT p.id FROM found \(score.pages) WHERE "
                    + "\(tier ?? "true") ORDER BY found.s DESC, p.\"bookId\", p.number", score.binds, kinds: sql.kinds
            ).rows.map { try $0.decode(Int64.self) }
            try visitPages(rest.filter { !visited.contains($0) }, visit: visit)
            return
        }
        let matches = try countPages(found, terms: terms, books: books, words: words, cap: cap)
        counted.record(terms: countKey(terms, words), books: books, count: matches, cap: cap)
        guard matches > 0 else { return }
        guard matches <= SearchRanking.rankedPages, matches > 1, !ranked.isEmpty else {
            return try pagesInOrder(terms, books: books, words: words, visit: visit)
        }
        var sql = SQLBuilder(table: "page_word")
        let score = try rankScore(found, terms: terms, ranked: ranked, books: books, words: words, &sql)
        let ids = try run(
            "SELECT p.id FROM (\(score.found)) AS found \(score.pages) ORDER BY (\(score.expression)) DESC, "
                + "p.\"bookId\", p.number", score.binds
        ).rows.map { try $0.decode(Int64.self) }
        try visitPages(ids, visit: visit)
    }

    /// Whether a search taking a few pages has only the best of a ranked tier sent (unless
    /// `MARGIN_PLAIN` names `best-pages`): "probability distribution" scored 679 pages, looked
    /// up, sorted and sent them all for its first 51.
    static let sendsBest = FastPaths.isOn("best-pages")

    /// Whether a tier the terms' own words tell is counted with the pages holding the terms
    /// (`flaggedGroups`), unless `MARGIN_PLAIN` names `flagged-tiers`.
    static let flagsTiers = FastPaths.isOn("flagged-tiers")

    /// The groups of a tier of words the terms' own words hold (every word of its groups among
    /// those looked up), without conditions on the pages' rows (a book, a term read in the
    /// text): every page holding the terms is found once, each with a bit for each group a word
    /// of it holds (`tier`), so one statement counts the tier's pages and all of them, and ranks
    /// the tier's. The count of all is kept (`counted`): the search's last statement, counting
    /// them to say how many more pages match, is not sent ("probability distribution": 1.3 ms,
    /// 3.0 under load). Nil for any other tier (filtered by its words, as before).
    private func flaggedGroups(_ found: [WordTerm], books: [Int64]?, words: WordTier) -> [[String]]? {
        guard Self.flagsTiers, books == nil, found.allSatisfy(\.lookedUp), words.notHolding.isEmpty,
            !words.holding.isEmpty, words.holding.count < 63
        else { return nil }
        let looked = Set(found.flatMap(\.words))
        return words.holding.allSatisfy({ !$0.isEmpty && $0.allSatisfy(looked.contains) }) ? words.holding : nil
    }

    /// Whether a phrase's pages are found from its words (`phraseWords`), unless `MARGIN_PLAIN`
    /// names `phrase-words`.
    static let findsPhrasesByWords = FastPaths.isOn("phrase-words")

    /// A group of words whose pages hold more rows of `page_word` than this (or a piece of a
    /// word held by more than `countedInWords` words) doesn't narrow a phrase's pages enough to
    /// pay for reading them.
    static let phraseGroupRows = 4_000

    /// Whether a phrase's pages are those holding its words' pairs (`pairs`, schema v16), unless
    /// `MARGIN_PLAIN` names `phrase-pairs` (a word of each group, then).
    static let findsPhrasesByPairs = FastPaths.isOn("phrase-pairs")

    /// A pair of a phrase's words is looked up as every pair of the words its two groups stand
    /// for (an edge's: the vocabulary's words ending or starting with it); past this many, the
    /// pair is left out.
    static let pairsLookedUp = 100

    /// The phrases among `terms` whose pages their words find, each with its groups of words: a
    /// page holding the phrase holds a word of each group. pg_trgm takes the trigrams of a
    /// pattern's words, none across two, so the text's trigram index finds every page holding a
    /// phrase's words anywhere ("probability distribution": 742 pages read for 13, 8.5–11 ms);
    /// its words find the pages holding them as words (709, their text checked by `strpos`:
    /// 3.2–3.5 ms), and the pairs of its words side by side the pages holding those (20 for 13:
    /// 1.2 ms). A phrase's words within it are whole words of the page, each a group of its
    /// own; where the phrase begins inside a word (`TermWords.openStart`) its first word's group
    /// is the vocabulary's words ending with it, where it ends inside one its last word's the
    /// words starting with it (an edge of fewer than three letters, which the vocabulary's
    /// trigram index can't find, is no group, and in no pair). A group on too many pages is left
    /// out (`phraseGroupRows`: "of the" and "with the" are on most pages either way, and the
    /// words' pages would be read on top of the text's), as is a pair standing for too many
    /// (`pairsLookedUp`); which groups and pairs are, is asked once a minute
    /// (`PageStatistics.narrowing`). A phrase left no group, or any of Chinese or Japanese
    /// letters, is found by the trigram index.
    func phraseWords(_ terms: [String]) throws -> [String: PhraseWords] {
        guard Self.findsPhrasesByWords else { return [:] }
        var found = [String: PhraseWords]()
        for term in terms {
            let phrase = TermWords(term.unicodeScalars)
            guard phrase.words.count > 1, phrase.words.allSatisfy(isOneIndexWord) else { continue }
            let places = PhraseGroup.places(of: phrase)
            guard places.contains(where: { $0 != nil }) else { continue }
            let narrowing = try statistics.narrowing(of: term) { try narrowingGroups(places) }
            var pairs = [PhrasePair]()
            if Self.findsPhrasesByPairs {
                for place in places.indices.dropLast() {
                    guard let first = places[place], let second = places[place + 1],
                        let firstWords = narrowing.words[place], let secondWords = narrowing.words[place + 1],
                        firstWords * secondWords <= Self.pairsLookedUp
                    else { continue }
                    pairs.append(PhrasePair(first: first, second: second))
                }
            }
            if !pairs.isEmpty || !narrowing.groups.isEmpty {
                found[term] = PhraseWords(groups: narrowing.groups.compactMap { places[$0] }, pairs: pairs)
            }
        }
        return found
    }

    /// The groups (their places) held by few enough rows of `page_word` (`phraseGroupRows`), and
    /// an edge's by few enough words (`countedInWords`), and how many words each group of so few
    /// stands for: each counted up to its limit, in one statement. A group of no word narrows
    /// the phrase's pages to none.
    private func narrowingGroups(_ places: [PhraseGroup?]) throws -> PhraseNarrowing {
        var sql = SQLBuilder(table: "word")
        let words = places.enumerated().compactMap { index, place -> String? in
            guard let group = place else { return nil }
            guard let pattern = group.pattern else {
                return "(SELECT \(index) AS g, \(sql.bind(.text(group.word)))::text AS word)"
            }
            return "(SELECT \(index) AS g, word FROM word WHERE word LIKE \(sql.bind(.text(pattern))) "
                + "LIMIT \(Self.countedInWords + 1))"
        }
        let rows = try run(
            "WITH w AS MATERIALIZED (\(words.joined(separator: " UNION ALL "))) SELECT g, count(*), "
                + "(SELECT count(*) FROM (SELECT 1 FROM page_word WHERE word = ANY(array_agg(w.word)) "
                + "LIMIT \(Self.phraseGroupRows + 1)) AS held) FROM w GROUP BY g", sql.binds
        ).rows.map { try $0.decode((Int32, Int64, Int64).self) }
        var narrowing = PhraseNarrowing()
        var broad = Set<Int>()
        // A group no row names stands for no word (its pattern matched none).
        for index in places.indices where places[index] != nil { narrowing.words[index] = 0 }
        for (group, words, held) in rows {
            narrowing.words[Int(group)] = words > Self.countedInWords ? nil : Int(words)
            if words > Self.countedInWords || held > Self.phraseGroupRows { broad.insert(Int(group)) }
        }
        narrowing.groups = places.indices.filter { places[$0] != nil && !broad.contains($0) }
        return narrowing
    }

    /// Whether a tier of page words is counted and ranked in one statement (unless `MARGIN_PLAIN`
    /// names `count-as-ranks`: counted, then ranked, as two).
    static let countsAsRanks = FastPaths.isOn("count-as-ranks")

    /// The pages holding every term (`found`: a page and its part of the score from the words,
    /// `s`), the pages' rows beside them (`pages`, alias `p`, with their conditions) and the score
    /// ranking them, Okapi BM25 as SQLite's FTS5 works it out (`bm25`), with the arguments bound
    /// for all three. FTS5 asks for a term found inside other words as a choice of those words,
    /// each a phrase of the query with its own weight (by how many pages hold it) and its own
    /// count on a page: so each word a term stands for is weighed and counted apart here (a page
    /// with "darstellungsmatrix" twice and "matrix" once comes before one with "matrix" five
    /// times, as in SQLite). The terms ranked by are `rankingTerms`' of `ranked`; a term the
    /// words don't answer is counted in the text as a whole.
    private func rankScore(
        _ found: [WordTerm], terms: [String], ranked: [Int], books: [Int64]?, words: WordTier,
        flagging: [[String]]? = nil, _ sql: inout SQLBuilder
    ) throws -> (found: String, pages: String, conditions: Bool, expression: String, binds: PostgresBindings) {
        let (pages, average) = try libraryStatistics()
        let ranking = try rankingTerms(ranked) { try pagesHolding(found[$0], term: terms[$0]) }
        // One word ranked by alone: its weight orders nothing.
        let weighs = ranking.count > 1 || ranking.contains { found[$0].words.count > 1 }
        let counted =
            weighs
            ? try wordsHolding(ranking.filter { found[$0].lookedUp }.flatMap { found[$0].words }) : [:]
        var weights = [[Double]]()
        for (index, term) in found.enumerated() where term.lookedUp {
            weights.append(
                term.words.map { word in
                    guard ranking.contains(index) else { return 0 }
                    return weighs ? bm25Weight(pages: pages, holding: counted[word] ?? 0) : 1
                })
        }
        let matched = matching(
            found, terms: terms, books: books, words: words, flagging: flagging,
            ranking: (weights, average), &sql)
        var parts = matched.score.map { [$0] } ?? []
        for index in ranking where !found[index].lookedUp {
            let weight =
                ranking.count > 1
                ? bm25Weight(pages: pages, holding: try pagesHolding(found[index], term: terms[index])) : 1
            parts.append(
                bm25(
                    weight: weight, frequency: textFrequency(terms[index], column: "p.norm", &sql), length: "p.words",
                    average: average, &sql))
        }
        return (
            matched.found, matched.pages, matched.conditions, parts.isEmpty ? "0" : parts.joined(separator: " + "),
            sql.binds
        )
    }

    /// How many pages hold every term, counting up to `cap`.
    func countPages(
        _ found: [WordTerm], terms: [String], books: [Int64]?, words: WordTier = .any, cap: Int
    ) throws -> Int {
        guard !found.contains(where: { $0.lookedUp && $0.words.isEmpty }) else { return 0 }
        var sql = SQLBuilder(table: "page_word")
        let matched = matching(found, terms: terms, books: books, words: words, &sql)
        let from = "FROM (\(matched.found)) AS found" + (matched.conditions ? " " + matched.pages : "")
        return Int(
            try run("SELECT count(*) FROM (SELECT 1 \(from) LIMIT \(max(0, cap))) AS found", sql.binds).rows.first?
                .decode(Int64.self) ?? 0)
    }

    /// How many pages of the library hold a term (counted within the minute).
    private func pagesHolding(_ found: WordTerm, term: String) throws -> Double {
        guard found.lookedUp else { return try pagesHoldingText(term) }
        return try statistics.pages(holding: term) {
            Double(try countPages([found], terms: [term], books: nil, cap: Int(Int32.max)))
        }
    }

    /// How many pages of the library hold each of the vocabulary's `words` (counted within the
    /// minute: those not counted then, in one statement).
    private func wordsHolding(_ words: [String]) throws -> [String: Double] {
        guard !words.isEmpty else { return [:] }
        return try statistics.pages(holdingWords: words) { missing in
            var sql = SQLBuilder(table: "page_word")
            let counts = try run(
                "SELECT e.word, (SELECT count(*) FROM page_word WHERE word = e.word)::float8 "
                    + "FROM unnest(\(sql.bind(array: missing))::text[]) AS e(word)", sql.binds
            ).rows.map { try $0.decode((String, Double).self) }
            let byWord = Dictionary(counts, uniquingKeysWith: { a, _ in a })
            return missing.map { byWord[$0] ?? 0 }
        }
    }

    /// The pages holding every term: `found`, a query of each page (`page`) holding the word
    /// terms; `pages`, the join to each page's row (alias `p`) and the conditions on it
    /// (`conditions`: whether there are any), the text holding the other terms (only the pages
    /// holding the word terms are read). With `ranking` (a weight for each word of each
    /// looked-up term, in order, and the library's average page length), each page's part of
    /// its score from its words (`score`): each word's weight times its saturation on the page,
    /// `bm25`'s, by its count there and the page's length, both from `page_word` (summed as the
    /// rows are grouped by page). With `flagging` (groups of words looked up), no tier filters
    /// the pages: each has `tier`, a bit for each group a word of it holds.
    private func matching(
        _ found: [WordTerm], terms: [String], books: [Int64]?, words tier: WordTier = .any,
        flagging: [[String]]? = nil, ranking: (weights: [[Double]], average: Double)? = nil, _ sql: inout SQLBuilder
    ) -> (found: String, pages: String, conditions: Bool, score: String?) {
        var words = [String]()
        var owners = [Int64]()
        var weights = [Double]()
        var sums = [String]()
        var conditions = [String]()
        var lookups = 0
        for (index, term) in found.enumerated() {
            if term.lookedUp {
                words += term.words
                owners += Array(repeating: Int64(lookups), count: term.words.count)
                weights += ranking?.weights[lookups] ?? []
                lookups += 1
            } else {
                conditions.append(sql.holdsFound(terms[index], column: "p.norm"))
            }
        }
        var score: String?
        var weighing = ""
        if let ranking {
            // In float8 throughout (an integer times 2.2 would multiply numerics).
            weighing = ", \(sql.bind(array: weights))::float8[]"
            sums.append(
                "sum(e.weight * w.count::float8 * 2.2 / (w.count + 1.2 * (0.25 + 0.75::float8 * w.length / "
                    + "\(sql.bind(.real(ranking.average)))))) AS s")
            score = "found.s"
        }
        if let books { conditions.append("p.\"bookId\" = ANY(\(sql.bind(array: books)))") }
        // The tier's words filter the words' pages before they are summed and looked up (after,
        // "probability distribution" summed and looked up the 1,400 pages holding a piece of
        // both to keep the 770 holding both words: 3.0 ms to count them, 4.5 to rank them).
        let tier = flagging == nil ? sql.tier(tier, id: "w.page").map { " WHERE " + $0 } ?? "" : ""
        var flags = ""
        if let flagging {
            let bits = words.map { word in
                flagging.indices.reduce(Int64(0)) { $0 | (flagging[$1].contains(word) ? Int64(1) << $1 : 0) }
            }
            flags = ", \(sql.bind(array: bits))::int8[]"
            sums.append("bit_or(e.flag) AS tier")
        }
        // A page holding a word of every looked-up term: each term a bit (`count(DISTINCT …)` sorts
        // each page's words: "probability distribution" counted in 2.7 ms, now 1.3; ranked in
        // 4.8, now 4.3). A query has at most `QueryLimits.words` terms, fewer than the bits.
        let having =
            lookups < 2
            ? ""
            : lookups < 63
                ? " HAVING bit_or(1::int8 << e.lookup::int4) = \((Int64(1) << lookups) - 1)"
                : " HAVING count(DISTINCT e.lookup) = \(lookups)"
        let found =
            "SELECT \((["w.page"] + sums).joined(separator: ", ")) FROM unnest(\(sql.bind(array: words))::text[], "
            + "\(sql.bind(array: owners))::int8[]\(flags)\(weighing)) "
            + "AS e(word, lookup\(flagging == nil ? "" : ", flag")\(ranking == nil ? "" : ", weight")) "
            + "CROSS JOIN LATERAL (SELECT page, count, length FROM page_word WHERE word = e.word OFFSET 0) AS w\(tier) "
            + "GROUP BY w.page\(having)"
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        // Each word's pages, and then each page, looked up by the index (`OFFSET 0` keeps them
        // so): PostgreSQL, misjudging how few they are (always, before it has statistics, as
        // after `db copy`), would rather read the whole table for a hash join: 114 ms, not 1.
        return (
            found,
            "CROSS JOIN LATERAL (SELECT id, \"bookId\", number, words, norm FROM page "
                + "WHERE id = found.page OFFSET 0) AS p\(filter)", !conditions.isEmpty, score
        )
    }
}

/// Classes of scalars as PostgreSQL's regular expressions write them, made from Swift's own
/// (`isIndexWordScalar`, `isBigramScalar`), so the database splits text into words where Swift
/// does, whatever the server's locale.
enum PostgresWordClasses {
    /// The scalars words are split at (`page_words`, `page_pairs`): none of a word's
    /// (`isIndexWordScalar`), and Chinese and Japanese letters (held as pairs of their own).
    static var separators: String { bracket { !isIndexWordScalar($0) || isBigramScalar($0) } }

    /// A bracket expression matching the scalars `holds` is true of: ranges of code points,
    /// each end written `\Uxxxxxxxx` (surrogates, never in text, join the ranges around them).
    static func bracket(_ holds: (Unicode.Scalar) -> Bool) -> String {
        var expression = "["
        var start: UInt32?
        var end: UInt32 = 0
        func close() {
            guard let first = start else { return }
            expression += code(first) + (end > first ? "-" + code(end) : "")
            start = nil
        }
        for value in UInt32(1)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            if holds(scalar) {
                if start == nil { start = value }
                end = value
            } else {
                close()
            }
        }
        close()
        return expression + "]"
    }

    private static func code(_ value: UInt32) -> String {
        let hex = String(value, radix: 16)
        return "\\U" + String(repeating: "0", count: 8 - hex.count) + hex
    }
}

/// A term's (or a word's) weight in Okapi BM25, by how many of the library's pages hold it, as
/// SQLite's FTS5 weighs a phrase of its query: a word on half the pages or more weighs next to
/// nothing (1e-6), not less.
func bm25Weight(pages: Double, holding count: Double) -> Double {
    let weight = log((pages - count + 0.5) / (count + 0.5))
    return weight <= 0 ? 1e-6 : weight
}

/// One term's part of a page's Okapi BM25 score, as SQLite's FTS5 works it out (k1 = 1.2,
/// b = 0.75): its weight, its count on the page (`frequency`), the page's length in index words
/// against the library's average. In float8 throughout (`0.75 * words` would multiply numerics,
/// then convert: the same value, exact either way, at a cost for each page ranked).
func bm25(weight: Double, frequency: String, length: String, average: Double, _ sql: inout SQLBuilder) -> String {
    "\(sql.bind(.real(weight))) * \(frequency) * 2.2 / (\(frequency) + 1.2 * (0.25 + 0.75::float8 * \(length) / \(sql.bind(.real(average)))))"
}

/// How many times a term is in a column of folded text (non-overlapping, from the start): the
/// bytes its occurrences take, over its own (`length` would count the text's characters, twice;
/// five times the time).
func textFrequency(_ term: String, column: String, _ sql: inout SQLBuilder) -> String {
    let text = sql.bind(.text(term))
    return
        "((octet_length(\(column)) - octet_length(replace(\(column), \(text), '')))::float8 / octet_length(\(text)))"
}

/// A word of a phrase as the page words find the pages holding it (`PostgresStore.phraseWords`):
/// the word itself, or (`pattern`) any of the vocabulary's words the `LIKE` pattern matches: those
/// ending with the phrase's first word where it begins inside a word, starting with its last
/// where it ends inside one.
struct PhraseGroup: Hashable, Sendable {
    var word: String
    var pattern: String?

    /// The group of each of a phrase's words, in order: every word within it, and each edge word
    /// of three letters or more (the vocabulary's trigram index finds those; nil for a shorter).
    static func places(of phrase: TermWords) -> [PhraseGroup?] {
        phrase.words.enumerated().map { index, word in
            let endsOne = index == 0 && phrase.openStart
            let startsOne = index == phrase.words.count - 1 && phrase.openEnd
            guard endsOne || startsOne else { return PhraseGroup(word: word) }
            guard word.unicodeScalars.count >= 3 else { return nil }
            return PhraseGroup(word: word, pattern: (endsOne ? "%" : "") + likeEscaped(word) + (startsOne ? "%" : ""))
        }
    }
}

/// Two of a phrase's words side by side, as the page words find them (`PostgresStore.phraseWords`).
struct PhrasePair: Hashable, Sendable {
    var first: PhraseGroup
    var second: PhraseGroup
}

/// How a phrase's pages are found from its words: those holding each of its pairs side by side
/// (`pairs`) when it has any, else a word of each group.
struct PhraseWords: Hashable, Sendable {
    var groups: [PhraseGroup]
    var pairs: [PhrasePair]
}

/// Which of a phrase's groups narrow its pages enough (their places), and how many words each
/// group of at most `PostgresStore.countedInWords` stands for (by place).
struct PhraseNarrowing: Sendable {
    var groups = [Int]()
    var words = [Int: Int]()
}
