import Foundation
import TestSupport
import Testing

@Suite struct VersionTests {
    let original = Fixtures.bytes(Fixtures.pdf("sample.pdf"))
    let revised = Fixtures.bytes(Fixtures.pdf("sample-revised.pdf"))

    /// A library with sample.pdf from a URL and highlights on it; the server then serves the
    /// revised edition (a preface page first, the zebra sentence gone).
    func setUp() throws -> (Sandbox, TestHTTPServer) {
        let server = try TestHTTPServer(routes: ["/paper.pdf": .validated(original, etag: "\"one\"")])
        let box = Sandbox()
        try box.ok("add", server.url("/paper.pdf"))
        try box.ok("highlight", "add", "sample", "--text", "inverted index", "--occurrence", "1", "--note", "moves")
        try box.ok("highlight", "add", "sample", "--text", "quick brown", "--page", "2")
        try box.ok("highlight", "add", "sample", "--text", "Zebra crossings", "--occurrence", "1")
        server.setRoute(
            "/paper.pdf", .validated(revised, etag: "\"two\"", lastModified: "Thu, 22 Oct 2026 07:28:00 GMT"))
        return (box, server)
    }

    func highlights(_ box: Sandbox) throws -> [String: [String: Any]] {
        let list = try #require(try box.ok("highlight", "list", "--json").json() as? [[String: Any]])
        return Dictionary(list.map { ($0.string("text") ?? "", $0) }, uniquingKeysWith: { a, _ in a })
    }

    @Test func highlightsFollowANewVersion() throws {
        let (box, server) = try setUp()
        defer { server.shutdown() }
        let before = try highlights(box)
        let result = try box.ok("refresh", "--json")
        let outcome = try #require((try result.json() as? [[String: Any]])?.first)
        #expect(outcome.string("status") == "updated")
        let counts = try #require(outcome["highlights"] as? [String: Int])
        #expect(counts == ["moved": 2, "unchanged": 0, "orphaned": 1])
        let after = try highlights(box)
        #expect(after["inverted index"]?.int("page") == 3, "moved a page down with the preface")
        #expect(after["inverted index"]?.string("note") == "moves", "the note stays")
        #expect(
            after["quick brown"]?.int("page") == 3,
            "the repeat on page 2 (now 3) chosen by its context, not the one on page 2")
        #expect(after["Zebra crossings"]?["orphaned"] as? Bool == true, "not found, kept, marked")
        #expect(after["Zebra crossings"]?.int("page") == before["Zebra crossings"]?.int("page"))
        #expect(after["inverted index"]?["rects"] as? [[Double]] != nil)
        // Two versions; the old file is kept in the cache.
        let versions = try #require(try box.ok("book", "versions", "sample", "--json").json() as? [[String: Any]])
        #expect(versions.count == 2)
        #expect(versions.map { $0["current"] as? Bool } == [false, true])
        #expect(versions.allSatisfy { $0["cached"] as? Bool == true })
        let book = try #require(try box.books().first)
        #expect(book.int("pages") == 4)
        // Search sees the new text.
        let hits = try #require(try box.ok("search", "preface", "--json").json() as? [[String: Any]])
        #expect(hits.first?.int("page") == 1)
        // Refreshing again: 304.
        let again = try #require((try box.ok("refresh", "--json").json() as? [[String: Any]])?.first)
        #expect(again.string("status") == "not-modified")
    }

    @Test func keepOldStoresButDoesNotServe() throws {
        let (box, server) = try setUp()
        defer { server.shutdown() }
        let before = try box.books().first?.string("sha256")
        let outcome = try #require((try box.ok("refresh", "--keep-old", "--json").json() as? [[String: Any]])?.first)
        #expect(outcome.string("status") == "stored-new-version")
        #expect(try box.books().first?.string("sha256") == before)
        #expect(try highlights(box)["inverted index"]?.int("page") == 2)
        let versions = try #require(try box.ok("book", "versions", "sample", "--json").json() as? [[String: Any]])
        #expect(versions.map { $0["current"] as? Bool } == [true, false])
    }

    @Test func refreshOfAnUnreachableSourceFailsCleanly() throws {
        let (box, server) = try setUp()
        server.shutdown()
        let before = try box.snapshot()
        let result = try box.margin.run(["refresh"], environment: ["MARGIN_RETRY_DELAY_MS": "5"])
        #expect(result.status != 0)
        #expect(result.stderrLines.filter { !$0.hasPrefix("note: ") }.first?.hasPrefix("error: ") == true, "\(result)")
        #expect(try box.snapshot() == before)
    }
}

