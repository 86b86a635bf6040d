import Foundation
import MarginCore
import NIOCore
import NIOSSL
import PostgresNIO
import TestSupport
import Testing

@testable import MarginPostgres

/// Record reads run prepared from their third run (`PreparedStatements`), answering as they did
/// unprepared; a schema changed under a prepared read is read again, not an error.
@Suite struct PreparedStatementTests {
    /// The memos' texts `query` selects, and whether the connection it ran on holds a prepared
    /// statement whose text has `marker` (PostgreSQL's own list, `pg_prepared_statements`).
    static func read(_ query: Query<Memo>, on database: PostgresLibraryDatabase, marker: String) async throws
        -> (texts: [String], prepared: Bool)
    {
        try await database.repository.read { reader in
            let store = try #require(reader as? PostgresStore)
            let texts = try reader.fetch(query).map(\.text)
            let statements = try store.run("SELECT statement FROM pg_prepared_statements").rows.map {
                try $0.decode(String.self)
            }
            return (texts, statements.contains { $0.contains(marker) })
        }
    }

    /// A book "Rivers" in English, one of its `pages` without text, its first "the river runs to
    /// the sea"; `guide`, its guide, written in the same transaction.
    static func rivers(
        on database: PostgresLibraryDatabase, pages: Int, guide: BookGuide? = nil
    ) async throws -> Int64 {
        let bookId = try await PostgresConformanceTests.addBook(to: database, "Rivers", pages: pages)
        try await database.repository.write { writer in
            var book = try #require(try writer.find(Book.self, id: bookId))
            book.lang = "en"
            book.textlessPages = 1
            try writer.update(book)
            var page = PageText(bookId: bookId, number: 1, text: "the river runs to the sea")
            try writer.insert(&page)
            if var guide {
                guide.bookId = bookId
                try writer.insert(&guide)
            }
        }
        return bookId
    }

