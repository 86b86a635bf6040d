import Foundation
import TestSupport
import Testing

/// Defects a new user met (round 3), each tested as that user would meet it.
@Suite struct NewUserRound3Tests {
    @Test func aTextThatOccursMoreThanOnceIsNotHighlightedInSilence() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        let many = try box.fails("highlight", "add", "1", "--text", "e")
        #expect(
            many.stderr.contains("'e' occurs on 3 pages (1, 2, 3)") && many.stderr.contains("--occurrence"), "\(many)")
        let onOnePage = try box.fails("highlight", "add", "1", "--text", "the", "--json")
        #expect(onOnePage.stderr.contains("occurs") && onOnePage.stderr.contains("--page"), "\(onOnePage)")
        #expect((try box.ok("highlight", "list", "--json").json() as? [Any])?.isEmpty == true, "nothing highlighted")
        // Said which: done.
        try box.ok("highlight", "add", "1", "--text", "e", "--page", "2", "--occurrence", "1")
        #expect(try #require(try box.ok("highlight", "list", "--json").json() as? [Any]).count == 1)
    }

    @Test func versionsAreNumberedAsBookUseTakesThem() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        let table = try box.ok("book", "versions", "1").stdout.split(separator: "\n")
        #expect(table.first?.hasPrefix("#") == true, "\(table)")
        #expect(table.dropFirst().first?.hasPrefix("1 ") == true, "\(table)")
        #expect(try box.fails("book", "use", "1", "1").stderr.contains("already the one"), "version 1 is that one")
    }

    @Test func aPlaceThatRefusesAFileIsNamedWithTheSystemsReason() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        let proc = try box.fails("export", "1", "--format", "json", "-o", "/proc/margin-test.json")
        #expect(!proc.stderr.contains("disk is full"), "\(proc)")
        #expect(proc.stderr.contains("cannot write /proc/margin-test.json: "), "\(proc)")
        // Whichever library writes the file (poppler here), the system's words.
        let pdf = try box.fails("export", "1", "--format", "pdf", "-o", "/proc/margin-test.pdf")
        #expect(pdf.stderr.hasPrefix("error: cannot write /proc/margin-test.pdf: no such file"), "\(pdf)")
        let missing = try box.fails("export", "1", "--format", "json", "-o", "/nonexistent-folder/x.json")
        #expect(missing.stderr.contains("does not exist"), "\(missing)")
    }
}

@Suite struct LineEndTests {
    @Test func memosAndNotesKeepUnixLineEndsAndTitlesAreOneLine() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        try box.ok("memo", "add", "1", "first line\r\nsecond line\rthird")
        let memos = try #require(try box.ok("memo", "list", "--json").json() as? [[String: Any]])
        #expect(memos.first?["text"] as? String == "first line\nsecond line\nthird")
        try box.ok("highlight", "add", "1", "--text", "quick brown fox", "--occurrence", "1", "--note", "a\r\nb")
        let highlights = try #require(try box.ok("highlight", "list", "--json").json() as? [[String: Any]])
        #expect(highlights.first?["note"] as? String == "a\nb")
        try box.ok("edit", "1", "--title", "A title\nwith a break\tand a tab")
        let book = try #require(try box.ok("show", "1", "--json").json() as? [String: Any])
        #expect(book["title"] as? String == "A title with a break and a tab")
        // A backup holding CRLF memos comes in with LF.
        let backup = box.folder.path + "/b.json"
        try box.ok("export", "--all", "--format", "json", "-o", backup)
        let text = try String(contentsOfFile: backup, encoding: .utf8)
        let crlf = box.folder.path + "/crlf.json"
        try text.replacingOccurrences(of: "first line\\nsecond line\\nthird", with: "one\\r\\ntwo").write(
            toFile: crlf, atomically: true, encoding: .utf8)
        let other = Sandbox()
        try other.ok("import", crlf)
        let imported = try #require(try other.ok("memo", "list", "--json").json() as? [[String: Any]])
        #expect(imported.first?["text"] as? String == "one\ntwo", "\(imported)")
    }
}

