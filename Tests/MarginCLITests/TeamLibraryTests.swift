import Foundation
import TestSupport
import Testing

/// A team library on PostgreSQL through the CLI: two machines (each its own MARGIN_HOME, so its
/// own cache) share one database.
@Suite struct TeamLibraryTests {
    @Test(.enabled(if: TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func twoMachinesShareBooksFilesAndAnnotations() throws {
        let url = try TestCluster.freshDatabase()
        let first = Sandbox()
        let second = Sandbox()
        let team = ["MARGIN_LIBRARY": url]
        func run(_ box: Sandbox, _ arguments: String...) throws -> RunResult {
            let result = try box.margin.run(arguments, environment: team)
            #expect(result.status == 0, "\(arguments): \(result)")
            return result
        }
        let initialized = try run(first, "db", "init", "--json")
        #expect((try initialized.json() as? [String: Any])?["pending"] as? [String] == [])
        try run(first, "add", "-q", Fixtures.pdf("sample.pdf"), Fixtures.pdf("second.pdf"))

        // The other machine sees the books, searches them, and reads a PDF it never had: the
        // file comes from the database into its own cache.
        let books = try #require(try run(second, "list", "--json").json() as? [[String: Any]])
        #expect(Set(books.compactMap { $0["title"] as? String }) == ["A Sample Paper", "Field Notes"])
        let sample = try #require(books.first { $0["title"] as? String == "A Sample Paper" }?["id"] as? Int)
        let hits = try #require(try run(second, "search", "inverted index", "--json").json() as? [[String: Any]])
        #expect(hits.map { $0["page"] as? Int } == [2])
        let image = second.folder.path + "/p2.png"
        try run(second, "render", String(sample), "--page", "2", "-o", image)
        #expect(FileManager.default.fileExists(atPath: image))
        let cached = try #require(try run(second, "path", String(sample)).stdout.split(separator: "\n").first)
        #expect(cached.hasPrefix(second.home), "the copy is in the second machine's cache: \(cached)")

        // The same bytes added on the other machine are the same book.
        let again = try #require(
            try run(second, "add", Fixtures.pdf("sample.pdf"), "--tag", "team", "--json").json() as? [[String: Any]])
        #expect(again.first?["duplicate"] as? Bool == true)
        #expect(try #require(try run(first, "list", "--json").json() as? [Any]).count == 2)

        // An annotation made on one machine is listed on the other.
        try run(second, "highlight", "add", String(sample), "--text", "quick brown fox", "--page", "1")
        let highlights = try #require(try run(first, "highlight", "list", "--json").json() as? [[String: Any]])
        #expect(highlights.map { $0["text"] as? String } == ["quick brown fox"])
        let check = try run(first, "db", "check")
        #expect(check.stdout.contains("integrity     ok"), "\(check)")
    }

    @Test(.enabled(if: TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func anUnreachableDatabaseIsOneClearError() throws {
        let box = Sandbox()
        let result = try box.fails("list", "--library", "postgres://nobody@127.0.0.1:1/none")
        #expect(result.stderr.contains("cannot open the library at postgres://nobody@127.0.0.1:1/none"), "\(result)")
    }
}
