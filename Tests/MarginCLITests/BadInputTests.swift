import Foundation
import TestSupport
import Testing

/// Every bad input gets one `error:` line, a non-zero exit, and leaves the library exactly as
/// it was, with no stray files.
@Suite struct BadInputTests {
    static let server: TestHTTPServer? = try? TestHTTPServer(routes: [
        "/not-found.pdf": .status(404),
        "/broken.pdf": .status(500),
        "/landing": .file(Fixtures.pdf("not-a-pdf.html"), contentType: "text/html"),
        "/html-as-pdf.pdf": .file(Fixtures.pdf("not-a-pdf.html"), contentType: "application/pdf"),
        "/empty.pdf": .bytes([], contentType: "application/pdf"),
        "/truncated.pdf": .file(Fixtures.pdf("truncated.pdf")),
        "/cut.pdf": .cut(Fixtures.bytes(Fixtures.pdf("sample.pdf")), sent: 700),
        "/encrypted.pdf": .file(Fixtures.pdf("encrypted.pdf")),
        "/loop-a": .redirect("/loop-b"),
        "/loop-b": .redirect("/loop-a"),
    ])

    /// Cases: arguments after `add`, and a word the error must contain.
    static let cases: [([String], String)] = [
        (["/not-found.pdf"], "404"),
        (["/broken.pdf"], "500"),
        (["/landing"], "HTML page"),
        (["/html-as-pdf.pdf"], "HTML page"),
        (["/empty.pdf"], "empty"),
        (["/truncated.pdf"], "truncated"),
        (["/cut.pdf"], "cut short"),
        (["/encrypted.pdf"], "--password"),
        (["/encrypted.pdf", "--password", "nope"], "password"),
        (["/loop-a"], "loop"),
        (["http://127.0.0.1:1/closed-port.pdf"], "cannot reach"),
        (["http://margin-test.invalid/x.pdf"], "cannot reach"),
        (["ftp://example.org/x.pdf"], "unsupported URL scheme"),
        (["gopher://example.org/x.pdf"], "unsupported URL scheme"),
        (["/definitely/not/here.pdf"], "no such file"),
        (["FOLDER"], "is a folder"),
        ([Fixtures.pdf("not-a-pdf.html")], "HTML page"),
        ([Fixtures.pdf("truncated.pdf")], "truncated"),
        (["/big.pdf", "--max-size", "1KiB"], "larger than the limit"),
    ]

    @Test(arguments: cases)
    func addFailsCleanly(arguments: [String], expected: String) throws {
        let server = try #require(Self.server)
        server.setRoute("/big.pdf", .file(Fixtures.pdf("sample.pdf")))
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("second.pdf"), "--tag", "keep")
        let before = try box.snapshot()
        let resolved = arguments.map { argument -> String in
            if argument == "FOLDER" { return box.folder.path }
            return argument.hasPrefix("/") && !argument.hasPrefix("/definitely") && !argument.hasPrefix(Fixtures.root)
                ? server.url(argument) : argument
        }
        let result = try box.fails(["add"] + resolved)
        #expect(result.stderr.contains(expected), "\(resolved): \(result.stderr)")
        #expect(try box.snapshot() == before, "the library is unchanged after \(resolved)")
        #expect(box.folder.files().filter { $0.contains("cache/tmp/") }.isEmpty, "no stray temporary files")
    }

    @Test func unknownAndAmbiguousBooks() throws {
        let box = Sandbox()
        let empty = try box.fails("show", "anything")
        #expect(empty.stderr.contains("there is no library in \(box.home)"), "\(empty)")
        #expect(!FileManager.default.fileExists(atPath: box.home), "reading made no library")
        try box.ok("add", Fixtures.pdf("sample.pdf"), Fixtures.pdf("sample-v2.pdf"), Fixtures.pdf("second.pdf"))
        let unknown = try box.margin.run(["show", "Nonexistent"])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.hasPrefix("error: no book matches 'Nonexistent'"))
        let ambiguous = try box.margin.run(["show", "Sample Paper,"])  // only the revised one
        #expect(ambiguous.status == 0, "\(ambiguous)")
        let both = try box.margin.run(["show", "sample"])
        #expect(both.status != 0)
        #expect(both.stderr.hasPrefix("error: 'sample' matches 2 books"))
        #expect(both.stderr.contains("A Sample Paper, Revised"), "candidates are listed")
        // An exact title wins over longer titles containing it.
        #expect(try box.margin.run(["show", "a sample paper"]).status == 0)
    }

    @Test func badArgumentsExitWithUsageStatus() throws {
        let box = Sandbox()
        for arguments in [
            ["add"], ["add", "x.pdf", "--jobs", "0"], ["add", "x.pdf", "--max-size", "huge"],
            ["list", "--sort", "size"],
            ["rm"], ["rm", "--all"], ["rm", "1", "--all", "--yes"], ["edit", "1"],
            ["edit", "1", "--tag", "x", "--untag", "X"],
            ["list", "--limit", "-1"], ["frobnicate"],
        ] {
            let result = try box.margin.run(arguments)
            #expect(result.status == 64, "\(arguments): \(result)")
            #expect(result.stderr.hasPrefix("error: "), "\(arguments): \(result)")
        }
    }
}