@Suite struct MetaMessagesTests {
    @Test func booksWithoutIdentifiersAreNotedNotFailed() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        try box.ok("add", Fixtures.pdf("second.pdf"))
        let all = try box.margin.run(["meta", "--all", "--lookup"])
        #expect(all.status == 0, "\(all)")
        #expect(!all.stderr.contains("error:"), "\(all)")
        #expect(all.stderr.contains("2 of 2 books have no DOI or arXiv id"), "\(all)")
        // One book, asked by name: still an error that says what to give.
        #expect(try box.fails("meta", "1", "--lookup").stderr.contains("give --doi or --arxiv"))
    }

    @Test func aDryRunShowsWhatWouldChangeWithoutCallingItKept() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        let dry = try box.ok("meta", "1", "--title", "Another Title", "--year", "1999", "--dry-run")
        #expect(dry.stdout.contains("(dry run: nothing changed)"), "\(dry)")
        #expect(dry.stdout.contains("title: A Sample Paper → Another Title"), "\(dry)")
        #expect(!dry.stdout.contains("(kept)"), "\(dry)")
        let book = try box.ok("show", "1", "--json").json() as? [String: Any]
        #expect(book?["title"] as? String == "A Sample Paper", "nothing changed")
    }
}

@Suite struct AnnotationSearchTests {
    /// The README pairs bookmark labels with `search --annotations`: they are found, and every
    /// annotation hit names the annotation it is.
    @Test func bookmarkLabelsAreFoundAndHitsCarryTheirAnnotation() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        try box.ok("bookmark", "add", "1", "2", "--label", "the proof")
        try box.ok("memo", "add", "1", "--page", "3", "a proof sketch")
        try box.ok("highlight", "add", "1", "--text", "inverted index", "--occurrence", "1", "--note", "proof here")
        let hits = try #require(try box.ok("search", "--annotations", "proof", "--json").json() as? [[String: Any]])
        #expect(Set(hits.compactMap { $0["kind"] as? String }) == ["bookmark", "memo", "highlight"], "\(hits)")
        let bookmark = try #require(hits.first { $0["kind"] as? String == "bookmark" })
        #expect(bookmark["annotation"] as? Int == 1 && bookmark["page"] as? Int == 2, "\(bookmark)")
        #expect(hits.allSatisfy { $0["annotation"] is Int }, "\(hits)")
        // The id is the one edit takes.
        try box.ok("bookmark", "edit", String(bookmark["annotation"] as? Int ?? 0), "--label", "the lemma")
        let renamed = try box.ok("search", "--annotations", "lemma", "--json").json() as? [Any]
        #expect(renamed?.count == 1)
    }
}

@Suite struct PlainerMessagesTests {
    @Test func aFileThatIsNotJSONIsSaidInMarginsWordsAndARetryNamesItsAddressOnce() throws {
        let box = Sandbox()
        let bad = box.folder.path + "/bad.json"
        try "{\"format\":".write(toFile: bad, atomically: true, encoding: .utf8)
        let refused = try box.fails("import", bad)
        #expect(refused.stderr.contains("it is not JSON") && !refused.stderr.contains("The given data"), "\(refused)")
        let server = try TestHTTPServer(routes: ["/busy.pdf": .status(503)])
        defer { server.shutdown() }
        let busy = try box.margin.run(
            ["add", server.url("/busy.pdf")], environment: ["MARGIN_RETRIES": "1", "MARGIN_RETRY_DELAY_MS": "10"])
        let note = try #require(
            busy.stderrLines.first { $0.hasPrefix("note: ") && $0.contains("trying again") }, "\(busy)")
        #expect(note.components(separatedBy: server.url("/busy.pdf")).count == 2, "the address once: \(note)")
    }
}

@Suite struct AddOrderTests {
    /// Read side by side, saved in the order given: ids follow the arguments, not who finished
    /// first (a slow download first, quick local files after it, a failure between).
    @Test func idsFollowTheArgumentsWhateverFinishesFirst() throws {
        let server = try TestHTTPServer(routes: [
            "/slow.pdf": .handler { _ in
                Reply(
                    headers: [("Content-Type", "application/pdf")], body: Fixtures.bytes(Fixtures.pdf("sample.pdf")),
                    drip: (bytes: 200, delay: 0.05))
            }
        ])
        defer { server.shutdown() }
        let box = Sandbox()
        let result = try box.margin.run([
            "add", "--jobs", "4", server.url("/slow.pdf"), Fixtures.pdf("second.pdf"), box.folder.path + "/missing.pdf",
            Fixtures.pdf("mixed.pdf"), "--json",
        ])
        #expect(result.status != 0, "one input fails: \(result)")
        let books = try box.books()
        #expect(books.map { $0["id"] as? Int } == [1, 2, 3])
        #expect(books.map { $0.string("title") } == ["A Sample Paper", "Field Notes", "Mixed Bag"], "\(books)")
    }
}

