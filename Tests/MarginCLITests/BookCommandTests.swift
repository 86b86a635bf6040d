import Foundation
import TestSupport
import Testing

@Suite struct BookCommandTests {
    /// A library with three books: sample (papers, tags classic+ml), second (notes/field, tag
    /// field), untitled (papers/drafts).
    func library() throws -> Sandbox {
        let box = Sandbox()
        try box.ok(
            "add", Fixtures.pdf("sample.pdf"), "--folder", "papers", "--tag", "classic", "--tag", "ml", "--jobs", "1")
        try box.ok("add", Fixtures.pdf("second.pdf"), "--folder", "notes/field", "--tag", "field")
        try box.ok("add", Fixtures.pdf("untitled-notes.pdf"), "--folder", "papers/drafts")
        return box
    }

    func titles(_ box: Sandbox, _ arguments: String...) throws -> [String] {
        let result = try box.margin.run(["list", "--json"] + arguments)
        #expect(result.status == 0, "\(result)")
        return (try result.json() as? [[String: Any]] ?? []).compactMap { $0.string("title") }
    }

    @Test func listFiltersSortsAndPages() throws {
        let box = try library()
        #expect(try titles(box) == ["A Sample Paper", "Field Notes", "untitled-notes"])
        #expect(try titles(box, "--folder", "papers") == ["A Sample Paper", "untitled-notes"], "subfolders included")
        #expect(try titles(box, "--folder", "papers/drafts") == ["untitled-notes"])
        #expect(try titles(box, "--tag", "ML") == ["A Sample Paper"], "tags match case-insensitively")
        #expect(try titles(box, "--tag", "nothing") == [])
        #expect(try titles(box, "--sort", "title") == ["A Sample Paper", "Field Notes", "untitled-notes"])
        #expect(try titles(box, "--sort", "author") == ["A Sample Paper", "Field Notes", "untitled-notes"])
        #expect(try titles(box, "--limit", "1", "--offset", "1") == ["Field Notes"])
        #expect(try titles(box, "--offset", "2") == ["untitled-notes"])
        let table = try box.ok("list")
        let lines = table.stdout.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines[0].hasPrefix("ID  TITLE"))
        // Columns are aligned: each title starts where the TITLE header does.
        let column = lines[0].range(of: "TITLE")!.lowerBound.utf16Offset(in: lines[0])
        #expect(lines[1].dropFirst(column).hasPrefix("A Sample Paper"))
    }

    @Test func editChangesFieldsAndTags() throws {
        let box = try library()
        let result = try box.ok(
            "edit", "sample", "--title", "Renamed", "--author", "", "--folder", "archive", "--tag", "read", "--untag",
            "ml",
            "--memo", "Worth a second look", "--json")
        let book = try #require(try result.json() as? [String: Any])
        #expect(book.string("title") == "Renamed")
        #expect(book["author"] is NSNull)
        #expect(book.string("folder") == "archive")
        #expect(book["tags"] as? [String] == ["classic", "read"])
        #expect(book.string("memo") == "Worth a second look")
        #expect(try titles(box, "--folder", "archive") == ["Renamed"])
        try box.fails("edit", "Renamed", "--title", "  ")
    }

    @Test func showUpdatesRecent() throws {
        let box = try library()
        let empty = try box.ok("recent", "--json")
        #expect((try empty.json() as? [Any])?.isEmpty == true)
        try box.ok("show", "field")
        Thread.sleep(forTimeInterval: 0.01)
        try box.ok("show", "untitled")
        let recent = try box.ok("recent", "--json")
        let titles = (try recent.json() as? [[String: Any]] ?? []).compactMap { $0.string("title") }
        #expect(titles == ["untitled-notes", "Field Notes"], "most recent first")
        let shown = try box.ok("show", "--json", "field")
        #expect((try shown.json() as? [String: Any])?["openedAt"] is String)
    }

    @Test func selectsBooksByIdShaPrefixOrTitle() throws {
        let box = try library()
        let sha = try #require(try box.books().first?.string("sha256"))
        for selector in ["1", String(sha.prefix(6)), String(sha.prefix(6)).uppercased(), "SAMPLE PAP"] {
            let result = try box.ok("show", "--json", selector)
            #expect((try result.json() as? [String: Any])?.string("title") == "A Sample Paper", "\(selector)")
        }
    }

    @Test func removeDeletesBooksAndTheirFiles() throws {
        let box = try library()
        let file = try #require(try box.books().first?.string("file"))
        // One unknown selector removes nothing.
        try box.fails("rm", "sample", "no-such-book")
        #expect(try box.books().count == 3)
        let removed = try box.ok("rm", "sample")
        #expect(removed.stdout.contains("removed 1  A Sample Paper"))
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try box.books().count == 2)
        try box.ok("rm", "--all", "--yes")
        #expect(try box.books().isEmpty)
        #expect(box.folder.files().filter { $0.contains("cache/pdfs/") }.isEmpty)
    }

    @Test func pathFetchesAMissingFileAgainFromItsSource() throws {
        let server = try TestHTTPServer(routes: ["/s.pdf": .file(Fixtures.pdf("sample.pdf"))])
        defer { server.shutdown() }
        let box = Sandbox()
        try box.ok("add", server.url("/s.pdf"))
        let path = try box.ok("path", "sample").stdout.trimmingCharacters(in: .newlines)
        #expect(FileManager.default.fileExists(atPath: path))
        try FileManager.default.removeItem(atPath: path)
        #expect((try box.books().first?["cached"] as? Bool) == false)
        let again = try box.ok("path", "sample").stdout.trimmingCharacters(in: .newlines)
        #expect(again == path)
        #expect(Fixtures.bytes(path) == Fixtures.bytes(Fixtures.pdf("sample.pdf")))
        #expect(server.hitCount("/s.pdf") == 2)
        // With the source gone too, the error says so.
        try FileManager.default.removeItem(atPath: path)
        server.setRoute("/s.pdf", .status(404))
        let failed = try box.fails("path", "sample")
        #expect(failed.stderr.contains("not cached and no source could be fetched"))
    }

    @Test func globalOptionsWorkBeforeOrAfterTheVerb() throws {
        let box = try library()
        let other = TemporaryFolder()
        try box.ok("--library", other.path, "add", Fixtures.pdf("second.pdf"))
        let there = try box.margin.run(["--json", "--library", other.path, "list"])
        #expect((try there.json() as? [Any])?.count == 1, "\(there)")
        let here = try box.margin.run(["list", "--json"])
        #expect((try here.json() as? [Any])?.count == 3, "MARGIN_HOME still used without --library")
        #expect(FileManager.default.fileExists(atPath: other.path + "/library.sqlite"))
    }

    @Test func dbStatusAndCheck() throws {
        let box = try library()
        let status = try #require(try box.ok("db", "status", "--json").json() as? [String: Any])
        let schema = try #require(status["schema"] as? [String: Any])
        #expect(schema["version"] as? Int == schema["latest"] as? Int)
        #expect((status["counts"] as? [String: Int])?["books"] == 3)
        #expect(status.string("database") == box.home + "/library.sqlite")
        let check = try #require(try box.ok("db", "check", "--json").json() as? [String: Any])
        #expect(check["ok"] as? Bool == true)
        // A corrupted cached file is found.
        let file = try #require(try box.books().first?.string("file"))
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: file))
        let bad = try box.margin.run(["db", "check"])
        #expect(bad.status != 0)
        #expect(bad.stdout.contains("corrupt: 1 A Sample Paper"))
    }

    @Test func twoProcessesAtOnceBothSucceed() async throws {
        let box = Sandbox()
        try box.ok("db", "status")
        let runner = box.margin
        let pdfs = ["sample.pdf", "second.pdf", "untitled-notes.pdf", "sample-v2.pdf"]
        let results = try await withThrowingTaskGroup(of: RunResult.self) { group in
            for (index, pdf) in pdfs.enumerated() {
                group.addTask {
                    try runner.run(["add", Fixtures.pdf(pdf), "--tag", "t\(index)"])
                }
                group.addTask { try runner.run(["list", "--json"]) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for result in results {
            #expect(result.status == 0, "\(result)")
            #expect(!result.stderr.contains("locked"))
        }
        #expect(try box.books().count == 4)
    }

    @Test func helpTeachesAndVersionPrints() throws {
        let box = Sandbox()
        let help = try box.ok("add", "--help")
        #expect(help.stdout.contains("--max-size"))
        #expect(help.stdout.contains("Examples:"))
        let version = try box.ok("--version")
        #expect(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").count == 3)
        let completion = try box.ok("--generate-completion-script", "bash")
        #expect(completion.stdout.contains("_margin"))
    }
}