@Suite struct CacheTests {
    @Test func listVerifyPruneClear() throws {
        let server = try TestHTTPServer(routes: ["/s.pdf": .file(Fixtures.pdf("sample.pdf"))])
        defer { server.shutdown() }
        let box = Sandbox()
        try box.ok("add", server.url("/s.pdf"))
        try box.ok("add", Fixtures.pdf("second.pdf"))
        let local = box.folder.path + "/only-copy.pdf"
        try FileManager.default.copyItem(atPath: Fixtures.pdf("mixed.pdf"), toPath: local)
        try box.ok("add", local)
        try FileManager.default.removeItem(atPath: local)
        let list = try #require(try box.ok("cache", "list", "--json").json() as? [[String: Any]])
        #expect(list.count == 3)
        #expect(list.allSatisfy { ($0["books"] as? [String])?.count == 1 })
        // A corrupted file is found and restored from its source.
        let sampleFile = try #require(try box.books().first { $0.string("title") == "A Sample Paper" }?.string("file"))
        try Data("corrupt".utf8).write(to: URL(fileURLWithPath: sampleFile))
        let verify = try #require(try box.ok("cache", "verify", "--json").json() as? [String: Any])
        #expect((verify["corrupt"] as? [String])?.count == 1)
        #expect((verify["restored"] as? [String])?.count == 1)
        #expect(Fixtures.bytes(sampleFile) == Fixtures.bytes(Fixtures.pdf("sample.pdf")))
        // Prune: a file no book uses, a stale partial download, and a symlink out of the cache.
        let outside = box.folder.path + "/precious.txt"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: outside))
        let pdfs = box.home + "/cache/pdfs/zz"
        try FileManager.default.createDirectory(atPath: pdfs, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.pdf("untitled-notes.pdf"), toPath: pdfs + "/" + String(repeating: "f", count: 64) + ".pdf")
        try FileManager.default.createSymbolicLink(atPath: pdfs + "/link.pdf", withDestinationPath: outside)
        let stale = box.home + "/cache/tmp/download-old.part"
        try Data("partial".utf8).write(to: URL(fileURLWithPath: stale))
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -7200)], ofItemAtPath: stale)
        let prune = try #require(try box.ok("cache", "prune", "--json").json() as? [String: Any])
        #expect((prune["removed"] as? [String])?.count == 2)
        #expect(FileManager.default.fileExists(atPath: outside), "a symlink is never followed out of the cache")
        #expect(try box.books().count == 3)
        // Clear: the book from an address goes; books added from files are stored, not cached:
        // they stay (the file may be deleted tomorrow), unless --all --yes.
        let clear = try #require(try box.ok("cache", "clear", "--json").json() as? [String: Any])
        #expect((clear["removed"] as? [String])?.count == 1)
        #expect((clear["kept"] as? [String])?.count == 2)
        let books = try box.books()
        #expect(books.filter { $0["cached"] as? Bool == false }.map { $0.string("title") } == ["A Sample Paper"])
        #expect(try box.fails("cache", "clear", "--all").stderr.contains("--yes"))
        // Fetched again on demand.
        try box.ok("path", "sample")
        #expect(try box.books().first { $0.string("title") == "A Sample Paper" }?["cached"] as? Bool == true)
        try box.ok("cache", "clear", "--all", "--yes")
        #expect(try box.books().allSatisfy { $0["cached"] as? Bool == false })
    }
}
