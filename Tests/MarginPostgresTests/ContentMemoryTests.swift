import Foundation
import MarginCore
import TestSupport
import Testing

@testable import MarginPostgres

/// A library's reads keep what they found besides the pages (the words holding a term, the
/// books' facts, titles and page labels) while the content's version stays (`ContentMemory`):
/// a search sends fewer statements and reads the same; any writer of the vocabulary, the books
/// or their guides, from any connection, makes the next search read them again.
@Suite struct ContentMemoryTests {
    struct Read: Equatable {
        var facts: SearchedBooks
        var pages: [Int]
        var titles: [Int64: String]
        var labels: [Int64: [String]]
    }

    /// One search as the search use case reads (its words and books' facts sent ahead, its
    /// pages, what it tells of the books searched, the titles and labels of the books hit),
    /// and the statements it sent.
    static func search(_ terms: [String], on database: PostgresLibraryDatabase) async throws -> (
        statements: Int, read: Read
    ) {
        try await database.repository.read { reader in
            let store = try #require(reader as? PostgresStore)
            let before = store.session.statementsSent
            try reader.textIndex.lookAhead(containing: terms, asking: BooksSearched(books: nil, languages: true))
            var pages = [Int]()
            var books = Set<Int64>()
            try reader.textIndex.candidatePages(containing: terms, words: .holding(terms), books: nil) {
                pages.append($0.number)
                books.insert($0.bookId)
                return true
            }
            let facts = try reader.searchedBooks(nil, languages: true)
            let titles = try reader.titles(of: books.sorted())
            let labels = try reader.pageLabels(of: books.sorted())
            return (
                store.session.statementsSent - before,
                Read(facts: facts, pages: pages.sorted(), titles: titles, labels: labels)
            )
        }
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aSearchReadsItsWordsAndBooksFromMemoryUntilAnotherClientWritesThem() async throws {
        let url = try TestCluster.freshDatabase()
        let database = try PostgresLibraryDatabase(url: url, connections: 1)
        let bookId = try await PreparedStatementTests.rivers(
            on: database, pages: 3, guide: BookGuide(bookId: 0, labels: ["i", "ii", "iii"], outline: []))
        // The first runs count what ranking weighs with (kept a minute), and statements run
        // prepared from their third: not compared.
        for _ in 0..<3 { _ = try await Self.search(["river"], on: database) }
        let kept = try await Self.search(["river"], on: database)
        database.memory.keeps = false
        for _ in 0..<2 { _ = try await Self.search(["river"], on: database) }
        let plain = try await Self.search(["river"], on: database)
        database.memory.keeps = true
        _ = try await Self.search(["river"], on: database)
        let again = try await Self.search(["river"], on: database)
        let expected = Read(
            facts: SearchedBooks(textlessBooks: 1, textlessPages: 1, textlessTitle: "Rivers", languages: ["en"]),
            pages: [1], titles: [bookId: "Rivers"], labels: [bookId: ["i", "ii", "iii"]])
        #expect(plain.read == expected)
        #expect(kept.read == expected && again.read == expected)
        // The look-up of its words with the books' facts, and the titles with the labels, not
        // sent (nor, after the page read planned for its own arguments, the ask for plans for
        // any before the titles' prepared statement); the content's version sent first.
        #expect(
            kept.statements == plain.statements - 2 && again.statements == kept.statements,
            "\(kept.statements) and \(again.statements) statements kept, \(plain.statements) without")

        // A word no page holds, kept as none.
        for _ in 0..<2 { #expect(try await Self.search(["estuary"], on: database).read.pages.isEmpty) }
        // Another client writes: the book's title and language, a page with a new word, a guide.
        try TestCluster.psql(url, "UPDATE margin.book SET title = 'Streams', lang = 'de' WHERE id = \(bookId)")
        var changed = try await Self.search(["river"], on: database)
        #expect(changed.read.titles == [bookId: "Streams"])
        #expect(changed.read.facts.textlessTitle == "Streams" && changed.read.facts.languages == ["de"])
        #expect(changed.statements > kept.statements, "read again")
        try TestCluster.psql(
            url,
            "INSERT INTO margin.page (\"bookId\", number, text, norm, words) VALUES (\(bookId), 2, 'an estuary', "
                + "'an estuary', 2)")
        #expect(try await Self.search(["estuary"], on: database).read.pages == [2])
        try TestCluster.psql(url, "UPDATE margin.guide SET labels = '[\"a\",\"b\",\"c\"]' WHERE \"bookId\" = \(bookId)")
        changed = try await Self.search(["river"], on: database)
        #expect(changed.read.labels == [bookId: ["a", "b", "c"]])
        // And kept again once read.
        #expect(try await Self.search(["river"], on: database).statements == kept.statements)
    }

    /// The words starting with a prefix (a search's other forms of a word) are kept alike.
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func theWordsStartingWithAPrefixAreKeptUntilTheVocabularyChanges() async throws {
        let url = try TestCluster.freshDatabase()
        let database = try PostgresLibraryDatabase(url: url, connections: 1)
        let bookId = try await PreparedStatementTests.rivers(on: database, pages: 2)
        @Sendable func starting(_ prefixes: [String]) async throws -> (statements: Int, words: [[String]?]) {
            try await database.repository.read { reader in
                let store = try #require(reader as? PostgresStore)
                try store.askVersion()
                let before = store.session.statementsSent
                let words = try reader.textIndex.vocabularies(startingWith: prefixes, limit: 2)
                return (store.session.statementsSent - before, words)
            }
        }
        // Asked: at least its statement (and, run unprepared, PostgreSQL asked to plan for its
        // arguments); kept: none.
        func expect(_ prefixes: [String], asked: Bool, _ words: [[String]?], _ comment: Comment? = nil) async throws {
            let found = try await starting(prefixes)
            #expect(found.words == words, comment)
            #expect(asked ? found.statements > 0 : found.statements == 0, "\(found.statements) statements")
        }
        try await expect(["riv", "t"], asked: true, [["river"], ["the", "to"]])
        try await expect(["riv", "t"], asked: false, [["river"], ["the", "to"]], "kept")
        try await expect(["riv", "s"], asked: true, [["river"], ["sea"]], "one not kept: asked again")
        try TestCluster.psql(
            url,
            "INSERT INTO margin.page (\"bookId\", number, text, norm, words) VALUES (\(bookId), 2, 'rivers', "
                + "'rivers', 1)")
        try await expect(["riv", "t"], asked: true, [["river", "rivers"], ["the", "to"]])
        try await expect(["riv", "t"], asked: false, [["river", "rivers"], ["the", "to"]])
        try TestCluster.psql(url, "INSERT INTO margin.word (word) VALUES ('tributary')")
        try await expect(["riv", "t"], asked: true, [["river", "rivers"], nil], "more than the limit")
        database.memory.keeps = false
        try await expect(["riv", "t"], asked: true, [["river", "rivers"], nil])
        try await expect(["riv", "t"], asked: true, [["river", "rivers"], nil], "none kept")
    }

    /// A transaction begun before another's write (an older snapshot) neither reads what a newer
    /// one kept nor replaces it; a version newer, or of another library (epoch), empties it.
    @Test func answersAreKeptForTheNewestVersionAlone() {
        let memory = ContentMemory()
        memory.keeps = true
        let old = ContentVersion(epoch: 7, version: 1)
        let new = ContentVersion(epoch: 7, version: 2)
        let river = WordTerm(words: ["river", "rivers"], lookedUp: true)
        memory.keep(words: [("river", river)], at: new)
        memory.keep(books: [1, 2], titles: [1: "Rivers"], labels: [:], at: new)
        // An older snapshot's answers: not kept, and the newer ones not given to it.
        memory.keep(words: [("river", WordTerm(words: ["river"], lookedUp: true))], at: old)
        memory.keep(books: [1], titles: [1: "Old title"], labels: [:], at: old)
        #expect(memory.words(of: ["river"], at: old) == nil)
        #expect(memory.titles(of: [1], at: old) == nil)
        #expect(memory.words(of: ["river"], at: new)?.first?.words == ["river", "rivers"])
        #expect(memory.titles(of: [1, 2], at: new)?.titles == [1: "Rivers"], "book 2: read, no such book")
        #expect(memory.titles(of: [3], at: new) == nil)
        // Newer: emptied.
        let newer = ContentVersion(epoch: 7, version: 3)
        memory.keep(facts: BooksSearched(books: nil, languages: true), SearchedBooks(languages: ["en"]), at: newer)
        #expect(memory.words(of: ["river"], at: newer) == nil && !memory.knows(terms: ["river"]))
        #expect(
            memory.facts(BooksSearched(books: nil, languages: false), at: newer) == SearchedBooks(),
            "answers a search not asking for the languages")
        #expect(memory.facts(BooksSearched(books: [1], languages: false), at: newer) == nil)
        // Another library at the same URL, its version lower: emptied too.
        let other = ContentVersion(epoch: 8, version: 0)
        memory.keep(books: [1], titles: [1: "Elsewhere"], labels: [:], at: other)
        #expect(memory.titles(of: [1], at: other)?.titles == [1: "Elsewhere"])
        #expect(memory.facts(BooksSearched(books: nil, languages: false), at: newer) == nil)
    }

    /// Bounded by the words it holds: emptied when a term's words would pass the limit.
    @Test func theMemoryIsBounded() {
        let memory = ContentMemory()
        memory.keeps = true
        let seen = ContentVersion(epoch: 1, version: 1)
        let many = (0..<(ContentMemory.maxWords / 2)).map { "w\($0)" }
        memory.keep(words: [("a", WordTerm(words: many, lookedUp: true))], at: seen)
        memory.keep(words: [("b", WordTerm(words: many, lookedUp: true))], at: seen)
        #expect(memory.knows(terms: ["b"]) && !memory.knows(terms: ["a"]), "emptied before b was kept")
        memory.keep(words: [("c", WordTerm(words: many + many + ["x"], lookedUp: true))], at: seen)
        #expect(!memory.knows(terms: ["c"]), "more than it may hold: not kept")
    }
}
