import Foundation
import GRDB
import GRDBSQLite
import MarginCore
import TestSupport
import Testing

@testable import MarginSQLite

/// The SQLite page index (`PageWords`): words in a contentless FTS5 table, kept in step through a
/// queue that triggers fill and margin's writes drain.
@Suite struct PageWordsTests {
    /// `wordsAhead`: each page's words worked out before the write, as `add` does.
    func addBook(_ database: LibraryDatabase, pages texts: [String], wordsAhead: Bool = false) async throws -> Int64 {
        try await database.repository.write { writer in
            var book = Book(
                sha256: String(repeating: "a", count: 64), title: "T", author: nil, pages: texts.count, bytes: 1)
            try writer.insert(&book)
            let id = try #require(book.id)
            for (offset, text) in texts.enumerated() {
                var page = PageText(bookId: id, number: offset + 1, text: text)
                if wordsAhead { page.computeIndexedWords() }
                try writer.insert(&page)
            }
            return id
        }
    }

    func candidates(_ database: LibraryDatabase, _ term: String, bookId: Int64? = nil) async throws -> [Int] {
        try await database.repository.read { reader in
            var found = [Int]()
            try reader.textIndex.candidatePages(containing: [folded(term)], books: bookId.map { [$0] }) { page in
                found.append(page.number)
                return true
            }
            return found
        }
    }

    /// Pages changed with SQL alone (the sqlite3 shell) are indexed at margin's next write: a
    /// deleted page's words leave the index, an inserted or edited page's words enter it.
    @Test func changesMadeOutsideMarginReachTheIndexAtTheNextWrite() async throws {
        let database = try LibraryDatabase()
        let bookId = try await addBook(database, pages: ["alpha beta", "gamma delta", "epsilon"])
        try await database.writer.write { db in
            try db.execute(sql: "DELETE FROM page WHERE number = 1")
            try db.execute(sql: "UPDATE page SET text = 'zeta omega' WHERE number = 2")
            try db.execute(
                sql: "INSERT INTO page(bookId, number, text) VALUES (?, 4, 'alphabet soup')", arguments: [bookId])
        }
        let pending = try await database.writer.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM page_pending") }
        #expect(pending == 3, "queued by the triggers")
        // Until then a removed page is skipped, not returned.
        #expect(try await candidates(database, "alpha") == [])
        try await database.repository.write { _ in }
        #expect(try await candidates(database, "alpha") == [4])
        #expect(try await candidates(database, "gamma") == [])
        #expect(try await candidates(database, "omega") == [2])
        let left = try await database.writer.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM page_pending") }
        #expect(left == 0)
        // The index holds exactly the words of the pages there are (FTS5's own check).
        try await database.writer.write { db in
            try db.execute(sql: "INSERT INTO page_words(page_words, rank) VALUES ('integrity-check', 0)")
        }
    }

    /// Words worked out before the write (as `add` does, on all cores) index a page exactly as
    /// the store would: FTS5 finds the index consistent after the pages are added and removed.
    @Test func wordsWorkedOutAheadIndexThePageTheSame() async throws {
        let database = try LibraryDatabase()
        let texts = ["Ünïcode café — naïve", "radio-\nisotopes and co-\noperation", "plain words here"]
        let bookId = try await addBook(database, pages: texts, wordsAhead: true)
        func check() async throws {
            try await database.writer.write { db in
                try db.execute(sql: "INSERT INTO page_words(page_words, rank) VALUES ('integrity-check', 0)")
            }
        }
        try await check()
        #expect(try await candidates(database, "cafe") == [1])
        #expect(try await candidates(database, "isotope") == [2])
        try await database.repository.write { writer in
            _ = try writer.delete(Query<PageText>().filter(PageText.Fields.bookId == bookId))
        }
        try await check()
        #expect(try await candidates(database, "cafe") == [])
    }

