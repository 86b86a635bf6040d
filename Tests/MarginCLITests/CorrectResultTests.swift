import Foundation
import TestSupport
import Testing

/// Defects where Margin gave wrong results: each test failed before its fix.
@Suite struct CorrectResultTests {
    func prose() throws -> Sandbox {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("prose.pdf"))
        return box
    }

    func highlight(_ box: Sandbox, _ arguments: String...) throws -> [String: Any] {
        let result = try box.ok(["highlight", "add", "prose"] + arguments + ["--json"])
        let list = try #require(try result.json() as? [[String: Any]], "\(result)")
        return try #require(list.first)
    }

    /// A passage over three or more lines can be highlighted (before: poppler's find joined
    /// only two lines and the highlight failed).
    @Test func highlightsOverManyLines() throws {
        let box = try prose()
        let passage =
            "When it started out, it was an awful lot of fun. Of course, the paying customers got shafted every now and then"
        let saved = try highlight(box, "--text", passage)
        #expect(saved.string("text") == passage)
        let rects = try #require(saved["rects"] as? [[Double]])
        #expect(rects.count == 3, "one rect per line: \(rects)")
        #expect(rects.allSatisfy { $0.count == 4 && $0[2] > $0[0] && $0[3] > $0[1] })
        let tops = rects.map { $0[3] }
        #expect(tops == tops.sorted(by: >), "top to bottom")
        // Five lines.
        let longer = try highlight(
            box, "--text",
            "paying customers got shafted every now and then, and after a while we began to take those complaints seriously. The computer is a machine"
        )
        #expect((longer["rects"] as? [[Double]])?.count == 4)
        // The annotated PDF carries it back, whole.
        let out = box.folder.path + "/out.pdf"
        try box.ok("export", "prose", "--format", "pdf", "-o", out)
        let other = Sandbox()
        try other.ok("add", out)
        let imported = try #require(try other.ok("import-annotations", "prose", "--json").json() as? [String: Any])
        #expect(imported.int("added") == 2)
        let texts = try #require(try other.ok("highlight", "list", "--json").json() as? [[String: Any]]).compactMap {
            $0.string("text")
        }
        #expect(texts.contains(passage), "\(texts)")
        // A note written with Windows line ends comes back with plain ones.
        try box.ok("memo", "add", "prose", "--page", "1", "line one\r\nline two")
        let again = box.folder.path + "/again.pdf"
        try box.ok("export", "prose", "--format", "pdf", "-o", again)
        let third = Sandbox()
        try third.ok("add", again)
        try third.ok("import-annotations", "prose")
        let memos = try #require(try third.ok("memo", "list", "--json").json() as? [[String: Any]])
        #expect(memos.first?.string("text") == "line one\nline two", "\(memos)")
    }

    /// Words hyphenated at a line end are one word everywhere: highlight text and context,
    /// search (with or without the hyphen), import-annotations, and refresh keeps them.
    @Test func hyphenatedLineEnds() throws {
        let box = try prose()
        let computer = try highlight(box, "--text", "computer")
        #expect(computer.string("text") == "computer", "not 'com puter'")
        #expect(computer.string("prefix")?.hasSuffix("seriously. The ") == true, "context is kept: \(computer)")
        #expect(computer.string("suffix")?.hasPrefix(" is a machine") == true)
        #expect((computer["rects"] as? [[Double]])?.count == 2, "two lines")
        let compound = try highlight(box, "--text", "applicative-order evaluation")
        #expect(compound.string("text") == "applicative-order evaluation")
        for query in ["applicative-order", "computer", "co-", "cooperation", "\"the computer is\""] {
            let hits = try #require(try box.ok("search", query, "--json").json() as? [[String: Any]], "\(query)")
            #expect(hits.first?.int("page") == 1, "\(query): \(hits)")
        }
        // pdfannots reads "registers" where Margin read "regis- ters".
        let out = box.folder.path + "/out.pdf"
        try box.ok("export", "prose", "--format", "pdf", "-o", out)
        let other = Sandbox()
        try other.ok("add", out)
        try other.ok("import-annotations", "prose")
        let texts = try #require(try other.ok("highlight", "list", "--json").json() as? [[String: Any]]).compactMap {
            $0.string("text")
        }
        #expect(texts.contains("computer"), "\(texts)")
        // A new version: the highlight is found again, not orphaned.
        let server = try TestHTTPServer(routes: [
            "/prose.pdf": .validated(Fixtures.bytes(Fixtures.pdf("prose.pdf")), etag: "\"1\"")
        ])
        defer { server.shutdown() }
        let remote = Sandbox()
        try remote.ok("add", server.url("/prose.pdf"))
        try remote.ok("highlight", "add", "prose", "--text", "computer", "--occurrence", "1")
        server.setRoute(
            "/prose.pdf",
            .validated(
                Fixtures.bytes(Fixtures.pdf("prose-revised.pdf")), etag: "\"2\"",
                lastModified: "Thu, 22 Oct 2026 07:28:00 GMT"))
        try remote.ok("refresh")
        let moved = try #require((try remote.ok("highlight", "list", "--json").json() as? [[String: Any]])?.first)
        #expect(moved["orphaned"] as? Bool == false)
        #expect(moved.int("page") == 2)
    }

    /// `refresh` moves bookmarks and memos with their page's text, and `book use` switches to a
    /// stored version (before: they kept their old page numbers; no way to switch).
    @Test func bookmarksAndMemosFollowTheirPages() throws {
        let server = try TestHTTPServer(routes: [
            "/paper.pdf": .validated(Fixtures.bytes(Fixtures.pdf("sample.pdf")), etag: "\"one\"")
        ])
        defer { server.shutdown() }
        let box = Sandbox()
        try box.ok("add", server.url("/paper.pdf"))
        try box.ok("bookmark", "add", "sample", "2", "--label", "search chapter")
        try box.ok("memo", "add", "sample", "--page", "3", "about rendering")
        try box.ok("memo", "add", "sample", "on the whole book")
        server.setRoute(
            "/paper.pdf",
            .validated(
                Fixtures.bytes(Fixtures.pdf("sample-revised.pdf")), etag: "\"two\"",
                lastModified: "Thu, 22 Oct 2026 07:28:00 GMT"))
        try box.ok("refresh", "--keep-old")
        func pages() throws -> (bookmark: Int?, memos: [Int?]) {
            let bookmarks = try #require(try box.ok("bookmark", "list", "--json").json() as? [[String: Any]])
            let memos = try #require(try box.ok("memo", "list", "--json").json() as? [[String: Any]])
            return (bookmarks.first?.int("page"), memos.map { $0.int("page") })
        }
        #expect(try pages().bookmark == 2, "--keep-old changes nothing yet")
        let versions = try #require(try box.ok("book", "versions", "sample", "--json").json() as? [[String: Any]])
        let newer = try #require(versions.first { $0["current"] as? Bool == false }?.string("sha256"))
        let used = try box.ok("book", "use", "sample", String(newer.prefix(8)))
        #expect(used.stdout.contains("now serves version"))
        let after = try pages()
        #expect(after.bookmark == 3, "the search chapter is page 3 after the preface")
        #expect(after.memos.contains(4) && after.memos.contains(nil), "\(after.memos)")
        #expect(try box.books().first?.int("pages") == 4)
        let hits = try #require(try box.ok("search", "preface", "--json").json() as? [[String: Any]])
        #expect(hits.first?.int("page") == 1, "the index follows the version served")
        // And back to the first version, by its number.
        try box.ok("book", "use", "sample", "1")
        #expect(try pages().bookmark == 2)
        let same = try box.fails("book", "use", "sample", "1")
        #expect(same.stderr.contains("already"))
        let unknown = try box.fails("book", "use", "sample", "ffff")
        #expect(unknown.stderr.contains("no version"))
    }

    /// `text` separates words pdftotext separates, leaves a blank line between paragraphs, prints
    /// each page once, and clamps a range past the end.
    @Test func textReadsLikePdftotext() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("layout.pdf"))
        let text = try box.ok("text", "layout").stdout
        #expect(text.contains("11.4 Data mining"), "\(text)")
        #expect(text.contains("First paragraph line one.\nFirst paragraph line two.\n\nSecond paragraph"), "\(text)")
        let hits = try #require(try box.ok("search", "--regex", "\\bdata\\b", "--json").json() as? [[String: Any]])
        #expect(hits.count == 1)
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        let pages = try box.ok("text", "sample", "--pages", "1-2,2-3").stdout
        #expect(pages.components(separatedBy: "\u{0C}").count == 3, "three pages, each once")
        #expect(pages.components(separatedBy: "Chapter Two").count == 2)
        let clamped = try box.ok("text", "sample", "--pages", "2-99999").stdout
        #expect(clamped.components(separatedBy: "\u{0C}").count == 2, "pages 2 and 3")
        try box.fails("text", "sample", "--pages", "5-9")
    }

    /// On a real book's contents page poppler glues "11.4" to "Data mining"; Margin doesn't.
    @Test(Prerequisite.needs(Fixtures.corpus != nil, "../shared/corpus is absent"))
    func sectionNumbersStandApartFromTitles() throws {
        let corpus = try #require(Fixtures.corpus)
        let box = Sandbox()
        try box.ok("add", corpus + "/real/thinkstats2__thinkstats2.pdf")
        let contents = try box.ok("text", "1", "--pages", "17").stdout
        #expect(contents.contains("11.4 Data mining"), "\(contents)")
        #expect(!contents.contains("11.4Data"))
        let hits = try #require(
            try box.ok("search", "--regex", "\\bdata\\b", "--whole-word", "--limit", "0", "--json").json()
                as? [[String: Any]])
        #expect(hits.contains { $0.int("page") == 17 }, "the contents page has the word 'Data'")
    }

    /// A highlight of text already highlighted is refused, not saved twice.
    @Test func duplicateHighlightsAreRefused() throws {
        let box = try prose()
        let first = try highlight(box, "--text", "awful lot of fun")
        let again = try box.fails("highlight", "add", "prose", "--text", "awful lot of fun", "--occurrence", "1")
        #expect(again.stderr.contains("already highlighted (highlight \(first.int("id") ?? 0))"), "\(again)")
        #expect((try box.ok("highlight", "list", "--json").json() as? [Any])?.count == 1)
    }

    /// Queries with no words are refused (before: "Illegal instruction"); a limit that cuts the
    /// results short says so; list says why it shows nothing.
    @Test func searchAndListSayWhatHappened() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        try box.ok("add", Fixtures.pdf("second.pdf"))
        for query in ["\"", "\"\"", "\" \""] {
            let result = try box.fails("search", query)
            #expect(result.stderr.contains("no words"), "\(query): \(result)")
        }
        let cut = try box.ok("search", "the", "--limit", "1")
        let everything = try #require(try box.ok("search", "the", "--limit", "0", "--json").json() as? [Any])
        #expect(everything.count > 2)
        #expect(cut.stderr.contains("showing the first 1 hits; \(everything.count - 1) more pages match"), "\(cut)")
        let all = try box.ok("search", "the", "--limit", "0")
        #expect(!all.stderr.contains("more pages match"))
        let none = try box.ok("search", "xylophone")
        #expect(none.stderr.contains("no matches") && none.status == 0)
        // --limit 0 means every book, as it means every hit for search.
        let zero = try #require(try box.ok("list", "--limit", "0", "--json").json() as? [Any])
        #expect(zero.count == 2)
        #expect(try box.ok("list", "--limit", "0").stdout.split(separator: "\n").count == 3, "a header and two books")
        let beyond = try box.ok("list", "--offset", "1000")
        #expect(beyond.stderr.contains("the library has 2 books"), "\(beyond)")
    }

    /// `export --all --format markdown` without -o goes to stdout; "wrote" lines go to stderr;
    /// --json is one JSON document for every format.
    @Test func exportOutputGoesWhereItShould() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        try box.ok("add", Fixtures.pdf("second.pdf"))
        let cwd = box.folder.path + "/cwd"
        try FileManager.default.createDirectory(atPath: cwd, withIntermediateDirectories: true)
        let markdown = try box.margin.run(["export", "--all", "--format", "markdown"], cwd: cwd)
        #expect(markdown.status == 0)
        #expect(markdown.stdout.contains("# A Sample Paper") && markdown.stdout.contains("# Field Notes"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: cwd).isEmpty, "nothing written to the current folder")
        for format in ["csv", "markdown"] {
            let result = try box.ok("export", "--all", "--format", format, "--json")
            let document = try #require(try result.json() as? [String: Any], "\(format): \(result)")
            #expect(document.string("format") == format)
            #expect((document["text"] as? String)?.isEmpty == false)
        }
        let written = try box.ok("export", "sample", "--format", "markdown", "-o", box.folder.path + "/notes.md")
        #expect(written.stdout.isEmpty && written.stderr.contains("wrote "), "\(written)")
    }
}