    static func library(memos: Int, at url: String) async throws -> PostgresLibraryDatabase {
        let database = try PostgresLibraryDatabase(url: url, connections: 1)
        let bookId = try await PostgresConformanceTests.addBook(to: database, "Prepared", pages: memos)
        for page in 1...memos {
            _ = try await database.addMemo(Memo(bookId: bookId, page: page, text: "memo \(page)"), openedAt: nil)
        }
        return database
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func recordReadsRunPreparedFromTheirThirdRunAndAnswerAlike() async throws {
        let database = try await Self.library(memos: 5, at: try TestCluster.freshDatabase())
        // A list is one array argument: the statement is the same whatever its length. (The
        // order is this test's own, so no other test's runs count towards this statement's.)
        let lists = [[1, 3, 5, 2, 4], [5, 4, 3, 2, 1, 99, 17], [2, 1, 4, 3, 5, -1], [4, 5, 1, 2, 3]]
        var runs = [(texts: [String], prepared: Bool)]()
        for list in lists {
            let query = Query<Memo>().filter(Memo.Fields.page.isIn(list)).sorted(by: Memo.Fields.page.descending)
                .limit(5, offset: 0)
            runs.append(try await Self.read(query, on: database, marker: "\"page\" = ANY($"))
        }
        #expect(runs.map(\.prepared) == [false, false, true, true])
        #expect(runs.allSatisfy { $0.texts == ["memo 5", "memo 4", "memo 3", "memo 2", "memo 1"] })
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aSchemaChangedUnderAPreparedReadIsReadAgain() async throws {
        let url = try TestCluster.freshDatabase()
        let database = try await Self.library(memos: 3, at: url)
        let query = Query<Memo>().filter(Memo.Fields.page <= 2).sorted(by: Memo.Fields.page.ascending).limit(
            2, offset: 0)
        var prepared = false
        for _ in 0..<3 { prepared = try await Self.read(query, on: database, marker: "\"page\" <= $").prepared }
        #expect(prepared)
        // Another client changes the table the prepared statement reads all the columns of:
        // PostgreSQL refuses to run it ("cached plan must not change result type").
        try TestCluster.psql(url, "ALTER TABLE margin.memo ADD COLUMN later int DEFAULT 7")
        let after = try await Self.read(query, on: database, marker: "\"page\" <= $")
        #expect(after.texts == ["memo 1", "memo 2"])
        #expect(after.prepared, "read again, prepared anew")
    }

    /// What a search asks of the books it searches rides with its first look-up of words
    /// (`lookAhead`): fewer statements, found or not, and the same answers. (Without the
    /// content's memory, which answers both from earlier transactions: `ContentMemoryTests`.)
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aSearchsBooksRideWithItsLookUpOfWords() async throws {
        let database = try PostgresLibraryDatabase(url: try TestCluster.freshDatabase(), connections: 1)
        database.memory.keeps = false
        _ = try await Self.rivers(on: database, pages: 2)
        @Sendable func search(_ terms: [String], asking: Bool) async throws -> (Int, SearchedBooks, [Int]) {
            try await database.repository.read { reader in
                let store = try #require(reader as? PostgresStore)
                let before = store.session.statementsSent
                try reader.textIndex.lookAhead(
                    containing: terms, asking: asking ? BooksSearched(books: nil, languages: true) : nil)
                var pages = [Int]()
                try reader.textIndex.candidatePages(containing: terms, words: .holding(terms), books: nil) {
                    pages.append($0.number)
                    return true
                }
                let books = try reader.searchedBooks(nil, languages: true)
                return (store.session.statementsSent - before, books, pages)
            }
        }
        for terms in [["river"], ["zzyzx"], ["river", "sea"]] {
            // The first runs count what ranking weighs with (kept a minute), and statements run
            // prepared from their third: not compared.
            for _ in 0..<3 {
                _ = try await search(terms, asking: false)
                _ = try await search(terms, asking: true)
            }
            let with = try await search(terms, asking: true)
            let without = try await search(terms, asking: false)
            // Found, the facts alone were read after the pages' text (planned for its own
            // arguments), and planning for any asked again: two fewer.
            #expect(
                with.0 == without.0 - (terms == ["zzyzx"] ? 1 : 2),
                "\(terms): \(with.0) statements, \(without.0) without")
            if terms == ["zzyzx"] { #expect(with.0 == 1, "words and books in one statement, no page to read") }
            #expect(with.1 == without.1 && with.2 == without.2, "\(terms)")
            #expect(
                with.1 == SearchedBooks(textlessBooks: 1, textlessPages: 1, textlessTitle: "Rivers", languages: ["en"]))
            #expect(with.2 == (terms == ["zzyzx"] ? [] : [1]), "\(terms)")
        }
    }

    /// A book read and its opening written, as an annotation saved does first: one statement
    /// (once prepared), the user's own reading row written, none for a book that is not there.
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aBooksOpeningIsOneStatement() async throws {
        let database = try PostgresLibraryDatabase(url: try TestCluster.freshDatabase(), connections: 1)
        let bookId = try await PostgresConformanceTests.addBook(to: database, "Opened", pages: 2)
        var runs = [(statements: Int, title: String?, missing: Bool, readings: Int64)]()
        for second in 1...4 {
            runs.append(
                try await database.repository.write { writer in
                    let store = try #require(writer as? PostgresStore)
                    let before = store.session.statementsSent
                    let book = try writer.noteOpened(bookId: bookId, at: Date(timeIntervalSince1970: Double(second)))
                    let statements = store.session.statementsSent - before
                    let missing = try writer.noteOpened(bookId: bookId + 1, at: Date()) == nil
                    let readings = try store.run("SELECT count(*) FROM reading").rows.first!.decode(Int64.self)
                    return (statements, book?.title, missing, readings)
                })
        }
        // Prepared from its third run (the second is the first transaction's for no book); at its
        // first, the transaction asked for plans of its own before it.
        #expect(runs.map(\.statements) == [2, 1, 1, 1])
        #expect(runs.allSatisfy { $0.title == "Opened" && $0.missing && $0.readings == 1 })
        let opened = try await database.repository.read { try $0.find(Book.self, id: bookId)?.openedAt }
        #expect(opened == Date(timeIntervalSince1970: 4))
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func preparedReadsArePlannedForAnyArgumentsTheOthersForTheirOwn() async throws {
        let database = try await Self.library(memos: 4, at: try TestCluster.freshDatabase())
        // (A shape of statement no other test runs, so its runs are this test's.)
        let query = Query<Memo>().filter(Memo.Fields.page >= 2).sorted(by: Memo.Fields.page.descending).limit(
            3, offset: 0)
        let asked = try await database.repository.read { reader in
            let store = try #require(reader as? PostgresStore)
            func mode() throws -> String {
                try store.run("SELECT current_setting('plan_cache_mode')").rows.first!.decode(String.self)
            }
            let before = try mode()
            var texts = [[String]]()
            for _ in 0..<4 { texts.append(try reader.fetch(query).map(\.text)) }
            let afterPrepared = try mode()
            // A statement with arguments that is not prepared is planned for its own again.
            var setting = PostgresBindings()
            setting.append("plan_cache_mode")
            let own = try store.run("SELECT current_setting($1)", setting).rows.first!.decode(String.self)
            // And the next prepared one for any again.
            texts.append(try reader.fetch(query).map(\.text))
            let again = try mode()
            let plans = try store.run(
                "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '%\"page\" >= $%'"
            ).rows.map { row -> [Int64] in
                let (generic, custom) = try row.decode((Int64, Int64).self)
                return [generic, custom]
            }
            return (before, texts, afterPrepared, own, plans, again)
        }
        // The connection plans for any arguments from its start: no transaction asks for it.
        #expect(asked.0 == "force_generic_plan")
        #expect(asked.1.allSatisfy { $0 == ["memo 4", "memo 3", "memo 2"] })
        #expect(asked.2 == "force_generic_plan")
        #expect(asked.3 == "auto")
        #expect(asked.5 == "force_generic_plan")
        // Its three prepared runs used the plan for any arguments, none planned its own.
        #expect(asked.4 == [[3, 0]])
        // The transaction's end undid its own setting: the connection's is back.
        let next = try await database.repository.read { reader in
            try (reader as! PostgresStore).run("SELECT current_setting('plan_cache_mode')").rows.first!.decode(
                String.self)
        }
        #expect(next == "force_generic_plan")
        // A write with arguments plans for any: no round trip to ask for its own.
        let writing = try await database.repository.write { writer in
            var memo = Memo(bookId: try #require(try writer.all(Book.self).first?.id), page: 1, text: "written")
            try writer.insert(&memo)
            return try (writer as! PostgresStore).run("SELECT current_setting('plan_cache_mode')").rows.first!.decode(
                String.self)
        }
        #expect(writing == "force_generic_plan")
    }
}

/// A statement whose connection fails under it, however the failure comes (NIO's, TLS's or the
/// system's), is "can't be reached" (`serve`: 503, retried by a client),
/// never a failure of the statement (500): as when PostgreSQL restarts.
@Suite struct ConnectionFailureWordsTests {
    @Test func aConnectionFailingUnderAStatementIsUnreachable() {
        // (PostgresNIO's own errors can't be made outside it: connection_loss.py meets them.)
        let failures: [any Error] = [
            ChannelError.ioOnClosedChannel, ChannelError.eof, NIOSSLError.uncleanShutdown,
            IOError(errnoCode: ECONNRESET, reason: "read"),
        ]
        for failure in failures {
            let said = PostgresSession.storeError(failure, path: "postgres://u@h/db")
            guard case StoreError.unreachable = said else {
                Issue.record("\(failure) became \(said)")
                continue
            }
        }
        // A statement's own error stays one.
        guard case StoreError.failed = PostgresSession.storeError(CocoaError(.fileNoSuchFile), path: "x") else {
            Issue.record("another error is a failure")
            return
        }
    }
}