    /// One write is one segment in each FTS5 index: its new words join the vocabulary in one
    /// statement, after its pages. (A word at a time, `term`'s trigger opened a savepoint for
    /// each, and FTS5 wrote out its pending changes at every one: a segment a page in
    /// `page_words`, a segment a word in `term_fts`, merged again and again while adding.)
    @Test func oneWriteIsOneSegmentOfEachIndex() async throws {
        let database = try LibraryDatabase()
        let texts = (0..<12).map { page in (0..<40).map { "w\(page)x\($0)" }.joined(separator: " ") }
        _ = try await addBook(database, pages: texts, wordsAhead: true)
        let (pageSegments, termSegments, words) = try await database.writer.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(DISTINCT segid) FROM page_words_idx"),
                try Int.fetchOne(db, sql: "SELECT count(DISTINCT segid) FROM term_fts_idx"),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM term")
            )
        }
        #expect(words == 12 * 40)
        #expect(pageSegments == 1)
        #expect(termSegments == 1)
        #expect(try await candidates(database, "w7x39") == [8])
        #expect(try await candidates(database, "7x3") == [8], "found through the vocabulary's trigrams")
        try await database.writer.write { db in
            try db.execute(sql: "INSERT INTO page_words(page_words, rank) VALUES ('integrity-check', 0)")
            try db.execute(sql: "INSERT INTO term_fts(term_fts, rank) VALUES ('integrity-check', 0)")
        }
    }

    /// A term on more pages than are ranked lists them all, in library order; fewer are ranked.
    @Test func aCommonTermListsEveryPageInLibraryOrder() async throws {
        let database = try LibraryDatabase()
        let count = SearchRanking.rankedPages + 10
        let texts = (1...count).map { "page \($0) holds the word common" + ($0 % 500 == 0 ? " rare rare rare" : "") }
        let bookId = try await addBook(database, pages: texts)
        let common = try await candidates(database, "common")
        #expect(common == Array(1...count))
        let rare = try await candidates(database, "rare", bookId: bookId)
        #expect(Set(rare) == [500, 1000, 1500, 2000])
        let counted = try await database.repository.read {
            try $0.textIndex.countCandidatePages(containing: [folded("common")], books: nil, cap: count + 1)
        }
        #expect(counted == count)
        let capped = try await database.repository.read {
            try $0.textIndex.countCandidatePages(containing: [folded("common")], books: [bookId], cap: 100)
        }
        #expect(capped == 100, "counted no further than the cap")
    }

    /// A tier of more pages than are ranked, its words holding the term (found from those words
    /// alone): every page of the tier in library order, for the whole library and for a book;
    /// a tier of fewer pages is ranked as before.
    @Test func aTierOfMorePagesThanAreRankedListsThemInLibraryOrder() async throws {
        let database = try LibraryDatabase()
        let count = SearchRanking.rankedPages * 3 + 30
        let texts = (1...count).map { number in
            switch number % 3 {
            case 0: "page \(number) is uncommonly plain"
            case 1:
                "page \(number) holds the word common" + (number % 500 == 7 ? " rarely" : "")
                    + (number == 3007 ? " common common common" : "")
            default: "page \(number) holds commons"
            }
        }
        let bookId = try await addBook(database, pages: texts)
        func tier(_ words: WordTier, books: [Int64]? = nil) async throws -> [Int] {
            try await database.repository.read { reader in
                var found = [Int]()
                try reader.textIndex.candidatePages(containing: [folded("common")], words: words, books: books) {
                    found.append($0.number)
                    return true
                }
                return found
            }
        }
        let holding = (1...count).filter { $0 % 3 == 1 }
        #expect(holding.count > SearchRanking.rankedPages)
        #expect(try await tier(.holding(["common"])) == holding)
        #expect(try await tier(.holding(["common"]), books: [bookId]) == holding)
        #expect(try await tier(.holding(["common"]), books: [bookId + 1]).isEmpty)
        let forms = WordTier(holding: [["common", "commons"]], notHolding: [])
        #expect(try await tier(forms) == (1...count).filter { $0 % 3 != 0 })
        let others = WordTier(holding: [["common", "commons"]], notHolding: [["common"]])
        #expect(try await tier(others) == (1...count).filter { $0 % 3 == 2 })
        #expect(try await tier(.lacking(["common"])) == (1...count).filter { $0 % 3 != 1 })
        // Fewer than are ranked: the page saying it most comes first.
        let few = try await tier(.holding(["common", "rarely"]), books: [bookId])
        #expect(Set(few) == [7, 1507, 3007, 4507, 6007] && few.first == 3007)
    }

    /// A word on more pages than are ranked, searched with a rarer one: the pages holding both,
    /// ranked by the rarer word (the common one, on every page, weighs nothing), and counted.
    @Test func aCommonWordBesideARareOneIsMatchedAndTheRareOneRanks() async throws {
        let database = try LibraryDatabase()
        let count = SearchRanking.rankedPages + 10
        let zebras = [10: 1, 20: 3, 30: 2]
        let texts =
            (1...count).map { number in
                "page \(number) holds the word common"
                    + String(repeating: " zebra", count: zebras[number] ?? 0)
            } + ["the last page: zebra zebra zebra zebra, and no other word of the query"]
        let bookId = try await addBook(database, pages: texts)
        let terms = ["zebra", "common"].map(folded)
        let (found, counted) = try await database.repository.read { reader in
            var found = [Int]()
            try reader.textIndex.candidatePages(containing: terms, books: nil) { page in
                found.append(page.number)
                return true
            }
            let counted = try reader.textIndex.countCandidatePages(containing: terms, books: nil, cap: 100)
            return (found, counted)
        }
        #expect(found == [20, 30, 10], "the most zebras first; the page without the common word is not a match")
        #expect(counted == 3)
        let reversed = try await database.repository.read { reader in
            var found = [Int]()
            try reader.textIndex.candidatePages(containing: terms.reversed(), books: [bookId]) { page in
                found.append(page.number)
                return true
            }
            return found
        }
        #expect(reversed == found, "the order of the words changes nothing")
    }

    /// A rare word beside a common one when the search stops early: the pages left are counted
    /// on demand from their text, up to the cap, with the pages holding no common word left out.
    @Test func aRareWordsPagesLeftUnreadAreCountedOnDemand() async throws {
        let database = try LibraryDatabase()
        let count = SearchRanking.rankedPages + 10
        let texts =
            (1...count).map { number in
                "page \(number) holds the word common" + (number % 3 == 0 ? " zebra" : "")
            } + (1...50).map { "zebra page \($0) without the other word" }
        _ = try await addBook(database, pages: texts)
        let terms = ["zebra", "common"].map(folded)
        let (read, capped, all) = try await database.writer.read { db in
            let store = SQLiteStore(db: db)
            var read = 0
            try store.candidatePages(containing: terms, books: nil) { page in
                #expect(page.text.contains("common") && page.text.contains("zebra"))
                read += 1
                return read < 5
            }
            let capped = try store.countCandidatePages(containing: terms, books: nil, cap: 300)
            let all = try SQLiteStore(db: db).countCandidatePages(containing: terms, books: nil, cap: 5_000)
            return (read, capped, all)
        }
        #expect(read == 5)
        #expect(capped == 300)
        #expect(all == count / 3, "the index's count of pages holding both")
    }

    /// A phrase ending inside a word spelled more ways than `maxPhrases` ("halo", "haloes",
    /// "halogen"…): its pages are those of the phrase without its last word, counted in their
    /// text, in bm25's order for the whole phrase, and the index is not asked the prefix.
    @Test func aPhraseEndingInAWordOfManySpellingsIsCountedInTheText() async throws {
        let database = try LibraryDatabase()
        let ends = ["halo", "haloes", "halogen", "halos", "halotta", "halowe", "halox", "haloy", "haloz", "halo7"]
        #expect(ends.count > PageWords.maxPhrases)
        let texts = (1...60).map { number in
            var words = (0..<(8 + number % 13)).map { ["alpha", "beta", "gamma"][$0 % 3] }
            for hit in 0..<(number % 4) {
                words.insert("Dark  Matter " + ends[(number + hit) % ends.count], at: (hit * 5) % words.count)
            }
            if number % 7 == 0 { words.append("dark matter without the end") }
            words.append(ends[number % ends.count])
            return words.joined(separator: " ")
        }
        _ = try await addBook(database, pages: texts)
        final class Statements: @unchecked Sendable { var sql = [String]() }
        let statements = Statements()
        let (found, counted, ranked) = try await database.writer.read { db in
            let store = SQLiteStore(db: db)
            db.trace { statements.sql.append($0.expandedDescription) }
            var found = [Int64]()
            try store.candidatePages(containing: [folded("dark matter halo")], books: nil) { page in
                found.append(try #require(page.id))
                return true
            }
            let counted = try store.countCandidatePages(
                containing: [folded("dark matter halo")], books: nil, cap: 1_000)
            db.trace(nil)
            let ranked = try Int64.fetchAll(
                db, sql: "SELECT rowid FROM page_words WHERE page_words MATCH ? ORDER BY rank",
                arguments: [#""dark matter halo"*"#])
            return (found, counted, ranked)
        }
        #expect(found.count == 45)
        #expect(found == ranked, "bm25's order of the whole phrase")
        #expect(counted == 45)
        #expect(
            !statements.sql.contains { $0.contains("page_words MATCH") && $0.contains("halo") }, "\(statements.sql)")
    }

    /// A search that read more candidates than the count's cap leaves nothing to count: the
    /// count asks the index nothing; a higher cap still counts them all.
    @Test func aCountStopsWhereTheSearchsReadingDid() async throws {
        let database = try LibraryDatabase()
        let count = SearchRanking.rankedPages + 10
        _ = try await addBook(database, pages: (1...count).map { "page \($0) holds the word common" })
        let terms = [folded("common")]
        final class Statements: @unchecked Sendable { var sql = [String]() }
        let statements = Statements()
        let (read, capped, exact) = try await database.writer.read { db in
            let store = SQLiteStore(db: db)
            var read = 0
            try store.candidatePages(containing: terms, books: nil) { _ in
                read += 1
                return read < 5
            }
            db.trace { statements.sql.append($0.expandedDescription) }
            let capped = try store.countCandidatePages(containing: terms, books: nil, cap: 1_000)
            db.trace(nil)
            return (read, capped, try store.countCandidatePages(containing: terms, books: nil, cap: 5_000))
        }
        #expect(read == 5)
        #expect(capped == 1_000)
        #expect(statements.sql.isEmpty, "counted again: \(statements.sql)")
        #expect(exact == count)
    }

    /// A phrase search is ranked from the pass that finds its pages (`PhraseRanking`) exactly
    /// as FTS5's bm25 ranks them (`ORDER BY rank`): pages of different lengths holding the phrase
    /// different numbers of times, copies of one page (ties), a phrase ending in a prefix, and a
    /// choice of phrases (a phrase that begins inside a word: each word ending with its start),
    /// whose weights differ. Within one book, `margin_phrase_rank` orders one phrase as bm25 does.
    /// SQLite's sort by bm25 then page (`bm25Order`) gives `ORDER BY rank`'s order, for words too.
    @Test func phrasesRankAsBM25() async throws {
        let database = try LibraryDatabase()
        let filler = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "iota"]
        let texts = (0..<90).map { number in
            let seed = number % 60  // pages 60 to 89 are copies of pages 0 to 29
            var words = (0..<(5 + (seed * 7) % 40)).map { filler[($0 + seed) % filler.count] }
            for hit in 0..<(seed % 4) {
                words.insert(hit % 2 == 0 ? "dark matter halo" : "darkest matter halos", at: (hit * 3) % words.count)
            }
            if seed % 5 == 0 { words.insert("undark matter", at: words.count / 2) }
            return words.joined(separator: " ")
        }
        _ = try await addBook(database, pages: texts)
        let expressions = [
            #""dark matter halo"*"#, #""dark matter""#, #"("dark matter"* OR "darkest matter"* OR "undark matter"*)"#,
            #"("gamma delta" OR "delta epsilon")"#, #"("alpha" OR "halo") AND ("zeta" OR "theta" OR "matter")"#,
        ]
        let orders = try await database.writer.read { db in
            try expressions.map { expression in
                let rank = try Int64.fetchAll(
                    db, sql: "SELECT rowid FROM page_words WHERE page_words MATCH ? ORDER BY rank",
                    arguments: [expression])
                let rankThenId = try Int64.fetchAll(
                    db, sql: "SELECT rowid FROM page_words WHERE page_words MATCH ? ORDER BY rank, rowid",
                    arguments: [expression])
                let onePass = PhraseRanking.order(
                    try Row.fetchAll(
                        db, sql: PhraseRanking.sql("page_words MATCH ?", limit: 1_000), arguments: [expression]))
                let phraseRank = try Int64.fetchAll(
                    db,
                    sql:
                        "SELECT rowid FROM page_words WHERE page_words MATCH ? ORDER BY margin_phrase_rank(page_words), rowid",
                    arguments: [expression])
                let sorted = try Int64.fetchAll(
                    db, sql: "SELECT rowid FROM page_words WHERE page_words MATCH ? \(bm25Order)",
                    arguments: [expression])
                return (rank, rankThenId, onePass, phraseRank, sorted)
            }
        }
        for (expression, (rank, rankThenId, onePass, phraseRank, sorted)) in zip(expressions, orders) {
            #expect(rank.count > 20, "\(expression): \(rank.count) pages")
            #expect(rank == rankThenId, "\(expression): ties by page, as FTS5 leaves them")
            #expect(sorted == rank, "\(expression)")
            if PhraseRanking.isPhrase(expression) { #expect(onePass == rank, "\(expression)") }
            if !expression.hasPrefix("(") { #expect(phraseRank == rank, "\(expression)") }
        }
        #expect(PhraseRanking.isPhrase(expressions[0]) && PhraseRanking.isPhrase(expressions[2]))
        #expect(!PhraseRanking.isPhrase(#""gamma""#) && !PhraseRanking.isPhrase(#"("radioisotopes" OR "isotopes")"#))
    }

    /// A phrase's pages come from one statement over the index, best first.
    @Test func aPhraseSearchReadsTheIndexOnce() async throws {
        let database = try LibraryDatabase()
        let texts = (1...40).map { number in
            "page \(number) " + String(repeating: "the dark matter halo ", count: number % 3) + "ends here"
        }
        _ = try await addBook(database, pages: texts)
        final class Statements: @unchecked Sendable { var sql = [String]() }
        let statements = Statements()
        let (found, ranked) = try await database.writer.read { db in
            db.trace { statements.sql.append($0.expandedDescription) }
            var found = [Int64]()
            try SQLiteStore(db: db).candidatePages(containing: [folded("dark matter halo")], books: nil) { page in
                found.append(try #require(page.id))
                return true
            }
            db.trace(nil)
            let ranked = try Int64.fetchAll(
                db, sql: "SELECT rowid FROM page_words WHERE page_words MATCH ? ORDER BY rank",
                arguments: [#""dark matter halo"*"#])
            return (found, ranked)
        }
        #expect(found.count == 27)
        #expect(found == ranked)
        let passes = statements.sql.filter { $0.contains("FROM page_words WHERE") }
        #expect(passes.count == 1, "\(passes)")
    }

    /// A search of two words asks the vocabulary once for the words holding each in a
    /// transaction, though the phrase they make, the tier of pages holding them as words and
    /// the count all need them; the tier's pages are the same as without that memory, and a
    /// write in the transaction has the vocabulary asked again (a new word holds "dark").
    @Test func theVocabularyIsAskedOnceAPieceInATransaction() async throws {
        let database = try LibraryDatabase()
        _ = try await addBook(
            database,
            pages: (1...30).map {
                "page \($0) the darkest matter " + ($0 % 3 == 0 ? "dark matter" : "dark side of matters")
            })
        final class Statements: @unchecked Sendable { var sql = [String]() }
        let statements = Statements()
        let words = ["dark", "matter"]
        let (phrase, tier, counted, fresh, before, after) = try await database.writer.write { db in
            let store = SQLiteStore(db: db)
            func pages(_ terms: [String], _ tier: WordTier, _ store: SQLiteStore) throws -> [Int64] {
                var found = [Int64]()
                try store.candidatePages(containing: terms, words: tier, books: nil) { page in
                    found.append(try #require(page.id))
                    return true
                }
                return found
            }
            db.trace { statements.sql.append($0.expandedDescription) }
            let phrase = try pages(["dark matter"], .any, store)
            let tier = try pages(words, .holding(words), store)
            let counted = try store.countCandidatePages(containing: words, books: nil, cap: 100)
            let before = statements.sql.count { $0.contains("term_fts MATCH '\"dark\"'") }
            try db.execute(
                sql: "INSERT INTO page(bookId, number, text) SELECT bookId, 31, 'a darkroom' FROM page LIMIT 1")
            try PageWords.sync(db)
            _ = try store.countCandidatePages(containing: words + ["page"], books: nil, cap: 100)
            let after = statements.sql.count { $0.contains("term_fts MATCH '\"dark\"'") }
            db.trace(nil)
            return (phrase, tier, counted, try pages(words, .holding(words), SQLiteStore(db: db)), before, after)
        }
        #expect(phrase.count == 10)
        #expect(tier.count == 30 && Set(tier).isSuperset(of: phrase))
        #expect(tier == fresh, "the same pages in the same order as a store that knew nothing")
        #expect(counted == 30)
        #expect(before == 1, "\(statements.sql.filter { $0.contains("term_fts") })")
        #expect(after == 2, "asked again after the write")
    }

    /// What a term becomes: words, a prefix for its open end, the vocabulary's words for its
    /// open start; nothing at all for a word no page has.
    @Test func termsBecomeWordQueries() async throws {
        let database = try LibraryDatabase()
        let indWords = (0..<8).map { "ind" + String(UnicodeScalar(UInt8(0x61 + $0))) + "q" }.joined(separator: " ")
        _ = try await addBook(
            database, pages: ["the radioisotopes of section 42", "an inverted index", "de " + indWords + " in inverse"])
        let expressions = try await database.writer.read { db in
            try ["isotope", "nverted ind", " index ", "index", "qzxwv", "--", "of sec", "nverted inde", "verted inv"]
                .map {
                    try PageWords.expression(for: [folded($0)], db)
                }
        }
        #expect(expressions[0] == .match(#""radioisotopes""#))
        #expect(
            expressions[1] == .match(#""inverted ind"*"#), "more words start with \"ind\" than are asked one by one")
        #expect(
            expressions[7] == .match(#"("inverted indeq" OR "inverted index")"#), "the words starting with \"inde\"")
        #expect(expressions[8] == .match(#"("inverted inverse" OR "inverted inverted")"#))
        #expect(expressions[2] == .match(#""index""#))
        #expect(expressions[3] == .match(#""index""#), "only the vocabulary's words holding it")
        #expect(expressions[4] == PageWords.Expression.none)
        #expect(expressions[5] == nil, "no word to look up: the caller scans")
        #expect(expressions[6] == .match(#""sec"*"#), "a piece too short to expand starts nothing")
    }
}

/// Models are decoded from rows without GRDB's `Decodable` support: the same values.
@Suite struct RowDecoderTests {
    @Test func storedDatesReadAsGRDBReadsThem() throws {
        for seconds in [0.0, 951_782_400.5, 1_763_788_358.476, 4_102_444_799.999, -86_400.25, 1_700_000_000] {
            let date = Date(timeIntervalSince1970: seconds)
            let stored = try #require(String.fromDatabaseValue(date.databaseValue))
            let ours = try #require(parseStoredDate(stored), "\(stored)")
            let grdb = try #require(Date.fromDatabaseValue(date.databaseValue))
            #expect(abs(ours.timeIntervalSince1970 - grdb.timeIntervalSince1970) < 0.000_001, "\(stored)")
        }
        #expect(parseStoredDate("2026-13-01 00:00:00") == nil)
        #expect(parseStoredDate("2026-11-22T05:12:38Z") == nil, "other forms are left to GRDB")
    }

    /// A book reads itself from its row (`RowReadable`, for speed): with every field set, it
    /// reads back equal to what was written and to what `Decodable` reads from the same row. A
    /// field added to `Book` must be set here (the test fails until it is) and read there.
    @Test func aBookReadsItselfAsDecodableReadsIt() async throws {
        var book = Book(
            sha256: String(repeating: "e", count: 64), title: "T", author: "A", pages: 7, bytes: 99, folder: "f/g",
            password: "pw", now: Date(timeIntervalSince1970: 1_700_000_000))
        book.memo = "m"
        book.updatedAt = Date(timeIntervalSince1970: 1_700_000_100)
        book.openedAt = Date(timeIntervalSince1970: 1_700_000_200)
        book.textlessPages = 2
        book.ocrPages = 3
        book.ocrConfidence = 91.5
        book.indexedAt = Date(timeIntervalSince1970: 1_700_000_300)
        book.addedBy = "ann"
        book.doi = "10.1/x"
        book.arxiv = "2305.03393"
        book.year = 2023
        book.citationKey = "a-2023-t"
        book.venue = "V"
        book.publisher = "P"
        book.userFields = ["title", "author"]
        book.workType = "journal-article"
        book.yearSource = "crossref"
        book.lang = "de"
        for child in Mirror(reflecting: book).children where child.label != "id" {
            let value = child.value
            let unset =
                String(describing: value) == "nil" || (value as? [String])?.isEmpty == true || (value as? Int) == 0
            #expect(!unset, "set \(child.label ?? "?") in this test, and read it in Book(reading:)")
        }
        let database = try LibraryDatabase()
        let written = try await database.repository.write { [book] writer in
            var stored = book
            try writer.insert(&stored)
            return stored
        }
        let read = try await database.repository.read { try $0.fetch(Query<Book>()) }
        #expect(read == [written])
        let decoded = try await database.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM book").map { try Book(from: RowDecoder(row: $0)) }
        }
        #expect(decoded == read)
    }

    /// A listing's sources and tags read themselves too: with every field set, each reads back
    /// equal to what was written and to what `Decodable` reads from the same row.
    @Test func sourcesAndTagsReadThemselvesAsDecodableReadsThem() async throws {
        let database = try LibraryDatabase()
        let (source, tag) = try await database.repository.write { writer in
            var book = Book(sha256: String(repeating: "c", count: 64), title: "T", author: nil, pages: 1, bytes: 1)
            try writer.insert(&book)
            var source = Source(
                bookId: book.id ?? 0, url: "https://example.org/a.pdf", etag: "\"e\"", lastModified: "Mon",
                now: Date(timeIntervalSince1970: 1_700_000_000))
            source.updatedAt = Date(timeIntervalSince1970: 1_700_000_100)
            source.checkedAt = Date(timeIntervalSince1970: 1_700_000_200)
            try writer.insert(&source)
            var tag = MarginCore.Tag(
                bookId: book.id ?? 0, name: "to-read", now: Date(timeIntervalSince1970: 1_700_000_300))
            try writer.insert(&tag)
            return (source, tag)
        }
        for (model, unsetAllowed) in [(source as Any, ["id"]), (tag as Any, ["id"])] {
            for child in Mirror(reflecting: model).children where !unsetAllowed.contains(child.label ?? "") {
                #expect(String(describing: child.value) != "nil", "set \(child.label ?? "?") in this test")
            }
        }
        let (sources, tags) = try await database.repository.read { reader in
            (try reader.fetch(Query<Source>()), try reader.fetch(Query<MarginCore.Tag>()))
        }
        #expect(sources == [source] && tags == [tag])
        let decoded = try await database.writer.read { db in
            (
                try Row.fetchAll(db, sql: "SELECT * FROM source").map { try Source(from: RowDecoder(row: $0)) },
                try Row.fetchAll(db, sql: "SELECT * FROM tag").map { try MarginCore.Tag(from: RowDecoder(row: $0)) }
            )
        }
        #expect(decoded.0 == sources && decoded.1 == tags)
    }

    /// A book read from its statement in place (dates parsed from their bytes, UUIDs loaded from
    /// them) reads as GRDB reads a copied row: empty, non-ASCII and NUL-holding text, NULLs, and
    /// a date stored in another form.
    @Test func textReadInPlaceReadsAsGRDBReadsIt() async throws {
        let database = try LibraryDatabase()
        let titles = ["", "plain", "a\u{0}b", "é漢😀\u{85}", String(repeating: "long ", count: 300)]
        try await database.repository.write { writer in
            for (index, title) in titles.enumerated() {
                var book = Book(
                    sha256: String(repeating: "\(index)", count: 64), title: title,
                    author: index % 2 == 0 ? nil : title,
                    pages: index + 1, bytes: 9, now: Date(timeIntervalSince1970: 1_700_000_000.125 + Double(index)))
                book.memo = index == 1 ? "" : nil
                try writer.insert(&book)
            }
        }
        try await database.writer.write { db in
            try db.execute(sql: "UPDATE book SET updatedAt = '2026-11-22T05:12:38Z' WHERE pages = 2")
            // GRDB binds text up to a NUL; the sqlite3 shell need not.
            try db.execute(sql: "UPDATE book SET title = 'a' || char(0) || 'b' WHERE pages = 3")
        }
        let read = try await database.repository.read { try $0.fetch(Query<Book>()) }
        let copied = try await database.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM book").map { try Book(from: RowDecoder(row: $0)) }
        }
        #expect(read.count == titles.count)
        #expect(read == copied)
        #expect(read.map(\.title) == titles.map { String($0.prefix { $0 != "\u{0}" }) })
        // A search's titles of the books hit (the title column alone) read them the same.
        let ids = read.compactMap(\.id)
        let shown = try await database.repository.read { try $0.titles(of: ids) }
        #expect(shown == Dictionary(uniqueKeysWithValues: read.map { ($0.id ?? 0, $0.title) }))
        // A title of bad UTF-8 (written by hand, as a blob): read as the books' own reading reads it.
        try await database.writer.write { db in
            try db.execute(sql: "UPDATE book SET title = x'ff00fe' WHERE pages = 2")
        }
        let damaged = try await database.repository.read { reader in
            (try reader.titles(of: ids), try reader.fetch(Query<Book>()))
        }
        #expect(damaged.0 == Dictionary(uniqueKeysWithValues: damaged.1.map { ($0.id ?? 0, $0.title) }))
    }

    @Test func everyModelRoundTripsThroughTheRowDecoder() async throws {
        let database = try LibraryDatabase()
        let (book, highlight) = try await database.repository.write { writer in
            var book = Book(sha256: String(repeating: "b", count: 64), title: "T", author: "A", pages: 2, bytes: 9)
            book.memo = "memo"
            try writer.insert(&book)
            var highlight = Highlight(
                bookId: book.id ?? 0, page: 1, text: "x", prefix: "p", suffix: "s", rects: [[1, 2, 3, 4.5]],
                color: "#ffff00", note: nil)
            try writer.insert(&highlight)
            return (book, highlight)
        }
        let (readBook, readHighlight) = try await database.repository.read { reader in
            (try reader.find(Book.self, id: book.id ?? 0), try reader.find(Highlight.self, id: highlight.id ?? 0))
        }
        #expect(readBook?.uuid == book.uuid && readBook?.memo == "memo" && readBook?.author == "A")
        #expect(
            readBook.map { abs($0.addedAt.timeIntervalSince1970 - book.addedAt.timeIntervalSince1970) } ?? 1 < 0.002)
        #expect(
            readHighlight?.rects == [[1, 2, 3, 4.5]] && readHighlight?.note == nil
                && readHighlight?.uuid == highlight.uuid)
    }
}

/// How SQLite is set up in a margin process.
@Suite struct SQLiteSetupTests {
    /// Every connection of this process is opened as a library's (`makeConfiguration`): SQLite
    /// started without memory statistics, so its allocations take no process-wide mutex (the
    /// server's readers waited on one another there). Statistics kept would count here.
    @Test func sqliteKeepsNoMemoryStatisticsForItsConnectionsToWaitOn() async throws {
        let database = try LibraryDatabase()
        let tests = PageWordsTests()
        _ = try await tests.addBook(database, pages: ["a page of words", "another page"])
        #expect(try await tests.candidates(database, "words") == [1])
        #expect(LibraryDatabase.memoryStatisticsOff, "SQLite had started before a library was opened")
        var current: Int64 = 0
        var highest: Int64 = 0
        #expect(sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &current, &highest, 0) == SQLITE_OK)
        #expect(current == 0 && highest == 0, "\(current) bytes counted, at most \(highest)")
    }
}

/// What a search keeps between its reads of a library: the vocabulary's answers, and its
/// prepared statements.
@Suite struct SearchMemoryTests {
    final class Statements: @unchecked Sendable { var sql = [String]() }

    /// The pages holding "ark" inside a word (the vocabulary's words holding it, from its trigram
    /// index), read in a transaction of its own with the library's kept answers, and how many
    /// times the trigram index was asked.
    func pagesHoldingArk(_ database: LibraryDatabase, _ answers: VocabularyAnswers) async throws -> ([Int], Int) {
        let statements = Statements()
        let found = try await database.writer.read { db in
            db.trace { statements.sql.append($0.expandedDescription) }
            defer { db.trace(nil) }
            var found = [Int]()
            let store = SQLiteStore(db: db, termExpressions: TermExpressions(shared: answers))
            try store.candidatePages(containing: [folded("ark")], books: nil) { page in
                found.append(page.number)
                return true
            }
            return found.sorted()
        }
        return (found, statements.sql.count { $0.contains("term_fts MATCH") })
    }

    /// Asked once while the vocabulary stays as it was, whatever pages come and go; asked
    /// again once a page brings a new word, whose pages are then found.
    @Test func theVocabularysAnswersAreKeptAcrossReadsUntilItGrows() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("margin-vocab-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let database = try LibraryDatabase(path: dir.appendingPathComponent("library.sqlite").path, readers: 2)
        let tests = PageWordsTests()
        let book = try await tests.addBook(database, pages: ["dark matter", "a parked car", "nothing here"])
        let answers = VocabularyAnswers()
        #expect(try await pagesHoldingArk(database, answers) == ([1, 2], 1))
        #expect(try await pagesHoldingArk(database, answers) == ([1, 2], 0), "answered from what was kept")
        // A page of known words: the same answer, its page found.
        try await database.repository.write { writer in
            var page = PageText(bookId: book, number: 4, text: "dark parked car")
            try writer.insert(&page)
        }
        #expect(try await pagesHoldingArk(database, answers) == ([1, 2, 4], 0))
        // A new word holding "ark": asked again, its page found.
        try await database.repository.write { writer in
            var page = PageText(bookId: book, number: 5, text: "a bookmark")
            try writer.insert(&page)
        }
        #expect(try await pagesHoldingArk(database, answers) == ([1, 2, 4, 5], 1))
        #expect(try await pagesHoldingArk(database, answers) == ([1, 2, 4, 5], 0))
        // The library's own reads keep theirs in the repository's answers (none with the switch).
        let repository = try #require(database.repository as? SQLiteRepository)
        _ = try await database.repository.read { reader in
            try reader.textIndex.candidatePages(containing: [folded("ark")], books: nil) { _ in true }
        }
        let state = try await database.writer.read { try VocabularyAnswers.state($0) }
        if VocabularyAnswers.isOn {
            let kept = try #require(repository.vocabulary)
            #expect(kept.words(holding: "ark", at: state)?.sorted() == ["bookmark", "dark", "parked"])
        } else {
            #expect(repository.vocabulary == nil)
        }
    }

    /// An answer found in an older snapshot of the vocabulary is not kept over a newer one's;
    /// a newer one replaces them all; past the bound in words, all are let go.
    @Test func keptAnswersFollowTheNewestVocabularyAndStayBounded() {
        let answers = VocabularyAnswers()
        answers.keep(["dark"], holding: "ark", at: 5)
        #expect(answers.words(holding: "ark", at: 5) == ["dark"])
        #expect(answers.words(holding: "ark", at: 6) == nil)
        answers.keep(["dark", "bookmark"], holding: "ark", at: 6)
        answers.keep(["dark"], holding: "ark", at: 5)
        #expect(answers.words(holding: "ark", at: 6) == ["dark", "bookmark"])
        #expect(answers.words(holding: "ark", at: 5) == nil)
        answers.keep(.none, of: "zzz", at: 6)
        #expect(answers.expression(of: "zzz", at: 6) == .some(.none))
        #expect(answers.expression(of: "yyy", at: 6) == nil)
        let many = (0..<(VocabularyAnswers.maxWords / 2)).map { "w\($0)" }
        answers.keep(many, holding: "w1", at: 6)
        answers.keep(many, holding: "w2", at: 6)
        #expect(answers.words(holding: "w2", at: 6)?.count == many.count)
        #expect(answers.words(holding: "ark", at: 6) == nil, "let go when the bound was reached")
    }

    /// The prepared statements a search keeps on its connection are few, whatever the number
    /// of books it is limited to (a list bound as one argument) or of pages it reads (batches
    /// of a few sizes); and what it finds is what it found before.
    @Test func aSearchKeepsFewStatementsWhateverItsBooksAndPages() async throws {
        let database = try LibraryDatabase()
        var books = [Int64]()
        for number in 0..<30 {
            let id = try await database.repository.write { writer in
                var book = Book(
                    sha256: String(format: "%064d", number), title: "Book \(number)", author: nil, pages: number + 1,
                    bytes: 1)
                try writer.insert(&book)
                let id = try #require(book.id)
                for page in 1...(number + 1) {
                    var text = PageText(bookId: id, number: page, text: "alpha page \(page) of book \(number)")
                    try writer.insert(&text)
                }
                return id
            }
            books.append(id)
        }
        let made = books
        let (counts, before, after) = try await database.writer.read { db in
            func kept() -> Set<String> {
                var kept = Set<String>()
                var statement = sqlite3_next_stmt(db.sqliteConnection, nil)
                while let current = statement {
                    kept.insert(String(cString: sqlite3_sql(current)))
                    statement = sqlite3_next_stmt(db.sqliteConnection, current)
                }
                return kept
            }
            let before = kept()
            var counts = [Int]()
            for scope in 1...made.count {
                var found = 0
                try SQLiteStore(db: db).candidatePages(containing: ["alpha"], books: Array(made.prefix(scope))) { _ in
                    found += 1
                    return true
                }
                counts.append(found)
            }
            return (counts, before, kept())
        }
        #expect(counts == (1...books.count).map { $0 * ($0 + 1) / 2 })
        // Those of the search, not FTS5's own (named by their schema).
        let kept = after.subtracting(before).filter { !$0.contains("'main'.") }
        #expect(kept.count >= 5, "prepared once and kept: \(kept)")
        #expect(kept.count <= 12, "\(kept)")
    }
}
