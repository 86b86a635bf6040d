@testable import MarginSQLite
import Foundation
import MarginCore
import Testing
import TestSupport

@Suite struct RepositoryTests {
    let database: LibraryDatabase
    var repository: any Repository { database.repository }

    init() throws {
        database = try LibraryDatabase()
    }

    func makeBook(_ title: String, sha: String, author: String? = nil, folder: String? = nil) throws -> Book {
        try repository.write { store in
            var book = Book(sha256: sha, title: title, author: author, pages: 1, bytes: 10, folder: folder)
            try store.insert(&book)
            return book
        }
    }

    @Test func insertAssignsIdsAndFetchesBack() throws {
        let book = try makeBook("Dune", sha: String(repeating: "a", count: 64), author: "Herbert")
        let id = try #require(book.id)
        let fetched = try repository.read { try $0.find(Book.self, id: id) }
        #expect(fetched?.title == "Dune")
        #expect(fetched?.uuid == book.uuid)
        // Dates survive the round trip to the millisecond.
        #expect(abs((fetched?.addedAt.timeIntervalSince1970 ?? 0) - book.addedAt.timeIntervalSince1970) < 0.002)
    }

    @Test func filtersSortsAndPages() throws {
        _ = try makeBook("Zen", sha: String(repeating: "1", count: 64), folder: "a")
        _ = try makeBook("alpha", sha: String(repeating: "2", count: 64), folder: "a/b")
        _ = try makeBook("Mid", sha: String(repeating: "3", count: 64), folder: "c")
        let sorted = try repository.read { store in
            try store.fetch(Query<Book>().sorted(by: Book.Fields.title.ascending)).map(\.title)
        }
        #expect(sorted == ["alpha", "Mid", "Zen"], "text sorts case-insensitively")
        let page = try repository.read { store in
            try store.fetch(Query<Book>().sorted(by: Book.Fields.title.ascending).limit(1, offset: 1)).map(\.title)
        }
        #expect(page == ["Mid"])
        let inA = try repository.read { store in
            try store.fetch(Query<Book>().filter(Book.Fields.folder == "a" || Book.Fields.folder.hasPrefix("a/")))
        }
        #expect(Set(inA.map(\.title)) == ["Zen", "alpha"])
        let count = try repository.read { try $0.count(Query<Book>().filter(!Book.Fields.folder.isNull)) }
        #expect(count == 3)
    }

    @Test func containsIsCaseAndAccentInsensitive() throws {
        _ = try makeBook("Über die Zahlen", sha: String(repeating: "4", count: 64))
        let found = try repository.read { store in
            try store.fetch(Query<Book>().filter(Book.Fields.title.contains("uber DIE")))
        }
        #expect(found.map(\.title) == ["Über die Zahlen"])
    }

    @Test func upsertUpdatesByNaturalKeyElseInserts() throws {
        let book = try makeBook("Book", sha: String(repeating: "5", count: 64))
        let bookId = try #require(book.id)
        let (first, second, sources) = try repository.write { store in
            var source = Source(bookId: bookId, url: "http://x/a.pdf", etag: "v1")
            let first = try store.upsert(&source)
            var again = Source(bookId: bookId, url: "http://x/a.pdf", etag: "v2")
            let second = try store.upsert(&again)
            #expect(again.uuid == source.uuid, "an upsert keeps the row's identity")
            return (first, second, try store.all(Source.self))
        }
        #expect(first == .inserted)
        #expect(second == .updated)
        #expect(sources.count == 1)
        #expect(sources.first?.etag == "v2")
    }

    @Test func aFailingWriteChangesNothing() throws {
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try repository.write { store in
                var book = Book(sha256: String(repeating: "6", count: 64), title: "Half", author: nil, pages: 1, bytes: 1)
                try store.insert(&book)
                throw Boom()
            }
        }
        #expect(try repository.read { try $0.count(Query<Book>()) } == 0)
    }

    @Test func deletingABookCascadesToSourcesAndTags() throws {
        let book = try makeBook("Gone", sha: String(repeating: "7", count: 64))
        let bookId = try #require(book.id)
        try repository.write { store in
            var source = Source(bookId: bookId, url: "file:///x.pdf")
            try store.insert(&source)
            var tag = MarginCore.Tag(bookId: bookId, name: "t")
            try store.insert(&tag)
            try store.delete(book)
        }
        let counts = try repository.read { (try $0.count(Query<Source>()), try $0.count(Query<MarginCore.Tag>())) }
        #expect(counts.0 == 0 && counts.1 == 0)
    }

    @Test func foreignKeysAreEnforced() throws {
        // An annotation or source pointing at no book must be impossible.
        #expect(throws: (any Error).self) {
            try repository.write { store in
                var orphan = Source(bookId: 999, url: "http://x")
                try store.insert(&orphan)
            }
        }
    }

    @Test func duplicateShaIsRejected() throws {
        _ = try makeBook("One", sha: String(repeating: "8", count: 64))
        #expect(throws: (any Error).self) { try makeBook("Two", sha: String(repeating: "8", count: 64)) }
    }
}