@Suite struct RestoredPasswordTests {
    /// A backup carries no PDF passwords: after a restore, an encrypted book says how to give it.
    @Test func anEncryptedBookAfterARestoreSaysHowToGiveItsPassword() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("encrypted.pdf"), "--password", "secret")
        let backup = box.folder.path + "/backup.json"
        try box.ok("export", "--all", "--format", "json", "-o", backup)
        let restored = Sandbox()
        try restored.ok("import", backup)
        try restored.ok("fetch", "1")
        for arguments in [
            ["render", "1", "--page", "1", "-o", restored.folder.path + "/p.png"], ["text", "1"], ["toc", "1"],
        ] {
            let refused = try restored.fails(arguments)
            #expect(refused.stderr.contains("margin edit 1 --password -"), "\(arguments): \(refused)")
        }
    }
}

@Suite struct TableWidthTests {
    /// Columns line up by what a terminal shows (Hangul and CJK take two columns), and on an
    /// 80-column terminal (a real one: util-linux's script) the table fits.
    @Test func tablesAlignWideCharactersAndFitTheTerminal() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        try box.ok("add", Fixtures.pdf("second.pdf"))
        try box.ok("edit", "1", "--title", "한국어 제목 테스트")
        let lines = try box.ok("list").stdout.split(separator: "\n").map(String.init)
        // Where AUTHOR starts, in columns, is the same on every line.
        func column(of word: String, in line: String) -> Int? {
            guard let range = line.range(of: word) else { return nil }
            return line[..<range.lowerBound].unicodeScalars.reduce(0) {
                $0 + ((0xAC00...0xD7A3).contains($1.value) ? 2 : 1)
            }
        }
        let starts = [
            column(of: "AUTHOR", in: lines[0]), column(of: "Ada", in: lines[1]), column(of: "Gilbert", in: lines[2]),
        ]
        #expect(Set(starts.compactMap { $0 }).count == 1 && starts.allSatisfy { $0 != nil }, "\(starts) \(lines)")
        // A terminal of 80 columns.
        try box.ok(
            "edit", "2", "--title", String(repeating: "A very long title of a book ", count: 4), "--author",
            "Someone With A Long Name and Many Co-Authors Besides", "--tag", "a-rather-long-tag-name",
            "--tag", "another-long-tag")
        let screen = try box.onTerminal(["list"], columns: 80).split(separator: "\n")
        #expect(screen.count >= 3, "\(screen)")
        for line in screen {
            let width = line.unicodeScalars.reduce(0) { $0 + ((0xAC00...0xD7A3).contains($1.value) ? 2 : 1) }
            #expect(width <= 80, "\(width) columns: \(line)")
        }
    }
}

