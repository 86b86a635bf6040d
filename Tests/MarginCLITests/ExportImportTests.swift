import Foundation
import MarginCore
import Poppler
import TestSupport
import Testing

@Suite struct ExportImportTests {
    /// sample.pdf with highlights, memos and bookmarks.
    func annotated() throws -> Sandbox {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"), "--tag", "golden")
        try box.ok(
            "highlight", "add", "sample", "--text", "inverted index", "--occurrence", "1", "--note", "key idea",
            "--color", "green")
        try box.ok("highlight", "add", "sample", "--text", "lazy dog", "--occurrence", "1")
        try box.ok("memo", "add", "sample", "--page", "3", "Rendering notes")
        try box.ok("memo", "add", "sample", "About the whole book")
        try box.ok("bookmark", "add", "sample", "2", "--label", "search")
        return box
    }

    func books(_ json: String) throws -> [[String: Any]] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object.string("format") == "margin-annotations")
        #expect(object.int("version") == 1)
        return try #require(object["books"] as? [[String: Any]])
    }

    @Test func jsonRoundTripThroughAFreshLibrary() throws {
        let box = try annotated()
        let first = try box.ok("export", "sample", "--format", "json").stdout
        let file = box.folder.path + "/backup.json"
        try Data(first.utf8).write(to: URL(fileURLWithPath: file))
        let fresh = Sandbox()
        let report = try #require(try fresh.ok("import", file, "--json").json() as? [String: Any])
        #expect(report.int("added") == 5)
        #expect(report.int("conflicts") == 0)
        // The book came from the backup; its PDF is fetched from its source when needed.
        let book = try #require(try fresh.books().first)
        #expect(book["cached"] as? Bool == false)
        #expect(book["tags"] as? [String] == ["golden"])
        let second = try fresh.ok("export", "--all", "--format", "json").stdout
        let a = try books(first)
        let b = try books(second)
        #expect(NSArray(array: a).isEqual(to: b), "the same annotations, every field")
        // Importing again changes nothing.
        let again = try #require(try fresh.ok("import", file, "--json").json() as? [String: Any])
        #expect(again.int("added") == 0 && again.int("unchanged") == 5 && again.int("updated") == 0)
        // Reading never fetches: the text works once `fetch` brought the PDF back from its source.
        #expect(try fresh.fails("text", "sample", "--pages", "1").stderr.contains("'margin fetch 1'"))
        try fresh.ok("fetch", "sample")
        #expect(try fresh.ok("text", "sample", "--pages", "1").stdout.contains("Marginalia"))
    }

    @Test func dryRunConflictsAndNewerWins() throws {
        let box = try annotated()
        let file = box.folder.path + "/backup.json"
        try box.ok("export", "sample", "--format", "json", "-o", file)
        let highlights = try #require(try box.ok("highlight", "list", "--json").json() as? [[String: Any]])
        let id = try #require(highlights.first { $0.string("note") == "key idea" }?.int("id"))
        Thread.sleep(forTimeInterval: 0.01)
        try box.ok("highlight", "edit", String(id), "--note", "changed here later")
        // The local change is newer: the backup's older note loses.
        let report = try #require(try box.ok("import", file, "--json").json() as? [String: Any])
        #expect(report.int("conflicts") == 1)
        #expect(report.int("updated") == 0)
        let after = try #require(try box.ok("highlight", "list", "--json").json() as? [[String: Any]])
        #expect(after.first { $0.int("id") == id }?.string("note") == "changed here later")
        // A newer backup wins, and --dry-run only counts.
        var text = try String(contentsOfFile: file, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"key idea\"", with: "\"from the future\"")
        text = text.replacingOccurrences(of: "\"updatedAt\" : \"20", with: "\"updatedAt\" : \"29")
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        let dry = try #require(try box.ok("import", file, "--dry-run", "--json").json() as? [String: Any])
        #expect(dry.int("updated") ?? 0 >= 1)
        #expect(dry["dryRun"] as? Bool == true)
        let unchanged = try #require(try box.ok("highlight", "list", "--json").json() as? [[String: Any]])
        #expect(unchanged.first { $0.int("id") == id }?.string("note") == "changed here later")
        try box.ok("import", file)
        let won = try #require(try box.ok("highlight", "list", "--json").json() as? [[String: Any]])
        #expect(won.first { $0.int("id") == id }?.string("note") == "from the future")
    }

    @Test func malformedImportsNothingAndSaysWhere() throws {
        let box = try annotated()
        let file = box.folder.path + "/backup.json"
        try box.ok("export", "sample", "--format", "json", "-o", file)
        let good = try String(contentsOfFile: file, encoding: .utf8)
        let fresh = Sandbox()
        let cases: [(String, String)] = [
            (String(good.prefix(good.count / 2)), "not"),
            (good.replacingOccurrences(of: "\"page\" : 3", with: "\"page\" : \"three\""), "books[0].memos"),
            (good.replacingOccurrences(of: "\"page\" : 3", with: "\"page\" : 99"), "outside the book's pages"),
            (good.replacingOccurrences(of: "margin-annotations", with: "something-else"), "\"format\""),
            (good.replacingOccurrences(of: "\"version\" : 1", with: "\"version\" : 7"), "version 7"),
            ("[1, 2, 3]", "not a margin backup"),
            ("", "not"),
        ]
        for (index, (content, expected)) in cases.enumerated() {
            let path = box.folder.path + "/bad\(index).json"
            try Data(content.utf8).write(to: URL(fileURLWithPath: path))
            let result = try fresh.fails("import", path)
            #expect(result.stderr.contains(expected), "case \(index): \(result.stderr)")
            #expect(try fresh.books().isEmpty, "case \(index): nothing imported")
        }
        try fresh.fails("import", box.folder.path + "/missing.json")
    }

    @Test func pdfExportCarriesRealAnnotationsBack() throws {
        let box = try annotated()
        let out = box.folder.path + "/annotated.pdf"
        try box.ok("export", "sample", "--format", "pdf", "-o", out)
        let original = try #require(try box.books().first?.string("file"))
        #expect(Fixtures.bytes(original) == Fixtures.bytes(Fixtures.pdf("sample.pdf")), "the cached PDF is untouched")
        // Poppler sees real /Highlight and /Text annotations.
        let document = try Document(path: out)
        let onPage2 = try document.page(2).annotations
        #expect(onPage2.contains { $0.kind == .highlight && $0.contents == "key idea" })
        #expect(try document.page(3).annotations.contains { $0.kind == .text && $0.contents == "Rendering notes" })
        // Import them into a fresh library: the same highlights (text, page) and page memos.
        let fresh = Sandbox()
        try fresh.ok("add", out)
        let report = try #require(try fresh.ok("import-annotations", "1", "--json").json() as? [String: Any])
        #expect((report["highlights"] as? [String: Any])?["added"] as? Int == 2)
        let highlights = try #require(try fresh.ok("highlight", "list", "--json").json() as? [[String: Any]])
        #expect(
            Set(highlights.map { "\($0.int("page") ?? 0):\($0.string("text") ?? "")" }) == [
                "1:lazy dog", "2:inverted index",
            ])
        #expect(highlights.first { $0.int("page") == 2 }?.string("note") == "key idea")
        #expect(highlights.first { $0.int("page") == 2 }?.string("color") == "#5fb236")
        let memos = try #require(try fresh.ok("memo", "list", "--json").json() as? [[String: Any]])
        // The memo on the whole book comes back as one (a note on the first page, named so).
        #expect(
            memos.map { "\($0.int("page") ?? 0):\($0.string("text") ?? "")" } == [
                "3:Rendering notes", "0:About the whole book",
            ])
        // Running it twice adds nothing.
        let again = try #require(try fresh.ok("import-annotations", "1", "--json").json() as? [String: Any])
        #expect(again.int("added") == 0)
        // An existing file is kept without --force; nothing half-written is left.
        try box.fails("export", "sample", "--format", "pdf", "-o", out)
        #expect(box.folder.files().filter { $0.contains(".margin-") }.isEmpty)
    }

    @Test func markdownAndCSVMatchTheirGoldenFiles() throws {
        let box = Sandbox()
        try box.ok("import", Fixtures.root + "/fixtures/golden/sample-backup.json")
        for (format, golden) in [("markdown", "sample.md"), ("csv", "sample.csv")] {
            let output = try box.ok("export", "sample", "--format", format).stdout
            let expected = try String(contentsOfFile: Fixtures.root + "/fixtures/golden/" + golden, encoding: .utf8)
            #expect(output == expected, "\(format) differs from fixtures/golden/\(golden)")
            let again = try box.ok("export", "sample", "--format", format).stdout
            #expect(again == output, "re-exports are identical")
        }
    }

    @Test func hostileTextSurvivesEveryFormat() throws {
        let box = Sandbox()
        // A path with spaces and quotes, a title, tag and notes with newlines, RTL text and emoji.
        let odd = box.folder.path + "/my \"odd\" 'folder'"
        try FileManager.default.createDirectory(atPath: odd, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.pdf("sample.pdf"), toPath: odd + "/a paper.pdf")
        try box.ok(
            "add", odd + "/a paper.pdf", "--title", "Evil, \"quoted\"\nTitle # not a heading", "--tag",
            "two words\n# injected")
        let nasty = "=HYPERLINK(\"http://x\")\n# heading?\n- list?\n| table |\tטקסט עברי 🎉, \"quotes\""
        try box.ok("memo", "add", "1", "--page", "1", nasty)
        try box.ok(
            "highlight", "add", "1", "--text", "lazy dog", "--occurrence", "1", "--note", "+1, @mention\r\nsecond line")
        // CSV: parses back to the same cells, formulas neutralised.
        let csv = try box.ok("export", "1", "--format", "csv").stdout
        let rows = parseCSV(csv)
        #expect(rows.count == 3)
        #expect(rows.allSatisfy { $0.count == rows[0].count }, "every row has every column")
        let memoRow = try #require(rows.first { $0.contains("memo") })
        #expect(memoRow.contains("'" + nasty), "a formula is neutralised and the text kept")
        let highlightRow = try #require(rows.first { $0.contains("highlight") })
        #expect(highlightRow.contains("'+1, @mention\nsecond line"), "CRLF is stored as LF")
        // Markdown: user text never starts a heading, list or table of its own.
        let markdown = try box.ok("export", "1", "--format", "markdown").stdout
        let headings = markdown.split(separator: "\n").filter { $0.hasPrefix("#") }
        #expect(headings.allSatisfy { $0.hasPrefix("# Evil") || $0.hasPrefix("## ") }, "\(headings)")
        #expect(markdown.contains("טקסט עברי 🎉"))
        let tagLines = markdown.split(separator: "\n").filter { $0.contains("**Tags:**") }
        #expect(tagLines == ["- **Tags:** #two-words--injected"], "\(tagLines)")
        try box.ok("export", "1", "--format", "markdown", "-o", odd + "/notes \"v1\".md")
        #expect(FileManager.default.fileExists(atPath: odd + "/notes \"v1\".md"))
        // JSON: lossless.
        let json = try box.ok("export", "1", "--format", "json").stdout
        let entry = try #require(try books(json).first)
        #expect((entry["memos"] as? [[String: Any]])?.first?.string("text") == nasty)
        #expect(entry.string("title") == "Evil, \"quoted\" Title # not a heading", "a title is one line")
        #expect(entry["tags"] as? [String] == ["two words # injected"], "a line break in a tag becomes a space")
    }

    @Test func exportRefusesToOverwriteAndWritesFolders() throws {
        let box = try annotated()
        try box.ok("add", Fixtures.pdf("second.pdf"))
        let file = box.folder.path + "/notes.md"
        try box.ok("export", "sample", "--format", "markdown", "-o", file)
        let refused = try box.fails("export", "sample", "--format", "markdown", "-o", file)
        #expect(refused.stderr.contains("--force"))
        try box.ok("export", "sample", "--format", "markdown", "-o", file, "--force")
        let folder = box.folder.path + "/out"
        try box.ok("export", "--all", "--format", "markdown", "-o", folder)
        #expect(
            Set(try FileManager.default.contentsOfDirectory(atPath: folder)) == [
                "a-sample-paper-1.md", "field-notes-2.md",
            ])
        let combined = try box.ok("export", "--all", "--format", "json").stdout
        #expect(try books(combined).count == 2)
        #expect(try box.margin.run(["export", "--format", "json"]).status == 64)
    }
}

/// A small RFC 4180 reader for checking exports.
func parseCSV(_ text: String) -> [[String]] {
    var rows = [[String]]()
    var row = [String]()
    var cell = ""
    var quoted = false
    var chars = Array(text)
    var i = 0
    while i < chars.count {
        let c = chars[i]
        if quoted {
            if c == "\"" {
                if i + 1 < chars.count && chars[i + 1] == "\"" {
                    cell.append("\"")
                    i += 1
                } else {
                    quoted = false
                }
            } else {
                cell.append(c)
            }
        } else if c == "\"" {
            quoted = true
        } else if c == "," {
            row.append(cell)
            cell = ""
        } else if c == "\r\n" || c == "\n" {
            row.append(cell)
            rows.append(row)
            row = []
            cell = ""
        } else {
            cell.append(c)
        }
        i += 1
    }
    if !cell.isEmpty || !row.isEmpty {
        row.append(cell)
        rows.append(row)
    }
    chars = []
    return rows
}
