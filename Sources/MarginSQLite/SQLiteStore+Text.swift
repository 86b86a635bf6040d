import Foundation
import GRDB
import MarginCore

extension SQLiteStore {
    func candidatePages(
        containing terms: [String], words: WordTier, books: [Int64]?, visit: (PageText) throws -> Bool
    ) throws {
        let key = countKey(terms, books, words)
        // A tier whose words imply every term (each a piece of every word of a group it holds:
        // "the" as a word): more pages than are ranked are read in the library's order, which
        // the tier's words alone give, without the vocabulary's words holding each term (119
        // for "the"; 3 ms, against 0.1, for the first 2,001 pages). When they are fewer, they are
        // the tier's pages all the same, ranked below by the terms' parts (`tierPages`).
        var tierPages: [Int64]?
        if let (match, rest) = impliedMatch(terms, words: words) {
            let (filter, arguments) = try pageMatch(match, books: books, words: rest)
            let probe = try Int64.fetchAll(
                statement("SELECT rowid FROM page_words WHERE \(filter) LIMIT \(SearchRanking.rankedPages + 1)"),
                arguments: arguments)
            if probe.count > SearchRanking.rankedPages {
                return try visitInOrder(
                    probe, filter: filter, arguments: arguments, key: key, books: books, visit: visit)
            }
            tierPages = probe
        }
        guard let termParts = try PageWords.termParts(for: terms, db, known: termExpressions) else { return }
        let parts = termParts.map(\.part)
        guard !parts.isEmpty else {
            // No term the index can answer (only short pieces of words, or punctuation): every
            // page is a candidate (every page holding the words).
            return try scanPages(books: books, holding: words, visit: visit)
        }
        let rare = parts.count > 1 ? try parts.filter(isRare) : parts
        if !rare.isEmpty, rare.count < parts.count {
            let common = termParts.filter { !rare.contains($0.part) }.map { Array($0.term.unicodeScalars) }
            return try visitRarePartPages(
                rare, common: common, key: key, books: books, words: words, visit: visit)
        }
        if parts.count == 1, books == nil, words == .any, let core = PageWords.phraseCore(parts[0]),
            try visitPhrasePagesByCore(core, term: termParts[0].term, key: key, visit: visit)
        {
            return
        }
        let match = parts.joined(separator: " AND ")
        let (filter, arguments) = try pageMatch(match, books: books, words: words)
        // Up to `rankedPages` matches are ranked (bm25); past that, library order, read as needed.
        let probe: [Int64]
        if parts.count == 1, books == nil, words == .any, PhraseRanking.isPhrase(parts[0]),
            let rows = try? Row.fetchAll(
                statement(PhraseRanking.sql(filter, limit: SearchRanking.rankedPages + 1)), arguments: arguments)
        {
            // A phrase, ranked from the pass that finds its pages (see `PhraseRanking`).
            if rows.count <= SearchRanking.rankedPages, let ranked = PhraseRanking.order(rows) {
                candidateCounts.counts[key] = rows.count
                _ = try visitPages(ranked, books: books, visit: visit)
                return
            }
            probe = rows.map { $0[0] }
        } else if let tierPages {
            // The same pages as the tier's words found (in another order: only counted here).
            probe = tierPages
        } else {
            probe = try Int64.fetchAll(
                statement("SELECT rowid FROM page_words WHERE \(filter) LIMIT \(SearchRanking.rankedPages + 1)"),
                arguments: arguments)
        }
        if probe.count <= SearchRanking.rankedPages {
            candidateCounts.counts[key] = probe.count
            _ = try visitPages(rankedPages(parts, books: books, words: words), books: books, visit: visit)
            return
        }
        try visitInOrder(probe, filter: filter, arguments: arguments, key: key, books: books, visit: visit)
    }