@Suite struct AmbiguityListTests {
    @Test func candidatesAreListedInColumns() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        try box.ok("add", Fixtures.pdf("sample-v2.pdf"))
        let refused = try box.fails("show", "sample")
        let lines = refused.stderr.split(separator: "\n").filter { $0.contains("[") }
        #expect(lines.count == 2, "\(refused)")
        // The SHA-256 prefixes start in one column (the titles differ in length).
        #expect(Set(lines.map { $0.distance(from: $0.startIndex, to: $0.firstIndex(of: "[")!) }).count == 1, "\(lines)")
    }

    /// A library named by a URL no backend opens is an error for every command, reading or
    /// writing, and nothing is made anywhere (not a folder named "mysql:").
    @Test func aLibraryURLNoBackendOpensIsAnErrorAndMakesNothing() throws {
        let box = Sandbox()
        for arguments in [["list"], ["add", Fixtures.pdf("sample.pdf")], ["db", "status"]] {
            for (extra, environment) in [
                (["--library", "mysql://db.example/lab"], [String: String]()),
                ([], ["MARGIN_LIBRARY": "mysql://db/lab"]),
            ] {
                let result = try box.margin.run(arguments + extra, environment: environment)
                #expect(result.status != 0, "\(arguments): \(result)")
                #expect(
                    result.stderrLines.filter { $0.hasPrefix("error: ") }.first?.contains(
                        "is not a library margin can open")
                        == true, "\(result)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: box.home), "\(box.folder.files())")
        // Run from the test's folder, margin would have made "mysql:" there as a folder's name.
        #expect(!FileManager.default.fileExists(atPath: FileManager.default.currentDirectoryPath + "/mysql:"))
    }

    /// A mistyped --library DIR or MARGIN_HOME: a command that only reads makes nothing there,
    /// and says there is no library and how to make one.
    @Test func readingALibraryThatIsNotThereMakesNone() throws {
        let box = Sandbox()
        let typo = box.folder.path + "/mistyped"
        let readers: [[String]] = [
            ["list"], ["list", "--json"], ["search", "index"], ["recent"], ["annotations", "list"],
            ["highlight", "list"], ["bookmark", "list"], ["memo", "list"], ["cache", "list"], ["db", "status"],
            ["db", "check"], ["show", "1"], ["text", "1"], ["toc", "1"], ["cite", "--all"], ["meta", "1"],
            ["export", "--all", "--format", "json"], ["path", "1"], ["book", "versions", "1"],
            ["render", "1", "--page", "1", "-o", box.folder.path + "/p.png"],
        ]
        for arguments in readers {
            for (extra, environment) in [(["--library", typo], [String: String]()), ([], ["MARGIN_HOME": typo])] {
                let result = try box.margin.run(arguments + extra, environment: environment)
                #expect(!FileManager.default.fileExists(atPath: typo), "\(arguments) made \(typo)")
                let lines = result.stderr.split(separator: "\n")
                if result.status == 0 {
                    #expect(
                        lines.last == "note: there is no library in \(typo) yet; 'margin add URL|PATH' makes one",
                        "\(arguments): \(result)")
                } else {
                    #expect(
                        lines.first?.hasPrefix("error: there is no library in \(typo);") == true,
                        "\(arguments): \(result)")
                    #expect(lines.count == 1, "one error line: \(arguments): \(result)")
                }
            }
        }
        // Quietly: nothing said on success.
        let quiet = try box.margin.run(["list", "--quiet", "--library", typo])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet)")
        // A command that writes makes it.
        try box.ok("add", "-q", Fixtures.pdf("sample.pdf"), "--library", typo)
        #expect(FileManager.default.fileExists(atPath: typo + "/library.sqlite"))
        let listed = try box.ok("list", "--library", typo)
        #expect(listed.stdout.contains("A Sample Paper") && listed.stderr.isEmpty, "\(listed)")
    }

    /// Annotations and exports in the page's reading order (poppler's text flow): a two-column
    /// page's left column before its right one, though the right one's top stands higher; CSV in
    /// the same order, not grouped by kind.
    @Test func annotationsFollowTheReadingOrderOfTwoColumnPages() throws {
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("two-columns.pdf"), Fixtures.pdf("sample.pdf"))
        // Made in another order than they are read.
        try box.ok("highlight", "add", "1", "--text", "Digital readers lost the margin")
        try box.ok("highlight", "add", "1", "--text", "between a reader and the text")
        try box.ok("highlight", "add", "1", "--text", "Margins hold the notes")
        try box.ok("memo", "add", "1", "--page", "1", "a memo on the page")
        try box.ok("bookmark", "add", "2", "2")
        try box.ok("highlight", "add", "2", "--text", "inverted index")
        try box.ok("memo", "add", "2", "--page", "1", "first page memo")
        let read = ["Margins hold the notes", "between a reader and the text", "Digital readers lost the margin"]
        let listed = try #require(try box.ok("highlight", "list", "1", "--json").json() as? [[String: Any]])
        #expect(listed.compactMap { $0.string("text") } == read)
        let all = try #require(try box.ok("annotations", "1", "--json").json() as? [[String: Any]])
        #expect(all.compactMap { $0.string("text") } == read + ["a memo on the page"], "\(all)")
        let backup = try #require(
            try JSONSerialization.jsonObject(
                with: Data(try box.ok("export", "1", "--format", "json").stdout.utf8)) as? [String: Any])
        let books = try #require(backup["books"] as? [[String: Any]])
        #expect((books.first?["highlights"] as? [[String: Any]])?.compactMap { $0.string("text") } == read)
        let markdown = try box.ok("export", "1", "--format", "markdown").stdout
        let places = read.compactMap { markdown.range(of: $0)?.lowerBound }
        #expect(places.count == 3 && places == places.sorted(), "\(markdown)")
        // CSV: one row after another as they are read, whatever their kind.
        let csv = try box.ok("export", "1", "2", "--format", "csv").stdout
        let rows = csv.split(separator: "\r\n").dropFirst().map { $0.split(separator: ",").map(String.init) }
        #expect(
            rows.map { $0[2] } == ["highlight", "highlight", "highlight", "memo", "memo", "bookmark", "highlight"],
            "\(csv)")
    }
}

