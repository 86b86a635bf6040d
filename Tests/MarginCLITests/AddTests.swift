import Foundation
import TestSupport
import Testing

@Suite struct AddTests {
    @Test func addsALocalPDFWithItsMetadata() throws {
        let box = Sandbox()
        let result = try box.ok("add", Fixtures.pdf("sample.pdf"), "--folder", "papers", "--tag", "a", "--tag", "b")
        #expect(result.stdout.contains("added 1  A Sample Paper (3 pages"))
        let books = try box.books()
        #expect(books.count == 1)
        let book = try #require(books.first)
        #expect(book.string("title") == "A Sample Paper")
        #expect(book.string("author") == "Ada Lovelace")
        #expect(book.int("pages") == 3)
        #expect(book.string("folder") == "papers")
        #expect(book["tags"] as? [String] == ["a", "b"])
        #expect(book["cached"] as? Bool == true)
        #expect(book.int("bytes") == Fixtures.bytes(Fixtures.pdf("sample.pdf")).count)
        let sha = try #require(book.string("sha256"))
        #expect(sha.count == 64)
        // Content-addressed, byte-identical copy.
        let file = try #require(book.string("file"))
        #expect(file.hasSuffix("/cache/pdfs/\(sha.prefix(2))/\(sha).pdf"))
        #expect(Fixtures.bytes(file) == Fixtures.bytes(Fixtures.pdf("sample.pdf")))
        #expect(book["sources"] as? [String] == ["file://" + Fixtures.pdf("sample.pdf")])
        #expect(book["openedAt"] is NSNull)
        #expect(book["addedAt"] is String)
    }

    @Test func titleFallsBackToTheFileNameAndFlagsWin() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("untitled-notes.pdf"))
        try box.ok("add", Fixtures.pdf("second.pdf"), "--title", "My Notes", "--author", "Me")
        let books = try box.books()
        #expect(books.map { $0.string("title") } == ["untitled-notes", "My Notes"])
        #expect(books[0]["author"] is NSNull)
        #expect(books[1].string("author") == "Me")
    }

    @Test func addsByURLAndDeduplicatesByContent() throws {
        let server = try TestHTTPServer(routes: [
            "/papers/sample.pdf": .file(Fixtures.pdf("sample.pdf")),
            "/mirror/copy.pdf": .file(Fixtures.pdf("sample.pdf"), contentType: "text/html"),
            "/go": .redirect("/papers/sample.pdf"),
        ])
        defer { server.shutdown() }
        let box = Sandbox()
        let first = try box.margin.run(["add", "--json", server.url("/papers/sample.pdf")])
        #expect(first.status == 0, "\(first)")
        let outcome = try #require((try first.json() as? [[String: Any]])?.first)
        #expect(outcome["ok"] as? Bool == true)
        #expect(outcome["duplicate"] as? Bool == false)
        #expect(outcome.string("input") == server.url("/papers/sample.pdf"))
        // Same bytes from another URL (served with a lying Content-Type): same book, a new source.
        let second = try box.margin.run(["add", "--json", server.url("/mirror/copy.pdf")])
        #expect(second.status == 0, "\(second)")
        let duplicate = try #require((try second.json() as? [[String: Any]])?.first)
        #expect(duplicate["duplicate"] as? Bool == true)
        let books = try box.books()
        #expect(books.count == 1)
        #expect(
            Set(books[0]["sources"] as? [String] ?? []) == [
                server.url("/papers/sample.pdf"), server.url("/mirror/copy.pdf"),
            ])
        // Redirects are followed.
        try box.ok("add", server.url("/go"))
        #expect(try box.books().count == 1)
        #expect(box.folder.files().filter { $0.contains("/tmp/") }.isEmpty, "no temporary files left")
    }

    @Test func severalInputsAreIndependent() throws {
        let server = try TestHTTPServer(routes: ["/a.pdf": .file(Fixtures.pdf("second.pdf"))])
        defer { server.shutdown() }
        let box = Sandbox()
        let result = try box.margin.run([
            "add", "--json", "--jobs", "3", Fixtures.pdf("sample.pdf"), server.url("/missing.pdf"),
            server.url("/a.pdf"),
            Fixtures.pdf("truncated.pdf"),
        ])
        #expect(result.status != 0, "one failure makes the exit status non-zero")
        let outcomes = try #require(try result.json() as? [[String: Any]])
        #expect(outcomes.map { $0["ok"] as? Bool } == [true, false, true, false], "in input order")
        #expect(outcomes[1].string("error")?.contains("404") == true)
        #expect(outcomes[3].string("error")?.contains("truncated") == true)
        #expect(try box.books().count == 2)
        #expect(result.stderrLines.filter { $0.hasPrefix("error: ") }.count == 2)
    }

    @Test func encryptedPDFsNeedTheirPassword() throws {
        let box = Sandbox()
        let missing = try box.fails("add", Fixtures.pdf("encrypted.pdf"))
        #expect(missing.stderr.contains("--password"))
        let wrong = try box.fails("add", Fixtures.pdf("encrypted.pdf"), "--password", "guess")
        #expect(wrong.stderr.contains("password"))
        #expect(try box.books().isEmpty)
        try box.ok("add", Fixtures.pdf("encrypted.pdf"), "--password", "secret")
        let book = try #require(try box.books().first)
        #expect(book.int("pages") == 2)
        #expect(book["encrypted"] as? Bool == true)
    }
}