    /// The pages matching `filter` in the library's order, more than are ranked: `probe` (the
    /// first `rankedPages` + 1 of them) and then the rest, read as needed.
    private func visitInOrder(
        _ probe: [Int64], filter: String, arguments: StatementArguments, key: String, books: [Int64]?,
        visit: (PageText) throws -> Bool
    ) throws {
        // A count that stops sooner needs no second pass.
        candidateCounts.atLeast[key] = probe.count
        guard try visitPages(probe, books: books, visit: visit), let last = probe.last else { return }
        let more = try Int64.fetchCursor(
            statement("SELECT rowid FROM page_words WHERE \(filter) AND rowid > ?"), arguments: arguments + [last])
        var batch = [Int64]()
        while let id = try more.next() {
            batch.append(id)
            if batch.count == 256 {
                guard try visitPages(batch, books: books, visit: visit) else { return }
                batch.removeAll(keepingCapacity: true)
            }
        }
        _ = try visitPages(batch, books: books, visit: visit)
    }

    /// The pages matching every part (all of them rare: see `isRare`), best first (bm25).
    private func rankedPages(_ parts: [String], books: [Int64]?, words: WordTier) throws -> [Int64] {
        let (filter, arguments) = try pageMatch(parts.joined(separator: " AND "), books: books, words: words)
        // One phrase (not a choice between several): bm25's order without its pass over
        // every page holding the phrase for the phrase's weight, the same for every page
        // (`margin_phrase_rank`, CFTS5). With a prefix ("dark matter halo…") that pass
        // merged every word starting with it: 8.8 ms of a search at 100,000 pages.
        if parts.count == 1, !parts[0].hasPrefix("("),
            let ranked = try? Int64.fetchAll(
                statement("SELECT rowid FROM page_words WHERE \(filter) ORDER BY margin_phrase_rank(page_words)"),
                arguments: arguments)
        {
            return ranked
        }
        return try Int64.fetchAll(
            statement("SELECT rowid FROM page_words WHERE \(filter) \(bm25Order)"), arguments: arguments)
    }

    /// Whether a part of a query is on at most `rankedPages` pages of the library. Ranking
    /// weighs each part by how many pages hold it, which FTS5 counts by reading the part's whole
    /// list of pages: for a word on most pages ("the", with the words holding it) that read grows
    /// with the library, and the weight it finds is next to nothing. So only rare parts rank.
    private func isRare(_ part: String) throws -> Bool {
        try Int.fetchOne(
            statement("SELECT count(*) FROM (SELECT rowid FROM page_words WHERE page_words MATCH ? LIMIT ?)"),
            arguments: [part, SearchRanking.rankedPages + 1]) ?? 0 <= SearchRanking.rankedPages
    }

    /// A search of several terms, some on few pages (`isRare`) and some on many ("quasar the").
    /// FTS5 answers their AND by seeking, for each page of the rare part, every word of the common
    /// one (for "the", the ten words holding it) in every segment of the index: 34 M instructions
    /// for the 100 pages holding "quasar" in 100,000, and growing with the library. The rare
    /// parts' pages are few (at most `rankedPages`), best first by the rare parts (bm25, as
    /// before), and the common terms are checked in their text, by the rule the search checks
    /// every page with (`foldedText(_:containsAll:)`): the pages visited are the same. Those left
    /// when `visit` stops are counted on demand (`countCandidatePages`).
    private func visitRarePartPages(
        _ rare: [String], common: [[Unicode.Scalar]], key: String, books: [Int64]?, words: WordTier,
        visit: (PageText) throws -> Bool
    ) throws {
        let (filter, arguments) = try pageMatch(rare.joined(separator: " AND "), books: books, words: words)
        let ids = try Int64.fetchAll(
            statement("SELECT rowid FROM page_words WHERE \(filter) \(bm25Order)"), arguments: arguments)
        var counted = 0
        var last: Int64?
        let finished = try visitPages(ids, books: books) { page in
            last = page.id
            guard foldedText(page.text, containsAll: common) else { return true }
            counted += 1
            return try visit(page)
        }
        if finished {
            candidateCounts.counts[key] = counted
        } else if let last, let stop = ids.firstIndex(of: last) {
            candidateCounts.unread[key] = (counted, ids[(stop + 1)...], common)
        }
    }