/// An annotated PDF export carries everything a PDF can hold (issue 31, item 25): bookmarks as
/// outline entries under "Bookmarks" after the document's own, the memos on the whole book as
/// notes on its first page; and they come back as they went.
@Suite struct AnnotatedPDFExportTests {
    @Test func bookmarksBecomeOutlineEntriesAndBookMemosNotes() throws {
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("outlined.pdf"))
        try box.ok("bookmark", "add", "-q", "1", "4", "--label", "Scope, to reread")
        try box.ok("bookmark", "add", "-q", "1", "2")
        try box.ok("edit", "-q", "1", "--memo", "Read chapter 2 again")
        try box.ok("memo", "add", "-q", "1", "On the whole book: «useful»")
        try box.ok("memo", "add", "-q", "1", "--page", "3", "A page memo")
        let out = box.folder.path + "/annotated.pdf"
        try box.ok("export", "1", "--format", "pdf", "-o", out)
        // qpdf finds nothing wrong; MuPDF reads the outline: the document's, then the bookmarks.
        let check = try runProcess("/usr/bin/qpdf", ["--check", out])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let outline = try runProcess("/usr/bin/mutool", ["show", out, "outline"]).stdout
        let titles = outline.split(separator: "\n").compactMap { line in
            line.split(separator: "\"", omittingEmptySubsequences: false).dropFirst().first.map(String.init)
        }
        #expect(
            titles == [
                "Preface", "1 Introduction", "1.1 Motivation", "1.2 Scope", "2 Method", "Appendix", "Bookmarks",
                "p. ii",
                "Scope, to reread (p. 2)",
            ], "\(outline)")
        #expect(outline.contains("\"p. ii\"\t#page=2") && outline.contains("reread (p. 2)\"\t#page=4"), "\(outline)")
        // Read back by margin: the outline, and the notes as memos on the whole book.
        let other = Sandbox()
        try other.ok("add", "-q", out)
        let toc = try #require(try other.ok("toc", "1", "--json").json() as? [[String: Any]])
        #expect(toc.suffix(3).map { $0.string("title") } == ["Bookmarks", "p. ii", "Scope, to reread (p. 2)"])
        #expect(toc.suffix(2).map { $0.int("page") } == [2, 4])
        try other.ok("import-annotations", "1")
        let memos = try #require(try other.ok("memo", "list", "1", "--json").json() as? [[String: Any]])
        let whole = memos.filter { $0["page"] is NSNull }.compactMap { $0.string("text") }
        #expect(Set(whole) == ["Read chapter 2 again", "On the whole book: «useful»"], "\(memos)")
        #expect(memos.contains { $0.int("page") == 3 && $0.string("text") == "A page memo" })
        // The cached PDF is as it was.
        let cached = try box.ok("path", "1").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try runProcess("/usr/bin/mutool", ["show", cached, "outline"]).stdout.contains("Bookmarks") == false)
    }

    @Test func anEncryptedBooksExportStaysEncryptedWithItsBookmarks() throws {
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("encrypted.pdf"), "--password", "secret")
        try box.ok("bookmark", "add", "-q", "1", "2", "--label", "second page")
        let out = box.folder.path + "/locked.pdf"
        try box.ok("export", "1", "--format", "pdf", "-o", out)
        #expect(try runProcess("/usr/bin/pdfinfo", [out]).status != 0, "no password, no PDF")
        let outline = try runProcess("/usr/bin/mutool", ["show", "-p", "secret", out, "outline"]).stdout
        #expect(outline.contains("second page (p. 2)"), "\(outline)")
    }
}
