import Foundation
import MarginCore
import MarginPostgres
import StoreConformance
import TestSupport
import Testing

/// The PostgreSQL store passes every store conformance check the SQLite store passes, each on
/// a database of its own.
@Suite struct PostgresConformanceTests {
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"),
        arguments: StoreConformance.names)
    func onAFreshDatabase(_ check: String) async throws {
        try await StoreConformance.run(check, on: try PostgresLibraryDatabase(url: try TestCluster.freshDatabase()))
    }

    /// Opening twice applies the migrations once; the status says what is applied.
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func theSchemaIsMigratedOnce() throws {
        let url = try TestCluster.freshDatabase()
        let first = try PostgresLibraryDatabase(url: url).schemaStatus()
        let second = try PostgresLibraryDatabase(url: url).schemaStatus()
        #expect(first.pending.isEmpty && first.version == first.latest)
        #expect(second.applied == first.applied)
    }

    /// A schema a newer margin made is refused, and left as it was.
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aNewerSchemaIsRefusedUntouched() throws {
        let url = try TestCluster.freshDatabase()
        _ = try PostgresLibraryDatabase(url: url)
        try TestCluster.psql(url, "INSERT INTO margin.migrations (name) VALUES ('v99-from-the-future')")
        let before = try TestCluster.psql(url, "SELECT string_agg(name, ',' ORDER BY name) FROM margin.migrations")
        #expect {
            _ = try PostgresLibraryDatabase(url: url)
        } throws: { error in
            guard case StoreError.newerSchema = error else { return false }
            return true
        }
        #expect(
            try TestCluster.psql(url, "SELECT string_agg(name, ',' ORDER BY name) FROM margin.migrations") == before)
    }

    /// Every connection is as the URL's role, and the pool serves transactions side by side:
    /// 24 writes at once land, each once.
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func concurrentTransactionsShareThePool() async throws {
        let database = try PostgresLibraryDatabase(url: try TestCluster.freshDatabase(), connections: 4)
        let book = try await database.repository.write { writer in
            var book = Book(sha256: String(repeating: "e", count: 64), title: "Pooled", author: nil, pages: 9, bytes: 1)
            try writer.insert(&book)
            return book
        }
        let bookId = try #require(book.id)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<24 {
                group.addTask {
                    _ = try await database.addMemo(
                        Memo(bookId: bookId, page: index % 9 + 1, text: "memo \(index)"), openedAt: nil)
                }
            }
            try await group.waitForAll()
        }
        let memos = try await database.repository.read { try $0.all(Memo.self) }
        #expect(Set(memos.map(\.text)).count == 24)
        #expect(memos.allSatisfy { $0.owner == database.user })
    }
}