    /// A phrase ending inside a word whose end the vocabulary spells many ways ("dark matter
    /// halo…": 51 words start with "halo"). FTS5 evaluates it by merging the pages of every such
    /// word first, however rare the rest of the phrase: 31,000 pages at 100,000, 31 M
    /// instructions. When the phrase without its last word (its core, "dark matter") is on at most
    /// `PageWords.corePages` pages, those are read and the whole phrase counted in their text,
    /// by the rule the search checks pages with (`foldedMatchCount`). The counts take the place
    /// of FTS5's in the ranking (`PhraseRanking`), so the order is bm25's, as before. False, with
    /// nothing visited, when the core is on more pages.
    private func visitPhrasePagesByCore(
        _ core: String, term: String, key: String, visit: (PageText) throws -> Bool
    ) throws -> Bool {
        guard
            let rows = try? Row.fetchAll(
                statement(PhraseRanking.sql("page_words MATCH ?", limit: PageWords.corePages + 1)),
                arguments: [core]),
            rows.count <= PageWords.corePages
        else { return false }
        var pages = [Int64: PageText]()
        _ = try visitPages(rows.map { $0[0] }, books: nil) { page in
            if let id = page.id { pages[id] = page }
            return true
        }
        let scalars = Array(term.unicodeScalars)
        var matching = [(id: Int64, blob: Data)]()
        for row in rows {
            // One phrase: the blob holds its hits on the page last, as four bytes.
            guard var blob = row[1] as Data?, blob.count == 24 else { return false }
            guard let page = pages[row[0]] else { continue }
            let hits = foldedMatchCount(page.text, of: scalars)
            guard hits > 0 else { continue }
            blob.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(hits), toByteOffset: 20, as: UInt32.self) }
            matching.append((row[0], blob))
        }
        guard let ranked = PhraseRanking.order(matching) else { return false }
        candidateCounts.counts[key] = matching.count
        for id in ranked {
            if let page = pages[id], try !visit(page) { break }
        }
        return true
    }

    /// Loads the pages with these ids (in this order) a batch at a time, skipping any the index
    /// still names but `page` no longer holds, until `visit` returns false (then returns false).
    private func visitPages(_ ids: [Int64], books: [Int64]?, visit: (PageText) throws -> Bool) throws -> Bool {
        let wanted = books.map(Set.init)
        return try SearchRanking.visitPages(
            ids,
            load: { batch in
                // A batch is 16, 32, 64, 128 or 256 ids, the last of a search fewer: padded
                // to the next of those sizes with its first id (read once all the same), so
                // that five statements serve every batch.
                var ids = batch
                let size = max(16, 1 << (Int.bitWidth - (max(1, batch.count) - 1).leadingZeroBitCount))
                if let first = batch.first, size > batch.count {
                    ids += repeatElement(first, count: size - batch.count)
                }
                let marks = Array(repeating: "?", count: ids.count).joined(separator: ",")
                let rows = try Row.fetchCursor(
                    statement("SELECT id, bookId, number, text FROM page WHERE id IN (\(marks))"),
                    arguments: StatementArguments(ids))
                var pages = [PageText]()
                pages.reserveCapacity(batch.count)
                // Read from the statement's row as it steps (no copy of each row).
                while let row = try rows.next() {
                    let page = pageText(row)
                    if wanted?.contains(page.bookId) ?? true { pages.append(page) }
                }
                return pages
            }, visit: visit)
    }

    func countCandidatePages(containing terms: [String], books: [Int64]?, cap: Int) throws -> Int? {
        // Counted already when the search read all its candidates (neither the vocabulary nor
        // the index is asked again).
        let key = countKey(terms, books)
        if let (counted, ids, common) = candidateCounts.unread[key] {
            // The rest of a search whose common terms are checked in the text: read until `cap`.
            var total = counted
            _ = try visitPages(Array(ids), books: books) { page in
                if foldedText(page.text, containsAll: common) { total += 1 }
                return total < cap
            }
            return min(total, max(0, cap))
        }
        if let known = candidateCounts.counts[key] { return min(known, max(0, cap)) }
        if let atLeast = candidateCounts.atLeast[key], atLeast >= cap { return max(0, cap) }
        guard let expression = try PageWords.expression(for: terms, db, known: termExpressions) else { return nil }
        guard case .match(let match) = expression else { return 0 }
        let (filter, arguments) = try pageMatch(match, books: books)
        return try Int.fetchOne(
            statement("SELECT count(*) FROM (SELECT rowid FROM page_words WHERE \(filter) LIMIT ?)"),
            arguments: arguments + [max(0, cap)])
    }

    func countCandidatePages(containing terms: [String], words: WordTier, books: [Int64]?, cap: Int) throws -> Int? {
        guard words != .any else { return try countCandidatePages(containing: terms, books: books, cap: cap) }
        let key = countKey(terms, books, words)
        if let known = candidateCounts.counts[key] { return min(known, max(0, cap)) }
        if let atLeast = candidateCounts.atLeast[key], atLeast >= cap { return max(0, cap) }
        guard let expression = try PageWords.expression(for: terms, db, known: termExpressions) else {
            // No term the index answers: the pages of the tier.
            var conditions = wordsConditions(words, id: "id")
            var arguments = StatementArguments(conditions.map(\.1))
            if let books {
                conditions.append(("bookId IN \(bookList)", ""))
                arguments += [jsonList(books)]
            }
            let filter = conditions.map(\.0).joined(separator: " AND ")
            return try Int.fetchOne(
                statement("SELECT count(*) FROM (SELECT id FROM page WHERE \(filter) LIMIT ?)"),
                arguments: arguments + [max(0, cap)])
        }
        guard case .match(let match) = expression else { return 0 }
        let (filter, arguments) = try pageMatch(match, books: books, words: words)
        return try Int.fetchOne(
            statement("SELECT count(*) FROM (SELECT rowid FROM page_words WHERE \(filter) LIMIT ?)"),
            arguments: arguments + [max(0, cap)])
    }

    func wordsSharingTrigrams(with term: String, limit: Int) throws -> [String] {
        let scalars = Array(term.unicodeScalars)
        guard scalars.count >= 3 else { return [] }
        // Any of the term's trigrams, as FTS5 strings; BM25 ranks the words sharing more (and
        // rarer) ones first.
        let trigrams = Set((0...(scalars.count - 3)).map { String(String.UnicodeScalarView(scalars[$0..<$0 + 3])) })
        let match = trigrams.sorted().map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
            .joined(separator: " OR ")
        let sharing = try String.fetchAll(
            statement(
                "SELECT t.word FROM term_fts f JOIN term t ON t.id = f.rowid WHERE term_fts MATCH ? "
                    + "AND length(t.word) BETWEEN ? AND ? ORDER BY f.rank, t.word LIMIT ?"),
            arguments: [match, scalars.count - 2, scalars.count + 2, limit])
        // And the words with its first letter and its next or its last two: one letter changed or
        // two swapped in a short word ("qiuck") leave it no trigram of "quick".
        let (first, two, end) = wordEnds(scalars)
        let beginning = try String.fetchAll(
            statement(
                "SELECT word FROM term WHERE word >= ? AND word < ? AND (word LIKE ? ESCAPE '\\' OR word LIKE ? ESCAPE '\\') "
                    + "AND length(word) BETWEEN ? AND ? ORDER BY word LIMIT ?"),
            arguments: [
                first, first + "\u{10FFFF}", likeEscaped(two) + "%", likeEscaped(first) + "%" + likeEscaped(end),
                scalars.count - 2, scalars.count + 2, limit,
            ])
        var seen = Set<String>()
        return (sharing + beginning).filter { seen.insert($0).inserted }
    }

    func vocabularies(startingWith prefixes: [String], limit: Int) throws -> [[String]?] {
        try prefixes.map { try PageWords.vocabulary(startingWith: $0, upTo: limit, db) }
    }

    func pagesHoldingWord(_ word: String, cap: Int) throws -> Int {
        // The page index's tokens are whole words: a quoted word matches only itself.
        try Int.fetchOne(
            statement("SELECT count(*) FROM (SELECT rowid FROM page_words WHERE page_words MATCH ? LIMIT ?)"),
            arguments: ["\"" + word.replacingOccurrences(of: "\"", with: "\"\"") + "\"", max(0, cap)]) ?? 0
    }

    private func countKey(_ terms: [String], _ books: [Int64]?, _ words: WordTier = .any) -> String {
        terms.joined(separator: "\u{0}") + "\u{1}" + (books.map { $0.map(String.init).joined(separator: ",") } ?? "*")
            + (words == .any ? "" : "\u{2}" + words.key)
    }

    /// The WHERE clause for pages matching `match` (of one book, if given: its pages' rowid range,
    /// which FTS5 seeks, and their ids), of the tier of candidates `words` names (the rank is
    /// still `match`'s).
    private func pageMatch(_ match: String, books: [Int64]?, words: WordTier) throws -> (
        String, StatementArguments
    ) {
        var (filter, arguments) = try pageMatch(match, books: books)
        for (condition, query) in wordsConditions(words, id: "rowid") {
            filter += " AND " + condition
            arguments += [query]
        }
        return (filter, arguments)
    }

    private func pageMatch(_ match: String, books: [Int64]?) throws -> (String, StatementArguments) {
        guard let books else { return ("page_words MATCH ?", [match]) }
        guard books.count == 1, let book = books.first else {
            return (
                "page_words MATCH ? AND +rowid IN (SELECT id FROM page WHERE bookId IN \(bookList))",
                [match, jsonList(books)]
            )
        }
        let range = try Row.fetchOne(statement("SELECT min(id), max(id) FROM page WHERE bookId = ?"), arguments: [book])
        let low: Int64 = range?[0] ?? 0
        let high: Int64 = range?[1] ?? -1
        return (
            "page_words MATCH ? AND rowid BETWEEN ? AND ? AND +rowid IN (SELECT id FROM page WHERE bookId = ?)",
            [match, low, high, book]
        )
    }

    func scanPages(books: [Int64]?, visit: (PageText) throws -> Bool) throws {
        try scanPages(books: books, holding: .any, visit: visit)
    }

    /// Every page (of the books) of the tier `words` names, in book and page order.
    private func scanPages(books: [Int64]?, holding words: WordTier, visit: (PageText) throws -> Bool) throws {
        var conditions = [String]()
        var arguments = StatementArguments()
        if let books {
            conditions.append("bookId IN \(bookList)")
            arguments += [jsonList(books)]
        }
        for (condition, query) in wordsConditions(words, id: "id") {
            conditions.append(condition)
            arguments += [query]
        }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let cursor = try Row.fetchCursor(
            statement("SELECT id, bookId, number, text FROM page\(filter) ORDER BY bookId, number"),
            arguments: arguments)
        while let row = try cursor.next() {
            if try !visit(pageText(row)) { return }
        }
    }

    func candidateAnnotations(containing terms: [String], books: [Int64]?) throws -> [(kind: String, id: Int64)] {
        let indexed = terms.filter { $0.unicodeScalars.count >= 3 }
        var sql = "SELECT kind, ref FROM annotation_fts"
        var arguments = StatementArguments()
        var conditions = [String]()
        if !indexed.isEmpty {
            conditions.append("annotation_fts MATCH ?")
            arguments += [ftsMatch(indexed)]
        }
        if let books {
            conditions.append("bookId IN \(bookList)")
            arguments += [jsonList(books)]
        }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        sql += indexed.isEmpty ? " ORDER BY rowid" : " ORDER BY rank"
        return try Row.fetchAll(statement(sql), arguments: arguments).map { row in (row[0], row[1]) }
    }
}

