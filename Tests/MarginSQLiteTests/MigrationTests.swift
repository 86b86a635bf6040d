import Foundation
import GRDB
import MarginCore
import TestSupport
import Testing

@testable import MarginSQLite

@Suite struct MigrationTests {
    /// Every database in fixtures/db/ (one per shipped schema version) opens with today's
    /// margin, is migrated to the latest version, is backed up first, and keeps all its rows.
    @Test func everyShippedVersionUpgradesWithNothingLost() async throws {
        let folder = Fixtures.root + "/fixtures/db"
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".sqlite") }
            .sorted()
        #expect(!names.isEmpty, "fixtures/db/ must hold a database per shipped schema version")
        for name in names {
            let temp = TemporaryFolder()
            let path = temp.path + "/library.sqlite"
            try FileManager.default.copyItem(atPath: folder + "/" + name, toPath: path)
            let manifest = try expectedCounts(for: folder + "/" + name)
            let database = try LibraryDatabase(path: path)
            let status = try database.schemaStatus()
            #expect(status.version == LibraryDatabase.latestVersion, "\(name)")
            #expect(status.pending.isEmpty)
            let counts = try await database.repository.read { store in
                [
                    "books": try store.count(Query<Book>()), "sources": try store.count(Query<Source>()),
                    "tags": try store.count(Query<MarginCore.Tag>()),
                    "pages": try store.count(Query<PageText>()), "bookmarks": try store.count(Query<Bookmark>()),
                    "highlights": try store.count(Query<Highlight>()), "memos": try store.count(Query<Memo>()),
                    "guides": try store.count(Query<BookGuide>()),
                    "recognizedPages": try store.count(Query<OCRPage>()),
                ]
            }
            for (table, count) in manifest {
                #expect(counts[table] == count, "\(name): \(table)")
            }
            let books = try await database.repository.read { try $0.all(Book.self) }
            #expect(books.allSatisfy { $0.sha256.count == 64 && !$0.title.isEmpty }, "\(name)")
            // Every book has its current file as a version (v4 made them for older libraries).
            let versions = try await database.repository.read { try $0.all(Version.self) }
            #expect(Set(versions.map(\.sha256)) == Set(books.map(\.sha256)), "\(name)")
            // Highlights and memos are still found by the annotation index (v5 refilled it from a
            // folded column computed in Swift).
            if (manifest["highlights"] ?? 0) > 0 {
                let found = try await database.repository.read { reader in
                    (
                        try reader.textIndex.candidateAnnotations(containing: [folded("INVERTED")], books: nil),
                        try reader.textIndex.candidateAnnotations(containing: [folded("page memo")], books: nil)
                    )
                }
                #expect(found.0.map(\.kind) == ["highlight"], "\(name)")
                #expect(found.1.map(\.kind) == ["memo"], "\(name)")
            }
            // What a book is and its guide (v8) are kept.
            if (manifest["guides"] ?? 0) > 0 {
                let paper = books.first { $0.arxiv != nil }
                #expect(paper?.citationKey == "muller2023margins", "\(name)")
                #expect(paper?.doi == "10.5555/margin.2023.0042", "\(name)")
                let guides = try await database.repository.read { try $0.all(BookGuide.self) }
                #expect(guides.contains { $0.labels == ["i", "ii", "1", "2", "3", "A-1"] }, "\(name)")
            }
            // What kind of work a book is (v9) is kept.
            if let version = Int(name.dropFirst().prefix { $0.isNumber }), version >= 9 {
                #expect(books.contains { $0.workType == "proceedings-article" }, "\(name)")
            }
            // Chinese and Japanese pages (v13) are still found by pairs of their letters.
            if let version = Int(name.dropFirst().prefix { $0.isNumber }), version >= 13 {
                let found = try await database.repository.read { reader in
                    var count = 0
                    try reader.textIndex.candidatePages(containing: [folded("東京")], books: nil) { _ in
                        count += 1
                        return true
                    }
                    return count
                }
                #expect(found == 2, "\(name)")
            }
            if name != "v\(LibraryDatabase.latestVersion).sqlite" {
                #expect(database.backupPath != nil, "\(name): a copy is kept before migrating")
            }
        }
    }

    /// A library of v12 holding Chinese and Japanese text (its page indexed as v12 indexed it:
    /// a run of letters one word, kana without voicing marks; a memo folded so) is indexed again
    /// by v13: the page is found by pairs of its letters, が no longer finds か, the old words
    /// leave the vocabulary, and the memo is folded again.
    @Test func v13IndexesChineseAndJapaneseAgain() async throws {
        let temp = TemporaryFolder()
        let path = temp.path + "/library.sqlite"
        try FileManager.default.copyItem(atPath: Fixtures.root + "/fixtures/db/v12.sqlite", toPath: path)
        let page: Int64 = try await DatabaseQueue(path: path, configuration: LibraryDatabase.makeConfiguration()).write
        { db in
            try db.execute(sql: "INSERT INTO page (bookId, number, text) VALUES (1, 99, '東京タワーは東京にあります。がっこう')")
            let page = db.lastInsertedRowID
            try db.execute(
                sql: "INSERT INTO page_words(rowid, words) VALUES (?, '東京タワーは東京にあります かっこう')", arguments: [page])
            try db.execute(sql: "INSERT OR IGNORE INTO term(word) VALUES ('東京タワーは東京にあります'), ('かっこう')")
            try db.execute(sql: "DELETE FROM page_pending")
            try db.execute(
                sql: "UPDATE memo SET text = 'がっこうのメモ', norm = 'かっこうのメモ' WHERE id = (SELECT min(id) FROM memo)")
            return page
        }
        let database = try LibraryDatabase(path: path)
        #expect(try database.schemaStatus().pending.isEmpty)
        func pages(_ term: String) async throws -> [Int64] {
            try await database.repository.read { reader in
                var found = [Int64]()
                try reader.textIndex.candidatePages(containing: [folded(term)], books: nil) { page in
                    found.append(page.id ?? 0)
                    return true
                }
                return found
            }
        }
        #expect(try await pages("東京") == [page])
        #expect(try await pages("タワー") == [page])
        #expect(try await pages("がっこう") == [page])
        #expect(try await pages("かっこう").isEmpty)
        #expect(try await pages("fox") == [1, 2, 16], "the other pages are indexed as before")
        let left = try await DatabaseQueue(path: path, configuration: LibraryDatabase.makeConfiguration()).read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM term WHERE word = '東京タワーは東京にあります'"),
                try String.fetchOne(db, sql: "SELECT norm FROM memo WHERE id = (SELECT min(id) FROM memo)")
            )
        }
        #expect(left.0 == 0)
        #expect(left.1 == folded("がっこうのメモ") && left.1 != "かっこうのメモ")
    }

    /// A library of v13 holding kana with voicing marks written apart (a page and a memo folded
    /// as v13 folded them: the half-width mark dropped, カス) is folded and indexed again by v14:
    /// ガス finds the page, カス no longer does, and the memo's folded text is パン.
    @Test func v14ComposesVoicingMarksWrittenApart() async throws {
        let temp = TemporaryFolder()
        let path = temp.path + "/library.sqlite"
        try FileManager.default.copyItem(atPath: Fixtures.root + "/fixtures/db/v13.sqlite", toPath: path)
        let page: Int64 = try await DatabaseQueue(path: path, configuration: LibraryDatabase.makeConfiguration()).write
        { db in
            try db.execute(sql: "INSERT INTO page (bookId, number, text) VALUES (1, 99, 'これはｶﾞｽです')")
            let page = db.lastInsertedRowID
            try db.execute(
                sql: "INSERT INTO page_words(rowid, words) VALUES (?, 'これ れは はカ カス スで です')", arguments: [page])
            try db.execute(sql: "INSERT OR IGNORE INTO term(word) VALUES ('はカ'), ('カス'), ('スで')")
            try db.execute(sql: "DELETE FROM page_pending")
            try db.execute(
                sql: "UPDATE memo SET text = 'ﾊﾟﾝのメモ', norm = 'ハンのメモ' WHERE id = (SELECT min(id) FROM memo)")
            return page
        }
        let database = try LibraryDatabase(path: path)
        #expect(try database.schemaStatus().pending.isEmpty)
        func pages(_ term: String) async throws -> [Int64] {
            try await database.repository.read { reader in
                var found = [Int64]()
                try reader.textIndex.candidatePages(containing: [folded(term)], books: nil) { page in
                    found.append(page.id ?? 0)
                    return true
                }
                return found
            }
        }
        #expect(try await pages("ガス") == [page])
        #expect(try await pages("カス").isEmpty)
        #expect(try await pages("fox") == [1, 2, 16], "the other pages are indexed as before")
        let memo = try await DatabaseQueue(path: path, configuration: LibraryDatabase.makeConfiguration()).read { db in
            try String.fetchOne(db, sql: "SELECT norm FROM memo WHERE id = (SELECT min(id) FROM memo)")
        }
        #expect(memo == folded("パンのメモ"))
    }

    /// `vN.sqlite.json` beside each fixture says how many rows each table must keep.
    func expectedCounts(for path: String) throws -> [String: Int] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path + ".json"))
        return try JSONDecoder().decode([String: Int].self, from: data)
    }

    @Test func aDatabaseFromANewerMarginIsRefusedAndUntouched() throws {
        let temp = TemporaryFolder()
        let path = temp.path + "/library.sqlite"
        _ = try LibraryDatabase(path: path)
        // Pretend a future margin applied a migration this build doesn't know.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [path, "INSERT INTO grdb_migrations VALUES ('v99-future')"]
        try process.start()
        process.waitUntilExit()
        let before = try Data(contentsOf: URL(fileURLWithPath: path)).hashValue
        #expect(throws: StoreError.self) { try LibraryDatabase(path: path) }
        let after = try Data(contentsOf: URL(fileURLWithPath: path)).hashValue
        #expect(before == after, "the newer database's bytes are untouched")
        #expect(!FileManager.default.fileExists(atPath: path + ".bak-1"))
    }

    @Test func freshDatabaseIsAtTheLatestVersionAndUserOnly() throws {
        let temp = TemporaryFolder()
        let path = temp.path + "/library.sqlite"
        let database = try LibraryDatabase(path: path)
        #expect(try database.schemaStatus().version == LibraryDatabase.latestVersion)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        #expect(database.backupPath == nil)
    }
}