/// The conditions on a page's id (`id`: its column) for a tier of candidates, each with the
/// FTS5 query it binds (the pages holding a word of each group as one of their index words).
private func wordsConditions(_ words: WordTier, id: String) -> [(String, String)] {
    let subquery = "(SELECT rowid FROM page_words WHERE page_words MATCH ?)"
    func query(_ groups: [[String]]) -> String {
        groups.map { group in
            let words = group.map(PageWords.quoted)
            return words.count == 1 ? words[0] : "(" + words.joined(separator: " OR ") + ")"
        }.joined(separator: " AND ")
    }
    // `+id`: a filter on the rows found, never a constraint FTS5 is given. Given one, it
    // evaluates the whole MATCH again for each page of the tier (for "the", the 160 words holding
    // it for each of 9,905 pages: 1.9 s, against 13 ms).
    var conditions = [(String, String)]()
    if !words.holding.isEmpty { conditions.append(("+\(id) IN \(subquery)", query(words.holding))) }
    if !words.notHolding.isEmpty { conditions.append(("+\(id) NOT IN \(subquery)", query(words.notHolding))) }
    return conditions
}

extension SQLiteStore {
    /// The statement of `sql`, prepared once for the connection and kept (GRDB's statement
    /// cache): a search runs ten to twenty statements, and preparing each again cost 7 % of the
    /// processor of `serve` under load. The search's statements take few forms: a list of ids
    /// is bound as one JSON array (`bookList`), a count's cap as an argument.
    func statement(_ sql: String) throws -> Statement {
        try db.cachedStatement(sql: sql)
    }
}

/// A list of ids bound as one argument (`jsonList`): one statement for any number of them.
let bookList = "(SELECT value FROM json_each(?))"

/// Ids as the JSON array `bookList` reads.
func jsonList(_ ids: [Int64]) -> String {
    "[" + ids.map(String.init).joined(separator: ",") + "]"
}

/// FTS5's order by `rank` (bm25; ties by page id), sorted by SQLite. FTS5 sorts by running the
/// query again as a statement of its own, scoring every page it matches before the statement's
/// other conditions (a tier's words) leave some out: the pages holding "probability" and
/// "distribution" as words were ranked in 3.3 ms, now 1.9. The two orders were compared on 400
/// queries of the bench's library (22,000 ties) and in `phrasesRankAsBM25`.
let bm25Order = "ORDER BY bm25(page_words), rowid"

/// When each term is implied by a group the tier holds (`WordTier.groupImplying`), the FTS5
/// query of those groups and the rest of the tier; nil otherwise.
private func impliedMatch(_ terms: [String], words: WordTier) -> (match: String, rest: WordTier)? {
    guard !terms.isEmpty, !words.holding.isEmpty else { return nil }
    var used = Set<Int>()
    for term in terms {
        guard let group = words.groupImplying(term) else { return nil }
        used.insert(group)
    }
    let match = used.sorted().map { index in
        let quoted = words.holding[index].map(PageWords.quoted)
        return quoted.count == 1 ? quoted[0] : "(" + quoted.joined(separator: " OR ") + ")"
    }.joined(separator: " AND ")
    let rest = words.holding.indices.filter { !used.contains($0) }.map { words.holding[$0] }
    return (match, WordTier(holding: rest, notHolding: words.notHolding))
}

/// An FTS5 query holding every term as a quoted string (substrings, with the trigram index).
private func ftsMatch(_ terms: [String]) -> String {
    terms.map(PageWords.quoted).joined(separator: " AND ")
}

/// A page from `SELECT id, bookId, number, text`: read by hand, as searches read thousands of
/// pages and Codable's decoding costs more than the row.
private func pageText(_ row: Row) -> PageText {
    var page = PageText(bookId: row[1], number: row[2], text: row[3])
    page.id = row[0]
    return page
}
